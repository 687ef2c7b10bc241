"""Cannot run and placeholder shapes: the answer before any size (plan, check, diagnose, report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.builds.build import as_build
from arenalens.cli import main
from arenalens.runtimes.tflm import support as support_module
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import load_model, parse_model
from tests.conformance.models import INT8_Q
from tests.conftest import SHARED_MODELS, shared_params, shared_reference


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def custom_op_model() -> bytes:
    """A RELU, then a custom operator no TFLM build registers."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 16])
    y = graph.add_tensor("y", [1, 16])
    z = graph.add_tensor("z", [1, 16])
    graph.add_operator("RELU", [x], [y])
    graph.add_operator("CUSTOM:MyFancyOp", [y], [z], custom_options=b"")
    graph.set_inputs([x])
    graph.set_outputs([z])
    return builder.build()


def hybrid_model() -> bytes:
    """FULLY_CONNECTED with float input and int8 weights: TFLM refuses hybrid models."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    weights = graph.add_constant("w", np.ones((4, 8), np.int8), quantization=INT8_Q)
    y = graph.add_tensor("y", [1, 4])
    graph.add_operator("FULLY_CONNECTED", [x, weights, -1], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


def placeholder_model() -> bytes:
    """An audio input stored as 1x1 whose signature says -1x-1."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("audio", [1, 1], shape_signature=[-1, -1])
    y = graph.add_tensor("y", [1, 1], shape_signature=[-1, -1])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_support_names_the_operator_and_why() -> None:
    found = support(parse_model(custom_op_model(), "custom"))
    assert not found.sets_up and not found.runs
    (obstacle,) = found.obstacles
    assert (obstacle.subgraph, obstacle.operator, obstacle.opcode) == (0, 1, "CUSTOM:MyFancyOp")
    assert "no kernel" in obstacle.reason and "MyFancyOp" in obstacle.reason
    hybrid = support(parse_model(hybrid_model(), "hybrid")).obstacles
    assert [o.opcode for o in hybrid] == ["FULLY_CONNECTED"]
    # TFLM's own message (fully_connected.cc): float input, int8 weights.
    assert hybrid[0].reason == "Input type: FLOAT32 with filter type: INT8 not supported."


def test_plan_json_says_it_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "custom.tflite", custom_op_model())
    code, out = run(capsys, "plan", path, "--json")
    document: dict[str, Any] = json.loads(out)
    assert code == 1  # no number to trust: the plan is printed, and it says so
    assert document["runs"] is False
    assert document["declare"]["status"] == "cannot-run"
    (reason,) = document["cannot_run"]
    assert reason["operator"] == 1 and reason["opcode"] == "CUSTOM:MyFancyOp"
    assert reason["phase"] == "setup"
    code, out = run(capsys, "export", path, "--format", "json")
    assert json.loads(out)["runs"] is False


def test_check_says_cannot_run_first_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "hybrid.tflite", hybrid_model())
    code, out = run(capsys, "check", path, "--budget", "1MiB")
    assert code == 1
    first, second = out.splitlines()[:2]
    assert "cannot run" in first
    assert second.startswith("CANNOT RUN")
    assert "FITS" not in out
    code, out = run(capsys, "check", path, "--budget", "1MiB", "--json")
    assert code == 1


def test_diagnose_reports_cannot_run_as_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "custom.tflite", custom_op_model())
    code, out = run(capsys, "diagnose", path, "--json")
    assert code == 1
    findings = [f for f in json.loads(out)["findings"] if f["rule"] == "cannot-run"]
    assert len(findings) == 1
    assert findings[0]["severity"] == "error"
    assert findings[0]["location"]["operator"] == 1


def test_a_model_that_runs_has_no_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "plan", "example:kws_ds_cnn", "--json")
    document = json.loads(out)
    assert (code, document["runs"], document["cannot_run"]) == (0, True, [])


def test_check_refuses_to_answer_for_a_placeholder_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "placeholder.tflite", placeholder_model())
    code, out = run(capsys, "check", path, "--budget", "64KB")
    assert code == 1
    assert "FITS" not in out
    assert "INPUT SHAPE UNKNOWN" in out
    assert "--input-shape" in out
    document = json.loads(run(capsys, "check", path, "--budget", "64KB", "--json")[1])
    assert document["declare"]["status"] == "placeholder-shape"


@pytest.mark.runtime
def test_check_answers_once_the_real_shape_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ai_edge_litert")
    path = _write(tmp_path, "placeholder.tflite", placeholder_model())
    code, out = run(capsys, "check", path, "--budget", "64KB", "--input-shape", "audio=1x16000")
    # 2 x 64,000 B of float32 audio do not fit in 64 KiB as given; the RELU's output sliding over
    # its input (--overlap) does, and the printed command carries the shape.
    assert code == 1
    assert "FITS AFTER OPTIMIZE" in out and "64,792 B" in out
    assert "--input-shape audio=1x16000 -o optimized.tflite --overlap" in out
    code, out = run(capsys, "check", path, "--budget", "256KB", "--input-shape", "audio=1x16000")
    assert code == 0
    assert out.splitlines()[1].startswith("FITS")


def test_diagnose_warns_and_suggests_a_real_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "placeholder.tflite", placeholder_model())
    _, out = run(capsys, "diagnose", path, "--json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "dynamic-shape"]
    assert finding["severity"] == "warning"
    assert "audio=1x<size of dim 1>" in finding["fix"]
    assert "audio=1x1'" not in finding["fix"]


def test_the_html_report_says_it_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "custom.tflite", custom_op_model())
    output = tmp_path / "report.html"
    run(capsys, "report", path, "-o", str(output))
    page = output.read_text()
    summary = page.split('id="static-summary">', 1)[1].split("</p>", 1)[0]
    assert summary.startswith("kTensorArenaSize: none, the runtime cannot run this model")
    assert "MyFancyOp" in summary


@pytest.mark.parametrize("name", shared_params())
def test_litert_cannot_run_exactly_the_models_with_unresolved_custom_ops(name: str | None) -> None:
    from arenalens.runtimes.litert.refusals import unresolved_custom_operators

    assert name is not None
    real = shared_reference()[name]["litert"]
    unresolved = "unresolved custom op" in str(real.get("error", ""))
    obstacles = unresolved_custom_operators(load_model(SHARED_MODELS / name))
    assert bool(obstacles) == unresolved


SVDF_TYPES = [("INT16", "INT16"), ("INT8", "INT8"), ("INT16", "INT8"), ("INT8", "INT16")]


@pytest.mark.parametrize("build", ["host", "cortex-m7/reference", "cortex-m55/cmsis-nn"])
def test_an_svdf_state_of_another_type_than_its_time_weights_cannot_run(build: str) -> None:
    """Prepare takes int8 or int16 for each, but Eval (reference and CMSIS-NN) reads the state
    as the time weights' type: a mismatch sets up and cannot be invoked."""
    from arenalens.pipeline import runtime_build
    from tests.conformance.cases.nn.recurrent import svdf

    chosen = runtime_build("tflm", None if build == "host" else build)
    for time, state in SVDF_TYPES:
        model = parse_model(svdf("INT8", time_weights=time, state=state)(), "svdf")
        found = support(model, chosen)
        assert found.sets_up
        assert found.runs == (time == state), (time, state, found.obstacles)
        if time != state:
            assert (
                "reads its activation state as its time weights' type" in found.obstacles[0].text()
            )


@pytest.mark.runtime
def test_the_wheel_cannot_invoke_an_int8_svdf_state_with_int16_time_weights() -> None:
    """Live: the matched types run; an int8 state under int16 time weights is read out of
    bounds (the child dies or Invoke fails), as support says."""
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.run import random_inputs, run_model
    from tests.conformance.cases.nn.recurrent import svdf

    for time, state in (("INT16", "INT16"), ("INT8", "INT8"), ("INT16", "INT8")):
        data = svdf("INT8", time_weights=time, state=state)()
        model = parse_model(data, "svdf")
        result = run_model(data, random_inputs(model), output_count=1)
        assert result.ok == support(model).runs == (time == state), (time, state, result.error)


def test_plain_operators_are_told_without_asking_each_for_its_obstacles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An operator whose events hold no refusal, rewritten shape or estimate, with no output
    # dim <= 0, has no obstacle: support tells it from the event types the setup
    # holds. The RELU here is one; the custom operator (no kernel) is asked.
    asked: list[str] = []
    original = support_module._operator_obstacles

    def counted(setup: Any, positive_shapes: bool = False) -> Any:
        asked.append(setup.context.operator.opcode)
        return original(setup, positive_shapes)

    monkeypatch.setattr(support_module, "_operator_obstacles", counted)
    found = support(parse_model(custom_op_model(), "<custom>"), as_build("cortex-m7/cmsis-nn"))
    assert asked == ["CUSTOM:MyFancyOp"]
    assert [o.opcode for o in found.obstacles] == ["CUSTOM:MyFancyOp"]
