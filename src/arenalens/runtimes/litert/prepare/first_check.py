"""A WHILE's condition on its first check, from the values known before the run: the WHILE's
inputs that are constants or folded in Prepare (`NodeContext.constant_ints`) and the condition
subgraph's own constants, through its integer comparisons and arithmetic. True: the body runs
at least once; False: never (while.cc Eval_static: the condition runs, its output is false, the
loop breaks before the body's Invoke); None: a run-time value (a model input reaches it, or an
operator evaluated here does not).

Only integer and boolean values of at most a few elements are followed (a loop counter and
its limit); a condition over float data stays None.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from arenalens.runtimes.litert.prepare.state import NodeContext, WorkGraph

Values = tuple[int, ...]

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "LESS": operator.lt,
    "LESS_EQUAL": operator.le,
    "GREATER": operator.gt,
    "GREATER_EQUAL": operator.ge,
    "EQUAL": operator.eq,
    "NOT_EQUAL": operator.ne,
    "LOGICAL_AND": lambda a, b: bool(a and b),
    "LOGICAL_OR": lambda a, b: bool(a or b),
}
# int32 arithmetic as the kernels do it (two's complement wrap: add.cc, sub.cc, mul.cc).
_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "ADD": operator.add,
    "SUB": operator.sub,
    "MUL": operator.mul,
    "MAXIMUM": max,
    "MINIMUM": min,
}
# Operators that hand their first input's values on unchanged.
_SAME_VALUES = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "IDENTITY"})
_MOST_ELEMENTS = 64


def first_check(parent: NodeContext, condition: Sequence[NodeContext]) -> bool | None:
    """The WHILE node `parent`'s condition subgraph (its nodes' contexts after Prepare) on the
    first check: its value when every value it reads is known before the run, else None."""
    if not condition:
        return None
    graph = condition[0].graph
    known: dict[int, Values] = {}
    for slot, tensor in enumerate(graph.inputs):
        if tensor < 0:
            continue  # removed (RemoveUnusedInputs): nothing reads it
        values = parent.constant_ints(slot)
        if values is None:
            values = _bools(parent, slot)
        if values is not None:
            known[tensor] = values
    for node in condition:
        _constants(node, known)
        result = _evaluate(node, known)
        if result is None:
            continue
        if node.outputs and node.outputs[0] >= 0:
            known[node.outputs[0]] = result
    outputs = graph.subgraph.outputs
    found = known.get(outputs[0]) if len(outputs) == 1 else None
    return bool(found[0]) if found is not None and len(found) == 1 else None


def zero_ways(
    graphs: Sequence[tuple[WorkGraph, Sequence[NodeContext]]],
) -> dict[tuple[int, int], tuple[bool, ...]]:
    """The ways each IF and WHILE takes when every model input is zeros, as the wheel
    measurement sets them (tests/litert_heap_measure.py), by (subgraph, node position): an
    IF's then branch (True) or else branch (False), from its condition's first element (if.cc
    Eval: `cond_tensor->data.b[0]`); whether a WHILE's body runs (its first check). The
    primary subgraph is followed from its inputs, each IF into the branch it takes, each WHILE
    turn by turn (its condition, then its body on the loop values the last turn left, up to
    `_MOST_TURNS`): each one's ways in the order it first takes them (an IF in a loop's body
    may take its then branch at the first turn, its else branch after). Absent: one whose
    condition is not followed here (a float comparison, a value no rule evaluates); if a loop
    is not followed to its end, every child's. `graphs`: each
    subgraph's graph and its nodes' contexts after Prepare."""
    if not graphs:
        return {}
    walk = _Walk(graphs)
    graph = graphs[0][0]
    walk.run(0, [_zeros(graph, tensor) for tensor in graph.inputs], depth=0)
    return {key: tuple(taken) for key, taken in walk.taken.items() if key[0] == 0 or not walk.lost}


_MOST_TURNS = 64
_MOST_DEPTH = 8
# Node evaluations one walk may spend (nested loops multiply their turns): past it, every
# child's way is left unknown.
_MOST_STEPS = 20_000


class _Walk:
    """zero_ways' run of the model on known values."""

    def __init__(self, graphs: Sequence[tuple[WorkGraph, Sequence[NodeContext]]]) -> None:
        self.graphs = graphs
        self.taken: dict[tuple[int, int], list[bool]] = {}
        self.lost = False  # a loop or a branch inside a child not followed
        self.steps = 0

    def run(
        self, index: int, inputs: Sequence[Values | None], *, depth: int
    ) -> list[Values | None]:
        """Subgraph `index` on its inputs' values (None: unknown) → its outputs' values."""
        graph, contexts = self.graphs[index]
        known = {
            tensor: values
            for tensor, values in zip(graph.inputs, inputs, strict=False)
            if tensor >= 0 and values is not None
        }
        for node in contexts:
            self.steps += 1
            if self.steps > _MOST_STEPS:
                self.lost = True
                return [None] * len(graph.subgraph.outputs)
            _constants(node, known)
            opcode = node.operator.opcode
            if opcode in ("IF", "WHILE"):
                outputs = self._control_flow(index, node, known, depth)
                for tensor, values in zip(node.outputs, outputs, strict=False):
                    if tensor >= 0 and values is not None:
                        known[tensor] = values
                continue
            result = _evaluate(node, known)
            if result is not None and node.outputs and node.outputs[0] >= 0:
                known[node.outputs[0]] = result
        return [known.get(tensor) for tensor in graph.subgraph.outputs]

    def _take(self, key: tuple[int, int], way: bool) -> None:
        taken = self.taken.setdefault(key, [])
        if way not in taken:
            taken.append(way)

    def _control_flow(
        self, index: int, node: NodeContext, known: dict[int, Values], depth: int
    ) -> list[Values | None]:
        children = [
            int(node.options.get(field, -1) or 0)
            for field in (
                ("then_subgraph_index", "else_subgraph_index")
                if node.operator.opcode == "IF"
                else ("cond_subgraph_index", "body_subgraph_index")
            )
        ]
        unknown: list[Values | None] = [None] * len(node.outputs)
        if depth >= _MOST_DEPTH or not all(0 <= child < len(self.graphs) for child in children):
            self.lost = self.lost or index != 0
            return unknown
        key = (index, node.position)
        values = [known.get(tensor) if tensor >= 0 else None for tensor in node.inputs]
        if node.operator.opcode == "IF":
            flag = values[0] if values else None
            if not flag:
                self.lost = self.lost or index != 0
                return unknown
            self._take(key, bool(flag[0]))
            return self.run(children[not flag[0]], values[1:], depth=depth + 1)
        for turn in range(_MOST_TURNS + 1):
            check = self.run(children[0], values, depth=depth + 1)
            flag = check[0] if check else None
            if flag is None or len(flag) != 1 or turn == _MOST_TURNS:
                self.lost = self.lost or index != 0 or turn > 0
                return unknown
            if turn == 0:
                self._take(key, bool(flag[0]))
            if not flag[0]:
                return values
            values = self.run(children[1], values, depth=depth + 1)
        return unknown


def _constants(node: NodeContext, known: dict[int, Values]) -> None:
    for slot, tensor in enumerate(node.inputs):
        if tensor >= 0 and tensor not in known:
            values = node.constant_ints(slot)
            if values is None:
                values = _bools(node, slot)
            if values is not None:
                known[tensor] = values


def _zeros(graph: WorkGraph, tensor: int) -> Values | None:
    """A model input of integers or booleans of a few elements, set to zeros."""
    if tensor < 0 or tensor >= len(graph.tensors):
        return None
    work = graph.tensors[tensor]
    if work.dtype not in ("INT32", "INT64", "BOOL") or work.shape is None:
        return None
    count = 1
    for dim in work.shape:
        count *= dim
    return (0,) * count if 0 < count <= _MOST_ELEMENTS else None


def _evaluate(node: NodeContext, known: dict[int, Values]) -> Values | None:
    opcode = node.operator.opcode
    inputs = [known.get(tensor) if tensor >= 0 else None for tensor in node.inputs]
    if opcode in _SAME_VALUES and inputs and inputs[0] is not None:
        return inputs[0]
    if opcode == "LOGICAL_NOT" and inputs and inputs[0] is not None:
        return tuple(int(not value) for value in inputs[0])
    if opcode == "CAST" and inputs and inputs[0] is not None:
        target = node.output()
        if target is not None and target.dtype == "BOOL":
            return tuple(int(value != 0) for value in inputs[0])
        if target is not None and target.dtype in ("INT32", "INT64"):
            return inputs[0]
        return None
    pair = _COMPARE.get(opcode)
    arithmetic = _ARITHMETIC.get(opcode)
    if (pair is None and arithmetic is None) or len(inputs) != 2:
        return None
    first, second = inputs
    if first is None or second is None or not _broadcasts(first, second):
        return None
    if arithmetic is not None and node.options.get("fused_activation_function") not in (
        "NONE", None, 0,
    ):  # fmt: skip
        return None  # a clamp this evaluator does not follow
    length = max(len(first), len(second))
    left = first * length if len(first) == 1 else first
    right = second * length if len(second) == 1 else second
    if pair is not None:
        return tuple(int(pair(a, b)) for a, b in zip(left, right, strict=True))
    assert arithmetic is not None
    return tuple(_int32(arithmetic(a, b)) for a, b in zip(left, right, strict=True))


def _broadcasts(first: Values, second: Values) -> bool:
    if not first or not second or max(len(first), len(second)) > _MOST_ELEMENTS:
        return False
    return len(first) == len(second) or len(first) == 1 or len(second) == 1


def _bools(node: NodeContext, slot: int) -> Values | None:
    """A constant BOOL input's values (one byte each), None for any other."""
    tensor = node.input(slot)
    if tensor is None or tensor.dtype != "BOOL" or not node.is_constant(slot):
        return None
    count = 1
    for dim in tensor.shape or ():
        count *= dim
    raw = node.graph.model.buffer_bytes(node.graph.subgraph.tensors[node.inputs[slot]].buffer)
    if count <= 0 or count > _MOST_ELEMENTS or len(raw) < count:
        return None
    return tuple(int(byte != 0) for byte in raw[:count])


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31
