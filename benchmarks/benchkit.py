"""What every benchmark script shares: where the corpus is, and how to time an action."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# The shared corpus beside the project checkout (absent on machines without it).
SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"


def fastest_of(repeat: int, action: Callable[[], T]) -> tuple[float, T]:
    """(seconds of the fastest of `repeat` runs, least disturbed by the machine; last result)."""
    best = math.inf
    result: T
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return best, result


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """Seconds of the fastest of `repeat` runs."""
    return fastest_of(repeat, action)[0]
