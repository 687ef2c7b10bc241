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

Firmware needs RAM too (stacks, heap, RTOS, radio stack): each part names its usual firmware
(`firmware` and `firmware_defaults` in targets.json, with sources), whose share is the default
reserve `check` and `report` subtract; `--reserve` replaces it.
Each entry names the datasheet or SDK document its figures come from; sizes are the vendors' KB
(1,024 bytes). Boards are listed with the chip they carry; a chip name works as a target too.

The rows are data: `targets.json` (package data, checked against `schemas/targets.schema.json`
and for consistency by `tests/test_targets.py`), loaded once into frozen `Target`s. A chip's
row also says which TFLM build its figures are for (`build_cpu`, `kernels`: a core and a kernel
library of `build_records.json`): null for a core arenalens has no 32-bit model of yet, whose
figure is the x86-64 wheel's, marked an estimate. A chip's RAM banks (`banks`, `MemoryBank`) are
rows of its own; a board adds the banks it carries (PSRAM, SDRAM) to its chip's. A chip that is
a core of the build records (the ESP32 family) is spelled as the core is, and the core's
aliases reach it too (`esp32-s3`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

from arenalens.builds.data import from_row
from arenalens.builds.records import CORE_SPELLINGS
from arenalens.errors import UsageError
from arenalens.records import record
from arenalens.units import format_bytes_short

ALL_TARGETS = "all"  # `--target all`: every board at once
# A bank's kind, fastest first (`MemoryBank.kind`).
TIGHTLY_COUPLED = "tightly-coupled"
ON_CHIP = "on-chip"
EXTERNAL = "external"
BANK_KINDS = (TIGHTLY_COUPLED, ON_CHIP, EXTERNAL)
CATALOGUE = "targets.json"  # package data next to this module


@record(slots=True)
class Firmware:
    """What a part's usual firmware keeps of the arena's RAM block: the default reserve."""

    name: str
    title: str
    parts: Mapping[str, int]  # rtos, stack, heap, globals, radio → bytes
    source: str

    @property
    def reserve_bytes(self) -> int:
        """The bytes the arena leaves the firmware."""
        return sum(self.parts.values())

    def parts_text(self) -> str:
        """'rtos 2 KiB + stack 4 KiB + heap 8 KiB + radio 24 KiB'."""
        return " + ".join(
            f"{name} {format_bytes_short(nbytes)}" for name, nbytes in self.parts.items()
        )


@record(slots=True)
class MemoryBank:
    """One RAM bank of a chip or board: where it is, how large, how fast, who can reach it."""

    name: str  # as the reference manual or SDK names it: 'dtcm', 'axi-sram', 'psram'
    kind: str  # 'tightly-coupled' | 'on-chip' | 'external'
    size_bytes: int
    source: str  # the document (and section) the figures come from
    address: int | None = None  # its base address, where the memory map gives one
    # What the application's data cannot have there: a boot stage's region (a second-stage
    # loader) or code run from that RAM (Teensy's ITCM share of RAM1); never the application's
    # stacks and heap, which are the board's firmware reserve (`Target.firmware`), taken from the
    # `static_array` bank.
    firmware_bytes: int = 0
    static_array: bool = False  # a `static uint8_t tensor_arena[...]` lands here by default
    dma: bool | None = None  # DMA can reach it (None: not documented)
    npu: bool | None = None  # the chip's NPU can reach it (None: no NPU, or not documented)
    speed: str = ""  # a cited figure or class of its speed
    note: str = ""
    section: str = ""  # the linker section that lands a static buffer here ("": see allocate)
    allocate: str = ""  # "heap_caps_malloc", "arduino-sdram": how firmware gets memory there
    joins_next: bool = False  # the next bank starts where this one ends: one array spans both

    @property
    def kind_rank(self) -> int:
        """0 for tightly coupled, 1 on-chip, 2 external: its speed class, fastest first."""
        return BANK_KINDS.index(self.kind)


@record(slots=True)
class VelaConfig:
    """The Vela configuration a chip's vendor compiles with instead of Arm's defaults: its own
    vela.ini, system configuration (clocks, memory bandwidths and latencies, which Vela's time
    estimate follows) and memory mode."""

    config_file: str  # the vela.ini the vendor ships: 'himax_vela.ini'
    system_config: str  # its --system-config section
    memory_mode: str  # its --memory-mode section
    source: str


def _bank(row: Mapping[str, Any]) -> MemoryBank:
    return from_row(MemoryBank, row)


@record(slots=True)
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
    # The core (or chip) of the TFLM build the part's figures are for (`builds.build.CPUS`), or
    # None when arenalens has no 32-bit model of it (see `target_build.KERNELS_WHY`).
    build_cpu: str | None = None
    # The kernel library that build links unless told otherwise (None with no build_cpu).
    kernels: str | None = None
    # The Ethos-U NPU its firmware drives (a co-processor of `build_records.json`), None without.
    npu: str | None = None
    # Its RAM banks (a board's: its chip's, then those the board adds); empty where not listed.
    banks: tuple[MemoryBank, ...] = ()
    # The Vela configuration its vendor's SDK compiles with (None: Arm's defaults for the NPU).
    vela_config: VelaConfig | None = None
    # What its usual firmware keeps of the arena's block (the default reserve; --reserve
    # replaces it). On a Linux device: what the OS and the rest of the app keep of its RAM.
    firmware: Firmware | None = None
    # A Linux-class device (`linux_devices`: LiteRT, not TFLM): its OS image and the ISA
    # LiteRT's kernels are built for there; both empty for an MCU.
    os: str = ""
    isa: str = ""

    @property
    def reserve_bytes(self) -> int:
        """The default reserve: what the usual firmware keeps (0 when unknown)."""
        return 0 if self.firmware is None else self.firmware.reserve_bytes

    @property
    def is_board(self) -> bool:
        """True for boards and modules, False for bare chips."""
        return bool(self.chip)

    @property
    def runs_linux(self) -> bool:
        """True for a Linux-class device: LiteRT runs there, TFLM does not."""
        return bool(self.os)


def _chip(row: Mapping[str, Any]) -> Target:
    return from_row(
        Target,
        row,
        banks=tuple(_bank(bank) for bank in row.get("banks", ())),
        vela_config=None if "vela_config" not in row else VelaConfig(**row["vela_config"]),
    )


def _board(
    row: Mapping[str, Any], chips: Mapping[str, Target], layouts: Mapping[str, Any]
) -> Target:
    """A board: its chip's core, build and SRAM; the chip's limit, source and note unless its
    software lays memory out its own way (`layout`); its own note first."""
    chip = chips[row["chip"]]
    layout = layouts.get(row.get("layout", ""))
    banks = chip.banks
    if layout is not None:
        limit, source, note = layout["arena_limit_bytes"], layout["source"], layout["note"]
        banks = ()  # the board's software lays memory out its own way: not the chip's banks
    else:
        limit, source = chip.arena_limit_bytes, chip.source
        note = "; ".join(part for part in (row.get("note", ""), chip.note) if part)
    return Target(
        name=row["name"],
        title=row["title"],
        core=chip.core,
        cpu=chip.cpu,
        sram_bytes=chip.sram_bytes,
        arena_limit_bytes=limit,
        source=source,
        note=note,
        chip=chip.name,
        build_cpu=chip.build_cpu,
        kernels=chip.kernels,
        npu=chip.npu,
        banks=(*banks, *(_bank(bank) for bank in row.get("banks", ()))),
        vela_config=chip.vela_config,
    )


def _linux_device(row: Mapping[str, Any]) -> Target:
    """A Linux-class device: its RAM is one pool the kernel hands out (one bank, the reserve
    taken from it); no TFLM build."""
    ram = row["ram_bytes"]
    return Target(
        name=row["name"],
        title=row["title"],
        core=row["core"],
        cpu=row["cpu"],
        sram_bytes=ram,
        arena_limit_bytes=ram,
        source=row["source"],
        note=row.get("note", ""),
        banks=(MemoryBank("dram", EXTERNAL, ram, row["source"], static_array=True),),
        os=row["os"],
        isa=row["isa"],
    )


def catalogue_document() -> dict[str, Any]:
    """The catalogue as shipped (`targets.json`)."""
    # Beside this module, as `tflite/opcodes.py` reads its option tables: importlib.resources
    # costs more to import (zipfile, threading) than reading the catalogue (os.path: see
    # `builds.data.records_document`).
    with open(os.path.join(os.path.dirname(__file__), CATALOGUE), encoding="utf-8") as handle:
        text = handle.read()
    document: dict[str, Any] = json.loads(text)
    return document


@cache
def _catalogue() -> _Catalogue:
    """targets.json, parsed once, its rows by name (nothing built yet)."""
    document = catalogue_document()
    kinds = ("chips", "boards", "linux_devices")
    rows = {kind: {row["name"]: row for row in document[kind]} for kind in kinds}
    kind_of = {name: kind for kind in kinds for name in rows[kind]}  # a later kind wins a name
    profiles = {
        name: Firmware(name, row["title"], MappingProxyType(dict(row["parts"])), row["source"])
        for name, row in document["firmware"].items()
    }
    return _Catalogue(document, rows, kind_of, profiles)


class _Catalogue(NamedTuple):
    document: Mapping[str, Any]
    rows: Mapping[str, Mapping[str, Mapping[str, Any]]]  # kind → name → row
    kind_of: Mapping[str, str]  # target name → the kind its Target is built from
    profiles: Mapping[str, Firmware]


_BUILT: dict[tuple[str, str], Target] = {}


def _built(kind: str, name: str) -> Target:
    """The Target of one row, built on first use (`check --target X` builds X and its chip
    only; the lists below build every row)."""
    found = _BUILT.get((kind, name))
    if found is None:
        catalogue = _catalogue()
        row = catalogue.rows[kind][name]
        if kind == "chips":
            plain = _chip(row)
        elif kind == "boards":
            chip = _built("chips", row["chip"])
            plain = _board(row, {chip.name: chip}, catalogue.document["board_layouts"])
        else:
            plain = _linux_device(row)
        defaults = catalogue.document["firmware_defaults"]
        profile = defaults.get(plain.name) or defaults.get(plain.chip) or defaults["*"]
        found = replace(plain, firmware=catalogue.profiles[profile])
        _BUILT[(kind, name)] = found
    return found


def _every(kind: str) -> tuple[Target, ...]:
    return tuple(_built(kind, name) for name in _catalogue().rows[kind])


def _find(key: str) -> Target | None:
    kind = _catalogue().kind_of.get(key)
    return None if kind is None else _built(kind, key)


# Every chip, board and Linux device, and every target by name: built when first asked for
# (module `__getattr__`), as most commands ask for one target only.
CHIPS: tuple[Target, ...]
BOARDS: tuple[Target, ...]
LINUX_DEVICES: tuple[Target, ...]
TARGETS: Mapping[str, Target]
_LISTS = {"CHIPS": "chips", "BOARDS": "boards", "LINUX_DEVICES": "linux_devices"}


def __getattr__(name: str) -> Any:
    if name in _LISTS:
        value: Any = _every(_LISTS[name])
    elif name == "TARGETS":
        kinds = _catalogue().kind_of
        value = MappingProxyType({key: _built(kind, key) for key, kind in kinds.items()})
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def get_target(name: str) -> Target:
    """A target name (any case, '_' or '-') → Target; UsageError listing where to find names."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _catalogue().document["aliases"].get(key, key)
    found = _find(key) or _find(CORE_SPELLINGS.get(key, ""))
    if found is None:
        names = _catalogue().kind_of
        close = sorted(known for known in names if key and (key in known or known in key))
        hint = f" (did you mean: {', '.join(close[:6])}?)" if close else ""
        rows = _catalogue().rows
        raise UsageError(
            f"unknown target '{name}'{hint}: `arenalens check --list-targets` lists the "
            f"{len(rows['boards'])} boards, {len(rows['chips'])} chips and "
            f"{len(rows['linux_devices'])} Linux devices; or give --budget SIZE for any other part"
        )
    return found


def target_document(target: Target) -> dict[str, object]:
    """Target → its JSON form (check documents and --list-targets --json)."""
    document: dict[str, object] = {
        "name": target.name,
        "title": target.title,
        "kind": "board" if target.is_board else "chip",
        "chip": target.chip or target.name,
        "core": target.core,
        "cpu": target.cpu,
        "kernels": target.kernels,
        "build_cpu": target.build_cpu,
        "sram_bytes": target.sram_bytes,
        "arena_limit_bytes": target.arena_limit_bytes,
        "source": target.source,
        "note": target.note,
        "firmware": None if target.firmware is None else firmware_document(target.firmware),
    }
    if target.runs_linux:
        document["kind"] = "linux-device"
        document["os"] = target.os
        document["isa"] = target.isa
    if target.banks:
        document["banks"] = [bank_document(bank) for bank in target.banks]
    if target.vela_config is not None:
        document["vela_config"] = {
            "config_file": target.vela_config.config_file,
            "system_config": target.vela_config.system_config,
            "memory_mode": target.vela_config.memory_mode,
            "source": target.vela_config.source,
        }
    return document


def firmware_document(firmware: Firmware) -> dict[str, object]:
    """Firmware → its JSON form: the default reserve, its parts and source."""
    return {
        "name": firmware.name,
        "title": firmware.title,
        "reserve_bytes": firmware.reserve_bytes,
        "parts": dict(firmware.parts),
        "source": firmware.source,
    }


def bank_document(bank: MemoryBank) -> dict[str, object]:
    """MemoryBank → its JSON form (as `targets.json` spells it)."""
    return {
        "name": bank.name,
        "kind": bank.kind,
        "address": bank.address,
        "size_bytes": bank.size_bytes,
        "firmware_bytes": bank.firmware_bytes,
        "static_array": bank.static_array,
        "dma": bank.dma,
        "npu": bank.npu,
        "speed": bank.speed,
        "source": bank.source,
        "note": bank.note,
        "section": bank.section or None,
        "allocate": bank.allocate or None,
        "joins_next": bank.joins_next,
    }
