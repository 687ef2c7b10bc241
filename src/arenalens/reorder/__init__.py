"""Reordering: model → the orders its operators may run in, and the ones that keep less live.

`schedule.py` holds the schedule problem (dependencies, `check_schedule`, `apply_schedule`, the
bytes live under an order); one reorderer per file behind `registry.py`; `runtime_order.py`
reorders a model under one runtime's sizes.
"""

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
