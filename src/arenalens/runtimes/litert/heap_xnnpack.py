"""Which operators LiteRT's default XNNPACK delegate takes, and what its runtimes keep beside
the packed weights and the workspace, from LiteRT's and XNNPACK's sources
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*, *tflite/graph_info.cc*; XNNPACK
*src/runtime.c*).

* **Partition**: the delegate takes each operator its `Visit*Node` accepts (the builtins it has
  no Visit*Node for never leave the builtin kernels); modelled here: the type checks of
  `_TAKES` and the static inputs of `_STATIC_INPUTS` (an operator whose acceptance is not
  modelled makes the figure an estimate). LiteRT groups the operators into subsets
  (`PartitionGraphIntoIndependentNodeSubsets`, greedy) and replaces each delegated subset with
  one delegate node: `delegated_view` is the model as LiteRT's planner then sees it.
* **Packed weights and indirection buffers**: `xnnpack_packing`.
* **Workspace**: `xnnpack_workspace`.
* **Runtime and operator objects**: replayed block by block in `xnnpack_objects` where the
  partition is modelled; an upper bound per runtime, operator and value (`objects_bound`)
  where it is not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.planning.registry import run_planner
from arenalens.runtimes.litert import (
    glibc,
    rules,
    xnnpack_custom,
    xnnpack_variables,
    xnnpack_zero_points,
)
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.xnnpack_attention import composite_taken, replayed_custom
from arenalens.runtimes.litert.xnnpack_binary import CHECKS as BINARY_CHECKS
from arenalens.runtimes.litert.xnnpack_blockwise import takes_int4
from arenalens.runtimes.litert.xnnpack_blockwise import takes_integer as takes_blockwise_integer
from arenalens.runtimes.litert.xnnpack_packing import (
    HOST_TILES,
    WEIGHTED,
    XnnpackTiles,
    aligned_block,
    constant_input,
    deconvolution,
    fingerprint_bytes,
)
from arenalens.runtimes.litert.xnnpack_qc4w import int4_weights, integer_int4, takes_integer
from arenalens.runtimes.litert.xnnpack_subgraphs import only_decompositions

_FLOAT = ("FLOAT32",)
_QUANTIZED = ("INT8", "UINT8")
_FLOAT_OR_QUANTIZED = ("FLOAT32", "INT8", "UINT8")
# Every builtin the delegate has a Visit*Node for (VisitNode's switch); it takes no other.
# fmt: off
_VISITED = frozenset((
    "ABS", "ADD", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D", "BATCH_MATMUL", "CEIL", "CONCATENATION",
    "CONV_2D", "COS", "DEPTH_TO_SPACE", "DEPTHWISE_CONV_2D", "DEQUANTIZE", "DIV", "ELU", "EXP",
    "EXPAND_DIMS", "FLOOR", "FULLY_CONNECTED", "GELU", "HARD_SWISH", "LEAKY_RELU", "LOG",
    "LOGISTIC", "MAX_POOL_2D", "MAXIMUM", "MEAN", "MINIMUM", "MUL", "NEG", "PAD", "PRELU",
    "QUANTIZE", "READ_VARIABLE", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RELU_N1_TO_1",
    "RESHAPE", "RESIZE_BILINEAR", "ROUND", "RSQRT", "SIN", "SLICE", "SOFTMAX", "SPACE_TO_DEPTH",
    "SPLIT", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "STABLEHLO_COMPOSITE", "STRIDED_SLICE", "SUB",
    "SUM", "TANH", "TRANSPOSE", "TRANSPOSE_CONV", "VAR_HANDLE",
))
# fmt: on
# Operators taken with these data input types (VisitUnaryNode, VisitBinaryNode, ...: their
# CheckTensorFloatType / CheckTensorFloatOrQUInt8Type checks), modelled here.
# fmt: off
# The element-wise operators the delegate takes with float data only (VisitUnaryNode /
# VisitBinaryNode: CheckTensorFloatType), and those it takes with 8-bit data too.
UNARY_FLOAT = (
    "ABS", "CEIL", "COS", "EXP", "FLOOR", "GELU", "HARD_SWISH", "LOG", "NEG", "RELU_N1_TO_1",
    "RELU", "RELU6", "ROUND", "RSQRT", "SIN", "SQRT", "SQUARE",
)
UNARY_QUANTIZED = ("LOGISTIC", "TANH")
BINARY_FLOAT = ("DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE")
BINARY_QUANTIZED = ("ADD", "MUL", "SUB")
_TAKES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((*UNARY_FLOAT, *BINARY_FLOAT, "SOFTMAX", "AVERAGE_POOL_2D"), _FLOAT),
    **dict.fromkeys(
        (
            *UNARY_QUANTIZED, *BINARY_QUANTIZED, "CONCATENATION", "PAD", "TRANSPOSE", "SLICE",
            "EXPAND_DIMS", "RESHAPE", "MAX_POOL_2D", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN",
            "SPLIT", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "STRIDED_SLICE",
        ),
        _FLOAT_OR_QUANTIZED,
    ),
    "ELU": ("FLOAT32", "INT8"),
    "PRELU": _FLOAT,
    **dict.fromkeys(("LEAKY_RELU", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH"), _FLOAT_OR_QUANTIZED),
    "RESIZE_BILINEAR": _FLOAT_OR_QUANTIZED,
    "DEQUANTIZE": _QUANTIZED,
    "QUANTIZE": _FLOAT_OR_QUANTIZED,
}
# fmt: on
# Inputs past the data that must be constant for the delegate to take the operator
# (CheckTensorStaticAllocation / quasi-static tensors): their positions.
_STATIC_INPUTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        ("PAD", "TRANSPOSE", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "PRELU", "RESIZE_BILINEAR"),
        (1,),
    ),
    "SLICE": (1, 2),
    "EXPAND_DIMS": (1,),
    "SPLIT": (0,),
}
# Taken only with three inputs, the third a bias tensor (VisitConv2DNode /
# VisitDepthwiseConv2DNode: CheckNumInputsAndOutputs(3, 1), then 'unsupported ... node #%d
# without bias' when it is omitted, -1).
_BIASED = ("CONV_2D", "DEPTHWISE_CONV_2D")
# The data input of an operator whose first input is not its data.
_DATA_INPUT = {"SPLIT": 1, "TRANSPOSE_CONV": 2}


@dataclass(frozen=True, slots=True)
class XnnpackPartition:
    """Which operators of a subgraph XNNPACK takes, and which of those are not modelled."""

    delegated: tuple[int, ...]  # operator indices, in execution order
    unmodelled: tuple[str, ...]  # opcodes whose acceptance by the delegate is not modelled


def _input_type(subgraph: Subgraph, operator: Operator) -> str:
    position = _DATA_INPUT.get(operator.opcode, 0)
    data = operator.inputs[position] if len(operator.inputs) > position else -1
    return subgraph.tensors[data].dtype.name if data >= 0 else ""


def _takes(subgraph: Subgraph, operator: Operator, model: Model | None) -> bool | None:
    """True if the delegate takes the operator, False if it leaves it, None if not modelled."""
    if xnnpack_custom.custom_name(operator) is not None:
        # Taken when its Visit*Node's checks pass; XNNPACK's part replayed (not grouped heads).
        taken = model is not None and xnnpack_custom.takes(model, subgraph, operator)
        return (replayed_custom(subgraph, operator) or None) if taken else False
    if operator.opcode not in _VISITED:
        return False  # no Visit*Node: the builtin kernel runs it
    if xnnpack_zero_points.first_channel_refused(subgraph, operator):
        return False  # CheckTensorFloat32OrQCInt8Type: its first channel's zero point
    if operator.opcode == "STABLEHLO_COMPOSITE":
        return composite_taken(subgraph, operator)  # VisitNode: the odml attention only
    if operator.opcode == "BATCH_MATMUL":
        return _takes_batch_matmul(subgraph, operator)
    if operator.opcode == "TRANSPOSE_CONV":
        return _takes_transpose_conv(subgraph, operator, model)
    types = _TAKES.get(operator.opcode)
    if types is None:
        return None
    if operator.opcode in _CLAMPED and (
        operator.options.get("fused_activation_function", 0) not in CLAMP_ACTIVATIONS
    ):
        return False  # ConvertActivationToOutputRange: 'unsupported fused activation'
    if operator.opcode in _BIASED and (len(operator.inputs) != 3 or operator.inputs[2] < 0):
        return False  # 'unsupported CONV_2D node without bias': three inputs, a bias
    kind = _input_type(subgraph, operator)
    if kind not in types:
        return False
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if operator.opcode == "QUANTIZE" and (output is None or output.dtype.name not in _QUANTIZED):
        return False
    if operator.opcode == "SOFTMAX" and float(operator.options.get("beta", 1.0)) != 1.0:
        return False
    if operator.opcode == "STRIDED_SLICE":
        return _takes_strided_slice(subgraph, operator, model)
    if operator.opcode in _RESHAPING_CHECKS and not _RESHAPING_CHECKS[operator.opcode](
        subgraph, operator
    ):
        return False
    if operator.opcode == "SPLIT" and int(operator.options.get("num_splits", 0) or 0) < 2:
        # XNNPACK's even split has two or more outputs: the wheel leaves a one-way SPLIT to
        # the builtin kernel (measured on a generated graph, fresh_dag_3).
        return False
    for position in _STATIC_INPUTS.get(operator.opcode, ()):
        if constant_input(subgraph, operator.inputs, position) is None:
            # CheckTensorStaticAllocation: axes, paddings, permutation, begin / size and the
            # split axis must be read-only constants; a computed one leaves the operator to the
            # builtin kernel.
            return False
    if operator.opcode in WEIGHTED:
        weights = constant_input(subgraph, operator.inputs, 1)
        if model is not None and int4_weights(subgraph, operator):
            return takes_int4(model, subgraph, operator)
        if model is not None and integer_int4(model, subgraph, operator):
            return takes_integer(model, subgraph, operator)  # supported_srq: qs8_qc4w
        other = None if model is None else takes_blockwise_integer(model, subgraph, operator)
        if other is not None:
            return other  # then refused: refusals.blockwise_integer_refusals, datatype_failures
        hybrid = kind == "FLOAT32" and weights is not None and weights.dtype.name == "INT8"
        if hybrid and operator.opcode == "DEPTHWISE_CONV_2D":
            return False  # no dynamically quantized depthwise path: the builtin kernel runs it
        if not hybrid and (weights is None or weights.dtype.name != kind):
            return None  # weights computed at run time: not modelled
    # A RESHAPE whose new shape is not static stays on the builtin kernel.
    shape = operator.inputs[1] if len(operator.inputs) > 1 else -1
    return not (
        operator.opcode == "RESHAPE" and shape >= 0 and not subgraph.tensors[shape].has_data
    )


def _takes_batch_matmul(subgraph: Subgraph, operator: Operator) -> bool | None:
    """VisitBatchMatMulNode: A and B of rank 2 or more; float A and B, float A with int8 B
    (dynamically quantized A; per-channel B scales along N, a count dividing B's batches × N),
    or int8 A and B of one scale each (B's zero point 0), the output of A's type. With adj_x
    the delegate transposes A first (a static transpose node and its value: xnnpack_workspace
    _nodes)."""
    tensors = [subgraph.tensors[index] if index >= 0 else None for index in operator.inputs[:2]]
    if len(tensors) < 2 or not operator.outputs or operator.outputs[0] < 0:
        return False
    a, b = tensors
    if a is None or b is None or len(a.shape) < 2 or len(b.shape) < 2:
        return False
    output = subgraph.tensors[operator.outputs[0]]
    kinds = (a.dtype.name, b.dtype.name, output.dtype.name)
    # An 8-bit unsigned A meets a B that must be float or signed (CheckTensorFloat32OrQCInt8Type)
    # of A's type: the delegate takes no 8-bit unsigned BATCH_MATMUL.
    if kinds not in _BATCH_MATMUL_TYPES:
        return False
    return kinds[1] != "INT8" or _batch_matmul_scales_fit(operator, a, b)


# (A, B, output) types the delegate takes a BATCH_MATMUL with: float, hybrid, int8.
_BATCH_MATMUL_TYPES = (
    ("FLOAT32", "FLOAT32", "FLOAT32"),
    ("FLOAT32", "INT8", "FLOAT32"),
    ("INT8", "INT8", "INT8"),
)


def _batch_matmul_scales_fit(operator: Operator, a: Tensor, b: Tensor) -> bool:
    """An int8 B's scales: per channel only along N; hybrid, a count dividing B's batches × N
    (expanded to one per column); int8, one scale and zero point for A and for B, B's 0."""
    quantization = b.quantization
    scales = quantization.channel_count if quantization is not None else 0
    adj_y = bool(operator.options.get("adj_y", False))
    if (
        scales > 1
        and quantization is not None
        and quantization.axis != (len(b.shape) - 2 if adj_y else len(b.shape) - 1)
    ):
        return False
    if a.dtype.name == "FLOAT32":
        batches = 1
        for dim in b.shape[:-2]:
            batches *= dim
        columns = b.shape[-2] if adj_y else b.shape[-1]
        return scales >= 1 and (batches * columns) % scales == 0
    if scales != 1 or a.quantization is None or a.quantization.channel_count != 1:
        return False
    return quantization is not None and not quantization.zero_point


def _takes_strided_slice(
    subgraph: Subgraph, operator: Operator, model: Model | None
) -> bool | None:
    """VisitStridedSliceNode: no ellipsis, new-axis or shrink mask; begin, end and strides
    constant int32 vectors as long as the input's rank; every stride 1."""
    options = operator.options
    if any(int(options.get(mask, 0) or 0) for mask in _SLICE_MASKS):
        return False
    if model is None or len(operator.inputs) < 4:
        return None
    data = subgraph.tensors[operator.inputs[0]] if operator.inputs[0] >= 0 else None
    rank = len(data.shape) if data is not None else -1
    vectors = [int_values(model, subgraph, index) for index in operator.inputs[1:4]]
    if any(values is None or len(values) != rank for values in vectors):
        return False
    strides = vectors[2]
    return strides is not None and all(stride == 1 for stride in strides)


_SLICE_MASKS = ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _block_size(operator: Operator) -> int:
    return int(operator.options.get("block_size", 0) or 0)


def _takes_space_to_depth(subgraph: Subgraph, operator: Operator) -> bool:
    """VisitSpaceToDepthNode: a block over 1 dividing the input's height and width."""
    block = _block_size(operator)
    data = subgraph.tensors[operator.inputs[0]] if operator.inputs else None
    if block <= 1 or data is None or len(data.shape) != 4:
        return False
    return data.shape[1] % block == 0 and data.shape[2] % block == 0


def _takes_resize_bilinear(subgraph: Subgraph, operator: Operator) -> bool:
    """VisitResizeBilinearNode: rank-4 data and output, a constant int32 size of 2."""
    if len(operator.inputs) != 2 or not operator.outputs or min(operator.inputs) < 0:
        return False
    data, size = (subgraph.tensors[index] for index in operator.inputs)
    output = subgraph.tensors[operator.outputs[0]]
    return (
        len(data.shape) == 4
        and len(output.shape) == 4
        and size.dtype.name == "INT32"
        and size.shape == (2,)
        and all(dim > 0 for dim in output.shape)
    )


def _takes_leaky_relu(subgraph: Subgraph, operator: Operator) -> bool:
    """VisitUnaryNode's LEAKY_RELU: a normal, non-zero alpha; 8-bit, input-to-output scales
    of 1/256 to 128, times alpha at least 1/256 and at most 128 in size."""
    alpha = float(operator.options.get("alpha", 0.0) or 0.0)
    if not math.isfinite(alpha) or abs(alpha) < _SMALLEST_NORMAL:
        return False
    data = subgraph.tensors[operator.inputs[0]]
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else data
    scales = [t.quantization.scale if t.quantization is not None else None for t in (data, output)]
    if data.dtype.name == "FLOAT32" or any(not scale for scale in scales):
        return True
    positive = float(scales[0] or 0.0) / float(scales[1] or 1.0)
    negative = positive * alpha
    return (
        1 / 256 <= positive <= 128 and abs(negative) >= 1 / 256 and -127.99609375 <= negative <= 128
    )


_SMALLEST_NORMAL = 1.1754943508222875e-38  # float32's: std::isnormal
_RESHAPING_CHECKS: dict[str, Callable[[Subgraph, Operator], bool]] = {
    "DEPTH_TO_SPACE": lambda subgraph, operator: _block_size(operator) > 1,
    "SPACE_TO_DEPTH": _takes_space_to_depth,
    "RESIZE_BILINEAR": _takes_resize_bilinear,
    "LEAKY_RELU": _takes_leaky_relu,
    **BINARY_CHECKS,  # ADD, SUB, MUL: 8-bit quantization and scale ratios
}
# The fused activations XNNPACK turns into an output range (ConvertActivationToOutputRange):
# NONE, RELU, RELU_N1_TO_1 and RELU6; TANH and SIGN_BIT leave the operator to the builtins.
CLAMP_ACTIVATIONS = (0, 1, 2, 3, None, "NONE", "RELU", "RELU_N1_TO_1", "RELU6")
# The Visit*Nodes that call it on the operator's fused activation (VisitBinaryNode: ADD, DIV,
# MUL, SUB; the poolings, convolutions and FULLY_CONNECTED).
_CLAMPED = frozenset(
    {
        "ADD", "DIV", "MUL", "SUB", "AVERAGE_POOL_2D", "MAX_POOL_2D", "CONV_2D",
        "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
    }
)  # fmt: skip
# The (data, weights, output) types a TRANSPOSE_CONV is modelled with: float, hybrid (float data,
# int8 weights: dynamically quantized), int8 and uint8 (the delegate's qu8 path: data and
# filter pass CheckTensorFloat32OrQUInt8Type / CheckTensorFloat32OrQCInt8Type with one scale and
# one zero point each; measured: tests/litert_tconvu8_cases.py). Mixed 8-bit kinds are not.
_DECONVOLUTION_TYPES = (
    ("FLOAT32", "FLOAT32", "FLOAT32"),
    ("FLOAT32", "INT8", "FLOAT32"),
    ("INT8", "INT8", "INT8"),
    ("UINT8", "UINT8", "UINT8"),
)


def _takes_transpose_conv(
    subgraph: Subgraph, operator: Operator, model: Model | None
) -> bool | None:
    """VisitTransposeConvNode: inputs (output shape, filter, data[, bias]); the output shape a
    constant int32 vector of 4; the filter a constant of rank 4 whose channels match the data's
    and the output shape's; data and output of rank 4 (8-bit with one scale); a constant rank-1
    bias; VALID padding with the kernel inside the output, SAME with the input the output
    shape implies and no stride over the kernel; a clamping activation."""
    inputs, outputs = operator.inputs, operator.outputs
    if operator.options.get(xnnpack_custom.MEDIAPIPE):
        return True  # a taken Convolution2DTransposeBias (xnnpack_custom.as_transpose_conv)
    if not 3 <= len(inputs) <= 4 or len(outputs) != 1 or min(*inputs[:3], outputs[0]) < 0:
        return False
    shape_tensor, weights, data = (subgraph.tensors[index] for index in inputs[:3])
    output = subgraph.tensors[outputs[0]]
    shape = int_values(model, subgraph, inputs[0]) if model is not None else None
    if shape_tensor.dtype.name != "INT32" or shape is None or len(shape) != 4:
        return False
    if not weights.has_data or len(weights.shape) != 4:
        return False
    if len(data.shape) != 4 or len(output.shape) != 4:
        return False
    kinds = (data.dtype.name, weights.dtype.name, output.dtype.name)
    if kinds not in _DECONVOLUTION_TYPES:
        return None if "UINT8" in kinds else False
    if any(
        tensor.dtype.name in _EIGHT_BIT
        and (tensor.quantization is None or tensor.quantization.channel_count != 1)
        for tensor in (data, output, *((weights,) if kinds[1] == "UINT8" else ()))
    ):
        return False
    if len(inputs) == 4 and inputs[3] >= 0:
        bias = subgraph.tensors[inputs[3]]
        if not bias.has_data or len(bias.shape) != 1:
            return False
        if bias.dtype.name not in ("FLOAT32", "FLOAT16", "INT32"):
            return False
    channels_out, kernel_h, kernel_w, channels_in = weights.shape
    if channels_out != shape[3] or channels_in != data.shape[3]:
        return False
    options = operator.options
    if options.get("fused_activation_function", 0) not in CLAMP_ACTIVATIONS:
        return False
    stride_h = int(options.get("stride_h", 1) or 1)
    stride_w = int(options.get("stride_w", 1) or 1)
    if options.get("padding") in (1, "VALID"):
        return kernel_h <= shape[1] and kernel_w <= shape[2]
    expected = (-(-shape[1] // stride_h), -(-shape[2] // stride_w))
    return expected == tuple(data.shape[1:3]) and kernel_h >= stride_h and kernel_w >= stride_w


def int_values(model: Model, subgraph: Subgraph, index: int) -> tuple[int, ...] | None:
    """A constant int32 / int64 tensor's values (None for anything else)."""
    tensor = subgraph.tensors[index] if index >= 0 else None
    if tensor is None or not tensor.has_data or tensor.dtype.name not in ("INT32", "INT64"):
        return None
    width = 4 if tensor.dtype.name == "INT32" else 8
    raw = model.buffer_bytes(tensor.buffer)
    if len(raw) != width * tensor.element_count:
        return None
    return tuple(
        int.from_bytes(raw[i : i + width], "little", signed=True) for i in range(0, len(raw), width)
    )


# XNNPACK creates an 8-bit FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D or TRANSPOSE_CONV only
# with a requantization scale (input scale x filter scale / output scale, per output channel)
# below 256 (fully-connected-nc.c, convolution-nhwc.c, deconvolution-nhwc.c: "requantization
# scale ... is greater or equal to 256.0"; measured: an int8 TRANSPOSE_CONV at 1,000 fails
# "failed to create XNNPACK runtime"). The delegate does not check it when it takes the node
# (xnnpack_delegate.cc checks the scales of ADD, SUB and MUL only), so xnn_create_runtime fails
# in the delegate kernel's Prepare and allocate_tensors() fails: the interpreter does not fall
# back to the builtin kernels.
REQUANTIZATION_LIMIT = 256.0
# An int8 BATCH_MATMUL with a constant B: batch-matrix-multiply-nc.c (setup_packing_params_qs8)
# refuses a requantization scale outside (0, 255] when it packs B at creation; with a B
# computed at run time it checks nothing. The delegate takes the node, allocate_tensors()
# succeeds and the first invoke() crashes the process (SIGSEGV; measured on the 2.3.0 wheel at
# 255.5, 256, 1,000; 255 runs, and with a run-time B every scale runs).
BATCH_MATMUL_REQUANTIZATION_LIMIT = 255.0
_REQUANTIZED = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
_EIGHT_BIT = ("INT8", "UINT8")


@dataclass(frozen=True, slots=True)
class CreateFailure:
    """A delegated operator XNNPACK refuses to create: where, its requantization scale, and
    when the interpreter fails ("setup": allocate_tensors(); "invoke": the first invoke()
    crashes)."""

    subgraph: int
    operator: int
    opcode: str
    scale: float
    phase: str = "setup"


def create_failures(
    model: Model, partitions: Sequence[XnnpackPartition] | None = None
) -> tuple[CreateFailure, ...]:
    """The operators the delegate takes that XNNPACK then refuses to create (see above);
    `partitions`: each subgraph's `partition`, where the caller has them already."""
    found = []
    for subgraph in model.subgraphs:
        split = partitions[subgraph.index] if partitions else partition(subgraph, model)
        for index in split.delegated:
            operator = subgraph.operators[index]
            if operator.opcode == "BATCH_MATMUL":
                b = operator.inputs[1] if len(operator.inputs) > 1 else -1
                if b < 0 or not subgraph.tensors[b].has_data:
                    continue  # a run-time B: no check at creation
                scale = _requantization_scale(model, subgraph, operator)
                if scale is not None and scale > BATCH_MATMUL_REQUANTIZATION_LIMIT:
                    found.append(
                        CreateFailure(subgraph.index, index, operator.opcode, scale, "invoke")
                    )
                continue
            if operator.opcode not in _REQUANTIZED:
                continue
            scale = _requantization_scale(model, subgraph, operator)
            if scale is not None and scale >= REQUANTIZATION_LIMIT:
                found.append(CreateFailure(subgraph.index, index, operator.opcode, scale))
    return tuple(found)


def _requantization_scale(model: Model, subgraph: Subgraph, operator: Operator) -> float | None:
    """The largest input scale x filter scale / output scale of an 8-bit operator, else None."""
    from arenalens.tflite.reader import read_quantization_scales  # noqa: PLC0415

    data = 2 if operator.opcode == "TRANSPOSE_CONV" else 0  # its data is its third input
    if len(operator.inputs) <= max(data, 1) or not operator.outputs:
        return None
    if min(operator.inputs[data], operator.inputs[1]) < 0:
        return None
    source, weights = (subgraph.tensors[i] for i in (operator.inputs[data], operator.inputs[1]))
    output = subgraph.tensors[operator.outputs[0]]
    if any(t.dtype.name not in _EIGHT_BIT for t in (source, weights, output)):
        return None
    in_scale = source.quantization.scale if source.quantization is not None else None
    out_scale = output.quantization.scale if output.quantization is not None else None
    if not in_scale or not out_scale:
        return None
    scales = read_quantization_scales(model, subgraph.index, weights.index)
    if not scales:
        return None
    return max(in_scale * scale / out_scale for scale in scales)


def partition(subgraph: Subgraph, model: Model | None = None) -> XnnpackPartition:
    """The operators XNNPACK takes from a subgraph (see the module docstring)."""
    delegated: list[int] = []
    unmodelled: set[str] = set()
    variables = xnnpack_variables.taken(subgraph)  # None: not modelled (8-bit unsigned)
    for operator in subgraph.operators:
        taken = _takes(subgraph, operator, model)
        if operator.opcode in xnnpack_variables.OPCODES and variables is not None:
            taken = operator.index in variables
        if taken is None:
            unmodelled.add(operator.opcode)
        elif taken:
            delegated.append(operator.index)
    return XnnpackPartition(tuple(delegated), tuple(sorted(unmodelled)))


@dataclass(frozen=True, slots=True)
class NodeSubset:
    """One subset of LiteRT's partition: its operators, whether the delegate takes them, the
    tensors it reads from outside and those it hands on (each sorted, as Uniquefy leaves)."""

    operators: tuple[int, ...]
    delegated: bool
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def node_subsets(subgraph: Subgraph, delegated: Sequence[int]) -> list[NodeSubset]:
    """PartitionGraphIntoIndependentNodeSubsets (tflite/graph_info.cc), greedily: each subset
    takes, sweep after sweep over the execution plan, every ready operator of its kind (the
    first ready operator decides the kind); a tensor read by a later subset becomes an output
    of the subset that made it; graph outputs end their maker's outputs. Operators touching a
    resource tensor (OpMightHaveSideEffect) are chained: each waits for the one before."""
    taken = set(delegated)
    chained = [o.index for o in subgraph.operators if xnnpack_variables.side_effect(subgraph, o)]
    waits_for = dict(zip(chained[1:], chained, strict=False))
    always, not_ready = -2, -1
    epochs = [always] * len(subgraph.tensors)
    for operator in subgraph.operators:
        for tensor in operator.outputs:
            if tensor >= 0:
                epochs[tensor] = not_ready
    done = [False] * len(subgraph.operators)
    subsets: list[dict[str, list[int] | bool | None]] = []
    while True:
        subset: dict[str, list[int] | bool | None] = {
            "operators": [],
            "kind": None,
            "inputs": [],
            "outputs": [],
        }
        subsets.append(subset)
        epoch = len(subsets) - 1
        progress = True
        while progress:
            progress = False
            for operator in subgraph.operators:
                if done[operator.index] or any(
                    tensor >= 0 and epochs[tensor] == not_ready for tensor in operator.inputs
                ):
                    continue
                if operator.index in waits_for and not done[waits_for[operator.index]]:
                    continue
                kind = operator.index in taken
                if subset["kind"] is None:
                    subset["kind"] = kind
                if subset["kind"] != kind:
                    continue
                done[operator.index] = True
                progress = True
                _list(subset, "operators").append(operator.index)
                for tensor in operator.outputs:
                    if tensor >= 0:
                        epochs[tensor] = epoch
                for tensor in operator.inputs:
                    if tensor >= 0 and epochs[tensor] != epoch:
                        _list(subset, "inputs").append(tensor)
                        if epochs[tensor] >= 0:
                            _list(subsets[epochs[tensor]], "outputs").append(tensor)
        if not subset["operators"]:
            subsets.pop()
            break
    for tensor in subgraph.outputs:
        if tensor >= 0 and epochs[tensor] >= 0:
            _list(subsets[epochs[tensor]], "outputs").append(tensor)
    return [
        NodeSubset(
            tuple(_list(subset, "operators")),
            bool(subset["kind"]),
            tuple(sorted(set(_list(subset, "inputs")))),
            tuple(sorted(set(_list(subset, "outputs")))),
        )
        for subset in subsets
    ]


def _list(subset: dict[str, list[int] | bool | None], key: str) -> list[int]:
    value = subset[key]
    assert isinstance(value, list)
    return value


def delegated_view(model: Model) -> Model | None:
    """The model as LiteRT's planner sees it once XNNPACK has taken its partitions in every
    subgraph (xnnpack_subgraphs): each delegated subset one delegate node reading its inputs
    (constants included) and writing its outputs. None when the partition is not modelled
    (an unknown acceptance, subgraphs other than composites' decompositions)."""
    if not only_decompositions(model):
        return None
    subgraphs = []
    for subgraph in model.subgraphs:
        split = partition(subgraph, model)
        if split.unmodelled:
            return None
        subgraphs.append(_delegated_subgraph(subgraph, split) if split.delegated else subgraph)
    return replace(model, subgraphs=tuple(subgraphs))


def _delegated_subgraph(subgraph: Subgraph, split: XnnpackPartition) -> Subgraph:
    operators: list[Operator] = []
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            for index in subset.operators:
                operators.append(subgraph.operators[index]._replace(index=len(operators)))
            continue
        first = subgraph.operators[subset.operators[0]]
        operators.append(
            first._replace(
                index=len(operators), opcode=DELEGATE_OPCODE,
                custom_code=DELEGATE_OPCODE.removeprefix("CUSTOM:"), inputs=subset.inputs,
                outputs=subset.outputs, intermediates=(), options=MappingProxyType({}),
                file_index=None,
            )
        )  # fmt: skip
    return replace(subgraph, operators=tuple(operators))


def view_arena_sizes(view: Model) -> list[int]:
    """Each arena's high-water mark as LiteRT's planner (the replica) places the view."""
    return [
        run_planner(rules.RUNTIME_PLANNER, problem.problem).arena_size
        for problem in rules.arenas(view)
    ]


# Upper bounds of the runtime's and operators' own blocks, read off the wheel's traces
# (tests/litert_heap_trace.py): struct xnn_operator_data is 240 B per runtime node and struct
# xnn_runtime_value 160 B per value (xnn_create_runtime_v4's two arrays), the subgraph holding
# at most two values per tensor the subset uses (the static weights and biases get values of
# their own) and one per copy; a convolution's or fully connected operator's object,
# parameters and microkernel tables are at most 1,928 B in 5-6 blocks, each up to 32 B over
# its request when 64-aligned, plus, for 8-bit weights with one scale, the per-channel scales
# the delegate expands them to (a TfLiteFloatArray); a copy's 704 B; other operators' at most
# 1.5 KiB; the delegate kernel's node, its Subgraph object, index arrays and tensor maps
# about 1.3 KiB per subset plus 8 B per input and output.
RUNTIME_BYTES = 1_536
IO_BYTES = 8  # per input and output of a delegate node (its index arrays and maps)
OPERATOR_DATA_BYTES = 240
VALUE_BYTES = 160
GEMM_OBJECT_BYTES = 2_048
COPY_OBJECT_BYTES = 736
OTHER_OBJECT_BYTES = 1_536


def _expanded_scales(subgraph: Subgraph, operator: Operator) -> int:
    """8-bit weights with one scale: the delegate gives XNNPACK one scale per output channel."""
    weights = constant_input(subgraph, operator.inputs, 1) if operator.opcode in WEIGHTED else None
    if weights is None or weights.dtype.name not in _QUANTIZED or not weights.shape:
        return 0
    if weights.quantization is not None and weights.quantization.channel_count > 1:
        return 0
    channels = weights.shape[-1] if operator.opcode == "DEPTHWISE_CONV_2D" else weights.shape[0]
    return glibc.usable(4 + 4 * channels)


def objects_bound(subgraph: Subgraph, split: XnnpackPartition) -> int:
    """Runtime and operator objects of a subgraph's delegated partitions (an upper bound)."""
    total = 0
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            continue
        run = subset.operators
        tensors = {
            tensor
            for index in run
            for tensor in (*subgraph.operators[index].inputs, *subgraph.operators[index].outputs)
            if tensor >= 0
        }
        copies = sum(
            1
            for index in run
            if subgraph.operators[index].opcode == "FULLY_CONNECTED"
            and not keeps_dims(subgraph.operators[index])
        )
        weighted = sum(1 for index in run if subgraph.operators[index].opcode in WEIGHTED)
        nodes = len(run) + copies
        total += RUNTIME_BYTES + IO_BYTES * (len(subset.inputs) + len(subset.outputs))
        total += OPERATOR_DATA_BYTES * nodes + VALUE_BYTES * (2 * len(tensors) + copies)
        total += GEMM_OBJECT_BYTES * weighted + COPY_OBJECT_BYTES * copies
        total += sum(_expanded_scales(subgraph, subgraph.operators[index]) for index in run)
        total += OTHER_OBJECT_BYTES * (len(run) - weighted)
    return total


def unmodelled_only(subgraph: Subgraph, split: XnnpackPartition) -> XnnpackPartition:
    """The operators whose acceptance by the delegate is not modelled, as a partition."""
    indices = tuple(
        operator.index for operator in subgraph.operators if operator.opcode in split.unmodelled
    )
    return XnnpackPartition(indices, split.unmodelled)


def keeps_dims(operator: Operator) -> bool:
    return bool(operator.options.get("keep_num_dims", False))


# The subgraph the delegate builds for a subset (xnnpack_delegate.cc: Subgraph::Create;
# XNNPACK src/subgraph.c): its values array starts at one value per tensor the subset uses
# (`external_value_ids`) and its nodes array empty; each grows to max(min(2n, n + 512), n + 64)
# when full (xnn_subgraph_reserve_values / _nodes). Both are freed once the runtime exists.
VALUE_STRUCT_BYTES = 224  # struct xnn_value
NODE_STRUCT_BYTES = 232  # struct xnn_node
SUBGRAPH_MAPS_BYTES = 2_048  # the delegate's tensor → value maps while it defines the nodes


def _grown(capacity: int, needed: int) -> int:
    while capacity < needed:
        capacity = max(min(2 * capacity, capacity + 512), capacity + 64)
    return capacity


def subgraph_bytes(model: Model) -> int:
    """The largest subset's XNNPACK subgraph while the delegate builds it (an upper bound:
    every input counted as a tensor it uses, three internal values per weighted operator
    and one per other operator)."""
    largest = 0
    for subgraph in model.subgraphs:
        split = partition(subgraph, model)
        for subset in node_subsets(subgraph, split.delegated):
            if not subset.delegated:
                continue
            operators = [subgraph.operators[index] for index in subset.operators]
            tensors = {
                tensor
                for operator in operators
                for tensor in (*operator.inputs, *operator.outputs)
                if tensor >= 0
            }
            copies = sum(
                1
                for operator in operators
                if operator.opcode == "FULLY_CONNECTED" and not keeps_dims(operator)
            )
            weighted = sum(1 for operator in operators if operator.opcode in WEIGHTED)
            internal = 3 * weighted + (len(operators) - weighted) + copies
            values = _grown(len(tensors), len(tensors) + internal)
            nodes = _grown(0, len(operators) + copies)
            largest = max(
                largest,
                glibc.usable(VALUE_STRUCT_BYTES * values)
                + glibc.usable(NODE_STRUCT_BYTES * nodes)
                + SUBGRAPH_MAPS_BYTES,
            )
    return largest


def fingerprint_transient(
    model: Model, configurations: Sequence[XnnpackTiles] = (HOST_TILES,)
) -> int:
    """What XNNPACK's fingerprint of a transposed convolution's kind adds to the moment the
    runtimes are built: the first delegated TRANSPOSE_CONV of each kind fingerprints it (the
    process's first; all freed again) before it creates the operator, so the moment holds the
    fingerprint in place of that operator's objects and packed weights (the largest such
    difference, over the ISA's XNNPACK configurations)."""
    largest = 0
    for subgraph in model.subgraphs:
        taken = set(partition(subgraph, model).delegated)
        seen: set[tuple[tuple[str, bool, bool], str]] = set()
        for operator in subgraph.operators:
            if operator.opcode != "TRANSPOSE_CONV" or operator.index not in taken:
                continue
            for tiles in configurations:
                found = deconvolution(subgraph, operator, tiles)
                if found is None or (found.fingerprint(), tiles.name) in seen:
                    continue
                seen.add((found.fingerprint(), tiles.name))
                # The operator itself (its objects, zero buffer and packed weights) is created
                # only after its kind's fingerprint is freed.
                own = aligned_block(found.packed_request()) + found.object_bytes()
                largest = max(largest, fingerprint_bytes(found, tiles) - own)
    return largest
