"""`arenalens plan` and `arenalens verify` for TFLM: JSON keys, text, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from arenalens.builds.tflm import TFLM_WHEEL
from arenalens.cli import main
from arenalens.errors import RuntimeUnavailableError
from arenalens.runtimes.tflm import probe as probe_module
from arenalens.runtimes.tflm import verify as tflm_verify
from arenalens.runtimes.tflm.probe import Category, Probe

HELLO = "tflite_micro__hello_world_float.tflite"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(list(argv)) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def test_plan_json_has_the_documented_keys(shared_path: Path, capsys: Any) -> None:
    document = run_json(capsys, "plan", str(shared_path / HELLO), "--json")
    for key in (
        "runtime",
        "planner",
        "alignment",
        "arena_bytes",
        "lower_bound_bytes",
        "naive_bytes",
        "tensors",
        "head_bytes",
        "tail_bytes",
        "min_arena_bytes",
        "scratch",
    ):
        assert key in document
    assert document["runtime"] == "tflm"
    assert document["planner"] == "tflm_greedy"
    assert (document["arena_bytes"], document["head_bytes"]) == (128, 128)
    assert (document["tail_bytes"], document["min_arena_bytes"]) == (1408, 1936)
    assert document["lower_bound_bytes"] == 128
    assert document["naive_bytes"] == 160
    assert document["scratch"] == []
    first = document["tensors"][0]
    assert {k: first[k] for k in ("subgraph", "index", "bytes", "first", "last", "offset")} == {
        "subgraph": 0,
        "index": 0,
        "bytes": 4,
        "first": 0,
        "last": 1,
        "offset": 0,
    }


def test_plan_json_lists_scratch_and_absolute_addresses(shared_path: Path, capsys: Any) -> None:
    document = run_json(
        capsys,
        "plan",
        str(shared_path / "tflite_micro__transpose_conv0.tflite"),
        "--json",
        "--arena-base",
        "0x20001000",
    )
    assert document["head_bytes"] == 23_696
    (scratch,) = document["scratch"]
    assert (scratch["bytes"], scratch["operator"]) == (18_432, 0)
    assert all(t["address"] == 0x20001000 + t["offset"] for t in document["tensors"])


def test_plan_with_another_planner_and_alignment(shared_path: Path, capsys: Any) -> None:
    document = run_json(
        capsys,
        "plan",
        str(shared_path / HELLO),
        "--json",
        "--planner",
        "naive",
        "--alignment",
        "64",
    )
    assert document["planner"] == "naive"
    assert document["alignment"] == 64
    assert document["arena_bytes"] == 4 * 64
    assert document["runtime_arena_bytes"] == 2 * 64


def test_plan_text_and_ascii(shared_path: Path, capsys: Any) -> None:
    assert main(["plan", str(shared_path / HELLO)]) == 0
    text = capsys.readouterr().out
    assert "minimal arena_size" in text and "1,936 B" in text
    assert main(["plan", str(shared_path / HELLO), "--ascii"]) == 0
    assert capsys.readouterr().out.startswith("0 (id=0): size=16, offset=0, first_used=0")


def test_plan_on_a_builtin_example(capsys: Any) -> None:
    document = run_json(capsys, "plan", "example:kws_ds_cnn", "--json")
    assert document["min_arena_bytes"] >= document["head_bytes"] + document["tail_bytes"] - 8


@pytest.mark.parametrize(
    "argv",
    [
        ["--planner", "no_such_planner"],
        ["--alignment", "0"],
        ["--arena-base", "nowhere"],
    ],
)
def test_plan_usage_errors_exit_2(shared_path: Path, argv: list[str]) -> None:
    try:
        code = main(["plan", str(shared_path / HELLO), *argv])
    except SystemExit as exit_:  # argparse rejects bad option values itself
        code = int(exit_.code or 0)
    assert code == 2


def fake_probe(head: int) -> Any:
    def probe(path: str, arena_size: int, **_: Any) -> Probe:
        categories = MappingProxyType(
            {
                "TfLiteEvalTensor data": Category(240, 240, 10, "allocations"),
                "Persistent TfLiteTensor data": Category(128, 128, 2, "tensors"),
                "Persistent buffer data": Category(264, 232, 5, "allocations"),
                "NodeAndRegistration struct": Category(192, 192, 3, "structs"),
            }
        )
        return Probe(arena_size, "ok", head, 1408, head + 1408, categories)

    return probe


def as_if_installed(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """verify sees `version` as the installed tflite-micro wheel (whether one is or not)."""
    for module in (probe_module, tflm_verify):
        monkeypatch.setattr(module, "installed_version", lambda: version)


def test_verify_exit_codes_follow_the_comparison(
    shared_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_if_installed(monkeypatch, TFLM_WHEEL.wheel)
    monkeypatch.setattr(tflm_verify, "probe", fake_probe(128))
    assert main(["verify", str(shared_path / HELLO), "--runtime", "tflm"]) == 0
    assert "all predictions agree" in capsys.readouterr().out
    monkeypatch.setattr(tflm_verify, "probe", fake_probe(144))
    assert main(["verify", str(shared_path / HELLO), "--runtime", "tflm", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    head = next(row for row in document["rows"] if row["label"] == "head bytes")
    assert (head["predicted"], head["real"], head["agrees"]) == (128, 144, False)


def test_verify_without_the_runtime_extra_exits_2(
    shared_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> None:
        raise RuntimeUnavailableError(
            "tflite_micro is not installed: pip install 'arenalens[runtime]'"
        )

    monkeypatch.setattr(probe_module, "require_tflite_micro", missing)
    assert main(["verify", str(shared_path / HELLO)]) == 2
    assert "arenalens[runtime]" in capsys.readouterr().err
