"""Optimization: model → a rewritten model that makes the real TFLM runtime use a smaller head.

The output carries TFLM's `OfflineMemoryAllocation` metadata (docs/runtime-rules.md §T9)
with an offset for every planned tensor, optionally a new operator order (`--reorder`) and
in-place aliases (`--inplace`). TFLM places offline tensors first and then its kernel scratch
buffers *online*, by its greedy first fit around them (§T6), so a plan that ignores scratch can
make the real head larger than the runtime's own. Tensors and scratch are therefore planned
together, and every candidate is judged by what TFLM will really do with it: the `tflm_greedy`
replica run on the rewritten model (offline tensors fixed, scratch online).

Candidates, for each operator order and alias choice:

* **pinned scratch**: the scratch buffers are fixed where the replica will put them when the
  tensors avoid them (the replica run on the scratch buffers alone: first fit from offset 0), and
  the planner places the tensors around them. The replica then reproduces the plan exactly,
  because every gap below a scratch buffer is smaller than it with or without the tensors.
* **free**: tensors and scratch planned with no constraint; kept only if the replica's head,
  which may differ from the plan, is smaller.

Candidates are judged by the number the user declares, the minimal `kTensorArenaSize` of the
rewritten model (head + tail + setup, `declared.py`): an offline plan can shrink the head and
grow the tail or the setup peak. The smallest wins (ties: smaller head, then fewer changes); a
candidate must not grow the head and must declare strictly fewer bytes than the original. If none
does, there is nothing to write: `optimize` never makes the number to declare larger.

With `overlap`, each choice is planned a second time with the allowed overlaps of its head arena
(`runtimes.tflm.overlap`: an operator's output may start a kernel-specific distance below an input
that dies there). TFLM never checks offline offsets, so it runs such a plan as written, and what
is safe depends on the kernels the firmware links (`runtimes.tflm.kernel_paths`): unless the user
names the kernel library, overlaps must hold on every library the chip may run (on Cortex-M the
reference kernels and CMSIS-NN on all three code paths), and the number to declare must hold on
each of the core's builds (each places its own scratch buffers around the plan's tensors). The
written model records which code paths its plan is right on (`PlanRecord`, read back by every
command). A candidate with in-place aliases or overlaps is kept only if the real TFLM interpreter
(the x86-64 wheel, reference kernels) computes bit-identical outputs with it on random inputs
(several seeds), when the plan is valid for the reference kernels; otherwise the next candidate is
tried, down to the disjoint plans.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind
from arenalens.analysis.inplace import Alias, find_aliases, merge_aliases
from arenalens.analysis.overlap_pairs import OverlapPair, shared_pairs, with_overlaps
from arenalens.analysis.placeholders import placeholder_inputs
from arenalens.builds.build import HOST, Build, as_build
from arenalens.builds.kernel_paths import (
    REFERENCE_PATH,
    KernelPath,
    OverlapRules,
    as_overlap_rules,
    paths_text,
    sorted_paths,
)
from arenalens.cannot_run import group_refusals
from arenalens.errors import ModelError, PlanError
from arenalens.ir import Model, OfflinePlan, PlanRecord
from arenalens.pipeline import analyze
from arenalens.plan_validity import plan_conflicts
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.problem import Buffer, Plan, Problem
from arenalens.planning.registry import run_planner
from arenalens.reorder.registry import ReorderResult
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.reorder.schedule import FILE_ORDER, Schedule, apply_schedule
from arenalens.runtimes import Obstacle, get_runtime
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import offline_plan_for
from arenalens.runtimes.tflm.kernels.registry import inplace_of
from arenalens.runtimes.tflm.overlap import arena_overlaps
from arenalens.runtimes.tflm.probe import is_installed_wheel
from arenalens.runtimes.tflm.proof import OutputProof, prove_outputs
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.plan_record import EVERY_BUILD, PLAN_RECORD_VERSION, plan_digest
from arenalens.tflite.reader import encode_offline_plan, load_model
from arenalens.tflite.rewriter import model_bytes, rewrite_model, shape_changes
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the split package loads only with --split
    from arenalens.split.outcome import Splitting
    from arenalens.targets import Target

# Seeds of random inputs a candidate with aliases or overlaps must survive on the real runtime.
PROOF_SEEDS = (0, 1, 2)
# The real interpreter a proof runs on, named in every claim it backs.
WHEEL = "x86-64 tflite_micro wheel (reference kernels)"
# Planning time for each split model the split search measures.
SPLIT_MEASURE_SECONDS = 2.0


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


@dataclass(frozen=True)
class Optimization:
    """The outcome: original and new heads, the chosen candidate, the new file's bytes."""

    source: str
    build: Build  # the TFLM build planned for: its scratch requests are in the plan
    original_head: int  # TFLM's own plan of the original model (replica)
    original_required_bytes: int  # the original model's minimal kTensorArenaSize
    original_lower_bound: int
    chosen: Candidate | None  # None: nothing beat the original; nothing to write
    candidates: tuple[Candidate, ...]
    data: bytes
    reorder: ReorderResult | None = None
    notes: tuple[str, ...] = ()
    overlap: bool = False  # overlaps were allowed
    rules: OverlapRules | None = None  # the code paths overlaps hold on, the builds sizes hold on
    # The code paths the written plan computes the right outputs on (empty when it shares no
    # bytes: right on every build), and each check on a real runtime that backs it.
    valid_for: tuple[KernelPath, ...] = ()
    proven: tuple[str, ...] = ()
    original_required_by_build: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({})
    )
    split: Splitting | None = None  # with --split: what was cut (the plan is the split model's)
    runs: bool = True  # False: the build cannot run the model; nothing was planned
    # The model as it runs before optimizing (its shapes, no offline plan that would corrupt
    # them): what the real runtime compares the written file with.
    original_data: bytes = b""
    # The model's own offline plan would corrupt tensors at these shapes (or on this build):
    # the written file replaces it, with TFLM's own plan when nothing beats that.
    replaces_plan: bool = False

    @property
    def writes(self) -> bool:
        """True when there is a file worth writing: a smaller plan, or a plan that holds where
        the model's own would corrupt tensors."""
        return self.runs and (self.chosen is not None or self.replaces_plan)

    @property
    def disjoint_head(self) -> int:
        """The best head without shared bytes (what `optimize` gives without --overlap)."""
        heads = [c.predicted_head for c in self.candidates if not c.shared]
        return min([self.original_head, *heads])

    @property
    def new_head(self) -> int:
        """The head TFLM will report on the written model."""
        return self.chosen.predicted_head if self.chosen is not None else self.original_head

    @property
    def new_required_bytes(self) -> int:
        """The minimal kTensorArenaSize of the written model."""
        if self.chosen is None:
            return self.original_required_bytes
        return self.chosen.required_bytes

    @property
    def saved_bytes(self) -> int:
        """Bytes of the number to declare (kTensorArenaSize) given back."""
        return self.original_required_bytes - self.new_required_bytes


def optimize_model(
    source: Model | str | os.PathLike[str] | bytes,
    *,
    planner: str = "best",
    reorder: bool = False,
    inplace: bool = False,
    overlap: bool | OverlapRules = False,
    time_limit_s: float = 10.0,
    seed: int = 0,
    reorderer: str = "auto",
    prove_inplace: bool = True,
    build: Build | str | None = None,
    split: bool = False,
    target: Target | None = None,
    kernels: OverlapRules | str | None = None,
) -> Optimization:
    """Model → Optimization with the rewritten file's bytes (the input is never modified).

    `build` is the TFLM build whose kernel scratch buffers the plan makes room for (None: the
    x86-64 wheel): an offline plan holds only with the scratch requests it was planned around.
    The build also says whose access orders overlaps respect (`builds.kernel_paths.overlap_rules`):
    its library when the user named it (`Build.kernels_named_by`: "cortex-m7/cmsis-nn"), else
    every library the chip may run, and the number to declare then holds on each of the core's
    builds. `overlap=True` plans overlaps by those rules; `overlap=OverlapRules` by others (the
    wheel with CMSIS-NN's code paths: `overlap_rules(HOST, "cmsis-nn")`). `kernels` (a library's
    name, or rules) is deprecated: name the library on the build. With `inplace` or `overlap`, a
    plan that relies on a kernel's access order is kept only if the real TFLM runtime computes
    bit-identical outputs with it (`prove_inplace`), when it is valid for the reference kernels
    the runtime runs; without the runtime that raises RuntimeUnavailableError.
    With `split`, large activations may first be computed in parts by stock operators
    (`arenalens.split`), kept only for what they save on the build and, like an overlap, only
    if the real runtime computes bit-identical outputs (the split model alone, with TFLM's own
    plan, when the written plan is not right on the reference kernels the runtime runs).
    """
    model = source if isinstance(source, Model) else load_model(source)
    chosen_build = as_build(build)
    if kernels is not None:
        warnings.warn(
            "optimize_model(kernels=...) is deprecated: name the kernel library on the build "
            "(build='cortex-m7/cmsis-nn') or pass overlap=OverlapRules",
            DeprecationWarning,
            stacklevel=2,
        )
    if isinstance(overlap, OverlapRules):
        rules = overlap
    else:
        rules = as_overlap_rules(kernels, chosen_build)
    return _optimize(
        model,
        rules=rules,
        overlap=bool(overlap),
        planner=planner,
        reorder=reorder,
        inplace=inplace,
        time_limit_s=time_limit_s,
        seed=seed,
        reorderer=reorderer,
        prove_inplace=prove_inplace,
        build=chosen_build,
        split=split,
        target=target,
    )


def _optimize(
    model: Model,
    *,
    rules: OverlapRules,
    overlap: bool,
    planner: str,
    reorder: bool,
    inplace: bool,
    time_limit_s: float,
    seed: int,
    reorderer: str,
    prove_inplace: bool,
    build: Build,
    split: bool,
    target: Target | None = None,
) -> Optimization:
    """`optimize_model` with the overlap rules settled (they also say which builds the number to
    declare must hold on)."""
    chosen_build = build
    size_builds = _size_builds(rules, chosen_build)
    refuse_placeholder_inputs(model)
    # The model as it will run: its file, with the shapes `--input-shape` gave it and without an
    # offline plan that would corrupt tensors at them (the outputs are compared against this).
    conflicts = plan_conflicts(model, chosen_build)
    if conflicts:
        model = replace(model, offline_plan=None, plan_record=None)
    original_bytes = model_bytes(model, drop_offline_plan=bool(conflicts))
    cannot_run = support(model, chosen_build).obstacles
    if cannot_run:
        return _nothing_to_do(model, chosen_build, cannot_run)
    tflm = get_runtime("tflm")
    original_arena = tflm.arenas(model, build=chosen_build)[0]
    original_head = run_planner(original_arena.runtime_planner, original_arena.problem).arena_size
    notes: list[str] = []
    splitting: Splitting | None = None
    working = model  # the model planned: the original, or its split
    if split:
        splitting = _split(
            model,
            planner=planner,
            overlap=overlap,
            inplace=inplace,
            rules=rules,
            seed=seed,
            build=chosen_build,
        )
        if splitting.model is None:
            notes.append(splitting.note)
        working = splitting.model if splitting.model is not None else model
    base = replace(working, offline_plan=None, plan_record=None)
    schedules: list[tuple[str, Schedule]] = [("file order", FILE_ORDER)]
    reordered: ReorderResult | None = None
    if reorder:
        schedule, reordered = reorder_for_runtime(
            base,
            "tflm",
            reorderer=reorderer,
            time_limit_s=min(5.0, time_limit_s),
            build=chosen_build,
        )
        if not schedule.is_file_order():
            schedules.append(("reordered", schedule))
        else:
            notes.append("reordering found no order with a lower peak than the file order")
    choices: list[tuple[str, Schedule, Model, tuple[Alias, ...]]] = []
    for schedule_label, schedule in schedules:
        scheduled = apply_schedule(base, schedule)
        choices.append((schedule_label, schedule, scheduled, ()))
        if inplace:
            found = find_aliases(scheduled, inplace_of)
            if found:
                choices.append((schedule_label, schedule, scheduled, found))
            else:
                notes.append(f"{schedule_label}: no operator qualifies for in-place aliasing")
    variants = 2 * len(choices) * (2 if overlap else 1) * len(size_builds)
    # The time limit covers the whole run: each choice plans up to two variants per size build
    # (x2 with overlaps).
    per_plan_s = max(1.0, time_limit_s / variants)
    candidates: list[Candidate] = []
    for schedule_label, schedule, scheduled, aliases in choices:
        for with_overlap in (False, True) if overlap else (False,):
            candidates.extend(
                _candidates(
                    scheduled,
                    schedule,
                    aliases,
                    label=schedule_label,
                    planner=planner,
                    time_limit_s=per_plan_s,
                    seed=seed,
                    overlap_rules=rules if with_overlap else None,
                    build=chosen_build,
                    size_builds=size_builds,
                )
            )
    if overlap:
        notes.extend(_overlap_notes(rules, candidates))
    if conflicts:
        notes.append(
            "the model's offline plan would corrupt tensors at these shapes or on this build: "
            "compared with TFLM's own plan, and replaced"
        )
    original_by_build = _required_by_build(model, size_builds)
    original_required = max(original_by_build.values())
    eligible = sorted(
        (
            c
            for c in candidates
            if c.predicted_head <= original_head and c.required_bytes < original_required
        ),
        key=lambda c: (c.required_bytes, c.predicted_head, c.needs_proof, candidates.index(c)),
    )
    placed = None
    if target is not None and len(target.banks) > 1:
        from arenalens.placement_choice import order_by_placement  # noqa: PLC0415 - banks only

        placed = order_by_placement(eligible, chosen_build, target)
    if placed is not None:
        eligible, placement_notes = placed
        notes.extend(placement_notes)
    chosen: Candidate | None = None
    split_used = working is not model
    valid: tuple[KernelPath, ...] = ()
    proven: list[str] = []
    for candidate in eligible:
        valid = _checked_validity(candidate, rules, model.source)
        if (candidate.needs_proof or split_used) and prove_inplace:
            # The wheel runs the reference kernels: a plan not right on them is not run there
            # (a split model then runs with TFLM's own plan, which proves the split alone).
            with_plan = not candidate.needs_proof or REFERENCE_PATH in valid
            if not with_plan:
                notes.append(
                    f"{candidate.label}: valid for {paths_text(valid)} by their kernels' "
                    f"access order; not run here (the {WHEEL} computes other outputs with it)"
                )
            if with_plan or split_used:
                proof = _prove_candidate(
                    original_bytes,
                    candidate,
                    model,
                    chosen_build,
                    base=bytes(working.data),
                    with_plan=with_plan,
                )
                if proof is not None:
                    notes.append(f"{candidate.label}: not kept on real TFLM ({proof}); dropped")
                    continue
                relied = _relied_on(candidate, split=split_used, with_plan=with_plan)
                proven.append(f"{WHEEL}: bit-identical outputs ({relied})")
                notes.append(f"{candidate.label}: proven bit-exact on the {WHEEL} ({relied})")
        chosen = candidate
        break
    if split_used and chosen is None:
        # No plan of the split model was kept: optimize the model as given instead.
        fallback = _optimize(
            model,
            rules=rules,
            overlap=overlap,
            planner=planner,
            reorder=reorder,
            inplace=inplace,
            time_limit_s=time_limit_s,
            seed=seed,
            reorderer=reorderer,
            prove_inplace=prove_inplace,
            build=chosen_build,
            split=False,
            target=target,
        )
        dropped = "split: not kept (no plan of the split model was kept); the model as given"
        return replace(fallback, notes=(*notes, dropped, *fallback.notes))
    record = None if chosen is None else _record(chosen, valid, proven)
    data = original_bytes if chosen is None else _rewrite(chosen, record)
    if chosen is not None:
        _check_written(data, chosen, model.source, chosen_build, record)
    if chosen is None and conflicts:
        notes.append(
            "no candidate declares fewer bytes than the runtime's own plan: written without an "
            "offline plan (TFLM plans it at setup, correctly at these shapes)"
        )
    elif chosen is None:
        notes.append(
            "no candidate declares fewer bytes than the runtime's own plan: nothing to write"
        )
    return Optimization(
        source=model.source,
        build=chosen_build,
        original_head=original_head,
        original_required_bytes=original_required,
        original_lower_bound=sound_lower_bound(original_arena.problem),
        chosen=chosen,
        candidates=tuple(candidates),
        data=data,
        reorder=reordered,
        notes=tuple(notes),
        overlap=overlap,
        rules=rules,
        valid_for=valid if chosen is not None else (),
        proven=tuple(proven),
        original_required_by_build=MappingProxyType(original_by_build),
        split=splitting,
        original_data=original_bytes,
        replaces_plan=bool(conflicts),
    )


def _size_builds(rules: OverlapRules, build: Build) -> tuple[Build, ...]:
    """The builds the number to declare must hold on, the build planned for first."""
    others = tuple(b for b in rules.size_builds if b.name != build.name)
    return (build, *others)


def _required_by_build(model: Model, builds: Sequence[Build]) -> dict[str, int]:
    return {b.name: required_bytes(model, b) for b in builds}


def _overlap_notes(rules: OverlapRules, candidates: Sequence[Candidate]) -> list[str]:
    """What the overlaps were judged by, and why none fitted when none did."""
    notes = [f"overlaps hold on: {rules.title} ({rules.why})"]
    if rules.unknown:
        unknown = ", ".join(path.title for path in rules.unknown)
        notes.append(
            f"no overlap is safe on {unknown}: arenalens does not know its access order "
            "(give --kernels reference if the firmware links TFLM's reference kernels)"
        )
    elif not any(c.overlaps for c in candidates):
        notes.append("no operator may write its output over a dying input (no overlap rule fits)")
    return notes


def _checked_validity(
    candidate: Candidate, rules: OverlapRules, source: str
) -> tuple[KernelPath, ...]:
    """The code paths the candidate's plan is right on, by the independent validity check of
    every shared byte; PlanError when that misses a path the plan was made for."""
    from arenalens.runtimes.tflm.plan_validity import (  # noqa: PLC0415 - with overlaps only
        ALL_PATHS,
        valid_paths,
    )

    if not (candidate.shared or candidate.aliases):
        return ()
    valid = valid_paths(candidate.model, ALL_PATHS)
    missing = [path for path in rules.paths if path not in valid and path.has_rules]
    if missing and candidate.shared:
        raise PlanError(
            f"{source}: the plan '{candidate.label}' was made for {rules.title} but its shared "
            f"bytes fail the check on {paths_text(missing)}"
        )
    return valid


def _record(candidate: Candidate, valid: Sequence[KernelPath], proven: Sequence[str]) -> PlanRecord:
    """The record written next to the candidate's plan."""
    from arenalens import __version__  # noqa: PLC0415 - the package imports this module

    shares = bool(candidate.shared or candidate.aliases)
    return PlanRecord(
        version=PLAN_RECORD_VERSION,
        plan_sha256=plan_digest(encode_offline_plan(candidate.offline)),
        valid_for=tuple(path.name for path in sorted_paths(valid)) if shares else (EVERY_BUILD,),
        proven=tuple(proven),
        writer=f"arenalens {__version__}",
    )


def _split(
    model: Model,
    *,
    planner: str,
    overlap: bool,
    inplace: bool,
    rules: OverlapRules,
    seed: int,
    build: Build,
) -> Splitting:
    """The split of `model` that lowers the number `optimize` declares for it on the build."""
    from arenalens.split.outcome import split_for_build  # noqa: PLC0415 - only with --split

    def measure(candidate: Model) -> int:
        return _optimize(
            candidate,
            rules=rules,
            overlap=overlap,
            planner=planner,
            reorder=False,
            inplace=inplace,
            time_limit_s=SPLIT_MEASURE_SECONDS,
            seed=seed,
            reorderer="auto",
            prove_inplace=False,
            build=build,
            split=False,
        ).new_required_bytes

    return split_for_build(model, measure, overlaps=(build, rules.paths) if overlap else None)


def refuse_placeholder_inputs(model: Model) -> None:
    """ModelError when an input's size is unknown (-1 in its shape_signature): an offline plan
    holds for the tensor sizes it was made for only, so the size must be named."""
    placeholders = placeholder_inputs(model)
    if not placeholders:
        return
    tensor = placeholders[0]
    signature = "x".join(str(d) for d in tensor.shape_signature)
    stored = "x".join(str(d) for d in tensor.shape)
    raise ModelError(
        model.source,
        f"input '{tensor.name}' has unknown dimensions (shape_signature {signature}; {stored} is "
        "a stored placeholder), and an offline plan holds only for the sizes it was made for: "
        f"give the size to plan for with --input-shape '{tensor.name}=SHAPE'",
    )


def _nothing_to_do(model: Model, build: Build, obstacles: Sequence[Obstacle]) -> Optimization:
    """The outcome for a model the build cannot run: nothing planned, nothing written."""
    refusals = group_refusals(model, obstacles)
    return Optimization(
        source=model.source,
        build=build,
        original_head=0,
        original_required_bytes=0,
        original_lower_bound=0,
        chosen=None,
        candidates=(),
        data=bytes(model.data),
        original_data=bytes(model.data),
        notes=tuple(
            f"TFLM cannot run this model on the {build.name} build: {refusal.text()}; {refusal.fix}"
            for refusal in refusals
        ),
        runs=False,
    )


def _prove_candidate(
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
    rewritten = _rewrite(candidate, None) if with_plan else unplanned
    for proof_seed in PROOF_SEEDS:
        proof = prove_outputs(original, rewritten, model, seed=proof_seed)
        if not proof.identical:
            return f"seed {proof_seed}: {proof.detail}"
        same_build = is_installed_wheel(build) and with_plan
        if (
            same_build
            and proof.original_head is not None
            and (proof.new_head != candidate.predicted_head)
        ):
            return f"real head {proof.new_head} instead of the predicted {candidate.predicted_head}"
    return None


def _relied_on(candidate: Candidate, *, split: bool = False, with_plan: bool = True) -> str:
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


def _check_written(
    data: bytes, candidate: Candidate, source: str, build: Build, record: PlanRecord | None
) -> None:
    """Read the written bytes back: same plan and record, same predicted head (guards the
    rewriter)."""
    written = load_model(data)
    if written.offline_plan != candidate.offline or written.plan_record != record:
        raise PlanError(f"{source}: the rewritten file does not carry the planned offsets")
    tflm = get_runtime("tflm")
    arena = tflm.arenas(written, build=build)[0]
    head = run_planner(arena.runtime_planner, arena.problem).arena_size
    if head != candidate.predicted_head:
        raise PlanError(
            f"{source}: the rewritten file predicts a head of {format_bytes_exact(head)}, "
            f"not the planned {format_bytes_exact(candidate.predicted_head)}"
        )


def _rewrite(candidate: Candidate, record: PlanRecord | None) -> bytes:
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


def _candidates(
    model: Model,
    schedule: Schedule,
    aliases: tuple[Alias, ...],
    *,
    label: str,
    planner: str,
    time_limit_s: float,
    seed: int,
    overlap_rules: OverlapRules | None = None,
    build: Build = HOST,
    size_builds: Sequence[Build] = (),
) -> list[Candidate]:
    """The pinned-scratch and free plans of one (order, aliases[, overlaps]) choice around each
    size build's scratch, each judged by the replica on every size build (its scratch requests
    placed online around the offline tensors); the head is the build planned for's."""
    tflm = get_runtime("tflm")
    found: list[Candidate] = []
    seen: set[OfflinePlan] = set()
    for planned_for in size_builds or (build,):
        arena = tflm.arenas(model, build=planned_for)[0]
        choice = label
        if aliases:
            arena = merge_aliases(arena, aliases)
            choice = f"{choice}, in-place ({len(aliases)} aliases)"
        pairs: tuple[OverlapPair, ...] = ()
        if overlap_rules is not None:
            pairs = arena_overlaps(model, arena, paths=overlap_rules.paths)
            if not pairs:
                return []
            arena = with_overlaps(arena, pairs)
            choice = f"{choice}, overlaps ({len(pairs)} allowed, {overlap_rules.title})"
        if len(size_builds) > 1:
            choice = f"{choice}, around {planned_for.name} scratch"
        problem = replace(arena.problem, alignment=ARENA_ALIGNMENT, order=())
        variants: list[tuple[str, Problem]] = [("pinned scratch", pin_scratch(arena, problem))]
        if any(p.kind is BufferKind.SCRATCH for p in arena.buffers.values()):
            variants.append(("free", problem))
        for variant, variant_problem in variants:
            plan = run_planner(planner, variant_problem, time_limit_s=time_limit_s, seed=seed)
            offline = offline_plan_for(model, arena, plan.offsets)
            if offline in seen:
                continue
            seen.add(offline)
            rewritten = replace(model, offline_plan=offline)
            final_arena = tflm.arenas(rewritten, build=build)[0]
            predicted = run_planner(final_arena.runtime_planner, final_arena.problem).arena_size
            by_build = _required_by_build(rewritten, size_builds or (build,))
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


def required_bytes(model: Model, build: Build = HOST) -> int:
    """Model → the minimal kTensorArenaSize TFLM needs for it on a build (its offline plan
    honoured)."""
    return analyze(model, runtime="tflm", build=build).budget.required_bytes


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
        replace(b, fixed_offset=placed[b.id]) if b.id in scratch_ids else b for b in problem.buffers
    ]
    return replace(problem, buffers=tuple(buffers))


def check_options(planner: str, reorderer: str) -> None:
    """Raise UsageError early for unknown planner / reorderer names."""
    from arenalens.planning.registry import get_planner  # noqa: PLC0415
    from arenalens.reorder.registry import get_reorderer  # noqa: PLC0415

    get_planner(planner)
    get_reorderer(reorderer)


__all__: Sequence[str] = [
    "Candidate",
    "Optimization",
    "OutputProof",
    "check_options",
    "offline_plan_for",
    "optimize_model",
    "pin_scratch",
    "prove_outputs",
    "required_bytes",
]
