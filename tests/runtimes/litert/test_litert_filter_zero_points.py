"""conv.cc's Prepare check on filter zero points (runtimes/litert/prepare_refusals.py
_filter_zero_points): under an int8 or int16 input every CONV_2D filter zero point is 0, per
tensor or per channel, int8 or int4 filter. DEPTHWISE_CONV_2D, TRANSPOSE_CONV and an int8
FULLY_CONNECTED have no such check. The generated zp_* cases of tests/litert_refusal_cases.py
with their zero-point-0 twins, measured on the 2.3.0 wheel under both delegates (WHEEL; the
verdicts are also tested with every other case by test_litert_prepare_refusals).

XNNPACK's own refusals (runtimes/litert/xnnpack_zero_points.py): the XNNPACK_ZERO_POINTS cases,
which the builtin kernels run; before, arenalens agreed with the wheel under XNNPACK on 5 of 14
(it said the 9 the delegate refuses run), now on 14.

Before: every zp_conv_* case with a non-zero zero point ran in arenalens under both delegates
(no CANNOT RUN) while the wheel refused it at allocate_tensors()."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.cli import main
from arenalens.declared import Status
from arenalens.litert_memory import litert_memory, xnnpack_refusals
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap_xnnpack import partition
from arenalens.runtimes.litert.prepare_refusals import prepare_refusals
from arenalens.tflite.reader import parse_model
from tests.litert_refusal_cases import (
    CASES,
    WHEEL,
    XNNPACK_ZERO_POINT_WHEEL,
    XNNPACK_ZERO_POINTS,
    filter_zero_points,
    wheel_outcome,
)

ZERO_POINT_CASES = sorted(name for name in CASES if name.startswith("zp_"))


@pytest.mark.parametrize("case", ZERO_POINT_CASES)
def test_refused_where_the_wheel_refuses(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(CASES[case]())
    analysis = analyze(str(path), runtime="litert")
    for delegate, outcome in zip(("none", "xnnpack"), WHEEL[case], strict=True):
        refused = litert_memory(analysis, delegate).status is Status.CANNOT_RUN
        assert refused is (outcome != "runs"), delegate


def test_the_refusal_names_the_channel_and_the_check() -> None:
    model = parse_model(filter_zero_points("CONV_2D", "INT8", (0, 0, 1, 0)), "conv")
    (refusal,) = prepare_refusals(model)
    assert (refusal.opcode, refusal.phase, refusal.builtin_prepare) == ("CONV_2D", "setup", False)
    assert "int8 filter has zero point 1 in channel 2" in refusal.reason
    assert "'affine_quantization->zero_point->data[i] != 0'" in refusal.reason
    model = parse_model(filter_zero_points("CONV_2D", "INT8", 1, "INT4"), "conv")
    (refusal,) = prepare_refusals(model)
    assert "int4 filter has zero point 1:" in refusal.reason


def test_check_says_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conv.tflite"
    path.write_bytes(CASES["zp_conv_int16"]())
    for delegate in ("none", "xnnpack"):
        arguments = ["check", str(path), "--runtime", "litert", "--budget", "1M"]
        assert main([*arguments, "--delegate", delegate]) == 1
        text = " ".join(capsys.readouterr().out.split())
        assert "CANNOT RUN" in text and "filter has zero point -2 in channel 1" in text


@pytest.mark.parametrize("case", sorted(XNNPACK_ZERO_POINTS))
def test_the_builtin_kernels_run_other_filters(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(filter_zero_points(*XNNPACK_ZERO_POINTS[case]))
    analysis = analyze(str(path), runtime="litert")
    assert XNNPACK_ZERO_POINT_WHEEL[case][0] == "runs"
    assert litert_memory(analysis, "none").status is not Status.CANNOT_RUN


@pytest.mark.parametrize("case", sorted(XNNPACK_ZERO_POINTS))
def test_xnnpack_refuses_where_the_wheel_does(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(filter_zero_points(*XNNPACK_ZERO_POINTS[case]))
    analysis = analyze(str(path), runtime="litert")
    refused = litert_memory(analysis, "xnnpack").status is Status.CANNOT_RUN
    assert refused is (XNNPACK_ZERO_POINT_WHEEL[case][1] == "setup")


def test_xnnpack_refusals_say_the_delegate_words() -> None:
    model = parse_model(filter_zero_points("FULLY_CONNECTED", "INT8", (0, 1, 0, 0)), "dense")
    (refusal,) = xnnpack_refusals(model)
    assert refusal.opcode == "FULLY_CONNECTED" and refusal.operators == ((0, 0),)
    assert "'unsupported zero-point value (1) in channel 1 of INT8 tensor 1'" in refusal.reason
    model = parse_model(filter_zero_points("DEPTHWISE_CONV_2D", "INT8", 3), "depthwise")
    (refusal,) = xnnpack_refusals(model)
    assert "'unsupported quantization zero point 3 for datatype qint8'" in refusal.reason
    # A first channel's zero point: the delegate leaves the operator to the builtin kernel.
    model = parse_model(filter_zero_points("DEPTHWISE_CONV_2D", "INT8", (2, 0, 0, 0)), "first")
    assert xnnpack_refusals(model) == ()
    assert partition(model.subgraphs[0], model).delegated == ()


@pytest.mark.runtime
@pytest.mark.parametrize("case", sorted(XNNPACK_ZERO_POINTS))
def test_the_wheel_still_gives_these_xnnpack_outcomes(case: str) -> None:
    pytest.importorskip("ai_edge_litert.interpreter")
    data = filter_zero_points(*XNNPACK_ZERO_POINTS[case])
    outcome = tuple(wheel_outcome(data, d) for d in ("none", "xnnpack"))
    assert outcome == XNNPACK_ZERO_POINT_WHEEL[case]


@pytest.mark.runtime
@pytest.mark.parametrize("case", ["zp_conv_int8_channel", "zp_conv_int8_ok", "zp_conv_int4"])
def test_the_wheel_still_gives_these_outcomes(case: str) -> None:
    pytest.importorskip("ai_edge_litert.interpreter")
    assert tuple(wheel_outcome(CASES[case](), d) for d in ("none", "xnnpack")) == WHEEL[case]
