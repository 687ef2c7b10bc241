"""Model summary: Model → counts, op histogram and bytes by tensor kind (what `inspect` shows)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Model, Subgraph, TensorKind


@dataclass(frozen=True)
class SubgraphSummary:
    """Counts and bytes of one subgraph."""

    index: int
    name: str
    operator_count: int
    tensor_count: int
    op_histogram: Mapping[str, int]
    tensors_by_kind: Mapping[str, int]
    constant_bytes: int
    arena_candidate_bytes: int  # non-constant, non-variable tensors: what planners place
    variable_bytes: int


@dataclass(frozen=True)
class ModelSummary:
    """Counts and bytes of a whole model."""

    subgraphs: tuple[SubgraphSummary, ...]
    op_histogram: Mapping[str, int]
    custom_ops: tuple[str, ...]
    tensors_by_kind: Mapping[str, int]
    constant_bytes: int  # bytes of all distinct buffers that hold data
    arena_candidate_bytes: int
    variable_bytes: int
    dynamic_tensors: int  # non-constant tensors with -1 in shape_signature


def summarize(model: Model) -> ModelSummary:
    """Model → ModelSummary."""
    subgraphs = tuple(_summarize_subgraph(sg) for sg in model.subgraphs)
    histogram: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for summary in subgraphs:
        histogram.update(summary.op_histogram)
        kinds.update(summary.tensors_by_kind)
    used_buffers = {t.buffer for sg in model.subgraphs for t in sg.tensors if t.has_data}
    return ModelSummary(
        subgraphs=subgraphs,
        op_histogram=MappingProxyType(dict(sorted(histogram.items()))),
        custom_ops=tuple(sorted(name for name in histogram if name.startswith("CUSTOM:"))),
        tensors_by_kind=MappingProxyType(_ordered_kinds(kinds)),
        constant_bytes=sum(model.buffers[b].nbytes for b in sorted(used_buffers)),
        arena_candidate_bytes=sum(s.arena_candidate_bytes for s in subgraphs),
        variable_bytes=sum(s.variable_bytes for s in subgraphs),
        dynamic_tensors=sum(
            1 for sg in model.subgraphs for t in sg.tensors if not t.has_data and t.has_dynamic_dims
        ),
    )


def _summarize_subgraph(subgraph: Subgraph) -> SubgraphSummary:
    kinds = Counter(t.kind.value for t in subgraph.tensors)
    return SubgraphSummary(
        index=subgraph.index,
        name=subgraph.name,
        operator_count=len(subgraph.operators),
        tensor_count=len(subgraph.tensors),
        op_histogram=MappingProxyType(
            dict(sorted(Counter(op.opcode for op in subgraph.operators).items()))
        ),
        tensors_by_kind=MappingProxyType(_ordered_kinds(kinds)),
        constant_bytes=sum(t.nbytes for t in subgraph.tensors if t.has_data),
        arena_candidate_bytes=sum(
            t.nbytes for t in subgraph.tensors if not t.has_data and not t.is_variable
        ),
        variable_bytes=sum(t.nbytes for t in subgraph.tensors if t.is_variable and not t.has_data),
    )


def _ordered_kinds(kinds: Mapping[str, int]) -> dict[str, int]:
    return {kind.value: kinds.get(kind.value, 0) for kind in TensorKind}
