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
from collections.abc import Callable, Mapping, Sequence

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


def first_check(
    parent: NodeContext,
    condition: Sequence[NodeContext],
    given: Mapping[int, Values] | None = None,
) -> bool | None:
    """The WHILE node `parent`'s condition subgraph (its nodes' contexts after Prepare) on the
    first check: its value when every value it reads is known before the run, else None.
    `given`: values of the parent's tensors known besides its constants (`zero_ways`)."""
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
        if values is None and given is not None and slot < len(parent.inputs):
            values = given.get(parent.inputs[slot])
        if values is not None:
            known[tensor] = values
    for node in condition:
        for slot, tensor in enumerate(node.inputs):
            if tensor >= 0 and tensor not in known:
                values = node.constant_ints(slot)
                if values is None:
                    values = _bools(node, slot)
                if values is not None:
                    known[tensor] = values
        result = _evaluate(node, known)
        if result is None:
            continue
        if node.outputs and node.outputs[0] >= 0:
            known[node.outputs[0]] = result
    outputs = graph.subgraph.outputs
    found = known.get(outputs[0]) if len(outputs) == 1 else None
    return bool(found[0]) if found is not None and len(found) == 1 else None


def zero_ways(
    main: Sequence[NodeContext], conditions: Mapping[int, Sequence[NodeContext]]
) -> dict[int, bool]:
    """The way each IF and WHILE of the primary subgraph (`main`: its nodes' contexts after
    Prepare) takes when every model input is zeros, as the wheel measurement sets them
    (tests/litert_heap_measure.py): an IF's then branch (True) or else branch (False), from
    its condition's first element (if.cc Eval: `cond_tensor->data.b[0]`); whether a WHILE's
    body runs (its first check). By node position; a node whose condition is not followed
    here (a float comparison, a value no rule evaluates) is absent. `conditions`: each WHILE's
    condition subgraph's contexts, by the WHILE's position."""
    if not main:
        return {}
    graph = main[0].graph
    known: dict[int, Values] = {}
    for tensor in graph.inputs:
        zeros = _zeros(graph, tensor)
        if zeros is not None:
            known[tensor] = zeros
    ways: dict[int, bool] = {}
    for node in main:
        opcode = node.operator.opcode
        if opcode == "IF" and node.inputs and node.inputs[0] >= 0:
            flag = known.get(node.inputs[0])
            if flag is None:
                flag = node.constant_ints(0) or _bools(node, 0)
            if flag:
                ways[node.position] = bool(flag[0])
            continue
        if opcode == "WHILE":
            first = first_check(node, conditions.get(node.position, ()), known)
            if first is not None:
                ways[node.position] = first
            continue
        for slot, tensor in enumerate(node.inputs):
            if tensor >= 0 and tensor not in known:
                values = node.constant_ints(slot)
                if values is None:
                    values = _bools(node, slot)
                if values is not None:
                    known[tensor] = values
        result = _evaluate(node, known)
        if result is not None and node.outputs and node.outputs[0] >= 0:
            known[node.outputs[0]] = result
    return ways


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
