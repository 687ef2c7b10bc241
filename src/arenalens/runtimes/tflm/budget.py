"""The arena to declare under TFLM: model + head plan → minimal kTensorArenaSize, head and tail.

Replaying every setup allocation (`setup`) gives the tail, the head and the smallest working arena:
the most of the planning phase, the Prepare phase and the final head + tail, with the arena-end
alignment effect (docs/runtime-rules.md §T10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.analysis.problem import ArenaProblem
from arenalens.ir import Model
from arenalens.planning.problem import Plan, align_up
from arenalens.runtimes import MemoryBudget
from arenalens.runtimes.tflm.arena import ONLINE, offline_offsets
from arenalens.runtimes.tflm.build import HOST, Build
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, scratch_requests
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.setup import (
    HOST_64,
    MCU_32,
    HostLayout,
    PlanFacts,
    SetupOutcome,
    layout_for,
    minimal_arena_size,
    replay,
    setup_sequence,
    setups_with_resources,
)
from arenalens.runtimes.tflm.support import support
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes

MCU_VARIANT = "32-bit MCU"


@dataclass(frozen=True)
class SetupPrediction:
    """What the setup replay predicts for one plan on one build."""

    layout: HostLayout
    minimal_arena: int  # the smallest arena_size that works
    at_minimum: SetupOutcome  # head, tail and categories printed at that size
    aligned: SetupOutcome  # the same at a roomy arena size that is a multiple of 16
    unknown_kernels: tuple[str, ...]  # opcodes whose tail bytes are estimates

    @property
    def head(self) -> int:
        """The head: the plan's maximum."""
        return self.aligned.head

    @property
    def tail(self) -> int:
        """The tail with a 16-aligned arena end (what a roomy, aligned arena prints)."""
        return self.aligned.tail


def plan_facts(
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    build: Build = HOST,
    setups: Sequence[OperatorSetup] | None = None,
) -> PlanFacts:
    """Model + head arena + plan → what the setup replay needs to know about the plan."""
    offsets = offline_offsets(model)
    variables: list[tuple[str, int]] = []
    position = 0
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offline = offsets[position] if offsets is not None else ONLINE
            position += 1
            if tensor.is_variable and offline == ONLINE:
                variables.append((tensor.name, tflm_tensor_bytes(tensor)))
    return PlanFacts(
        scratch=scratch_requests(model, build, None if setups is None else tuple(setups)),
        planned_buffer_count=len(arena.problem.buffers),
        head_bytes=plan.arena_size,
        tail_variables=tuple(variables),
        preserve_all_tensors=plan.planner == "tflm_linear",
    )


def predict_setup(
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    build: Build = HOST,
    setups: Sequence[OperatorSetup] | None = None,
    *,
    layout: HostLayout | None = None,
) -> SetupPrediction:
    """Model + head arena + plan → minimal arena, head, tail and categories on one build.

    A plan by `tflm_linear` is replayed as a preserve_all_tensors interpreter; any other plan as
    the default interpreter with that plan's maximum as head (deployable as an offline plan).
    `layout` overrides the build's struct sizes.
    """
    layout = layout_for(build) if layout is None else layout
    operators = tuple(setups_with_resources(model, build) if setups is None else setups)
    facts = plan_facts(model, arena, plan, build, operators)
    sequence = setup_sequence(model, facts, layout, operators)
    minimum = minimal_arena_size(sequence, layout)
    roomy = align_up(minimum, 16) + 16
    while not (aligned := replay(sequence, roomy, layout)).fits:
        roomy += 16
    unknown = support(model, build, operators).unmodelled
    return SetupPrediction(layout, minimum, replay(sequence, minimum, layout), aligned, unknown)


def setup_outcome(
    model: Model, arena: ArenaProblem, plan: Plan, arena_size: int, build: Build = HOST
) -> SetupOutcome:
    """What setup does with one arena_size: fits or not, where it fails, head, tail, categories."""
    layout = layout_for(build)
    operators = setups_with_resources(model, build)
    facts = plan_facts(model, arena, plan, build, operators)
    return replay(setup_sequence(model, facts, layout, operators), arena_size, layout)


# What the TFLM figures are measured against: the tflite-micro Python wheel on a 64-bit host.
HOST_DEVICE = "64-bit host build (tflite-micro wheel)"


def budget(
    model: Model, arena_problems: Sequence[ArenaProblem], plans: Sequence[Plan]
) -> MemoryBudget:
    """Model + head arena + plan → the minimal kTensorArenaSize, its parts, the MCU variant."""
    arena, plan = arena_problems[0], plans[0]
    operators = setups_with_resources(model, HOST)
    host = predict_setup(model, arena, plan, HOST, operators)
    mcu_minimum = minimal_arena_size(
        setup_sequence(model, plan_facts(model, arena, plan, HOST, operators), MCU_32, operators),
        MCU_32,
    )
    assumptions = list(HOST_64.assumptions)
    if plan.planner == "tflm_linear":
        assumptions.append("preserve_all_tensors: LinearMemoryPlanner, no allocation recording")
    elif plan.planner != "tflm_greedy":
        assumptions.append(
            f"the '{plan.planner}' plan deployed as an offline plan (OfflineMemoryAllocation); "
            "the greedy planner object stays"
        )
    capacity = resource_variables(model).capacity
    if capacity:
        # A C++ application sizes this table itself; the Python interpreter's count is assumed.
        assumptions.append(
            f"MicroResourceVariables::Create(allocator, {capacity}): one entry per distinct "
            "VAR_HANDLE shared_name, as the tflite_micro Python interpreter counts them"
        )
    if host.unknown_kernels:
        assumptions.append(
            "estimated tail bytes (kernels without a row): " + ", ".join(host.unknown_kernels)
        )
    assumptions.append(f"{MCU_VARIANT}: " + "; ".join(MCU_32.assumptions))
    final = host.at_minimum.head + host.at_minimum.tail
    parts = {
        "head": host.head,
        "tail": host.tail,
        "tail_at_minimum": host.at_minimum.tail,
        "setup_overhead": host.minimal_arena - final,
    }
    return MemoryBudget(
        required_bytes=host.minimal_arena,
        parts=MappingProxyType(parts),
        assumptions=tuple(assumptions),
        variants=MappingProxyType({MCU_VARIANT: mcu_minimum}),
        device=HOST_DEVICE,
        obstacles=support(model, HOST, operators).obstacles,
        estimate_reasons=tuple(
            f"no memory rule for {name}: its persistent and scratch bytes are guessed, so "
            "the tail may be off by what that kernel allocates"
            for name in host.unknown_kernels
        ),
    )
