"""Recurrent kernels: SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM → setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): svdf.cc, svdf_common.cc (`PrepareSvdf`),
svdf.h (`OpDataSvdf`); unidirectional_sequence_lstm.cc, lstm_eval.cc (`LstmTensors`,
`ValidateTensorStatus`), lstm_eval_common.cc (`CreateLstmSizeInfo`, `ValidateTensorSize`,
`CreateGateParams`, `PrepareGateParametersInteger`), lstm_shared.h and
kernels/internal/types.h (`OpDataLSTM` and its members).
"""

from __future__ import annotations

from arenalens.builds.tflm import FULLY_CONNECTED_INT16_PER_CHANNEL
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    ARITHMETIC_PARAMS,
    dim,
    op_data,
    per_channel_arrays,
)
from arenalens.runtimes.tflm.kernels.quantization import input_product_scale, symmetric_weights
from arenalens.runtimes.tflm.kernels.refusals import (
    TFLITE_TYPES,
    crash,
    not_equal,
    not_true,
    numbered,
    unsupported_at_invoke,
)

SVDF_PARAMS = struct(
    "TfLiteSVDFParams",
    ("rank", "int"),
    ("activation", "enum"),
    ("asymmetric_quantize_inputs", "bool"),
)
OP_DATA_SVDF = struct(
    "OpDataSvdf",
    ("effective_scale_1_a", "int32"),
    ("effective_scale_2_a", "int32"),
    ("effective_scale_1_b", "int"),
    ("effective_scale_2_b", "int"),
    ("scratch_tensor_index", "int"),
    ("scratch_output_tensor_index", "int"),
    ("input_zero_point", "int"),
    ("output_zero_point", "int"),
    ("activation_state_zero_point", "int"),
)
LSTM_PARAMS = struct(
    "TfLiteUnidirectionalSequenceLSTMParams",
    ("activation", "enum"),
    ("cell_clip", "float"),
    ("proj_clip", "float"),
    ("time_major", "bool"),
    ("asymmetric_quantize_inputs", "bool"),
    ("diagonal_recurrent_tensors", "bool"),
)
# kernels/internal/types.h: FullyConnectedParams and ArithmeticParams (no pointers), and
# lstm_shared.h: OpDataLSTM, with the LSTM's sizes, cell-state info and gate parameters.
FULLY_CONNECTED_PARAMS = struct(
    "FullyConnectedParams",
    ("input_offset", "int32"),
    ("weights_offset", "int32"),
    ("output_offset", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("quantized_activation_min", "int32"),
    ("quantized_activation_max", "int32"),
    ("float_activation_min", "float"),
    ("float_activation_max", "float"),
    ("lhs_cacheable", "bool"),
    ("rhs_cacheable", "bool"),
    ("weights_format", "uint8"),  # enum class FullyConnectedWeightsFormat : uint8_t
)
_LSTM_SIZE_INFO = struct(
    "LstmSizeInfo",
    ("time_major", "bool"),
    ("batch_size", "int"),
    ("time_steps", "int"),
    ("input_dimension", "int"),
    ("state_dimension", "int"),
)
_CELL_STATE_INFO = struct(
    "CellStateInfo",
    ("cell_clip", "float"),
    ("quantized_cell_clip", "int16"),
    ("cell_state_scale_power", "int32"),
)
_GATE_PARAMETERS = struct(
    "GateParameters",
    ("input_fc_params", FULLY_CONNECTED_PARAMS),
    ("recurrent_fc_params", FULLY_CONNECTED_PARAMS),
)
_INTER_GATE_PARAMETERS = struct(
    "InterGateParameters",
    ("forget_cell_mul_params", ARITHMETIC_PARAMS),
    ("input_mul_params", ARITHMETIC_PARAMS),
    ("output_mul_params", ARITHMETIC_PARAMS),
)
OP_DATA_LSTM = struct(
    "OpDataLSTM",
    ("size_info", _LSTM_SIZE_INFO),
    ("cell_state_info", _CELL_STATE_INFO),
    ("cell_gate_nonlinear_type", "enum"),
    ("forget_gate_parameters", _GATE_PARAMETERS),
    ("input_gate_parameters", _GATE_PARAMETERS),
    ("cell_gate_parameters", _GATE_PARAMETERS),
    ("output_gate_parameters", _GATE_PARAMETERS),
    ("inter_gate_parameters", _INTER_GATE_PARAMETERS),
    Field("buffer_indices", "int", 4),
)

_SVDF_FILE = "svdf_common.cc"
_LSTM_FILE = "lstm_eval.cc"
# Inputs of UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_shared.h): 0 input, 1-4 input-to-gate weights
# (input, forget, cell, output), 5-8 recurrent weights, 9-11 peephole, 12-15 gate biases, 16-17
# projection, 18 output state, 19 cell state, 20-23 layer norm.
_OUTPUT_STATE, _CELL_STATE = 18, 19
LSTM_OPERANDS = base.operands(
    "input",
    *("input_to_input_weights?", "input_to_forget_weights"),
    *("input_to_cell_weights", "input_to_output_weights"),
    *("recurrent_to_input_weights?", "recurrent_to_forget_weights"),
    *("recurrent_to_cell_weights", "recurrent_to_output_weights"),
    *("cell_to_input_weights?", "cell_to_forget_weights?", "cell_to_output_weights?"),
    *("input_gate_bias?", "forget_gate_bias", "cell_gate_bias", "output_gate_bias"),
    *("projection_weights?", "projection_bias?", "output_state", "cell_state"),
    *("input_layer_norm_coefficients?", "forget_layer_norm_coefficients?"),
    *("cell_layer_norm_coefficients?", "output_layer_norm_coefficients?"),
)
_MUST_BE_OMITTED = (*range(9, 12), 16, 17, *range(20, 24))
# PrepareGateParametersInteger: forget, input, cell, output; input weight then recurrent.
_GATE_WEIGHTS = ((2, 6), (1, 5), (3, 7), (4, 8))


def _svdf(context: base.KernelContext) -> base.Events:
    # PrepareSvdf: input, weights_feature, weights_time, bias (when present), activation state,
    # checks, then the output; scratch per type.
    found: list[base.Event] = base.temps(
        context, ("in", 0), ("in", 1), ("in", 2), ("in", 3), ("in", 4)
    )
    if context.input(4) is None:
        return [*found, not_true(_SVDF_FILE, "activation_state != nullptr")]
    source, features, state = context.input(0), context.input(1), context.input(4)
    rank = context.option("rank")
    filters = dim(features, 0)
    if rank == 0:
        # C's num_filters % 0 divides by zero: the host's wheel dies with SIGFPE.
        return [*found, base.Refusal(f"{_SVDF_FILE}: rank 0: integer division by zero (crash)")]
    if rank < 0 or filters % rank:
        return [*found, not_equal(_SVDF_FILE, "num_filters % rank", "0", filters % rank, 0)]
    units = filters // rank
    batch = dim(source, 0)
    kind = context.input_type(0)
    if kind not in ("FLOAT32", "INT8"):
        return [
            *found,
            not_true(_SVDF_FILE, "input->type == kTfLiteFloat32 || input->type == kTfLiteInt8"),
        ]
    if len(source.shape if source is not None else ()) != 2:
        rank = 0 if source is None else len(source.shape)
        return [*found, not_equal(_SVDF_FILE, "NumDimensions(input)", "2", rank, 2)]
    found += base.temps(context, ("out", 0))
    refused = _svdf_shapes(context, batch, units, filters)
    if refused:
        return found + refused
    if state is not None and not state.is_variable:
        return [
            *found,
            not_equal(_SVDF_FILE, "activation_state->is_variable", "true", "false", "true"),
        ]
    if len(context.operator.inputs) != 5:
        count = len(context.operator.inputs)
        return [*found, not_equal(_SVDF_FILE, "node->inputs->size", "5", count, 5)]
    if context.input(3) is None:
        # int8 reads bias->params.scale, and both types release the null bias temp.
        return [*found, crash("SVDF without a bias (input 3 omitted) dereferences a null tensor")]
    refused = _svdf_types(context, kind)
    if refused:
        return found + refused
    found.append(base.Scratch(batch * filters * 4, "svdf scratch"))
    if kind == "INT8":
        found.append(base.Scratch(batch * units * 4, "svdf output scratch"))
        found += svdf_state_mismatch(context)
    return found


def svdf_state_mismatch(context: base.KernelContext) -> list[base.Event]:
    """svdf.cc Eval (and CMSIS-NN's) picks the int8 or int16 path by weights_time's type and
    reads the activation state as that type: Prepare takes either type for each, but a state of
    the other type is misread at Invoke (out of bounds when it is the narrower one)."""
    time, state = context.input_type(2), context.input_type(4)
    if time == state:
        return []
    return [
        unsupported_at_invoke(
            f"SVDF reads its activation state as its time weights' type ({time}), but the state "
            f"is {state}: Invoke misreads it"
        )
    ]


def _svdf_shapes(
    context: base.KernelContext, batch: int, units: int, filters: int
) -> list[base.Event]:
    """PrepareSvdf's shape checks: output [batch, units], weights_feature [filters, input size],
    weights_time [filters, memory], bias [units], state [batch, memory x filters]."""
    source, features, time = context.input(0), context.input(1), context.input(2)
    bias, state, output = context.input(3), context.input(4), context.output(0)
    memory = dim(time, 1)
    expected = [
        ("output", output, (batch, units)),
        ("weights_feature", features, (filters, dim(source, 1))),
        ("weights_time", time, (filters, memory)),
        ("activation_state", state, (batch, memory * filters)),
    ]
    for name, tensor, shape in expected:
        found = () if tensor is None else tensor.shape
        if len(found) != 2:
            return [not_equal(_SVDF_FILE, f"NumDimensions({name})", "2", len(found), 2)]
        if found != shape:
            return [not_equal(_SVDF_FILE, f"{name}->dims", "expected dims", found, shape)]
    if bias is not None and dim(bias, 0) != units:
        return [not_equal(_SVDF_FILE, "bias->dims->data[0]", "num_units", dim(bias, 0), units)]
    return []


def _svdf_types(context: base.KernelContext, kind: str) -> list[base.Event]:
    weights, time, bias = context.input_type(1), context.input_type(2), context.input_type(3)
    state, out = context.input_type(4), context.output_type(0)
    if kind == "INT8":
        if weights != "INT8":
            return [not_equal(_SVDF_FILE, "weights_feature->type", "kTfLiteInt8", weights, "INT8")]
        if time not in ("INT16", "INT8"):
            return [not_true(_SVDF_FILE, "(weights_time->type == kTfLiteInt16) || ...")]
        if state not in ("INT16", "INT8"):
            return [not_true(_SVDF_FILE, "(activation_state->type == kTfLiteInt16) || ...")]
        if bias != "INT32":
            return [not_equal(_SVDF_FILE, "bias->type", "kTfLiteInt32", bias, "INT32")]
        if out != "INT8":
            return [not_equal(_SVDF_FILE, "output->type", "kTfLiteInt8", out, "INT8")]
        return []
    for name, found in (
        ("weights_feature", weights),
        ("weights_time", time),
        ("activation_state", state),
        ("bias", bias),
        ("output", out),
    ):
        if found != "FLOAT32":
            return [not_equal(_SVDF_FILE, f"{name}->type", "kTfLiteFloat32", found, "FLOAT32")]
    return []


def _lstm(context: base.KernelContext) -> base.Events:
    # UnidirectionalSequenceLstmPrepare: 1 output, 24 inputs; LstmTensors fetches every present
    # input in index order, then the output, all live until Prepare returns.
    if len(context.operator.outputs) != 1:
        count = len(context.operator.outputs)
        return [not_equal("unidirectional_sequence_lstm.cc", "node->outputs->size", "1", count, 1)]
    if len(context.operator.inputs) != 24:
        count = len(context.operator.inputs)
        return [not_equal("unidirectional_sequence_lstm.cc", "node->inputs->size", "24", count, 24)]
    found: list[base.Event] = base.temps(context, *(("in", i) for i in range(24)), ("out", 0))
    refused = _lstm_status(context)
    if refused:
        return found + refused
    source = context.input(0)
    time_major = bool(context.option("time_major"))
    batch = dim(source, 1) if time_major else dim(source, 0)
    state_dimension = dim(context.input(_OUTPUT_STATE), 1)
    cell = context.input_type(_CELL_STATE)
    if cell == "INT16":
        arrays = _gate_arrays(context)
        if isinstance(arrays, base.Refusal):
            return [*found, arrays]
        found += arrays
    elif cell != "FLOAT32":
        return [
            *found,
            base.Refusal(
                f"Cell state type {numbered(cell)} not supported. The quantized Unidirectional "
                "Sequence LSTM Op only support int16 cell state"
            ),
        ]
    size = batch * state_dimension * context.input_element_bytes(_CELL_STATE, 2)
    found += [base.Scratch(size, f"lstm buffer {i}") for i in range(4)]
    found += _lstm_invoke_refusals(context)
    return found


def _lstm_status(context: base.KernelContext) -> list[base.Event]:
    """LstmTensors::ValidateTensorStatus: the states must be variables of the input's type, the
    gate weights and biases present and of one type each, no peephole, projection or layer
    normalisation."""

    def present(position: int) -> bool:
        return context.input(position) is not None

    kind = context.input_type(0)
    state = context.input(_OUTPUT_STATE)
    checks = [
        (present(0), "internal_tensors_[kLstmInputTensor] != nullptr"),
        (state is not None, "internal_tensors_[kLstmOutputStateTensor] != nullptr"),
        (state is not None and state.is_variable, "internal_tensors_[kLstmOutputStateTensor]"
         "->is_variable"),
    ]  # fmt: skip
    for ok, condition in checks:
        if not ok:
            return [not_true(_LSTM_FILE, condition)]
    if context.input_type(_OUTPUT_STATE) != kind:
        return [
            not_equal(
                _LSTM_FILE,
                "internal_tensors_[kLstmOutputStateTensor]->type",
                "internal_tensors_[kLstmInputTensor]->type",
                TFLITE_TYPES.get(context.input_type(_OUTPUT_STATE), 0),
                TFLITE_TYPES.get(kind, 0),
            )
        ]
    cell = context.input(_CELL_STATE)
    if cell is None or not cell.is_variable:
        return [not_true(_LSTM_FILE, "internal_tensors_[kLstmCellStateTensor]->is_variable")]
    if context.output_type(0) != kind:
        return [not_true(_LSTM_FILE, "output_tensor_->type == input type")]
    weight_type = context.input_type(2)
    for position in range(1, 9):
        if not present(position) or context.input_type(position) != weight_type:
            return [not_true(_LSTM_FILE, "internal_tensors_[i] != nullptr (gate weights)")]
    bias_type = context.input_type(12)
    for position in range(12, 16):
        if not present(position) or context.input_type(position) != bias_type:
            return [not_true(_LSTM_FILE, "internal_tensors_[i] != nullptr (gate biases)")]
    for position in _MUST_BE_OMITTED:
        if present(position):
            return [not_true(_LSTM_FILE, "internal_tensors_[i] == nullptr")]
    return []


def _gate_arrays(context: base.KernelContext) -> list[base.Event] | base.Refusal:
    """PrepareGateParametersInteger: for each gate, CalculateOpDataFullyConnected on the input
    weight, then on the recurrent one; per-channel weights get two int32 arrays each (C
    entries), written over the live temps; afterwards Prepare keeps reading the activations'
    and the remaining weights' quantization (`TempField`s by fetch position). Each call ends
    in `TFLITE_DCHECK(filter->params.zero_point == 0)`: asymmetric gate weights abort builds
    with DCHECKs."""
    positions = [i for i in range(24) if context.input(i) is not None]
    role = {position: number for number, position in enumerate(positions)}
    keep = [
        base.TempField("params", role[0]),
        base.TempField("type", role[0]),
        base.TempField("params", role[_OUTPUT_STATE]),
        base.TempField("type", role[_OUTPUT_STATE]),
        base.TempField("params", role[_CELL_STATE]),
    ]
    for weight in range(1, 9):
        keep += [
            base.TempField(name, role[weight])
            for name in ("params", "type", "dims", "affine.scale", "affine.quantized_dimension")
        ]
    over = base.OverTemps(keep=tuple(keep))
    kind = context.input_type(0)
    found: list[base.Event] = []
    for pair in _GATE_WEIGHTS:
        for weight, source in zip(pair, (0, _OUTPUT_STATE), strict=True):
            tensor = context.input(weight)
            quantization = None if tensor is None else tensor.quantization
            count = 0 if quantization is None else quantization.channel_count
            if kind == "FLOAT32":
                continue
            if count > 1:
                if kind not in ("INT8", "INT16") or context.input_type(weight) == "INT4":
                    return not_true(
                        "fully_connected_common.cc", "(input->type == kTfLiteInt8 && ..."
                    )
                if kind == "INT16" and not context.build.has(FULLY_CONNECTED_INT16_PER_CHANNEL):
                    return not_true(
                        "fully_connected_common.cc", "input->type == kTfLiteInt8 && ..."
                    )
                found += per_channel_arrays(count, written=over)
            else:
                # GetQuantizedConvolutionMultipler without a bias (the gates pass none).
                refused = input_product_scale(context.build, context.input(source), tensor)
                if refused:
                    return refused
            # Then its DCHECK on the weights' zero point; the activation is kTfLiteActNone on
            # an int16 gate output, whose range always fits.
            refused = symmetric_weights("fully_connected_common.cc", tensor, context.build)
            if refused:
                return refused
    return found


def _lstm_invoke_refusals(context: base.KernelContext) -> list[base.Event]:
    """UnidirectionalSequenceLstmEval: float activations (any weights), int8 or int16 with int8
    weights (the type of input-to-input weights #1)."""
    kind, weights = context.input_type(0), context.input_type(1)
    if kind == "FLOAT32":
        return []
    if kind in ("INT8", "INT16"):
        if weights == "INT8":
            return []
        # The int8 branch prints the activation type's number after the weights' name.
        number = TFLITE_TYPES.get(kind if kind == "INT8" else weights, 0)
        return [unsupported_at_invoke(f"Filter type {weights} ({number}) not supported.")]
    return [unsupported_at_invoke(f"Input type {numbered(kind)} not supported.")]


RULES = (
    base.KernelRule(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "unidirectional_sequence_lstm.cc, lstm_eval.cc, lstm_eval_common.cc",
        LSTM_PARAMS,
        op_data(OP_DATA_LSTM),
        _lstm,
        access=base.NoOverlap("re-reads inputs every time step (lstm_eval.cc)"),
        operands=LSTM_OPERANDS,
        resolver="AddUnidirectionalSequenceLSTM",
    ),
    base.KernelRule(
        "SVDF",
        "svdf.cc, svdf_common.cc",
        SVDF_PARAMS,
        op_data(OP_DATA_SVDF),
        _svdf,
        access=base.NoOverlap("keeps state and re-reads its input (svdf.cc)"),
        operands=base.operands(
            "input", "weights_feature", "weights_time", "bias?", "activation_state"
        ),
        resolver="AddSvdf",
    ),
)
