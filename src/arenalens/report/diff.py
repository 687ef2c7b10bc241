"""Where the bytes went: two (report, planner) views → totals and per-tensor changes.

Two views may be one model under two planners (same tensors, new offsets) or two models (say the
same network at 224x224 and 128x128). Tensors are matched by name; a name used more than once in a
model is matched by its occurrence, so `conv#2` on the left pairs with `conv#2` on the right.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.report.data import ArenaReport, BufferRow, MemoryReport, PlanView, match_keys


@dataclass(frozen=True, slots=True)
class TensorChange:
    """One tensor on both sides (None where it is missing on that side)."""

    name: str
    left_bytes: int | None
    right_bytes: int | None
    left_offset: int | None
    right_offset: int | None
    left_steps: str
    right_steps: str

    @property
    def byte_change(self) -> int:
        """Right bytes minus left bytes (a missing side counts as 0)."""
        return (self.right_bytes or 0) - (self.left_bytes or 0)

    @property
    def offset_change(self) -> int:
        """How far the tensor moved (0 when missing on a side)."""
        if self.left_offset is None or self.right_offset is None:
            return 0
        return self.right_offset - self.left_offset


@dataclass(frozen=True)
class ReportDiff:
    """Two views compared: (label, left, right) totals and every matched tensor."""

    left_label: str
    right_label: str
    totals: tuple[tuple[str, int, int], ...]
    changes: tuple[TensorChange, ...]

    def largest_changes(self, count: int) -> tuple[TensorChange, ...]:
        """The changes that matter most: bytes first, then distance moved; unchanged dropped."""
        moved = [c for c in self.changes if c.byte_change or c.offset_change]
        moved.sort(key=lambda c: (-abs(c.byte_change), -abs(c.offset_change), c.name))
        return tuple(moved[:count])


def diff_reports(
    left: MemoryReport,
    right: MemoryReport,
    *,
    left_planner: str | None = None,
    right_planner: str | None = None,
) -> ReportDiff:
    """(left report, planner) vs (right report, planner) on the primary arenas → ReportDiff."""
    left_view = left.primary.plan(left_planner) if left_planner else left.primary.plans[0]
    right_view = right.primary.plan(right_planner) if right_planner else right.primary.plans[0]
    left_peak, right_peak = left.primary.peak, right.primary.peak
    totals = (
        ("arena", left_view.arena_size, right_view.arena_size),
        ("lower bound", left.primary.lower_bound, right.primary.lower_bound),
        ("without reuse", left.primary.no_reuse_bytes, right.primary.no_reuse_bytes),
        (
            "peak live",
            0 if left_peak is None else left_peak.live_bytes,
            0 if right_peak is None else right_peak.live_bytes,
        ),
        (
            "required",
            left_view.arena_size + left.other_bytes,
            right_view.arena_size + right.other_bytes,
        ),
    )
    return ReportDiff(
        left_label=f"{left.model} · {left_view.planner}",
        right_label=f"{right.model} · {right_view.planner}",
        totals=totals,
        changes=_match(left.primary, left_view, right.primary, right_view),
    )


def _match(
    left: ArenaReport, left_view: PlanView, right: ArenaReport, right_view: PlanView
) -> tuple[TensorChange, ...]:
    right_index = {key: i for i, key in enumerate(match_keys(right.buffers))}
    changes: list[TensorChange] = []
    matched: set[int] = set()
    for i, key in enumerate(match_keys(left.buffers)):
        j = right_index.get(key)
        if j is not None:
            matched.add(j)
        changes.append(_change(key, (left, left_view, i), (right, right_view, j)))
    for key, j in right_index.items():
        if j not in matched:
            changes.append(_change(key, (left, left_view, None), (right, right_view, j)))
    return tuple(changes)


Side = tuple[ArenaReport, PlanView, int | None]  # an arena, a plan, a row position (None: absent)


def _change(key: str, left_side: Side, right_side: Side) -> TensorChange:
    left, left_view, i = left_side
    right, right_view, j = right_side

    def steps(row: BufferRow | None) -> str:
        return "-" if row is None else f"{row.first}–{row.last}"

    left_row = None if i is None else left.buffers[i]
    right_row = None if j is None else right.buffers[j]
    return TensorChange(
        name=key,
        left_bytes=None if left_row is None else left_row.size,
        right_bytes=None if right_row is None else right_row.size,
        left_offset=None if i is None else left_view.offsets[i],
        right_offset=None if j is None else right_view.offsets[j],
        left_steps=steps(left_row),
        right_steps=steps(right_row),
    )
