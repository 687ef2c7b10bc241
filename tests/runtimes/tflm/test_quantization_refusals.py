"""Prepare's quantization checks (kernels/quantization.py and the rules that call it): the helpers'
arithmetic at its boundaries, every quantization conformance case's verdict against what the wheel
and the Cortex-M probes measured (cached), and random scales against the live wheel."""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arenalens.builds.build import HOST, device_build
from arenalens.ir import DTYPES_BY_NAME, Quantization, Tensor, TensorKind
from arenalens.runtimes.tflm.kernels.quantization import (
    KERNEL_UTIL,
    MICRO_KERNEL_UTIL,
    activation_range,
    checked_log2,
    divide,
    f32,
    kernel_util,
    overflowing_activation_bound,
    quantize_multiplier,
    smaller_than_one,
    smaller_than_one_holds,
    tflite_round,
)
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.builder import quantization
from arenalens.tflite.reader import parse_model
from tests.conformance.cases import Case, all_cases, case_by_id
from tests.conformance.cases.quantization import ACTIVATIONS, above, below
from tests.conformance.measure import load
from tests.conformance.models import Const, In, Op, Out, single_op
from tests.conformance.targets import TARGETS

FAMILY = [case for case in all_cases() if case.family == "quantization"]
M7 = device_build("cortex-m7")


def test_quantize_multiplier_rounds_as_tflm() -> None:
    assert quantize_multiplier(0.5) == (m := quantize_multiplier(0.5)) and m.shift == 0
    assert quantize_multiplier(0.5).significand == 1 << 30
    # Within 2^-32 of 1 the 31-bit significand rounds up to 2^31: renormalised to shift 1.
    assert quantize_multiplier(1 - 2.0**-33).shift == 1
    assert quantize_multiplier(1 - 2.0**-31).shift == 0
    # Shifts below -31 flush to zero; inf and NaN pass (measured on the wheel and on Arm).
    assert quantize_multiplier(2.0**-40).significand == 0
    assert quantize_multiplier(math.inf).significand == 0
    assert quantize_multiplier(math.nan).significand == 0


def test_smaller_than_one_refuses_what_rounds_to_one() -> None:
    assert smaller_than_one(1 - 2.0**-31, "m", "") is None
    refused = smaller_than_one(1 - 2.0**-33, "m", "fix")
    assert refused is not None and "TFLITE_CHECK_LE(shift, 0)" in refused.reason
    assert refused.fix == "fix"
    for value in (1.0, 0.0, math.nan, math.inf):
        assert smaller_than_one(value, "m", "") is not None


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_smaller_than_one_holds_as_quantize_multiplier_says(real: float) -> None:
    """`smaller_than_one_holds` decides with one comparison (below 1 - 2^-32) what
    QuantizeMultiplierSmallerThanOneExp's checks decide: 0 < m < 1 and a shift <= 0."""
    for value in (real, 1 - 2.0**-32, math.nextafter(1 - 2.0**-32, 0), 5e-324, 1.0, 0.0, -0.0):
        holds = 0.0 < value < 1.0 and quantize_multiplier(value).shift <= 0
        assert smaller_than_one_holds(value) == holds, value
        assert (smaller_than_one(value, "m", "") is None) == holds, value


def test_checked_log2_and_float32() -> None:
    assert checked_log2(2.0**-15) == (True, -15)
    assert checked_log2(1 / 32768 * 1.01)[0] is False
    assert checked_log2(0.0)[0] is False
    assert f32(0.1) != 0.1 and f32(f32(0.1)) == f32(0.1)
    assert f32(1e39) == math.inf


def test_the_kernel_helpers_file_follows_the_release() -> None:
    assert kernel_util(HOST) == MICRO_KERNEL_UTIL
    assert kernel_util(M7) == KERNEL_UTIL


def test_dchecks_live_on_devices_only() -> None:
    assert not HOST.dchecks and M7.dchecks


# ---------------------------------------------------------------------------------------------
# The conformance family against its cached measurements: the verdict, both ways.


def _measured() -> list[Any]:
    """(target, case, cached figures) for every predicted target that measured the case."""
    found = []
    for name, target in TARGETS.items():
        if target.build is None:
            continue
        cached = load(name)["cases"]
        found += [
            pytest.param(name, case, cached[case.id], id=f"{name}:{case.id}")
            for case in FAMILY
            if case.id in cached
        ]
    return found


def test_every_case_is_measured_on_the_host_and_cortex_m7_builds() -> None:
    for target in ("host", "cortex-m7-reference", "cortex-m7-cmsis-nn"):
        cached = load(target)["cases"]
        missing = [case.id for case in FAMILY if case.id not in cached]
        assert not missing, (target, missing)


@pytest.mark.parametrize(("target", "case", "measured"), _measured())
def test_the_verdict_is_the_runtimes(target: str, case: Case, measured: dict[str, Any]) -> None:
    assert measured["sha256"] == case.sha256(), case.id
    found = support(parse_model(case.model(), "case"), TARGETS[target].predicted)
    assert found.sets_up == measured["loads"], (
        [o.reason for o in found.obstacles],
        measured.get("error"),
    )
    # Every setup refusal of this family says what to change in the conversion.
    assert all(o.fix for o in found.obstacles if o.phase == "setup"), found.obstacles


@pytest.mark.parametrize(
    ("target", "case", "measured"),
    [
        param
        for param in _measured()
        if TARGETS[param.values[0]].device and not param.values[2]["loads"]
    ],
)
def test_each_refusal_reads_as_the_device_printed_it(
    target: str, case: Case, measured: dict[str, Any]
) -> None:
    """A device prints "HALTED" for an abort, else the failed check (the probe keeps the log's
    tail: "...<check> was not true. | Node ... failed to prepare")."""
    (obstacle,) = support(parse_model(case.model(), "case"), TARGETS[target].predicted).obstacles
    printed = measured["error"]
    if printed == "HALTED":
        assert "TFLM aborts" in obstacle.reason
    else:
        # The cache keeps the log's last 300 characters, which may begin inside the failed
        # check's "<file>:<line> " prefix (":349 ..."): our reason carries the file, no line.
        check = re.sub(r"^\S*:\d+ ", "", printed.split(" | Node")[0])
        assert obstacle.reason.endswith(check), (obstacle.reason, printed)


@pytest.mark.runtime
def test_each_refusal_reads_as_the_wheel_prints_it() -> None:
    """The wheel prints a failed TF_LITE_ENSURE as "<file>:<line> <check> was not true."; our
    reason is that line without its number (the file included: the wheel's sources keep the
    kernel helpers in micro's kernel_util.cc)."""
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    checked = 0
    cached = load("host")["cases"]
    for case in FAMILY:
        if cached[case.id]["loads"] or "exited" in cached[case.id]["error"]:
            continue  # sets up, or aborts (no message)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "case.tflite"
            path.write_bytes(case.model())
            log = probe(str(path), 1 << 20).log
        (printed,) = [line for line in log.splitlines() if ".cc:" in line]
        (obstacle,) = support(parse_model(case.model(), "case"), HOST).obstacles
        assert obstacle.reason == re.sub(r"(\.cc):\d+ ", r"\1 ", printed.strip()), case.id
        checked += 1
    assert checked >= 10


def test_the_issues_repros_are_refused_with_a_fix() -> None:
    softmax = case_by_id("SOFTMAX.INT8.input_scale_1e-8")
    depthwise = case_by_id("DEPTHWISE_CONV_2D.INT16.relu6_output_scale_below_limit")
    for case in (softmax, depthwise):
        model = parse_model(case.model(), "case")
        for build in (HOST, M7, device_build("cortex-m7", "cmsis-nn")):
            (obstacle,) = support(model, build).obstacles
            assert obstacle.phase == "setup" and "representative dataset" in obstacle.fix
    (softmax_reason,) = support(parse_model(softmax.model(), "case")).obstacles
    assert "TFLITE_CHECK_GT(double_multiplier, 1.)" in softmax_reason.reason
    assert "1.49012e-08" in softmax_reason.fix


# ---------------------------------------------------------------------------------------------
# Random scales against the live wheel: our verdict is the wheel's.

# Scales drawn log-uniformly over what converters write, and next to each kernel's thresholds.
SCALES = st.floats(min_value=-40.0, max_value=10.0).map(lambda e: f32(2.0**e))


def _nudged(threshold: float) -> st.SearchStrategy[float]:
    """A float32 within a few ulps of a threshold."""
    return st.integers(-3, 3).map(lambda steps: _step(threshold, steps))


def _step(value: float, steps: int) -> float:
    for _ in range(abs(steps)):
        value = above(value) if steps > 0 else below(value)
    return value


def _softmax(scale: float, beta: float) -> bytes:
    return single_op(
        Op(
            "SOFTMAX",
            [In((1, 8), "INT8", quantization(scale, 0))],
            [Out((1, 8), "INT8", quantization(1 / 256, -128))],
            options={"beta": beta},
        )
    )


def _binary(opcode: str, dtype: str, scales: tuple[float, float, float], activation: str) -> bytes:
    first, second, out = (quantization(s, 0) for s in scales)
    return single_op(
        Op(
            opcode,
            [In((1, 4), dtype, first), In((1, 4), dtype, second)],
            [Out((1, 4), dtype, out)],
            options={"fused_activation_function": ACTIVATIONS.get(activation, 0)},
        )
    )


def _fully_connected(scales: tuple[float, float, float, float], activation: str) -> bytes:
    source, weights, bias, out = scales
    return single_op(
        Op(
            "FULLY_CONNECTED",
            [
                In((1, 4), "INT8", quantization(source, 0)),
                Const(np.ones((2, 4), np.int8), "INT8", quantization(weights, 0)),
                Const(np.zeros(2, np.int32), "INT32", quantization(bias, 0)),
            ],
            [Out((1, 2), "INT8", quantization(out, 0))],
            options={"fused_activation_function": ACTIVATIONS.get(activation, 0)},
        )
    )


def _depthwise(out: float, activation: str) -> bytes:
    return single_op(
        Op(
            "DEPTHWISE_CONV_2D",
            [
                In((1, 2, 2, 2), "INT16", quantization(1 / 32768, 0)),
                Const(np.ones((1, 1, 1, 2), np.int8), "INT8", quantization(0.1, 0)),
            ],
            [Out((1, 2, 2, 2), "INT16", quantization(out, 0))],
            options={
                "padding": "VALID",
                "depth_multiplier": 1,
                "fused_activation_function": ACTIVATIONS.get(activation, 0),
            },
        )
    )


def _unary(opcode: str, dtype: str, scales: tuple[float, float], zero_point: int) -> bytes:
    source, out = scales
    return single_op(
        Op(
            opcode,
            [In((1, 4), dtype, quantization(source, 0))],
            [Out((1, 4), dtype, quantization(out, zero_point))],
        )
    )


def _compare(first: float, second: float) -> bytes:
    return single_op(
        Op(
            "LESS",
            [
                In((1, 4), "INT8", quantization(first, 0)),
                In((1, 4), "INT8", quantization(second, 0)),
            ],
            [Out((1, 4), "BOOL", None)],
        )
    )


ACTIVATION_NAMES = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
MODELS = st.one_of(
    st.builds(_softmax, st.one_of(SCALES, _nudged(2.0**-26)), st.sampled_from([1.0, 0.5, 2.0])),
    st.builds(
        _binary,
        st.sampled_from(["ADD", "SUB", "MUL"]),
        st.sampled_from(["INT8", "INT16"]),
        st.tuples(SCALES, SCALES, st.one_of(SCALES, _nudged(2.0**-20), _nudged(6 / 2.0**31))),
        ACTIVATION_NAMES,
    ),
    st.builds(
        _fully_connected,
        st.tuples(SCALES, SCALES, SCALES, st.one_of(SCALES, _nudged(6 / 2.0**31))),
        ACTIVATION_NAMES,
    ),
    st.builds(
        _depthwise, st.one_of(SCALES, _nudged(6 / 2.0**31), _nudged(2.0**-31)), ACTIVATION_NAMES
    ),
    st.builds(
        _unary,
        st.just("HARD_SWISH"),
        st.just("INT8"),
        st.tuples(SCALES, st.one_of(SCALES, _nudged(2.0**-7))),
        st.just(0),
    ),
    st.builds(
        _unary,
        st.sampled_from(["LOGISTIC", "TANH"]),
        st.just("INT16"),
        st.tuples(SCALES, st.one_of(SCALES, st.just(2.0**-15))),
        st.just(0),
    ),
    st.builds(_compare, SCALES, SCALES),
)


@pytest.mark.runtime
@pytest.mark.slow
@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=MODELS)
def test_random_scales_get_the_wheels_verdict(data: bytes) -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.tflite"
        path.write_bytes(data)
        wheel = probe(str(path), 1 << 20)
    ours = support(parse_model(data, "case"), HOST)
    assert wheel.status in ("ok", "error", "crash"), wheel.log[-300:]
    assert ours.sets_up == wheel.fits, ([o.reason for o in ours.obstacles], wheel.log[-400:])


_BOUNDS = {1: (0.0,), 2: (-1.0, 1.0), 3: (0.0, 6.0)}  # RELU, RELU_N1_TO_1, RELU6


def _overflowing_bound_bound_by_bound(activation: int, scale: float) -> float | None:
    """kernel_util.cc's Quantize of each bound, as C does it, without the one-comparison path."""
    for bound in _BOUNDS.get(activation, ()):
        rounded = tflite_round(f32(divide(bound, f32(scale))))
        if not -(2.0**31) <= rounded <= 2.0**31:
            return bound
    return None


def test_one_comparison_decides_the_activation_bounds_as_each_bound_does() -> None:
    """`overflowing_activation_bound` decides the usual scales with one comparison: the same
    answer as quantizing every bound, around each threshold (max |bound| / 2^30, the smallest
    normal float32), at subnormal, zero, infinite, NaN and negative scales."""
    edges = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 2.0**-149, 2.0**-150, 3.5e38]
    for threshold in (6 / 2**30, 1 / 2**30, 6 / 2**31, 1 / 2**31, 2.0**-126, 2.0**-149):
        edges += [threshold * (1 + k * 2.0**-24) for k in range(-40, 41)]
        edges += [threshold * (1 + k * 2.0**-8) for k in range(-40, 41)]
    for activation in (0, 1, 2, 3, 4):
        for scale in edges:
            for value in (scale, f32(scale), -scale):
                assert overflowing_activation_bound(
                    activation, value
                ) == _overflowing_bound_bound_by_bound(activation, value), (activation, value)


def _int8_output(scale: float) -> Tensor:
    return Tensor(
        0, "output", (1, 4), (1, 4), DTYPES_BY_NAME["INT8"], 0, False, False,
        TensorKind.OUTPUT, False, True, Quantization(scale, 0, 1, 0),
    )  # fmt: skip


def test_activation_range_decides_unrounded_scales_as_their_float32() -> None:
    """`activation_range` passes a scale above the safe one before rounding it to float32: the
    same answer as quantizing every bound with the float32 scale, around each threshold and at
    doubles that are not float32 values."""
    edges = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 2.0**-149, 3.5e38, 1e39, 0.1]
    for threshold in (6 / 2**30, 1 / 2**30, 6 / 2**31, 1 / 2**31, 2.0**-126):
        for k in range(-40, 41):
            edges += [threshold * (1 + k * 2.0**-24), threshold * (1 + k * 2.0**-30)]
            edges += [math.nextafter(threshold, math.inf), math.nextafter(threshold, 0.0)]
    for activation in (0, 1, 2, 3, 4):
        for scale in edges:
            refused = activation_range(HOST, activation, _int8_output(scale))
            expected = _overflowing_bound_bound_by_bound(activation, scale)
            assert (refused is None) == (expected is None), (activation, scale)
