"""Which GEMM a builtin kernel runs at Eval (cpu_backend_gemm's operands as ruy_heap.Gemm):
the convolutions' and FULLY_CONNECTED's, TRANSPOSE_CONV's raw accumulators, CONV_3D's
column-major filter (always ruy: must_use_ruy) and a hybrid convolution's int32 accumulators.
heap_invoke replays the blocks each takes."""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.ir import Model
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeNode, RuntimeTensor
from arenalens.runtimes.litert.ruy_heap import Gemm, sixteen_by_eight

_EIGHT_BIT = frozenset({"INT8", "UINT8"})


def node_gemm(model: Model, prepared: PreparedSubgraph, node: RuntimeNode) -> Gemm | None:
    """The GEMM a convolution or fully-connected node runs (None for any other node)."""
    opcode, inputs, outputs = node.opcode, node.inputs, node.outputs
    if opcode == "TRANSPOSE_CONV":
        return _transpose_conv_gemm(prepared, inputs)
    if opcode == "CONV_3D":
        return _conv3d_gemm(prepared, inputs, outputs)
    if opcode not in ("CONV_2D", "FULLY_CONNECTED") or len(inputs) < 2 or not outputs:
        return None
    data, weights, output = (tensor_at(prepared, inputs[0]), tensor_at(prepared, inputs[1]),
                             tensor_at(prepared, outputs[0]))  # fmt: skip
    if data is None or weights is None or output is None or not weights.shape:
        return None
    if not output.shape or not data.shape:
        return None
    has_bias = len(inputs) > 2 and inputs[2] >= 0
    # An int4 filter under an int8 input runs the int8 GEMM on its unpacked copy; a 16x8
    # FULLY_CONNECTED's int16 RHS goes through ruy too.
    sixteen = sixteen_by_eight(model, prepared.index, node.operator)
    filters = _EIGHT_BIT | {"INT4"} if opcode == "FULLY_CONNECTED" else _EIGHT_BIT
    quantized = sixteen or (data.dtype in _EIGHT_BIT and weights.dtype in filters)
    if not quantized and not (data.dtype == "FLOAT32" and weights.dtype == "FLOAT32"):
        return None
    rows = weights.shape[0]
    depth = dims_product(weights.shape[1:])
    if opcode == "CONV_2D":
        if len(output.shape) != 4 or len(data.shape) != 4 or data.shape[3] != weights.shape[-1]:
            return None  # grouped convolutions run the reference kernel: no GEMM
        columns = dims_product(output.shape[:3])
        per_channel = data.dtype == "INT8"
    else:
        columns = dims_product(data.shape) // max(depth, 1)
        per_channel = _per_channel(model, prepared, inputs[1])
    return Gemm(rows, depth, columns, per_channel, has_bias, quantized, rhs_bytes=1 + sixteen)


def _conv3d_gemm(
    prepared: PreparedSubgraph, inputs: Sequence[int], outputs: Sequence[int]
) -> Gemm | None:
    """optimized_ops::Conv3D (float only): the DHWIO filter as a column-major LHS (out
    channels × kd·kh·kw·in) times the im2col (or the input) into the output's rows, which
    cpu_backend_gemm sends to ruy whatever the platform (must_use_ruy)."""
    if len(inputs) < 2 or not outputs:
        return None
    data, weights = tensor_at(prepared, inputs[0]), tensor_at(prepared, inputs[1])
    output = tensor_at(prepared, outputs[0])
    if data is None or weights is None or output is None:
        return None
    filter_shape, output_shape = weights.shape or (), output.shape or ()
    if len(filter_shape) != 5 or len(output_shape) != 5:
        return None
    if data.dtype != "FLOAT32" or weights.dtype != "FLOAT32":
        return None
    has_bias = len(inputs) > 2 and inputs[2] >= 0
    return Gemm(filter_shape[4], dims_product(filter_shape[:4]), dims_product(output_shape[:4]),
                False, has_bias, False, must_use_ruy=True)  # fmt: skip


def _transpose_conv_gemm(prepared: PreparedSubgraph, inputs: Sequence[int]) -> Gemm | None:
    """TransposeConvV2: the HWOI weights (kh·kw·Cout rows × Cin) times each image's input
    (Cin × H·W) into col2im, as int32 accumulators for 8-bit inputs (ruy) or floats (Eigen)."""
    if len(inputs) < 3:
        return None
    weights, data = tensor_at(prepared, inputs[1]), tensor_at(prepared, inputs[2])
    if weights is None or data is None or not weights.shape or not data.shape:
        return None
    if len(weights.shape) != 4 or len(data.shape) != 4:
        return None
    quantized = data.dtype in _EIGHT_BIT and weights.dtype in _EIGHT_BIT
    if not quantized and not (data.dtype == "FLOAT32" and weights.dtype == "FLOAT32"):
        return None
    rows = dims_product(weights.shape[:3])
    return Gemm(rows, weights.shape[3], data.shape[1] * data.shape[2], False, False, quantized,
                raw=True)  # fmt: skip


def hybrid_gemm(
    model: Model, prepared: PreparedSubgraph, node: RuntimeNode
) -> tuple[Gemm | None, bool]:
    """A hybrid convolution's ruy GEMM (None: it takes none), and whether that is known (it
    is). conv.cc: a filter whose per-channel scales are not all equal (is_hybrid_per_channel),
    or a grouped convolution, runs EvalHybridPerChannel: grouped, on the reference kernel
    (nothing allocated), else HybridConvPerChannel, whose int32-accumulator Gemm always takes
    ruy. Any other filter (one scale, or several equal ones) runs HybridConv, through ruy only
    when its rows are a multiple of 4. (A too-large im2col sends it to the reference kernel
    on mobile platforms only, not on Linux.)"""
    weights = tensor_at(prepared, node.inputs[1])
    data = tensor_at(prepared, node.inputs[0]) if node.inputs else None
    output = tensor_at(prepared, node.outputs[0]) if node.outputs else None
    if weights is None or output is None or not weights.shape or not output.shape:
        return None, False
    rows = weights.shape[0]
    columns = dims_product(output.shape[:-1])
    gemm = Gemm(rows, dims_product(weights.shape[1:]), columns, False, False, True, raw=True)
    depth = weights.shape[-1] if len(weights.shape) == 4 else 0
    channels = data.shape[-1] if data is not None and data.shape else depth
    grouped = depth > 0 and channels != depth
    if grouped:
        return None, True
    if _scales_differ(model, prepared, node.inputs[1]):
        return gemm, True
    return (gemm if rows % 4 == 0 else None), True


def _per_channel(model: Model, prepared: PreparedSubgraph, index: int) -> bool:
    """A model tensor quantized with one scale per channel."""
    if not 0 <= index < prepared.model_tensor_count:
        return False
    quantization = model.subgraphs[prepared.index].tensors[index].quantization
    return quantization is not None and quantization.channel_count > 1


def _scales_differ(model: Model, prepared: PreparedSubgraph, index: int) -> bool:
    """A model tensor quantized per channel with scales that are not all equal (conv.cc
    compares them as stored, float32)."""
    from arenalens.tflite.reader import read_quantization_scales  # noqa: PLC0415

    if not _per_channel(model, prepared, index):
        return False
    scales = read_quantization_scales(model, prepared.index, index)
    return len(set(scales)) > 1


def tensor_at(prepared: PreparedSubgraph, index: int) -> RuntimeTensor | None:
    """The prepared subgraph's tensor at `index` (None: an optional input left out, -1)."""
    if 0 <= index < len(prepared.tensors):
        return prepared.tensors[index]
    return None


def dims_product(values: Sequence[int]) -> int:
    """The product of dimensions, a negative (unknown) one counted as 0."""
    total = 1
    for value in values:
        total *= max(value, 0)
    return total
