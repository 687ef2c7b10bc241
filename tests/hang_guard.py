"""Hang guards: a test that feeds a large or hostile input must fail, not hang the suite.

These bounds are not performance claims (those live in `benchmarks/`, as ratios against a
baseline measured in the same run). A hang or a quadratic blow-up on these inputs costs minutes;
the code needs a fraction of the stated seconds on a quiet laptop. The bound is the stated seconds
times `HEADROOM`, in CPU seconds of this process, so a CI machine shared with other jobs (slower
caches, lower clocks) cannot fail a test that is not hanging.
"""

from __future__ import annotations

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
