"""Cases for the quantization checks kernels make in Prepare (kernels/quantization.py and the rules
that call it): each check met by a model just inside it and one just outside, on float32 scales
next to the boundary where the check's own arithmetic puts it.

* QuantizeMultiplierSmallerThanOneExp / ...GreaterThanOne (TFLITE_CHECK: an abort): SOFTMAX and
  LOG_SOFTMAX int8 input scales at and above 2^-26 / beta; ADD, SUB, ADD_N, CUMSUM output scales
  at and above 2 · max(input scale) / 2^left_shift; int8 comparisons' input scale at and below 1;
  SQUARED_DIFFERENCE without an input scale.
* CalculateActivationRangeQuantized (`no_integer_overflow_from_quantization`): a fused RELU6 or
  RELU_N1_TO_1 whose bound / output scale passes 2^31, at the last float32 scale that fits and the
  next below; a fused RELU on an unquantized output (0 / 0); AVERAGE_POOL_2D, which ignores the
  check's status.
* GetQuantizedConvolutionMultipler: FULLY_CONNECTED bias scales off input × filter scale by 1%
  and 3% of the output scale, and an unquantized bias.
* TFLITE_DCHECKs (aborts on builds with DCHECKs, the device probes; the wheel has NDEBUG):
  FULLY_CONNECTED with a filter zero point, int16 LOGISTIC / TANH input scales above 32767 /
  12288, HARD_SWISH with an unquantized output (a negative multiplier on Arm), LSTM gate weights
  with a zero point, and CMSIS-NN's FULLY_CONNECTED on a rank-5 output.
* Plain QuantizeMultiplier never refuses, not even on an infinite or NaN multiplier (MUL with
  unquantized tensors).

Models that abort make the probes spin until their timeout: measure this family with a short one,

    ARENALENS_PROBE_TIMEOUT=10 python -m tests.conformance.measure --target host --family \
quantization
    ARENALENS_PROBE_TIMEOUT=10 python -m tests.conformance.measure --target cortex-m7-reference \
--family quantization   # and cortex-m7-cmsis-nn
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arenalens.tflite.builder import QuantizationSpec, quantization
from tests.conformance.cases import Case
from tests.conformance.cases.nn.recurrent import lstm
from tests.conformance.models import Const, In, Op, Out, single_op

S = (1, 4, 4, 3)
INT16_Q = quantization(1 / 32768, 0)


def above(value: float) -> float:
    """The next float32 above `value`."""
    return float(np.nextafter(np.float32(value), np.float32(np.inf)))


def below(value: float) -> float:
    """The next float32 below `value`."""
    return float(np.nextafter(np.float32(value), np.float32(-np.inf)))


def q(scale: float, zero_point: int = 0) -> QuantizationSpec:
    return quantization(scale, zero_point)


def _case(case_id: str, build: Callable[[], bytes], note: str) -> Case:
    opcode, dtype = case_id.split(".")[:2]
    return Case(case_id, opcode, dtype, build, note)


def _one(case_id: str, op: Op, note: str) -> Case:
    return _case(case_id, lambda: single_op(op), note)


# -- QuantizeMultiplierGreaterThanOne: SOFTMAX, LOG_SOFTMAX ---------------------------------------


def _softmax(scale: float, *, beta: float = 1.0, output: str = "INT8") -> Op:
    out_q = q(1 / 256, -128) if output == "INT8" else q(1 / 65536, -32768)
    return Op(
        "SOFTMAX",
        [In((1, 10), "INT8", q(scale))],
        [Out((1, 10), output, out_q)],
        options={"beta": beta},
    )


def _log_softmax(scale: float) -> Op:
    return Op(
        "LOG_SOFTMAX", [In((1, 10), "INT8", q(scale))], [Out((1, 10), "INT8", q(1 / 16, 127))]
    )


SOFTMAX = (
    _one(
        "SOFTMAX.INT8.input_scale_1e-8",
        _softmax(1e-8),
        "the issue's repro: an uncalibrated BatchNorm's scale; beta·scale·2^26 < 1: abort",
    ),
    _one("SOFTMAX.INT8.input_scale_2p-26", _softmax(2.0**-26), "multiplier exactly 1: abort"),
    _one("SOFTMAX.INT8.input_scale_above_2p-26", _softmax(above(2.0**-26)), "multiplier > 1"),
    _one("SOFTMAX.INT8.beta2_input_scale_2p-27", _softmax(2.0**-27, beta=2.0), "beta counts"),
    _one("SOFTMAX.INT8.beta0", _softmax(0.1, beta=0.0), "beta 0: multiplier 0, abort"),
    _one(
        "SOFTMAX.INT8.to_int16_input_scale_1e-8",
        _softmax(1e-8, output="INT16"),
        "the int8→int16 path computes the same multiplier",
    ),
    _one("LOG_SOFTMAX.INT8.input_scale_2p-26", _log_softmax(2.0**-26), "multiplier 1: abort"),
    _one("LOG_SOFTMAX.INT8.input_scale_above_2p-26", _log_softmax(above(2.0**-26)), "fits"),
)


# -- QuantizeMultiplierSmallerThanOneExp: ADD, SUB, ADD_N, CUMSUM, comparisons --------------------


def _binary(opcode: str, dtype: str, scale: float, out: float, **options: Any) -> Op:
    return Op(
        opcode,
        [In(S, dtype, q(scale)), In(S, dtype, q(scale))],
        [Out(S, dtype, q(out))],
        options=options,
    )


def _rescaling_pair(opcode: str, dtype: str, left_shift: int) -> tuple[Case, ...]:
    """Inputs of scale 0.5: the output multiplier 1 / (2^left_shift · s_out) reaches 1 at
    s_out = 2^-left_shift (abort), and stays below it one float32 above."""
    limit = 2.0**-left_shift
    return (
        _one(
            f"{opcode}.{dtype}.output_scale_at_limit",
            _binary(opcode, dtype, 0.5, limit),
            f"output multiplier 2·0.5 / (2^{left_shift} · 2^-{left_shift}) = 1: abort",
        ),
        _one(
            f"{opcode}.{dtype}.output_scale_above_limit",
            _binary(opcode, dtype, 0.5, above(limit)),
            "output multiplier just below 1",
        ),
    )


def _add_n(out: float) -> Op:
    return Op("ADD_N", [In(S, "INT8", q(0.5)), In(S, "INT8", q(0.5))], [Out(S, "INT8", q(out))])


def _cumsum(out: float) -> Op:
    axis = Const(np.array([3], np.int32), "INT32")
    return Op("CUMSUM", [In(S, "INT8", q(0.5)), axis], [Out(S, "INT8", q(out))])


def _compare(scale: float) -> Op:
    return Op("LESS", [In(S, "INT8", q(scale)), In(S, "INT8", q(0.1))], [Out(S, "BOOL", None)])


def _squared_difference(first: QuantizationSpec | None) -> Op:
    return Op(
        "SQUARED_DIFFERENCE",
        [In(S, "INT8", first), In(S, "INT8", q(0.1))],
        [Out(S, "INT8", q(0.1))],
    )


RESCALING = (
    *_rescaling_pair("ADD", "INT8", 20),
    *_rescaling_pair("ADD", "INT16", 15),
    *_rescaling_pair("SUB", "INT8", 20),
    *_rescaling_pair("SUB", "INT16", 15),
    _one("ADD_N.INT8.output_scale_at_limit", _add_n(2.0**-20), "output multiplier 1: abort"),
    _one("ADD_N.INT8.output_scale_above_limit", _add_n(above(2.0**-20)), "just below 1"),
    _one("CUMSUM.INT8.output_scale_at_limit", _cumsum(2.0**-20), "output multiplier 1: abort"),
    _one("CUMSUM.INT8.output_scale_above_limit", _cumsum(above(2.0**-20)), "just below 1"),
    _one("LESS.INT8.input_scale_1", _compare(1.0), "the scale itself is the multiplier: abort"),
    _one("LESS.INT8.input_scale_below_1", _compare(below(1.0)), "largest float32 below 1"),
    _one(
        "SQUARED_DIFFERENCE.INT8.input_unquantized",
        _squared_difference(None),
        "input multiplier 0: abort",
    ),
    _one("SQUARED_DIFFERENCE.INT8.quantized", _squared_difference(q(0.1)), "every scale 0.1"),
)


# -- CalculateActivationRangeQuantized ------------------------------------------------------------

# The smallest float32 output scale whose RELU6 bound 6 / scale rounds to at most 2^31 (exactly
# 2^31: the check's float(INT32_MAX) is 2^31); the next below overflows.
RELU6_LIMIT = 6.0 / 2.0**31
RELU_N1_TO_1_LIMIT = 2.0**-31
ACTIVATIONS = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def _activation_pair(
    case_prefix: str, build: Callable[[float, str], bytes], activation: str, limit: float
) -> tuple[Case, ...]:
    name = activation.lower()
    return (
        _case(
            f"{case_prefix}.{name}_output_scale_at_limit",
            lambda: build(limit, activation),
            f"{activation} bound / output scale = 2^31 exactly: fits",
        ),
        _case(
            f"{case_prefix}.{name}_output_scale_below_limit",
            lambda: build(below(limit), activation),
            f"one float32 below: the {activation} bound overflows int32",
        ),
    )


def _add_activation(out: float, activation: str) -> bytes:
    return single_op(
        _binary("ADD", "INT8", 1e-4, out, fused_activation_function=ACTIVATIONS[activation])
    )


def _mul_activation(out: float, activation: str) -> bytes:
    return single_op(
        _binary("MUL", "INT8", 0.1, out, fused_activation_function=ACTIVATIONS[activation])
    )


def _weights(shape: tuple[int, ...]) -> Const:
    return Const(np.ones(shape, np.int8), "INT8", q(0.1))


def _conv(dtype: str, out: float | None, activation: str, *, input_q: Any = "scaled") -> bytes:
    source_q = q(0.1) if dtype == "INT8" else INT16_Q
    return single_op(
        Op(
            "CONV_2D",
            [
                In((1, 4, 4, 2), dtype, source_q if input_q == "scaled" else input_q),
                _weights((2, 1, 1, 2)),
            ],
            [Out((1, 4, 4, 2), dtype, None if out is None else q(out))],
            options={
                "padding": "VALID",
                "fused_activation_function": ACTIVATIONS.get(activation, 0),
            },
        )
    )


def _depthwise(dtype: str, out: float | None, activation: str) -> bytes:
    source_q = q(0.1) if dtype == "INT8" else INT16_Q
    return single_op(
        Op(
            "DEPTHWISE_CONV_2D",
            [In((1, 4, 4, 2), dtype, source_q), _weights((1, 1, 1, 2))],
            [Out((1, 4, 4, 2), dtype, None if out is None else q(out))],
            options={
                "padding": "VALID",
                "depth_multiplier": 1,
                "fused_activation_function": ACTIVATIONS.get(activation, 0),
            },
        )
    )


def _transpose_conv(out: float, activation: str, *, filter_q: Any = "scaled") -> bytes:
    weights = Const(
        np.ones((2, 1, 1, 2), np.int8), "INT8", q(0.1) if filter_q == "scaled" else None
    )
    return single_op(
        Op(
            "TRANSPOSE_CONV",
            [Const(np.array([1, 4, 4, 2], np.int32), "INT32"), weights, In((1, 4, 4, 2), "INT8")],
            [Out((1, 4, 4, 2), "INT8", q(out))],
            options={
                "padding": "VALID",
                "stride_w": 1,
                "stride_h": 1,
                "fused_activation_function": ACTIVATIONS.get(activation, 0),
            },
        )
    )


def _fully_connected(
    out: float | None,
    activation: str = "NONE",
    *,
    bias: QuantizationSpec | str | None = "none",
    filter_zero_point: int = 0,
    per_channel: bool = False,
) -> bytes:
    weights_q = (
        quantization([0.1, 0.1, 0.1], 0, axis=0) if per_channel else q(0.1, filter_zero_point)
    )
    operands: list[Any] = [
        In((1, 4), "INT8", q(0.5)),
        Const(np.ones((3, 4), np.int8), "INT8", weights_q),
    ]
    if bias != "none":
        operands.append(Const(np.zeros(3, np.int32), "INT32", bias))  # type: ignore[arg-type]
    return single_op(
        Op(
            "FULLY_CONNECTED",
            operands,
            [Out((1, 3), "INT8", None if out is None else q(out))],
            options={"fused_activation_function": ACTIVATIONS.get(activation, 0)},
        )
    )


def _average_pool(scale: float) -> bytes:
    return single_op(
        Op(
            "AVERAGE_POOL_2D",
            [In(S, "INT8", q(scale))],
            [Out(S, "INT8", q(scale))],
            options={
                "padding": "SAME",
                "stride_w": 1,
                "stride_h": 1,
                "filter_width": 1,
                "filter_height": 1,
                "fused_activation_function": ACTIVATIONS["RELU6"],
            },
        )
    )


ACTIVATION_RANGE = (
    *_activation_pair("ADD.INT8", _add_activation, "RELU6", RELU6_LIMIT),
    *_activation_pair("MUL.INT8", _mul_activation, "RELU6", RELU6_LIMIT),
    *_activation_pair("CONV_2D.INT8", lambda o, a: _conv("INT8", o, a), "RELU6", RELU6_LIMIT),
    *_activation_pair(
        "CONV_2D.INT16", lambda o, a: _conv("INT16", o, a), "RELU_N1_TO_1", RELU_N1_TO_1_LIMIT
    ),
    *_activation_pair(
        "DEPTHWISE_CONV_2D.INT16", lambda o, a: _depthwise("INT16", o, a), "RELU6", RELU6_LIMIT
    ),
    *_activation_pair("TRANSPOSE_CONV.INT8", _transpose_conv, "RELU6", RELU6_LIMIT),
    *_activation_pair("FULLY_CONNECTED.INT8", _fully_connected, "RELU6", RELU6_LIMIT),
    _case(
        "FULLY_CONNECTED.INT8.per_channel_relu6_output_scale_below_limit",
        lambda: _fully_connected(below(RELU6_LIMIT), "RELU6", per_channel=True),
        "the per-channel path ends in the same activation range",
    ),
    _case(
        "MUL.INT8.relu_output_unquantized",
        lambda: _mul_activation_unquantized("RELU"),
        "RELU's bound 0 over scale 0 is NaN: refused",
    ),
    _case(
        "DEPTHWISE_CONV_2D.INT8.relu_output_unquantized",
        lambda: _depthwise("INT8", None, "RELU"),
        "PopulateConvolutionQuantizationParams ends in the NaN bound",
    ),
    _case(
        "CONV_2D.INT8.input_unquantized",
        lambda: _conv("INT8", 0.1, "NONE", input_q=None),
        "input->quantization.type must be affine",
    ),
    _case(
        "TRANSPOSE_CONV.INT8.filter_unquantized",
        lambda: _transpose_conv(0.1, "NONE", filter_q=None),
        "TransposeConvPrepare checks the filter's quantization",
    ),
    _case(
        "AVERAGE_POOL_2D.INT8.relu6_scale_overflow_ignored",
        lambda: _average_pool(1e-10),
        "pooling_common.cc ignores CalculateActivationRangeQuantized's status: sets up",
    ),
)


def _mul_activation_unquantized(activation: str) -> bytes:
    op = Op(
        "MUL",
        [In(S, "INT8", q(0.1)), In(S, "INT8", q(0.1))],
        [Out(S, "INT8", None)],
        options={"fused_activation_function": ACTIVATIONS[activation]},
    )
    return single_op(op)


# -- GetQuantizedConvolutionMultipler's bias check, QuantizeMultiplier on inf and NaN -------------

MULTIPLIERS = (
    _case(
        "FULLY_CONNECTED.INT8.bias_scale_off_by_1pct_of_output",
        lambda: _fully_connected(1.0, bias=q(0.06)),
        "input × filter scale 0.5 × 0.1; |0.05 - 0.06| / 1 <= 0.02",
    ),
    _case(
        "FULLY_CONNECTED.INT8.bias_scale_off_by_3pct_of_output",
        lambda: _fully_connected(1.0, bias=q(0.08)),
        "|0.05 - 0.08| / 1 > 0.02: refused",
    ),
    _case(
        "FULLY_CONNECTED.INT8.bias_unquantized",
        lambda: _fully_connected(1.0, bias=None),
        "an unquantized bias has scale 0",
    ),
    _one(
        "MUL.INT8.output_unquantized",
        Op("MUL", [In(S, "INT8", q(0.1)), In(S, "INT8", q(0.1))], [Out(S, "INT8", None)]),
        "multiplier 0.01 / 0 = inf: QuantizeMultiplier lets it through (wheel and Arm)",
    ),
    _one(
        "MUL.INT8.all_unquantized",
        Op("MUL", [In(S, "INT8", None), In(S, "INT8", None)], [Out(S, "INT8", None)]),
        "multiplier 0 / 0 = NaN: QuantizeMultiplier lets it through",
    ),
)


# -- TFLITE_DCHECKs: devices abort, the wheel (NDEBUG) sets up ------------------------------------


def _int16_activation(opcode: str, scale: float) -> Op:
    return Op(opcode, [In(S, "INT16", q(scale))], [Out(S, "INT16", INT16_Q)])


def _hard_swish(out: QuantizationSpec | None) -> Op:
    return Op("HARD_SWISH", [In(S, "INT8", q(1.0))], [Out(S, "INT8", out)])


def _fully_connected_rank5() -> bytes:
    weights = Const(np.ones((3, 4), np.float32), "FLOAT32")
    return single_op(
        Op(
            "FULLY_CONNECTED",
            [In((1, 1, 1, 2, 4), "FLOAT32"), weights],
            [Out((1, 1, 1, 2, 3), "FLOAT32")],
            options={"keep_num_dims": True},
        )
    )


DCHECKS = (
    _case(
        "FULLY_CONNECTED.INT8.filter_zero_point_1",
        lambda: _fully_connected(0.1, filter_zero_point=1),
        "TFLITE_DCHECK(filter->params.zero_point == 0): devices abort, the wheel sets up",
    ),
    _one("LOGISTIC.INT16.input_scale_2.6", _int16_activation("LOGISTIC", 2.6), "2.6·12288 < 32768"),
    _one(
        "LOGISTIC.INT16.input_scale_2.7",
        _int16_activation("LOGISTIC", 2.7),
        "input multiplier 33177.6 > 32767: DCHECK, devices abort",
    ),
    _one("TANH.INT16.input_scale_2.6", _int16_activation("TANH", 2.6), "2.6·12288 < 32768"),
    _one(
        "TANH.INT16.input_scale_2.7",
        _int16_activation("TANH", 2.7),
        "input multiplier 33177.6 > 32767: DCHECK, devices abort",
    ),
    _one(
        "HARD_SWISH.INT8.output_scale_at_limit",
        _hard_swish(q(1 / 128)),
        "output multiplier (1/128) / (1/128) = 1: exponent 1, refused",
    ),
    _one(
        "HARD_SWISH.INT8.output_scale_above_limit",
        _hard_swish(q(above(1 / 128))),
        "output multiplier just below 1",
    ),
    _case(
        "FULLY_CONNECTED.FLOAT32.output_rank5",
        _fully_connected_rank5,
        "CMSIS-NN: TFLITE_DCHECK_LE(output_dim_count, 4) aborts; the reference kernel runs it",
    ),
    _case(
        "UNIDIRECTIONAL_SEQUENCE_LSTM.INT8.weights_zero_point_1",
        lstm("INT8", weights_zero_point=1),
        "each gate's CalculateOpDataFullyConnected DCHECKs symmetric weights: devices abort",
    ),
    _one(
        "HARD_SWISH.INT8.output_unquantized",
        _hard_swish(None),
        "an infinite multiplier: 0 on the wheel, negative on Arm (DCHECK_GE: devices abort)",
    ),
)

CASES = (*SOFTMAX, *RESCALING, *ACTIVATION_RANGE, *MULTIPLIERS, *DCHECKS)
