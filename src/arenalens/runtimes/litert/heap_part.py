"""One part of a LiteRT interpreter's heap (heap.py's figures are sums of these): its bytes,
the moment it is taken, and whether it is the real interpreter's byte for byte."""

from __future__ import annotations

from dataclasses import dataclass

# Why a block of 128 KiB to 32 MiB makes its part a bound (glibc.threshold_decides).
MMAPPED_NOTE = (
    "; a block of 128 KiB to 32 MiB is counted as glibc mmaps it (whole pages), as in a process "
    "that never freed a larger mmapped block (a C++ app that starts the interpreter first): one "
    "that did serves it from its heap, up to a page less (the wheel's Python process does for "
    "blocks up to about 320 KiB after numpy's imports), so such a block is an upper bound"
)


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


class PhasedFigures:
    """The three figures summed over `parts` by phase: the heap's and each way's (heap_ways)."""

    __slots__ = ()
    parts: tuple[HeapPart, ...]

    def _sum(self, *phases: str) -> int:
        return sum(part.nbytes for part in self.parts if part.phase in phases)

    @property
    def after_setup(self) -> int:
        """Live after Interpreter(...) and allocate_tensors()."""
        return self._sum("setup")

    @property
    def after_first_invoke(self) -> int:
        """Live after the first invoke()."""
        return self._sum("setup", "first_invoke")

    @property
    def peak(self) -> int:
        """The most live at any moment up to the end of the first invoke()."""
        return self._sum("setup", "first_invoke", "transient")
