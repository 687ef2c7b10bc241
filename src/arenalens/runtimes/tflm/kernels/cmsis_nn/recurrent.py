"""CMSIS-NN recurrent kernels: SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM → their setup allocations and
refusals on each CMSIS-NN code path.

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/svdf.cc `CmsisNnPrepareSvdf`;
cmsis_nn/unidirectional_sequence_lstm.cc with lstm_eval.cc (`LstmTensors`,
`ValidateTensorStatus`) and lstm_eval_common.cc (`CreateLstmSizeInfo`,
`PrepareGateParametersInteger`, which calls fully_connected_common.cc
`CalculateOpDataFullyConnected` per gate weight). KERNELS_OPTIMIZED_FOR_SPEED (TFLM's default):
MVE's SVDF kernel sums are persistent.

Against the reference kernels: SVDF's OpData holds a kernel-sum pointer (MVE: 4·filters bytes of
sums, which need constant weights); the integer LSTM precomputes eight kernel-sum arrays, asks
for three scratch buffers instead of four, and needs constant weights and biases.
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import recurrent as reference_recurrent
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import NOT_ANALYSED
from arenalens.runtimes.tflm.kernels.cmsis_nn.buffers import Dims
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import (
    is_constant,
    per_channel_arrays,
    scale_count,
    scale_of,
    type_of,
)
from arenalens.runtimes.tflm.kernels.quantization import input_product_scale, symmetric_weights
from arenalens.runtimes.tflm.kernels.recurrent import OP_DATA_LSTM, OP_DATA_SVDF
from arenalens.runtimes.tflm.kernels.refusals import TFLITE_TYPES, not_equal, not_true, type_number

# cmsis_nn/svdf.cc: CmsisNnOpDataSvdf repeats the members of the reference OpDataSvdf (svdf.h),
# in its order, and adds `kernel_sums` (KERNELS_OPTIMIZED_FOR_SIZE builds add
# `int scratch_weight_tensor_index` after scratch_tensor_index).
CMSIS_OP_DATA_SVDF = struct("CmsisNnOpDataSvdf", *OP_DATA_SVDF.fields, ("kernel_sums", "pointer"))
# CMSIS-NN Include/arm_nn_types.h: arm_nn_activation_type is a plain (short) enum.
_CMSIS_LSTM_GATE = struct(
    "cmsis_nn_lstm_gate",
    ("input_multiplier", "int32"),
    ("input_shift", "int32"),
    ("input_weights", "pointer"),
    ("input_effective_bias", "pointer"),
    ("hidden_multiplier", "int32"),
    ("hidden_shift", "int32"),
    ("hidden_weights", "pointer"),
    ("hidden_effective_bias", "pointer"),
    ("bias", "pointer"),
    ("activation_type", "enum"),
)
_CMSIS_LSTM_SCALARS = (
    "time_major", "batch_size", "time_steps", "input_size", "hidden_size", "input_offset",
    "forget_to_cell_multiplier", "forget_to_cell_shift", "input_to_cell_multiplier",
    "input_to_cell_shift", "cell_clip", "cell_scale_power", "output_multiplier", "output_shift",
    "output_offset",
)  # fmt: skip
_CMSIS_LSTM_PARAMS = struct(
    "cmsis_nn_lstm_params",
    *((name, "int32") for name in _CMSIS_LSTM_SCALARS),
    ("forget_gate", _CMSIS_LSTM_GATE),
    ("input_gate", _CMSIS_LSTM_GATE),
    ("cell_gate", _CMSIS_LSTM_GATE),
    ("output_gate", _CMSIS_LSTM_GATE),
)
CMSIS_OP_DATA_LSTM = struct(
    "OpData", ("params_ref", OP_DATA_LSTM), ("params_cmsis_nn", _CMSIS_LSTM_PARAMS)
)

_SVDF_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/svdf.cc"
_LSTM_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/unidirectional_sequence_lstm.cc"
_LSTM_EVAL_FILE = "tensorflow/lite/micro/kernels/lstm_eval.cc"
_FC_COMMON_FILE = "tensorflow/lite/micro/kernels/fully_connected_common.cc"


def _dim(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not -len(tensor.shape) <= axis < len(tensor.shape):
        return 0
    return tensor.shape[axis]


def _svdf(context: base.KernelContext) -> base.Events:
    # CmsisNnPrepareSvdf: input, weights_feature, weights_time, bias, state, output; checks;
    # int8: two scratch buffers, then MVE's kernel sums (persistent; constant weights only);
    # float: one scratch buffer.
    source, features = context.input(0), context.input(1)
    found: list[base.Event] = base.temps(
        context, ("in", 0), ("in", 1), ("in", 2), ("in", 3), ("in", 4)
    )
    found += base.temps(context, ("out", 0))
    rank = context.option("rank", 1)
    batch, filters = _dim(source, 0), _dim(features, 0)
    refused = _svdf_checks(context, rank, filters)
    if refused:
        return found + refused
    if type_of(source) == "FLOAT32":
        found.append(base.Scratch(batch * filters * 4, "svdf activations"))
        return found
    found.append(base.Scratch(batch * filters * 4, "svdf activations"))
    found.append(base.Scratch(batch * (filters // rank) * 4, "svdf output accumulators"))
    nbytes = buffers.svdf_s8(context.build.isa, Dims(filters, _dim(source, 1), 0, 0))
    if nbytes > 0:
        if not is_constant(features):
            return [*found, not_true(_SVDF_FILE, "IsConstantTensor(weights_feature)")]
        found.append(base.Persistent(nbytes, "CMSIS-NN svdf kernel sums", written=base.OverTemps()))
    # EvalIntegerSVDF: arm_svdf_s8 or arm_svdf_state_s16_s8 by weights_time's type.
    return found + reference_recurrent.svdf_state_mismatch(context)


def _svdf_checks(context: base.KernelContext, rank: int, filters: int) -> list[base.Event]:
    source, features, time = context.input(0), context.input(1), context.input(2)
    bias, state, output = context.input(3), context.input(4), context.output(0)
    if rank <= 0 or filters % rank:
        return [not_equal(_SVDF_FILE, "num_filters % rank", "0", filters % max(rank, 1), 0)]
    if type_of(source) not in ("FLOAT32", "INT8"):
        return [not_true(_SVDF_FILE, "input->type == kTfLiteFloat32 || input->type == kTfLiteInt8")]
    if state is None:
        return [not_true(_SVDF_FILE, "activation_state != nullptr")]
    if not state.is_variable:
        return [not_equal(_SVDF_FILE, "activation_state->is_variable", "true", 0, 1)]
    if len(context.operator.inputs) != 5:
        inputs = len(context.operator.inputs)
        return [not_equal(_SVDF_FILE, "node->inputs->size", "5", inputs, 5)]
    wanted: tuple[tuple[Tensor | None, tuple[str, ...]], ...]
    if type_of(source) == "INT8":
        wanted = (
            (features, ("INT8",)),
            (time, ("INT16", "INT8")),
            (state, ("INT16", "INT8")),
            (output, ("INT8",)),
        )
        if bias is not None:
            wanted += ((bias, ("INT32",)),)
    else:
        wanted = tuple((t, ("FLOAT32",)) for t in (features, time, state, bias, output) if t)
    for tensor, allowed in wanted:
        if type_of(tensor) not in allowed:
            return [
                base.Refusal(f"{_SVDF_FILE}: {tensor and tensor.name} has type {type_of(tensor)}")
            ]
    if bias is None:
        # int8 reads bias->params.scale, and both types end with
        # DeallocateTempTfLiteTensor(bias): a null bias fails setup (a DCHECK, or garbage scale).
        return [base.Refusal("svdf without a bias: its Prepare dereferences the missing bias")]
    if type_of(source) == "INT8":
        expected = scale_of(state) * scale_of(time)
        if abs(scale_of(bias) - expected) >= 1e-5:
            return [
                not_true(
                    _SVDF_FILE,
                    "std::abs(static_cast<double>(bias->params.scale) - static_cast<double>("
                    "activation_state->params.scale * weights_time->params.scale)) < 1e-5",
                )
            ]
    return []


def _lstm(context: base.KernelContext) -> base.Events:
    # Prepare: 24 inputs and one output; a temp tensor for every present input (index order) and
    # the output, live for the whole Prepare; checks (CMSIS-NN: constant weights and biases);
    # integer gates (per-channel weights: two arrays per gate weight); int8/int16 activations
    # with an int16 cell: eight kernel-sum arrays and three scratch buffers, else four.
    operator = context.operator
    if len(operator.outputs) != 1:
        return [not_equal(_LSTM_FILE, "node->outputs->size", "1", len(operator.outputs), 1)]
    if len(operator.inputs) != 24:
        return [not_equal(_LSTM_FILE, "node->inputs->size", "24", len(operator.inputs), 24)]
    found: list[base.Event] = base.temps(context, *(("in", i) for i in range(24)), ("out", 0))
    refused = _lstm_status(context)
    if refused:
        return found + refused
    for index in (*range(1, 9), *range(12, 16)):
        if not is_constant(context.input(index)):
            return [
                *found,
                not_true(_LSTM_FILE, "IsConstantTensor(lstm_tensors.GetInternalTensor(i))"),
            ]
    source, cell = context.input(0), context.input(19)
    batch = _dim(source, 1) if context.option("time_major") else _dim(source, 0)
    hidden = _dim(context.input(18), 1)
    cell_type, activation = type_of(cell), type_of(source)
    if cell_type == "INT16":
        found += _gate_parameters(context)
        if any(isinstance(event, base.Refusal) for event in found):
            return found
    elif cell_type != "FLOAT32":
        return [
            *found,
            base.Refusal(
                f"Cell state type {cell_type} ({TFLITE_TYPES.get(cell_type, 0)}) not supported. "
                "The quantized Unidirectional Sequence LSTM Op only support int16 cell state"
            ),
        ]
    cell_bytes = 2 if cell_type == "INT16" else 4
    buffers_count = 4
    if cell_type == "INT16" and activation in ("INT8", "INT16"):
        # CMSIS_NN_PortOpData: effective biases, int32 (int8) or int64 (int16) per hidden unit:
        # input data sums for the input, forget, cell, output gates, then hidden sums.
        sum_bytes = 4 if activation == "INT8" else 8
        for part in ("input", "hidden"):
            for gate in ("input", "forget", "cell", "output"):
                found.append(
                    base.Persistent(
                        hidden * sum_bytes,
                        f"{gate} gate {part} kernel sums",
                        written=base.OverTemps(),
                    )
                )
        buffers_count = 3
    found += [
        base.Scratch(batch * hidden * cell_bytes, f"lstm buffer {i}") for i in range(buffers_count)
    ]
    return found + _lstm_eval_refusals(activation, type_of(context.input(1)))


def _lstm_eval_refusals(activation: str, weight_type: str) -> list[base.Event]:
    """UnidirectionalSequenceLstmEval: integer activations need int8 weights."""
    if activation in ("INT8", "INT16") and weight_type != "INT8":
        number = TFLITE_TYPES.get(activation, 0)
        return [base.Refusal(f"Filter type {weight_type} ({number}) not supported.", base.INVOKE)]
    if activation not in ("FLOAT32", "INT8", "INT16"):
        number = TFLITE_TYPES.get(activation, 0)
        return [base.Refusal(f"Input type {activation} ({number}) not supported.", base.INVOKE)]
    return []


def _lstm_status(context: base.KernelContext) -> list[base.Event]:
    """LstmTensors::ValidateTensorStatus: states variable, types consistent, no peephole,
    projection or layer-norm tensors."""
    present = [context.input(i) is not None for i in range(24)]
    source, state, cell = context.input(0), context.input(18), context.input(19)
    if source is None:
        return [not_true(_LSTM_EVAL_FILE, "internal_tensors_[kLstmInputTensor] != nullptr")]
    for name, tensor in (("kLstmOutputStateTensor", state), ("kLstmCellStateTensor", cell)):
        if tensor is None:
            return [not_true(_LSTM_EVAL_FILE, f"internal_tensors_[{name}] != nullptr")]
        if not tensor.is_variable:
            return [not_true(_LSTM_EVAL_FILE, f"internal_tensors_[{name}]->is_variable")]
    for name, tensor in (("kLstmOutputStateTensor", state), ("output", context.output(0))):
        if type_of(tensor) != type_of(source):
            return [
                not_equal(
                    _LSTM_EVAL_FILE,
                    f"{name}->type",
                    "internal_tensors_[kLstmInputTensor]->type",
                    type_number(tensor),
                    type_number(source),
                )
            ]
    for first, last, what in ((1, 9, "weight"), (12, 16, "bias")):
        reference = type_of(context.input(2 if what == "weight" else 13))
        for index in range(first, last):
            if not present[index] or type_of(context.input(index)) != reference:
                return [
                    base.Refusal(
                        f"{_LSTM_EVAL_FILE}: {what} tensor {index} missing or of another type"
                    )
                ]
    for index in (*range(9, 12), 16, 17, *range(20, 24)):
        if present[index]:
            return [not_true(_LSTM_EVAL_FILE, "internal_tensors_[i] == nullptr")]
    return []


def _gate_parameters(context: base.KernelContext) -> list[base.Event]:
    """PrepareGateParametersInteger: CalculateOpDataFullyConnected on each gate's input and
    recurrent weights (forget, input, cell, output); a per-channel weight gets two arrays; each
    call ends in the DCHECK on the weights' zero point."""
    found: list[base.Event] = []
    source, state = context.input(0), context.input(18)
    for input_weight, recurrent_weight in ((2, 6), (1, 5), (3, 7), (4, 8)):
        for activation, position in ((source, input_weight), (state, recurrent_weight)):
            weights = context.input(position)
            if type_of(activation) == "FLOAT32":
                continue
            count = scale_count(weights)
            if count > 1:
                if type_of(activation) not in ("INT8", "INT16") or type_of(weights) == "INT4":
                    return [
                        *found,
                        not_true(
                            _FC_COMMON_FILE,
                            "(input->type == kTfLiteInt8 && filter->type != kTfLiteInt4) || "
                            "(input->type == kTfLiteInt16 && filter->type != kTfLiteInt4)",
                        ),
                    ]
                found += per_channel_arrays(count, written=base.OverTemps())
            else:
                refused = input_product_scale(context.build, activation, weights)
                if refused:
                    return [*found, refused]
            refused = symmetric_weights(_FC_COMMON_FILE, weights, context.build)
            if refused:
                return [*found, refused]
    return found


_REFERENCE = base.rule_table(*reference_recurrent.RULES)

RULES = (
    cmsis_nn_kernel(
        _REFERENCE["SVDF"], "cmsis_nn/svdf.cc", NOT_ANALYSED, CMSIS_OP_DATA_SVDF, _svdf
    ),
    cmsis_nn_kernel(
        _REFERENCE["UNIDIRECTIONAL_SEQUENCE_LSTM"],
        "cmsis_nn/unidirectional_sequence_lstm.cc, lstm_eval.cc, lstm_eval_common.cc",
        NOT_ANALYSED,
        CMSIS_OP_DATA_LSTM,
        _lstm,
    ),
)
