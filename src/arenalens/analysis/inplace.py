"""In-place aliasing (opt-in): an operator's output placed over an input that only it reads.

TFLM never shares bytes between tensors on its own, but an offline plan may give two tensors the
same offset (docs/runtime-rules.md §T9). That is safe only when the kernel reads every input
element before it writes the output element stored at the same address, and never reads an input
element after writing over it. Which kernels have that shape is a fact of each kernel, on its
rule (`InPlace`, or `NotInPlace` with the reason it was left out): for TFLM,
`KernelRule.inplace` in runtimes/tflm/kernels/ (the reference kernels, the pip package's), passed
in by the caller; every operator without an `InPlace` is never aliased. On top of that, an alias
needs:

* the input is read by this operator only (by index, once or more), and is not a subgraph input
  (the caller may read it after invoke), a subgraph output, a variable or a constant;
* input and output have the same type and byte size, and where the kernel's loop reads several
  inputs at the output's index (`InPlace.same_shape`) the same shape as the output (no
  broadcasting: the elementwise loop then reads index i of each input for output i).

The result is a merge of lifetimes: the input's and the output's buffers become one buffer whose
lifetime is their union (`merge_aliases`); chains (ADD → RELU → RESHAPE) collapse into one buffer.
A plan is proven safe per model by running the real TFLM runtime and comparing outputs bit-exactly
with the unaliased plan (`arenalens optimize --inplace` does it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind
from arenalens.ir import Model, Operator, Subgraph
from arenalens.planning.problem import Buffer, Problem
from arenalens.records import record


@record(slots=True)
class InPlace:
    """A kernel that may write its output over one of `inputs` (slots) that only it reads, and
    why; with `same_shape`, only when each of them has the output's shape."""

    reason: str
    inputs: tuple[int, ...] = (0,)
    same_shape: bool = False


@record(slots=True)
class NotInPlace:
    """A kernel considered for aliasing and left out, and why (so a reader does not wonder)."""

    reason: str


# Operator name → its kernel's in-place fact (None: never aliased).
InPlaceRules = Callable[[str], InPlace | NotInPlace | None]


@record(slots=True)
class Alias:
    """One alias: in subgraph, operator writes `output` over the bytes of `input`."""

    subgraph: int
    operator: int
    opcode: str
    input: int
    output: int
    reason: str


def find_aliases(model: Model, rules: InPlaceRules) -> tuple[Alias, ...]:
    """Model + the kernels' in-place facts → every (input, output) pair that may share bytes."""
    found: list[Alias] = []
    for subgraph in model.subgraphs:
        for op in subgraph.operators:
            rule = rules(op.opcode)
            if isinstance(rule, InPlace):
                alias = _alias_for(subgraph, op, rule)
                if alias is not None:
                    found.append(alias)
    return tuple(found)


def _alias_for(subgraph: Subgraph, op: Operator, rule: InPlace) -> Alias | None:
    real_outputs = [t for t in op.outputs if t >= 0]
    if len(real_outputs) != 1:
        return None
    output_index = real_outputs[0]
    output = subgraph.tensors[output_index]
    if output.has_data or output.is_variable or output.nbytes == 0:
        return None
    data_inputs = [op.inputs[slot] for slot in rule.inputs if slot < len(op.inputs)]
    if rule.same_shape:
        shapes = [subgraph.tensors[t].shape for t in data_inputs if t >= 0]
        if len(shapes) != len(rule.inputs) or any(shape != output.shape for shape in shapes):
            return None
    for input_index in data_inputs:
        if input_index < 0 or input_index == output_index:
            continue
        source = subgraph.tensors[input_index]
        if source.has_data or source.is_variable or source.is_input or source.is_output:
            continue
        if source.dtype != output.dtype or source.nbytes != output.nbytes:
            continue
        if subgraph.consumers.get(input_index, ()) != (op.index,):
            continue
        return Alias(subgraph.index, op.index, op.opcode, input_index, output_index, rule.reason)
    return None


def merge_aliases(arena: ArenaProblem, aliases: Sequence[Alias]) -> ArenaProblem:
    """Arena + aliases → the arena with each alias group's buffers merged into one buffer.

    The merged buffer keeps the lowest id of its group, spans the union of the lifetimes and takes
    the largest size; its PlannedBuffer lists the other tensors in `aliases`. Buffers with a fixed
    offset are never merged.
    """
    by_tensor: dict[tuple[int, int], int] = {}
    for planned in arena.buffers.values():
        if planned.kind is BufferKind.TENSOR and planned.tensor is not None:
            by_tensor[(planned.subgraph, planned.tensor)] = planned.id
    parent: dict[int, int] = {}

    def root(buffer_id: int) -> int:
        while parent.get(buffer_id, buffer_id) != buffer_id:
            buffer_id = parent[buffer_id]
        return buffer_id

    problem_buffers = arena.problem.by_id
    for alias in aliases:
        source = by_tensor.get((alias.subgraph, alias.input))
        target = by_tensor.get((alias.subgraph, alias.output))
        if source is None or target is None:
            continue
        if problem_buffers[source].fixed_offset is not None:
            continue
        if problem_buffers[target].fixed_offset is not None:
            continue
        low, high = sorted((root(source), root(target)))
        if low != high:
            parent[high] = low
    if not parent:
        return arena
    groups: dict[int, list[int]] = {}
    for buffer in arena.problem.buffers:
        groups.setdefault(root(buffer.id), []).append(buffer.id)
    buffers: list[Buffer] = []
    meanings = dict(arena.buffers)
    for leader, members in sorted(groups.items()):
        parts = [problem_buffers[m] for m in members]
        buffers.append(
            Buffer(
                id=leader,
                start=min(p.start for p in parts),
                end=max(p.end for p in parts),
                size=max(p.size for p in parts),
                fixed_offset=problem_buffers[leader].fixed_offset,
            )
        )
        if len(members) > 1:
            extra = tuple(t for m in members[1:] if (t := arena.buffers[m].tensor) is not None)
            meanings[leader] = replace(
                arena.buffers[leader], aliases=arena.buffers[leader].aliases + extra
            )
            for member in members[1:]:
                del meanings[member]
    problem = Problem(tuple(buffers), alignment=arena.problem.alignment, order=())
    return replace(arena, problem=problem, buffers=MappingProxyType(meanings))
