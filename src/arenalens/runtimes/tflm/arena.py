"""TFLM's head arena: model → every buffer TFLM's planner receives, in its order, with lifetimes.

Every planned tensor of every subgraph in index order (no constant data, not a variable, bytes ≠ 0;
a variable with an offline offset ≠ -1 is planned too), then the kernel scratch requests, each size
rounded up to 16, the offline plan's offsets as fixed offsets, lifetimes by MarkAllocationLifetimes
(docs/runtime-rules.md §T2, §T3). The planner index is the buffer id; `tflm_greedy`
reproduces the runtime's planner.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffers
from arenalens.analysis.lifetimes import Timeline
from arenalens.builds.build import HOST, Build
from arenalens.errors import ModelError, UsageError
from arenalens.ir import Model, OfflinePlan, Subgraph, Tensor
from arenalens.memo import recent_by_identity
from arenalens.planning.problem import Problem, align_up
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.kernels.registry import REFERENCE_KERNELS
from arenalens.runtimes.tflm.kernels.setups import prepared_shapes, scratch_requests
from arenalens.runtimes.tflm.lifetimes import MarkedLifetimes, tflm_timeline
from arenalens.runtimes.tflm.support import setup_failures
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes

ONLINE = -1  # kOnlinePlannedBuffer
OFFLINE_PLAN_VERSION = 0
# The metadata stores offsets as int32.
INT32_MAX = 2**31 - 1
HEAD = "head"
_OPCODE = attrgetter("opcode")
# BufferKind's members as module constants: an Enum member read through its class costs about a
# microsecond on Python 3.11, once per planned buffer here.
_TENSOR, _VARIABLE, _SCRATCH = BufferKind.TENSOR, BufferKind.VARIABLE, BufferKind.SCRATCH


def tflm_timeline_with_scratch(model: Model, build: Build = HOST) -> Timeline:
    """Model → TFLM lifetimes of every tensor and kernel scratch request on a build."""
    return _timeline(model, build)


@recent_by_identity()
def _timeline(model: Model, build: Build) -> Timeline:
    # The pipeline asks for the timeline, then for the arenas built on it: compute it once.
    return tflm_timeline(model, scratch_requests(model, build))


def offline_offsets(model: Model) -> tuple[int, ...] | None:
    """The offline plan's offsets (all subgraphs' tensors concatenated), checked like TFLM."""
    plan = model.offline_plan
    if plan is None:
        return None
    if len(plan.offsets) != model.tensor_count:
        raise ModelError(
            model.source,
            f"Nbr of offline buffer offsets ({len(plan.offsets)}) in metadata not equal nbr "
            f"tensors ({model.tensor_count}): TFLM refuses this offline plan",
        )
    return plan.offsets


def offline_plan_for(model: Model, arena: ArenaProblem, offsets: Mapping[int, int]) -> OfflinePlan:
    """Planned offsets → OfflineMemoryAllocation: one offset per tensor, -1 for the rest."""
    values = [ONLINE] * model.tensor_count
    for planned in arena.buffers.values():
        if planned.kind is not _TENSOR or planned.tensor is None:
            continue
        for tensor in (planned.tensor, *planned.aliases):
            values[model.tensor_offset_index(planned.subgraph, tensor)] = offsets[planned.id]
    highest = max(values, default=0)
    if highest > INT32_MAX:
        raise ModelError(
            model.source,
            f"the plan places a tensor at offset {highest:,}: OfflineMemoryAllocation holds "
            "32-bit offsets (below 2 GiB), so TFLM cannot be given this plan",
        )
    return OfflinePlan(OFFLINE_PLAN_VERSION, len(model.subgraphs), tuple(values))


def prepare_bound_tensors(model: Model) -> frozenset[tuple[int, int]]:
    """Model → (subgraph, tensor) of outputs a kernel binds in Prepare (never planned: TFLM plans
    only tensors whose data pointer is still null after Prepare; `KernelRule.binds_outputs`)."""
    bound: set[tuple[int, int]] = set()
    for subgraph in model.subgraphs:
        # Asked per distinct opcode (a model repeats a few many times), found by a C loop.
        binding = {code for code in set(map(_OPCODE, subgraph.operators)) if _binds_outputs(code)}
        if not binding:
            continue  # the usual subgraph
        for op in subgraph.operators:
            if op.opcode in binding:
                bound.update((subgraph.index, tensor) for tensor in op.outputs if tensor >= 0)
    return frozenset(bound)


def _binds_outputs(opcode: str) -> bool:
    rule = REFERENCE_KERNELS.get(opcode)
    return rule is not None and rule.binds_outputs


class _Columns(NamedTuple):
    """The head's buffers by column, in id order (`Problem.from_columns`)."""

    starts: list[int]
    ends: list[int]
    sizes: list[int]
    fixed: dict[int, int]  # buffer id → its offline offset (most models: none)


class _HeadBuffers(NamedTuple):
    """The head's buffers as the planner sees them and as reports name them, in TFLM's order."""

    columns: _Columns
    # What each buffer is, in id order: PlannedBuffer's fields (a row), or (subgraph, tensors)
    # for a run of a usual subgraph's tensors, whose rows `_meanings` makes when a report asks.
    meanings: list[list[tuple[Any, ...]] | tuple[int, list[Tensor]]]
    untouched: int  # planned buffers live at no step (-1..-1)


def _meanings(
    parts: list[list[tuple[Any, ...]] | tuple[int, list[Tensor]]],
) -> Iterator[tuple[Any, ...]]:
    """PlannedBuffer's fields per head buffer, in id order, from `_HeadBuffers.meanings`."""
    index = 0
    for part in parts:
        if type(part) is list:
            yield from part
            index += len(part)
            continue
        subgraph_index, tensors = part
        for tensor in tensors:
            yield (
                index,
                _TENSOR,
                subgraph_index,
                tensor.index,
                None,
                tensor.name,
                tflm_tensor_bytes(tensor),
            )
            index += 1


def _head_buffers(
    model: Model,
    timeline: Timeline,
    shapes: Mapping[tuple[int, int], tuple[int, ...]],
    rounding: int,
) -> _HeadBuffers:
    """AllocationInfo in TFLM's order: all subgraphs' tensors by index, then scratch requests;
    each size rounded up to `rounding`.

    A tensor is sized by its eval dims after Prepare: `shapes` holds those a kernel rewrote."""
    offsets = offline_offsets(model)
    bound_in_prepare = prepare_bound_tensors(model)
    rewritten = bool(shapes or bound_in_prepare)
    lifetimes = timeline.lifetimes
    columns = _Columns([], [], [], {})
    starts, ends, sizes = columns.starts, columns.ends, columns.sizes
    meanings: list[tuple[Any, ...]] = []  # PlannedBuffer's fields, made when a report asks
    parts: list[list[tuple[Any, ...]] | tuple[int, list[Tensor]]] = [meanings]
    untouched = 0
    position = -1
    # TFLM's marks, read per planned tensor without making its TensorLifetime (a Timeline made
    # otherwise, by a test, through its lifetimes).
    marked = lifetimes if isinstance(lifetimes, MarkedLifetimes) else None
    for subgraph in model.subgraphs:
        subgraph_index = subgraph.index
        if marked is not None:
            first_marks, last_marks = marked.marks(subgraph_index)
            if offsets is None and not rewritten:
                # The usual model: no offline plan, no output a kernel rewrote or bound.
                held: list[Tensor] = []
                untouched += _usual_tensor_buffers(
                    subgraph, (first_marks, last_marks), rounding, columns=columns, tensors=held
                )
                meanings = []  # the rows of what follows
                parts.append((subgraph_index, held))
                parts.append(meanings)
                continue
        for tensor in subgraph.tensors:
            position += 1
            is_variable = tensor.is_variable
            if tensor.has_data and not is_variable:
                continue  # constant data is never planned (most tensors: skip their bytes)
            offline = offsets[position] if offsets is not None else ONLINE
            # InitializeAllocationInfo: no constant data, not a variable, bytes to hold.
            number = tensor.index
            if rewritten:
                key = (subgraph_index, number)
                nbytes = tflm_tensor_bytes(tensor, shapes.get(key))
                planned = not is_variable and nbytes > 0 and key not in bound_in_prepare
            else:  # no kernel rewrote or bound an output (most models): no key to make
                nbytes = tflm_tensor_bytes(tensor)
                planned = not is_variable and nbytes > 0
            if is_variable and offline != ONLINE:
                planned = True  # an offline-planned variable moves from the tail to the head
            if not planned:
                continue
            if offline < ONLINE:
                raise ModelError(
                    model.source,
                    f"offline plan gives tensor {number} of subgraph {subgraph_index} "
                    f"the offset {offline}, before the arena start",
                )
            if marked is not None:
                first, last = first_marks[number], last_marks[number]
            else:
                life = lifetimes[(subgraph_index, number)]
                first, last = life.first, life.last
            untouched += first == -1 and last == -1
            index = len(sizes)
            starts.append(first)
            ends.append(last)
            sizes.append(-(-nbytes // rounding) * rounding)  # align_up, inline: once per tensor
            if offline != ONLINE:
                columns.fixed[index] = offline
            meanings.append(
                (
                    index,
                    _VARIABLE if is_variable else _TENSOR,
                    subgraph_index,
                    number,
                    None,
                    tensor.name,
                    nbytes,
                )
            )
    for scratch in timeline.scratch:
        request = scratch.request
        first, last = scratch.first, scratch.last
        untouched += first == -1 and last == -1
        index = len(sizes)
        starts.append(first)
        ends.append(last)
        sizes.append(align_up(request.nbytes, rounding))
        meanings.append(
            (
                index,
                _SCRATCH,
                request.subgraph,
                None,
                request.operator,
                request.label or "scratch",
                request.nbytes,
            )
        )
    return _HeadBuffers(columns, parts, untouched)


def _usual_tensor_buffers(
    subgraph: Subgraph,
    marks: tuple[Sequence[int], Sequence[int]],
    rounding: int,
    *,
    columns: _Columns,
    tensors: list[Tensor],
) -> int:
    """`_head_buffers`' loop over one subgraph's tensors where no offline plan places a tensor
    and no kernel rewrote or bound an output (most models): a tensor is planned when it has no
    constant data, is not a variable (its buffer is in the tail) and has bytes. Appends its
    buffers' columns and the tensors they hold (what a report reads of them is made from the
    tensor when asked: `_meanings`); returns how many are live at no step. (Without the general
    loop's questions per tensor: a third of its cost.)"""
    untouched = 0
    first_step, last_step = marks  # by tensor index (`MarkedLifetimes.marks`)
    starts, ends, sizes = columns.starts, columns.ends, columns.sizes
    for tensor in subgraph.tensors:
        if tensor.has_data or tensor.is_variable:
            continue  # most tensors: constant data, read no further
        nbytes = tflm_tensor_bytes(tensor)
        if nbytes <= 0:
            continue
        number = tensor.index
        first, last = first_step[number], last_step[number]
        if first == -1 and last == -1:
            untouched += 1
        starts.append(first)
        ends.append(last)
        sizes.append(-(-nbytes // rounding) * rounding)  # align_up, inline: once per tensor
        tensors.append(tensor)
    return untouched


def arenas(
    model: Model, alignment: int | None = None, *, build: Build = HOST
) -> tuple[ArenaProblem, ...]:
    """Model → the one arena TFLM plans on a build: the head (its scratch requests depend on the
    build's kernels).

    `alignment` replaces MicroArenaBufferAlignment (16), the multiple every size is rounded up
    to; TFLM never aligns offsets, so the Problem's own alignment is 1.
    """
    rounding = ARENA_ALIGNMENT if alignment is None else alignment
    if rounding < 1:
        raise UsageError(f"alignment must be >= 1, got {alignment}")
    # check's analysis, then the ladder's optimize of the same model, its original's plan and
    # each build's figure ask for the same arena: make it once.
    return _arenas(model, rounding, build)


@recent_by_identity()
def _arenas(model: Model, rounding: int, build: Build) -> tuple[ArenaProblem, ...]:
    timeline = tflm_timeline_with_scratch(model, build)
    head = _head_buffers(model, timeline, prepared_shapes(model, build), rounding)
    starts, ends, sizes, fixed = head.columns
    return (
        ArenaProblem(
            name=HEAD,
            problem=Problem.from_columns(starts, ends, sizes, fixed, alignment=1),
            buffers=PlannedBuffers(_meanings(head.meanings), count=len(sizes)),
            steps=timeline.steps,
            runtime_planner="tflm_greedy",
            notes=_arena_notes(model, head.untouched, build),
            size_rounding=rounding,
        ),
    )


def _arena_notes(model: Model, untouched: int, build: Build) -> tuple[str, ...]:
    notes: list[str] = []
    if untouched:
        notes.append(
            f"{untouched} planned buffers are never touched from subgraph 0 (lifetime -1..-1, "
            "e.g. unreachable subgraphs); TFLM still plans them"
        )
    if model.offline_plan is not None:
        notes.append("offline plan (OfflineMemoryAllocation): fixed offsets, never checked")
    notes.extend(setup_failures(model, build))
    return tuple(notes)
