"""LiteRT's builtin kernels' refusals a model alone fails, whatever its input size: model →
`Obstacle`s in model order, each naming the kernel's check (the budget's `obstacles`; `check
--input-shape` propagates shapes with these kernels, so a model they refuse at setup is refused
at every size, `setup_refusals`).
"""

from __future__ import annotations

from arenalens.ir import Model
from arenalens.runtimes import Obstacle
from arenalens.runtimes.litert.loader import quantization_refusals, size_refusals
from arenalens.runtimes.litert.prepare_refusals import prepare_refusals


def builtin_refusals(model: Model) -> tuple[Obstacle, ...]:
    """Every refusal of LiteRT's builtin kernels (no delegate), at setup or at Invoke."""
    return (
        *quantization_refusals(model),
        *size_refusals(model),
        *unresolved_custom_operators(model),
        *integer_svdf_refusals(model),
        *activation_range_refusals(model),
        *grouped_hybrid_convolution_refusals(model),
        *composite_option_refusals(model),
        *unwritten_variable_reads(model),
        *prepare_refusals(model),
        *dense_activation_refusals(model),
        *packed_zero_point_refusals(model),
        *blockwise_integer_refusals(model),
    )


def setup_refusals(model: Model) -> tuple[Obstacle, ...]:
    """The refusals that stop allocate_tensors() (or building the interpreter), which shape
    propagation runs: an Invoke-phase one lets it size the model."""
    found = (
        *quantization_refusals(model),
        *size_refusals(model),
        *unresolved_custom_operators(model),
        *activation_range_refusals(model),
        *grouped_hybrid_convolution_refusals(model),
        *composite_option_refusals(model),
        *prepare_refusals(model),
        *dense_activation_refusals(model),
        *packed_zero_point_refusals(model),
        *blockwise_integer_refusals(model),
    )  # not integer_svdf_refusals or unwritten_variable_reads: those fail at Invoke only
    return tuple(obstacle for obstacle in found if obstacle.phase != "invoke")


# Custom operators LiteRT's builtin op resolver registers (tflite/kernels/register.cc:
# AddCustom); any other custom operator fails allocate_tensors with "Encountered unresolved
# custom op".
LITERT_CUSTOM_OPERATORS = frozenset(
    {
        "Mfcc",
        "AudioSpectrogram",
        "TFLite_Detection_PostProcess",
        "NumericVerify",
        "aeq.hadamard_rotation",
    }
)


def unresolved_custom_operators(model: Model) -> tuple[Obstacle, ...]:
    """Custom operators the LiteRT builtin resolver has no kernel for, in model order. The
    placeholder's Prepare is what fails: one the XNNPACK delegate takes (xnnpack_custom)
    never runs it, so under XNNPACK it stops nothing (builtin_prepare)."""
    if not any(
        operator.is_custom for subgraph in model.subgraphs for operator in subgraph.operators
    ):
        return ()
    from arenalens.runtimes.litert import xnnpack_custom  # noqa: PLC0415 - custom operators only

    taken = xnnpack_custom.XNNPACK_CUSTOM_OPERATORS
    return tuple(
        Obstacle(
            f"LiteRT has no kernel for custom operator '{name}' ('Encountered unresolved custom "
            f"op: {name}.'): the application must register one"
            + (" (the XNNPACK delegate runs it when it takes it)" if name in taken else ""),
            subgraph=subgraph.index,
            operator=operator.index,
            opcode=operator.opcode,
            no_kernel=True,
            builtin_prepare=name in taken,
        )
        for subgraph in model.subgraphs
        for operator in subgraph.operators
        if operator.is_custom
        and (name := operator.opcode.removeprefix("CUSTOM:")) not in LITERT_CUSTOM_OPERATORS
    )


_FUSED_RELU = 1  # ActivationFunctionType.RELU


def integer_svdf_refusals(model: Model) -> tuple[Obstacle, ...]:
    """SVDF's integer kernel (int8 input) refuses at Eval any fused activation but RELU
    (svdf.cc: TF_LITE_ENSURE_EQ(params->activation, kTfLiteActRelu)): allocate_tensors()
    succeeds, every invoke() fails."""
    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "SVDF" or not operator.inputs or operator.inputs[0] < 0:
                continue
            if subgraph.tensors[operator.inputs[0]].dtype.name != "INT8":
                continue
            activation = int(operator.options.get("fused_activation_function", 0) or 0)
            if activation == _FUSED_RELU:
                continue
            found.append(
                Obstacle(
                    "the integer SVDF kernel runs only with a fused RELU "
                    "('params->activation != kTfLiteActRelu' at Invoke)",
                    phase="invoke",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix="convert the layer with a RELU activation, or keep it in float",
                )
            )
    return tuple(found)


# The builtin kernels whose Prepare quantizes their fused activation's bounds with the output's
# scale for 8- and 16-bit outputs (kernel_util.cc CalculateActivationRangeQuantized, through
# PopulateConvolutionQuantizationParams for the convolutions): conv.cc, depthwise_conv.cc,
# fully_connected.cc, add.cc, sub.cc, mul.cc.
_ACTIVATION_RANGE_KERNELS = frozenset(
    {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL"}
)
_QUANTIZED_OUTPUTS = frozenset({"UINT8", "INT8", "INT16"})


def activation_range_refusals(model: Model) -> tuple[Obstacle, ...]:
    """A fused activation whose bound / output scale overflows int32 fails Prepare
    (`no_integer_overflow_from_quantization`), as on TFLM: the same kernel_util.cc check."""
    from arenalens.runtimes.tflm.kernels.quantization import (  # noqa: PLC0415 - a rare check
        CALIBRATE,
        overflowing_activation_bound,
    )

    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode not in _ACTIVATION_RANGE_KERNELS or not operator.outputs:
                continue
            if operator.outputs[0] < 0:
                continue
            output = subgraph.tensors[operator.outputs[0]]
            if output.dtype.name not in _QUANTIZED_OUTPUTS or output.quantization is None:
                continue
            scale = output.quantization.scale
            activation = int(operator.options.get("fused_activation_function", 0) or 0)
            if not scale or overflowing_activation_bound(activation, scale) is None:
                continue
            found.append(
                Obstacle(
                    f"its output scale {scale:g} is too small for its fused activation: "
                    "the activation's bound / scale overflows int32 "
                    "('no_integer_overflow_from_quantization' in Prepare)",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix=CALIBRATE,
                    builtin_prepare=True,
                )
            )
    return tuple(found)


def grouped_hybrid_convolution_refusals(model: Model) -> tuple[Obstacle, ...]:
    """A grouped hybrid CONV_2D (float input, 8-bit filter, input channels a multiple of the
    filter's depth) runs conv.cc's per-channel hybrid path, whose Prepare requires one filter
    scale per output channel: with any other count allocate_tensors() fails (measured on the
    2.3.0 wheel: 'affine_quantization->scale->size != filter->dims->data[0]'). XNNPACK takes
    the operator and never runs that Prepare."""
    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "CONV_2D" or len(operator.inputs) < 2:
                continue
            if min(operator.inputs[0], operator.inputs[1]) < 0:
                continue
            data, weights = (subgraph.tensors[i] for i in operator.inputs[:2])
            if data.dtype.name != "FLOAT32" or weights.dtype.name not in ("INT8", "UINT8"):
                continue
            if len(weights.shape) != 4 or not data.shape or data.shape[-1] == weights.shape[3]:
                continue
            scales = weights.quantization.channel_count if weights.quantization else 0
            if scales == weights.shape[0]:
                continue
            found.append(
                Obstacle(
                    f"a grouped hybrid convolution needs one filter scale per output channel "
                    f"({weights.shape[0]}), it has {scales} ('affine_quantization->scale->size "
                    "!= filter->dims->data[0]' in Prepare)",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix="quantize the filter per output channel",
                    builtin_prepare=True,
                )
            )
    return tuple(found)


def composite_option_refusals(model: Model) -> tuple[Obstacle, ...]:
    """A STABLEHLO_COMPOSITE whose options table, `name` or `composite_attributes` is absent:
    LiteRT's parser (flatbuffer_conversions.cc ParseStablehloComposite) fails, so building the
    interpreter fails (`Interpreter(...)` raises; measured on the 2.3.0 wheel), with or without
    a delegate. An empty name or an empty attribute vector is accepted."""
    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "STABLEHLO_COMPOSITE":
                continue
            options = operator.options
            if "name" not in options:  # not a StableHLOCompositeOptions table
                reason = "Could not get 'stablehlo.composite' operation parameters."
            elif options["name"] is None:
                reason = "'stablehlo.composite' missing required option 'name'."
            elif options.get("composite_attributes") is None:
                reason = "'stablehlo.composite' missing required option 'composite_attributes'."
            else:
                continue
            found.append(
                Obstacle(
                    "its options are refused when the interpreter is built "
                    f'(Interpreter(...) raises "{reason}")',
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix="convert the model again: the converter writes the composite's name and "
                    "attributes (an empty attribute map will do)",
                )
            )
    return tuple(found)


def unwritten_variable_reads(model: Model) -> tuple[Obstacle, ...]:
    """A READ_VARIABLE the builtin kernel runs before any ASSIGN_VARIABLE made its variable
    (variable_order.unwritten_reads): allocate_tensors() succeeds, the first invoke() fails
    ('variable != nullptr', read_variable.cc; measured on the 2.3.0 wheel). A read the XNNPACK
    delegate takes reads its proxy instead (builtin_prepare: moot under it)."""
    from arenalens.runtimes.litert.variable_order import unwritten_reads  # noqa: PLC0415

    found = []
    for read in unwritten_reads(model):
        container, name = read.key
        resource = f"'{container}/{name}'" if container else f"'{name}'"
        # A read on a path some inputs take (an IF branch, a WHILE body) fails on those.
        when = f", on the inputs for which {' and '.join(read.when)}" if read.when else ""
        unless = (
            ", unless an IF branch or WHILE body that assigns it ran before"
            if read.maybe_made
            else ""
        )
        found.append(
            Obstacle(
                f"it reads resource variable {resource} (tensor {read.resource}) before any "
                f"ASSIGN_VARIABLE has made it ('variable != nullptr' at Invoke{when}{unless})",
                phase="invoke",
                subgraph=read.subgraph,
                operator=read.operator,
                opcode="READ_VARIABLE",
                fix="assign the variable first (an ASSIGN_VARIABLE earlier in the main "
                "subgraph, or in a CALL_ONCE initialization subgraph before the read)",
                builtin_prepare=True,
            )
        )
    return tuple(found)


# XNNPACK's GetXNNPackDatatype: an int4 filter's per-channel zero points may be 0 or 8.
_XNNPACK_INT4_ZERO_POINTS = frozenset({0, 8})


def packed_zero_point_refusals(model: Model) -> tuple[Obstacle, ...]:
    """An int4 or int2 FULLY_CONNECTED filter with a zero point other than 0 fails
    fully_connected.cc's Prepare ('Unsupported filter quantization zero-point value.':
    VerifyQuantizationZeroPoint, whatever the input's type), per tensor or in any channel.
    XNNPACK takes a float-input one of even depth (xnnpack_qc4w) and runs it when every
    channel's zero point is 0 or 8 (one scale per channel: qcint4 with the first zero point);
    with others it fails to prepare (GetXNNPackDatatype: 'unsupported zero-point value (Z) in
    channel C of INT4 tensor T' or '(Z) for INT4 tensor T'; one zero point in [-8, -1] fails
    XNNPACK's tensor check, 'failed to update filter tensor', one in [1, 7] its kernel zero
    point check, 'failed to delegate FULLY_CONNECTED node'). Measured on the 2.3.0 wheel
    (int4zp17_*: every one refused by the builtin kernel, XNNPACK running those whose
    channels' zero points are all 8 or 0 and 8)."""
    from arenalens.runtimes.litert import xnnpack_qc4w  # noqa: PLC0415 - a rare check
    from arenalens.tflite.reader import read_quantization_zero_points  # noqa: PLC0415

    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
                continue
            if min(operator.inputs[:2]) < 0:
                continue
            data, weights = (subgraph.tensors[i] for i in operator.inputs[:2])
            if weights.dtype.name not in ("INT4", "INT2") or weights.quantization is None:
                continue
            points = read_quantization_zero_points(model, subgraph.index, weights.index)
            if not any(points):
                continue
            per_channel = weights.quantization.channel_count > 1
            runs = (
                weights.dtype.name == "INT4"
                and per_channel
                and set(points) <= _XNNPACK_INT4_ZERO_POINTS
            )
            taken = data.dtype.name == "FLOAT32" and xnnpack_qc4w.takes(weights) is True
            delegate = ""
            if taken and not runs:
                delegate = (
                    "; the XNNPACK delegate takes it and fails to prepare "
                    f"({_xnnpack_words(points, per_channel=per_channel, tensor=weights.index)})"
                )
            found.append(
                Obstacle(
                    f"its {weights.dtype.name.lower()} filter's "
                    + (
                        f"zero points are not all 0 ({_points(points)})"
                        if per_channel
                        else f"zero point is {points[0]}, not 0"
                    )
                    + ": Prepare refuses it ('Unsupported filter quantization zero-point "
                    f"value.'){delegate}",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix="quantize the filter symmetrically (zero points 0)"
                    + (", or run it with XNNPACK, which takes it" if runs else ""),
                    builtin_prepare=runs,
                )
            )
    return tuple(found)


# fully_connected.cc Prepare: outside the hybrid path, the clipping activations only.
_DENSE_ACTIVATIONS = frozenset({0, 1, 2, 3})  # NONE, RELU, RELU_N1_TO_1, RELU6
_DENSE_ACTIVATION_NAMES = {4: "TANH", 5: "SIGN_BIT"}
_QUANTIZED_FILTERS = frozenset({"UINT8", "INT8", "INT4", "INT2"})


def dense_activation_refusals(model: Model) -> tuple[Obstacle, ...]:
    """A FULLY_CONNECTED with a fused activation other than NONE, RELU, RELU_N1_TO_1 or RELU6
    fails fully_connected.cc's Prepare unless it is hybrid (a float input, an 8-, 4- or 2-bit
    filter): 'params->activation == kTfLiteActNone || ... kTfLiteActRelu6' (float and
    quantized alike). XNNPACK leaves such an operator to that kernel
    (ConvertActivationToOutputRange). Measured on the 2.3.0 wheel: float and int8 TANH and
    SIGN_BIT fail allocate_tensors() under both delegates, hybrid ones run."""
    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
                continue
            activation = int(operator.options.get("fused_activation_function", 0) or 0)
            if activation in _DENSE_ACTIVATIONS or min(operator.inputs[:2]) < 0:
                continue
            data, weights = (subgraph.tensors[i] for i in operator.inputs[:2])
            if data.dtype.name == "FLOAT32" and weights.dtype.name in _QUANTIZED_FILTERS:
                continue  # hybrid: any fused activation
            name = _DENSE_ACTIVATION_NAMES.get(activation, str(activation))
            found.append(
                Obstacle(
                    f"its fused activation {name} is not one Prepare takes for its "
                    f"{data.dtype.name.lower()} input and {weights.dtype.name.lower()} filter "
                    "('params->activation == kTfLiteActNone || params->activation == "
                    "kTfLiteActRelu || params->activation == kTfLiteActReluN1To1 || ...'): only "
                    "NONE, RELU, RELU_N1_TO_1 and RELU6 (the XNNPACK delegate leaves it to this "
                    "kernel)",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix=f"run the {name} as its own operator after the FULLY_CONNECTED",
                    builtin_prepare=True,
                )
            )
    return tuple(found)


def blockwise_integer_refusals(model: Model) -> tuple[Obstacle, ...]:
    """A FULLY_CONNECTED whose filter is blockwise-quantized under a quantized input (uint8,
    int8, int16): fully_connected.cc's Prepare wants an affine filter there
    ('filter->quantization.type != kTfLiteAffineQuantization'); the builtin kernels run
    blockwise int4 only under a float input (EvalBlockwise4Bit). Under XNNPACK it fails too
    (xnnpack_blockwise.takes_integer): the partition takes an int8 one of even depth and a block
    a multiple of 32, whose define then fails ('failed to delegate FULLY_CONNECTED node #N':
    no int8-input kind for blockwise weights), and leaves the others to that Prepare. Measured
    on the 2.3.0 wheel (tests/litert_int4_18_cases.py `bwq18_*`: setup fails, both ways)."""
    from arenalens.runtimes.litert import xnnpack_blockwise  # noqa: PLC0415 - a rare check

    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if xnnpack_blockwise.integer_blockwise(model, subgraph, operator) is None:
                continue
            data, weights = (subgraph.tensors[i] for i in operator.inputs[:2])
            # The partition (heap_xnnpack._takes): a clipping activation, then the filter.
            activation = int(operator.options.get("fused_activation_function", 0) or 0)
            taken = activation in _DENSE_ACTIVATIONS and xnnpack_blockwise.takes_integer(
                model, subgraph, operator
            )
            delegate = (
                "; the XNNPACK delegate takes it and fails to prepare ("
                + xnnpack_blockwise.integer_words(model, subgraph, operator)
                + ")"
                if taken
                else "; the XNNPACK delegate leaves it to this kernel"
            )
            found.append(
                Obstacle(
                    f"its {weights.dtype.name.lower()} filter is blockwise-quantized under its "
                    f"{data.dtype.name.lower()} input: Prepare takes only affine filter "
                    "quantization there ('filter->quantization.type != "
                    f"kTfLiteAffineQuantization'){delegate}",
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix="quantize the filter per channel (one scale per output channel), or "
                    "keep the FULLY_CONNECTED's input float (blockwise int4 runs under a float "
                    "input, dynamically quantized)",
                )
            )
    return tuple(found)


def _points(points: tuple[int, ...]) -> str:
    shown = ", ".join(str(point) for point in points[:4])
    return shown + (f", ... ({len(points)} channels)" if len(points) > 4 else "")


def _xnnpack_words(points: tuple[int, ...], *, per_channel: bool, tensor: int) -> str:
    """The delegate's log line for the first zero point it refuses."""
    if per_channel:
        channel, point = next(
            (c, p) for c, p in enumerate(points) if p not in _XNNPACK_INT4_ZERO_POINTS
        )
        return (
            f"'unsupported zero-point value ({point}) in channel {channel} of INT4 tensor {tensor}'"
        )
    point = points[0]
    if not -8 <= point <= 7:
        return f"'unsupported zero-point value ({point}) for INT4 tensor {tensor}'"
    if point < 0:
        return "'failed to update filter tensor FULLY_CONNECTED node'"
    return "'failed to delegate FULLY_CONNECTED node': a kernel zero point must be 0 or 8"
