"""--tflm RELEASE through the commands: the figures of that TFLM release (the older wheels'
measurements), named in the JSON `build`, under the number in the terminal and HTML, carried by
the commands a report suggests; releases outside the history refused in one line; verify saying
which of TFLM's changes between two releases move a model's figures."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from arenalens.builds.build import build_summary, host_build
from arenalens.builds.tflm import TFLM_WHEEL, tflm_release, wheel_release
from arenalens.cli import main
from arenalens.runtimes.tflm import probe as probe_module
from arenalens.runtimes.tflm import verify as tflm_verify
from arenalens.runtimes.tflm.probe import Probe
from tests.conformance.measure import load_models

EXAMPLE = "example:fc_autoencoder"  # ten FULLY_CONNECTED: its tail moves with two changes


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def figures(document: dict[str, Any]) -> tuple[int, int, int]:
    return document["head_bytes"], document["tail_bytes"], document["min_arena_bytes"]


@pytest.mark.parametrize(
    ("asked", "wheel", "commit"),
    [
        ("2025-01", "0.dev20250107191040", "9b79b9f"),
        ("2025-08", "0.dev20250808035851", "3b20912"),
        ("0.dev20250808035851", "0.dev20250808035851", "2b3f8d0"),
        ("2026-02", "0.dev20260202175109", "f2b2b3f"),
    ],
)
def test_plan_gives_the_releases_measured_figures_and_names_the_release(
    capsys: pytest.CaptureFixture[str], asked: str, wheel: str, commit: str
) -> None:
    """A month is TFLM at its newest commit, which has the same changes as the month's wheel:
    the figures are the ones that wheel measured (tests/conformance/data/host@<wheel>)."""
    measured = load_models(f"host@{wheel}")[EXAMPLE]
    document = run_json(capsys, "plan", EXAMPLE, "--tflm", asked)
    assert figures(document) == (measured["head"], measured["tail"], measured["min_arena"])
    tflm = document["build"]["tflm"]
    assert tflm["release"] == commit
    assert tflm["title"].startswith(f"TFLM {commit} (")
    assert document["build"]["name"] == f"host@{commit}"
    assert document["declare"]["device"] == f"64-bit host build, {tflm['title']}"


def test_the_terminal_names_the_release_under_the_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", EXAMPLE, "--tflm", "2025-08", "--no-color"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kTensorArenaSize = 4,472 B")
    assert lines[1] == (
        "figure for: 64-bit host build, TFLM 3b20912 (2025-08-25, the newest commit of 2025-08)"
    )


def test_the_html_report_names_the_release_with_the_number(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", EXAMPLE, "--tflm", "2025-01", "-o", str(page), "--no-color"]) == 0
    text = page.read_text()
    # The viewer prints declare.device as "Figure for: ..." under the cards (cards.js).
    assert '"device":"64-bit host build, TFLM 9b79b9f (2025-01-16, the newest commit of' in text
    assert '"required_bytes":4288' in text


def test_suggested_commands_stay_at_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "report", EXAMPLE, "--tflm", "2025-08")
    steps = " ".join(document["reports"][0]["next_steps"])
    assert f"arenalens check {EXAMPLE} --target all --tflm 3b20912`" in steps
    assert "--tflm" not in " ".join(run_json(capsys, "report", EXAMPLE)["reports"][0]["next_steps"])


@pytest.mark.parametrize(
    ("release", "says"),
    [
        ("2024-11", "TFLM 2024-11 is older than arenalens models (covered: TFLM from 2025-01-07"),
        ("0.dev20241223180107", "is older than arenalens models"),
        ("2031-01", "is newer than arenalens models"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "check", "report", "export", "diagnose"])
def test_a_release_outside_the_history_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, release: str, says: str
) -> None:
    extra = {
        "check": ["--budget", "64K"],
        "export": ["-f", "json", "-o", str(tmp_path / "plan.json")],
    }
    assert main([command, EXAMPLE, "--tflm", release, *extra.get(command, [])]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and says in captured.err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("release", ["2026-09", "2026-10-10", "2026-10-13"])
def test_a_date_the_history_cannot_place_suggests_commands_that_run(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    """A date between the two wheels that bracket a change dated by its wheels names no single
    state of TFLM: refused in one line, with the user's own command at each of the two wheels,
    and each of those runs."""
    assert main(["plan", EXAMPLE, "--tflm", release, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    commands = [part.split("`")[1] for part in captured.err.split("` (")[:-1]]
    assert [command.split("--tflm ")[1].split()[0][:5] for command in commands] == ["0.dev"] * 2
    for command in commands:
        words = shlex.split(command)
        assert words[:3] == ["arenalens", "plan", EXAMPLE] and words[-1] == "--json"
        assert main(words[1:]) == 0
        assert json.loads(capsys.readouterr().out)["build"]["tflm"]["wheel"] == words[4]


def test_the_boards_a_report_at_a_release_suggests_checking_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`check --target all` at a release the CMSIS-NN rules do not cover: the boards whose
    kernels are CMSIS-NN are left out (no other build's figure stands in for theirs), and so are
    the ESP boards (ESP-NN is modelled at esp-tflite-micro v1.3.8's TFLM only), each group said
    so with commands that give their figures, and those run."""
    document = run_json(capsys, "report", EXAMPLE, "--tflm", "2025-08")
    suggested = next(
        step.split("`")[1]
        for step in document["reports"][0]["next_steps"]
        if "--target all" in step
    )
    words = shlex.split(suggested)[1:]
    assert main([*words, "--no-color"]) in (0, 1)
    text = capsys.readouterr().out
    left_out = [line for line in text.splitlines() if line.startswith("left out ")]
    assert len(left_out) == 2 and "CMSIS-NN builds are modelled for TFLM bc0e8c6" in left_out[0]
    assert "ESP-NN builds are modelled as esp-tflite-micro v1.3.8" in left_out[1]
    assert main([*words, "--json"]) in (0, 1)
    boards = json.loads(capsys.readouterr().out)
    cmsis, esp = boards["boards_left_out"]
    shown = {row["board"] for row in boards["boards"]}
    assert not (set(cmsis["boards"]) | set(esp["boards"])) & shown
    assert {row["status"] for row in boards["boards"]} == {"estimate"}  # RISC-V boards
    assert cmsis["commands"] == [
        f"arenalens check {EXAMPLE} --target all --tflm 90b983c --json",
        f"arenalens check {EXAMPLE} --target {cmsis['boards'][0]} --tflm 3b20912 --json "
        "--kernels reference",
    ]
    assert esp["commands"] == [
        f"arenalens check {EXAMPLE} --target all --tflm 0965635 --json",
        f"arenalens check {EXAMPLE} --target {esp['boards'][0]} --tflm 3b20912 --json "
        "--kernels reference",
    ]
    for command in [*cmsis["commands"], *esp["commands"]]:
        assert main(shlex.split(command)[1:]) in (0, 1)
        capsys.readouterr()


def test_cmsis_nn_at_a_release_it_is_not_modelled_for_suggests_commands_that_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["check", EXAMPLE, "--target", "nucleo-f746zg", "--tflm", "2025-08"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "; run: `arenalens check" in error
    commands = [part.split("`")[1] for part in error.split("` (")[:-1]]
    assert commands == [
        f"arenalens check {EXAMPLE} --target nucleo-f746zg --tflm 2025-08 --kernels reference",
        f"arenalens check {EXAMPLE} --target nucleo-f746zg --tflm 90b983c",
    ]
    for command in commands:
        assert main(shlex.split(command)[1:]) in (0, 1)
        capsys.readouterr()


def _as_installed(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    for module in (probe_module, tflm_verify):
        monkeypatch.setattr(module, "installed_version", lambda: version)


def _probe_of(document: dict[str, Any]) -> Any:
    """A probe answering with a plan document's own head and tail (the real interpreter's
    figures on the release the document is for; no categories, so those rows differ)."""

    def probe(path: str, arena_size: int, **_: Any) -> Probe:
        head, tail = document["head_bytes"], document["tail_bytes"]
        return Probe(arena_size, "ok", head, tail, head + tail, {})

    return probe


def _totals_agree(document: dict[str, Any]) -> bool:
    rows = {row["label"]: row["agrees"] for row in document["rows"]}
    return rows["head bytes"] and rows["tail bytes"] and rows["total bytes"]


def test_verify_names_the_changes_that_move_the_figures_between_releases(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interpreter of today's release, a prediction for 2025-01: verify says MISMATCH and
    which changes between the two move this model's figures, by how much, summing to the gap."""
    today = run_json(capsys, "plan", EXAMPLE)
    older = run_json(capsys, "plan", EXAMPLE, "--tflm", "2025-01")
    _as_installed(monkeypatch, TFLM_WHEEL.wheel)
    monkeypatch.setattr(tflm_verify, "probe", _probe_of(today))
    assert main(["verify", EXAMPLE, "--tflm", "2025-01", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert not _totals_agree(document)
    notes = document["notes"]
    assert notes[1] == (
        "predicted for TFLM 9b79b9f (2025-01-16, the newest commit of 2025-01), not the "
        "interpreter's TFLM 8f6596d (2026-10-23, tflite-micro 0.dev20261023182759); `verify` "
        "without --tflm predicts for the interpreter's release"
    )
    moves = notes[2]
    assert moves.startswith("what TFLM changed from TFLM 9b79b9f to 8f6596d that moves this")
    assert "USE_TFLM_COMPRESSION (9f409bb, 2025-08-04): tail +" in moves
    assert "(LP64: 16 → 32 B) (first in the wheel of 2026-10-12): tail +160 B" in moves
    tail_moves = [int(part.split("tail +")[1].split(" B")[0]) for part in moves.split("; ")]
    assert sum(tail_moves) == today["tail_bytes"] - older["tail_bytes"]


def test_verify_predicts_for_the_installed_wheels_release(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    older = run_json(capsys, "plan", EXAMPLE, "--tflm", "0.dev20250808035851")
    _as_installed(monkeypatch, "0.dev20250808035851")
    monkeypatch.setattr(tflm_verify, "probe", _probe_of(older))
    main(["verify", EXAMPLE, "--json"])
    document = json.loads(capsys.readouterr().out)
    assert _totals_agree(document)
    assert document["interpreter"] == "tflite-micro 0.dev20250808035851"
    assert (
        "TFLM 2b3f8d0 (2025-08-08, tflite-micro 0.dev20250808035851)" in (document["predicted_for"])
    )
    assert not any("not the interpreter's" in note for note in document["notes"])


def test_verify_says_when_no_change_between_releases_moves_the_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """2025-08's wheel and its month's newest commit share every change."""
    older = run_json(capsys, "plan", EXAMPLE, "--tflm", "0.dev20250808035851")
    _as_installed(monkeypatch, "0.dev20250808035851")
    monkeypatch.setattr(tflm_verify, "probe", _probe_of(older))
    main(["verify", EXAMPLE, "--tflm", "2025-08", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert _totals_agree(document)
    notes = document["notes"]
    assert "nothing TFLM changed from TFLM 2b3f8d0 to 3b20912 moves this model's figures" in notes


def test_verify_on_a_wheel_arenalens_does_not_model_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    today = run_json(capsys, "plan", EXAMPLE)
    _as_installed(monkeypatch, "0.dev20240101000000")
    monkeypatch.setattr(tflm_verify, "probe", _probe_of(today))
    main(["verify", EXAMPLE, "--json"])
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(
        note.startswith("tflite-micro 0.dev20240101000000 is a TFLM release arenalens does not")
        for note in notes
    )


def test_the_host_build_of_a_release_is_what_the_cli_predicts_for() -> None:
    assert host_build(tflm_release("0.dev20250808035851")) == host_build(
        wheel_release("0.dev20250808035851")
    )


def test_the_python_check_takes_the_release_as_the_cli_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import arenalens
    from arenalens.examples import example_bytes

    document = run_json(capsys, "plan", EXAMPLE, "--tflm", "2025-01")
    verdict = arenalens.check(example_bytes("fc_autoencoder"), tflm="2025-01")
    assert verdict.required_bytes == document["min_arena_bytes"]
    assert build_summary(verdict.build)["tflm"] == document["build"]["tflm"]
    with pytest.deprecated_call():  # the build was a dict before it travelled whole
        assert verdict.build["tflm"] == document["build"]["tflm"]
    on_board = arenalens.check(
        example_bytes("fc_autoencoder"),
        target="nucleo-f746zg",
        build="cortex-m7/reference",
        tflm="2025-01",
    )
    assert on_board.build is not None and on_board.build.name == "cortex-m7/reference@9b79b9f"
    with pytest.raises(arenalens.UsageError, match="older than arenalens models"):
        arenalens.check(example_bytes("fc_autoencoder"), tflm="2024-06")
    with pytest.raises(arenalens.UsageError, match="runtime litert has none"):
        arenalens.check(example_bytes("fc_autoencoder"), tflm="2025-01", runtime="litert")
