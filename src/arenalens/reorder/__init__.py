"""Reorderers: ScheduleProblem (one subgraph's operators and tensor bytes) → a checked order."""

from arenalens.reorder.registry import (
    REORDERERS,
    ReorderResult,
    get_reorderer,
    register_reorderer,
    reorderer_names,
    run_reorderer,
)

__all__ = [
    "REORDERERS",
    "ReorderResult",
    "get_reorderer",
    "register_reorderer",
    "reorderer_names",
    "run_reorderer",
]
