"""Which READ_VARIABLEs the builtin kernels run before their variable exists, from LiteRT's
sources (tflite/kernels/*.cc).

* A variable is made by the first ASSIGN_VARIABLE that runs (assign_variable.cc Eval:
  CreateResourceVariableIfNotAvailable); nothing else makes one for the builtin kernels
  (VAR_HANDLE's Init only maps its (container, shared_name) to an id, var_handle.cc).
* A READ_VARIABLE's Eval looks the variable up and fails when there is none
  (read_variable.cc: `variable != nullptr`): the first invoke fails, and every later one.
* The ids and the variables are the interpreter's, shared by every subgraph (Subgraph holds
  references to the interpreter's resource_ids and resources): two handles of one
  (container, shared_name) in any subgraphs name one variable.
* The interpreter invokes the primary subgraph (0) node by node in the model's order; a
  CALL_ONCE runs its init subgraph at its node on the first invoke (call_once.cc Eval), so an
  assignment there precedes the nodes after the CALL_ONCE.

* A control-flow operator runs its subgraphs at its node, in its Eval: IF one branch, by its
  condition's value (if.cc); WHILE its cond subgraph first, then the body while cond gives
  true, cond again after each body (while.cc); neither runs anything in Prepare.

So each path a first invoke may take is walked: a variable is surely made where every path to
the read assigns it (an IF's both branches, a WHILE's cond), maybe made where some path does (one
branch, a WHILE body, which may not run). A read of a variable not surely made fails on the
inputs that take its path: on every invoke when no path before it assigns it and the read runs
on every path (the main subgraph, a CALL_ONCE's init, a WHILE's cond), else when its IF branch
or WHILE body runs or the assigning ones do not (`UnwrittenRead.when`, `maybe_made`): measured
on the 2.3.0 wheel with each input (tests/litert_control_flow_cases.py). A subgraph reached
again is not walked again (its assignments count as before); a resource given otherwise than by
a VAR_HANDLE of the same subgraph is not judged, and an assignment to one stops the judging.

* A WHILE's body runs only on loop values its cond gave true for (while.cc: cond, then the body
  on the same values). When the cond is one comparison of a loop value with an integer constant
  (`count < 1`), an IF in the body whose condition compares the same loop value, as the body
  took it, with a constant takes one branch only where the cond's range decides it (`count < 1`
  inside `count < 1`: always then): the branch no loop value takes is not walked (seed 1300201
  flow 142: a read in that else branch was called a failure no input gives). Only for a body no
  other operator calls (a subgraph is walked once, so its guard must hold wherever it runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arenalens.ir import CONTROL_FLOW_OPTION_FIELDS

if TYPE_CHECKING:
    from arenalens.ir import Model, Subgraph

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class UnwrittenRead:
    """A READ_VARIABLE the builtin kernel runs before any assignment made its variable."""

    subgraph: int
    operator: int
    resource: int  # the READ's resource tensor
    key: Key  # (container, shared_name)
    # The branches and bodies that must run for the read to run ('' parts: none, every invoke).
    when: tuple[str, ...] = ()
    maybe_made: bool = False  # an IF branch or WHILE body before it may have made the variable


def unwritten_reads(model: Model) -> tuple[UnwrittenRead, ...]:
    """The reads that fail at the first invoke with the builtin kernels, in execution order."""
    if not model.subgraphs or not any(
        operator.opcode == "READ_VARIABLE"
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    ):
        return ()
    walk = _Walk(model)
    walk.run(model.subgraphs[0], _Made(frozenset(), frozenset()), ())
    return tuple(walk.found)


def _key(options: object) -> Key:
    """A VAR_HANDLE's (container, shared_name), null read as empty (var_handle.cc Init)."""
    get = getattr(options, "get", None)
    if get is None:
        return ("", "")
    return (str(get("container") or ""), str(get("shared_name") or ""))


@dataclass(frozen=True, slots=True)
class _Made:
    """The variables made so far: on every path (`surely`), on some path (`maybe`)."""

    surely: frozenset[Key]
    maybe: frozenset[Key]


class _Walk:
    """One first invoke, node by node and path by path: which variables exist when each read
    runs."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.blind = False  # an assignment to a resource not named by a VAR_HANDLE was seen
        # Subgraphs walked, with what one run of each surely and maybe makes (once each).
        self.walked: dict[int, _Made | None] = {}
        self.found: list[UnwrittenRead] = []

    def run(
        self,
        subgraph: Subgraph,
        made: _Made,
        when: tuple[str, ...],
        *,
        judged: bool = True,
        guard: _Guard | None = None,
    ) -> _Made:
        """Walk `subgraph` with `made` made before it, on the path `when`: what is made after
        (its reads are judged unless `judged` is False; `guard`: what its inputs satisfy)."""
        if subgraph.index in self.walked:  # again (or recursively): its assignments as before
            own = self.walked[subgraph.index]
            return made if own is None else _Made(made.surely | own.surely, made.maybe | own.maybe)
        self.walked[subgraph.index] = None
        before, direct = made, set()
        surely, maybe = set(made.surely), set(made.maybe)  # grown in place (one copy per run)
        handles: dict[int, Key] = {}
        for operator in subgraph.operators:
            opcode = operator.opcode
            if opcode == "VAR_HANDLE":
                if operator.outputs and operator.outputs[0] >= 0:
                    handles[operator.outputs[0]] = _key(operator.options)
            elif opcode == "ASSIGN_VARIABLE" and operator.inputs:
                key = handles.get(operator.inputs[0])
                if key is None:
                    self.blind = True
                else:
                    surely.add(key)
                    maybe.add(key)
                    direct.add(key)
            elif opcode == "READ_VARIABLE" and operator.inputs and judged and not self.blind:
                key = handles.get(operator.inputs[0])
                if key is not None and key not in surely:
                    self.found.append(
                        UnwrittenRead(
                            subgraph.index,
                            operator.index,
                            operator.inputs[0],
                            key,
                            when,
                            key in maybe,
                        )
                    )
            elif opcode in CONTROL_FLOW_OPTION_FIELDS:
                after = self._control_flow(
                    subgraph,
                    operator.index,
                    _Made(frozenset(surely), frozenset(maybe)),
                    when,
                    judged=judged,
                    guard=guard,
                )
                surely, maybe = set(after.surely), set(after.maybe)
        made = _Made(frozenset(surely), frozenset(maybe))
        self.walked[subgraph.index] = _Made(
            (made.surely - before.surely) | direct, (made.maybe - before.maybe) | direct
        )
        return made

    def _control_flow(
        self,
        subgraph: Subgraph,
        index: int,
        made: _Made,
        when: tuple[str, ...],
        *,
        judged: bool,
        guard: _Guard | None = None,
    ) -> _Made:
        """The subgraphs one operator runs at its node (call_once.cc, if.cc, while.cc); another
        operator's subgraphs are not judged and their assignments count as made."""
        operator = subgraph.operators[index]
        opcode = operator.opcode
        called = [
            self.model.subgraphs[target]
            for field in CONTROL_FLOW_OPTION_FIELDS.get(opcode, ())
            for target in _indices(operator.options, field)
            if 0 <= target < len(self.model.subgraphs)
        ]
        where = f"{opcode} operator {index} of subgraph {subgraph.index}"
        if opcode == "IF" and len(called) == 2:
            taken = _branch_taken(self.model, subgraph, operator.inputs, guard)
            runs = [
                self.run(
                    branch,
                    made,
                    (*when, f"{where} takes its {name} branch (subgraph {branch.index})"),
                    judged=judged,
                )
                for branch, name in zip(called, ("then", "else"), strict=True)
                if taken in (None, name)
            ]
            return _Made(
                frozenset.intersection(*(run.surely for run in runs)),
                frozenset.union(*(run.maybe for run in runs)),
            )
        if opcode == "WHILE" and len(called) == 2:
            cond, body = called
            made = self.run(cond, made, when, judged=judged)
            path = (*when, f"{where} runs its body (subgraph {body.index})")
            inner = _loop_guard(self.model, cond) if self._called_once(body.index) else None
            return _Made(made.surely, self.run(body, made, path, judged=judged, guard=inner).maybe)
        for callee in called:
            if opcode == "CALL_ONCE":  # its init subgraph runs at its node on the first invoke
                made = self.run(callee, made, when, judged=judged)
            else:
                after = self.run(callee, made, when, judged=False)
                made = _Made(made.surely | after.maybe, after.maybe)
        return made

    def _called_once(self, index: int) -> bool:
        """Whether one control-flow field of one operator in the model names subgraph `index`."""
        return (
            sum(
                _indices(operator.options, field).count(index)
                for subgraph in self.model.subgraphs
                for operator in subgraph.operators
                for field in CONTROL_FLOW_OPTION_FIELDS.get(operator.opcode, ())
            )
            == 1
        )


# A comparison of an integer value with a constant, as the range of values it gives true for:
# (lowest, highest), None for unbounded; the constant on the left reads the other way round.
_COMPARISONS = {"LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL"}
_FLIPPED = {"LESS": "GREATER", "LESS_EQUAL": "GREATER_EQUAL", "GREATER": "LESS"}
_FLIPPED |= {"GREATER_EQUAL": "LESS_EQUAL", "EQUAL": "EQUAL"}
Range = tuple[int | None, int | None]


@dataclass(frozen=True, slots=True)
class _Guard:
    """Inside a WHILE body: its input `position` (a loop value) lies in `values`."""

    position: int
    values: Range


def _true_range(opcode: str, constant: int) -> Range:
    return {
        "LESS": (None, constant - 1),
        "LESS_EQUAL": (None, constant),
        "GREATER": (constant + 1, None),
        "GREATER_EQUAL": (constant, None),
        "EQUAL": (constant, constant),
    }[opcode]


def _compared_input(model: Model, subgraph: Subgraph, tensor: int) -> tuple[int, Range] | None:
    """The tensor as made by one comparison of one of the subgraph's inputs (an integer, one
    value) with an integer constant: (that input's position, the range giving true)."""
    producers = [op for op in subgraph.operators if tensor in op.outputs]
    if len(producers) != 1 or producers[0].opcode not in _COMPARISONS:
        return None
    operator = producers[0]
    if len(operator.inputs) != 2 or min(operator.inputs) < 0:
        return None
    for side, opcode in ((0, operator.opcode), (1, _FLIPPED[operator.opcode])):
        value, other = operator.inputs[side], operator.inputs[1 - side]
        constant = _one_integer(model, subgraph, other)
        if constant is None or value not in subgraph.inputs:
            continue
        if subgraph.tensors[value].dtype.name not in _INTEGERS:
            return None
        return subgraph.inputs.index(value), _true_range(opcode, constant)
    return None


_INTEGERS = {"INT8", "UINT8", "INT16", "INT32", "INT64"}


def _one_integer(model: Model, subgraph: Subgraph, index: int) -> int | None:
    """A constant int32 / int64 tensor's one value (None for anything else)."""
    tensor = subgraph.tensors[index]
    if not tensor.has_data or tensor.element_count != 1:
        return None
    width = {"INT32": 4, "INT64": 8}.get(tensor.dtype.name)
    raw = model.buffer_bytes(tensor.buffer) if width else b""
    if width is None or len(raw) != width:
        return None
    return int.from_bytes(raw, "little", signed=True)


def _loop_guard(model: Model, cond: Subgraph) -> _Guard | None:
    """What a WHILE body's inputs satisfy when its cond is one comparison of a loop value with a
    constant (the body takes the loop values in the cond's order)."""
    if len(cond.outputs) != 1 or cond.outputs[0] < 0:
        return None
    compared = _compared_input(model, cond, cond.outputs[0])
    return None if compared is None else _Guard(*compared)


def _branch_taken(
    model: Model, subgraph: Subgraph, inputs: tuple[int, ...], guard: _Guard | None
) -> str | None:
    """'then' or 'else' when the guard decides an IF's condition for every value it allows,
    else None (both may run)."""
    if guard is None or not inputs or inputs[0] < 0:
        return None
    compared = _compared_input(model, subgraph, inputs[0])
    if compared is None or compared[0] != guard.position:
        return None
    (low, high), (true_low, true_high) = guard.values, compared[1]
    inside = (true_low is None or (low is not None and low >= true_low)) and (
        true_high is None or (high is not None and high <= true_high)
    )
    if inside:
        return "then"
    disjoint = (true_low is not None and high is not None and high < true_low) or (
        true_high is not None and low is not None and low > true_high
    )
    return "else" if disjoint else None


def _indices(options: object, field: str) -> tuple[int, ...]:
    get = getattr(options, "get", None)
    value = get(field) if get is not None else None
    if isinstance(value, int):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(item for item in value if isinstance(item, int))
    return ()
