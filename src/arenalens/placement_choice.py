"""Optimize on a board with several RAM banks: the candidates ordered by the placement each gets
(`placement.py`), so that a saving that moves the activations out of external RAM, or into a
faster bank, wins over more bytes saved elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from arenalens.builds.build import Build
from arenalens.pipeline import analyze
from arenalens.placement import Placement, place, placement_score
from arenalens.targets import Target

if TYPE_CHECKING:
    from arenalens.optimization.candidates import Candidate


def order_by_placement(
    eligible: Sequence[Candidate], build: Build, target: Target
) -> tuple[list[Candidate], list[str]] | None:
    """On a board with several RAM banks: the candidates by the placement each gets (fastest
    first: a saving that moves the activations out of external RAM, or into a faster bank,
    beats more bytes saved elsewhere), then as before; and a note of what that changes. None
    without such a board."""
    if len(target.banks) < 2 or not eligible:
        return None

    def placement_of(candidate: Candidate) -> Placement | None:
        split = analyze(candidate.model, build=build).budget.split
        if split is None or split.single_bytes != candidate.required_bytes:
            return None  # not the figure the candidate declares: judged by bytes alone
        # The board's usual firmware reserve, as `check --target` takes it (a --reserve given
        # to optimize changes the verdict it prints, not this order).
        return place(split, target, reserve_bytes=target.reserve_bytes).best

    placements = {id(candidate): placement_of(candidate) for candidate in eligible}

    def key(candidate: Candidate) -> tuple[int, tuple[int, ...]]:
        found = placements[id(candidate)]
        return (0, placement_score(found)) if found is not None else (1, ())

    ordered = sorted(eligible, key=key)  # stable: ties keep the bytes order
    best, smallest = placements[id(ordered[0])], placements[id(eligible[0])]
    notes = []
    if ordered[0] is not eligible[0] and best is not None and smallest is not None:
        notes.append(
            f"{ordered[0].label} chosen over {eligible[0].label} (fewer bytes): on "
            f"{target.name} its activations run from {best.activations.block.name} "
            f"({best.activations.block.speed}) instead of "
            f"{smallest.activations.block.name} ({smallest.activations.block.speed})"
        )
    return ordered, notes
