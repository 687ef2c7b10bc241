"""Allowed overlaps as pairs: which output may start below which dying input, and where from.

A runtime that lets an operator write its output over an input it consumes (TFLM: its kernels'
access order, `runtimes/tflm/overlap.py`) names each allowed overlap as an `OverlapPair`: the
planner's `Overlap` between two buffer ids, and the operator and tensors it comes from, for
reports. These functions read pairs against an arena; none of them knows a runtime.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.planning.problem import Overlap
from arenalens.records import record


@record(slots=True)
class OverlapPair:
    """One allowed overlap and where it comes from."""

    overlap: Overlap  # buffer ids of the arena
    subgraph: int
    operator: int
    opcode: str
    input_tensor: int
    output_tensor: int
    pattern: str  # the kernel's access pattern


def with_overlaps(arena: ArenaProblem, pairs: Sequence[OverlapPair]) -> ArenaProblem:
    """The arena whose Problem allows these overlaps (pairs naming missing buffers dropped)."""
    known = arena.problem.by_id
    overlaps = tuple(
        p.overlap for p in pairs if p.overlap.output in known and p.overlap.input in known
    )
    return replace(arena, problem=replace(arena.problem, overlaps=overlaps))


def shared_pairs(
    arena: ArenaProblem, pairs: Sequence[OverlapPair], offsets: Mapping[int, int]
) -> tuple[OverlapPair, ...]:
    """The pairs whose buffers share at least one byte at these offsets."""
    by_id = arena.problem.by_id
    found = []
    for pair in pairs:
        output, source = by_id[pair.overlap.output], by_id[pair.overlap.input]
        low = max(offsets[output.id], offsets[source.id])
        high = min(offsets[output.id] + output.size, offsets[source.id] + source.size)
        if low < high:
            found.append(pair)
    return tuple(found)
