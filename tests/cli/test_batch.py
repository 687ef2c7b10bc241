"""The batch layer: folders expand to models, workers run in a process pool, worst exit wins;
workers collect garbage as the command's own process does."""

from __future__ import annotations

import argparse
import gc
import json
from pathlib import Path

import pytest

from arenalens import cli
from arenalens.cli import OLDER_COLLECTIONS, YOUNG_COLLECTION_ALLOCATIONS, main
from arenalens.cli.batch import (
    ModelResult,
    expand_model_arguments,
    finish_batch,
    is_batch,
    run_models,
    working,
)
from arenalens.errors import UsageError
from tests.diagnostics.models import chain


def models_folder(tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "models"
    (folder / "nested").mkdir(parents=True)
    for index in range(count):
        builder, _ = chain(size=4 + index)
        place = folder / "nested" if index == count - 1 else folder
        (place / f"m{index}.tflite").write_bytes(builder.build())
    (folder / "notes.txt").write_text("not a model")
    return folder


def test_expand_folders_recursively_sorted_without_duplicates(tmp_path: Path) -> None:
    folder = models_folder(tmp_path)
    expanded = expand_model_arguments([str(folder), str(folder / "m0.tflite")])
    assert [Path(p).name for p in expanded] == ["m0.tflite", "m1.tflite", "m2.tflite"]
    assert is_batch([str(folder)]) and is_batch(["a", "b"]) and not is_batch(["a"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"holds no \.tflite files"):
        expand_model_arguments([str(tmp_path / "empty")])


def test_inspect_batch_runs_in_a_process_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = models_folder(tmp_path)
    assert main(["inspect", str(folder), "-j", "2", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [Path(e["path"]).name for e in entries] == ["m0.tflite", "m1.tflite", "m2.tflite"]
    assert all(e["exit_code"] == 0 and e["operator_count"] == 3 for e in entries)
    assert main(["inspect", str(folder), "-j", "2", "--no-color"]) == 0
    table = capsys.readouterr().out
    assert "3 models, 0 with a non-zero exit code" in table


def test_bad_model_does_not_stop_the_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = models_folder(tmp_path)
    (folder / "bad.tflite").write_bytes(b"\x00" * 64)
    assert main(["inspect", str(folder), "-j", "2", "--json"]) == 2
    entries = {Path(e["path"]).name: e for e in json.loads(capsys.readouterr().out)}
    assert entries["bad.tflite"]["exit_code"] == 2
    assert "not a TFLite model" in entries["bad.tflite"]["error"]
    assert entries["m0.tflite"]["exit_code"] == 0


def crash_worker(args: argparse.Namespace, path: str) -> ModelResult:
    if path.endswith("1"):
        raise RuntimeError("boom")
    return ModelResult(model=path, exit_code=1 if path.endswith("2") else 0, row={"n": 7})


def test_worker_bugs_become_exit_3_rows(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(jobs=1, json=False, no_color=True)
    results = run_models(args, ["m0", "m1", "m2"], crash_worker)
    assert [r.exit_code for r in results] == [0, 3, 1]
    assert results[1].error == "internal error: RuntimeError: boom"
    assert finish_batch(args, results, [("n", "n")], title="t") == 3
    out = capsys.readouterr().out
    assert "internal error: RuntimeError: boom" in out


def collector_worker(args: argparse.Namespace, path: str) -> ModelResult:
    return ModelResult(model=path, exit_code=0, row={"thresholds": list(gc.get_threshold())})


def test_pool_workers_collect_garbage_as_the_command_does() -> None:
    # A worker left at CPython's thresholds spent ~7% of a 1,000-model batch walking its
    # modules and models for cycles that are not there.
    args = argparse.Namespace(jobs=2, json=True, no_color=True)
    results = run_models(args, ["m0", "m1"], collector_worker)
    expected = [YOUNG_COLLECTION_ALLOCATIONS, OLDER_COLLECTIONS, OLDER_COLLECTIONS]
    assert [r.row["thresholds"] for r in results] == [expected, expected]


def test_the_command_exits_without_walking_its_objects_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The interpreter's shutdown walks every object left for cycles (~70 ms after a
    # 10,000-operator plan): the command freezes them once it has answered, then exits.
    steps: list[str] = []
    monkeypatch.setattr(cli, "install_termination_handler", lambda: None)
    monkeypatch.setattr(cli, "collect_garbage_less_often", lambda: steps.append("thresholds"))
    monkeypatch.setattr(cli, "main", lambda: steps.append("command") or 3)
    monkeypatch.setattr(gc, "freeze", lambda: steps.append("freeze"))
    with pytest.raises(SystemExit) as exit_info:
        cli.console_main()
    assert exit_info.value.code == 3
    assert steps == ["thresholds", "command", "freeze"]


def test_negative_jobs_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = models_folder(tmp_path)
    assert main(["inspect", str(folder), "-j", "-1"]) == 2
    assert "--jobs must be >= 0" in capsys.readouterr().err


def test_errors_are_listed_under_the_table_not_in_a_data_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = models_folder(tmp_path)
    (folder / "bad.tflite").write_bytes(b"\x00" * 64)
    assert main(["inspect", str(folder), "-j", "1", "--no-color"]) == 2
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("│ bad.tflite"))
    assert "not a TFLite model" not in row and "error" in row
    listed = next(line for line in out.splitlines() if line.startswith("bad.tflite: "))
    assert "not a TFLite model" in listed


class _Terminal:
    """A stand-in stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("models", "as_json", "shown"),
    [(["one.tflite"], False, True), (["one.tflite"], True, False), (["a", "b"], False, False)],
)
def test_long_step_spinner_only_for_one_model_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, models: list[str], as_json: bool, shown: bool
) -> None:
    monkeypatch.setattr("sys.stderr", _Terminal())
    context = working(argparse.Namespace(models=models, json=as_json), "optimizing")
    assert (type(context).__name__ == "Progress") is shown
