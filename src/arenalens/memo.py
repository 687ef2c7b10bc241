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


def recent_by_identity(
    capacity: int = 4,
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator: cache f(value, *hashable_arguments) by (id(value), arguments)."""

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        entries: dict[tuple[int, tuple[Hashable, ...]], tuple[Any, Result]] = {}

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
