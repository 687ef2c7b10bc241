"""The board and chip catalogue (`targets.json`) is checked data: schema, names, references,
limits, sources, builds, and the counts the README states."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from arenalens.builds.build import CPUS, KERNEL_LIBRARIES
from arenalens.cli import main
from arenalens.targets import (
    BOARDS,
    CHIPS,
    LINUX_DEVICES,
    TARGETS,
    catalogue_document,
    get_target,
    target_document,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "src" / "arenalens" / "schemas" / "targets.schema.json"
DOCUMENT = catalogue_document()


def test_the_catalogue_matches_its_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DOCUMENT, schema)


def test_every_name_is_unique_and_no_alias_shadows_a_name() -> None:
    names = [row["name"] for row in (*DOCUMENT["chips"], *DOCUMENT["boards"])]
    assert [name for name, count in Counter(names).items() if count > 1] == []
    aliases = DOCUMENT["aliases"]
    assert set(aliases) & set(names) == set()
    assert set(aliases.values()) <= set(names)


def test_every_board_names_a_chip_and_a_layout_that_exist() -> None:
    chips = {row["name"] for row in DOCUMENT["chips"]}
    layouts = DOCUMENT["board_layouts"]
    for row in DOCUMENT["boards"]:
        assert row["chip"] in chips, row["name"]
        assert row.get("layout", next(iter(layouts))) in layouts, row["name"]
    used = {row["layout"] for row in DOCUMENT["boards"] if "layout" in row}
    assert used == set(layouts)  # no layout nobody uses


@pytest.mark.parametrize("target", TARGETS.values(), ids=lambda target: target.name)
def test_every_target_has_a_limit_within_its_sram_and_a_source(target: object) -> None:
    assert hasattr(target, "arena_limit_bytes")
    row = target_document(target)  # type: ignore[arg-type]
    assert 0 < row["arena_limit_bytes"] <= row["sram_bytes"]  # type: ignore[operator]
    assert row["source"] and row["core"] and row["title"]


def test_every_build_named_exists() -> None:
    for chip in CHIPS:
        # A build core and its library come together: both, or neither (the host's estimate).
        assert (chip.build_cpu is None) == (chip.kernels is None), chip.name
        if chip.build_cpu is not None:
            assert chip.build_cpu in CPUS and chip.kernels in KERNEL_LIBRARIES, chip.name
            # The library the chip implies runs on its build core.
            assert chip.kernels in CPUS[chip.build_cpu].libraries, chip.name
        # Until a 32-bit model of a core exists, its boards get the host figure (an estimate):
        # Cortex-M (CMSIS-NN) and the ESP32 family (ESP-NN, each chip its own build) have one.
        modelled = chip.cpu.startswith("cortex-m") or chip.name.startswith("esp32")
        assert (chip.build_cpu is not None) == modelled, chip.name
        if chip.name.startswith("esp32"):
            assert (chip.build_cpu, chip.kernels) == (chip.name, "esp-nn")


def test_boards_take_their_chip_s_core_and_build() -> None:
    for board in BOARDS:
        chip = TARGETS[board.chip]
        assert (board.core, board.cpu, board.sram_bytes) == (chip.core, chip.cpu, chip.sram_bytes)
        assert (board.build_cpu, board.kernels) == (chip.build_cpu, chip.kernels)
    teensy = get_target("teensy41")
    assert teensy.arena_limit_bytes == 512 * 1024 < TARGETS[teensy.chip].arena_limit_bytes
    assert "DMAMEM" in teensy.note


def test_the_readme_counts_come_from_the_data() -> None:
    readme = (ROOT / "README.md").read_text()
    boards = {int(n) for n in re.findall(r"\b(\d+) boards\b", readme)}
    chips = {int(n) for n in re.findall(r"\b(\d+) chips\b", readme)}
    assert boards == {len(BOARDS)} and chips == {len(CHIPS)}
    devices = {int(n) for n in re.findall(r"\b(\d+) Linux devices\b", readme)}
    assert devices == {len(LINUX_DEVICES)}
    assert re.findall(r"fits \d+ of (\d+) boards", readme) == [str(len(BOARDS))]


def test_list_targets_documents_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--list-targets", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    every = (*BOARDS, *CHIPS, *LINUX_DEVICES)
    assert [row["name"] for row in listed] == [t.name for t in every]
    assert listed == [target_document(t) for t in every]
    assert main(["check", "--list-targets", "--no-color"]) == 0
    text = capsys.readouterr().out
    assert all(target.name in text for target in TARGETS.values())


def test_every_target_lists_its_ram_banks_with_a_source() -> None:
    """Issue 29: every chip and board says where its RAM is, bank by bank, from a cited document;
    the largest block one arena can take stays what the single-block figure said, the reserve
    taken where the SDK keeps its data."""
    from arenalens.blocks import largest_block

    for target in TARGETS.values():
        assert target.banks, target.name
        assert all(bank.source for bank in target.banks), target.name
        assert sum(bank.static_array for bank in target.banks) <= 1, target.name
    due = get_target("arduino-due")
    block = largest_block(due, due.reserve_bytes)
    assert block is not None and block.name == "sram0+sram1"  # the 0x20070000 mirror
    assert block.available_bytes == 96 * 1024 - due.reserve_bytes
    # Teensy 4.x: a static array lands in DTCM (half of RAM1 counted for code); DMAMEM in OCRAM
    # is the largest block, none of the reserve in it.
    teensy = get_target("teensy-41")
    assert [bank.name for bank in teensy.banks] == ["dtcm", "ocram"]
    assert teensy.banks[0].static_array and teensy.banks[1].section == ".dmabuffers"
    block = largest_block(teensy, teensy.reserve_bytes)
    assert block is not None and (block.name, block.available_bytes) == ("ocram", 512 * 1024)


def test_one_target_asked_for_builds_that_target_and_its_chip_only() -> None:
    """`check --target X` builds X (and the chip a board carries), not the whole catalogue; the
    lists build every row, the same objects `get_target` hands out."""
    child = (
        "import arenalens.targets as t\n"
        "board = t.get_target('NUCLEO_F401RE')\n"
        "print(sorted(name for _, name in t._BUILT))\n"
        "print(t.TARGETS['nucleo-f401re'] is board, len(t._BUILT) == len(t.TARGETS))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, check=True, timeout=60
    )
    built, same = done.stdout.splitlines()
    assert built == "['nucleo-f401re', 'stm32f401re']"
    assert same == "True True"
