"""What a first invoke's replay (heap_invoke) holds as it goes: the heap's live bytes and their
peak, the caller's share of them and the blocks glibc's mmap threshold decides among them
(`LiveHeap`); what the replay found (`FirstInvoke`); and the process's state a control flow's
children run on (`BackendState`)."""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.runtimes.litert import glibc, heap_caller


@dataclass(frozen=True, slots=True)
class BackendState:
    """What the process holds at a point of the invoke that outlives a subgraph's run: whether
    the CPU back end's context exists, whether cpuinfo is still to be initialized, ruy's
    allocator (created, main buffer request, fallback vector capacity) and the interpreter's
    resource variables. A control flow's children run on the parent's (one context per
    interpreter, one ruy allocator, one map of variables)."""

    backend: bool
    cpuinfo: bool
    ruy: tuple[bool, int, int] = (False, 0, 0)
    # The interpreter's resource variables made so far: name pair → (rank, bytes).
    variables: tuple[tuple[tuple[str, str], tuple[int, int]], ...] = ()
    initialized: frozenset[int] = frozenset()  # init subgraphs a CALL_ONCE ran (heap_call_once)
    # The XNNPACK delegate's shared workspace request (a CALL_ONCE's init may grow it).
    workspace: int = 0


@dataclass(frozen=True, slots=True)
class FirstInvoke:
    """The heap a first invoke adds to what setup left: kept after it, and its peak."""

    kept: int  # live after invoke(), above setup
    peak: int  # the most live at any moment from setting the inputs to the end, above setup
    exact: bool  # every block kept is replayed
    estimated: tuple[str, ...]  # operators whose blocks are an upper bound
    peak_exact: bool = True  # and every transient block too (Eigen's are bounded)
    released: int = 0  # setup's blocks it frees (arenas of the subgraphs it ran), in `kept`
    caller_at_peak: int = 0  # of `peak`, the caller's and wrapper's blocks (heap_caller)
    caller_kept: int = 0  # the caller's blocks live after invoke() (not in `kept`)
    backend_after: BackendState | None = None  # the CPU back end's state at the end
    # A block of 128 KiB-32 MiB live at the end / at the peak (glibc.counted_mmapped).
    mmapped_kept: bool = False
    mmapped_peak: bool = False
    # A delegate kernel prepared at the re-plan whose planner scratch is counted at a bound.
    reshaped_at_replan: bool = False

    @property
    def transient(self) -> int:
        """The interpreter's own blocks at the peak over what it keeps (0 where the caller's
        blocks made the peak before the interpreter's kept ones were all taken)."""
        caller = max(self.caller_at_peak, self.caller_kept)
        return max(0, self.peak - self.kept - caller)

    @property
    def caller_transient(self) -> int:
        """The rest of the peak over what is kept: the caller's blocks live then, over those
        it keeps."""
        return self.peak - self.kept - self.caller_kept - self.transient


class LiveHeap:
    """Live bytes above setup, and the most seen; of those, the caller's (heap_caller)."""

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self.caller_live = 0
        self.caller_at_peak = 0  # the caller's bytes live at the peak's moment
        self.decided = 0  # live blocks glibc's mmap threshold decides (glibc.counted_mmapped)
        self.decided_at_peak = False

    def take(self, usable: int) -> None:
        self.live += usable
        self.decided += glibc.counted_mmapped(usable)
        if self.live > self.peak:
            self.peak = self.live
            self.caller_at_peak = self.caller_live
            self.decided_at_peak = self.decided > 0

    def give(self, usable: int) -> None:
        self.live -= usable
        self.decided -= glibc.counted_mmapped(usable)

    def step(self, step: heap_caller.Step) -> None:
        if step.caller:
            self.caller_live += step.usable
        if step.usable >= 0:
            self.take(step.usable)
        else:
            self.give(-step.usable)
