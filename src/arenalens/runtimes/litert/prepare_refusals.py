"""LiteRT builtin kernels' own checks that a model alone fails, found on the upstream
repositories' test models (litert/test/testdata) and derived from the kernels' sources:

- SQUEEZE (squeeze.cc Prepare): every `squeeze_dims` entry names a dimension of size 1, of an
  input of rank 8 or less.
- RESHAPE (reshape.cc Prepare, reshape_utils.h ResolveOutputShape) when its new shape is known
  at Prepare (no shape input, or a constant int32 vector): at most one -1, no other negative
  dimension, as many elements as the input.
- EXPAND_DIMS (expand_dims.cc Prepare): the output's scale and zero point are the input's, and
  a constant axis is one int32 / int64 value in [-(rank + 1), rank].
- GATHER (gather.cc): Prepare's positions type, axis and batch_dims checks; constant positions
  outside [0, the gathered dimension) fail the kernel's Eval ("gather index out of bounds"): at
  the first invoke, or at allocate_tensors() when the input is constant too (Prepare evaluates
  the node then).
- SVDF with an int8 input (svdf.cc EvalIntegerSVDF): the state is read and written as int16
  whatever its type; an int8 state (TFLM's int8-state SVDF; the upstream
  tflite-micro models/keyword_scrambled_8bit.tflite) is overrun and the first invoke() crashes
  the process (measured on the 2.3.0 wheel; int8 time weights are read past too, but ran).
- ADD and SUB with 8-bit outputs (add.cc / sub.cc Prepare): the input multipliers
  s_i / (2 max(s1, s2)) must lie in (0, 1), and ADD's output multiplier 2 max(s1, s2) /
  (2^20 s_out) too (SUB's may exceed 1); s is a tensor's per-tensor scale (0 without one, as
  GetLegacyQuantization gives for per-channel or blockwise quantization). These are TFLITE_CHECKs
  in QuantizeMultiplierSmallerThanOneExp: the process aborts (SIGABRT) in allocate_tensors().

- FULLY_CONNECTED with int16 input and output (fully_connected.cc Prepare, 16x8): both zero
  points 0 (held17c_16x8_2, _3 and _10: an output zero point of 3, refused by the wheel).

- CONV_2D with an int8 or int16 input (conv.cc Prepare): every filter zero point 0, per
  tensor or in any channel, whatever the filter's type (int8, int4). DEPTHWISE_CONV_2D,
  TRANSPOSE_CONV and an int8 FULLY_CONNECTED have no such check (an int4 or int2
  FULLY_CONNECTED's is refusals.packed_zero_point_refusals'). Under XNNPACK it fails too: the
  delegate leaves int16 and int4-filter ones to the builtin kernel and refuses the int8 ones it
  takes ('failed to delegate CONV_2D node', or 'unsupported zero-point value (Z) in channel C
  of INT8 tensor T'); measured on the 2.3.0 wheel (tests/litert_refusal_cases zp_*).

- CONV_2D (conv.cc Prepare): a bias tensor, always ('TF_LITE_ENSURE(context, has_bias)'; an
  omitted optional bias, -1, fails GetInputSafe: 'Tensor at index 2 was optional but was
  expected'). DEPTHWISE_CONV_2D (depthwise_conv.cc): an omitted bias of three inputs fails
  Prepare the same way; with two inputs Prepare passes and the first invoke() crashes the process
  (measured on the 2.3.0 wheel, float and int8). XNNPACK's VisitConv2DNode and
  VisitDepthwiseConv2DNode take neither ('unsupported ... node without bias'; three inputs), so
  the builtin kernel fails them under the delegate too.

- FULLY_CONNECTED with a uint8, int8 or int16 input and one filter scale, CONV_2D,
  DEPTHWISE_CONV_2D and TRANSPOSE_CONV with a uint8 input (kernel_util.cc
  GetQuantizedConvolutionMultipler, from fully_connected.cc's per-tensor path and
  PopulateConvolutionQuantizationParams): with a bias, |input scale x filter scale - bias
  scale| / output scale <= 0.02 ('scale_diff / output_scale <= 0.02'). A per-channel filter, or
  an int8 or int16 convolution, is not checked. The XNNPACK delegate takes the uint8 and int8
  ones and runs them (no such check); an int16 FULLY_CONNECTED stays builtin and fails
  (tests/litert_refusal_cases bias_*, the 2.3.0 wheel).

The others are builtin kernels' own checks (`builtin_prepare`): under XNNPACK they stop nothing
when the delegate takes the operator (litert_memory.builtin_only_obstacles; it takes none of
these: SQUEEZE and GATHER have no Visit*Node, xnnpack_binary leaves such an ADD or SUB). A
RESHAPE or EXPAND_DIMS refused here fails under XNNPACK too (`_FAILS_UNDER_XNNPACK`)."""

from __future__ import annotations

from collections.abc import Mapping

from arenalens.ir import Model, Subgraph, Tensor
from arenalens.runtimes import Obstacle

_CHECKED = frozenset({"SQUEEZE", "RESHAPE", "EXPAND_DIMS", "GATHER", "ADD", "SUB", "SVDF",
                      "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
                      "TRANSPOSE_CONV"})  # fmt: skip
_SQUEEZE_MAX_RANK = 8
_EIGHT_BIT = frozenset({"INT8", "UINT8"})
_CONV_ZERO = frozenset({"INT8", "INT16"})  # conv.cc: inputs whose filters' zero points are 0
_DENSE_INTEGER = frozenset({"UINT8", "INT8", "INT16"})  # fully_connected.cc's quantized path
_BIAS_SCALE_DIFF = 0.02  # kernel_util.cc GetQuantizedConvolutionMultipler
_BIAS_SCALE = "scale_diff / output_scale <= 0.02"
_ADD_LEFT_SHIFT = 20  # add.cc / sub.cc: 8-bit inputs are shifted left by 20 bits
_POSITION_WIDTHS = {"INT16": 2, "INT32": 4, "INT64": 8}
_ABORTS = "the process aborts (SIGABRT) in allocate_tensors()"
# Refused under XNNPACK too, whether or not the partition says the delegate takes them (the
# 2.3.0 wheel, tests/litert_refusal_cases.py): the delegate leaves such an EXPAND_DIMS to the
# builtin kernel, and takes such a RESHAPE but then fails to reshape its runtime ("XNNPack
# delegate failed to reshape runtime" in its Prepare).
_FAILS_UNDER_XNNPACK = frozenset({"RESHAPE", "EXPAND_DIMS", "CONV_2D", "DEPTHWISE_CONV_2D"})


def prepare_refusals(model: Model) -> tuple[Obstacle, ...]:
    """Every operator of `model` one of these checks refuses, in model order."""
    found: list[Obstacle] = []
    for subgraph in model.subgraphs:
        filter_points = _conv_filter_zero_points(model, subgraph)
        for operator in subgraph.operators:
            if operator.opcode not in _CHECKED:
                continue
            refusal = _refusal(model, subgraph, operator.index, filter_points)
            if refusal is None:
                continue
            reason, phase, fix = refusal
            # A bias-scale refusal is the builtin kernel's alone (the delegate runs the
            # uint8 / int8 operators it takes; an int16 FULLY_CONNECTED stays builtin).
            taken_runs = _BIAS_SCALE in reason or operator.opcode not in _FAILS_UNDER_XNNPACK
            found.append(
                Obstacle(
                    reason,
                    phase=phase,
                    subgraph=subgraph.index,
                    operator=operator.index,
                    opcode=operator.opcode,
                    fix=fix,
                    builtin_prepare=taken_runs,
                )
            )
    return tuple(found)


def _refusal(
    model: Model, subgraph: Subgraph, index: int, filter_points: Mapping[int, tuple[int, ...]]
) -> tuple[str, str, str] | None:
    """(reason, phase, fix) when the operator's kernel refuses it, else None."""
    operator = subgraph.operators[index]
    tensors = [subgraph.tensors[i] if i >= 0 else None for i in operator.inputs]
    outputs = [subgraph.tensors[i] if i >= 0 else None for i in operator.outputs]
    if not tensors or tensors[0] is None or not outputs or outputs[0] is None:
        return None
    options = operator.options or {}
    opcode = operator.opcode
    if opcode == "CONV_2D" and index in filter_points:
        refusal = _missing_bias(opcode, operator.inputs)
        return refusal or _filter_zero_points(tensors[0], tensors[1], filter_points[index])
    if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        return _missing_bias(opcode, operator.inputs) or _bias_scale(opcode, tensors, outputs[0])
    if opcode == "TRANSPOSE_CONV":
        return _bias_scale(opcode, tensors, outputs[0])
    if opcode == "SQUEEZE":
        return _squeeze(tensors[0], options.get("squeeze_dims"))
    if opcode == "RESHAPE":
        return _reshape(model, tensors, outputs[0], options.get("new_shape"))
    if opcode == "EXPAND_DIMS":
        return _expand_dims(model, tensors, outputs[0])
    if opcode == "GATHER":
        return _gather(model, tensors, options)
    if opcode == "SVDF":
        return _integer_svdf_state(tensors)
    if opcode == "FULLY_CONNECTED":
        refusal = _bias_scale(opcode, tensors, outputs[0])
        return refusal or _sixteen_zero_points(tensors[0], outputs[0])
    return _add_or_sub(opcode, tensors, outputs[0])


def _missing_bias(opcode: str, inputs: tuple[int, ...]) -> tuple[str, str, str] | None:
    fix = "give the convolution a bias tensor (zeros do: the converter writes one)"
    if len(inputs) >= 3 and inputs[2] >= 0:
        return None
    if len(inputs) >= 3:
        return (
            "its bias is omitted (-1), which Prepare reads ('Tensor at index 2 was optional "
            "but was expected')",
            "setup",
            fix,
        )
    if opcode == "CONV_2D":
        return ("it has no bias input, which Prepare requires ('has_bias')", "setup", fix)
    return (
        "it has no bias input: Prepare accepts that, but Eval reads the bias and the first "
        "invoke() crashes the process",
        "invoke",
        fix,
    )


def _conv_filter_zero_points(model: Model, subgraph: Subgraph) -> dict[int, tuple[int, ...]]:
    """Operator index -> its filter's zero points, for each CONV_2D of an int8 or int16 input
    and a quantized filter (the per-channel ones read from the file in one pass)."""
    found: dict[int, tuple[int, ...]] = {}
    per_channel: list[tuple[int, int]] = []
    for operator in subgraph.operators:
        inputs = operator.inputs
        if operator.opcode != "CONV_2D" or len(inputs) < 2 or min(inputs[:2]) < 0:
            continue
        weights = subgraph.tensors[inputs[1]]
        quantization = weights.quantization
        if quantization is None or subgraph.tensors[inputs[0]].dtype.name not in _CONV_ZERO:
            continue
        if quantization.channel_count > 1:
            per_channel.append((operator.index, weights.index))
        else:
            found[operator.index] = (quantization.zero_point or 0,)
    if per_channel:
        from arenalens.tflite.reader import read_quantization_zero_points_of  # noqa: PLC0415

        tensors = [tensor for _, tensor in per_channel]
        points = read_quantization_zero_points_of(model, subgraph.index, tensors)
        found.update(zip((index for index, _ in per_channel), points, strict=True))
    return found


def _filter_zero_points(
    source: Tensor, weights: Tensor | None, points: tuple[int, ...]
) -> tuple[str, str, str] | None:
    """conv.cc Prepare: under an int8 or int16 input every filter zero point is 0 (per tensor
    or per channel, whatever the filter's type: int8, int4)."""
    channel, point = next(((c, p) for c, p in enumerate(points) if p), (0, 0))
    if not point or weights is None:
        return None
    if not point:
        return None
    where = f" in channel {channel}" if len(points) > 1 else ""
    return (
        f"its {weights.dtype.name.lower()} filter has zero point {point}{where}: under an "
        f"{source.dtype.name.lower()} input Prepare requires every filter zero point to be 0 "
        "('affine_quantization->zero_point->data[i] != 0')",
        "setup",
        "quantize the filter symmetrically (zero points 0), as the converter does",
    )


def _bias_scale(
    opcode: str, tensors: list[Tensor | None], output: Tensor
) -> tuple[str, str, str] | None:
    """kernel_util.cc GetQuantizedConvolutionMultipler with a bias, as fully_connected.cc's
    per-tensor path (uint8 / int8 / int16 input) and PopulateConvolutionQuantizationParams
    (uint8 input: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV) call it; scales are the tensors'
    per-tensor ones (GetLegacyQuantization: 0 without one), in doubles."""
    if opcode == "TRANSPOSE_CONV":
        chosen = [tensors[i] if len(tensors) > i else None for i in (2, 1, 3)]
    else:
        chosen = [tensors[i] if len(tensors) > i else None for i in (0, 1, 2)]
    source, weights, bias = chosen
    if source is None or weights is None or bias is None:
        return None
    quantization = weights.quantization
    if quantization is None or quantization.scale is None or quantization.channel_count != 1:
        return None  # refused otherwise first (no affine quantization) or per channel
    types = _DENSE_INTEGER if opcode == "FULLY_CONNECTED" else ("UINT8",)
    if source.dtype.name not in types:
        return None
    if opcode == "FULLY_CONNECTED" and len(weights.shape) > 1 and weights.shape[1] == 0:
        return None  # Prepare returns before its quantization for an empty filter depth
    product = _legacy(source)[0] * _legacy(weights)[0]
    bias_scale, output_scale = _legacy(bias)[0], _legacy(output)[0]
    if _ratio(abs(product - bias_scale), output_scale) <= _BIAS_SCALE_DIFF:
        return None
    return (
        f"its bias scale {bias_scale:g} is not its input scale x filter scale {product:g} "
        f"within 2% of its output scale {output_scale:g}: Prepare requires "
        f"'{_BIAS_SCALE}' (kernel_util.cc)",
        "setup",
        "give the bias the scale input scale x filter scale, as the converter does",
    )


def _sixteen_zero_points(source: Tensor, output: Tensor) -> tuple[str, str, str] | None:
    """fully_connected.cc Prepare: an int16 input and output each have zero point 0."""
    if source.dtype.name != "INT16" or output.dtype.name != "INT16":
        return None
    points = [
        (name, tensor.quantization.zero_point)
        for name, tensor in (("input", source), ("output", output))
        if tensor.quantization is not None and tensor.quantization.zero_point
    ]
    if not points:
        return None
    name, point = points[0]
    return (
        f"its int16 {name} has zero point {point}: Prepare requires 0 for 16x8 "
        f"('{name}->params.zero_point != 0')",
        "setup",
        "quantize int16 activations symmetrically (zero point 0), as the converter does",
    )


def _squeeze(source: Tensor, squeeze_dims: object) -> tuple[str, str, str] | None:
    rank = len(source.shape)
    if rank > _SQUEEZE_MAX_RANK:
        return (
            f"its input has rank {rank}, over 8 ('input_num_dims <= 8' in Prepare)",
            "setup",
            "",
        )
    for entry in _int_tuple(squeeze_dims):
        current = entry + rank if entry < 0 else entry
        if not 0 <= current < rank or source.shape[current] != 1:
            size = f"of size {source.shape[current]}" if 0 <= current < rank else "that is absent"
            return (
                f"squeeze_dims names dimension {entry} of its input {_shape(source)}, "
                f"{size} ('input_dims->data[current] == 1' in Prepare)",
                "setup",
                "squeeze only dimensions of size 1 (or convert with the input shape the "
                "model was traced with)",
            )
    return None


def _reshape(
    model: Model, tensors: list[Tensor | None], output: Tensor, new_shape: object
) -> tuple[str, str, str] | None:
    if output.dtype.name == "STRING":
        return None
    shape_tensor = tensors[1] if len(tensors) == 2 else None
    if len(tensors) == 2 and shape_tensor is not None:
        vector = len(shape_tensor.shape) == 1 and shape_tensor.dtype.name == "INT32"
    else:
        vector = False
    if vector and shape_tensor is not None:
        values = _ints(model, shape_tensor)
        if values is None:
            return None  # known only at Invoke (the chunk ends)
        requested = values
    else:
        requested = _int_tuple(new_shape)
        if requested == (0,):
            requested = ()  # legacy models write [0] for a scalar
    source = tensors[0]
    assert source is not None
    problem = _unresolvable(source.shape, requested)
    if problem is None:
        return None
    return (
        f"its new shape {list(requested)} {problem} for its input {_shape(source)} "
        "(ResolveOutputShape in Prepare)",
        "setup",
        "give a new shape with as many elements as the input (one -1 at most)",
    )


def _unresolvable(source: tuple[int, ...], requested: tuple[int, ...]) -> str | None:
    """reshape_utils.h ResolveOutputShape's refusal, or None when it resolves."""
    elements = _product(source)
    nonzero_input = _product(tuple(d for d in source if d != 0))
    if requested.count(-1) > 1:
        return "has more than one -1"
    if any(d < 0 and d != -1 for d in requested):
        return "has a negative dimension"
    known = tuple(d for d in requested if d != -1)
    count = _product(known)
    if -1 in requested:
        if elements == 0 and count != 0:
            inferred = 0
        else:
            nonzero_output = _product(tuple(d for d in known if d != 0))
            inferred = nonzero_input // nonzero_output if nonzero_output else 0
        count *= inferred
    if count != elements:
        return f"holds {count} elements, not {elements},"
    return None


def _expand_dims(
    model: Model, tensors: list[Tensor | None], output: Tensor
) -> tuple[str, str, str] | None:
    source = tensors[0]
    assert source is not None
    if _legacy(source) != _legacy(output):
        return (
            f"its output's scale and zero point {_legacy(output)} are not its input's "
            f"{_legacy(source)} ('input->params.scale != output->params.scale' in Prepare)",
            "setup",
            "give the output the input's quantization",
        )
    if source.dtype.name == "INT16" and _legacy(source)[1] != 0:
        return ("an int16 input needs zero point 0 (in Prepare)", "setup", "")
    axis = tensors[1] if len(tensors) > 1 else None
    if axis is None or not axis.has_data:
        return None
    values = _ints(model, axis)
    if values is None or len(values) != 1:
        return (
            "its axis is not one int32 or int64 value (GetAxisValueFromTensor in Prepare)",
            "setup",
            "",
        )
    rank = len(source.shape)
    value = values[0] + rank + 1 if values[0] < 0 else values[0]
    if not 0 <= value <= rank:
        return (
            f"its axis {values[0]} is outside [-{rank + 1}, {rank}] for its rank-{rank} input "
            "('axis <= input_dims.size' in Prepare)",
            "setup",
            "",
        )
    return None


def _gather(
    model: Model, tensors: list[Tensor | None], options: Mapping[str, object]
) -> tuple[str, str, str] | None:
    if len(tensors) != 2 or tensors[1] is None:
        return None
    source, positions = tensors[0], tensors[1]
    assert source is not None
    if positions.dtype.name not in _POSITION_WIDTHS:
        return (
            f"positions of type {positions.dtype.name} are not supported by gather (Prepare)",
            "setup",
            "write the indices as int32",
        )
    rank = len(source.shape)
    get = options.get
    axis = int(get("axis", 0) or 0)  # type: ignore[call-overload]
    axis = axis + rank if axis < 0 else axis
    batch_dims = int(get("batch_dims", 0) or 0)  # type: ignore[call-overload]
    batch_dims = batch_dims + len(positions.shape) if batch_dims < 0 else batch_dims
    if source.dtype.name == "STRING" and rank != 1:
        return ("a string input must be 1-D ('NumDimensions(input) != 1' in Prepare)", "setup", "")
    if not 0 <= axis < rank or not 0 <= batch_dims <= axis or batch_dims > len(positions.shape):
        return (
            f"its axis {get('axis', 0)} or batch_dims {get('batch_dims', 0)} is outside its "
            f"input {_shape(source)} or positions {_shape(positions)} (Prepare)",
            "setup",
            "",
        )
    values = _ints(model, positions) if positions.has_data else None
    if values is None:
        return None
    size = source.shape[axis]
    outside = [v for v in values if not 0 <= v < size]
    if not outside:
        return None
    constant_input = source.has_data
    when = (
        "allocate_tensors() fails: Prepare evaluates a node whose inputs are all constant"
        if constant_input
        else "allocate_tensors() succeeds, every invoke() fails"
    )
    return (
        f"its constant indices include {outside[0]}, outside [0, {size}) for its input "
        f"{_shape(source)} on axis {axis} ('gather index out of bounds'): {when}",
        "setup" if constant_input else "invoke",
        f"keep every index in [0, {size})",
    )


def _integer_svdf_state(tensors: list[Tensor | None]) -> tuple[str, str, str] | None:
    """svdf.cc's integer Eval (int8 input) reads and writes its state as int16 without checking
    its type: an int8 state (TFLM's int8-state SVDF) is overrun."""
    state = tensors[4] if len(tensors) > 4 else None
    source = tensors[0]
    if source is None or source.dtype.name != "INT8" or state is None:
        return None
    if state.dtype.name == "INT16":
        return None
    return (
        f"the integer SVDF kernel reads and writes its state as int16, this one is "
        f"{state.dtype.name} (svdf.cc EvalIntegerSVDF checks no type): the first invoke() "
        "writes past the state's buffer and the process crashes",
        "invoke",
        "convert the SVDF with an int16 state (and int16 time weights) for LiteRT",
    )


def _add_or_sub(
    opcode: str, tensors: list[Tensor | None], output: Tensor
) -> tuple[str, str, str] | None:
    if len(tensors) != 2 or tensors[1] is None or output.dtype.name not in _EIGHT_BIT:
        return None
    first, second = tensors
    assert first is not None and second is not None
    if first.dtype.name != second.dtype.name or second.dtype.name != output.dtype.name:
        return None  # TF_LITE_ENSURE_TYPES_EQ refuses it first (an ordinary Prepare error)
    scale1, scale2, scale_out = _legacy(first)[0], _legacy(second)[0], _legacy(output)[0]
    twice = 2 * max(scale1, scale2)
    multipliers = [_ratio(scale1, twice), _ratio(scale2, twice)]
    output_multiplier = _ratio(twice, (1 << _ADD_LEFT_SHIFT) * scale_out)
    if opcode == "ADD" or not output_multiplier > 1:
        multipliers.append(output_multiplier)
    if all(0 < m < 1 for m in multipliers):
        return None
    return (
        f"its 8-bit rescaling is out of range for scales {scale1:g}, {scale2:g} -> {scale_out:g} "
        "(a tensor without a single per-tensor scale counts as 0): "
        f"TFLITE_CHECK in QuantizeMultiplierSmallerThanOneExp, {_ABORTS}",
        "setup",
        "quantize both inputs and the output per tensor, with scales the converter gives",
    )


def _ratio(numerator: float, denominator: float) -> float:
    """IEEE division as the kernel's doubles give it (0/0 is NaN, x/0 infinite)."""
    if denominator == 0:
        return float("nan") if numerator == 0 else float("inf")
    return numerator / denominator


def _legacy(tensor: Tensor) -> tuple[float, int]:
    """GetLegacyQuantization: (scale, zero point) of a per-tensor affine quantization, (0, 0)
    for anything else (none, per-channel, blockwise)."""
    quantization = tensor.quantization
    if quantization is None or quantization.scale is None or quantization.channel_count != 1:
        return (0.0, 0)
    return (float(quantization.scale), int(quantization.zero_point or 0))


def _ints(model: Model, tensor: Tensor) -> tuple[int, ...] | None:
    """A constant integer tensor's values (None when not constant or short)."""
    width = _POSITION_WIDTHS.get(tensor.dtype.name)
    if width is None or not tensor.has_data:
        return None
    raw = model.buffer_bytes(tensor.buffer)
    count = _product(tensor.shape)
    if len(raw) < width * count:
        return None
    return tuple(
        int.from_bytes(raw[i : i + width], "little", signed=True)
        for i in range(0, width * count, width)
    )


def _int_tuple(value: object) -> tuple[int, ...]:
    """An options vector (absent: empty) as ints."""
    if not isinstance(value, (tuple, list)):
        return ()
    return tuple(int(v) for v in value)


def _product(values: tuple[int, ...]) -> int:
    result = 1
    for value in values:
        result *= value
    return result


def _shape(tensor: Tensor) -> str:
    return f"[{', '.join(str(d) for d in tensor.shape)}]"
