"""In-place aliasing (opt-in): an operator's output placed over an input that only it reads.

TFLM never shares bytes between tensors on its own, but an offline plan may give two tensors the
same offset (docs/runtime-rules.md §T9). That is safe only when the kernel reads every input
element before it writes the output element stored at the same address, and never reads an input
element after writing over it. `INPLACE_SAFE` lists the operators whose TFLM *reference* kernels
(the pip package's; optimized kernel sets may differ) have that shape, each with its reason; every
other operator is never aliased. On top of that, an alias needs:

* the input is read by this operator only (by index, once or more), and is not a subgraph input
  (the caller may read it after invoke), a subgraph output, a variable or a constant;
* input and output have the same type and byte size, and for binary operators the same shape as
  the output (no broadcasting: the elementwise loop then reads index i of each input for output i).

The result is a merge of lifetimes: the input's and the output's buffers become one buffer whose
lifetime is their union (`merge_aliases`); chains (ADD → RELU → RESHAPE) collapse into one buffer.
A plan is proven safe per model by running the real TFLM runtime and comparing outputs bit-exactly
with the unaliased plan (`arenalens optimize --inplace` does it).

Sources: tflite-micro *kernels/add.cc, sub.cc, mul.cc* (ElementWise loops without broadcast),
*activations.cc, logistic.cc, tanh.cc, hard_swish.cc, leaky_relu.cc, elementwise.cc, neg.cc,
quantize_common.cc* (one loop out[i] = f(in[i])), *reshape.cc* (skips its copy when input and
output share an address), *expand_dims.cc* (copies element by element from index 0 upwards).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind
from arenalens.ir import Model, Operator, Subgraph
from arenalens.planning.problem import Buffer, Problem

_ELEMENTWISE_BINARY = (
    "ElementWise loop without broadcast: output[i] = f(input1[i], input2[i]), each element read "
    "before the same element is written"
)
_ELEMENTWISE_UNARY = "one loop output[i] = f(input[i]): each element read before it is written"

INPLACE_SAFE: Mapping[str, str] = MappingProxyType(
    {
        "ADD": _ELEMENTWISE_BINARY,
        "SUB": _ELEMENTWISE_BINARY,
        "MUL": _ELEMENTWISE_BINARY,
        "RELU": _ELEMENTWISE_UNARY,
        "RELU6": _ELEMENTWISE_UNARY,
        "RELU_N1_TO_1": _ELEMENTWISE_UNARY,
        "LEAKY_RELU": _ELEMENTWISE_UNARY,
        "HARD_SWISH": _ELEMENTWISE_UNARY,
        "LOGISTIC": _ELEMENTWISE_UNARY,
        "TANH": _ELEMENTWISE_UNARY,
        "ABS": _ELEMENTWISE_UNARY,
        "NEG": _ELEMENTWISE_UNARY,
        "QUANTIZE": _ELEMENTWISE_UNARY + " (requantize with equal byte sizes only)",
        "RESHAPE": "skips its memcpy when input and output share an address",
        "EXPAND_DIMS": "copies element by element from index 0 up: output[i] = input[i]",
    }
)

# Considered and left out, so a reader does not wonder.
INPLACE_UNSAFE: Mapping[str, str] = MappingProxyType(
    {
        "SQUEEZE": "memcpy(output, input) with equal addresses is undefined behaviour in C",
        "SOFTMAX": "reads the whole row (max, sum) while the loop writes it",
        "CONV_2D": "every output element reads a window of input elements",
        "DEPTHWISE_CONV_2D": "every output element reads a window of input elements",
        "CONCATENATION": "inputs and output differ in size",
        "PAD": "output elements move relative to the input",
        "DEQUANTIZE": "output elements are wider than input elements",
    }
)

_BINARY = frozenset({"ADD", "SUB", "MUL"})


@dataclass(frozen=True, slots=True)
class Alias:
    """One alias: in subgraph, operator writes `output` over the bytes of `input`."""

    subgraph: int
    operator: int
    opcode: str
    input: int
    output: int
    reason: str


def find_aliases(model: Model) -> tuple[Alias, ...]:
    """Model → every (input, output) pair that may share bytes, by the rules above."""
    found: list[Alias] = []
    for subgraph in model.subgraphs:
        for op in subgraph.operators:
            alias = _alias_for(subgraph, op)
            if alias is not None:
                found.append(alias)
    return tuple(found)


def _alias_for(subgraph: Subgraph, op: Operator) -> Alias | None:
    reason = INPLACE_SAFE.get(op.opcode)
    real_outputs = [t for t in op.outputs if t >= 0]
    if reason is None or len(real_outputs) != 1:
        return None
    output_index = real_outputs[0]
    output = subgraph.tensors[output_index]
    if output.has_data or output.is_variable or output.nbytes == 0:
        return None
    data_inputs = op.inputs[:2] if op.opcode in _BINARY else op.inputs[:1]
    if op.opcode in _BINARY:
        shapes = [subgraph.tensors[t].shape for t in data_inputs if t >= 0]
        if len(shapes) != 2 or any(shape != output.shape for shape in shapes):
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
        return Alias(subgraph.index, op.index, op.opcode, input_index, output_index, reason)
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
