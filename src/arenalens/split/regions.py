"""Regions: runs of consecutive operators that may be computed in parts, with one activation
input and one output → `Region`, or the reason a run is not one.

A region's operators must all have a rule for the split kind (`operators.py`); every tensor they
write, except the result, must be read only inside the region and not be a subgraph output (the
whole tensor would have to exist for that reader); and they must read exactly one activation from
outside (the source, which every part reads a slice of).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from arenalens.ir import Model, Subgraph
from arenalens.split.operators import (
    ChannelRule,
    RowRule,
    activation_inputs,
    channel_rule,
    row_rule,
)
from arenalens.split.parts import Region, SplitKind

# The most operators one region may span: halos grow with depth, and so does the search.
MAX_REGION_OPERATORS = 24


@dataclass(frozen=True)
class Rules:
    """Every operator's band rule and channel rules in one subgraph (or why not)."""

    model: Model
    subgraph: Subgraph
    rows: tuple[RowRule | str, ...]
    channel_heads: tuple[ChannelRule | str, ...]
    channel_followers: tuple[ChannelRule | str, ...]

    @classmethod
    def of(cls, model: Model, subgraph_index: int = 0) -> Rules:
        """Evaluate every operator's rules once."""
        subgraph = model.subgraphs[subgraph_index]
        ops = subgraph.operators
        return cls(
            model,
            subgraph,
            tuple(row_rule(model, subgraph, op) for op in ops),
            tuple(channel_rule(model, subgraph, op, head=True) for op in ops),
            tuple(channel_rule(model, subgraph, op, head=False) for op in ops),
        )


def region_of(rules: Rules, first: int, last: int, kind: SplitKind) -> Region | str:
    """Operators first..last → a Region for that kind of split, or why they are not one."""
    subgraph = rules.subgraph
    indices = tuple(range(first, last + 1))
    for index in indices:
        if kind is SplitKind.BANDS:
            rule: RowRule | ChannelRule | str = rules.rows[index]
        elif index == first:
            rule = rules.channel_heads[index]
        else:
            rule = rules.channel_followers[index]
        if isinstance(rule, str):
            return f"operator {index}: {rule}"
    inside = set(indices)
    produced = {t for i in indices for t in subgraph.operators[i].outputs if t >= 0}
    sources = {
        t
        for i in indices
        for t in activation_inputs(subgraph, subgraph.operators[i])
        if t not in produced
    }
    if len(sources) != 1:
        return f"operators {first}-{last} read {len(sources)} activations from outside, not one"
    result = subgraph.operators[last].outputs[0]
    for tensor in produced - {result}:
        if tensor in subgraph.outputs:
            return f"tensor {subgraph.tensors[tensor].name} is a subgraph output"
        readers = set(subgraph.consumers.get(tensor, ()))
        if not readers <= inside:
            return (
                f"tensor {subgraph.tensors[tensor].name} is read after the region "
                f"(by operator {min(readers - inside)})"
            )
    if result in {t for i in indices for t in subgraph.operators[i].inputs}:
        return "the region reads its own result"
    if kind is SplitKind.CHANNELS:
        chain = _chain_problem(subgraph, indices)
        if chain is not None:
            return chain
    (source,) = sources
    return Region(subgraph.index, indices, source, result)


def _chain_problem(subgraph: Subgraph, indices: tuple[int, ...]) -> str | None:
    """Channel groups follow a chain: each operator reads the one before it."""
    for previous, current in itertools.pairwise(indices):
        wrote = subgraph.operators[previous].outputs[0]
        if activation_inputs(subgraph, subgraph.operators[current]) != (wrote,):
            return f"operator {current} does not read operator {previous}'s output alone"
    return None


def regions(
    rules: Rules,
    kind: SplitKind,
    *,
    around: int | None = None,
    max_operators: int = MAX_REGION_OPERATORS,
) -> Iterator[Region]:
    """Every region of that kind (containing operator `around`, when given), shortest first."""
    count = len(rules.subgraph.operators)
    for length in range(1, max_operators + 1):
        for first in range(count - length + 1):
            last = first + length - 1
            if around is not None and not first <= around <= last:
                continue
            found = region_of(rules, first, last, kind)
            if isinstance(found, Region):
                yield found
