"""An IF or WHILE that runs Eval_dynamic gets no interpreter heap (heap_control_flow): check
exits 2 with the reason, and every other renderer says the same reason where the heap would
be: plan (terminal and --json: `interpreter_heap_unsized`) and export --format json; report
and export --format c-header give check's figure, so they exit 2 with it; the Python API
(arenalens.check, interpreter_heap) raises it. Before, plan and
export --format json showed the arenas without heap rows and without saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import arenalens
from arenalens.cli import main
from arenalens.errors import UsageError
from arenalens.litert_memory import heap_unsized
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.heap_control_flow import control_flow_refusal
from tests.litert_control_flow_heap_cases import (
    control_flow_heap_case,
    reshaping_if,
    reshaping_while,
)

MODELS = {"while": lambda: reshaping_while(3), "if": reshaping_if}


@pytest.fixture(params=sorted(MODELS))
def reshaping(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """A reshaping model's path, and check's reason (its one-line error without the model)."""
    path = tmp_path / f"reshaping_{request.param}.tflite"
    path.write_bytes(MODELS[request.param]())
    reason = control_flow_refusal(analyze(path, runtime="litert").model)
    assert "Eval_dynamic" in reason
    return path, reason


def _one_line(text: str) -> str:
    """Terminal text with its table's wrapping undone (rich wraps a long cell in its column)."""
    return " ".join(text.replace("│", " ").split())


def _run(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_gives_the_reason(
    reshaping: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, reason = reshaping
    code, _, err = _run(["check", str(path), "--runtime", "litert", "--budget", "64M"], capsys)
    assert code == 2
    assert reason in err


def test_plan_says_why_there_is_no_heap(
    reshaping: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, reason = reshaping
    code, out, _ = _run(["plan", str(path), "--runtime", "litert", "--json"], capsys)
    assert code == 0  # the arenas are planned: only the heap has no figure
    document = json.loads(out)
    assert document["interpreter_heap"] == []
    assert document["interpreter_heap_unsized"] == reason
    code, out, _ = _run(["plan", str(path), "--runtime", "litert"], capsys)
    assert code == 0
    assert f"no figure: {reason}" in _one_line(out)


def test_report_refuses_with_the_reason(
    reshaping: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """report gives check's verdict (the model file + the heap): it exits 2 as check does,
    writing no page."""
    path, reason = reshaping
    page = tmp_path / "report.html"
    for extra in ([], ["--json"], ["-o", str(page)]):
        code, _, err = _run(["report", str(path), "--runtime", "litert", *extra], capsys)
        assert code == 2, extra
        assert reason in err
    assert not page.exists()


def test_exports_say_why_there_is_no_heap(
    reshaping: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, reason = reshaping
    arguments = ["export", str(path), "--runtime", "litert", "--format"]
    code, out, _ = _run([*arguments, "json"], capsys)
    assert code == 0
    assert json.loads(out)["interpreter_heap_unsized"] == reason
    code, out, err = _run([*arguments, "c-header"], capsys)
    assert code == 2  # a header has a number or is not written, as check
    assert reason in err


def test_a_model_with_a_heap_has_no_such_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "while.tflite"
    path.write_bytes(control_flow_heap_case(7))
    _, out, _ = _run(["plan", str(path), "--runtime", "litert", "--json"], capsys)
    document = json.loads(out)
    assert document["interpreter_heap"]
    assert "interpreter_heap_unsized" not in document


def test_the_python_api_gives_the_reason(reshaping: tuple[Path, str]) -> None:
    """arenalens.check (a budget, a Linux board, either delegate) raises check's one-line
    error, and interpreter_heap the same reason; litert_memory.heap_unsized names it."""
    path, reason = reshaping
    for arguments in (
        {"runtime": "litert", "budget": "64M"},
        {"runtime": "litert", "budget": "64M", "delegate": "none"},
        {"target": "raspberry-pi-zero-2-w"},
    ):
        with pytest.raises(UsageError) as raised:
            arenalens.check(path, **arguments)
        assert str(raised.value) == f"{path.stem}: {reason}", arguments
    analysis = arenalens.analyze(path, runtime="litert")
    assert heap_unsized(analysis) == reason
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for delegate in ("xnnpack", "none"):
        with pytest.raises(ValueError) as refused:
            interpreter_heap(analysis.model, sizes, delegate=delegate)
        assert str(refused.value) == reason, delegate


@pytest.mark.runtime
def test_verify_says_why_there_is_no_heap(
    reshaping: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """verify compares the arenas (the IF's or WHILE's outputs dynamic: no arena address on
    the wheel either) and says the heap's reason, as plan does (text and --json)."""
    pytest.importorskip("ai_edge_litert")
    path, reason = reshaping
    code, out, _ = _run(["verify", str(path), "--runtime", "litert", "--json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["agrees"]
    assert document["interpreter_heap_unsized"] == reason
    code, out, _ = _run(["verify", str(path), "--runtime", "litert"], capsys)
    assert code == 0
    assert f"no figure: {reason}" in _one_line(out)
