"""One part of a LiteRT interpreter's heap (heap.py's figures are sums of these): its bytes,
the moment it is taken, and whether it is the real interpreter's byte for byte."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HeapPart:
    """One part of the interpreter's heap, in bytes, and when it is taken."""

    name: str
    nbytes: int
    phase: str  # setup | first_invoke | transient (live during the first invoke only)
    exact: bool
    meaning: str
    allowance: bool = False  # bytes that are not the model's (glibc placement, the caller)
    # Not exact only because it holds a block glibc's mmap threshold decides (mmapped or from
    # the heap, as the process's history has it: glibc.threshold_decides), counted mmapped.
    mmapped: bool = False
