"""Analyses for report tests, built without a runtime module: TFLM tensor-only lifetimes.

`tensor_only_analysis` builds the TFLM head as `runtimes/tflm.py` will (planned tensors, sizes
rounded to 16, TFLM lifetimes) and plans it with `naive` plus a small first-fit planner defined
here, so the report has two layouts to switch between.
"""

from __future__ import annotations

from types import MappingProxyType

from arenalens.analysis.lifetimes import tflm_planned, tflm_timeline
from arenalens.analysis.problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.ir import Model
from arenalens.pipeline import Analysis, ArenaResult
from arenalens.planning.check import check_plan
from arenalens.planning.problem import Buffer, Plan, Problem, align_up, arena_size
from arenalens.planning.registry import run_planner
from arenalens.runtimes import MemoryBudget
from arenalens.tflite.reader import load_model


def first_fit_plan(problem: Problem, name: str = "first_fit") -> Plan:
    """Largest first, lowest offset that fits among live-together buffers (a test planner)."""
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[int, int] = {}
    for buffer in sorted(problem.buffers, key=lambda b: (-b.size, b.id)):
        busy = sorted((o, o + b.size) for o, b in placed if b.conflicts_with(buffer))
        cursor = 0
        for low, high in busy:
            if low >= cursor + buffer.size:
                break
            cursor = max(cursor, high)
        offsets[buffer.id] = cursor
        placed.append((cursor, buffer))
    check_plan(problem, offsets)
    return Plan(
        planner=name, offsets=MappingProxyType(offsets), arena_size=arena_size(problem, offsets)
    )


def tensor_only_arena(model: Model) -> ArenaProblem:
    """Model → the TFLM head with tensors only (no scratch), sizes rounded to 16."""
    timeline = tflm_timeline(model)
    buffers: list[Buffer] = []
    planned: dict[int, PlannedBuffer] = {}
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            if not tflm_planned(tensor):
                continue
            lifetime = timeline.of(subgraph.index, tensor.index)
            buffer_id = len(buffers)
            buffers.append(
                Buffer(buffer_id, lifetime.first, lifetime.last, align_up(tensor.nbytes, 16))
            )
            planned[buffer_id] = PlannedBuffer(
                id=buffer_id,
                kind=BufferKind.TENSOR,
                subgraph=subgraph.index,
                tensor=tensor.index,
                operator=None,
                name=tensor.name,
                nbytes=tensor.nbytes,
            )
    return ArenaProblem(
        name="head",
        problem=Problem(tuple(buffers)),
        buffers=MappingProxyType(planned),
        steps=timeline.steps,
        runtime_planner="naive",
    )


def tensor_only_analysis(model: Model | str | bytes, *, tail_bytes: int = 0) -> Analysis:
    """Model → an Analysis of the tensor-only TFLM head; the chosen plan is first-fit."""
    if not isinstance(model, Model):
        model = load_model(model)
    arena = tensor_only_arena(model)
    naive = run_planner("naive", arena.problem)
    chosen = first_fit_plan(arena.problem)
    result = ArenaResult(arena=arena, plan=chosen, runtime_plan=naive, naive_plan=naive)
    budget = MemoryBudget(
        required_bytes=chosen.arena_size + tail_bytes,
        parts=MappingProxyType({"head": chosen.arena_size, "tail": tail_bytes}),
    )
    return Analysis(
        model=model,
        runtime="tflm",
        planner=chosen.planner,
        timeline=tflm_timeline(model),
        arenas=(result,),
        budget=budget,
        runtime_budget=budget,
    )
