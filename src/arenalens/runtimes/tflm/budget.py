"""The arena to declare under TFLM: model + head plan → minimal kTensorArenaSize, head and tail.

Replaying every setup allocation (`setup`) gives the tail, the head and the smallest working arena:
the most of the planning phase, the Prepare phase and the final head + tail, with the arena-end
alignment effect (docs/runtime-rules.md, TFLM: the arena).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.analysis.problem import ArenaProblem
from arenalens.ir import Model
from arenalens.planning.problem import Plan, align_up
from arenalens.runtimes import MemoryBudget
from arenalens.runtimes.tflm.arena import ONLINE, offline_offsets
from arenalens.runtimes.tflm.kernels import KERNELS, KernelMemoryUse
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.scratch import OperatorView, scratch_requests
from arenalens.runtimes.tflm.setup import (
    HOST_64,
    MCU_32,
    HostLayout,
    PlanFacts,
    SetupOutcome,
    minimal_arena_size,
    operator_kernels,
    replay,
    setup_sequence,
)
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


def plan_facts(model: Model, arena: ArenaProblem, plan: Plan) -> PlanFacts:
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
        scratch=scratch_requests(model),
        planned_buffer_count=len(arena.problem.buffers),
        head_bytes=plan.arena_size,
        tail_variables=tuple(variables),
        preserve_all_tensors=plan.planner == "tflm_linear",
    )


def predict_setup(
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    layout: HostLayout = HOST_64,
    kernels: Sequence[tuple[OperatorView, KernelMemoryUse]] | None = None,
) -> SetupPrediction:
    """Model + head arena + plan → minimal arena, head, tail and categories on one build.

    A plan by `tflm_linear` is replayed as a preserve_all_tensors interpreter; any other plan as
    the default interpreter with that plan's maximum as head (deployable as an offline plan).
    """
    sequence = setup_sequence(model, plan_facts(model, arena, plan), layout, kernels)
    minimum = minimal_arena_size(sequence, layout)
    roomy = align_up(minimum, 16) + 16
    while not (aligned := replay(sequence, roomy, layout)).fits:
        roomy += 16
    unknown = sorted(
        {op.opcode for sg in model.subgraphs for op in sg.operators if op.opcode not in KERNELS}
    )
    return SetupPrediction(
        layout, minimum, replay(sequence, minimum, layout), aligned, tuple(unknown)
    )


def setup_outcome(
    model: Model, arena: ArenaProblem, plan: Plan, arena_size: int, layout: HostLayout = HOST_64
) -> SetupOutcome:
    """What setup does with one arena_size: fits or not, where it fails, head, tail, categories."""
    sequence = setup_sequence(model, plan_facts(model, arena, plan), layout)
    return replay(sequence, arena_size, layout)


def budget(
    model: Model, arena_problems: Sequence[ArenaProblem], plans: Sequence[Plan]
) -> MemoryBudget:
    """Model + head arena + plan → the minimal kTensorArenaSize, its parts, the MCU variant."""
    arena, plan = arena_problems[0], plans[0]
    kernels = operator_kernels(model)
    host = predict_setup(model, arena, plan, HOST_64, kernels)
    mcu_minimum = minimal_arena_size(
        setup_sequence(model, plan_facts(model, arena, plan), MCU_32, kernels), MCU_32
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
    )
