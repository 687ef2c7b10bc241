"""Which Vela settings fit a board: each SRAM piece (arena, fast memory, Sram_Only weights) in a
bank the NPU reaches, or all of them in the largest block when the banks are not known."""

from __future__ import annotations

from arenalens.vela.compiler import DEDICATED_SRAM, SHARED_SRAM, SRAM_ONLY, VelaSettings
from arenalens.vela.memory import NpuMemory
from arenalens.vela.placement import Memories
from arenalens.vela.settings import Candidate

MIB = 1 << 20


def _candidate(mode: str, arena: int, *, fast: int = 0, weights: int = 0) -> Candidate:
    memory = NpuMemory(
        npu_operators=1,
        compiled_for=("ethos-u65-256",),
        dedicated_sram=bool(fast),
        scratch_bytes=arena,
        fast_scratch_bytes=fast or arena,
        fast_memory_bytes=fast,
        arena_fast_copy_bytes=0,
        read_only_bytes=weights,
        command_stream_bytes=0,
        vela_sram_bytes=fast or arena,
    )
    settings = VelaSettings("ethos-u65-256", "Ethos_U65_High_End", mode)
    return Candidate(settings, None, arena_bytes=arena, memory=memory)


def test_sram_only_weights_may_sit_in_another_bank_than_the_arena() -> None:
    # MobileNetV2 Sram_Only on an Alif E7: 1.5 MB arena and 3.4 MB of weights, SRAM0 4 MB and
    # SRAM1 2.5 MB: together they fit no bank, apart they do.
    candidate = _candidate(SRAM_ONLY, 1_505_740, weights=3_433_084)
    banks = Memories(4 * MIB, (("sram0", 4 * MIB), ("sram1", 2560 * 1024)))
    assert candidate.placement(banks) == (("arena", "sram1"), ("SRAM weights", "sram0"))
    assert not candidate.fits(Memories(4 * MIB))  # one block cannot hold both


def test_pieces_share_a_bank_when_it_has_room_and_none_fits_past_every_bank() -> None:
    candidate = _candidate(DEDICATED_SRAM, 22_552, fast=22_080)
    assert candidate.placement(Memories(64 << 10, (("sram", 64 << 10),))) == (
        ("arena", "sram"),
        ("fast memory", "sram"),
    )
    assert not candidate.fits(Memories(40_000, (("sram", 40_000), ("dtcm", 20_000))))


def test_a_setting_that_cannot_run_never_fits() -> None:
    settings = VelaSettings("ethos-u55-128", "Ethos_U55_High_End_Embedded", SHARED_SRAM)
    assert not Candidate(settings, None, arena_bytes=None).fits(None)


def test_the_table_says_whose_system_config_its_times_estimate() -> None:
    """Vela's times follow the system config compiled with (Arm's default for the NPU); a board
    whose vendor compiles with its own vela.ini says so beside the table."""
    from arenalens.builds.build import device_build
    from arenalens.builds.npu import npu_named
    from arenalens.report.vela_output import render_vela, vela_document
    from arenalens.targets import get_target
    from arenalens.vela.settings import SettingsSweep

    npu = npu_named("ethos-u55-64")
    candidate = _candidate(SHARED_SRAM, 31_180)
    sweep = SettingsSweep(
        npu, device_build("cortex-m55", npu="ethos-u55-64"), None, (candidate,), 0, "5.2.0"
    )
    grove = vela_document(sweep, "person_detect.tflite", get_target("grove-vision-ai-v2"))
    estimate = grove["time_estimate"]
    assert estimate["system_config"] == "Ethos_U55_High_End_Embedded"
    assert estimate["vendor_config"]["config_file"] == "himax_vela.ini"
    text = render_vela(grove, "build", color=False, width=200)
    assert "Vela's time (est.)" in text and "--system-config My_Sys_Cfg" in text
    assert "not a measurement" in text
    alif = vela_document(sweep, "person_detect.tflite", get_target("alif-e7-devkit"))
    assert alif["time_estimate"]["vendor_config"] is None
