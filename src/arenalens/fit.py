"""Fit check: the memory a model's plan needs vs the RAM a budget (or target MCU) offers.

The number compared is `MemoryBudget.required_bytes`, the arena the user must declare (TFLM: the
minimal kTensorArenaSize, head + tail and setup needs; LiteRT: arenas + persistent arenas), against
`budget - reserve`, where the reserve is RAM the rest of the firmware keeps (stacks, heap, DMA).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from arenalens.errors import UsageError
from arenalens.pipeline import Analysis
from arenalens.targets import Target


@dataclass(frozen=True)
class FitCheck:
    """Does one model's arena fit a budget? With the numbers behind the answer."""

    model: str
    source: str
    runtime: str
    planner: str
    required_bytes: int
    parts: Mapping[str, int]
    budget_bytes: int  # --budget, or the target's arena limit
    reserve_bytes: int
    target: Target | None
    # What `required_bytes` would be if every arena were packed to its lower bound: no planner
    # can do better, so below the budget only a different model helps.
    best_case_bytes: int
    assumptions: tuple[str, ...] = ()

    @property
    def available_bytes(self) -> int:
        """Budget minus reserve: what the arena may use."""
        return self.budget_bytes - self.reserve_bytes

    @property
    def headroom_bytes(self) -> int:
        """Available minus required: spare bytes, negative when short."""
        return self.available_bytes - self.required_bytes

    @property
    def fits(self) -> bool:
        """True when the required arena fits the available bytes."""
        return self.headroom_bytes >= 0


def check_fit(
    analysis: Analysis,
    *,
    budget_bytes: int | None = None,
    target: Target | None = None,
    reserve_bytes: int = 0,
) -> FitCheck:
    """Analysis + budget (or target) + reserve → FitCheck; UsageError for impossible budgets."""
    if budget_bytes is not None and target is None:
        budget = budget_bytes
    elif target is not None and budget_bytes is None:
        budget = target.arena_limit_bytes
    else:
        raise UsageError("give exactly one of --budget SIZE or --target NAME")
    if reserve_bytes < 0:
        raise UsageError(f"--reserve must not be negative, got {reserve_bytes}")
    if reserve_bytes >= budget:
        raise UsageError(f"--reserve {reserve_bytes:,} B leaves nothing of the {budget:,} B budget")
    budget_info = analysis.budget
    wasted = sum(max(0, result.plan.arena_size - result.lower_bound) for result in analysis.arenas)
    return FitCheck(
        model=analysis.model.name,
        source=analysis.model.source,
        runtime=analysis.runtime,
        planner=analysis.planner,
        required_bytes=budget_info.required_bytes,
        parts=MappingProxyType(dict(budget_info.parts)),
        budget_bytes=budget,
        reserve_bytes=reserve_bytes,
        target=target,
        best_case_bytes=budget_info.required_bytes - wasted,
        assumptions=tuple(budget_info.assumptions),
    )


def fit_document(check: FitCheck) -> dict[str, Any]:
    """FitCheck → the `check --json` document."""
    target = check.target
    return {
        "schema": "arenalens.check",
        "schema_version": 1,
        "model": check.model,
        "file": check.source,
        "runtime": check.runtime,
        "planner": check.planner,
        "fits": check.fits,
        "required_bytes": check.required_bytes,
        "parts": dict(check.parts),
        "budget_bytes": check.budget_bytes,
        "reserve_bytes": check.reserve_bytes,
        "available_bytes": check.available_bytes,
        "headroom_bytes": check.headroom_bytes,
        "best_case_bytes": check.best_case_bytes,
        "target": None
        if target is None
        else {
            "name": target.name,
            "title": target.title,
            "sram_bytes": target.sram_bytes,
            "arena_limit_bytes": target.arena_limit_bytes,
            "source": target.source,
            "note": target.note,
        },
        "assumptions": list(check.assumptions),
    }
