"""Recent results by identity: a function of an immutable value → the same result, computed once.

Several stages need the same derived value of one `Model` (TFLM's lifetimes, the kernel rules'
events). Models are frozen, so a result keyed by the model's identity stays valid; the cache keeps
the model itself, so its id cannot be reused by another object while the entry lives. Only the
last few are kept: a process usually analyses one model at a time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

Result = TypeVar("Result")

# The `clear` of every cache that keeps what models gave across calls (`clear_caches`).
_CLEARERS: list[Callable[[], None]] = []


def forgettable(clear: Callable[[], None]) -> Callable[[], None]:
    """Register a cache's `clear` with `clear_caches` (returns it, to use as a decorator)."""
    _CLEARERS.append(clear)
    return clear


def clear_caches() -> None:
    """Empty every cache that keeps results of earlier models (the caches by model identity
    here, the kernel events and setup steps remembered by operator): the next call computes
    everything as for the first model a process sees. For benchmarks (a cold call) and tests;
    answers never depend on it."""
    for clear in _CLEARERS:
        clear()


def recent_by_identity(
    capacity: int = 4,
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator: cache f(value, *hashable_arguments) by (id(value), arguments)."""
    return _by_identity(capacity, forget=True)


def kept_by_identity(
    capacity: int = 256,
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator: the same for values no model gives (a board preset's blocks, its build): kept
    by `clear_caches`, so a check in a search loop resolves its board once per process."""
    return _by_identity(capacity, forget=False)


def _by_identity(
    capacity: int, *, forget: bool
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        entries: dict[tuple[int, tuple[Hashable, ...]], tuple[Any, Result]] = {}
        if forget:
            forgettable(entries.clear)

        @functools.wraps(function)
        def cached(value: Any, *arguments: Hashable) -> Result:
            key = (id(value), arguments)
            found = entries.get(key)
            if found is not None and found[0] is value:
                return found[1]
            result = function(value, *arguments)
            entries[key] = (value, result)
            while len(entries) > capacity:
                del entries[next(iter(entries))]
            return result

        return cached

    return decorate
