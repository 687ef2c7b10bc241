"""Analysis → Model Explorer node data: each operator coloured by the bytes live at its step.

Format: Model Explorer's `ModelNodeData` JSON (*model_explorer/node_data_builder.py*): one
`GraphNodeData` per graph id — the subgraph's name, or "main" / "subgraph_<i>" for unnamed ones,
as the TFLite flatbuffer adapter names them — with `results` keyed by node id (the operator's
index as a string, the adapter's node ids) holding `{"value": bytes}`, and a white → red
`gradient` from the smallest to the largest value. Load it in Model Explorer with "Add per-node
data" next to the model.
"""

from __future__ import annotations

import bisect
from typing import Any

from arenalens.ir import Model
from arenalens.pipeline import Analysis

GRADIENT = (
    {"stop": 0, "bgColor": "#ffffff"},
    {"stop": 0.5, "bgColor": "#ffb74d"},
    {"stop": 1, "bgColor": "#d32f2f"},
)


def graph_id(model: Model, subgraph: int) -> str:
    """The graph id Model Explorer's TFLite adapter gives a subgraph."""
    name = model.subgraphs[subgraph].name
    if name:
        return name
    return "main" if subgraph == 0 else f"subgraph_{subgraph}"


def live_bytes_by_operator(analysis: Analysis) -> dict[tuple[int, int], int]:
    """(subgraph, operator) → bytes live at the step it runs, summed over the arenas it uses.

    An operator visited more than once (a subgraph reached twice) keeps its busiest visit.
    """
    totals: dict[tuple[int, int], int] = {}
    for result in analysis.arenas:
        curve = result.arena.problem.live_bytes()
        change_steps = [step for step, _ in curve]
        busiest: dict[tuple[int, int], int] = {}
        for step in result.arena.steps:
            if step.operator is None:
                continue
            position = bisect.bisect_right(change_steps, step.step) - 1
            live = curve[position][1] if position >= 0 else 0
            key = (step.subgraph, step.operator)
            busiest[key] = max(busiest.get(key, 0), live)
        for key, live in busiest.items():
            totals[key] = totals.get(key, 0) + live
    return totals


def node_data(analysis: Analysis) -> dict[str, Any]:
    """Analysis → the ModelNodeData document (graph id → GraphNodeData)."""
    totals = live_bytes_by_operator(analysis)
    document: dict[str, Any] = {}
    for subgraph in analysis.model.subgraphs:
        results = {
            str(op.index): {"value": totals.get((subgraph.index, op.index), 0)}
            for op in subgraph.operators
        }
        document[graph_id(analysis.model, subgraph.index)] = {
            "results": results,
            "gradient": [dict(item) for item in GRADIENT],
        }
    return document
