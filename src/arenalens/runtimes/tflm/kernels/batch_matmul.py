"""BATCH_MATMUL → its setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): batch_matmul.cc (`BatchMatMulInit`,
`BatchMatMulPrepare`, `InitializeTemporaries`, `AllocInitTransposeTensorFromTfLiteTensor`),
batch_matmul_common.cc (`ReshapeOutputTensor`), kernel_util.cc
(`CreateWritableTensorDimsWithCopy`), batch_matmul.h (`OpDataBatchMatmul`).

Prepare keeps three temp tensors (lhs, rhs, output) live throughout and allocates in the tail:
the quantization struct (int8/int16), a transposed copy of the LHS when adj_x (an eval tensor,
its dims, its data) and of the RHS whenever adj_y is false, constant or not (a constant RHS is
only transposed once, at the first Eval), and a writable copy of the output's dims. All of them
may land on the live temps (`temp_overlap`): the structs and dims are written at once, the
copies' data only at Eval; the dims copy is read again later in setup.
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import REREADS_INPUT
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import elements, op_data
from arenalens.runtimes.tflm.kernels.quantization import (
    convolution_multiplier,
    input_product_scale,
)
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true
from arenalens.runtimes.tflm.structs import TF_LITE_EVAL_TENSOR

# builtin_op_data.h
BATCH_MATMUL_PARAMS = struct(
    "TfLiteBatchMatMulParams",
    ("adj_x", "bool"),
    ("adj_y", "bool"),
    ("asymmetric_quantize_inputs", "bool"),
)
# batch_matmul.h
OP_DATA_BATCH_MATMUL = struct(
    "OpDataBatchMatmul",
    ("quantization", "pointer"),
    ("lhs_transposed_tensor", "pointer"),
    ("rhs_transposed_tensor", "pointer"),
    ("rhs_is_transposed", "bool"),
    ("lhs_is_constant_tensor", "bool"),
    ("rhs_is_constant_tensor", "bool"),
)
QUANTIZATION_OP_DATA_BATCH_MATMUL = struct(
    "QuantizationOpDataBatchMatmul",
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("lhs_zero_point", "int32"),
    ("rhs_zero_point", "int32"),
    ("output_zero_point", "int32"),
)

_FILE = "batch_matmul.cc"
_COMMON_FILE = "batch_matmul_common.cc"
_TYPES = ("FLOAT32", "INT8", "INT16")
# Temps by fetch order: lhs 0, rhs 1, output 2. After the tail buffers are written Prepare still
# reads every temp's quantization params and dims (multiplier, zero points, shapes) and the
# inputs' allocation type (IsConstantTensor).
_READ_AFTERWARDS = (
    *(base.TempField(name, temp) for temp in (0, 1, 2) for name in ("params", "dims")),
    base.TempField("allocation_type", 0),
    base.TempField("allocation_type", 1),
)


def extended(lhs: Tensor | None, rhs: Tensor | None) -> tuple[list[int], list[int]]:
    """Both shapes extended with leading 1s to the larger rank (RuntimeShape::ExtendedShape)."""
    left = list(lhs.shape) if lhs is not None else []
    right = list(rhs.shape) if rhs is not None else []
    rank = max(len(left), len(right))
    return [1] * (rank - len(left)) + left, [1] * (rank - len(right)) + right


def shape_refusals(
    file: str, lhs: Tensor | None, rhs: Tensor | None, *, adj_x: bool, adj_y: bool
) -> list[base.Event]:
    """Broadcast batch dimensions and equal accumulation dimensions."""
    left, right = extended(lhs, rhs)
    for a, b in zip(left[:-2], right[:-2], strict=True):
        if a not in (b, 1) and b != 1:
            return [not_equal(file, "rhs_dim", "1", b, 1)]
    accum_left = left[-2] if adj_x else left[-1]
    accum_right = right[-1] if adj_y else right[-2]
    if accum_left != accum_right:
        return [not_equal(file, "accum_dim_lhs", "accum_dim_rhs", accum_left, accum_right)]
    return []


def transposed_copy(
    context: base.KernelContext, tensor: Tensor | None, name: str
) -> list[base.Event]:
    """AllocInitTransposeTensorFromTfLiteTensor: an eval tensor (its data pointer, dims pointer
    and type written at once), its dims (written), its data (written only at Eval)."""
    rank = 0 if tensor is None else len(tensor.shape)
    element_bytes = 1 if tensor is None else tensor.dtype.element_bytes or 1
    # data, dims and type lead the struct: everything up to the end of `type` is written.
    offset, size = TF_LITE_EVAL_TENSOR.member("type", context.build.abi, context.build.features)
    struct_written = ((0, offset + size),)
    return [
        base.Persistent(
            context.sizeof(TF_LITE_EVAL_TENSOR),
            f"transposed {name} tensor",
            written=base.OverTemps(ranges=struct_written, keep=_READ_AFTERWARDS),
        ),
        base.Persistent(
            4 + 4 * rank,
            f"transposed {name} dims",
            written=base.OverTemps(keep=_READ_AFTERWARDS),
        ),
        base.Persistent(elements(tensor) * element_bytes, f"transposed {name} data"),
    ]


def reshaped_output(
    context: base.KernelContext, lhs: Tensor | None, rhs: Tensor | None
) -> list[base.Event]:
    """ReshapeOutputTensor: a writable copy of the output's dims (written over the live temps,
    read again by NumElements and the planner), then the element-count check."""
    output = context.output(0)
    adj_x, adj_y = bool(context.option("adj_x")), bool(context.option("adj_y"))
    left, right = extended(lhs, rhs)
    if output is None or len(left) > len(output.shape):
        return [not_true(_COMMON_FILE, "output_rank <= NumDimensions(output)")]
    copy = base.OverTemps(keep=(base.TempField("dims", 2),), read_later=True)
    found: list[base.Event] = [
        base.Persistent(4 + 4 * len(output.shape), "output dims copy", written=copy)
    ]
    count = 1
    for a, b in zip(left[:-2], right[:-2], strict=True):
        count *= b if a == 1 else a
    count *= (left[-1] if adj_x else left[-2]) * (right[-2] if adj_y else right[-1])
    if count != elements(output):
        found.append(
            not_equal(_COMMON_FILE, "orig_size", "NumElements(output)", elements(output), count)
        )
    return found


def zero_point_refusals(file: str, *tensors: tuple[str, Tensor | None]) -> list[base.Event]:
    """int16: `TF_LITE_ENSURE_EQ(x->params.zero_point, 0)`, the first failing one."""
    for name, tensor in tensors:
        quantization = None if tensor is None else tensor.quantization
        zero_point = 0 if quantization is None else quantization.zero_point or 0
        if zero_point:
            return [not_equal(file, f"{name}->params.zero_point", "0", zero_point, 0)]
    return []


def _prepare(context: base.KernelContext) -> base.Events:
    # BatchMatMulPrepare: two inputs, one output; lhs, rhs, output; type and rank checks;
    # InitializeTemporaries (quantization struct, transposed copies); quantization; broadcast
    # and accumulation checks; ReshapeOutputTensor.
    inputs, outputs = len(context.operator.inputs), len(context.operator.outputs)
    if inputs != 2:
        return [not_equal(_FILE, "NumInputs(node)", "2", inputs, 2)]
    if outputs != 1:
        return [not_equal(_FILE, "NumOutputs(node)", "1", outputs, 1)]
    lhs, rhs, output = context.input(0), context.input(1), context.output(0)
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1), ("out", 0))
    kinds = [context.input_type(0), context.input_type(1), context.output_type(0)]
    for name, kind in (("lhs_data", kinds[0]), ("rhs_data", kinds[1])):
        if kind not in _TYPES:
            condition = " || ".join(
                f"{name}->type == kTfLite{t}" for t in ("Float32", "Int8", "Int16")
            )
            return [*found, not_true(_FILE, condition)]
    if kinds[0] != kinds[1]:
        return [*found, not_true(_FILE, "lhs_data->type == rhs_data->type")]
    if kinds[0] != kinds[2]:
        return [*found, not_true(_FILE, "lhs_data->type == output->type")]
    for name, tensor in (("lhs", lhs), ("rhs", rhs)):
        rank = 0 if tensor is None else len(tensor.shape)
        if not 2 <= rank <= 5:
            return [*found, not_true(_FILE, f"{name}_rank {'>= 2' if rank < 2 else '<= 5'}")]
    if kinds[0] in ("INT8", "INT16"):
        # Allocated first, filled after the transposed copies (multiplier, range, zero points).
        found.append(
            base.Persistent(
                context.sizeof(QUANTIZATION_OP_DATA_BATCH_MATMUL),
                "quantization",
                written=base.OverTemps(keep=_READ_AFTERWARDS),
            )
        )
    adj_x, adj_y = bool(context.option("adj_x")), bool(context.option("adj_y"))
    if adj_x:
        found += transposed_copy(context, lhs, "lhs")
    if not adj_y:
        found += transposed_copy(context, rhs, "rhs")
    if kinds[0] in ("INT8", "INT16"):
        # GetQuantizedConvolutionMultipler (no bias), then QuantizeMultiplier.
        scale_refused = input_product_scale(context.build, lhs, rhs) or convolution_multiplier(
            context.build, lhs, rhs, output
        )
        if scale_refused:
            return [*found, scale_refused]
    if kinds[0] == "INT16":
        refused = zero_point_refusals(
            _FILE, ("lhs_data", lhs), ("rhs_data", rhs), ("output", output)
        )
        if refused:
            return found + refused
    refused = shape_refusals(_FILE, lhs, rhs, adj_x=adj_x, adj_y=adj_y)
    if refused:
        return found + refused
    return found + reshaped_output(context, lhs, rhs)


RULES = (
    base.KernelRule(
        "BATCH_MATMUL",
        "batch_matmul.cc, batch_matmul_common.cc",
        BATCH_MATMUL_PARAMS,
        op_data(OP_DATA_BATCH_MATMUL),
        _prepare,
        access=base.NoOverlap(REREADS_INPUT + " (batch_matmul.cc)"),
        operands=base.operands("lhs", "rhs"),
        resolver="AddBatchMatMul",
    ),
)
