"""A Vela-compiled model's SRAM pieces in the verdict: the arena fits a board's bank, the fast
memory has no place beside it in the banks the NPU reaches, so the one answer is DOES NOT FIT,
as it is and after optimize; with room in another NPU bank it fits, each piece placed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import arenalens
from arenalens.targets import MemoryBank, Target, get_target
from arenalens.vela.placement import Memories, NpuFit, placement
from tests.ethos_u.cases import MODELS

DEDICATED = MODELS / "example-kws_ds_cnn@u65-256-dedicated.tflite"  # arena 22,552 B, fast 22,080 B
BUILD = "cortex-m55+ethos-u65-256"


def _board(*banks: tuple[str, int, bool | None]) -> Target:
    """A board with these banks (name, size, NPU reach); its largest block is the first."""
    rows = tuple(
        MemoryBank(name, "on-chip", size, source="test", npu=npu) for name, size, npu in banks
    )
    return replace(get_target("himax-we2"), banks=rows, arena_limit_bytes=banks[0][1])


def test_the_fast_memory_needs_a_bank_the_npu_reaches() -> None:
    # sram holds the arena (40,000 B) but not both; dtcm would hold the fast memory, but the NPU
    # does not reach it.
    board = _board(("sram", 40_000, True), ("dtcm", 30_000, False))
    # No firmware reserve: the banks' sizes alone (a board keeps its firmware's by default).
    verdict = arenalens.check(DEDICATED, target=board, build=BUILD, reserve=0)
    assert verdict.fit is not None and verdict.fit.npu is not None
    assert (verdict.answer, verdict.npu_short, verdict.exit_code) == ("DOES NOT FIT", True, 1)
    assert verdict.headroom_bytes == 40_000 - 22_552  # the arena's own
    assert verdict.fits_after_optimize is False  # no arena leaves 22,080 B beside it
    assert verdict.as_dict()["npu_memory"]["fit"]["banks"] == [
        {"name": "sram", "free_bytes": 40_000}
    ]


def test_with_a_second_npu_bank_each_piece_is_placed() -> None:
    board = _board(("sram", 40_000, True), ("sram1", 30_000, True))
    verdict = arenalens.check(DEDICATED, target=board, build=BUILD)
    assert verdict.fits and not verdict.npu_short  # FITS, or FITS, TIGHT after the reserve
    fit = verdict.as_dict()["npu_memory"]["fit"]
    assert fit["placement"] == [
        {"piece": "arena", "bank": "sram"},
        {"piece": "fast memory", "bank": "sram1"},
    ]


def test_a_model_without_an_npu_operator_has_no_npu_pieces() -> None:
    from arenalens.examples import example_bytes

    verdict = arenalens.check(example_bytes("kws_ds_cnn"), target="grove-vision-ai-v2")
    assert verdict.npu_memory is None and verdict.fit is not None and verdict.fit.npu is None
    assert "npu_memory" not in verdict.as_dict()


def test_a_smaller_arena_may_make_room_for_the_pieces() -> None:
    """`at_arena` is what fits_after_optimize asks: the pieces again with optimize's arena."""
    memory = arenalens.check(DEDICATED, build=BUILD).npu_memory
    assert memory is not None
    fit = NpuFit(memory, Memories(44_000), arena_bytes=22_552)
    assert not fit.fits and fit.at_arena(21_920).fits  # 21,920 + 22,080 = 44,000


def test_pieces_without_a_board_go_anywhere() -> None:
    assert placement((("arena", 1), ("fast memory", 2)), None) == (
        ("arena", "any"),
        ("fast memory", "any"),
    )


# A compiled model of the development set for each NPU configuration the presets name.
COMPILED_FOR = {
    "ethos-u55-64": "example-kws_ds_cnn@u55-64-sram-only",
    "ethos-u55-128": "example-kws_ds_cnn@u55-128",
    "ethos-u55-256": "example-kws_ds_cnn@u55-256-size",
    "ethos-u65-256": "example-kws_ds_cnn@u65-256-dedicated",
    "ethos-u85-256": "example-kws_ds_cnn@u85-256-dedicated",
}


def _npu_targets() -> list[Target]:
    from arenalens.targets import TARGETS

    return sorted((t for t in TARGETS.values() if t.npu), key=lambda target: target.name)


def test_every_npu_preset_names_an_npu_a_case_was_compiled_for() -> None:
    assert {target.npu for target in _npu_targets()} <= set(COMPILED_FOR)


def test_each_npu_preset_runs_what_was_compiled_for_its_npu_and_refuses_the_rest() -> None:
    for target in _npu_targets():
        assert target.npu is not None
        own = arenalens.check(MODELS / f"{COMPILED_FOR[target.npu]}.tflite", target=target)
        assert own.fits, target.name  # FITS, or FITS, TIGHT after the reserve
        assert own.build.name.endswith(f"+{target.npu}"), target.name
        fit = own.as_dict()["npu_memory"]["fit"]
        assert fit["fits"] and fit["placement"], target.name
        other = next(npu for npu in COMPILED_FOR if npu != target.npu)
        refused = arenalens.check(MODELS / f"{COMPILED_FOR[other]}.tflite", target=target)
        assert refused.answer == "CANNOT RUN", target.name
        assert "NPU config mismatch" in refused.refusals[0].reason, target.name


def test_a_compiled_arena_goes_whole_to_a_bank_the_npu_reaches() -> None:
    """Corstone-300's DTCM is its fastest bank, but the NPU does not reach it: the arena, which
    holds the NPU's scratch, is never placed (or split) there."""
    verdict = arenalens.check(
        MODELS / "example-kws_ds_cnn@u55-128.tflite", target="corstone-300-fvp", reserve=0
    )
    assert verdict.fit is not None and verdict.fit.placement is None
    assert verdict.headroom_bytes == 2048 * 1024 - verdict.declared.required_bytes
    placement = verdict.as_dict()["npu_memory"]["fit"]["placement"]
    assert placement == [{"piece": "arena", "bank": "sram"}]


def test_the_board_table_marks_a_board_whose_npu_memory_does_not_fit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from arenalens.cli import main

    argv = ["check", str(DEDICATED), "--target", "all", "--fast-memory", "22079", "--reserve", "0"]
    argv.append("--json")
    assert main(argv) == 1
    rows = {row["board"]: row for row in json.loads(capsys.readouterr().out)["boards"]}
    row = rows["corstone-300-u65-fvp"]
    assert (row["verdict"], row["fits"], row["npu_memory_fits"]) == ("DOES NOT FIT", False, False)
    assert row["headroom_bytes"] == 2048 * 1024 - 22552  # the arena alone would fit
