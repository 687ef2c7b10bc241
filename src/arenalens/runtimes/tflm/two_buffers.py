"""TFLM's split setups: a setup sequence → the minimal buffers of the two-buffer allocator and of
resource variables on their own allocator (`runtimes.arena_split`).

Sources, tflite-micro @ 90b983c2b3f1:

* `MicroAllocator::Create(persistent, P, non_persistent, N)` (micro_allocator.cc): a
  PersistentArenaBufferAllocator over [p, align_down(p + P, 16)), which places itself, the
  NonPersistentArenaBufferAllocator, the GreedyMemoryPlanner and the MicroAllocator at its top;
  a NonPersistentArenaBufferAllocator over [align_up(np, 16), np + N).
* PersistentArenaBufferAllocator::AllocatePersistentBuffer rounds down from the aligned end and
  fails below p only: the head is elsewhere, so the persistent side is every persistent step of
  the single-arena sequence, and its minimum is that many bytes rounded up to 16. Several of
  those allocations are not checked by their callers (Create, MicroResourceVariables::Create,
  the builtin-data allocator, per-channel buffers of convolution kernels): below the minimum
  TFLM may return OK and write through a null pointer, so this figure must never be low.
* NonPersistentArenaBufferAllocator: temp allocations round up and fail when
  `np + N - start < size`; the resizable head needs `size <= N`; the planner's working memory is
  `GetAvailableMemory(16) = align_down(np + N, 16) - align_up(temp, 16)`, which must hold
  `buffers × per_buffer_size()`. With the tail elsewhere, setup's temporaries never share bytes
  with what setup keeps, so the non-persistent minimum may exceed the head by all of them.
* `MicroResourceVariables::Create(allocator, n)` (micro_resource_variable.cc) takes the table and
  its n entries from the allocator it is given; `Allocate` takes each variable's buffer from the
  interpreter's context, that is from the interpreter's persistent memory whichever allocator
  holds the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.runtimes.arena_split import ArenaSplit, TwoBuffers, VariableArena
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.setup import RUNTIME_OBJECTS, VARIABLE_TABLE
from arenalens.runtimes.tflm.setup_layout import LINEAR_PLANNER_CAPACITY, RuntimeLayout
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, minimal_arena_size

# Action's members as module constants: an Enum member read through its class costs about a
# microsecond on Python 3.11, several per step of a hundreds-of-steps loop.
_PERSISTENT, _TEMP, _HEAD = Action.PERSISTENT, Action.TEMP, Action.HEAD
_RESET_TEMP, _RELEASE_HEAD = Action.RESET_TEMP, Action.RELEASE_HEAD
_PLANNER, _LINEAR_PLANNER = Action.PLANNER, Action.LINEAR_PLANNER


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def two_buffers(sequence: Sequence[Allocation], layout: RuntimeLayout) -> TwoBuffers:
    """A single-arena setup sequence (whole, or condensed as `setup.condensed_sequence` writes it
    for `settle`: its runs move temp and tail as their steps do) → the minimal persistent and
    non-persistent buffers of the two-buffer allocator (both buffers 16-byte aligned, as
    `alignas(16)` declares them)."""
    persistent = 0  # bytes used below the persistent buffer's 16-aligned end
    head = temp = need = 0
    # Alignments rounded inline (-(-x // a) * a): a call per step costs more than the step.
    for step in sequence:
        action = step.action
        if action is _PERSISTENT:
            nbytes = step.nbytes
            if step.part == RUNTIME_OBJECTS:
                nbytes = _two_buffer_objects(step, layout)
            alignment = step.alignment
            persistent = -(-(persistent + nbytes) // alignment) * alignment
        elif action is _TEMP:
            alignment = step.alignment
            temp = -(-temp // alignment) * alignment + step.nbytes
            if temp > need:  # noqa: PLR1730 - a call per step costs more than the test
                need = temp
        elif action is _HEAD:
            head = temp = step.nbytes
            if head > need:  # noqa: PLR1730
                need = head
        elif action is _RESET_TEMP:
            temp = head
        elif action is _RELEASE_HEAD:
            head = temp = 0
        elif action is _PLANNER or action is _LINEAR_PLANNER:
            if action is _LINEAR_PLANNER:
                if step.nbytes > LINEAR_PLANNER_CAPACITY:
                    raise ValueError("no arena size fits this setup (a planner limit is exceeded)")
                table = 0
            else:
                table = step.nbytes * layout.planner_bytes_per_buffer
            # align_down(np + N, 16) - align_up(temp, 16) >= table.
            end = _align_up(_align_up(temp, ARENA_ALIGNMENT) + table, ARENA_ALIGNMENT)
            need = max(need, end)
            temp = end
    return TwoBuffers(
        persistent_bytes=_align_up(persistent, ARENA_ALIGNMENT),
        non_persistent_bytes=need,
        tail_bytes=persistent,
        head_bytes=head,
        setup_bytes=need - head,
    )


def _two_buffer_objects(step: Allocation, layout: RuntimeLayout) -> int:
    """The allocator objects with two buffers: the step's own objects less the single-arena
    allocator and MicroAllocator, plus the two allocators (the planner stays as it is)."""
    if step.nbytes == layout.preserve_all_allocator_objects:
        # LinearMemoryPlanner instead of the greedy one: same difference.
        return step.nbytes - layout.plain_allocator_objects + layout.two_buffer_allocator_objects
    return layout.two_buffer_allocator_objects


def variable_arena_bytes(count: int, layout: RuntimeLayout) -> int:
    """The smallest V for `MicroResourceVariables::Create(MicroAllocator::Create(var, V), count)`:
    the plain allocator's objects, the table and its entries, each entry 16-byte aligned."""
    sequence = (
        Allocation(Action.PERSISTENT, layout.plain_allocator_objects, layout.struct_alignment),
        Allocation(Action.PERSISTENT, layout.resource_variables, ARENA_ALIGNMENT),
        Allocation(Action.PERSISTENT, layout.resource_variable * count, ARENA_ALIGNMENT),
    )
    return minimal_arena_size(sequence, layout)


def arena_split(
    sequence: Sequence[Allocation],
    layout: RuntimeLayout,
    *,
    single_bytes: int,
    variable_count: int,
) -> ArenaSplit:
    """A setup sequence and its single-arena minimum → every split TFLM supports, each at its
    minimum. The two-buffer Create and a variables' own allocator are plain MicroAllocators; the
    main single arena keeps the build's allocator."""
    variables = None
    if variable_count:
        without_table = tuple(step for step in sequence if step.part != VARIABLE_TABLE)
        variables = VariableArena(
            arena_bytes=variable_arena_bytes(variable_count, layout),
            count=variable_count,
            single_bytes=minimal_arena_size(without_table, layout),
            two=two_buffers(without_table, layout),
        )
    return ArenaSplit(
        single_bytes=single_bytes, two=two_buffers(sequence, layout), variables=variables
    )
