"""What every benchmark script shares: where the corpus is, and how to time an action."""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")

# The shared corpus beside the project checkout (absent on machines without it); the tests'
# ARENALENS_SHARED_MODELS points elsewhere (a git worktree sits one level deeper).
SHARED = Path(
    os.environ.get(
        "ARENALENS_SHARED_MODELS", Path(__file__).resolve().parents[2] / "shared" / "models"
    )
)
REPO_ROOT = Path(__file__).resolve().parents[1]


def test_fixtures(name: str = "optimize_models") -> ModuleType:
    """A module of tests/fixtures/ (generated models the test suite also uses); the benchmarks
    run as scripts, so the repository root is put on the import path first."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    return importlib.import_module(f"tests.fixtures.{name}")


def synthetic_model(kind: str, operators: int) -> bytes:
    """tests/fixtures/synthetic.py: a generated chain, branches or U-Net of that many operators."""
    model: bytes = test_fixtures("synthetic").synthetic_model(kind, operators)
    return model


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
