"""Target presets: MCU / board name → its documented on-chip SRAM and the largest arena it can hold.

`arenalens check MODEL --target NAME` compares the arena a model needs with `arena_limit_bytes`,
the largest single block a statically declared tensor arena can occupy on that part. It is the
whole SRAM where the SRAM is one contiguous region, and smaller where the memory map splits it or
the SDK caps static data (each entry says why). Firmware needs RAM too (stacks, heap, DMA buffers):
subtract it with `--reserve`. Sizes are from the vendors' datasheets and SDK guides named in
`source`; they are the chips' totals, before any bootloader, RTOS or radio stack takes its share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.errors import UsageError

KIB = 1024


@dataclass(frozen=True, slots=True)
class Target:
    """One MCU or board: its SRAM, the largest arena it holds, and where the numbers are from."""

    name: str  # the --target spelling, lower case
    title: str
    core: str
    sram_bytes: int  # on-chip SRAM as documented
    arena_limit_bytes: int  # the largest contiguous block a static arena can occupy
    source: str
    note: str = ""


_TARGETS = (
    Target(
        "stm32f746",
        "STMicroelectronics STM32F746",
        "Cortex-M7 216 MHz",
        sram_bytes=320 * KIB,
        arena_limit_bytes=320 * KIB,
        source="STM32F746xx datasheet DS10916: 320 KB SRAM incl. 64 KB DTCM (+16 KB ITCM)",
        note="DTCM, SRAM1 and SRAM2 are contiguous from 0x20000000",
    ),
    Target(
        "stm32h743",
        "STMicroelectronics STM32H743",
        "Cortex-M7 480 MHz",
        sram_bytes=1060 * KIB,
        arena_limit_bytes=512 * KIB,
        source="STM32H743xI datasheet DS12110: 1 MB RAM = 192 KB TCM + 864 KB SRAM + 4 KB backup",
        note="largest contiguous region is the 512 KB AXI SRAM (D1 domain)",
    ),
    Target(
        "esp32",
        "Espressif ESP32",
        "Xtensa LX6 dual-core 240 MHz",
        sram_bytes=520 * KIB,
        arena_limit_bytes=160 * KIB,
        source="ESP-IDF Memory Types guide: 520 KB SRAM (320 KB DRAM); "
        "static DRAM is limited to 160 KB",
        note="a larger arena must come from the heap (heap_caps_malloc) or PSRAM",
    ),
    Target(
        "esp32-s3",
        "Espressif ESP32-S3",
        "Xtensa LX7 dual-core 240 MHz",
        sram_bytes=512 * KIB,
        arena_limit_bytes=512 * KIB,
        source="ESP32-S3 datasheet: 512 KB internal SRAM (+16 KB RTC SRAM)",
        note="IRAM code shares this SRAM: static DRAM shrinks by the app's IRAM size",
    ),
    Target(
        "nrf52840",
        "Nordic nRF52840",
        "Cortex-M4F 64 MHz",
        sram_bytes=256 * KIB,
        arena_limit_bytes=256 * KIB,
        source="nRF52840 Product Specification v1.7: 256 KB RAM",
        note="a SoftDevice (BLE stack) reserves part of it",
    ),
    Target(
        "rp2040",
        "Raspberry Pi RP2040",
        "Cortex-M0+ dual-core 133 MHz",
        sram_bytes=264 * KIB,
        arena_limit_bytes=264 * KIB,
        source="RP2040 datasheet: 264 KB SRAM in six banks (4 × 64 KB striped + 2 × 4 KB)",
        note="all six banks are mapped contiguously from 0x20000000",
    ),
    Target(
        "arduino-nano-33-ble",
        "Arduino Nano 33 BLE / BLE Sense (nRF52840)",
        "Cortex-M4F 64 MHz",
        sram_bytes=256 * KIB,
        arena_limit_bytes=256 * KIB,
        source="Arduino Nano 33 BLE datasheet (ABX00030): nRF52840, 256 KB SRAM",
        note="Mbed OS and the BLE stack take part of it",
    ),
    Target(
        "apollo3",
        "Ambiq Apollo3 Blue (SparkFun Edge)",
        "Cortex-M4F 48/96 MHz",
        sram_bytes=384 * KIB,
        arena_limit_bytes=384 * KIB,
        source="Apollo3 Blue datasheet: 384 KB SRAM (64 KB TCM + 320 KB)",
        note="TCM and SRAM are contiguous from 0x10000000",
    ),
)

TARGETS: Mapping[str, Target] = MappingProxyType({target.name: target for target in _TARGETS})
# Spellings people type: "STM32F746", "esp32s3", "nano33ble".
_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "esp32s3": "esp32-s3",
        "nano33ble": "arduino-nano-33-ble",
        "arduino-nano-33-ble-sense": "arduino-nano-33-ble",
        "nano-33-ble": "arduino-nano-33-ble",
        "apollo3-blue": "apollo3",
        "sparkfun-edge": "apollo3",
    }
)


def get_target(name: str) -> Target:
    """A target name (any case, '_' or '-') → Target; UsageError listing the known names."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    found = TARGETS.get(key)
    if found is None:
        known = ", ".join(TARGETS)
        raise UsageError(
            f"unknown target '{name}' (known: {known}; or give --budget SIZE for any other part)"
        )
    return found
