"""The README's promises: its first lines are the two commands, and its Python snippets run."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from arenalens.examples import write_example
from tests.readme_examples import (
    CORPUS_FILE,
    CORPUS_SHORT,
    README,
    all_console_examples,
    console_examples,
    corpus_console_examples,
    lines_not_printed,
    shown_under,
)


def assert_prints_what_readme_shows(
    command: str, shown: list[str], printed: pytest.CaptureResult[str]
) -> None:
    """Every line the README shows under `command` is among what it printed (stdout or stderr)."""
    missing = lines_not_printed(shown, printed.out + printed.err)
    assert not missing, f"{command}: the README shows lines it no longer prints: {missing}"


def python_snippets() -> list[str]:
    """Every ```python block of the README."""
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_starts_with_the_two_commands() -> None:
    lines = README.read_text().splitlines()
    assert lines[0] == "```sh"
    assert "arenalens demo" in lines[1] and lines[1].startswith("pip install")
    assert "python -m pytest" in lines[2] and lines[2].startswith("pip install -e")
    assert lines[3] == "```"


# Options whose commands need the `runtime` extra (the real interpreters), beyond the demo's.
RUNTIME_OPTIONS = ("--input-shape", "--max-input", "--compare-input-shape", "--overlap", "--split")


def test_the_readme_says_which_extra_a_command_needs_before_its_first_use() -> None:
    """A new user installs what the first line says (`.[images]`); the first command that
    needs the real interpreters came 270 lines before any word of `.[runtime]` (found walking
    the README in a fresh venv: `check example:mobilenet_v1_224 --max-input` stopped with
    "not installed" after 105 s)."""
    text = README.read_text()
    commands = re.finditer(r"^\$ (arenalens [^\n]*)", text, re.M)
    first = next(
        match.start()
        for match in commands
        if any(option in match.group(1).split() for option in RUNTIME_OPTIONS)
        or match.group(1).startswith("arenalens verify")
    )
    assert 'pip install ".[runtime]"' in " ".join(text[:first].split())


@pytest.mark.parametrize("index", range(len(python_snippets())))
def test_python_snippet_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = write_example("kws_ds_cnn", tmp_path)
    (tmp_path / "model.tflite").write_bytes(model.read_bytes())
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "snippet.py"
    script.write_text(python_snippets()[index])
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        from arenalens.planning.registry import PLANNERS

        # Snippets may register example planners; keep the registry as other tests expect it.
        for name in ("by_first_use",):
            PLANNERS.pop(name, None)


SCENARIO_HEADING = "**How large an input can I afford?**"


def scenario_commands() -> list[str]:
    """The `$ arenalens ...` commands of the README's input-size scenario, in order."""
    text = README.read_text()
    section = text.split(SCENARIO_HEADING, 1)[1].split("\n## ", 1)[0].split("\n**", 1)[0]
    found = []
    for block in re.findall(r"```console\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ arenalens "):
                command = line[2:].split("  #", 1)[0].strip()
                found.append(command)
    return found


@pytest.mark.runtime
def test_the_input_size_scenario_runs_as_printed_with_every_command_it_suggests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 224x224 model on a 320 KB STM32F746: each command the README prints runs, and so does
    every command those print as a next step (in order: an optimize, then a check of its file)."""
    pytest.importorskip("ai_edge_litert")
    pytest.importorskip("tflite_micro")
    import json
    import shlex

    from arenalens.cli import main

    monkeypatch.chdir(tmp_path)
    commands = scenario_commands()
    shown: dict[str, list[str]] = {}
    for found, lines in all_console_examples():
        shown.setdefault(found, lines)
    assert len(commands) >= 3
    assert commands[0].startswith("arenalens check example:mobilenet_v1_224 --target stm32f746")
    seen: set[str] = set()
    for command in commands:
        words = shlex.split(command)[1:]
        if command in seen and words[0] == "optimize":
            continue  # a step of an earlier check ran this very rewrite (a split search) already
        code = main(words)
        captured = capsys.readouterr()
        assert code in (0, 1) and not captured.err, (command, captured.err)
        # What the README shows under it is what it printed (the searches run nowhere else).
        missing = lines_not_printed(shown.get(command, []), captured.out)
        assert not missing, f"{command}: the README shows lines it no longer prints: {missing}"
        if words[0] not in ("check", "report") or "--json" in words:
            continue
        main([*words, "--json"])
        document = json.loads(capsys.readouterr().out)
        steps = document.get("next_steps") or (document["reports"][0]["verdict"] or {}).get(
            "steps", []
        )
        for step in steps:
            suggested = step["command"]
            if not suggested or suggested in seen:
                continue
            seen.add(suggested)
            code = main(shlex.split(suggested)[1:])
            captured = capsys.readouterr()
            assert code in (0, 1) and not captured.err, (suggested, captured.err)


def test_the_input_size_scenario_is_what_real_tflm_needs_on_the_board() -> None:
    """Its three figures are the Cortex-M7 CMSIS-NN probe's minimal arenas (measured under QEMU,
    cached with each model's sha256), arenalens predicts each of them, and the README says them."""
    pytest.importorskip("ai_edge_litert")
    import hashlib

    import arenalens
    from arenalens.examples import example_bytes
    from tests.device_reference import examples
    from tests.device_scenario import BOARD, TARGET, cached, scenario_models

    measured = {"example:mobilenet_v1_224": examples()[TARGET]["example:mobilenet_v1_224"]}
    models = {"example:mobilenet_v1_224": example_bytes("mobilenet_v1_224")}
    for step, data in scenario_models().items():
        figures = cached()[step]
        # Every step, the split one included, writes the very bytes that were measured: its
        # searches stop on counted work (`arenalens.effort`), so the file is the same on every
        # machine and under any load (any two runs equal this one hash).
        assert hashlib.sha256(data).hexdigest() == figures["sha256"], (
            f"{step} writes other bytes than were measured: python -m tests.device_scenario"
        )
        measured[step], models[step] = figures, data
    text = README.read_text()
    for step, figures in measured.items():
        needed = figures["min_arena_plain"]
        assert arenalens.check(models[step], target=BOARD).required_bytes == needed, step
        assert f"{needed:,} B" in text, step


@pytest.mark.parametrize(("command", "shown"), console_examples(), ids=lambda v: str(v)[:60])
def test_console_examples_show_what_the_command_prints(
    command: str,
    shown: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every line the README shows under a command is in what that command prints today (up to
    line wrapping and column padding; `...` elides). A stale example misleads a new user: the
    demo's verdict line and the board table had drifted from the real output."""
    import shlex

    from arenalens.cli import main

    monkeypatch.chdir(tmp_path)
    main(shlex.split(command)[1:])
    assert_prints_what_readme_shows(command, shown, capsys.readouterr())


@pytest.mark.parametrize(("command", "shown"), corpus_console_examples(), ids=lambda v: str(v)[:60])
def test_console_examples_of_a_shared_model_show_what_the_command_prints(
    command: str,
    shown: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As above, for the examples of a shared-corpus model named by its file (run beside it):
    the LiteRT heap row of `plan mlperf_tiny__vww_96_int8.tflite --runtime litert` had drifted
    by 16-56 B per figure from what the command printed, silently."""
    import shlex

    from arenalens.cli import main
    from tests.conftest import SHARED_MODELS, SHARED_REASON

    if not SHARED_MODELS.is_dir():
        pytest.skip(SHARED_REASON)
    if "optimize" in command.split():
        pytest.importorskip("tflite_micro")  # --overlap keeps only what real TFLM proves
    if command.split()[1] == "vela":
        pytest.importorskip("ethosu.vela")  # the `npu` extra
    for word in shlex.split(command):
        if CORPUS_FILE.match(word) or word in CORPUS_SHORT:
            (tmp_path / word).symlink_to(SHARED_MODELS / CORPUS_SHORT.get(word, word))
    monkeypatch.chdir(tmp_path)
    main(shlex.split(command)[1:])
    assert_prints_what_readme_shows(command, shown, capsys.readouterr())


OVERLAP_REWRITE = (
    "arenalens optimize example:vww_mobilenet_v1 -o ref.tflite --overlap --cpu cortex-m7 "
    "--kernels reference"
)
OVERLAP_CHECK = "arenalens check ref.tflite --cpu cortex-m7 --kernels cmsis-nn --budget 320KB"


@pytest.mark.runtime
def test_the_overlap_example_shows_what_check_prints_of_the_rewritten_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan made for the reference kernels, checked on CMSIS-NN: the README quoted a
    `wrong outputs:` line the check no longer printed (it says `cannot run correctly:`)."""
    pytest.importorskip("tflite_micro")
    import shlex

    from arenalens.cli import main

    assert f"$ {OVERLAP_REWRITE}\n$ {OVERLAP_CHECK}\n" in README.read_text()
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(OVERLAP_REWRITE)[1:]) == 0
    capsys.readouterr()
    assert main(shlex.split(OVERLAP_CHECK)[1:]) == 1
    assert_prints_what_readme_shows(OVERLAP_CHECK, shown_under(OVERLAP_CHECK), capsys.readouterr())


def test_the_two_bank_example_shows_what_check_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The NUCLEO-H743ZI placement example is of a generated model the README names
    (`bank_two_banks`); it quoted `FITS  model on ...`, a model no reader had."""
    import shlex

    from arenalens.cli import main
    from tests.fixtures.bank_models import TWO_BANKS

    command = "arenalens check bank_two_banks.tflite --target nucleo-h743zi"
    name, build = TWO_BANKS
    (tmp_path / f"{name}.tflite").write_bytes(build())
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(command)[1:]) == 0
    assert_prints_what_readme_shows(command, shown_under(command), capsys.readouterr())


VELA_COMPILE = (
    "vela kws_ds_cnn.tflite --accelerator-config ethos-u65-256 --memory-mode Dedicated_Sram"
)
VELA_CHECK = (
    "arenalens check output/kws_ds_cnn_vela.tflite --cpu cortex-m55 --npu ethos-u65-256 "
    "--budget 30KiB"
)


def test_the_ethos_u_example_shows_what_check_prints_of_vela_s_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's three commands as a new user runs them: the demo writes the example's file
    (the README never said where kws_ds_cnn.tflite came from), Arm's Vela compiles it, and
    `check` of Vela's file prints the lines shown."""
    pytest.importorskip("ethosu.vela")
    import shlex
    import subprocess
    import sys

    from arenalens.cli import main

    demo = "arenalens demo --example kws_ds_cnn -o ."
    assert f"$ {demo}  " in README.read_text() and f"$ {VELA_COMPILE}\n$ {VELA_CHECK}\n" in (
        README.read_text()
    )
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(demo)[1:]) == 0
    words = shlex.split(VELA_COMPILE)
    subprocess.run([sys.executable, "-m", "ethosu.vela", *words[1:]], check=True, cwd=tmp_path)
    capsys.readouterr()
    assert main(shlex.split(VELA_CHECK)[1:]) == 1
    assert_prints_what_readme_shows(VELA_CHECK, shown_under(VELA_CHECK), capsys.readouterr())


PSRAM_REWRITE = (
    "arenalens optimize example:mobilenet_v1_224 --target esp32-s3-devkitc-1-n8r8 "
    "-o optimized.tflite --overlap --split"
)


@pytest.mark.runtime
def test_the_psram_example_s_rewrite_shows_what_optimize_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The N8R8 step `check` suggests, run as printed: the written model's verdict and placement
    (279,272 B in internal-dram) are the README's (no other test ran this search)."""
    pytest.importorskip("tflite_micro")
    import shlex

    from arenalens.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(PSRAM_REWRITE)[1:]) == 0
    assert_prints_what_readme_shows(PSRAM_REWRITE, shown_under(PSRAM_REWRITE), capsys.readouterr())
