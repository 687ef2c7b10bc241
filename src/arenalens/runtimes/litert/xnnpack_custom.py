"""The custom operators LiteRT's XNNPACK delegate takes (*tflite/delegates/xnnpack/
xnnpack_delegate.cc*: VisitNode's `kTfLiteBuiltinCustom` case), read from the sources and
checked on the ai-edge-litert 2.3.0 wheel with generated models.

LiteRT's builtin op resolver registers none of them (*tflite/kernels/register.cc*), so the
InterpreterBuilder leaves each one a placeholder whose Prepare fails ("Encountered unresolved
custom op"): with the builtin kernels alone the model cannot run. The delegate asks for its
nodes before that Prepare runs; a node it takes is replaced by a delegate node, so with XNNPACK
the model runs, as long as every tensor of it is one XNNPACK can hold:

* `Convolution2DTransposeBias` (MediaPipe): float32 data, filter, bias and output; a rank-4
  data, filter and output, a rank-1 bias; filter and bias constant; its options a
  `TfLiteTransposeConvParams` (padding, stride width, stride height) with strides above 0 and
  SAME or VALID padding. XNNPACK runs it as a deconvolution.
* `MaxPoolingWithArgmax2D` (MediaPipe): float32 input and values, rank 4 each, the indices of
  rank 4 (their type is not checked); its options a `TfLitePoolParams` (padding, strides,
  filter, activation) with positive strides and filter equal to the stride, SAME or VALID
  padding.
* `MaxUnpooling2D` (MediaPipe): float32 values and output, indices of rank 4, the same options
  but VALID padding only (the wheel refuses SAME: "invalid padding mode", then the node is
  left to its unresolved placeholder).
* `odml.scaled_dot_product_attention`: float32 query, key, value, optional mask and output;
  query, key and value of equal last dimension, the mask's last dimension the key's second.
  XNNPACK builds it from multiplications, transposes, batch matrix multiplications and a
  softmax.

Every tensor of a delegated node becomes an XNNPACK value; one of a type XNNPACK has no
datatype for makes `Subgraph::Create` fail ("failed to create XNNPACK Value"), and LiteRT does
not fall back: a pooling's indices that are not float32 (MediaPipe writes them as floats) make
`allocate_tensors()` fail with XNNPACK too (measured: int32, uint32 and int64 indices fail,
float32 ones run).

A taken `Convolution2DTransposeBias` is, to XNNPACK, the deconvolution node a TRANSPOSE_CONV
defines (VisitMediaPipeDeconvolutionNode and VisitTransposeConvNode both call
xnn_define_deconvolution_2d with the filter, bias, strides and paddings; the MediaPipe one
without a clamp): its heap is replayed as that TRANSPOSE_CONV's (`as_xnnpack_builtins`), with
the interpreter's own blocks of the custom node (no parser, no Init: heap_kernels).
The two poolings' objects and indirection buffers are replayed (xnnpack_objects), and the
attention's nodes (xnnpack_attention); an attention whose key heads do not divide the query's
is not (the delegate fails to build it): the heap figure of a model with one is the upper
bound of an operator not modelled (heap_xnnpack.objects_bound), labelled an estimate."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert.xnnpack_packing import (
    XnnpackTiles,
    deconvolution,
    fingerprint_bytes,
)

DECONVOLUTION = "Convolution2DTransposeBias"
ARGMAX_POOLING = "MaxPoolingWithArgmax2D"
UNPOOLING = "MaxUnpooling2D"
ATTENTION = "odml.scaled_dot_product_attention"
XNNPACK_CUSTOM_OPERATORS = frozenset({DECONVOLUTION, ARGMAX_POOLING, UNPOOLING, ATTENTION})
POOLINGS = frozenset({ARGMAX_POOLING, UNPOOLING})

_SAME, _VALID = 1, 2  # TfLitePadding: kTfLitePaddingSame, kTfLitePaddingValid
_FLOAT32 = "FLOAT32"


@dataclass(frozen=True, slots=True)
class ValueFailure:
    """A delegated custom operator with a tensor XNNPACK cannot make a value of."""

    subgraph: int
    operator: int
    opcode: str
    tensor: int
    dtype: str


def custom_name(operator: Operator) -> str | None:
    """The custom code of a custom operator the delegate may take, else None."""
    name = operator.custom_code
    return name if name in XNNPACK_CUSTOM_OPERATORS else None


def _params(model: Model, subgraph: Subgraph, operator: Operator, count: int) -> tuple[int, ...]:
    """SafeCopyCustomData: the options' first `count` int32 fields, zero where they are short
    (the delegate starts from a zeroed struct and copies at most its size)."""
    from arenalens.tflite.reader import read_custom_options  # noqa: PLC0415

    raw = read_custom_options(model, subgraph.index, operator.position_in_file)[: 4 * count]
    raw = raw + bytes(4 * count - len(raw))
    return struct.unpack(f"<{count}i", raw)


def _float32(subgraph: Subgraph, index: int, rank: int | None = None) -> bool:
    if index < 0:
        return False
    tensor = subgraph.tensors[index]
    return tensor.dtype.name == _FLOAT32 and (rank is None or len(tensor.shape) == rank)


def _rank(subgraph: Subgraph, index: int, rank: int) -> bool:
    return index >= 0 and len(subgraph.tensors[index].shape) == rank


def takes(model: Model, subgraph: Subgraph, operator: Operator) -> bool:
    """True if the delegate takes this custom operator (its Visit*Node's checks pass)."""
    name = custom_name(operator)
    inputs, outputs = operator.inputs, operator.outputs
    if name == DECONVOLUTION:
        if len(inputs) != 3 or len(outputs) != 1:
            return False
        data, weights, bias = inputs
        tensors_fit = (
            _float32(subgraph, data, 4)
            and _float32(subgraph, weights, 4)
            and _float32(subgraph, bias, 1)
            and _float32(subgraph, outputs[0], 4)
            and subgraph.tensors[weights].has_data
            and subgraph.tensors[bias].has_data
        )
        padding, stride_w, stride_h = _params(model, subgraph, operator, 3)
        if not (tensors_fit and stride_w > 0 and stride_h > 0 and padding in (_SAME, _VALID)):
            return False
        return _paddings_fit(
            subgraph.tensors[data].shape,
            subgraph.tensors[weights].shape,
            subgraph.tensors[outputs[0]].shape,
            padding,
            (stride_h, stride_w),
        )
    if name in (ARGMAX_POOLING, UNPOOLING):
        values, indices = (
            (inputs[0], outputs[1] if len(outputs) > 1 else -1)
            if name == ARGMAX_POOLING
            else (inputs[0], inputs[1] if len(inputs) > 1 else -1)
        )
        result = outputs[0] if name == ARGMAX_POOLING else (outputs[0] if outputs else -1)
        arity = (1, 2) if name == ARGMAX_POOLING else (2, 1)
        if (len(inputs), len(outputs)) != arity:
            return False
        tensors_fit = _float32(subgraph, values, 4) and _float32(subgraph, result, 4)
        if not tensors_fit or not _rank(subgraph, indices, 4):
            return False
        padding, stride_w, stride_h, filter_w, filter_h, _ = _params(model, subgraph, operator, 6)
        # The unpooling refuses SAME padding ("invalid padding mode", measured on the wheel).
        paddings = (_SAME, _VALID) if name == ARGMAX_POOLING else (_VALID,)
        return (
            min(stride_w, stride_h, filter_w, filter_h) > 0
            and (filter_w, filter_h) == (stride_w, stride_h)
            and padding in paddings
        )
    if name == ATTENTION:
        return attention_fits(subgraph, operator)
    return False


def attention_fits(subgraph: Subgraph, operator: Operator) -> bool:
    """VisitDotAttentionNode's checks (the custom operator's and the composite's): float32
    query, key, value, mask and output, equal head sizes, the mask's last dimension the
    key's and value's second."""
    inputs, outputs = operator.inputs, operator.outputs
    if not 3 <= len(inputs) <= 4 or len(outputs) != 1:
        return False
    if not all(_float32(subgraph, index) for index in (*inputs, outputs[0])):
        return False
    query, key, value = (subgraph.tensors[index].shape for index in inputs[:3])
    if not (query and key and value) or not query[-1] == key[-1] == value[-1]:
        return False
    if len(inputs) == 4:
        mask = subgraph.tensors[inputs[3]].shape
        if len(key) < 2 or len(value) < 2 or not mask or not mask[-1] == key[1] == value[1]:
            return False
    return True


def _paddings_fit(
    data: tuple[int, ...],
    weights: tuple[int, ...],
    output: tuple[int, ...],
    padding: int,
    stride: tuple[int, int],
) -> bool:
    """CalculateTransposeConvPaddings (the delegate's, for both transposed convolutions):
    VALID needs the kernel inside the output; SAME needs the input the output implies at the
    stride (ComputePaddingHeightWidth) and no stride over the kernel."""
    kernel = weights[1:3]
    if padding == _VALID:
        return kernel[0] <= output[1] and kernel[1] <= output[2]
    implied = (-(-output[1] // stride[0]), -(-output[2] // stride[1]))
    return implied == data[1:3] and kernel[0] >= stride[0] and kernel[1] >= stride[1]


def taken(model: Model, subgraph: Subgraph) -> tuple[int, ...]:
    """The custom operators of a subgraph the delegate takes, in order."""
    return tuple(
        operator.index
        for operator in subgraph.operators
        if custom_name(operator) is not None and takes(model, subgraph, operator)
    )


def value_failures(model: Model) -> tuple[ValueFailure, ...]:
    """Delegated poolings whose indices are not float32: XNNPACK has no value for them."""
    found = []
    for subgraph in model.subgraphs:
        for index in taken(model, subgraph):
            operator = subgraph.operators[index]
            name = custom_name(operator)
            if name == ARGMAX_POOLING:
                indices = operator.outputs[1]
            elif name == UNPOOLING:
                indices = operator.inputs[1]
            else:
                continue
            dtype = subgraph.tensors[indices].dtype.name
            if dtype != _FLOAT32:
                found.append(ValueFailure(subgraph.index, index, operator.opcode, indices, dtype))
    return tuple(found)


def as_transpose_conv(model: Model, subgraph: Subgraph, operator: Operator) -> Operator | None:
    """A taken Convolution2DTransposeBias as the TRANSPOSE_CONV XNNPACK runs it (inputs: no
    output shape, filter, data, bias; its strides), else None: its deconvolution kind, whose
    fingerprint XNNPACK makes before the first one (heap_xnnpack.fingerprint_transient)."""
    if custom_name(operator) != DECONVOLUTION or not takes(model, subgraph, operator):
        return None
    data, weights, bias = operator.inputs
    padding, stride_w, stride_h = _params(model, subgraph, operator, 3)
    schema_padding = 1 if padding == _VALID else 0  # the schema's Padding: SAME 0, VALID 1
    options = MappingProxyType(
        {"padding": schema_padding, "stride_w": stride_w, "stride_h": stride_h, MEDIAPIPE: True}
    )
    return operator._replace(
        opcode="TRANSPOSE_CONV", custom_code=None, inputs=(-1, weights, data, bias),
        options=options,
    )  # fmt: skip


# The options key that marks a TRANSPOSE_CONV standing for a taken Convolution2DTransposeBias
# (`as_transpose_conv`): the delegate's checks were the custom node's (`takes`), and its output
# shape is the output tensor's, not a constant input.
MEDIAPIPE = "mediapipe_deconvolution"


def as_xnnpack_builtins(model: Model) -> Model:
    """The model with each taken Convolution2DTransposeBias as the TRANSPOSE_CONV XNNPACK runs
    it (`as_transpose_conv`); the same model when it has none. The XNNPACK heap (partition,
    packing, workspace, runtime objects, build moment) is replayed on it."""
    changed = False
    subgraphs = []
    for subgraph in model.subgraphs:
        operators = []
        for operator in subgraph.operators:
            view = as_transpose_conv(model, subgraph, operator)
            changed = changed or view is not None
            operators.append(operator if view is None else view)
        subgraphs.append(replace(subgraph, operators=tuple(operators)))
    return replace(model, subgraphs=tuple(subgraphs)) if changed else model


def fingerprint_transient(model: Model, configurations: Sequence[XnnpackTiles]) -> int:
    """XNNPACK fingerprints the float deconvolution kind before it creates the first taken
    Convolution2DTransposeBias (deconvolution-nhwc.c, as for a TRANSPOSE_CONV): a dummy
    deconvolution's data, objects and packing, 100-190 KB, freed again. Counted whole at the
    largest over the ISA's configurations: the operator's own objects and packing are not
    replayed, so none is taken off."""
    largest = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            view = as_transpose_conv(model, subgraph, operator)
            for tiles in configurations if view is not None else ():
                found = deconvolution(subgraph, view, tiles) if view is not None else None
                if found is not None:
                    largest = max(largest, fingerprint_bytes(found, tiles))
    return largest
