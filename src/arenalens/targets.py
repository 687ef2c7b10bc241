"""Target presets: board or MCU name → its core, documented SRAM and the largest arena it can hold.

`arenalens check MODEL --target NAME` compares the arena a model needs with `arena_limit_bytes`:
the largest single block a statically declared tensor arena (`alignas(16) static uint8_t
tensor_arena[kTensorArenaSize]`) can occupy on that part. Per family, that is:

* STM32: the SRAM banks the reference manual maps back to back from 0x20000000 (DTCM, SRAM1,
  SRAM2 ...; aliased SRAM2 / CCM on L4 and G4); CCM RAM elsewhere, SRAM4 on U5 and the D2/D3
  banks on H7 are separate blocks, so the largest block is smaller than the total.
* nRF, SAM, Apollo, RA, EFR32, MAX78000, GD32V, K210: one contiguous SRAM (the application core's
  on the nRF5340); radio stacks (SoftDevice, Matter, the LTE modem) take a share at run time.
* ESP32 family: ESP-IDF's linker scripts (components/esp_system/ld/<chip>/memory.ld.in) cap
  static data; on the ESP32 at 160 KB, on the newer chips at the data segment shared with IRAM
  code. A larger arena must come from the heap or PSRAM.
* RP2040 / RP2350: the pico-sdk's default linker script (memmap_default.ld) gives .bss the
  striped main SRAM (256 KB / 512 KB); the two 4 KB scratch banks hold the stacks.
* i.MX RT (and Teensy 4.x): FlexRAM is split into ITCM / DTCM / OCRAM; a static array goes to
  DTCM unless placed in OCRAM with a section attribute, so the largest block is the OCRAM the
  SDK's linker script declares (Teensy: the 512 KB RAM2, `DMAMEM`).

Firmware needs RAM too (stacks, heap, DMA buffers, RTOS, radio): subtract it with `--reserve`.
Each entry names the datasheet or SDK document its figures come from; sizes are the vendors' KB
(1,024 bytes). Boards are listed with the chip they carry; a chip name works as a target too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.builds.build import CMSIS_NN, CPUS
from arenalens.errors import UsageError

KIB = 1024
MIB = 1024 * 1024
ALL_TARGETS = "all"  # `--target all`: every board at once


@dataclass(frozen=True, slots=True)
class Target:
    """One board, module or MCU: its core, SRAM, the largest arena it holds, and the sources."""

    name: str  # the --target spelling, lower case
    title: str
    core: str  # as the vendor writes it, with the clock: "Cortex-M7 216 MHz"
    cpu: str  # the core alone, as a compiler names it: "cortex-m7", "xtensa-lx6", "riscv32"
    sram_bytes: int  # on-chip SRAM as documented
    arena_limit_bytes: int  # the largest contiguous block a static arena can occupy
    source: str  # the document (and section) the figures come from
    note: str = ""  # why the limit is what it is, and what else takes RAM there
    chip: str = ""  # a board's MCU target name; empty for a chip itself

    @property
    def is_board(self) -> bool:
        """True for boards and modules, False for bare chips."""
        return bool(self.chip)

    @property
    def kernels(self) -> str | None:
        """The TFLM kernel library this part's builds use unless told otherwise, or None when
        arenalens has no 32-bit model of its core (see `KERNELS_WHY`)."""
        return CMSIS_NN if self.cpu in CPUS else None


def _chip(
    name: str,
    title: str,
    core: str,
    cpu: str,
    *,
    sram_kib: int,
    limit_bytes: int,
    source: str,
    note: str = "",
) -> Target:
    return Target(name, title, core, cpu, sram_kib * KIB, limit_bytes, source, note)


_CHIPS = (
    # --- STMicroelectronics STM32 -------------------------------------------------------------
    _chip(
        "stm32f103c8",
        "STMicroelectronics STM32F103C8",
        "Cortex-M3 72 MHz",
        "cortex-m3",
        sram_kib=20,
        limit_bytes=20 * KIB,
        source="STM32F103x8/xB datasheet DS5319, §2.3.3 Embedded SRAM: 20 Kbytes",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "stm32f401re",
        "STMicroelectronics STM32F401RE",
        "Cortex-M4F 84 MHz",
        "cortex-m4",
        sram_kib=96,
        limit_bytes=96 * KIB,
        source="STM32F401xD/xE datasheet DS10086, §3.5 Embedded SRAM: 96 Kbytes",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "stm32f411re",
        "STMicroelectronics STM32F411RE / CE",
        "Cortex-M4F 100 MHz",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="STM32F411xC/xE datasheet DS10314, §3.5 Embedded SRAM: 128 Kbytes",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "stm32f407vg",
        "STMicroelectronics STM32F407VG",
        "Cortex-M4F 168 MHz",
        "cortex-m4",
        sram_kib=192,
        limit_bytes=128 * KIB,
        source="STM32F405xx/407xx datasheet DS8626, §2.2.6 Embedded SRAM: 192 Kbytes "
        "including 64 Kbytes of CCM data RAM",
        note="SRAM1 + SRAM2 (112 + 16 KB) are contiguous at 0x20000000; the 64 KB CCM at "
        "0x10000000 is a separate block that DMA cannot reach",
    ),
    _chip(
        "stm32f429zi",
        "STMicroelectronics STM32F429ZI",
        "Cortex-M4F 180 MHz",
        "cortex-m4",
        sram_kib=256,
        limit_bytes=192 * KIB,
        source="STM32F427xx/429xx datasheet DS9405, §3.6 Embedded SRAM: 256 Kbytes "
        "including 64 Kbytes of CCM data RAM",
        note="SRAM1 + SRAM2 + SRAM3 (112 + 16 + 64 KB) are contiguous; the 64 KB CCM is separate",
    ),
    _chip(
        "stm32f446re",
        "STMicroelectronics STM32F446RE",
        "Cortex-M4F 180 MHz",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="STM32F446xC/E datasheet DS10693, §3.6 Embedded SRAM: 128 Kbytes",
        note="SRAM1 + SRAM2 (112 + 16 KB) are contiguous at 0x20000000",
    ),
    _chip(
        "stm32f746",
        "STMicroelectronics STM32F746",
        "Cortex-M7 216 MHz",
        "cortex-m7",
        sram_kib=320,
        limit_bytes=320 * KIB,
        source="STM32F745xx/746xx datasheet DS10916, §3.7 Embedded SRAM: 320 Kbytes "
        "including 64 Kbytes of DTCM (+16 Kbytes ITCM)",
        note="DTCM, SRAM1 and SRAM2 (64 + 240 + 16 KB) are contiguous from 0x20000000",
    ),
    _chip(
        "stm32f767zi",
        "STMicroelectronics STM32F767 / F769",
        "Cortex-M7 216 MHz",
        "cortex-m7",
        sram_kib=512,
        limit_bytes=512 * KIB,
        source="STM32F765xx/767xx/768Ax/769xx datasheet DS11532, §3.7 Embedded SRAM: "
        "512 Kbytes including 128 Kbytes of DTCM (+16 Kbytes ITCM)",
        note="DTCM, SRAM1 and SRAM2 (128 + 368 + 16 KB) are contiguous from 0x20000000",
    ),
    _chip(
        "stm32h743",
        "STMicroelectronics STM32H743",
        "Cortex-M7 480 MHz",
        "cortex-m7",
        sram_kib=1060,
        limit_bytes=512 * KIB,
        source="STM32H742xI/G 743xI/G datasheet DS12110, §3.3.2 Embedded SRAM: 1 Mbyte = "
        "192 KB TCM + 864 KB user SRAM (+4 KB backup)",
        note="the largest contiguous block is the 512 KB AXI SRAM (D1 domain); DTCM is 128 KB",
    ),
    _chip(
        "stm32h747",
        "STMicroelectronics STM32H747",
        "Cortex-M7 480 MHz + Cortex-M4 240 MHz",
        "cortex-m7",
        sram_kib=1060,
        limit_bytes=512 * KIB,
        source="STM32H747xI/G datasheet DS12930, §3.3.2 Embedded SRAM: 1 Mbyte = 192 KB TCM + "
        "864 KB user SRAM (+4 KB backup)",
        note="the largest contiguous block is the 512 KB AXI SRAM (D1 domain), used by the M7",
    ),
    _chip(
        "stm32h750",
        "STMicroelectronics STM32H750",
        "Cortex-M7 480 MHz",
        "cortex-m7",
        sram_kib=1060,
        limit_bytes=512 * KIB,
        source="STM32H750VB/ZB/IB/XB datasheet DS12556, §3.3.2 Embedded SRAM: 1 Mbyte = "
        "192 KB TCM + 864 KB user SRAM (+4 KB backup)",
        note="the largest contiguous block is the 512 KB AXI SRAM (D1 domain)",
    ),
    _chip(
        "stm32l432kc",
        "STMicroelectronics STM32L432KC",
        "Cortex-M4F 80 MHz",
        "cortex-m4",
        sram_kib=64,
        limit_bytes=64 * KIB,
        source="STM32L432KB/KC datasheet DS11451, §3.5 Embedded SRAM: 64 Kbytes "
        "(48 KB SRAM1 + 16 KB SRAM2)",
        note="SRAM2 is also mapped right after SRAM1, so both form one 64 KB block (RM0394)",
    ),
    _chip(
        "stm32l476rg",
        "STMicroelectronics STM32L475 / L476",
        "Cortex-M4F 80 MHz",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="STM32L476xx datasheet DS10198, §3.5 Embedded SRAM: 128 Kbytes "
        "(96 KB SRAM1 + 32 KB SRAM2)",
        note="SRAM2 is also mapped at 0x20018000, right after SRAM1: one 128 KB block (RM0351)",
    ),
    _chip(
        "stm32l4r5zi",
        "STMicroelectronics STM32L4R5 / L4S5",
        "Cortex-M4F 120 MHz",
        "cortex-m4",
        sram_kib=640,
        limit_bytes=640 * KIB,
        source="STM32L4R5xx/L4R7xx/L4R9xx datasheet DS12023, §3.5 Embedded SRAM: 640 Kbytes "
        "(192 KB SRAM1 + 64 KB SRAM2 + 384 KB SRAM3)",
        note="SRAM1, SRAM2 (aliased) and SRAM3 are contiguous from 0x20000000 (RM0432)",
    ),
    _chip(
        "stm32u575",
        "STMicroelectronics STM32U575 / U585",
        "Cortex-M33 160 MHz",
        "cortex-m33",
        sram_kib=786,
        limit_bytes=768 * KIB,
        source="STM32U575xx datasheet DS13737 / STM32U585xx DS13086, §3.5 Embedded SRAM: "
        "786 Kbytes (SRAM1 192 + SRAM2 64 + SRAM3 512 + SRAM4 16 KB)",
        note="SRAM1–SRAM3 are contiguous from 0x20000000 (768 KB); SRAM4 sits apart at 0x28000000",
    ),
    _chip(
        "stm32g474re",
        "STMicroelectronics STM32G474RE",
        "Cortex-M4F 170 MHz",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="STM32G474xB/xC/xE datasheet DS12288, §3.6 Embedded SRAM: 128 Kbytes "
        "(SRAM1 80 + SRAM2 16 + CCM SRAM 32 KB)",
        note="CCM SRAM is also mapped right after SRAM2: one 128 KB block (RM0440)",
    ),
    _chip(
        "stm32wb55rg",
        "STMicroelectronics STM32WB55RG",
        "Cortex-M4F 64 MHz (+ Cortex-M0+ radio core)",
        "cortex-m4",
        sram_kib=256,
        limit_bytes=192 * KIB,
        source="STM32WB55xx datasheet DS11929, §3.4 Memories: 256 Kbytes SRAM "
        "(SRAM1 192 KB + SRAM2a 32 KB + SRAM2b 32 KB)",
        note="the BLE / 802.15.4 stack on CPU2 uses SRAM2; SRAM1 is the application's block",
    ),
    # --- Nordic Semiconductor ----------------------------------------------------------------
    _chip(
        "nrf52832",
        "Nordic nRF52832",
        "Cortex-M4F 64 MHz",
        "cortex-m4",
        sram_kib=64,
        limit_bytes=64 * KIB,
        source="nRF52832 Product Specification v1.x, Memory: 64 kB RAM",
        note="one block at 0x20000000; a SoftDevice (BLE stack) reserves part of it",
    ),
    _chip(
        "nrf52833",
        "Nordic nRF52833",
        "Cortex-M4F 64 MHz",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="nRF52833 Product Specification v1.x, Memory: 128 kB RAM",
        note="one block at 0x20000000; a BLE stack reserves part of it",
    ),
    _chip(
        "nrf52840",
        "Nordic nRF52840",
        "Cortex-M4F 64 MHz",
        "cortex-m4",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="nRF52840 Product Specification v1.7, Memory: 256 kB RAM",
        note="one block at 0x20000000; a SoftDevice (BLE stack) reserves part of it",
    ),
    _chip(
        "nrf5340",
        "Nordic nRF5340 (application core)",
        "Cortex-M33 128 MHz",
        "cortex-m33",
        sram_kib=512,
        limit_bytes=512 * KIB,
        source="nRF5340 Product Specification, Memory: application core 512 KB RAM "
        "(network core 64 KB more)",
        note="the application core's RAM is one block at 0x20000000",
    ),
    _chip(
        "nrf9160",
        "Nordic nRF9160",
        "Cortex-M33 64 MHz",
        "cortex-m33",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="nRF9160 Product Specification, Memory: 256 KB RAM",
        note="the LTE modem library shares part of it with the modem",
    ),
    _chip(
        "nrf54l15",
        "Nordic nRF54L15",
        "Cortex-M33 128 MHz",
        "cortex-m33",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="nRF54L15 datasheet, Memory: 256 KB RAM",
        note="one block at 0x20000000; the radio stack reserves part of it",
    ),
    # --- Espressif ------------------------------------------------------------------------------
    _chip(
        "esp32",
        "Espressif ESP32",
        "Xtensa LX6 dual-core 240 MHz",
        "xtensa-lx6",
        sram_kib=520,
        limit_bytes=160 * KIB,
        source="ESP-IDF Programming Guide (ESP32), API Guides › Memory Types: 520 KB SRAM "
        "(320 KB DRAM); statically allocated DRAM is limited to 160 KB",
        note="a larger arena must come from the heap (heap_caps_malloc) or PSRAM",
    ),
    _chip(
        "esp32-s3",
        "Espressif ESP32-S3",
        "Xtensa LX7 dual-core 240 MHz",
        "xtensa-lx7",
        sram_kib=512,
        limit_bytes=0x3FCDB700 - 0x3FC88000,
        source="ESP-IDF v5.x components/esp_system/ld/esp32s3/memory.ld.in: dram0_0_seg "
        "0x3FC88000–0x3FCDB700 (333.75 KB); ESP32-S3 datasheet: 512 KB SRAM",
        note="static data shares that segment with IRAM code: subtract the app's IRAM "
        "(idf.py size); the rest of the SRAM is cache and ROM data",
    ),
    _chip(
        "esp32-c3",
        "Espressif ESP32-C3",
        "RISC-V RV32IMC 160 MHz",
        "riscv32",
        sram_kib=400,
        limit_bytes=0x3FCD0000 - 0x3FC80000,
        source="ESP-IDF v5.x components/esp_system/ld/esp32c3/memory.ld.in: dram0_0_seg "
        "0x3FC80000–0x3FCD0000 (320 KB); ESP32-C3 datasheet: 400 KB SRAM (16 KB cache)",
        note="static data shares that segment with IRAM code: subtract the app's IRAM",
    ),
    _chip(
        "esp32-c6",
        "Espressif ESP32-C6",
        "RISC-V RV32IMAC 160 MHz",
        "riscv32",
        sram_kib=512,
        limit_bytes=0x4086E610 - 0x40800000,
        source="ESP-IDF v5.x components/esp_system/ld/esp32c6/memory.ld.in: sram_seg "
        "0x40800000–0x4086E610 (441.5 KB); ESP32-C6 datasheet: 512 KB HP SRAM",
        note="code placed in SRAM shares that segment: subtract it",
    ),
    # --- Raspberry Pi ---------------------------------------------------------------------------
    _chip(
        "rp2040",
        "Raspberry Pi RP2040",
        "Cortex-M0+ dual-core 133 MHz",
        "cortex-m0plus",
        sram_kib=264,
        limit_bytes=256 * KIB,
        source="RP2040 datasheet §2.6.2 SRAM: 264 KB in six banks; pico-sdk "
        "rp2040 memmap_default.ld: RAM 256k + SCRATCH_X 4k + SCRATCH_Y 4k",
        note="the four striped 64 KB banks hold .bss; the 4 KB scratch banks hold the stacks",
    ),
    _chip(
        "rp2350",
        "Raspberry Pi RP2350",
        "Cortex-M33 dual-core 150 MHz (or Hazard3 RISC-V)",
        "cortex-m33",
        sram_kib=520,
        limit_bytes=512 * KIB,
        source="RP2350 datasheet §4.2 SRAM: 520 KB in ten banks; pico-sdk rp2350 "
        "memmap_default.ld: RAM 512k + SCRATCH_X 4k + SCRATCH_Y 4k",
        note="the eight striped 64 KB banks hold .bss; the 4 KB scratch banks hold the stacks",
    ),
    # --- NXP i.MX RT ----------------------------------------------------------------------------
    _chip(
        "imxrt1062",
        "NXP i.MX RT1060 / RT1062",
        "Cortex-M7 600 MHz",
        "cortex-m7",
        sram_kib=1024,
        limit_bytes=768 * KIB,
        source="i.MX RT1060 data sheet: 1 MB on-chip RAM (512 KB FlexRAM + 512 KB OCRAM2); "
        "MCUXpresso SDK linker script MIMXRT1062xxxxx: m_data 128 KB DTCM, m_data2 768 KB "
        "OCRAM at 0x20200000",
        note="a plain static array lands in the 128 KB DTCM; place the arena in OCRAM "
        "(section attribute) to get the 768 KB block",
    ),
    _chip(
        "imxrt1052",
        "NXP i.MX RT1050 / RT1052",
        "Cortex-M7 600 MHz",
        "cortex-m7",
        sram_kib=512,
        limit_bytes=256 * KIB,
        source="i.MX RT1050 data sheet: 512 KB FlexRAM; MCUXpresso SDK linker script "
        "MIMXRT1052xxxxx: m_data 128 KB DTCM, m_data2 256 KB OCRAM (default FlexRAM split "
        "128 KB ITCM / 128 KB DTCM / 256 KB OCRAM)",
        note="a plain static array lands in the 128 KB DTCM; place the arena in OCRAM for 256 KB",
    ),
    # --- Microchip (Atmel) SAM ------------------------------------------------------------------
    _chip(
        "samd21g18",
        "Microchip SAM D21 (ATSAMD21G18)",
        "Cortex-M0+ 48 MHz",
        "cortex-m0plus",
        sram_kib=32,
        limit_bytes=32 * KIB,
        source="SAM D21/DA1 family datasheet DS40001882, Configuration Summary: 32 KB SRAM",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "samd51j19",
        "Microchip SAM D51 (ATSAMD51J19 / P19)",
        "Cortex-M4F 120 MHz",
        "cortex-m4",
        sram_kib=192,
        limit_bytes=192 * KIB,
        source="SAM D5x/E5x family datasheet DS60001507, Configuration Summary: 192 KB SRAM "
        "(x19 parts)",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "same70q21",
        "Microchip SAM E70 (ATSAME70Q21)",
        "Cortex-M7 300 MHz",
        "cortex-m7",
        sram_kib=384,
        limit_bytes=384 * KIB,
        source="SAM E70/S70/V70/V71 family datasheet DS60001527, Memories: 384 KB SRAM",
        note="one block at 0x20400000 with TCM disabled (the default); enabling TCM carves "
        "it out of this SRAM",
    ),
    _chip(
        "sam3x8e",
        "Microchip SAM3X8E",
        "Cortex-M3 84 MHz",
        "cortex-m3",
        sram_kib=96,
        limit_bytes=96 * KIB,
        source="SAM3X/SAM3A series datasheet, Memories: 96 KB SRAM (64 KB SRAM0 + 32 KB SRAM1)",
        note="SRAM0 and SRAM1 are contiguous in the mirrored region the Arduino Due core's "
        "linker script uses",
    ),
    # --- Ambiq ----------------------------------------------------------------------------------
    _chip(
        "apollo3",
        "Ambiq Apollo3 Blue",
        "Cortex-M4F 48/96 MHz",
        "cortex-m4",
        sram_kib=384,
        limit_bytes=384 * KIB,
        source="Apollo3 Blue SoC datasheet, Memory: 384 KB SRAM (64 KB TCM + 320 KB)",
        note="TCM and SRAM are contiguous from 0x10000000",
    ),
    # --- Analog Devices (Maxim) -----------------------------------------------------------------
    _chip(
        "max78000",
        "Analog Devices MAX78000",
        "Cortex-M4F 100 MHz (+ RISC-V + CNN accelerator)",
        "cortex-m4",
        sram_kib=128,
        limit_bytes=128 * KIB,
        source="MAX78000 datasheet, Features: 512 KB flash, 128 KB SRAM",
        note="the CNN accelerator's own data and weight memories are not usable for TFLM",
    ),
    # --- Renesas RA -----------------------------------------------------------------------------
    _chip(
        "ra4m1",
        "Renesas RA4M1",
        "Cortex-M4F 48 MHz",
        "cortex-m4",
        sram_kib=32,
        limit_bytes=32 * KIB,
        source="Renesas RA4M1 Group datasheet, Features: 256 KB code flash, 32 KB SRAM",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "ra6m4",
        "Renesas RA6M4",
        "Cortex-M33 200 MHz",
        "cortex-m33",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="Renesas RA6M4 Group datasheet, Features: 1 MB code flash, 256 KB SRAM",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "ra6m5",
        "Renesas RA6M5",
        "Cortex-M33 200 MHz",
        "cortex-m33",
        sram_kib=512,
        limit_bytes=512 * KIB,
        source="Renesas RA6M5 Group datasheet, Features: 2 MB code flash, 512 KB SRAM",
        note="one SRAM block at 0x20000000",
    ),
    # --- Silicon Labs ---------------------------------------------------------------------------
    _chip(
        "efr32mg12",
        "Silicon Labs EFR32MG12 (P332F1024)",
        "Cortex-M4F 40 MHz",
        "cortex-m4",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="EFR32MG12 Mighty Gecko family datasheet, Ordering Information: "
        "EFR32MG12P332F1024: 1024 kB flash, 256 kB RAM",
        note="one RAM block; the radio stack reserves part of it",
    ),
    _chip(
        "efr32mg24",
        "Silicon Labs EFR32MG24",
        "Cortex-M33 78 MHz",
        "cortex-m33",
        sram_kib=256,
        limit_bytes=256 * KIB,
        source="EFR32MG24 Wireless SoC family datasheet, Ordering Information: 1536 kB flash, "
        "256 kB RAM",
        note="one RAM block; the radio / Matter stack reserves part of it",
    ),
    _chip(
        "efr32bg22",
        "Silicon Labs EFR32BG22",
        "Cortex-M33 76.8 MHz",
        "cortex-m33",
        sram_kib=32,
        limit_bytes=32 * KIB,
        source="EFR32BG22 Blue Gecko family datasheet, Ordering Information: 512 kB flash, "
        "32 kB RAM",
        note="one RAM block; the BLE stack reserves part of it",
    ),
    # --- RISC-V ---------------------------------------------------------------------------------
    _chip(
        "gd32vf103cb",
        "GigaDevice GD32VF103CB",
        "RISC-V Bumblebee (RV32IMAC) 108 MHz",
        "riscv32",
        sram_kib=32,
        limit_bytes=32 * KIB,
        source="GD32VF103 datasheet, Memory: GD32VF103CB 128 KB flash, 32 KB SRAM",
        note="one SRAM block at 0x20000000",
    ),
    _chip(
        "k210",
        "Kendryte K210",
        "RISC-V RV64GC dual-core 400 MHz (+ KPU)",
        "riscv64",
        sram_kib=8 * 1024,
        limit_bytes=6 * MIB,
        source="Kendryte K210 datasheet, SRAM: 8 MiB = 6 MiB general-purpose + 2 MiB AI SRAM",
        note="the 2 MiB AI SRAM belongs to the KPU while it runs; 64-bit pointers, like the "
        "host build arenalens measures",
    ),
)

_CHIP_BY_NAME = {chip.name: chip for chip in _CHIPS}

# Boards and modules people put TFLM on: (name, title, chip, extra note).
_BOARD_ROWS = (
    ("bluepill-f103c8", "STM32 Blue Pill (STM32F103C8)", "stm32f103c8", ""),
    ("nucleo-f401re", "ST NUCLEO-F401RE", "stm32f401re", ""),
    ("nucleo-f411re", "ST NUCLEO-F411RE", "stm32f411re", ""),
    ("blackpill-f411ce", "WeAct Black Pill (STM32F411CE)", "stm32f411re", ""),
    ("stm32f4-discovery", "ST STM32F4DISCOVERY (STM32F407VG)", "stm32f407vg", ""),
    ("nucleo-f429zi", "ST NUCLEO-F429ZI", "stm32f429zi", ""),
    ("stm32f429i-disc1", "ST 32F429IDISCOVERY (STM32F429ZI)", "stm32f429zi", ""),
    ("nucleo-f446re", "ST NUCLEO-F446RE", "stm32f446re", ""),
    ("stm32f746g-disco", "ST 32F746GDISCOVERY (STM32F746NG)", "stm32f746", ""),
    ("nucleo-f746zg", "ST NUCLEO-F746ZG", "stm32f746", ""),
    ("nucleo-f767zi", "ST NUCLEO-F767ZI", "stm32f767zi", ""),
    ("stm32f769i-disco", "ST 32F769IDISCOVERY (STM32F769NI)", "stm32f767zi", ""),
    ("nucleo-h743zi", "ST NUCLEO-H743ZI2", "stm32h743", ""),
    ("stm32h747i-disco", "ST STM32H747I-DISCO", "stm32h747", ""),
    (
        "arduino-portenta-h7",
        "Arduino Portenta H7 (STM32H747XI)",
        "stm32h747",
        "Arduino's Mbed OS core takes part of the M7's RAM",
    ),
    (
        "arduino-nicla-vision",
        "Arduino Nicla Vision (STM32H747AII6)",
        "stm32h747",
        "Arduino's Mbed OS core takes part of the M7's RAM",
    ),
    (
        "arduino-giga-r1",
        "Arduino GIGA R1 WiFi (STM32H747XI)",
        "stm32h747",
        "Arduino's Mbed OS core takes part of the M7's RAM",
    ),
    ("weact-h750", "WeAct MiniSTM32H750 (STM32H750VB)", "stm32h750", ""),
    ("nucleo-l432kc", "ST NUCLEO-L432KC", "stm32l432kc", ""),
    ("nucleo-l476rg", "ST NUCLEO-L476RG", "stm32l476rg", ""),
    ("b-l475e-iot01a", "ST B-L475E-IOT01A IoT node (STM32L475VG)", "stm32l476rg", ""),
    ("nucleo-l4r5zi", "ST NUCLEO-L4R5ZI", "stm32l4r5zi", ""),
    ("b-l4s5i-iot01a", "ST B-L4S5I-IOT01A IoT node (STM32L4S5VI)", "stm32l4r5zi", ""),
    ("nucleo-u575zi-q", "ST NUCLEO-U575ZI-Q", "stm32u575", ""),
    ("b-u585i-iot02a", "ST B-U585I-IOT02A Discovery kit (STM32U585AI)", "stm32u575", ""),
    ("nucleo-g474re", "ST NUCLEO-G474RE", "stm32g474re", ""),
    ("p-nucleo-wb55", "ST P-NUCLEO-WB55 (STM32WB55RG)", "stm32wb55rg", ""),
    ("nrf52-dk", "Nordic nRF52 DK (nRF52832)", "nrf52832", ""),
    ("arduino-nicla-sense-me", "Arduino Nicla Sense ME (nRF52832)", "nrf52832", ""),
    ("microbit-v2", "BBC micro:bit V2 (nRF52833)", "nrf52833", ""),
    ("nrf52840-dk", "Nordic nRF52840 DK", "nrf52840", ""),
    (
        "arduino-nano-33-ble",
        "Arduino Nano 33 BLE / BLE Sense / Sense Rev2 (nRF52840)",
        "nrf52840",
        "Mbed OS and the BLE stack take part of it",
    ),
    ("seeed-xiao-nrf52840", "Seeed Studio XIAO nRF52840 / Sense", "nrf52840", ""),
    ("adafruit-feather-nrf52840", "Adafruit Feather nRF52840 Express / Sense", "nrf52840", ""),
    ("nrf5340-dk", "Nordic nRF5340 DK", "nrf5340", ""),
    ("thingy53", "Nordic Thingy:53 (nRF5340)", "nrf5340", ""),
    ("nrf9160-dk", "Nordic nRF9160 DK", "nrf9160", ""),
    ("nrf54l15-dk", "Nordic nRF54L15 DK", "nrf54l15", ""),
    ("esp32-devkitc", "Espressif ESP32-DevKitC (ESP32-WROOM-32)", "esp32", ""),
    (
        "esp-eye",
        "Espressif ESP-EYE (ESP32)",
        "esp32",
        "its 8 MB PSRAM can hold a heap-allocated arena",
    ),
    (
        "esp32-cam",
        "AI-Thinker ESP32-CAM",
        "esp32",
        "its 4 MB PSRAM can hold a heap-allocated arena",
    ),
    ("esp32-s3-devkitc-1", "Espressif ESP32-S3-DevKitC-1", "esp32-s3", ""),
    (
        "esp32-s3-eye",
        "Espressif ESP32-S3-EYE",
        "esp32-s3",
        "its 8 MB PSRAM can hold a heap-allocated arena",
    ),
    ("seeed-xiao-esp32s3", "Seeed Studio XIAO ESP32S3 / Sense", "esp32-s3", ""),
    ("arduino-nano-esp32", "Arduino Nano ESP32 (ESP32-S3)", "esp32-s3", ""),
    ("esp32-c3-devkitm-1", "Espressif ESP32-C3-DevKitM-1", "esp32-c3", ""),
    ("seeed-xiao-esp32c3", "Seeed Studio XIAO ESP32C3", "esp32-c3", ""),
    ("esp32-c6-devkitc-1", "Espressif ESP32-C6-DevKitC-1", "esp32-c6", ""),
    ("seeed-xiao-esp32c6", "Seeed Studio XIAO ESP32C6", "esp32-c6", ""),
    ("raspberry-pi-pico", "Raspberry Pi Pico / Pico W (RP2040)", "rp2040", ""),
    ("arduino-nano-rp2040-connect", "Arduino Nano RP2040 Connect", "rp2040", ""),
    ("seeed-xiao-rp2040", "Seeed Studio XIAO RP2040", "rp2040", ""),
    ("raspberry-pi-pico2", "Raspberry Pi Pico 2 / Pico 2 W (RP2350)", "rp2350", ""),
    ("mimxrt1060-evk", "NXP MIMXRT1060-EVK / EVKB", "imxrt1062", ""),
    ("mimxrt1050-evkb", "NXP MIMXRT1050-EVKB", "imxrt1052", ""),
    ("teensy-40", "PJRC Teensy 4.0 (i.MX RT1062)", "imxrt1062", ""),
    ("teensy-41", "PJRC Teensy 4.1 (i.MX RT1062)", "imxrt1062", ""),
    ("arduino-zero", "Arduino Zero / MKR family (SAMD21G18)", "samd21g18", ""),
    ("arduino-nano-33-iot", "Arduino Nano 33 IoT (SAMD21G18)", "samd21g18", ""),
    ("seeed-xiao-samd21", "Seeed Studio XIAO SAMD21", "samd21g18", ""),
    ("adafruit-feather-m4", "Adafruit Feather M4 Express (SAMD51J19)", "samd51j19", ""),
    ("adafruit-edgebadge", "Adafruit EdgeBadge / PyBadge (SAMD51J19)", "samd51j19", ""),
    ("seeed-wio-terminal", "Seeed Studio Wio Terminal (SAMD51P19)", "samd51j19", ""),
    ("same70-xplained", "Microchip SAM E70 Xplained (ATSAME70Q21)", "same70q21", ""),
    ("arduino-due", "Arduino Due (SAM3X8E)", "sam3x8e", ""),
    ("sparkfun-edge", "SparkFun Edge (Apollo3 Blue)", "apollo3", ""),
    ("sparkfun-artemis", "SparkFun RedBoard Artemis / Artemis Nano (Apollo3 Blue)", "apollo3", ""),
    ("max78000fthr", "Analog Devices MAX78000FTHR", "max78000", ""),
    ("arduino-uno-r4", "Arduino UNO R4 Minima / WiFi (RA4M1)", "ra4m1", ""),
    ("ek-ra6m4", "Renesas EK-RA6M4", "ra6m4", ""),
    ("ek-ra6m5", "Renesas EK-RA6M5", "ra6m5", ""),
    ("arduino-portenta-c33", "Arduino Portenta C33 (RA6M5)", "ra6m5", ""),
    ("thunderboard-sense-2", "Silicon Labs Thunderboard Sense 2 (EFR32MG12)", "efr32mg12", ""),
    ("xg24-dev-kit", "Silicon Labs xG24 Dev Kit (EFR32MG24)", "efr32mg24", ""),
    ("seeed-xiao-mg24", "Seeed Studio XIAO MG24 / Sense (EFR32MG24)", "efr32mg24", ""),
    ("thunderboard-bg22", "Silicon Labs Thunderboard BG22 (EFR32BG22)", "efr32bg22", ""),
    ("sipeed-longan-nano", "Sipeed Longan Nano (GD32VF103CB)", "gd32vf103cb", ""),
    ("sipeed-maix-bit", "Sipeed MAix Bit (Kendryte K210)", "k210", ""),
)
# Boards whose software lays memory out differently from their chip's SDK: (limit, source, note).
# Teensyduino puts arrays marked DMAMEM in the 512 KB RAM2 (OCRAM) and everything else in RAM1,
# the tightly coupled 512 KB it shares with code.
_TEENSY_4 = (
    512 * KIB,
    "PJRC Teensy 4.0 / 4.1 product pages, Memory Layout: RAM1 512 KB (ITCM code + DTCM data), "
    "RAM2 512 KB (OCRAM, DMAMEM); i.MX RT1060 data sheet: 1 MB on-chip RAM",
    "declare the arena DMAMEM to get the 512 KB RAM2 block; RAM1's data share shrinks with code",
)
_BOARD_LAYOUTS = {"teensy-40": _TEENSY_4, "teensy-41": _TEENSY_4}


def _board(name: str, title: str, chip_name: str, note: str) -> Target:
    chip = _CHIP_BY_NAME[chip_name]
    layout = _BOARD_LAYOUTS.get(name)
    if layout is not None:
        limit, source, own_note = layout
        return replace(
            chip,
            name=name,
            title=title,
            arena_limit_bytes=limit,
            source=source,
            note=own_note,
            chip=chip.name,
        )
    return replace(
        chip,
        name=name,
        title=title,
        note="; ".join(part for part in (note, chip.note) if part),
        chip=chip.name,
    )


_BOARDS = tuple(_board(*row) for row in _BOARD_ROWS)

TARGETS: Mapping[str, Target] = MappingProxyType(
    {target.name: target for target in (*_CHIPS, *_BOARDS)}
)
BOARDS: tuple[Target, ...] = _BOARDS
CHIPS: tuple[Target, ...] = _CHIPS
# Spellings people type: "STM32F746", "esp32s3", "nano33ble".
_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "esp32s3": "esp32-s3",
        "esp32c3": "esp32-c3",
        "esp32c6": "esp32-c6",
        "nano33ble": "arduino-nano-33-ble",
        "arduino-nano-33-ble-sense": "arduino-nano-33-ble",
        "nano-33-ble": "arduino-nano-33-ble",
        "apollo3-blue": "apollo3",
        "pico": "raspberry-pi-pico",
        "pico2": "raspberry-pi-pico2",
        "teensy4": "teensy-40",
        "teensy40": "teensy-40",
        "teensy41": "teensy-41",
        "portenta-h7": "arduino-portenta-h7",
        "nicla-vision": "arduino-nicla-vision",
        "wio-terminal": "seeed-wio-terminal",
        "stm32f746ng": "stm32f746",
        "stm32h743zi": "stm32h743",
        "stm32h747xi": "stm32h747",
        "stm32f769ni": "stm32f767zi",
        "nrf5340-app": "nrf5340",
    }
)


def get_target(name: str) -> Target:
    """A target name (any case, '_' or '-') → Target; UsageError listing where to find names."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    found = TARGETS.get(key)
    if found is None:
        close = sorted(known for known in TARGETS if key and (key in known or known in key))
        hint = f" (did you mean: {', '.join(close[:6])}?)" if close else ""
        raise UsageError(
            f"unknown target '{name}'{hint}: `arenalens check --list-targets` lists the "
            f"{len(BOARDS)} boards and {len(CHIPS)} chips; or give --budget SIZE for any other part"
        )
    return found


def target_document(target: Target) -> dict[str, object]:
    """Target → its JSON form (check documents and --list-targets --json)."""
    return {
        "name": target.name,
        "title": target.title,
        "kind": "board" if target.is_board else "chip",
        "chip": target.chip or target.name,
        "core": target.core,
        "cpu": target.cpu,
        "kernels": target.kernels,
        "sram_bytes": target.sram_bytes,
        "arena_limit_bytes": target.arena_limit_bytes,
        "source": target.source,
        "note": target.note,
    }
