"""`arenalens diagnose` and `arenalens export` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.cli import main
from arenalens.diagnostics import RULE_IDS
from tests.diagnostics.models import chain, load, tensor_count, with_offline_plan


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.fixture
def clean_file(tmp_path: Path) -> Path:
    builder, _ = chain()
    return write(tmp_path, "clean.tflite", builder.build())


@pytest.fixture
def broken_plan_file(tmp_path: Path) -> Path:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[3], offsets[6] = 0, 256
    return write(tmp_path, "overlap.tflite", with_offline_plan(builder, offsets).build())


def test_diagnose_clean_model_exits_0(clean_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(clean_file), "--no-color"]) == 0
    out = capsys.readouterr().out
    # The number to declare leads, then the model's findings.
    first, second = out.splitlines()[:2]
    assert first.startswith("kTensorArenaSize = ")
    assert second.startswith("clean — TFLM:")
    assert "peak" in out


def test_diagnose_errors_exit_1_with_rule_location_and_fix(
    broken_plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagnose", str(broken_plan_file), "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "ERROR   offline-plan-overlap" in out
    assert "subgraph 0, tensors 3 'conv0', 6 'conv1'" in out
    assert "fix:" in out


def test_diagnose_json(broken_plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(broken_plan_file), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "arenalens.diagnose"
    assert document["counts"]["error"] >= 1
    first = document["findings"][0]
    assert set(first) == {
        "rule",
        "severity",
        "location",
        "message",
        "fix",
        "saving_bytes",
        "details",
    }
    assert first["severity"] == "error"
    assert set(first["location"]) == {"subgraph", "operator", "tensors", "text"}


def test_diagnose_fail_on_and_severity(
    clean_file: Path, broken_plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagnose", str(broken_plan_file), "--fail-on", "never"]) == 0
    assert main(["diagnose", str(clean_file), "--fail-on", "info"]) == 1
    capsys.readouterr()
    assert main(["diagnose", str(broken_plan_file), "--severity", "error", "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "INFO" not in out and "not shown" in out


def test_diagnose_rule_selection_and_alignment(
    clean_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagnose", str(clean_file), "--rule", "peak", "--json"]) == 0
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert rules == {"peak"}
    with pytest.raises(SystemExit):
        main(["diagnose", str(clean_file), "--alignment", "24"])
    assert "not a power of two" in capsys.readouterr().err
    assert main(["diagnose", str(clean_file), "--rule", "bogus"]) == 2


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--list-rules", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == list(RULE_IDS)
    assert main(["diagnose"]) == 2


def test_diagnose_batch_summary(
    tmp_path: Path, clean_file: Path, broken_plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagnose", str(tmp_path), "-j", "1", "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "clean.tflite" in out and "overlap.tflite" in out
    assert "error: cannot-run-correctly" in out


def test_diagnose_example_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "example:branchy_inception", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "example:branchy_inception"


def test_export_writes_atomically_and_protects_the_input(
    tmp_path: Path, clean_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "plan.json"
    assert main(["export", str(clean_file), "--format", "json", "-o", str(target)]) == 0
    assert json.loads(target.read_text())["schema"] == "arenalens.plan"
    assert capsys.readouterr().out == ""
    assert main(["export", str(clean_file), "-f", "csv", "-o", str(clean_file)]) == 2
    assert "refusing to overwrite the input" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_export_to_stdout(clean_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(clean_file), "-f", "minimalloc", "--with-offsets"]) == 0
    assert capsys.readouterr().out.startswith("id,lower,upper,size,offset\n")
    assert main(["export", str(clean_file), "-f", "c-header", "--prefix", "kws"]) == 0
    assert "#define KWS_ARENA_SIZE" in capsys.readouterr().out
    assert main(["export", str(clean_file), "-f", "model-explorer"]) == 0
    assert "main" in json.loads(capsys.readouterr().out)


def test_export_batch_needs_a_folder(
    tmp_path: Path, clean_file: Path, broken_plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(clean_file), str(broken_plan_file), "-f", "json"]) == 2
    assert "need -o FOLDER" in capsys.readouterr().err
    out = tmp_path / "out"
    out.mkdir()
    arguments = ["export", str(clean_file), str(broken_plan_file), "-f", "c-header"]
    # The model whose offline plan overlaps live tensors has no number to write into firmware:
    # no header for it, and the batch says so with its exit code.
    assert main([*arguments, "-o", str(out), "-j", "1"]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["clean.h"]


def test_input_shape_option_on_check(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ai_edge_litert")
    base = ["check", "example:vww_mobilenet_v1", "--budget", "10MiB", "--json"]
    assert main(base) == 0
    small = json.loads(capsys.readouterr().out)["required_bytes"]
    assert main([*base, "--input-shape", "input=1x128x128x3"]) == 0
    large = json.loads(capsys.readouterr().out)["required_bytes"]
    assert large > small
    assert main([*base, "--input-shape", "nope=1x2"]) == 2
    assert "no input named 'nope'" in capsys.readouterr().err
    assert main([*base, "--input-shape", "input=1x192x192x3"]) == 2
    assert "LiteRT cannot run the model" in capsys.readouterr().err


def test_load_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "junk.tflite", b"junk" * 10)
    assert main(["diagnose", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err
    assert load  # the helper module stays imported for its builders


def test_plan_takes_folders_and_input_shapes(
    tmp_path: Path, clean_file: Path, broken_plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # overlap.tflite's offline plan corrupts tensors: CANNOT RUN CORRECTLY, the worst exit code.
    assert main(["plan", str(tmp_path), "-j", "1", "--json"]) == 1
    entries = json.loads(capsys.readouterr().out)
    assert [Path(e["path"]).name for e in entries] == ["clean.tflite", "overlap.tflite"]
    assert all(e["arena_bytes"] >= e["lower_bound_bytes"] for e in entries)
    assert main(["plan", str(tmp_path), "--ascii"]) == 2
    assert "single MODEL" in capsys.readouterr().err
    pytest.importorskip("ai_edge_litert")
    base = ["plan", "example:vww_mobilenet_v1", "--json"]
    assert main(base) == 0
    before = json.loads(capsys.readouterr().out)["lower_bound_bytes"]
    assert main([*base, "--input-shape", "input=1x128x128x3"]) == 0
    after = json.loads(capsys.readouterr().out)["lower_bound_bytes"]
    assert after == pytest.approx(before * 16 / 9, rel=0.02)


def test_compare_takes_input_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ai_edge_litert")
    base = ["compare", "example:vww_mobilenet_v1", "--planners", "naive", "--json"]
    assert main(base) == 0
    before = json.loads(capsys.readouterr().out)
    assert main([*base, "--input-shape", "input=1x128x128x3"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["lower_bound"] == pytest.approx(before["lower_bound"] * 16 / 9, rel=0.02)
    assert main([*base, "--input-shape", "input=1x192x192x3"]) == 2


@pytest.mark.parametrize(
    ("maker", "status"),
    [("unregistered_operators_model", "cannot-run"), ("placeholder_audio_model", "placeholder")],
)
def test_compare_says_first_when_there_is_no_number_to_trust(
    maker: str, status: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare printed planner tables and exited 0 for a model TFLM cannot run, one of unknown
    input size, and an optimized model asked at another size (its offline plan corrupts
    tensors there), where plan and check answer no number first (flows6, by hand)."""
    from tests.fixtures import path_models

    path = tmp_path / "model.tflite"
    path.write_bytes(getattr(path_models, maker)())
    assert main(["compare", str(path), "--planners", "naive", "--json"]) == 1
    declare = json.loads(capsys.readouterr().out)["declare"]
    assert declare["status"].startswith(status) and declare["reasons"], declare
    assert main(["compare", str(path), "--planners", "naive"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("kTensorArenaSize") and ("none" in first or "placeholder" in first)
    assert main(["compare", "example:kws_ds_cnn", "--planners", "naive"]) == 0
    assert capsys.readouterr().out.startswith("example:kws_ds_cnn — ")
