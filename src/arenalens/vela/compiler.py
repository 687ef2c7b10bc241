"""Vela settings + an uncompiled .tflite → the compiled model and Vela's own summary figures.

Vela (`ethos-u-vela` on PyPI, the `npu` extra) runs in a child process, as its command line does,
so its global state and its printing stay out of ours; `VelaSettings.command` is that command as
a user types it, so every figure arenalens shows next to a compilation can be reproduced. Vela's
summary CSV (`<name>_summary_<system config>.csv`) gives what its console prints: the SRAM and
off-chip memory it used (KiB), the NPU and CPU operator counts, and its estimated inference time.
"""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arenalens.errors import RuntimeUnavailableError, UsageError

# Vela's memory modes (vela.ini, `[Memory_Mode.*]`): where the arena (scratch) and the fast
# scratch (its cache) live. Shared_Sram: arena and cache in SRAM, weights in flash; Sram_Only:
# weights too; Dedicated_Sram: the arena in DRAM or flash-side memory, the cache in SRAM.
SHARED_SRAM = "Shared_Sram"
SRAM_ONLY = "Sram_Only"
DEDICATED_SRAM = "Dedicated_Sram"
MEMORY_MODES = (SHARED_SRAM, SRAM_ONLY, DEDICATED_SRAM)
PERFORMANCE = "Performance"
SIZE = "Size"
OPTIMISE = (PERFORMANCE, SIZE)
VELA_TIMEOUT_SECONDS = 600


class VelaError(UsageError):
    """Vela refused or failed on a model (its own last message)."""


@dataclass(frozen=True, slots=True)
class VelaSettings:
    """One Vela command line: the NPU configuration, system configuration and memory mode of its
    vela.ini, the optimisation strategy and, for Dedicated_Sram, the arena cache size (the fast
    memory Vela may use; None: the memory mode's default, 4 MiB in Arm's vela.ini)."""

    accelerator: str  # --accelerator-config: 'ethos-u55-128'
    system_config: str  # --system-config: 'Ethos_U55_High_End_Embedded'
    memory_mode: str  # --memory-mode
    optimise: str = PERFORMANCE  # --optimise
    arena_cache_size: int | None = None  # --arena-cache-size, bytes

    def arguments(self) -> tuple[str, ...]:
        """The command-line options, in the order `command` prints them."""
        found = [
            *("--accelerator-config", self.accelerator),
            *("--system-config", self.system_config),
            *("--memory-mode", self.memory_mode),
            *("--optimise", self.optimise),
        ]
        if self.arena_cache_size is not None:
            found += ["--arena-cache-size", str(self.arena_cache_size)]
        return tuple(found)

    def command(self, model: str) -> str:
        """The Vela command that makes this compilation, runnable as printed."""
        return shlex.join(["vela", model, *self.arguments()])

    @property
    def label(self) -> str:
        """A short name for tables: 'ethos-u55-128 Shared_Sram Size cache=64 KiB'."""
        parts = [self.accelerator, self.memory_mode, self.optimise]
        if self.arena_cache_size is not None:
            parts.append(f"cache={self.arena_cache_size}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class VelaSummary:
    """What Vela says about a compilation (its summary CSV)."""

    sram_bytes: int  # "Total SRAM used": the scratch tensor in its SRAM (see compiled.py)
    off_chip_bytes: int  # "Total Off-chip Flash used" / "Total DRAM used"
    inference_seconds: float  # its estimate for one inference
    npu_operators: int  # the source model's operators Vela placed on the NPU
    cpu_operators: int  # ... and left to the CPU (TFLM's kernels of the build run them)


@dataclass(frozen=True, slots=True)
class VelaCompilation:
    """A compiled model and Vela's summary of it."""

    settings: VelaSettings
    model: bytes
    summary: VelaSummary
    vela_version: str


def vela_version() -> str:
    """The installed Vela's version; RuntimeUnavailableError when it is not installed."""
    try:
        from ethosu.vela._version import __version__  # noqa: PLC0415 - the npu extra
    except ImportError as error:
        raise RuntimeUnavailableError(
            "Vela is not installed: pip install 'arenalens[npu]' (Arm's ethos-u-vela)"
        ) from error
    return str(__version__)


def compile_model(source: bytes, settings: VelaSettings, *, name: str = "model") -> VelaCompilation:
    """Compile an uncompiled .tflite with Vela; VelaError with Vela's message when it fails."""
    version = vela_version()
    with tempfile.TemporaryDirectory(prefix="arenalens-vela-") as folder:
        path = Path(folder) / f"{name}.tflite"
        path.write_bytes(source)
        output = Path(folder) / "out"
        completed = subprocess.run(
            [
                *(sys.executable, "-m", "ethosu.vela", str(path)),
                *settings.arguments(),
                *("--output-dir", str(output)),
            ],
            capture_output=True,
            text=True,
            timeout=VELA_TIMEOUT_SECONDS,
            check=False,
            cwd=folder,
        )
        compiled = output / f"{name}_vela.tflite"
        if completed.returncode != 0 or not compiled.is_file():
            raise VelaError(f"Vela failed on {settings.label}: {_last_error(completed)}")
        summary = _summary(next(output.glob(f"{name}_summary_*.csv")), completed.stdout)
        return VelaCompilation(settings, compiled.read_bytes(), summary, version)


def _last_error(completed: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (completed.stderr + completed.stdout).splitlines()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or [line for line in lines if line] or ["no message"])[-1]


def _operator_count(console: str, kind: str) -> int:
    """'CPU operators = 3 (4.2%)' in Vela's console summary → 3 (0 when it prints none)."""
    for line in console.splitlines():
        if line.strip().startswith(f"{kind} operators ="):
            return int(line.split("=", 1)[1].split()[0])
    return 0


def _summary(path: Path, console: str) -> VelaSummary:
    with path.open(newline="") as file:
        row = next(csv.DictReader(file))
    off_chip = max(
        float(row.get("off_chip_flash_memory_used") or 0), float(row.get("dram_memory_used") or 0)
    )
    return VelaSummary(
        sram_bytes=round(float(row["sram_memory_used"]) * 1024),
        off_chip_bytes=round(off_chip * 1024),
        inference_seconds=float(row["inference_time"]),
        npu_operators=_operator_count(console, "NPU"),
        cpu_operators=_operator_count(console, "CPU"),
    )
