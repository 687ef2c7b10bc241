"""Issue 27's list of small items, each as the issue quoted it ("Options that disagree between
commands" and "Small:"), run on the CLI as a user types it: a size without a unit that is not a
whole number, a budget a 32-bit core cannot address, a negative budget, an unwritable report
with images, `--target` on diagnose and export, `optimize --target --kernels reference`, `plan`
on a build that cannot run the model, `arenalens.check("example:...")`, and the terminal report
and `check --target all` at 80x24 with commands wrapped so that they still paste."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import arenalens
from arenalens.cli import main
from arenalens.report.wrapping import WRAP_COMMANDS
from arenalens.tflite.builder import ModelBuilder

MODEL = "example:kws_ds_cnn"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("arenalens: error: "), err  # ours, not argparse's usage
    assert all(word in lines[0] for word in words), err


def test_a_fraction_of_a_byte_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`--budget 1.5` was 1 B."""
    code, out, err = run(capsys, "check", MODEL, "--budget", "1.5")
    _one_line_error(code, err, "'1.5'", "whole number")
    assert out == ""


def test_a_budget_a_32_bit_core_cannot_address_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--budget 5GB --cpu cortex-m7` said FITS."""
    code, _, err = run(capsys, "check", MODEL, "--budget", "5GB", "--cpu", "cortex-m7")
    _one_line_error(code, err, "32-bit", "cortex-m7")


def test_a_negative_budget_gets_our_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    """`--budget -5KB` gave argparse's message (it read -5KB as an option)."""
    code, _, err = run(capsys, "check", MODEL, "--budget", "-5KB")
    _one_line_error(code, err, "'-5KB'", "negative")


def test_an_unwritable_report_writes_no_images_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report -o /proc/x.html --images d` wrote the images, then exited 2."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "report", MODEL, "-o", "/proc/x.html", "--images", "d")
    _one_line_error(code, err, "/proc/x.html")
    assert not (tmp_path / "d").exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [("diagnose",), ("export", "--format", "json")])
def test_diagnose_and_export_take_a_target(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """They rejected --target; now they answer for the board's build, as check does."""
    code, out, err = run(capsys, command[0], MODEL, *command[1:], "--target", "nucleo-f401re")
    assert code in (0, 1), err
    _, checked, _ = run(capsys, "check", MODEL, "--target", "nucleo-f401re", "--json")
    name = json.loads(checked)["build"]["name"]
    assert name == "cortex-m4/cmsis-nn"
    assert name in out


def test_optimize_takes_a_target_with_the_kernels_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`optimize --target stm32f746 --kernels reference` exited 2 while check accepted it; it
    now ends with the fit verdict on that board for that build."""
    output = tmp_path / "o.tflite"
    argv = ("example:vww_mobilenet_v1", "--target", "stm32f746", "--kernels", "reference")
    code, out, err = run(capsys, "optimize", *argv, "-o", str(output), "--effort", "1", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["build"]["name"] == "cortex-m7/reference"
    assert document["fit"]["target"] == "stm32f746" and document["fit"]["fits"] is True
    assert output.is_file()


def test_plan_gives_no_minimal_arena_for_a_build_that_cannot_run_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`plan` printed a minimal arena (and min_arena_bytes with runs: false)."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    first = previous = graph.add_tensor("input", (1, 64), "FLOAT32")
    for index in range(3):
        output = graph.add_tensor(f"gelu_{index}", (1, 64), "FLOAT32")
        graph.add_operator("GELU", [previous], [output])
        previous = output
    graph.set_inputs([first])
    graph.set_outputs([previous])
    model = tmp_path / "gelu.tflite"
    model.write_bytes(builder.build())
    code, out, _ = run(capsys, "plan", str(model), "--cpu", "cortex-m7", "--json")
    document = json.loads(out)
    assert code == 1
    assert document["runs"] is False and document["min_arena_bytes"] is None
    code, out, _ = run(capsys, "plan", str(model), "--cpu", "cortex-m7", "--no-color")
    assert out.splitlines()[0] == "kTensorArenaSize: none — TFLM cannot run this model"


def test_the_python_api_takes_an_example_name() -> None:
    """`arenalens.check("example:...")` said 'no such file'."""
    verdict = arenalens.check(MODEL, target="nucleo-f401re")
    assert verdict.required_bytes is not None and verdict.fits


def _on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> list[str]:
    """The command's output as an 80x24 terminal shows it (commands wrapped to paste)."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(os, "get_terminal_size", lambda *_: os.terminal_size((80, 24)))
    token = WRAP_COMMANDS.set(True)
    try:
        main([*argv, "--no-color"])
    finally:
        WRAP_COMMANDS.reset(token)
    return capsys.readouterr().out.splitlines()


def _commands(lines: list[str]) -> list[str]:
    """The commands in the output, each continuation joined as the shell joins it."""
    found: list[str] = []
    joined = ""
    for line in lines:
        text = line.strip()
        if not joined and not text.startswith("arenalens "):
            continue
        joined += text.removesuffix("\\")
        if not text.endswith("\\"):
            found.append(" ".join(shlex.split(joined)))
            joined = ""
    return found


def _json_commands(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    main([*argv, "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    steps = document.get("next_steps") or document["reports"][0]["verdict"]["steps"]
    return [" ".join(shlex.split(step["command"])) for step in steps if step["command"]]


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "example:vww_mobilenet_v1", "--target", "nucleo-f401re"),
        ("report", MODEL),
        ("report", MODEL, "--target", "bluepill-f103c8"),
    ],
)
def test_the_terminal_report_fits_80x24_and_its_commands_paste(
    argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was 46-51 lines at 80x24, with commands cut at 80 columns."""
    lines = _on_a_terminal(monkeypatch, capsys, *argv)
    assert len(lines) <= 24, "\n".join(lines)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    whole = _json_commands(capsys, *argv)
    assert _commands(lines) == whole  # each pastes as the command the JSON names
    if any(len(command) > 74 for command in whole):
        assert any(line.endswith(" \\") for line in lines)  # a long one, wrapped


def test_check_target_all_stays_80_columns_wide(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --target all` was 105 lines with cut commands; its table is the first screen,
    every line within 80 columns."""
    lines = _on_a_terminal(monkeypatch, capsys, "check", MODEL, "--target", "all")
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert len(lines) <= 60, len(lines)
    assert any("--all lists them" in line for line in lines)


def test_a_library_named_keeps_the_plan_right_on_every_library_when_it_is_as_small() -> None:
    """`--kernels cmsis-nn` kept a CMSIS-NN-only plan where a plan valid on every library was as
    small: kws_ds_cnn's best overlapping plan and best disjoint one both declare 22,824 B on
    cortex-m7/cmsis-nn, and the disjoint one (right on every library) is written."""
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model

    optimization = optimize_model(
        example_bytes("kws_ds_cnn"),
        overlap=True,
        build="cortex-m7/cmsis-nn",
        effort=1.0,
        prove_inplace=False,
    )
    shared = [c.required_bytes for c in optimization.candidates if c.shared]
    disjoint = [c.required_bytes for c in optimization.candidates if not c.shared]
    assert shared and min(shared) == min(disjoint) == optimization.new_required_bytes
    assert optimization.valid_for == ()  # right on every build


def test_the_reserve_step_names_the_most_the_firmware_may_keep() -> None:
    """Short only by the board's assumed firmware: the step says the most the firmware may keep
    (available + reserve − required), and that figure, given with --reserve, fits to the byte."""
    board = "efr32bg22"  # 16 KiB assumed for a Bluetooth firmware; kws_ds_cnn is 6,440 B short
    short = arenalens.check(MODEL, target=board)
    assert short.fit is not None and short.fit.headroom_bytes < 0
    most = short.fit.reserve_bytes + short.fit.headroom_bytes
    assert any(f"keeps at most {most:,} B" in step for step in short.next_steps), short.next_steps
    for reserve, headroom in ((most, 0), (most + 1, -1)):
        fit = arenalens.check(MODEL, target=board, reserve=reserve).fit
        assert fit is not None and fit.headroom_bytes == headroom
