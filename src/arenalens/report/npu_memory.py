"""A Vela-compiled model's NPU memories → their JSON (`npu_memory` of plan) and the lines the
terminal shows under the number to declare; where its SRAM pieces go on a board, or why they do
not fit (the verdict's words)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from arenalens.ir import Model
from arenalens.units import format_bytes_exact
from arenalens.vela import is_vela_compiled

if TYPE_CHECKING:
    from arenalens.vela.placement import NpuFit


def npu_memory_json(model: Model, required_bytes: int | None) -> dict[str, Any] | None:
    """The model's NPU memories with how the arena compares with Vela's SRAM figure; None for
    a model without an ethos-u operator."""
    if not is_vela_compiled(model):
        return None
    from arenalens.vela.memory import npu_memory  # noqa: PLC0415 - Vela-compiled models only

    memory = npu_memory(model)
    return None if memory is None else memory.document(required_bytes)


def npu_memory_lines(document: Mapping[str, Any]) -> list[str]:
    """What the board must give the NPU besides the arena, one line each."""
    lines = []
    vela = document["vela_sram_bytes"]
    over = document.get("arena_over_vela_sram_bytes")
    if over is not None:
        lines.append(
            f"Vela's 'Total SRAM used' is {format_bytes_exact(vela)} (its "
            + ("scratch_fast" if document["fast_memory_bytes"] else "scratch")
            + f" tensor); the arena needs {format_bytes_exact(over)} more: TFLM's tail, the "
            "ethos-u kernel's base-address scratch and the CPU operators' tensors, which Vela "
            "does not count"
        )
    if document["fast_memory_bytes"]:
        lines.append(
            f"fast memory (Dedicated_Sram): give ethosu_init() at least "
            f"{format_bytes_exact(document['fast_memory_bytes'])} of SRAM as fast_memory; "
            "with less the driver refuses every inference ('Fast memory area too small')"
        )
        lines.append(
            f"{format_bytes_exact(document['arena_fast_copy_bytes'])} of the arena hold only "
            "its copy of the fast scratch, unused once the driver has the fast memory (the "
            "driver's size check reads that tensor, so arenalens does not shrink it)"
        )
    lines.append(
        f"the NPU reads {format_bytes_exact(document['read_only_bytes'])} of weights and "
        f"{format_bytes_exact(document['command_stream_bytes'])} of command stream from the "
        "model itself: in SRAM too if it was compiled with Sram_Only (Vela's SRAM figure "
        "leaves them out; check --weights-in-sram counts them)"
    )
    return lines


def npu_fit_lines(fit: NpuFit) -> list[str]:
    """Where the pieces go on the board when they fit and the model needs more than its arena
    in SRAM (when they do not, the verdict and its first step say why)."""
    if not fit.beside_arena or not fit.fits:
        return []
    placed = fit.placement or ()
    if fit.memories.banks:
        where = ", ".join(f"{piece} in {bank}" for piece, bank in placed)
        return [f"NPU memories placed: {where}"]
    return [
        f"{_pieces_text(fit)}: {format_bytes_exact(fit.sram_bytes)} of SRAM together, "
        f"{format_bytes_exact(fit.memories.block_bytes)} available"
    ]


def npu_shortfall(fit: NpuFit) -> str:
    """Why the NPU's pieces do not fit: the driver's refusal of the fast memory given, or the
    pieces against the banks the NPU reaches (or the one block available)."""
    if fit.refusal:
        return f"at every Invoke: {fit.refusal}"
    if fit.memories.banks:
        free = ", ".join(f"{name} {format_bytes_exact(room)}" for name, room in fit.memories.banks)
        return (
            f"no assignment of the {_pieces_text(fit)} to the banks the NPU reaches fits "
            f"({free} free)"
        )
    return (
        f"the {_pieces_text(fit)} need {format_bytes_exact(fit.sram_bytes)} of SRAM together, "
        f"{format_bytes_exact(fit.memories.block_bytes)} available"
    )


def _pieces_text(fit: NpuFit) -> str:
    """'arena (22,552 B) and fast memory (22,080 B)'."""
    parts = [f"{name} ({format_bytes_exact(size)})" for name, size in fit.pieces]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
