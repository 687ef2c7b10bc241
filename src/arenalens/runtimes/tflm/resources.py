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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType

from arenalens.ir import Model, Operator, Tensor
from arenalens.memo import recent_by_identity

VAR_HANDLE = "VAR_HANDLE"
_OPCODE = attrgetter("opcode")
ASSIGN_VARIABLE = "ASSIGN_VARIABLE"


@dataclass(frozen=True, slots=True)
class ResourceBuffer:
    """One variable's buffer: allocated in the Prepare of one ASSIGN_VARIABLE."""

    subgraph: int
    operator: int
    variable: int  # resource id
    shared_name: str
    tensor: Tensor  # the assigned value: its bytes size the buffer


@dataclass(frozen=True, slots=True)
class ResourceVariables:
    """What resource variables cost one model's setup."""

    capacity: int  # the count the Python interpreter passes to MicroResourceVariables::Create
    names: tuple[tuple[str | None, str], ...]  # (container, shared_name) by resource id
    # (subgraph, operator) of an ASSIGN_VARIABLE → the buffer its Prepare allocates.
    buffers: Mapping[tuple[int, int], ResourceBuffer]
    failures: tuple[str, ...]  # why Prepare fails whatever the arena size


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
    allocated: set[int] = set()
    failures: list[str] = []
    for subgraph in model.subgraphs:
        bound: dict[int, int] = {}  # handle tensor → resource id, once its VAR_HANDLE prepared
        for op in subgraph.operators:
            if op.opcode == VAR_HANDLE:
                where = f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index}"
                resource = _create_id(op, names, capacity, where, failures)
                if resource is not None and op.outputs and op.outputs[0] >= 0:
                    bound[op.outputs[0]] = resource
            elif op.opcode == ASSIGN_VARIABLE and len(op.inputs) == 2:
                handle, value = op.inputs
                resource = bound.get(handle)
                if resource is None or resource in allocated or value < 0:
                    continue
                allocated.add(resource)
                buffers[(subgraph.index, op.index)] = ResourceBuffer(
                    subgraph.index, op.index, resource, names[resource][1], subgraph.tensors[value]
                )
    return ResourceVariables(capacity, tuple(names), MappingProxyType(buffers), tuple(failures))


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
