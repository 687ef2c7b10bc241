"""An uncompiled model + an NPU build (+ the board's RAM) → Vela's settings compared: each one
compiled with real Vela, its exact TFLM arena and NPU memories against Vela's estimated inference
time, and the fastest that fits.

Vela's settings move the arena more than the NPU does: `--optimise Size` trades speed for a
smaller scratch, the memory mode decides what sits in SRAM (Shared_Sram: the arena; Sram_Only:
the arena and the weights; Dedicated_Sram, on U65 and U85 only: a fast memory of at most the arena
cache size beside an arena that may sit in slower memory), and the arena cache size bounds that
fast memory. Arm's integration guides ask users to try them by hand; here each is compiled and
measured by arenalens' exact TFLM rules, and fits a board when the pieces it puts in SRAM (the
arena, the Dedicated_Sram fast memory, the Sram_Only weights) have a place in the RAM the NPU
reaches (`vela/placement.py`, which `check`'s verdict uses too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arenalens.builds.build import Build
from arenalens.builds.npu import Npu
from arenalens.errors import ArenalensError
from arenalens.tflite.reader import parse_model
from arenalens.vela.compiler import (
    DEDICATED_SRAM,
    OPTIMISE,
    SHARED_SRAM,
    SRAM_ONLY,
    VelaCompilation,
    VelaSettings,
    compile_model,
)
from arenalens.vela.memory import NpuMemory, npu_memory
from arenalens.vela.placement import Memories, placement, sram_pieces

# Arena cache sizes tried for Dedicated_Sram besides the memory mode's own (Arm's vela.ini: 4 MiB,
# which Vela only uses as far as the model needs): fast memories a small board can give.
CACHE_SIZES = (64 << 10, 256 << 10)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One setting compiled (or why Vela refused it) and what it needs."""

    settings: VelaSettings
    compilation: VelaCompilation | None
    error: str = ""
    arena_bytes: int | None = None  # kTensorArenaSize on the build (None: cannot run)
    cannot_run: tuple[str, ...] = ()
    memory: NpuMemory | None = None

    @property
    def inference_seconds(self) -> float | None:
        return None if self.compilation is None else self.compilation.summary.inference_seconds

    @property
    def fast_memory_bytes(self) -> int:
        return 0 if self.memory is None else self.memory.fast_memory_bytes

    @property
    def sram_weights_bytes(self) -> int:
        """The model's read-only data the NPU reads from SRAM (Sram_Only), else 0."""
        if self.memory is None or self.settings.memory_mode != SRAM_ONLY:
            return 0
        return self.memory.read_only_bytes + self.memory.command_stream_bytes

    @property
    def sram_bytes(self) -> int | None:
        """Everything this setting puts in SRAM (None when it cannot run)."""
        if self.arena_bytes is None:
            return None
        return self.arena_bytes + self.fast_memory_bytes + self.sram_weights_bytes

    @property
    def sram_pieces(self) -> tuple[tuple[str, int], ...]:
        """The contiguous pieces this setting puts in SRAM, named, the arena first."""
        if self.arena_bytes is None:
            return ()
        return sram_pieces(self.arena_bytes, self.fast_memory_bytes, self.sram_weights_bytes)

    def placement(self, memories: Memories | None) -> tuple[tuple[str, str], ...] | None:
        """(piece, the bank it goes to) for each SRAM piece ('largest block' without banks), or
        None when it does not run or does not fit."""
        if self.arena_bytes is None:
            return None
        return placement(self.sram_pieces, memories)

    def fits(self, memories: Memories | None) -> bool:
        """Does it run, and do the pieces it puts in SRAM fit the board?"""
        return self.placement(memories) is not None


@dataclass(frozen=True, slots=True)
class SettingsSweep:
    """Every candidate, in the order tried, and the fastest that fits (None: none fits)."""

    npu: Npu
    build: Build
    memories: Memories | None
    candidates: tuple[Candidate, ...]
    chosen: int | None
    vela_version: str


def candidate_settings(
    npu: Npu, *, cache_sizes: tuple[int, ...] = CACHE_SIZES
) -> list[VelaSettings]:
    """The settings tried for an NPU: each memory mode it supports, each --optimise, and for
    Dedicated_Sram (U65, U85) the default and the given arena cache sizes."""
    modes = [SHARED_SRAM, SRAM_ONLY] + ([DEDICATED_SRAM] if npu.product != 0 else [])
    found = []
    for mode in modes:
        caches: tuple[int | None, ...] = (None, *cache_sizes) if mode == DEDICATED_SRAM else (None,)
        for optimise in OPTIMISE:
            for cache in caches:
                found.append(
                    VelaSettings(
                        npu.name, npu.system_config, mode, optimise, arena_cache_size=cache
                    )
                )
    return found


def sweep_settings(
    source: bytes,
    npu: Npu,
    build: Build,
    *,
    memories: Memories | None = None,
    settings: list[VelaSettings] | None = None,
    name: str = "model",
    arena_of: Callable[[bytes, Build], tuple[int | None, tuple[str, ...]]] | None = None,
) -> SettingsSweep:
    """Compile the model with every setting, size each on the build, choose the fastest that
    fits (ties: the smaller SRAM, then the order tried)."""
    measure = arena_of or arena_on_build
    candidates = []
    version = ""
    for setting in settings if settings is not None else candidate_settings(npu):
        try:
            compilation = compile_model(source, setting, name=name)
        except ArenalensError as error:
            candidates.append(Candidate(setting, None, error=str(error)))
            continue
        version = compilation.vela_version
        arena, reasons = measure(compilation.model, build)
        model = parse_model(compilation.model, f"{name}_vela.tflite")
        candidates.append(Candidate(setting, compilation, "", arena, reasons, npu_memory(model)))
    fitting = [
        (c.inference_seconds or 0.0, c.sram_bytes or 0, index)
        for index, c in enumerate(candidates)
        if c.fits(memories)
    ]
    chosen = min(fitting)[2] if fitting else None
    return SettingsSweep(npu, build, memories, tuple(candidates), chosen, version)


def arena_on_build(model: bytes, build: Build) -> tuple[int | None, tuple[str, ...]]:
    """kTensorArenaSize of a compiled model on the build, or None and why it cannot run, or
    cannot run correctly: Vela writes an offline plan, and `check` of the written model gives no
    size when that plan gives live tensors common bytes (Vela plans each subgraph from offset 0,
    while TFLM keeps a WHILE's or IF's subgraphs in one arena with the caller's tensors)."""
    from arenalens.pipeline import analyze  # noqa: PLC0415 - the whole pipeline, once per model
    from arenalens.plan_validity import plan_conflicts  # noqa: PLC0415 - as check judges it

    compiled = parse_model(model, "compiled")
    analysis = analyze(compiled, build=build)
    if not analysis.budget.runs:
        return None, tuple(obstacle.text() for obstacle in analysis.budget.obstacles)
    conflicts = plan_conflicts(compiled, build)
    if conflicts:
        return None, tuple(
            f"its offline plan would corrupt tensors (CANNOT RUN CORRECTLY): {conflict.reason}"
            for conflict in conflicts
        )
    return analysis.budget.required_bytes, ()
