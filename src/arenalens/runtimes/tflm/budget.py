"""The arena to declare under TFLM: model + head plan + build → minimal kTensorArenaSize, head
and tail.

Replaying every setup allocation (`setup`) gives the tail, the head and the smallest working arena:
the most of the planning phase, the Prepare phase and the final head + tail, with the arena-end
alignment effect (docs/runtime-rules.md §T10). The build decides every size: the x86-64 wheel by
default, or a Cortex-M build (`build.device_build`) with the plain MicroAllocator firmware uses.
Where a kernel's bytes on that build are not known exactly, the budget says so
(`estimate_reasons`) and in which direction the figure may be off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from functools import cached_property, lru_cache, partial
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.builds.build import HOST, Build, build_title
from arenalens.ir import Model
from arenalens.planning.problem import Plan, Problem, align_up
from arenalens.records import record
from arenalens.runtimes import MemoryBudget
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import ONLINE, offline_offsets
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, scratch_requests
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.setup import PlanFacts, setup_sequence, setups_with_resources
from arenalens.runtimes.tflm.setup_condensed import condensed_sequence, settled_setup
from arenalens.runtimes.tflm.setup_layout import RuntimeLayout, layout_for
from arenalens.runtimes.tflm.setup_replay import (
    Allocation,
    Settled,
    SetupOutcome,
    replay,
    settle,
)
from arenalens.runtimes.tflm.support import Support, support
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # sections and the two-buffer split are worked out when a report asks
    from arenalens.runtimes.arena_split import ArenaSplit
    from arenalens.runtimes.sections import ArenaSection


@record()
class SetupPrediction:
    """What the setup replay predicts for one plan on one build."""

    layout: RuntimeLayout
    settled: Settled  # the minimal arena size, and the head and tails from it on
    support: Support  # which kernels' bytes are estimates on this build
    # Writes every allocation setup makes, in order (`sequence`): a check settles without
    # writing it (`setup_condensed.settled_setup`), and the steps with their messages are written
    # only when a report, a replay or the two-buffer split reads them.
    write_sequence: Callable[[], tuple[Allocation, ...]] = field(
        default=tuple, compare=False, repr=False
    )
    # Writes the condensed sequence (`setup_condensed.condensed_sequence`; None where kernel
    # buffers are written over live temps) when the two-buffer split asks: its runs move temp and
    # tail as the steps they stand for do, so it reads its figures there, not in the steps.
    write_condensed: Callable[[], tuple[Allocation, ...] | None] = field(
        default=tuple, compare=False, repr=False
    )

    @cached_property
    def sequence(self) -> tuple[Allocation, ...]:
        """Every allocation setup makes, in order."""
        return self.write_sequence()

    @cached_property
    def condensed(self) -> tuple[Allocation, ...]:
        """The condensed sequence (the whole one where kernel buffers are written over live
        temps: their failing starts need every temp struct's place)."""
        condensed = self.write_condensed()
        return self.sequence if condensed is None else condensed

    @property
    def minimal_arena(self) -> int:
        """The smallest arena_size that works (and every larger one does)."""
        return self.settled.minimal_arena

    @cached_property
    def at_minimum(self) -> SetupOutcome:
        """Head, tail and categories printed at the minimal size (replayed when asked: the
        figures alone come from `settled`)."""
        return replay(self.sequence, self.minimal_arena, self.layout)

    @cached_property
    def aligned(self) -> SetupOutcome:
        """The same at a roomy arena size that is a multiple of 16."""
        roomy = align_up(self.minimal_arena, ARENA_ALIGNMENT) + ARENA_ALIGNMENT
        while not (aligned := replay(self.sequence, roomy, self.layout)).fits:
            roomy += ARENA_ALIGNMENT
        return aligned

    @property
    def unknown_kernels(self) -> tuple[str, ...]:
        """Opcodes of registered kernels arenalens has no rule for."""
        return self.support.unmodelled

    @property
    def head(self) -> int:
        """The head: the plan's maximum (the same at every size that fits)."""
        settled = self.settled.head
        return self.aligned.head if settled is None else settled

    @property
    def tail(self) -> int:
        """The tail with a 16-aligned arena end (what a roomy, aligned arena prints)."""
        return self.settled.tail(0)

    @property
    def tail_at_minimum(self) -> int:
        """The tail at the minimal arena size."""
        return self.settled.tail(self.minimal_arena)


_is_variable = attrgetter("is_variable")


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
    position = 0  # of the subgraph's first tensor, in the offline plan's model-wide order
    for subgraph in model.subgraphs:
        tensors = subgraph.tensors
        if any(map(_is_variable, tensors)):  # most subgraphs have none: looked for in C
            for index, tensor in enumerate(tensors, position):
                offline = offsets[index] if offsets is not None else ONLINE
                if tensor.is_variable and offline == ONLINE:
                    variables.append((tensor.name, tflm_tensor_bytes(tensor)))
        position += len(tensors)
    return PlanFacts(
        scratch=scratch_requests(model, build, None if setups is None else tuple(setups)),
        planned_buffer_count=arena.problem.buffer_count,
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
    layout: RuntimeLayout | None = None,
) -> SetupPrediction:
    """Model + head arena + plan → minimal arena, head, tail and categories on one build.

    A plan by `tflm_linear` is replayed as a preserve_all_tensors interpreter; any other plan as
    the default interpreter with that plan's maximum as head (deployable as an offline plan).
    `layout` overrides the build's struct sizes.
    """
    layout = layout_for(build) if layout is None else layout
    operators = tuple(setups_with_resources(model, build) if setups is None else setups)
    # Resource-variable buffers are not scratch: the scratch requests are those of the plain
    # setups, which the head arena already asked for.
    facts = plan_facts(model, arena, plan, build, setups)
    table = build.resource_variables
    write = partial(setup_sequence, model, facts, layout, operators, resource_table=table)
    condense: Callable[[], tuple[Allocation, ...] | None] = partial(
        condensed_sequence, model, facts, layout, operators, resource_table=table
    )
    settled = settled_setup(model, facts, layout, operators, resource_table=table)
    if settled is None:  # settle the condensed sequence, or the whole one
        condensed = condense()
        if condensed is None:  # kernel buffers over live temps: settle the whole sequence
            condensed = write()
            write = partial(_written, condensed)
        condense = partial(_written, condensed)
        settled = settle(condensed, layout)
    # The resource-variable buffers only add Persistent events: the same support as the plain
    # setups', which the head arena's notes already computed.
    found = support(model, build) if setups is None else support(model, build, tuple(operators))
    return SetupPrediction(layout, settled, found, write, condense)


def _written(sequence: tuple[Allocation, ...]) -> tuple[Allocation, ...]:
    return sequence


def setup_outcome(
    model: Model, arena: ArenaProblem, plan: Plan, arena_size: int, build: Build = HOST
) -> SetupOutcome:
    """What setup does with one arena_size: fits or not, where it fails, head, tail, categories."""
    layout = layout_for(build)
    operators = setups_with_resources(model, build)
    facts = plan_facts(model, arena, plan, build, operators)
    sequence = setup_sequence(
        model, facts, layout, operators, resource_table=build.resource_variables
    )
    return replay(sequence, arena_size, layout)


def budget(
    model: Model,
    arena_problems: Sequence[ArenaProblem],
    plans: Sequence[Plan],
    *,
    build: Build = HOST,
) -> MemoryBudget:
    """Model + head arena + plan + build → the minimal kTensorArenaSize on that build, its parts,
    what it assumes and where it is an estimate."""
    arena, plan = arena_problems[0], plans[0]
    prediction = predict_setup(model, arena, plan, build)
    assumptions = list(prediction.layout.assumptions)
    if plan.planner == "tflm_linear":
        assumptions.append("preserve_all_tensors: LinearMemoryPlanner, no allocation recording")
    elif plan.planner != "tflm_greedy":
        assumptions.append(
            f"the '{plan.planner}' plan deployed as an offline plan (OfflineMemoryAllocation); "
            "the greedy planner object stays"
        )
    capacity = resource_variables(model, build.resource_variables).capacity
    if capacity and build.resource_variables is None:
        # A C++ application sizes this table itself; the Python interpreter's count is assumed.
        assumptions.append(
            f"MicroResourceVariables::Create(allocator, {capacity}): one entry per distinct "
            "VAR_HANDLE shared_name, as the tflite_micro Python interpreter counts them (the "
            "firmware's own table: --resource-variables N)"
        )
    elif build.resource_variables is not None:
        assumptions.append(
            f"MicroResourceVariables::Create(allocator, {capacity}): the table size given "
            "(--resource-variables)"
        )
    final = prediction.head + prediction.tail_at_minimum
    parts = {
        "head": prediction.head,
        "tail": prediction.tail,
        "tail_at_minimum": prediction.tail_at_minimum,
        "setup_overhead": prediction.minimal_arena - final,
    }
    return MemoryBudget(
        required_bytes=prediction.minimal_arena,
        parts=MappingProxyType(parts),
        assumptions=tuple(assumptions),
        device=_device_title(build),
        build=build,
        obstacles=prediction.support.obstacles,
        estimate_reasons=estimate_notes(prediction.support),
        sections_of=partial(arena_sections, prediction, arena.problem),
        split_of=partial(two_buffer_split, prediction, capacity),
    )


# The build in words, once per build (a build is a frozen value; its title reads release records).
_device_title = lru_cache(maxsize=64)(build_title)


def two_buffer_split(prediction: SetupPrediction, variable_count: int) -> ArenaSplit:
    """The arena split in two buffers (`two_buffers.arena_split`), when a report or a board
    with several banks asks: from the settled sequence (its runs give the same buffers as the
    steps they stand for, `setup_condensed.condensed_sequence`), so a board's check writes no
    steps."""
    from arenalens.runtimes.tflm.two_buffers import arena_split  # noqa: PLC0415

    return arena_split(
        prediction.condensed,
        prediction.layout,
        single_bytes=prediction.minimal_arena,
        variable_count=variable_count,
    )


HEAD_MEANING = (
    "non-persistent section, from the arena's start: activations and kernel scratch buffers, "
    "laid out by the memory planner"
)
SETUP_MEANING = (
    "between head and tail: free once AllocateTensors() returns, but needed while it runs "
    "(temporary memory above the head, the planner's working memory) or left by aligning the "
    "tail down from the arena's end"
)
TAIL_MEANING = (
    "persistent section, allocated downwards from the arena's end: runtime structs, kernel "
    "data and variables"
)


def arena_sections(prediction: SetupPrediction, head: Problem) -> tuple[ArenaSection, ...]:
    """Where every byte of the minimal kTensorArenaSize goes after setup: the head from the
    array's start, the tail from its end (by part, at that very size), and between them the
    bytes only setup needs."""
    from arenalens.runtimes.sections import SectionPart, laid_end_to_end, planned_parts  # noqa: PLC0415
    from arenalens.runtimes.tflm.tail_parts import setup_need, tail_breakdown  # noqa: PLC0415

    lower_bound = head.lower_bound()
    minimum = prediction.minimal_arena
    final = prediction.at_minimum
    tail = tail_breakdown(prediction.sequence, minimum)
    setup_bytes = minimum - final.head - final.tail
    setup_parts: tuple[SectionPart, ...] = ()
    if setup_bytes:
        need = setup_need(prediction.sequence, minimum, prediction.layout)
        setup_parts = (SectionPart(need.name, setup_bytes, need.what),)
    return laid_end_to_end(
        (
            ("head", final.head, planned_parts(final.head, lower_bound), HEAD_MEANING),
            ("setup", setup_bytes, setup_parts, SETUP_MEANING),
            ("tail", tail.nbytes, tail.parts, TAIL_MEANING),
        )
    )


def estimate_notes(found: Support) -> tuple[str, ...]:
    """Where the kernel rules do not know a build's bytes exactly: one note per kind, saying which
    operators and which way the figure may be off ((): exact as far as the rules know)."""
    notes = [
        f"no memory rule for {name}: its persistent and scratch bytes are guessed, so the tail "
        "may be off by what that kernel allocates"
        for name in found.unmodelled
    ]
    if found.reference_stand_ins:
        notes.append(
            f"{_names(found.reference_stand_ins)}: this build runs the CMSIS-NN kernels, modelled "
            "here by the reference kernel rules (CMSIS-NN allocates other OpData and scratch "
            "buffers: the figure may be high or low)"
        )
    if found.wheel_measured:
        notes.append(
            f"{_names(found.wheel_measured)}: struct sizes measured on the 64-bit wheel, used "
            "as they are (they only shrink on 32-bit: the figure may be high)"
        )
    for estimate in found.estimates:
        margin = (
            f" (by up to {format_bytes_exact(estimate.margin_bytes)})"
            if estimate.margin_bytes
            else ""
        )
        notes.append(f"{estimate.reason}{margin}")
    return tuple(notes)


def _names(opcodes: Sequence[str]) -> str:
    return ", ".join(opcodes)
