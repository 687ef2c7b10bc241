"""Optimization candidates: one operator order and alias choice → the plans `optimize` may
write (pinned scratch, free; with the overlaps its kernels allow), each judged by what TFLM will
really do with it (its replica on the rewritten model, the number to declare on every build it
must hold on), checked as written, and proven on the real runtime where a plan relies on a
kernel's access order (`optimization/__init__.py` chooses among them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind
from arenalens.analysis.inplace import Alias, merge_aliases
from arenalens.analysis.overlap_pairs import OverlapPair, shared_pairs, with_overlaps
from arenalens.builds.build import HOST, Build
from arenalens.builds.kernel_paths import (
    ALL_PATHS,
    KernelPath,
    OverlapRules,
    paths_text,
    sorted_paths,
)
from arenalens.effort import cap_setting
from arenalens.errors import PlanError
from arenalens.ir import Model, OfflinePlan, PlanRecord
from arenalens.pipeline import analyze
from arenalens.planning.problem import Buffer, Plan, Problem
from arenalens.planning.registry import run_planner
from arenalens.reorder.schedule import Schedule
from arenalens.runtimes.door import tflm_runtime
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.plan_record import EVERY_BUILD, PLAN_RECORD_VERSION, plan_digest
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import rewrite_model, shape_changes
from arenalens.units import format_bytes_exact

# Seeds of random inputs a candidate with aliases or overlaps must survive on the real runtime.
PROOF_SEEDS = (0, 1, 2)
# The real interpreter a proof runs on, named in every claim it backs.
WHEEL = "x86-64 tflite_micro wheel (reference kernels)"


@dataclass(frozen=True)
class Candidate:
    """One way to rewrite the model, planned and judged by the TFLM replica."""

    label: str
    schedule: Schedule
    aliases: tuple[Alias, ...]
    plan: Plan  # tensors + scratch together (the arena arenalens planned)
    lower_bound: int  # no plan of this order can be smaller (shared bytes counted when allowed)
    predicted_head: int  # the replica's head on the rewritten model (the build planned for)
    required_bytes: int  # the minimal kTensorArenaSize of the rewritten model, on every size build
    offline: OfflinePlan
    model: Model  # the rewritten model's IR (new order, offline plan)
    disjoint_lower_bound: int = 0  # the busiest step of this order when nothing is shared
    overlaps: tuple[OverlapPair, ...] = ()  # overlaps the plan was allowed
    shared: tuple[OverlapPair, ...] = ()  # those whose buffers really share bytes in the plan
    # The minimal kTensorArenaSize on each build it must hold on (`OverlapRules.size_builds`).
    required_by_build: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def reproduced(self) -> bool:
        """True when the runtime will use exactly the planned arena."""
        return self.predicted_head == self.plan.arena_size

    @property
    def needs_proof(self) -> bool:
        """True when the plan relies on a kernel's access order (aliases or shared bytes)."""
        return bool(self.aliases or self.shared)


def checked_validity(
    candidate: Candidate, rules: OverlapRules, source: str
) -> tuple[KernelPath, ...]:
    """The code paths the candidate's plan is right on, by the independent validity check of
    every shared byte; PlanError when that misses a path the plan was made for."""
    if not (candidate.shared or candidate.aliases):
        return ()
    valid = tflm_runtime().valid_paths(candidate.model, ALL_PATHS)
    missing = [path for path in rules.paths if path not in valid and path.has_rules]
    # In-place aliases too: an elementwise kernel another library replaces (ESP-NN's ADD) may
    # have no access order that allows writing over its input.
    if missing:
        raise PlanError(
            f"{source}: the plan '{candidate.label}' was made for {rules.title} but its shared "
            f"bytes fail the check on {paths_text(missing)}"
        )
    return valid


def record_for(
    candidate: Candidate,
    valid: Sequence[KernelPath],
    proven: Sequence[str],
    *,
    split_input_shapes: tuple[tuple[int, ...], ...] = (),
) -> PlanRecord:
    """The record written next to the candidate's plan (with the input shapes a split was made
    at, when the model is split)."""
    from arenalens import __version__  # noqa: PLC0415 - the package imports this module

    shares = bool(candidate.shared or candidate.aliases)
    return PlanRecord(
        version=PLAN_RECORD_VERSION,
        plan_sha256=plan_digest(encode_offline_plan(candidate.offline)),
        valid_for=tuple(path.name for path in sorted_paths(valid)) if shares else (EVERY_BUILD,),
        proven=tuple(proven),
        writer=f"arenalens {__version__}",
        split_input_shapes=split_input_shapes,
    )


def prove_candidate(
    original: bytes,
    candidate: Candidate,
    model: Model,
    build: Build = HOST,
    *,
    base: bytes | None = None,
    with_plan: bool = True,
) -> str | None:
    """Run the candidate (written over its model: the original or its split) on real TFLM (the
    x86-64 wheel) against the original over several seeds → None when bit-exact (and, when the
    build is the wheel, with the predicted head), else why not. Without `with_plan`, `base` (the
    split model) runs with TFLM's own plan: a split proven apart from a plan the wheel's kernels
    would compute wrong."""
    unplanned = original if base is None else base
    rewritten = rewrite(candidate, None) if with_plan else unplanned
    for proof_seed in PROOF_SEEDS:
        proof = tflm_runtime().prove_outputs(original, rewritten, model, seed=proof_seed)
        if not proof.identical:
            return f"seed {proof_seed}: {proof.detail}"
        same_build = tflm_runtime().is_installed_wheel(build) and with_plan
        if (
            same_build
            and proof.original_head is not None
            and (proof.new_head != candidate.predicted_head)
        ):
            return f"real head {proof.new_head} instead of the predicted {candidate.predicted_head}"
    return None


def relied_on(candidate: Candidate, *, split: bool = False, with_plan: bool = True) -> str:
    parts = ["operators split"] if split else []
    if not with_plan:
        parts.append("with TFLM's own plan: the written one is not right on these kernels")
    else:
        if candidate.aliases:
            parts.append(f"{len(candidate.aliases)} in-place aliases")
        if candidate.shared:
            opcodes = sorted({p.opcode for p in candidate.shared})
            parts.append(f"{len(candidate.shared)} overlaps: {', '.join(opcodes)}")
    return "; ".join(parts) + f"; {len(PROOF_SEEDS)} seeds"


def check_written(
    data: bytes, candidate: Candidate, source: str, build: Build, record: PlanRecord | None
) -> None:
    """Read the written bytes back: same plan and record, same predicted head (guards the
    rewriter)."""
    written = load_model(data)
    if written.offline_plan != candidate.offline or written.plan_record != record:
        raise PlanError(f"{source}: the rewritten file does not carry the planned offsets")
    micro = tflm_runtime()
    arena = micro.arenas(written, build=build)[0]
    head = run_planner(arena.runtime_planner, arena.problem).arena_size
    if head != candidate.predicted_head:
        raise PlanError(
            f"{source}: the rewritten file predicts a head of {format_bytes_exact(head)}, "
            f"not the planned {format_bytes_exact(candidate.predicted_head)}"
        )


def rewrite(candidate: Candidate, record: PlanRecord | None) -> bytes:
    """The model's file with the candidate's order, plan and `record`, and the tensor shapes the
    plan is for (an offline plan belongs to its shapes: `--input-shape`'s are written into the
    file)."""
    orders = {
        subgraph: tuple(order)
        for subgraph, order in candidate.schedule.orders.items()
        if tuple(order) != tuple(range(len(order)))
    }
    return rewrite_model(
        candidate.model.data,
        operator_orders=orders,
        offline_plan=candidate.offline,
        plan_record=record,
        tensor_shapes=shape_changes(candidate.model),
    )


def plan_candidates(
    model: Model,
    schedule: Schedule,
    aliases: tuple[Alias, ...],
    *,
    label: str,
    planner: str,
    effort: float,
    time_limit_s: float | None,
    seed: int,
    overlap_rules: OverlapRules | None = None,
    build: Build = HOST,
    size_builds: Sequence[Build] = (),
) -> list[Candidate]:
    """The pinned-scratch and free plans of one (order, aliases[, overlaps]) choice around each
    size build's scratch, each judged by the replica on every size build (its scratch requests
    placed online around the offline tensors); the head is the build planned for's."""
    micro = tflm_runtime()
    found: list[Candidate] = []
    seen: set[OfflinePlan] = set()
    for planned_for in size_builds or (build,):
        arena = micro.arenas(model, build=planned_for)[0]
        choice = label
        if aliases:
            arena = merge_aliases(arena, aliases)
            choice = f"{choice}, in-place ({len(aliases)} aliases)"
        pairs: tuple[OverlapPair, ...] = ()
        if overlap_rules is not None:
            pairs = micro.overlaps(model, arena, paths=overlap_rules.paths)
            if not pairs:
                return []
            arena = with_overlaps(arena, pairs)
            choice = f"{choice}, overlaps ({len(pairs)} allowed, {overlap_rules.title})"
        if len(size_builds) > 1:
            choice = f"{choice}, around {planned_for.name} scratch"
        problem = replace(arena.problem, alignment=micro.data_alignment, order=())
        variants: list[tuple[str, Problem]] = [("pinned scratch", pin_scratch(arena, problem))]
        if any(p.kind is BufferKind.SCRATCH for p in arena.buffers.values()):
            variants.append(("free", problem))
        for variant, variant_problem in variants:
            plan = run_planner(
                planner, variant_problem, effort=effort, seed=seed, **cap_setting(time_limit_s)
            )
            offline = micro.offline_plan(model, arena, plan.offsets)
            if offline in seen:
                continue
            seen.add(offline)
            rewritten = replace(model, offline_plan=offline)
            final_arena = micro.arenas(rewritten, build=build)[0]
            predicted = run_planner(final_arena.runtime_planner, final_arena.problem).arena_size
            by_build = required_by_build(rewritten, size_builds or (build,))
            found.append(
                Candidate(
                    label=f"{choice}, {planner}, {variant}",
                    schedule=schedule,
                    aliases=aliases,
                    plan=plan,
                    lower_bound=problem.lower_bound(),
                    predicted_head=predicted,
                    required_bytes=max(by_build.values()),
                    offline=offline,
                    model=rewritten,
                    disjoint_lower_bound=problem.disjoint_lower_bound(),
                    overlaps=pairs,
                    shared=shared_pairs(arena, pairs, plan.offsets),
                    required_by_build=MappingProxyType(by_build),
                )
            )
    return found


def pin_scratch(arena: ArenaProblem, problem: Problem) -> Problem:
    """Fix every scratch buffer where TFLM's greedy puts it when tensors stay out of its way.

    That is the replica run on the scratch buffers alone (same ids, so the same processing
    order): first fit from offset 0 among the scratch buffers live at a common step.
    """
    scratch_ids = {p.id for p in arena.buffers.values() if p.kind is BufferKind.SCRATCH}
    if not scratch_ids:
        return problem
    scratch = tuple(b for b in problem.buffers if b.id in scratch_ids)
    placed = run_planner(arena.runtime_planner, Problem(scratch, alignment=1)).offsets
    buffers: list[Buffer] = [
        b._replace(fixed_offset=placed[b.id]) if b.id in scratch_ids else b for b in problem.buffers
    ]
    return replace(problem, buffers=tuple(buffers))


def required_by_build(model: Model, builds: Sequence[Build]) -> dict[str, int]:
    """The number to declare on each build, by name."""
    return {b.name: required_bytes(model, b) for b in builds}


def required_bytes(model: Model, build: Build = HOST) -> int:
    """Model → the minimal kTensorArenaSize TFLM needs for it on a build (its offline plan
    honoured)."""
    return analyze(model, runtime="tflm", build=build).budget.required_bytes
