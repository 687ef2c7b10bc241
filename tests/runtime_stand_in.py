"""A stand-in TFLM runtime for tests, used only while `arenalens.runtimes.tflm` is not on main.

It follows docs/runtime-semantics.md §2.2-2.6 for tensors only (no kernel scratch, no tail model):
planned tensors in index order, sizes rounded to 16, offline offsets fixed, lifetimes from
`tflm_timeline`, TFLM's greedy order and first-fit placement. Its planner is added to the registry
for one test at a time (monkeypatch), so registry-wide tests never see it. Once the real runtime
lands, `ensure_tflm_runtime` does nothing and the tests run against it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from types import MappingProxyType

import pytest

from arenalens.analysis.lifetimes import tflm_planned, tflm_timeline
from arenalens.analysis.problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.ir import Model
from arenalens.planning.problem import Buffer, Plan, Problem, align_up
from arenalens.planning.registry import PLANNERS, PlannerInfo, get_planner
from arenalens.runtimes import MemoryBudget, RuntimeRules

STAND_IN_TAIL_BYTES = 1000
HAVE_REAL_TFLM = importlib.util.find_spec("arenalens.runtimes.tflm") is not None


def _greedy(problem: Problem) -> dict[int, int]:
    """TFLM's order (fixed by id, then size descending, higher id first) and first fit."""
    fixed = sorted((b for b in problem.buffers if b.fixed_offset is not None), key=lambda b: b.id)
    online = sorted(
        (b for b in problem.buffers if b.fixed_offset is None), key=lambda b: (-b.size, -b.id)
    )
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[int, int] = {}
    for buffer in fixed + online:
        if buffer.fixed_offset is not None:
            offset = buffer.fixed_offset
        else:
            cursor = 0
            offset = -1
            for other_offset, other in sorted(placed, key=lambda item: item[0]):
                if not buffer.conflicts_with(other):
                    continue
                if other_offset - cursor >= buffer.size:
                    offset = cursor
                    break
                cursor = max(cursor, align_up(other_offset + other.size, problem.alignment))
            if offset < 0:
                offset = cursor
        offsets[buffer.id] = offset
        placed.append((offset, buffer))
    return offsets


STAND_IN_PLANNER = PlannerInfo(
    name="stand_in_tflm_greedy", function=_greedy, description="test stand-in for tflm_greedy"
)


def _arenas(model: Model, *, alignment: int | None = None) -> tuple[ArenaProblem, ...]:
    timeline = tflm_timeline(model)
    plan = model.offline_plan
    usable = plan is not None and len(plan.offsets) == model.tensor_count
    buffers: list[Buffer] = []
    meaning: dict[int, PlannedBuffer] = {}
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offset = -1
            if usable and plan is not None:
                offset = plan.offsets[model.tensor_offset_index(subgraph.index, tensor.index)]
            variable = tensor.is_variable and offset != -1 and not tensor.has_data
            if not (tflm_planned(tensor) or variable):
                continue
            lifetime = timeline.of(subgraph.index, tensor.index)
            buffer_id = len(buffers)
            buffers.append(
                Buffer(
                    buffer_id,
                    lifetime.first,
                    lifetime.last,
                    align_up(tensor.nbytes, 16),
                    None if offset == -1 else offset,
                )
            )
            meaning[buffer_id] = PlannedBuffer(
                buffer_id,
                BufferKind.VARIABLE if variable else BufferKind.TENSOR,
                subgraph.index,
                tensor.index,
                None,
                tensor.name,
                tensor.nbytes,
            )
    problem = Problem(tuple(buffers), alignment=alignment or 1)
    return (
        ArenaProblem(
            "head", problem, MappingProxyType(meaning), timeline.steps, "stand_in_tflm_greedy"
        ),
    )


def _budget(model: Model, arenas: Sequence[ArenaProblem], plans: Sequence[Plan]) -> MemoryBudget:
    head = plans[0].arena_size if plans else 0
    return MemoryBudget(
        required_bytes=head + STAND_IN_TAIL_BYTES,
        parts=MappingProxyType({"head": head, "tail": STAND_IN_TAIL_BYTES}),
        assumptions=("test stand-in runtime",),
    )


STAND_IN_TFLM = RuntimeRules(
    name="tflm",
    title="TensorFlow Lite Micro (test stand-in)",
    timeline=tflm_timeline,
    arenas=_arenas,
    budget=_budget,
)


def ensure_tflm_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use the stand-in when the real TFLM runtime module is missing."""
    if HAVE_REAL_TFLM:
        return
    get_planner("naive")  # load the built-in planners before adding one for this test only
    monkeypatch.setitem(PLANNERS, STAND_IN_PLANNER.name, STAND_IN_PLANNER)
    from arenalens import pipeline, runtimes

    real = runtimes.get_runtime

    def get_runtime(name: str) -> RuntimeRules:
        return STAND_IN_TFLM if name == "tflm" else real(name)

    monkeypatch.setattr(pipeline, "get_runtime", get_runtime)
    monkeypatch.setattr(runtimes, "get_runtime", get_runtime)
