"""Execution schedules: model → the orders its operators may run in, and the memory of an order.

An operator order is valid when every operator runs after

* the producers of the tensors it reads (data dependencies);
* the operators before it, in file order, that touch the same piece of *state*: a variable tensor
  (`is_variable`, updated in place by SVDF / LSTM kernels), or a resource variable, keyed by the
  `(container, shared_name)` of its VAR_HANDLE so that two handles to one variable are one key
  (READ_VARIABLE, ASSIGN_VARIABLE); this keeps the order of reads and writes of every state;
* and, for operators that run other subgraphs (IF, WHILE, CALL_ONCE, ...) or touch state through
  an unknown handle, every state access before them, and they before every state access after
  them: their effects are not analysed, so they are barriers.

Subgraphs are reordered one at a time; a control-flow operator moves as one unit with the
subgraphs it runs. `ScheduleProblem` reduces one subgraph to what an order changes: which tensor
bytes are live while each operator runs (runtime rules decide the sizes and which tensors count).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from functools import cached_property
from types import MappingProxyType

from arenalens.errors import PlanError
from arenalens.ir import Model, Subgraph, Tensor
from arenalens.records import record

_STATE_READERS_WRITERS = frozenset({"READ_VARIABLE", "ASSIGN_VARIABLE"})


@record()
class Schedule:
    """Operator orders per subgraph: position → original operator index (others unchanged)."""

    orders: Mapping[int, tuple[int, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def order(self, model: Model, subgraph: int) -> tuple[int, ...]:
        """The order of one subgraph (file order when the schedule leaves it alone)."""
        given = self.orders.get(subgraph)
        if given is not None:
            return given
        return tuple(range(len(model.subgraphs[subgraph].operators)))

    def is_file_order(self) -> bool:
        """True when no operator moves."""
        return all(tuple(order) == tuple(range(len(order))) for order in self.orders.values())

    def moved(self) -> int:
        """Number of operators not at their file position."""
        return sum(
            position != op for order in self.orders.values() for position, op in enumerate(order)
        )


FILE_ORDER = Schedule()


# ---------------------------------------------------------------------------------------------
# Dependencies


def state_keys(model: Model, subgraph: Subgraph) -> tuple[frozenset[object], ...]:
    """Per operator: the pieces of state it touches; the key "*" marks an unanalysed barrier."""
    handles = _resource_handles(subgraph)
    keys: list[frozenset[object]] = []
    for op in subgraph.operators:
        touched: set[object] = set()
        for tensor_index in (*op.inputs, *op.outputs):
            if tensor_index < 0:
                continue
            tensor = subgraph.tensors[tensor_index]
            if tensor.is_variable:
                touched.add(("variable", subgraph.index, tensor_index))
            if tensor.dtype.name == "RESOURCE" and tensor_index not in op.outputs:
                touched.add(handles.get(tensor_index, "*"))
        if op.opcode in _STATE_READERS_WRITERS and not touched:
            touched.add("*")
        if op.called_subgraphs:
            touched.add("*")
        keys.append(frozenset(touched))
    return tuple(keys)


def _resource_handles(subgraph: Subgraph) -> dict[int, object]:
    """Resource tensor → the variable it names: (container, shared_name) of its VAR_HANDLE."""
    handles: dict[int, object] = {}
    for op in subgraph.operators:
        if op.opcode != "VAR_HANDLE" or not op.outputs or op.outputs[0] < 0:
            continue
        container = _text(op.options.get("container"))
        shared_name = _text(op.options.get("shared_name"))
        handles[op.outputs[0]] = ("resource", container, shared_name)
    return handles


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def predecessors(model: Model, subgraph_index: int) -> tuple[frozenset[int], ...]:
    """Per operator of one subgraph: the operators that must run before it."""
    subgraph = model.subgraphs[subgraph_index]
    before: list[set[int]] = [set() for _ in subgraph.operators]
    writers: dict[int, int] = {}
    for op in subgraph.operators:
        for tensor_index in op.inputs:
            if tensor_index >= 0 and tensor_index in writers:
                before[op.index].add(writers[tensor_index])
        for tensor_index in op.outputs:
            if tensor_index >= 0:
                # A second writer of a tensor keeps its place after the first one's readers.
                if tensor_index in writers:
                    before[op.index].add(writers[tensor_index])
                    before[op.index].update(
                        reader
                        for reader in subgraph.consumers.get(tensor_index, ())
                        if reader < op.index
                    )
                writers[tensor_index] = op.index
    last_access: dict[object, int] = {}
    last_any: int | None = None
    last_barrier: int | None = None
    for op, keys in zip(subgraph.operators, state_keys(model, subgraph), strict=True):
        if not keys:
            continue
        if "*" in keys:
            # A barrier follows every earlier state access.
            before[op.index].update(last_access.values())
            if last_any is not None:
                before[op.index].add(last_any)
        else:
            for key in keys:
                if key in last_access:
                    before[op.index].add(last_access[key])
            if last_barrier is not None:
                before[op.index].add(last_barrier)
        for key in keys:
            last_access[key] = op.index
        last_any = op.index
        if "*" in keys:
            last_barrier = op.index
    return tuple(frozenset(p - {i}) for i, p in enumerate(before))


def check_order(
    order: Sequence[int], preceding: Sequence[frozenset[int]], *, where: str = "subgraph"
) -> None:
    """Raise PlanError unless order is a permutation of all operators respecting `preceding`."""
    count = len(preceding)
    if sorted(order) != list(range(count)):
        raise PlanError(f"{where}: the order is not a permutation of operators 0..{count - 1}")
    position = {op: index for index, op in enumerate(order)}
    for op, required in enumerate(preceding):
        for earlier in sorted(required):
            if position[earlier] > position[op]:
                raise PlanError(
                    f"{where}: operator {op} runs at position {position[op]}, before operator "
                    f"{earlier} (position {position[earlier]}) that it depends on"
                )


def check_schedule(model: Model, schedule: Schedule) -> None:
    """Raise PlanError unless every subgraph order respects its dependencies."""
    for subgraph_index, order in schedule.orders.items():
        if not 0 <= subgraph_index < len(model.subgraphs):
            raise PlanError(f"schedule names subgraph {subgraph_index}, not in the model")
        check_order(order, predecessors(model, subgraph_index), where=f"subgraph {subgraph_index}")


def apply_schedule(model: Model, schedule: Schedule) -> Model:
    """Model + checked schedule → the same model with operators in the new order (reindexed)."""
    check_schedule(model, schedule)
    if schedule.is_file_order():
        return model
    subgraphs = list(model.subgraphs)
    for subgraph_index, order in schedule.orders.items():
        subgraph = subgraphs[subgraph_index]
        operators = tuple(
            subgraph.operators[old]._replace(
                index=new,
                file_index=subgraph.operators[old].position_in_file,
            )
            for new, old in enumerate(order)
        )
        subgraphs[subgraph_index] = Subgraph(
            index=subgraph.index,
            name=subgraph.name,
            tensors=subgraph.tensors,
            operators=operators,
            inputs=subgraph.inputs,
            outputs=subgraph.outputs,
        )
    return replace(model, subgraphs=tuple(subgraphs))


# ---------------------------------------------------------------------------------------------
# The memory an order needs


@record()
class ScheduleProblem:
    """One subgraph reduced to what its operator order changes.

    While operator v runs, the live bytes are: tensors already written (or live from the start)
    that something still reads or that are kept to the end, plus v's outputs, plus `op_extra[v]`
    (kernel scratch, nested subgraphs). Both ends of a lifetime are inclusive, so v's inputs count
    at v's own step (TFLM and LiteRT agree on this).
    """

    predecessors: tuple[frozenset[int], ...]
    tensor_bytes: Mapping[int, int]  # only tensors that take arena bytes
    op_inputs: tuple[tuple[int, ...], ...]  # arena tensors each operator reads (no repeats)
    op_outputs: tuple[tuple[int, ...], ...]  # arena tensors each operator writes (no repeats)
    op_extra: tuple[int, ...]
    initial: frozenset[int]  # live from step 0: subgraph inputs, tensors read but never written
    kept: frozenset[int]  # never freed once written (subgraph outputs; LiteRT: inputs too)

    @property
    def op_count(self) -> int:
        """Number of operators."""
        return len(self.predecessors)

    @cached_property
    def readers(self) -> Mapping[int, frozenset[int]]:
        """Tensor → operators that read it."""
        found: dict[int, set[int]] = {}
        for op, inputs in enumerate(self.op_inputs):
            for tensor in inputs:
                found.setdefault(tensor, set()).add(op)
        return MappingProxyType({t: frozenset(ops) for t, ops in found.items()})

    def peak(self, order: Sequence[int]) -> int:
        """Largest live bytes over the steps of an order (step 0 and every operator)."""
        return max(self.step_bytes(order), default=0)

    def step_bytes(self, order: Sequence[int]) -> list[int]:
        """Live bytes at step 0, then while each operator of order runs."""
        remaining = {t: len(ops) for t, ops in self.readers.items()}
        live = set(self.initial)
        steps = [sum(self.tensor_bytes[t] for t in live)]
        # Inputs nothing reads are live at step 0 only.
        live = {t for t in live if remaining.get(t, 0) or t in self.kept}
        for op in order:
            new = [t for t in self.op_outputs[op] if t not in live]
            total = sum(self.tensor_bytes[t] for t in live)
            total += sum(self.tensor_bytes[t] for t in new) + self.op_extra[op]
            steps.append(total)
            live.update(new)
            for tensor in self.op_inputs[op]:
                remaining[tensor] -= 1
            for tensor in (*self.op_inputs[op], *self.op_outputs[op]):
                if not remaining.get(tensor, 0) and tensor not in self.kept:
                    live.discard(tensor)
        return steps


def schedule_problem(
    model: Model,
    subgraph_index: int = 0,
    *,
    tensor_bytes: Callable[[Tensor], int],
    op_extra: Mapping[int, int] | None = None,
    keep_inputs: bool = False,
) -> ScheduleProblem:
    """One subgraph + runtime sizes → ScheduleProblem.

    `tensor_bytes` gives the arena bytes of a tensor (0 when the runtime does not plan it);
    `op_extra` adds bytes live only while an operator runs; `keep_inputs` keeps subgraph inputs to
    the end (LiteRT never frees them).
    """
    subgraph = model.subgraphs[subgraph_index]
    sizes = {t.index: tensor_bytes(t) for t in subgraph.tensors}
    arena = {index for index, nbytes in sizes.items() if nbytes > 0}

    def arena_tensors(indices: Sequence[int]) -> tuple[int, ...]:
        return tuple(dict.fromkeys(i for i in indices if i in arena))

    written = {t for op in subgraph.operators for t in op.outputs if t >= 0}
    read = {t for op in subgraph.operators for t in op.inputs if t >= 0}
    initial = {t for t in subgraph.inputs if t in arena} | ((read - written) & arena)
    kept = {t for t in subgraph.outputs if t in arena}
    if keep_inputs:
        kept |= {t for t in subgraph.inputs if t in arena}
    extra = dict(op_extra or {})
    return ScheduleProblem(
        predecessors=predecessors(model, subgraph_index),
        tensor_bytes=MappingProxyType({t: sizes[t] for t in arena}),
        op_inputs=tuple(arena_tensors(op.inputs) for op in subgraph.operators),
        op_outputs=tuple(arena_tensors(op.outputs) for op in subgraph.operators),
        op_extra=tuple(extra.get(op.index, 0) for op in subgraph.operators),
        initial=frozenset(initial),
        kept=frozenset(kept),
    )
