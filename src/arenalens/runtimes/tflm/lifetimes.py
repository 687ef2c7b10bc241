"""TFLM lifetimes: model + kernel scratch requests → inclusive [first, last] steps per buffer.

*micro_allocation_info.cc — MarkAllocationLifetimes*: one global step counter over the whole model.
Step 0 precedes the first operator of subgraph 0; each operator adds a step, and an IF / WHILE /
CALL_ONCE adds one more step per visited subgraph, then that subgraph's own steps. Only subgraph 0
is marked from the top; unreachable subgraphs keep (-1, -1) (docs/runtime-rules.md §T4).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import repeat
from operator import attrgetter
from typing import Any

from arenalens.analysis.lifetimes import (
    UNSET,
    OperatorSteps,
    ScratchLifetime,
    ScratchRequest,
    Step,
    TensorLifetime,
    Timeline,
)
from arenalens.errors import ModelError
from arenalens.ir import Model, Operator, Subgraph, Tensor

# Operators whose nested subgraphs TFLM walks while marking lifetimes. TFLM tests the raw
# `builtin_code` field here, not max(builtin_code, deprecated_builtin_code).
TFLM_CONTROL_FLOW_CODES = frozenset({118, 119, 129})  # IF, WHILE, CALL_ONCE
# Steps a TFLM walk may take beyond one per operator: far above any real model's control flow
# (each subgraph call adds one step plus the callee's), low enough that a hostile call graph
# whose walk grows exponentially is refused in milliseconds instead of running for hours. (At
# a million, a 30 KB fan-out model's million-step timeline cost every later stage seconds:
# about a minute of CPU from report to optimize.)
MAX_EXTRA_TFLM_STEPS = 100_000
_INDEX, _OPCODE, _RAW_CODE, _INPUTS, _OUTPUTS = map(
    attrgetter, ("index", "opcode", "raw_builtin_code", "inputs", "outputs")
)


def tflm_planned(tensor: Tensor) -> bool:
    """TFLM places a tensor in the head iff it has no constant data, is not a variable, and has
    bytes (*AllocationInfoBuilder::InitializeAllocationInfo*); offline variables are the caller's
    concern."""
    return not tensor.has_data and not tensor.is_variable and tensor.nbytes > 0


def tflm_timeline(model: Model, scratch: Sequence[ScratchRequest] = ()) -> Timeline:
    """Model (+ kernel scratch requests) → lifetimes by TFLM's MarkAllocationLifetimes."""
    calls = _calls_any(model)
    limit = tflm_step_limit(model)
    # Without control flow the walk is subgraph 0's operators: within the limit.
    if calls and tflm_step_count(model, limit) > limit:
        raise ModelError(
            model.source,
            f"control flow expands to more than {limit:,} steps: TFLM walks a "
            f"subgraph again for every operator that calls it, and subgraphs here call others "
            f"several times, nested (the walk grows exponentially with the nesting)",
        )
    marker = _TflmMarker(model, scratch)
    if calls:
        marker.mark(0)
    else:
        marker.mark_straight(model.subgraphs[0])
    return marker.timeline()


def execution_model(model: Model) -> Model:
    """Model with every control-flow operator's raw code set to the code its kernel runs as.

    TFLM's marker tests the raw `builtin_code` field and skips IF / WHILE whose file sets only the
    deprecated one, while the kernel still runs the branch (docs/runtime-rules.md §T4): the
    timeline of this model is when bytes are really written and read (`execution_timeline`).
    """
    if all(op.raw_builtin_code == op.builtin_code for sg in model.subgraphs for op in sg.operators):
        return model
    subgraphs = tuple(
        replace(
            subgraph,
            operators=tuple(
                op._replace(raw_builtin_code=op.builtin_code) for op in subgraph.operators
            ),
        )
        for subgraph in model.subgraphs
    )
    return replace(model, subgraphs=subgraphs)


def execution_timeline(model: Model) -> Timeline:
    """Lifetimes as execution really runs: TFLM's marking with every called subgraph visited."""
    return tflm_timeline(execution_model(model))


def tflm_step_limit(model: Model) -> int:
    """Most steps a TFLM walk of this model may take: one per operator plus a fixed allowance."""
    return model.operator_count + MAX_EXTRA_TFLM_STEPS


def tflm_step_count(model: Model, limit: int) -> int:
    """Steps TFLM's walk takes from subgraph 0 (operators and subgraph entries), or limit + 1.

    Counted bottom-up over the call graph (acyclic after `check_model`; a cycle counts as too
    many), so a model whose walk would take billions of steps is refused before it starts.
    """
    cap = limit + 1
    if not _calls_any(model):
        # No control flow: subgraph 0's operators are the whole walk.
        return min(len(model.subgraphs[0].operators), cap)
    counts: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        index, children_done = stack.pop()
        if index in counts:
            continue
        subgraph = model.subgraphs[index]
        callees = [c for op in subgraph.operators for c in _tflm_callees(op)]
        if not children_done:
            if index in on_path:
                return cap
            on_path.add(index)
            stack.append((index, True))
            stack.extend((c, False) for c in callees if c not in counts)
            continue
        on_path.discard(index)
        # One step per operator, one per subgraph entry, plus the called subgraph's own steps.
        total = len(subgraph.operators) + sum(1 + counts.get(c, cap) for c in callees)
        counts[index] = min(total, cap)
    return counts.get(0, cap)


def _calls_any(model: Model) -> bool:
    """True when some operator of the model is one whose subgraphs TFLM's marker walks."""
    # Per subgraph, a C loop over its operators' raw codes.
    return not all(
        TFLM_CONTROL_FLOW_CODES.isdisjoint(map(_RAW_CODE, subgraph.operators))
        for subgraph in model.subgraphs
    )


def _tflm_callees(op: Operator) -> tuple[int, ...]:
    if op.raw_builtin_code not in TFLM_CONTROL_FLOW_CODES:
        return ()
    return tuple(s for s in op.called_subgraphs if s >= 0)


class _TflmMarker:
    """Replays MarkAllocationLifetimes with one global step counter.

    TFLM recurses into called subgraphs; this walks an explicit stack of tasks instead, so deep
    control-flow nesting cannot exhaust Python's recursion limit. Marks are kept per subgraph,
    by tensor index; a subgraph that calls none is marked by dict operations (C loops), not a
    Python step per tensor.

    A subgraph's marks are two lists by tensor index, UNSET where none was made (a write to a
    list slot costs half a dict's), with one slot more at the end: the mark of tensor -1 (no
    tensor), which is made like any other and never read. (Every index lies in [-1, tensor
    count): `check_model`.)
    """

    def __init__(self, model: Model, scratch: Sequence[ScratchRequest]) -> None:
        self.model = model
        self.step = 0
        slots = [len(subgraph.tensors) + 1 for subgraph in model.subgraphs]
        self.first: list[list[int]] = [[UNSET] * count for count in slots]
        self.last: list[list[int]] = [[UNSET] * count for count in slots]
        self.scratch = tuple(scratch)
        self.scratch_first = [UNSET] * len(self.scratch)
        self.scratch_last = [UNSET] * len(self.scratch)
        self.scratch_by_op: dict[tuple[int, int], list[int]] = {}
        for position, request in enumerate(self.scratch):
            key = (request.subgraph, request.operator)
            self.scratch_by_op.setdefault(key, []).append(position)
        # Steps, or runs of a subgraph's operators whose Steps are made when first read.
        self.steps: list[Step | tuple[int, int, Sequence[Operator]]] = [
            Step(0, 0, None, "inputs of subgraph 0")
        ]

    def set_first(self, index: int, tensor: int) -> None:
        first = self.first[index]
        if first[tensor] == UNSET:  # the earliest mark stays (steps are never UNSET)
            first[tensor] = self.step

    def set_last(self, index: int, tensor: int) -> None:
        self.last[index][tensor] = self.step

    def mark(self, subgraph_index: int) -> None:
        # Tasks, popped last-first: ("enter", subgraph) marks its inputs and queues its
        # operators; ("operator", subgraph, op) starts one; ("call", subgraph) steps into a
        # callee; ("finish", subgraph, op, start step) ends an operator after its callees;
        # ("leave", subgraph) marks the outputs.
        tasks: list[tuple[Any, ...]] = [("enter", subgraph_index)]
        while tasks:
            task = tasks.pop()
            action = task[0]
            if action == "enter":
                index = task[1]
                subgraph = self.model.subgraphs[index]
                if not any(
                    op.raw_builtin_code in TFLM_CONTROL_FLOW_CODES and _tflm_callees(op)
                    for op in subgraph.operators
                ):
                    self.mark_straight(subgraph)  # no calls: the same marks, without the tasks
                    continue
                self.mark_boundary(index, subgraph.inputs)
                tasks.append(("leave", index))
                tasks.extend(("operator", subgraph, op) for op in reversed(subgraph.operators))
            elif action == "operator":
                subgraph, op = task[1], task[2]
                self.step += 1
                self.steps.append(Step(self.step, subgraph.index, op.index, op.opcode))
                for tensor in op.outputs:
                    if tensor >= 0:
                        self.set_first(subgraph.index, tensor)
                tasks.append(("finish", subgraph, op, self.step))
                tasks.extend(("call", called) for called in reversed(_tflm_callees(op)))
            elif action == "call":
                called = task[1]
                self.step += 1
                self.steps.append(Step(self.step, called, None, f"enter subgraph {called}"))
                tasks.append(("enter", called))
            elif action == "finish":
                self.finish_operator(task[1], task[2], task[3])
            else:
                index = task[1]
                self.mark_boundary(index, self.model.subgraphs[index].outputs)

    def mark_straight(self, subgraph: Subgraph) -> None:
        """The inputs of a subgraph that calls none, its operators in order (each starts: its
        outputs' first step, then finishes at the same step: inputs' and outputs' last, its
        scratch), then its outputs."""
        index = subgraph.index
        self.mark_boundary(index, subgraph.inputs)
        operators = subgraph.operators
        start = self.step + 1
        steps = range(start, start + len(operators))
        self.steps.append((start, index, operators))
        # Every mark of an operator is its step. Last marks: the latest wins, so every tensor
        # an operator touches, in order. First marks: an output's earliest step, unless marked
        # before this walk. (A -1, no tensor, is marked too, in the extra slot, and never read.)
        # A plain loop: a chain of C calls per operator (dict.fromkeys, items, chain) costs more.
        first, last = self.first[index], self.last[index]
        for step, op in enumerate(operators, start):
            for tensor in op.inputs:
                last[tensor] = step
            for tensor in op.outputs:
                last[tensor] = step
                if first[tensor] == UNSET:
                    first[tensor] = step
        requests = [
            (key[1], positions) for key, positions in self.scratch_by_op.items() if key[0] == index
        ]
        if requests:
            step_of = dict(zip(map(_INDEX, operators), steps, strict=True))
            for requester, positions in requests:
                marked = step_of.get(requester)
                if marked is None:
                    continue  # a request of an operator the subgraph does not have
                for position in positions:
                    if self.scratch_first[position] == UNSET:
                        self.scratch_first[position] = marked
                    self.scratch_last[position] = marked
        self.step = start + len(operators) - 1
        self.mark_boundary(index, subgraph.outputs)

    def mark_boundary(self, index: int, tensors: tuple[int, ...]) -> None:
        first, last, step = self.first[index], self.last[index], self.step
        for tensor in tensors:
            if tensor >= 0:
                if first[tensor] == UNSET:
                    first[tensor] = step
                last[tensor] = step

    def finish_operator(self, subgraph: Subgraph, op: Operator, start: int) -> None:
        index = subgraph.index
        for tensor in op.inputs:
            if tensor >= 0:
                self.set_last(index, tensor)
        for tensor in op.outputs:
            if tensor >= 0:
                self.set_last(index, tensor)
        for position in self.scratch_by_op.get((index, op.index), ()):
            if self.scratch_first[position] == UNSET:
                self.scratch_first[position] = start
            self.scratch_last[position] = self.step

    def timeline(self) -> Timeline:
        scratch = tuple(
            ScratchLifetime(request, self.scratch_first[i], self.scratch_last[i])
            for i, request in enumerate(self.scratch)
        )
        counts = tuple(len(subgraph.tensors) for subgraph in self.model.subgraphs)
        lifetimes = MarkedLifetimes(self.first, self.last, counts)
        return Timeline("tflm", lifetimes, scratch, OperatorSteps(self.steps))


class MarkedLifetimes(Mapping[tuple[int, int], TensorLifetime]):
    """(subgraph, tensor) → TensorLifetime of every tensor (constants too), made when read from
    the marker's first and last marks (per subgraph, by tensor index: `_TflmMarker`): the head
    arena reads only the planned tensors' (a third of VWW's), a check no other. Read-only, equal
    to the dict it stands for."""

    def __init__(
        self, first: list[list[int]], last: list[list[int]], counts: tuple[int, ...]
    ) -> None:
        self._first, self._last, self._counts = first, last, counts

    def __getitem__(self, key: tuple[int, int]) -> TensorLifetime:
        try:
            subgraph, tensor = key
            if type(tensor) is int and 0 <= tensor < self._counts[subgraph] and subgraph >= 0:
                # The tuple TensorLifetime's __new__ would build, without its Python frame.
                return tuple.__new__(
                    TensorLifetime,
                    (
                        subgraph,
                        tensor,
                        self._first[subgraph][tensor],
                        self._last[subgraph][tensor],
                        None,
                    ),
                )
        except (TypeError, ValueError, IndexError):
            pass  # not a (subgraph, tensor) of this model
        raise KeyError(key)

    def marks(self, subgraph: int) -> tuple[Sequence[int], Sequence[int]]:
        """A subgraph's first and last steps by tensor index (UNSET: none), for the head arena,
        which reads a lifetime per planned tensor."""
        return self._first[subgraph], self._last[subgraph]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for subgraph, count in enumerate(self._counts):
            yield from zip(repeat(subgraph), range(count))

    def __len__(self) -> int:
        return sum(self._counts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"
