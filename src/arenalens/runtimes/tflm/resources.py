"""TFLM resource variables: model → the MicroResourceVariables table and the buffers it allocates.

Resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE) live outside the planned head,
in the tail, as "Persistent buffer data" (*micro_resource_variable.cc*):

* **The table.** The `tflite_micro` Python interpreter counts the distinct `shared_name`s of all
  VAR_HANDLE operators (*runtime.py — count_resource_variables*) and, right after the allocator
  and before `AllocateTensors`, calls `MicroResourceVariables::Create(allocator, count)`: two
  16-aligned persistent buffers, the object and one entry per variable
  (*interpreter_wrapper.cc*). A C++ application makes the same call with its own count; the Python
  count is assumed.
* **Ids.** VAR_HANDLE's Prepare (*kernels/var_handle.cc*) looks up (container, shared_name) and
  creates an id when none matches; a null container matches any. More ids than the count fail
  Prepare. Its output then points at the id in its OpData, so the tensor is never planned.
* **Buffers.** ASSIGN_VARIABLE's Prepare (*kernels/assign_variable.cc*) allocates the variable's
  buffer, sized by the assigned value tensor, the first time the variable is assigned, and only
  when the handle input already points at an id: that is, a VAR_HANDLE earlier in the same
  subgraph bound it. Prepare runs subgraph 0 first, each in operator order, every subgraph
  included, so the first such ASSIGN_VARIABLE in that order allocates; CALL_ONCE runs its init
  subgraph only at Invoke, which allocates nothing more.
* **Reads and assignments of another size.** At Invoke, READ_VARIABLE copies the variable's
  bytes into its output and ASSIGN_VARIABLE copies that many from its value
  (*micro_resource_variable.cc*: `TFLITE_DCHECK(EvalTensorBytes(tensor) == variable.bytes)`,
  then `memcpy(..., variable.bytes)`); TFLM never resizes the output, as LiteRT does. A size
  other than the variable's aborts on builds with DCHECKs; without them (the wheel, NDEBUG) a
  read into a smaller output writes past it: the wheel crashes at the arena size the model
  needs (a rank-0 read of a [1, 64] variable writes 252 B past its 4-B output).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from types import MappingProxyType

from arenalens.ir import Model, Operator, Tensor
from arenalens.memo import recent_by_identity
from arenalens.records import record
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes
from arenalens.units import format_bytes_exact

VAR_HANDLE = "VAR_HANDLE"
_OPCODE = attrgetter("opcode")
ASSIGN_VARIABLE = "ASSIGN_VARIABLE"
READ_VARIABLE = "READ_VARIABLE"


@record(slots=True)
class ResourceBuffer:
    """One variable's buffer: allocated in the Prepare of one ASSIGN_VARIABLE."""

    subgraph: int
    operator: int
    variable: int  # resource id
    shared_name: str
    tensor: Tensor  # the assigned value: its bytes size the buffer


@record(slots=True)
class ResourceVariables:
    """What resource variables cost one model's setup."""

    capacity: int  # the count the Python interpreter passes to MicroResourceVariables::Create
    names: tuple[tuple[str | None, str], ...]  # (container, shared_name) by resource id
    # (subgraph, operator) of an ASSIGN_VARIABLE → the buffer its Prepare allocates.
    buffers: Mapping[tuple[int, int], ResourceBuffer]
    failures: tuple[str, ...]  # why Prepare fails whatever the arena size
    # READ_VARIABLE / ASSIGN_VARIABLE whose tensor is not the variable's size (Invoke's copy).
    mismatches: tuple[SizeMismatch, ...] = ()


@record(slots=True)
class SizeMismatch:
    """A READ_VARIABLE output or ASSIGN_VARIABLE value whose bytes are not its variable's."""

    subgraph: int
    operator: int
    opcode: str
    shared_name: str
    tensor_bytes: int
    variable_bytes: int

    def failure(self, dchecks: bool) -> str | None:
        """Why Invoke fails on a build with or without DCHECKs (None: it runs)."""
        mine, theirs = (
            format_bytes_exact(self.tensor_bytes),
            format_bytes_exact(self.variable_bytes),
        )
        check = (
            "micro_resource_variable.cc TFLITE_DCHECK(EvalTensorBytes(tensor) == variable.bytes) "
            f"fails ({self.opcode} of variable '{self.shared_name}': {mine}, the variable "
            f"{theirs})"
        )
        if dchecks:
            return check + ": TFLM aborts on builds with DCHECKs (the default build type)"
        if self.opcode == READ_VARIABLE and self.tensor_bytes < self.variable_bytes:
            over = format_bytes_exact(self.variable_bytes - self.tensor_bytes)
            return (
                f"{check}; without DCHECKs (NDEBUG) Invoke copies the variable's {theirs} into "
                f"the {mine} output, {over} past it: memory corruption (TFLM never resizes a "
                "read's output)"
            )
        return None

    @property
    def fix(self) -> str:
        """What to change in the model."""
        what = "output" if self.opcode == READ_VARIABLE else "value"
        return (
            f"give operator {self.operator}'s {what} the variable's shape "
            f"({format_bytes_exact(self.variable_bytes)}): TFLM copies whole variables and "
            "resizes nothing (a model made for LiteRT, which resizes a read's output, needs that "
            "change for TFLM)"
        )


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return None if value is None else str(value)


def _find_id(names: list[tuple[str | None, str]], container: str | None, shared: str) -> int:
    """MicroResourceVariables::FindId: a null container matches any stored container."""
    for index, (stored_container, stored_shared) in enumerate(names):
        if (container is None or container == stored_container) and shared == stored_shared:
            return index
    return -1


def resource_variables(model: Model, table: int | None = None) -> ResourceVariables:
    """Model (+ the table size the firmware creates; None: the Python interpreter's count) → the
    variable table's size, the ids Prepare creates and the buffers it allocates."""
    return _resource_variables(model, table)  # the setup replay, its budget and support ask


@recent_by_identity()
def _resource_variables(model: Model, table: int | None) -> ResourceVariables:
    if not any(VAR_HANDLE in map(_OPCODE, subgraph.operators) for subgraph in model.subgraphs):
        # No VAR_HANDLE (most models; `in` scans the opcodes in C): no id, no buffer, no failure.
        return ResourceVariables(0 if table is None else table, (), MappingProxyType({}), ())
    handles = [
        op for subgraph in model.subgraphs for op in subgraph.operators if op.opcode == VAR_HANDLE
    ]
    counted = len({_text(op.options.get("shared_name")) for op in handles})
    capacity = counted if table is None else table
    names: list[tuple[str | None, str]] = []
    buffers: dict[tuple[int, int], ResourceBuffer] = {}
    allocated: dict[int, Tensor] = {}  # resource id → the value its buffer was sized by
    copies: list[tuple[int, Operator, int, Tensor]] = []  # (subgraph, op, id, tensor) at Invoke
    failures: list[str] = []
    for subgraph in model.subgraphs:
        bound: dict[int, int] = {}  # handle tensor → resource id, once its VAR_HANDLE prepared
        for op in subgraph.operators:
            if op.opcode == VAR_HANDLE:
                where = f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index}"
                resource = _create_id(op, names, capacity, where, failures)
                if resource is not None and op.outputs and op.outputs[0] >= 0:
                    bound[op.outputs[0]] = resource
                continue
            copied = _copied_tensor(op)
            resource = None if copied is None else bound.get(op.inputs[0])
            if resource is None or copied is None or copied < 0:
                continue
            tensor = subgraph.tensors[copied]
            copies.append((subgraph.index, op, resource, tensor))
            if op.opcode == ASSIGN_VARIABLE and resource not in allocated:
                allocated[resource] = tensor
                buffers[(subgraph.index, op.index)] = ResourceBuffer(
                    subgraph.index, op.index, resource, names[resource][1], tensor
                )
    mismatches = tuple(
        SizeMismatch(graph, op.index, op.opcode, names[resource][1], *sizes)
        for graph, op, resource, tensor in copies
        if (sizes := _sizes(tensor, allocated.get(resource))) is not None
    )
    return ResourceVariables(
        capacity, tuple(names), MappingProxyType(buffers), tuple(failures), mismatches
    )


def _copied_tensor(op: Operator) -> int | None:
    """The tensor Invoke copies to or from the variable: READ_VARIABLE's output, ASSIGN_VARIABLE's
    value (None for other operators, or arities the kernels refuse)."""
    if op.opcode == ASSIGN_VARIABLE and len(op.inputs) == 2:
        return op.inputs[1]
    if op.opcode == READ_VARIABLE and len(op.inputs) == 1 and len(op.outputs) == 1:
        return op.outputs[0]
    return None


def _sizes(tensor: Tensor, variable: Tensor | None) -> tuple[int, int] | None:
    """(the tensor's bytes, the variable's) when both are known from the file and differ."""
    if variable is None or min(tensor.shape, default=1) <= 0 or min(variable.shape, default=1) <= 0:
        return None  # never allocated (nothing is copied), or a size only Prepare knows
    mine, theirs = tflm_tensor_bytes(tensor), tflm_tensor_bytes(variable)
    return (mine, theirs) if mine != theirs and mine and theirs else None


def invoke_failures(table: ResourceVariables, dchecks: bool) -> list[tuple[SizeMismatch, str]]:
    """The copies that make Invoke fail on a build with or without DCHECKs, each with why."""
    found = ((mismatch, mismatch.failure(dchecks)) for mismatch in table.mismatches)
    return [(mismatch, reason) for mismatch, reason in found if reason is not None]


def _create_id(
    op: Operator,
    names: list[tuple[str | None, str]],
    capacity: int,
    where: str,
    failures: list[str],
) -> int | None:
    """MicroResourceVariables::CreateIdIfNoneFound for one VAR_HANDLE; None when Prepare fails."""
    container = _text(op.options.get("container"))
    shared = _text(op.options.get("shared_name"))
    if shared is None:
        failures.append(
            f"{where} has no shared_name: FindId compares a null name (undefined behaviour)"
        )
        return None
    if container is not None and any(stored is None for stored, _ in names):
        # FindId would strcmp the given container with a stored null one (undefined behaviour).
        failures.append(
            f"{where} names container '{container}' after a VAR_HANDLE without one: FindId "
            "compares it with a null container (undefined behaviour; the pip package crashes)"
        )
        return None
    resource = _find_id(names, container, shared)
    if resource >= 0:
        return resource
    if len(names) >= capacity:
        failures.append(
            f"{where}: 'Failed to allocate resource variable. Maximum resource variable count "
            f"({capacity}) reached.' (the table holds {capacity}: the Python interpreter counts "
            "distinct shared names only; a firmware passes its own count)"
        )
        return None
    names.append((container, shared))
    return len(names) - 1
