"""The buffers a runtime's memory can be split into, and the minimum of each: what a board with
several RAM banks can place apart.

TFLM lets firmware hand it its memory three ways (`runtimes/tflm/two_buffers.py` computes each
from the setup replay): one arena (`MicroAllocator::Create(arena, size)`, the number to declare),
two buffers (`MicroAllocator::Create(persistent, P, non_persistent, N)`: the tail in one, the head
and everything setup needs only while it runs in the other), and, with resource variables, their
`MicroResourceVariables` table on an allocator of its own. These are plain numbers with what each
is for; `placement.py` decides which bank takes which.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TwoBuffers:
    """The minimal buffers of `MicroAllocator::Create(persistent, P, non_persistent, N)`."""

    persistent_bytes: int  # the smallest P (each buffer starts 16-byte aligned)
    non_persistent_bytes: int  # the smallest N
    tail_bytes: int  # what the persistent buffer holds after setup (from its aligned end)
    head_bytes: int  # what the non-persistent buffer holds after setup: the planned head
    # N - head: bytes setup needs only while AllocateTensors() runs, all in the non-persistent
    # buffer (temp tensor views, allocation info, the planner's working memory).
    setup_bytes: int

    @property
    def total_bytes(self) -> int:
        """P + N."""
        return self.persistent_bytes + self.non_persistent_bytes


@dataclass(frozen=True, slots=True)
class VariableArena:
    """Resource variables on an allocator of their own (as ESPHome's micro_wake_word does):
    `MicroResourceVariables::Create(MicroAllocator::Create(var_arena, V), count)`. Only the
    table moves there: the variables' buffers stay in the interpreter's persistent memory."""

    arena_bytes: int  # the smallest V
    count: int  # the table's entries
    # The main figures once the table has moved out: one arena, and the two buffers.
    single_bytes: int
    two: TwoBuffers


@dataclass(frozen=True, slots=True)
class ArenaSplit:
    """Every way to split one plan's memory, each buffer at its minimum, for one build."""

    single_bytes: int  # one arena: the number to declare
    two: TwoBuffers
    variables: VariableArena | None = None  # None: the model has no resource variables
    # Below the persistent minimum TFLM does not reliably fail: some allocations are unchecked.
    unchecked_below_persistent: bool = True
