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

So a read is refused only where the order is certain: the primary subgraph and the init
subgraphs its CALL_ONCEs run. A control-flow body (IF, WHILE, ...) may run or not: its reads
are not judged and its assignments count as made; a resource given otherwise than by a
VAR_HANDLE of the same subgraph is not judged, and an assignment to one stops the judging.
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


def unwritten_reads(model: Model) -> tuple[UnwrittenRead, ...]:
    """The reads that fail at the first invoke with the builtin kernels, in execution order."""
    if not model.subgraphs or not any(
        operator.opcode == "READ_VARIABLE"
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    ):
        return ()
    walk = _Walk(model)
    walk.run(model.subgraphs[0], certain=True)
    return tuple(walk.found)


def _key(options: object) -> Key:
    """A VAR_HANDLE's (container, shared_name), null read as empty (var_handle.cc Init)."""
    get = getattr(options, "get", None)
    if get is None:
        return ("", "")
    return (str(get("container") or ""), str(get("shared_name") or ""))


class _Walk:
    """One first invoke, node by node: which variables exist when each read runs."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.written: set[Key] = set()
        self.blind = False  # an assignment to a resource not named by a VAR_HANDLE was seen
        self.entered: set[int] = set()  # subgraphs walked (once each: no recursion)
        self.found: list[UnwrittenRead] = []

    def run(self, subgraph: Subgraph, *, certain: bool) -> None:
        if subgraph.index in self.entered:
            return
        self.entered.add(subgraph.index)
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
                    self.written.add(key)
            elif opcode == "READ_VARIABLE" and operator.inputs and certain and not self.blind:
                key = handles.get(operator.inputs[0])
                if key is not None and key not in self.written:
                    self.found.append(
                        UnwrittenRead(subgraph.index, operator.index, operator.inputs[0], key)
                    )
            for field in CONTROL_FLOW_OPTION_FIELDS.get(opcode, ()):
                for index in _indices(operator.options, field):
                    if 0 <= index < len(self.model.subgraphs):
                        self.run(
                            self.model.subgraphs[index], certain=certain and opcode == "CALL_ONCE"
                        )


def _indices(options: object, field: str) -> tuple[int, ...]:
    get = getattr(options, "get", None)
    value = get(field) if get is not None else None
    if isinstance(value, int):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(item for item in value if isinstance(item, int))
    return ()
