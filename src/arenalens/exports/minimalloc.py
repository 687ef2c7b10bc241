"""Arena problem ↔ MiniMalloc's CSV (github.com/google/minimalloc), to cross-check with its solver.

MiniMalloc reads `id,lower,upper,size` with half-open lifespans [lower, upper), plus an optional
`alignment` column, and writes the same with an `offset` column (*src/converter.cc — FromCsv,
ToCsv*). arenalens lifetimes are inclusive [first, last], so upper = last + 1; steps are shifted so
the smallest is 0 (TFLM's "never written" is -1) and LiteRT's "kept to the end" (2147483647) is
clamped to one past the last finite step. Both keep every pair of buffers that conflicts, and no
other: a plan valid for one problem is valid for the other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass

from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.errors import UsageError
from arenalens.planning.problem import Buffer, Problem

_REQUIRED = ("id", "lower", "upper", "size")


def to_minimalloc_csv(problem: Problem, offsets: Mapping[int, int] | None = None) -> str:
    """Problem (+ offsets → the `offset` column, MiniMalloc's output form) → CSV text."""
    finite = [s for b in problem.buffers for s in (b.start, b.end) if s != NEVER_FREED]
    shift = -min(finite, default=0)
    horizon = max(finite, default=0) + shift + 1
    header = list(_REQUIRED)
    with_alignment = problem.alignment > 1
    if with_alignment:
        header.append("alignment")
    if offsets is not None:
        header.append("offset")
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    for buffer in sorted(problem.buffers, key=lambda b: b.id):
        lower = horizon if buffer.start == NEVER_FREED else buffer.start + shift
        upper = horizon + 1 if buffer.end == NEVER_FREED else buffer.end + shift + 1
        row: list[int] = [buffer.id, lower, max(upper, lower + 1), buffer.size]
        if with_alignment:
            row.append(problem.alignment)
        if offsets is not None:
            row.append(offsets[buffer.id])
        writer.writerow(row)
    return stream.getvalue()


@dataclass(frozen=True)
class MiniMallocProblem:
    """A parsed MiniMalloc CSV: the Problem (inclusive steps) and the offsets, if it had them."""

    problem: Problem
    offsets: Mapping[int, int] | None


def from_minimalloc_csv(text: str) -> MiniMallocProblem:
    """MiniMalloc CSV text (ids must be integers) → Problem with inclusive [lower, upper - 1]."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise UsageError("MiniMalloc CSV is empty")
    header = [name.strip() for name in rows[0]]
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        raise UsageError(f"MiniMalloc CSV lacks column(s) {', '.join(missing)}")
    column = {name: header.index(name) for name in header}
    buffers: list[Buffer] = []
    offsets: dict[int, int] = {}
    alignments: set[int] = set()
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            values = {name: int(row[index]) for name, index in column.items()}
        except (ValueError, IndexError):
            raise UsageError(f"MiniMalloc CSV line {number}: expected integers") from None
        if values["upper"] <= values["lower"]:
            raise UsageError(f"MiniMalloc CSV line {number}: upper must exceed lower")
        buffers.append(Buffer(values["id"], values["lower"], values["upper"] - 1, values["size"]))
        if "offset" in values:
            offsets[values["id"]] = values["offset"]
        alignments.add(values.get("alignment", 1))
    alignment = max(alignments, default=1)
    return MiniMallocProblem(
        Problem(tuple(buffers), alignment=alignment), offsets if "offset" in column else None
    )
