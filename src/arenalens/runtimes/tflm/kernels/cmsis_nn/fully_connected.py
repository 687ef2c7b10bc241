"""CMSIS-NN matrix kernels: FULLY_CONNECTED, BATCH_MATMUL → their setup allocations and refusals
on each CMSIS-NN code path.

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/fully_connected.cc with
fully_connected_common.cc `CalculateOpDataFullyConnected`; cmsis_nn/batch_matmul.cc with
batch_matmul_common.cc `ReshapeOutputTensor`; kernel_util.cc `CreateWritableTensorDimsWithCopy`.
TFLM's makefile builds with KERNELS_OPTIMIZED_FOR_SPEED: MVE's kernel sums of a constant
FULLY_CONNECTED are computed once into a persistent buffer (KERNELS_OPTIMIZED_FOR_SIZE builds would
request them as scratch instead).
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import batch_matmul as reference_matmul
from arenalens.runtimes.tflm.kernels import fully_connected as reference_fully_connected
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import NOT_ANALYSED
from arenalens.runtimes.tflm.kernels.cmsis_nn.buffers import Dims
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import (
    is_constant,
    is_quantized,
    per_channel_arrays,
    scale_count,
    type_of,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    convolution_multiplier,
    input_product_scale,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    UNSUPPORTED_INPUT,
    dcheck_aborts,
    int16_zero_points,
    not_equal,
    not_true,
    type_number,
    types_and_hybrid,
)

# cmsis_nn/fully_connected.cc: OpData, around the reference kernels' (fully_connected.h).
CMSIS_OP_DATA_FULLY_CONNECTED = struct(
    "OpData",
    ("reference_op_data", reference_fully_connected.OP_DATA_FULLY_CONNECTED),
    ("buffer_conv_1x1_idx", "int"),
    ("buffer_idx", "int"),
    ("kernel_sums", "pointer"),
    ("batches", "int32"),
    ("accum_depth", "int32"),
    ("output_depth", "int32"),
)
_CMSIS_NN_DIMS = struct(
    "cmsis_nn_dims", ("n", "int32"), ("h", "int32"), ("w", "int32"), ("c", "int32")
)
CMSIS_OP_DATA_BATCH_MATMUL = struct(
    "OpData",
    ("reference_op_data", reference_matmul.OP_DATA_BATCH_MATMUL),
    ("output_shape", _CMSIS_NN_DIMS),
    ("buffer_idx", "int"),
)
_FC_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/fully_connected.cc"
_FC_COMMON_FILE = "tensorflow/lite/micro/kernels/fully_connected_common.cc"
_BMM_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/batch_matmul.cc"
# fully_connected.cc Eval: the conv-1x1 path's scratch index must be at least this (a DCHECK).
_CONV_1X1_MINIMUM_INDEX = 4


def _last(tensor: Tensor | None) -> int:
    return tensor.shape[-1] if tensor is not None and tensor.shape else 0


def _fully_connected(context: base.KernelContext) -> base.Events:
    # Prepare: input, filter, bias, output; checks; CalculateOpDataFullyConnected (per-channel
    # arrays); then, int8 with int8 weights: the conv-1x1 path's multiplier copies (scratch
    # 8·N), or MVE's kernel sums (persistent when weights and bias are constant, else scratch).
    source, weights, bias, output = (
        context.input(0),
        context.input(1),
        context.input(2),
        context.output(0),
    )
    unparsed = reference_fully_connected.weights_format_refusal(context)
    if unparsed:
        return unparsed
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    refused = types_and_hybrid(_FC_FILE, source, weights, output) or _output_rank(context)
    if refused:
        return found + refused
    dtype, weight_type = type_of(source), type_of(weights)
    per_channel = dtype != "FLOAT32" and is_quantized(weights) and scale_count(weights) > 1
    if dtype != "FLOAT32":
        found += _calculate_op_data(context, per_channel=per_channel)
        if any(isinstance(event, base.Refusal) for event in found):
            return found
    if per_channel and not (dtype == "INT8" and weight_type != "INT4"):
        return [
            *found,
            not_true(
                _FC_FILE,
                "!data->reference_op_data.is_per_channel || "
                "(data->reference_op_data.is_per_channel && input->type == kTfLiteInt8 && "
                "filter->type != kTfLiteInt4)",
            ),
        ]
    if dtype == "INT16":
        return found + int16_zero_points(_FC_FILE, ("input", source), ("output", output))
    if dtype == "INT8" and weight_type != "INT4":
        found += _int8_buffers(context, weights, bias, output, per_channel=per_channel)
    return found


def _output_rank(context: base.KernelContext) -> list[base.Event]:
    """`TFLITE_DCHECK_GE(output_dim_count, 2)` and `_LE(..., 4)`: CMSIS-NN's FULLY_CONNECTED
    takes rank-2 to rank-4 outputs only (keep_num_dims on a rank-5 input gives rank 5)."""
    output = context.output(0)
    rank = 0 if output is None else len(output.shape)
    if 2 <= rank <= 4 or not context.build.dchecks:
        return []
    check = (
        "TFLITE_DCHECK_GE(output_dim_count, 2)"
        if rank < 2
        else "TFLITE_DCHECK_LE(output_dim_count, 4)"
    )
    return [
        dcheck_aborts(
            _FC_FILE,
            check,
            f"the output has rank {rank}",
            fix="reshape around the FULLY_CONNECTED so that its output has rank 2 to 4 "
            "(convert without keep_num_dims, or flatten the batch dimensions)",
        )
    ]


def _calculate_op_data(context: base.KernelContext, *, per_channel: bool) -> list[base.Event]:
    """CalculateOpDataFullyConnected for quantized types: per-channel arrays (one scale per
    output), or the per-tensor multiplier with its bias-scale check."""
    source, weights = context.input(0), context.input(1)
    if per_channel:
        if not (type_of(source) in ("INT8", "INT16") and type_of(weights) != "INT4"):
            return [
                not_true(
                    _FC_COMMON_FILE,
                    "(input->type == kTfLiteInt8 && filter->type != kTfLiteInt4) || "
                    "(input->type == kTfLiteInt16 && filter->type != kTfLiteInt4)",
                )
            ]
        count = scale_count(weights)
        axis = weights.quantization.axis if weights and weights.quantization else 0
        size = (
            weights.shape[axis]
            if weights and -len(weights.shape) <= axis < len(weights.shape)
            else 0
        )
        if count != size:
            return [
                not_equal(
                    _FC_COMMON_FILE,
                    "per_channel_quantization_size",
                    "filter->dims->data[affine_quantization->quantized_dimension]",
                    count,
                    size,
                )
            ]
        # Read after the arrays: what the common code reads, then Prepare's own type checks of
        # input and filter (the per-channel ensure and the int8 / int16 branch).
        keep = (
            *reference_fully_connected.per_channel_reads(context),
            base.TempField("type", 0),
            base.TempField("type", 1),
        )
        written = base.OverTemps(keep=keep)
        arrays = per_channel_arrays(count, written=written)
        return [
            *arrays,
            *reference_fully_connected.quantized_parameters(context, per_channel=True),
        ]
    return reference_fully_connected.quantized_parameters(context, per_channel=False)


def _int8_buffers(
    context: base.KernelContext,
    weights: Tensor | None,
    bias: Tensor | None,
    output: Tensor | None,
    *,
    per_channel: bool,
) -> list[base.Event]:
    accum_depth, output_depth = _last(weights), _last(output)
    rank = 0 if output is None else len(output.shape)
    found: list[base.Event] = []
    if rank > 2 and accum_depth % 4 == 0:
        # Run as a 1x1 convolution; per-tensor weights get per-channel copies in scratch. The
        # 1x1 fast convolution's own buffer is 0 bytes under GCC (armclang, DSP: 4·accum_depth).
        if not per_channel:
            found.append(base.Scratch(output_depth * 8, "CMSIS-NN conv-1x1 multipliers and shifts"))
            found.append(base.ScratchNumberAtLeast(_CONV_1X1_MINIMUM_INDEX, _conv_1x1_index))
        return found
    nbytes = buffers.fully_connected_s8(context.build.isa, Dims(accum_depth, 1, 1, output_depth))
    if nbytes > 0 and is_constant(weights) and (bias is None or is_constant(bias)):
        return [base.Persistent(nbytes, "CMSIS-NN kernel sums", written=base.OverTemps())]
    if nbytes > 0:
        found.append(base.Scratch(nbytes, "CMSIS-NN kernel sums"))
    return found


def _conv_1x1_index(count: int) -> base.Refusal:
    """Eval's `TFLITE_DCHECK_GE(buffer_conv_1x1_idx, 4)` compares the model-wide scratch request
    number with 4: with fewer requests before this operator's, Invoke aborts."""
    return base.Refusal(
        f"its scratch request is number {count} of the model, and CMSIS-NN's conv-1x1 "
        "FULLY_CONNECTED needs at least 4 before it: a TFLITE_DCHECK aborts Invoke",
        base.INVOKE,
    )


def _batch_matmul(context: base.KernelContext) -> base.Events:
    # Prepare: lhs, rhs, output; checks (ranks 2 to 4); transposed copies (adj_x: lhs; !adj_y:
    # rhs); ReshapeOutputTensor (the output's writable dims); then, unlike the reference kernel,
    # the quantization struct (int8/int16) and MVE's int8 kernel sums.
    lhs, rhs, output = context.input(0), context.input(1), context.output(0)
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1), ("out", 0))
    refused = _batch_matmul_checks(lhs, rhs, output)
    if refused:
        return found + refused
    adj_x, adj_y = bool(context.option("adj_x")), bool(context.option("adj_y"))
    refused = reference_matmul.shape_refusals(_BMM_FILE, lhs, rhs, adj_x=adj_x, adj_y=adj_y)
    if refused:
        return found + refused
    if adj_x:
        found += reference_matmul.transposed_copy(context, lhs, "lhs")
    if not adj_y:
        found += reference_matmul.transposed_copy(context, rhs, "rhs")
    found += reference_matmul.reshaped_output(context, lhs, rhs)
    dtype = type_of(lhs)
    if dtype == "FLOAT32" or any(isinstance(event, base.Refusal) for event in found):
        return found
    quantization = reference_matmul.QUANTIZATION_OP_DATA_BATCH_MATMUL
    found.append(
        base.Persistent(context.sizeof(quantization), "quantization", written=base.OverTemps())
    )
    # GetQuantizedConvolutionMultipler (no bias), then QuantizeMultiplier.
    scale_refused = input_product_scale(context.build, lhs, rhs) or convolution_multiplier(
        context.build, lhs, rhs, output
    )
    if scale_refused:
        return [*found, scale_refused]
    if dtype == "INT16":
        return found + int16_zero_points(
            _BMM_FILE, ("lhs_input", lhs), ("rhs_input", rhs), ("output", output)
        )
    # arm_fully_connected_s8_get_buffer_size(&output_shape): output_shape.c is the RHS columns.
    left, right = reference_matmul.extended(lhs, rhs)
    columns = right[-2] if adj_y else right[-1]
    nbytes = buffers.fully_connected_s8(context.build.isa, Dims(1, 1, left[-2], columns))
    if nbytes > 0:
        found.append(base.Scratch(nbytes, "CMSIS-NN kernel sums"))
    return found


def _batch_matmul_checks(
    lhs: Tensor | None, rhs: Tensor | None, output: Tensor | None
) -> list[base.Event]:
    if type_of(lhs) != type_of(rhs):
        return [
            not_equal(_BMM_FILE, "lhs_input->type", "rhs_input->type", type_of(lhs), type_of(rhs))
        ]
    if type_of(lhs) != type_of(output):
        return [
            not_equal(
                _BMM_FILE, "lhs_input->type", "output->type", type_number(lhs), type_number(output)
            )
        ]
    if type_of(lhs) not in ("FLOAT32", "INT16", "INT8"):
        return [base.Refusal(UNSUPPORTED_INPUT)]
    for name, tensor in (("lhs", lhs), ("rhs", rhs)):
        rank = 0 if tensor is None else len(tensor.shape)
        if rank < 2:
            return [not_true(_BMM_FILE, f"{name}_rank >= 2")]
        if rank > 4:
            return [not_true(_BMM_FILE, f"{name}_rank <= 4")]
    return []


RULES = (
    cmsis_nn_kernel(
        base.rule_table(*reference_fully_connected.RULES)["FULLY_CONNECTED"],
        "cmsis_nn/fully_connected.cc, fully_connected_common.cc",
        NOT_ANALYSED,
        CMSIS_OP_DATA_FULLY_CONNECTED,
        _fully_connected,
    ),
    cmsis_nn_kernel(
        base.rule_table(*reference_matmul.RULES)["BATCH_MATMUL"],
        "cmsis_nn/batch_matmul.cc, batch_matmul_common.cc",
        NOT_ANALYSED,
        CMSIS_OP_DATA_BATCH_MATMUL,
        _batch_matmul,
    ),
)
