"""Placement on boards with several RAM banks (`placement.py`), the verdict it gives, and the code
it prints (`placement_code.py`), compiled with arm-none-eabi-g++ when it is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arenalens.blocks import blocks
from arenalens.placement import (
    ARENA,
    NON_PERSISTENT,
    PERSISTENT,
    VARIABLES,
    place,
)
from arenalens.placement_code import placement_code
from arenalens.runtimes.arena_split import ArenaSplit, TwoBuffers, VariableArena
from arenalens.targets import get_target
from arenalens.verdict import Answer, Verdict
from tests.fixtures.bank_models import DTCM_ACTIVATIONS, TWO_BANKS

REPO = Path(__file__).resolve().parents[1]
STUB = REPO / "tests" / "fixtures" / "tflm_stub"
TFLM_SOURCE = REPO / ".cortexm" / "src" / "tflite-micro"
KIB = 1024


def _split(single: int, persistent: int, non_persistent: int) -> ArenaSplit:
    two = TwoBuffers(persistent, non_persistent, persistent, non_persistent, 0)
    return ArenaSplit(single, two)


def _where(placement: object) -> dict[str, str]:
    best = getattr(placement, "best", None)
    assert best is not None
    return {use.part: use.block.name for use in best.uses}


def test_one_arena_goes_to_the_fastest_bank_that_holds_it() -> None:
    h743 = get_target("nucleo-h743zi")
    assert _where(place(_split(100 * KIB, 30 * KIB, 70 * KIB), h743)) == {ARENA: "dtcm"}
    assert _where(place(_split(200 * KIB, 10 * KIB, 190 * KIB), h743)) == {ARENA: "axi-sram"}


def test_activations_move_to_dtcm_once_the_persistent_part_moves_out() -> None:
    found = place(_split(200 * KIB, 80 * KIB, 120 * KIB), get_target("nucleo-h743zi"))
    assert _where(found) == {PERSISTENT: "axi-sram", NON_PERSISTENT: "dtcm"}


def test_more_than_the_largest_bank_fits_in_two() -> None:
    found = place(_split(660 * KIB, 260 * KIB, 400 * KIB), get_target("nucleo-h743zi"))
    assert _where(found) == {PERSISTENT: "sram1-3", NON_PERSISTENT: "axi-sram"}


def test_does_not_fit_says_the_most_the_board_holds() -> None:
    found = place(_split(2_000 * KIB, 600 * KIB, 1_400 * KIB), get_target("nucleo-h743zi"))
    assert found.best is None
    assert (found.largest_one_bytes, found.largest_one_block) == (512 * KIB, "axi-sram")
    assert found.largest_two_bytes == (512 + 288) * KIB


def test_external_ram_only_for_what_must_go_there_and_the_cost_is_said() -> None:
    s3 = get_target("esp32-s3-devkitc-1-n8r8")
    found = place(_split(1_000 * KIB, 100 * KIB, 900 * KIB), s3)
    assert _where(found) == {PERSISTENT: "internal-dram", NON_PERSISTENT: "psram"}
    assert found.best is not None
    assert any("reads every activation" in note or "read every activation" in note
               for note in found.best.notes)  # fmt: skip
    # Activations that fit internal SRAM stay there; only the persistent part goes out.
    found = place(_split(500 * KIB, 300 * KIB, 200 * KIB), s3)
    assert _where(found) == {PERSISTENT: "psram", NON_PERSISTENT: "internal-dram"}
    # Without PSRAM the same board does not hold it.
    assert place(_split(1_000 * KIB, 100 * KIB, 900 * KIB), get_target("esp32-s3")).best is None


def test_disco_sdram_takes_the_activations_the_sram_cannot() -> None:
    found = place(_split(3_000 * KIB, 150 * KIB, 2_850 * KIB), get_target("stm32f746g-disco"))
    assert _where(found) == {PERSISTENT: "sram1", NON_PERSISTENT: "sdram"}


def test_banks_that_follow_each_other_are_one_block_less_the_reserve() -> None:
    f746 = get_target("stm32f746")
    spans = {block.name: block.available_bytes for block in blocks(f746.banks, 4 * KIB)}
    assert spans["dtcm+sram1+sram2"] == 320 * KIB - 4 * KIB  # the reserve: SRAM1 is the default
    assert spans["dtcm"] == 64 * KIB


def test_resource_variables_apart_when_that_is_what_fits() -> None:
    two = TwoBuffers(300 * KIB, 530 * KIB, 300 * KIB, 530 * KIB, 0)
    variables = VariableArena(200, 3, 512 * KIB, TwoBuffers(299 * KIB, 530 * KIB, 0, 0, 0))
    split = ArenaSplit(512 * KIB + 100, two, variables)
    found = place(split, get_target("nucleo-h743zi"))
    assert found.best is not None and found.best.variables_apart
    assert {use.part for use in found.best.uses} == {ARENA, VARIABLES}


def _check(model: bytes, target: str, tmp_path: Path) -> Verdict:
    import arenalens

    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    return arenalens.check(str(path), target=target)


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (TWO_BANKS, {PERSISTENT: "sram1-3", NON_PERSISTENT: "axi-sram"}),
        (DTCM_ACTIVATIONS, {PERSISTENT: "axi-sram", NON_PERSISTENT: "dtcm"}),
    ],
)
def test_stm32h7_verdicts(
    fixture: tuple[str, Callable[[], bytes]], expected: dict[str, str], tmp_path: Path
) -> None:
    _, make = fixture
    verdict = _check(make(), "nucleo-h743zi", tmp_path)
    assert verdict.answer in (Answer.FITS, Answer.FITS_TIGHT)  # tight: a bank with little spare
    assert verdict.fit is not None
    assert _where(verdict.fit.placement) == expected
    document = verdict.as_dict()
    assert [row["bank"] for row in document["placement"]["banks"]] == list(expected.values())


def _compiler() -> str:
    found = shutil.which("arm-none-eabi-g++")
    if found is None:
        pytest.skip("arm-none-eabi-g++ not installed (Debian: gcc-arm-none-eabi)")
    return found


def _compile(code: str, tmp_path: Path, includes: list[Path], *, strict: bool = True) -> None:
    source = tmp_path / "placement.cc"
    source.write_text(code)
    command = [
        _compiler(), "-std=c++17", "-mcpu=cortex-m7", "-mthumb", "-fno-exceptions", "-fno-rtti",
        "-c", str(source), "-o", str(tmp_path / "placement.o"),
        *(f"-I{folder}" for folder in includes),
    ]  # fmt: skip
    # TFLM's own headers are not -Wextra clean: warnings are errors only in the generated code.
    command += ["-Wall", "-Wextra", "-Werror"] if strict else ["-DTF_LITE_STATIC_MEMORY"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


CODE_CASES = {
    "h743 two banks": ("nucleo-h743zi", _split(660 * KIB, 260 * KIB, 400 * KIB)),
    "h743 dtcm": ("nucleo-h743zi", _split(100 * KIB, 30 * KIB, 70 * KIB)),
    "s3 psram": ("esp32-s3-devkitc-1-n8r8", _split(1_000 * KIB, 100 * KIB, 900 * KIB)),
    "s3 psram one arena": ("esp32-s3-devkitc-1-n8r8", _split(1_000 * KIB, 400 * KIB, 900 * KIB)),
    "portenta sdram": ("arduino-portenta-h7", _split(3_000 * KIB, 150 * KIB, 2_850 * KIB)),
    "f746 sdram": ("stm32f746g-disco", _split(3_000 * KIB, 150 * KIB, 2_850 * KIB)),
    "variables apart": (
        "nucleo-h743zi",
        ArenaSplit(
            512 * KIB + 100,
            TwoBuffers(40 * KIB, 400 * KIB, 0, 0, 0),
            VariableArena(200, 3, 512 * KIB, TwoBuffers(39 * KIB, 400 * KIB, 0, 0, 0)),
        ),
    ),
}


def test_the_code_to_paste_compiles(tmp_path: Path) -> None:
    """Every case's code in one translation unit (one compiler run): each in a namespace of its
    own, after every header it includes (the includes inside are then no-ops)."""
    units = []
    for number, case in enumerate(sorted(CODE_CASES)):
        target_name, split = CODE_CASES[case]
        target = get_target(target_name)
        found = place(split, target)
        assert found.best is not None, case
        code = placement_code(found.best, target, model=case, variable_count=3)
        units.append(f"namespace case_{number} {{\n{code}\n}}  // namespace case_{number}")
    # The code `check --target nucleo-h743zi` prints for the two STM32H7 cases.
    fixtures: list[tuple[str, Callable[[], bytes]]] = [TWO_BANKS, DTCM_ACTIVATIONS]
    for number, (fixture, make) in enumerate(fixtures, start=len(units)):
        checked = _check(make(), "nucleo-h743zi", tmp_path).fit
        assert checked is not None and checked.placement is not None
        best = checked.placement.best
        assert best is not None
        code = placement_code(
            best,
            get_target("nucleo-h743zi"),
            model=fixture,
            variable_count=checked.placement.variable_count,
        )
        units.append(f"namespace case_{number} {{\n{code}\n}}  // namespace case_{number}")
    prelude = "\n".join(
        f'#include "{header}"'
        for header in (
            "tensorflow/lite/micro/micro_allocator.h",
            "tensorflow/lite/micro/micro_interpreter.h",
            "tensorflow/lite/micro/micro_resource_variable.h",
            "esp_heap_caps.h",
            "SDRAM.h",
        )
    )
    _compile(prelude + "\n" + "\n".join(units), tmp_path, [STUB])


@pytest.mark.slow
@pytest.mark.skipif(not TFLM_SOURCE.is_dir(), reason=f"no TFLM source tree at {TFLM_SOURCE}")
def test_the_code_to_paste_compiles_against_tflm_itself(tmp_path: Path) -> None:
    """With TFLM's own headers (the tree tests/build_two_probe.sh extracts into .cortexm/)."""
    downloads = TFLM_SOURCE / "tensorflow" / "lite" / "micro" / "tools" / "make" / "downloads"
    includes = [
        TFLM_SOURCE,
        downloads / "flatbuffers" / "include",
        downloads / "gemmlowp",
        downloads / "ruy",
        STUB,  # esp_heap_caps.h and SDRAM.h only: TFLM's own headers come first
    ]
    for case in ("h743 two banks", "variables apart"):
        target_name, split = CODE_CASES[case]
        target = get_target(target_name)
        found = place(split, target)
        assert found.best is not None
        code = placement_code(found.best, target, model="model", variable_count=3)
        _compile(code, tmp_path, includes, strict=False)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    from arenalens.cli import main

    assert main([*argv, "--json"]) in (0, 1)
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


BANK_BOARDS = (
    "nucleo-h743zi",  # two banks on-chip
    "esp32-s3-devkitc-1-n8r8",  # internal SRAM + PSRAM
    "stm32f746g-disco",  # SDRAM
    "stm32h747",  # the firmware's reserve in DTCM, not in the largest block
    "nucleo-f429zi",  # SRAM + CCM: does not fit
)


def test_every_board_row_is_the_boards_own_check(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`check --target all` computes each row from the same verdict as `check --target BOARD`:
    the same available bytes (the largest block, less the reserve only where the firmware keeps
    it), the same answer and headroom, the same placement; its table names the banks a fit
    needs. (The board list is cut to boards with banks: every board would take a minute.)"""
    from arenalens import targets
    from arenalens.cli import main

    boards = tuple(get_target(name) for name in BANK_BOARDS)
    # The list is built when first read (targets.__getattr__): set in its place, or taken away.
    monkeypatch.setattr(targets, "BOARDS", boards, raising=False)
    path = tmp_path / "two_banks.tflite"
    path.write_bytes(TWO_BANKS[1]())
    every = _json(capsys, "check", str(path), "--target", "all")
    rows = {row["board"]: row for row in every["boards"]}
    for board in BANK_BOARDS:
        alone = _json(capsys, "check", str(path), "--target", board)
        row = rows[board]
        assert row["verdict"] == alone["verdict"], board
        assert row["available_bytes"] == alone["available_bytes"], board
        assert row["headroom_bytes"] == alone["headroom_bytes"], board
        assert row["placement"] == alone["placement"], board
    assert rows["nucleo-h743zi"]["fits"] and rows["esp32-s3-devkitc-1-n8r8"]["fits"]
    assert not rows["nucleo-f429zi"]["fits"]
    # The H747's firmware keeps its reserve in DTCM (CubeIDE's template): AXI SRAM stays whole.
    assert rows["stm32h747"]["available_bytes"] == 512 * KIB
    main(["check", str(path), "--target", "all", "--no-color"])
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if "nucleo-h743zi" in line)
    assert "yes: sram1-3 +" in row
    assert "headroom is then the least any buffer leaves in its bank" in " ".join(text.split())


def test_activations_in_external_ram_lead_to_optimize_on_the_board(tmp_path: Path) -> None:
    verdict = _check(TWO_BANKS[1](), "esp32-s3-devkitc-1-n8r8", tmp_path)
    assert _where(verdict.fit.placement)[NON_PERSISTENT] == "psram"  # type: ignore[union-attr]
    step = next(step for step in verdict.steps if "external RAM" in step.text)
    assert "internal-dram holds 317,184 B" in step.text
    assert step.command.startswith("arenalens optimize ")
    assert "--target esp32-s3-devkitc-1-n8r8" in step.command and "--split" in step.command


def test_optimize_target_says_when_a_saving_moves_the_activations_out_of_external_ram() -> None:
    """`optimize --target` judges the written model with check's own verdict and says when its
    activations leave PSRAM for internal SRAM (here: a model whose non-persistent part needs
    PSRAM on an ESP32-S3 N8R8, and one whose part fits internal SRAM, as a rewrite would)."""
    from arenalens.cli.optimize import _moved
    from arenalens.fit import check_fit
    from arenalens.pipeline import analyze
    from arenalens.report.optimize_output import _fit_lines

    board = get_target("esp32-s3-devkitc-1-n8r8")
    given = check_fit(analyze(TWO_BANKS[1](), build="esp32s3/esp-nn"), target=board)
    after = check_fit(analyze(DTCM_ACTIVATIONS[1](), build="esp32s3/esp-nn"), target=board)
    assert _where(given.placement)[NON_PERSISTENT] == "psram"
    moved = _moved(given, after)
    assert moved == "psram (external) → internal-dram (on-chip)"
    assert _moved(after, given) is None  # a move into slower memory is no gain to announce
    lines = _fit_lines(
        {
            "where": f"{board.title} ({board.core})",
            "reserve_bytes": after.reserve_bytes,
            "reserve_from": "firmware",
            "required_bytes": after.required_bytes,
            "headroom_bytes": after.spare_bytes,
            "margin_bytes": after.margin_bytes,
            "fits": after.fits,
            "tight": after.tight,
            "placement": None,
            "moved": moved,
        }
    )
    assert lines[0].startswith("FITS  the written model on")
    assert "moves the activations psram (external) → internal-dram (on-chip)" in lines[-1]


def test_the_linker_lines_put_the_buffer_at_its_banks_address(tmp_path: Path) -> None:
    """The GNU ld lines the code prints for a section bank (DTCM on the NUCLEO-H743ZI, whose
    CubeIDE script does not declare it) link: the buffer lands at the bank's address."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc not installed (Debian: gcc-arm-none-eabi)")
    target = get_target("nucleo-h743zi")
    found = place(_split(200 * KIB, 80 * KIB, 120 * KIB), target)
    assert found.best is not None
    code = placement_code(found.best, target, model="model")
    linker = [line[len("//   ") :] for line in code.splitlines() if line.startswith("//   ")]
    assert linker[0] == "MEMORY   { DTCM (rw) : ORIGIN = 0x20000000, LENGTH = 131072 }"
    script = tmp_path / "link.ld"
    script.write_text(
        "MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 2048K }\n"
        + "\n".join(linker)
        + "\nSECTIONS { .text : { *(.text*) } > FLASH }\n"
    )
    source = tmp_path / "buffer.c"
    source.write_text(
        "#include <stdint.h>\n"
        '_Alignas(16) uint8_t non_persistent_arena[122880] __attribute__((section(".dtcmram")));\n'
        "void _start(void) { non_persistent_arena[0] = 1; for (;;) {} }\n"
    )
    elf = tmp_path / "buffer.elf"
    command = [gcc, "-mcpu=cortex-m7", "-mthumb", "-nostdlib", "-T", str(script), str(source)]
    done = subprocess.run(
        [*command, "-o", str(elf)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    symbols = subprocess.run(
        [gcc.replace("gcc", "nm"), str(elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "20000000 B non_persistent_arena" in symbols
