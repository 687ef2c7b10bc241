"""The build value: every fact a figure depends on, each one typed field, named once."""

from __future__ import annotations

import pytest

from arenalens.builds.abi import ILP32, ILP32_INT_ENUMS, LP64
from arenalens.builds.build import (
    CMSIS_NN,
    CMSIS_NN_RELEASE,
    COMPRESSION,
    ESP_NN,
    ESP_NN_RELEASE,
    HOST,
    ISA_ESP32P4,
    ISA_ESP32S3,
    ISA_ESP_ANSI,
    ISA_ESP_GENERIC,
    NAMED_BY_BOARD,
    NAMED_BY_USER,
    REFERENCE,
    TFLM_CORTEX_M_PROBES,
    TFLM_ESP_TFLITE_MICRO,
    TFLM_RELEASES,
    TFLM_WHEEL,
    as_build,
    build_flags,
    build_named,
    build_summary,
    build_title,
    device_build,
    select_build,
)
from arenalens.builds.kernel_paths import (
    KNOWN_PATHS,
    REFERENCE_PATH,
    KernelPath,
    overlap_rules,
    path_of,
)
from arenalens.builds.tflm import HISTORY, WHEEL_COMPRESSION
from arenalens.errors import UsageError
from arenalens.target_build import target_build
from arenalens.targets import get_target

# The fields documents carried before the build was typed: kept, so scripts reading them work.
FIRST_SUMMARY_FIELDS = {"name", "title", "cpu", "kernels", "isa", "abi", "allocator", "compression"}


def test_the_host_is_the_wheel() -> None:
    assert HOST.is_host and HOST.abi is LP64 and HOST.kernels == REFERENCE
    assert HOST.tflm is TFLM_WHEEL and HOST.compression and HOST.recording
    assert HOST.features == {COMPRESSION} | {c.key for c in HISTORY if not c.wheel_only}
    assert not HOST.kernels_named and HOST.kernels_release == ""


def test_a_device_build_names_its_core_abi_library_and_releases() -> None:
    build = device_build("m7", "cmsis-nn")
    assert (build.cpu, build.abi, build.kernels, build.isa) == ("cortex-m7", ILP32, CMSIS_NN, "dsp")
    assert build.kernels_release == CMSIS_NN_RELEASE
    assert build.tflm is TFLM_CORTEX_M_PROBES and not build.compression
    # The probes' sources (every change up to 2026-08-20), no compression.
    assert build.features == {
        c.key for c in HISTORY if c.landed <= TFLM_CORTEX_M_PROBES.time and not c.wheel_only
    }
    assert not build.has(WHEEL_COMPRESSION) and HOST.has(WHEEL_COMPRESSION)
    reference = device_build("cortex-m7", "reference")
    assert reference.kernels_release == "" and reference.isa == "none"


def test_who_named_the_kernel_library() -> None:
    assert device_build("cortex-m7").kernels_named_by is None
    assert device_build("cortex-m7", "reference").kernels_named_by == NAMED_BY_USER
    assert build_named("cortex-m7").kernels_named_by is None
    assert build_named("cortex-m7/cmsis-nn").kernels_named_by == NAMED_BY_USER
    assert select_build("m4", None).kernels_named_by is None
    assert select_build("m4", "cmsis-nn").kernels_named_by == NAMED_BY_USER
    board = get_target("nucleo-h743zi")
    assert target_build(board).kernels_named_by == NAMED_BY_BOARD
    assert target_build(board, cpu="cortex-m4").kernels_named_by == NAMED_BY_BOARD
    assert target_build(board, kernels="reference").kernels_named_by == NAMED_BY_USER
    # Named or not, the bytes are the same: only what may be written for it differs.
    assert target_build(board).features == select_build("m7", "cmsis-nn").features
    esp = target_build(get_target("esp32-s3"))
    assert (esp.name, esp.kernels_named_by) == ("esp32s3/esp-nn", NAMED_BY_BOARD)
    assert target_build(get_target("k210")) is HOST  # no 32-bit model of its core


def test_the_overlap_rules_hold_on_every_library_unless_the_user_names_one() -> None:
    assert overlap_rules(HOST).paths == KNOWN_PATHS
    assert overlap_rules(build_named("cortex-m7")).paths == KNOWN_PATHS
    assert overlap_rules(build_named("cortex-m3/cmsis-nn")).paths == (KernelPath(CMSIS_NN, "none"),)
    assert overlap_rules(build_named("cortex-m3/reference")).paths == (REFERENCE_PATH,)
    board = device_build("cortex-m7", "cmsis-nn", named_by=NAMED_BY_BOARD)
    assert overlap_rules(board).paths == KNOWN_PATHS and not overlap_rules(board).explicit
    assert path_of(board) == KernelPath(CMSIS_NN, "dsp")


def test_the_summary_adds_to_the_first_fields() -> None:
    host, device = build_summary(HOST), build_summary(build_named("cortex-m55/cmsis-nn"))
    assert FIRST_SUMMARY_FIELDS < set(host) == set(device)
    assert host["tflm"]["release"] == TFLM_WHEEL.name and host["kernels_release"] is None
    assert device["tflm"]["commit"] == TFLM_CORTEX_M_PROBES.commit
    assert device["kernels_release"] == CMSIS_NN_RELEASE and device["isa"] == "mve"
    assert build_flags(build_named("cortex-m55/cmsis-nn")) == " --cpu cortex-m55 --kernels cmsis-nn"
    assert build_flags(HOST) == "" and build_flags(None) == ""


def test_one_title_names_what_a_figure_is_for() -> None:
    assert build_title(HOST) == (
        "64-bit host build, TFLM 8f6596d (2026-10-23, tflite-micro 0.dev20261023182759)"
    )
    assert build_title(device_build("cortex-m4", "cmsis-nn")) == (
        "Cortex-M4 (Armv7E-M, DSP), CMSIS-NN kernels; ILP32 (Arm EABI), MicroAllocator; "
        "CMSIS-NN 4ab83cc3cc98; TFLM 90b983c (2026-08-20)"
    )
    assert build_title(build_named("host@2025-08")) == (
        "64-bit host build, TFLM 3b20912 (2025-08-25, the newest commit of 2025-08)"
    )


def test_releases_are_distinct_and_ordered_by_date() -> None:
    assert set(TFLM_RELEASES.values()) == {TFLM_ESP_TFLITE_MICRO, TFLM_WHEEL, TFLM_CORTEX_M_PROBES}
    assert TFLM_ESP_TFLITE_MICRO.date < TFLM_CORTEX_M_PROBES.date < TFLM_WHEEL.date


def test_an_esp_chip_builds_esp_tflite_micro_with_esp_nn() -> None:
    build = as_build("ESP32-S3")
    assert (build.name, build.abi, build.kernels, build.isa) == (
        "esp32s3/esp-nn",
        ILP32_INT_ENUMS,
        ESP_NN,
        ISA_ESP32S3,
    )
    assert build.kernels_release == ESP_NN_RELEASE and build.tflm is TFLM_ESP_TFLITE_MICRO
    assert not build.kernels_named and not build.compression
    # esp-tflite-micro v1.3.8's TFLM has every change up to 2026-07-13: none since, up to the
    # Cortex-M probes' commit, that moves a byte.
    assert build.features == device_build("cortex-m7").features
    assert build_title(build) == (
        "ESP32-S3 (Xtensa LX7), ESP-NN kernels (ESP32-S3 path), esp-tflite-micro v1.3.8; "
        "ILP32 (Xtensa/RISC-V, int-sized enums), MicroAllocator; esp-nn 1.2.3; "
        "TFLM 0965635 (2026-07-13)"
    )


def test_esp_nn_builds_are_esp_tflite_micro_s_tflm_only() -> None:
    with pytest.raises(UsageError, match="as esp-tflite-micro"):
        device_build("esp32s3", tflm="2025-08")
    older = device_build("esp32s3", "reference", tflm="2025-08")
    assert older.name == "esp32s3/reference@3b20912" and older.abi is ILP32_INT_ENUMS
    assert build_named("esp32s3/reference@2025-08") == older
    assert build_flags(older) == " --cpu esp32s3 --kernels reference --tflm 3b20912"
    assert build_named("esp32s3/esp-nn@1.2.0@0965635") == build_named("esp32s3/esp-nn@1.2.0")


@pytest.mark.parametrize(
    ("name", "isa", "release"),
    [
        ("esp32/esp-nn", ISA_ESP_GENERIC, "1.2.3"),
        ("esp32s2/esp-nn", ISA_ESP_GENERIC, "1.2.3"),
        ("esp32c3/esp-nn", ISA_ESP_GENERIC, "1.2.3"),
        ("esp32c6/esp-nn", ISA_ESP_GENERIC, "1.2.3"),
        ("esp32p4/esp-nn", ISA_ESP32P4, "1.2.3"),
        ("esp32s3/esp-nn@1.2.0", ISA_ESP32S3, "1.2.0"),
        ("esp32s3/esp-nn@1.1.2", ISA_ESP32S3, "1.1.2"),
        ("esp32s3/esp-nn-ansi", ISA_ESP_ANSI, "1.2.3"),
        ("esp32c3/reference", "none", ""),
    ],
)
def test_esp_builds_name_their_path_and_release_and_select_themselves_again(
    name: str, isa: str, release: str
) -> None:
    build = as_build(name)
    assert (build.name, build.isa, build.kernels_release) == (name, isa, release)
    assert build.kernels_named_by == NAMED_BY_USER and build.abi is ILP32_INT_ENUMS
    flags = build_flags(build).split()
    assert flags[1] == build.cpu and as_build(f"{flags[1]}/{flags[3]}") == build


def test_a_default_release_is_the_default_build() -> None:
    assert as_build("esp32s3/esp-nn@1.2.3") == as_build("esp32s3/esp-nn@v1.2.3")
    assert as_build("esp32s3/esp-nn@1.2.3") == as_build("esp32s3/esp-nn")


@pytest.mark.parametrize(
    "text",
    [
        "cortex-a53",
        "cortex-m7/esp-nn",
        "esp32s3/cmsis-nn",
        "esp32s3/esp-nn@1.0.0",
        "cortex-m7/cmsis-nn@1.2.0",
        "esp32s3/reference@1.2.0",
        "esp32s3/tflm",
    ],
)
def test_unknown_builds_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        as_build(text)


def test_esp_nn_needs_an_esp_core() -> None:
    with pytest.raises(UsageError, match="ESP32 chip"):
        select_build(None, "esp-nn")
