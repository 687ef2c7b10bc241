"""A Vela-compiled model's NPU memories → their JSON (`npu_memory` of plan and check) and the
lines the terminal shows under the number to declare."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arenalens.ir import Model
from arenalens.units import format_bytes_exact
from arenalens.vela.memory import npu_memory


def npu_memory_json(model: Model, required_bytes: int | None) -> dict[str, Any] | None:
    """The model's NPU memories with how the arena compares with Vela's SRAM figure; None for
    a model without an ethos-u operator."""
    memory = npu_memory(model)
    if memory is None:
        return None
    document: dict[str, Any] = memory.as_dict()
    document["arena_over_vela_sram_bytes"] = (
        None if required_bytes is None else required_bytes - memory.vela_sram_bytes
    )
    return document


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
        "leaves them out)"
    )
    return lines


def npu_fit_json(
    document: Mapping[str, Any],
    available_bytes: int,
    banks: tuple[tuple[str, int], ...] = (),
) -> dict[str, Any]:
    """The NPU memories against the board: the arena and the Dedicated_Sram fast memory each in
    a bank the NPU reaches (`banks`: name and free bytes), or together in the largest block when
    the banks are not known. The weights are counted only by `vela`, which knows the memory mode
    (a compiled model does not record Sram_Only)."""
    from arenalens.vela.settings import place  # noqa: PLC0415

    over = document.get("arena_over_vela_sram_bytes")
    arena = None if over is None else over + document["vela_sram_bytes"]
    pieces = () if arena is None else tuple(p for p in (arena, document["fast_memory_bytes"]) if p)
    needed = sum(pieces) if pieces else None
    if banks and pieces:
        placed = place(pieces, banks)
        fits = placed is not None
    else:
        placed, fits = None, needed is not None and needed <= available_bytes
    return {
        "sram_bytes": needed,
        "available_bytes": available_bytes,
        "banks": None if placed is None else list(placed),
        "fits": fits,
    }


def npu_fit_lines(fit: Mapping[str, Any], document: Mapping[str, Any]) -> list[str]:
    """The board comparison when the model needs a fast memory besides the arena."""
    if not document["fast_memory_bytes"] or fit["sram_bytes"] is None:
        return []
    verdict = "fits" if fit["fits"] else "DOES NOT FIT"
    if fit["banks"]:
        arena_bank, fast_bank = (*fit["banks"], fit["banks"][-1])[:2]
        return [f"arena in {arena_bank}, fast memory in {fast_bank}: {verdict}"]
    return [
        f"arena + fast memory: {format_bytes_exact(fit['sram_bytes'])} of SRAM against "
        f"{format_bytes_exact(fit['available_bytes'])}: {verdict}"
    ]
