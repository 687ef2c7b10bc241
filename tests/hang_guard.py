"""Hang guards: a test that feeds a large or hostile input must fail, not hang the suite.

These bounds are not performance claims (those live in `benchmarks/`, as ratios against a
baseline measured in the same run). A hang or a quadratic blow-up on these inputs costs minutes;
the code needs a fraction of the stated seconds on a quiet laptop. The bound is the stated seconds
times `HEADROOM`, in CPU seconds of this process, so a CI machine shared with other jobs (slower
caches, lower clocks) cannot fail a test that is not hanging.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

HEADROOM = 5


@contextmanager
def no_hang(seconds: float, what: str = "") -> Iterator[None]:
    """Fail when the block uses more than `seconds` × HEADROOM CPU seconds."""
    started = time.process_time()
    yield
    used = time.process_time() - started
    limit = seconds * HEADROOM
    assert used < limit, f"{what or 'block'} used {used:.1f} CPU s (hang guard: {limit:.0f} s)"


def wall_bound(seconds: float) -> float:
    """A wall-clock bound for a block that also has a CPU bound, stretched by how overloaded the
    machine is (load average per core, at least 1): the wall bound is there for a block that waits
    without computing, and on a machine running 12 jobs per core a computing block gets a twelfth
    of a core, so an unstretched wall bound would call it hung before its CPU bound could."""
    cores = os.cpu_count() or 1
    overload = max(1.0, os.getloadavg()[0] / cores)
    return seconds * overload
