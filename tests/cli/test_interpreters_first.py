"""A command whose options run a real interpreter refuses at once when its wheel is missing:
the same one-line error and exit code 2 its path gave, but before any work and with no output
file (flows9: `optimize --split` planned for 23 s on vww_mobilenet_v1, `check --max-input` 12 s,
then stopped with it). The wheels are hidden from `importlib.util.find_spec`, the look-up every
runtime's own check makes, so the messages are the runtimes' own."""

from __future__ import annotations

import importlib.util
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import pytest

from arenalens.cli import main
from arenalens.errors import RuntimeUnavailableError
from arenalens.examples import write_example
from arenalens.runtimes.door import tflm_runtime
from arenalens.tflite.reader import load_model

TFLM_PROOF = (
    "arenalens: error: proving outputs needs the real TFLM interpreter: the real TFLM "
    "interpreter (package 'tflite_micro') is not installed: pip install 'arenalens[runtime]'"
)
TFLM_VERIFY = (
    "arenalens: error: the real TFLM interpreter (package 'tflite_micro') is not installed: "
    "pip install 'arenalens[runtime]'"
)
LITERT_SHAPES = (
    "arenalens: error: --input-shape propagates shapes with the real LiteRT interpreter, which "
    "is not installed: pip install 'arenalens[runtime]'"
)
LITERT_VERIFY = (
    "arenalens: error: verifying against LiteRT needs the ai_edge_litert package: "
    "pip install 'arenalens[runtime]'"
)
MODEL = "example:kws_ds_cnn"

# Each path that runs a real interpreter (the README's list), and what it says without it.
REFUSED = [
    (["optimize", MODEL, "--split"], TFLM_PROOF),
    (["optimize", MODEL, "--overlap"], TFLM_PROOF),
    (["optimize", MODEL, "--inplace"], TFLM_PROOF),
    (["optimize", MODEL, "--input-shape", "0=1x49x10x1"], LITERT_SHAPES),
    (["check", MODEL, "--budget", "20KB", "--max-input"], LITERT_SHAPES),
    (["check", MODEL, "--target", "nucleo-f401re", "--input-shape", "0=1x49x10x1"], LITERT_SHAPES),
    (["report", MODEL, "--max-input", "--target", "nucleo-f401re"], LITERT_SHAPES),
    (["report", MODEL, "--compare-input-shape", "0=1x98x10x1"], LITERT_SHAPES),
    (["plan", MODEL, "--input-shape", "0=1x49x10x1"], LITERT_SHAPES),
    (["diagnose", MODEL, "--input-shape", "0=1x49x10x1"], LITERT_SHAPES),
    (["verify", MODEL], TFLM_VERIFY),
    (["verify", MODEL, "--runtime", "litert"], LITERT_VERIFY),
]
# Paths that run no interpreter: the missing wheels change nothing.
NOT_REFUSED = [
    ["optimize", MODEL],
    ["check", MODEL, "--target", "nucleo-f401re"],
    ["report", MODEL, "--overlap"],
    ["compare", MODEL, "--overlap"],
]
WHEELS = ("tflite_micro", "ai_edge_litert")


def without_wheels(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a venv installed without the `runtime` extra: neither wheel is found."""
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        if name.partition(".")[0] in WHEELS:
            return None
        return real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def record_handlers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace every command's handler by one that records it ran (the work a refusal must come
    before) and returns 0."""
    from arenalens.cli import COMMANDS

    ran: list[str] = []
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"arenalens.cli.{module_name}")

        def handler(args: Any, name: str = name) -> int:
            ran.append(name)
            return 0

        monkeypatch.setattr(module, "run", handler)
    return ran


@pytest.mark.parametrize(("argv", "message"), REFUSED, ids=[" ".join(argv) for argv, _ in REFUSED])
def test_a_path_that_runs_a_missing_interpreter_refuses_before_any_work(
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_wheels(monkeypatch)
    ran = record_handlers(monkeypatch)
    output = tmp_path / "out.tflite"
    extra = ["-o", str(output)] if argv[0] == "optimize" else []
    assert main([*argv, *extra]) == 2
    assert ran == []
    assert capsys.readouterr().err.strip() == message
    assert not output.exists()


@pytest.mark.parametrize("argv", NOT_REFUSED, ids=" ".join)
def test_a_path_that_runs_no_interpreter_runs_without_the_wheels(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_wheels(monkeypatch)
    ran = record_handlers(monkeypatch)
    extra = ["-o", str(tmp_path / "out.tflite")] if argv[0] == "optimize" else []
    assert main([*argv, *extra]) == 0
    assert ran == [argv[0]]


def test_no_verify_keeps_its_usage_error_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --no-verify the path runs no interpreter: the option's own refusal is the answer."""
    without_wheels(monkeypatch)
    argv = ["optimize", MODEL, "--split", "--no-verify", "-o", str(tmp_path / "out.tflite")]
    assert main(argv) == 2
    assert "drop --no-verify" in capsys.readouterr().err


def test_the_deep_path_says_what_the_refusal_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The up-front check and the proof that would have run after the planning raise one text."""
    without_wheels(monkeypatch)
    with pytest.raises(RuntimeUnavailableError) as up_front:
        tflm_runtime().require_proof()
    with pytest.raises(RuntimeUnavailableError) as deep:
        tflm_runtime().prove_outputs(b"", b"", load_model(write_example("kws_ds_cnn", tmp_path)))
    assert str(up_front.value) == str(deep.value) == TFLM_PROOF.removeprefix("arenalens: error: ")
