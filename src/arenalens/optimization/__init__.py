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
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.inplace import Alias, find_aliases
from arenalens.analysis.placeholders import placeholder_inputs, resized_inputs
from arenalens.builds.build import Build, as_build
from arenalens.builds.kernel_paths import (
    REFERENCE_PATH,
    KernelPath,
    OverlapRules,
    as_overlap_rules,
    paths_text,
)
from arenalens.cannot_run import group_refusals
from arenalens.effort import OPTIMIZE_EFFORT
from arenalens.errors import ModelError, PlanError, UsageError
from arenalens.ir import Model, OfflinePlan
from arenalens.optimization.candidates import (
    WHEEL,
    Candidate,
    check_written,
    checked_validity,
    pin_scratch,
    plan_candidates,
    prove_candidate,
    record_for,
    relied_on,
    required_by_build,
    required_bytes,
    rewrite,
)
from arenalens.plan_validity import SPLIT_SIZE, input_shapes, plan_conflicts
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.registry import run_planner
from arenalens.reorder.registry import ReorderResult
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.reorder.schedule import FILE_ORDER, Schedule, apply_schedule
from arenalens.runtimes import Obstacle
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.verification import OutputProof
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import model_bytes

if TYPE_CHECKING:  # the split package loads only with --split
    from arenalens.split.outcome import Splitting
    from arenalens.targets import Target

# Search effort (`arenalens.effort`) for each split model the split search measures.
SPLIT_MEASURE_EFFORT = 2.0


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
    # The model before optimizing at its shapes, with TFLM's own plan: what the real runtime
    # compares the written file with (its offline plan may be right on other kernels only).
    original_data: bytes = b""
    # The model's own offline plan would corrupt tensors at these shapes (or on this build):
    # the written file replaces it, with TFLM's own plan when nothing beats that.
    replaces_plan: bool = False
    # The model was given at input shapes its file does not store (--input-shape): TFLM runs the
    # shapes a file stores (it cannot resize a tensor), so the file at these shapes is the one
    # to flash, worth writing even when no plan saves a byte.
    resized: bool = False

    @property
    def writes(self) -> bool:
        """True when there is a file worth writing: a smaller plan, a plan that holds where the
        model's own would corrupt tensors, or the model at the input shapes it was given."""
        return self.runs and (self.chosen is not None or self.replaces_plan or self.resized)

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
        """The minimal kTensorArenaSize of the written model: without an offline plan (none
        chosen), TFLM plans it at setup on each build, so the build's own (what `check` of the
        file on it declares), not the largest over the libraries a rewrite must hold on."""
        if self.chosen is None:
            return self.original_required_by_build.get(
                self.build.name, self.original_required_bytes
            )
        return self.chosen.required_bytes

    @property
    def missing_extra(self) -> str:
        """The install command of the extra whose exact search could lower the number written
        (`Plan.missing_extra`: OR-Tools), else '': the written plan went without it above its
        lower bound, or another candidate did whose plan at its bound would declare less (with
        the extra that candidate may win: branchy_inception on cortex-m7 --overlap wrote its
        reorder plan, 29,504 B, without it and an overlap plan, 25,728 B, with it)."""
        written = self.new_required_bytes
        for candidate in self.candidates:
            plan = candidate.plan
            if not plan.missing_extra:
                continue
            bound = max(plan.bound if plan.bound is not None else 0, candidate.lower_bound)
            if (
                candidate is self.chosen
                or candidate.required_bytes - (plan.arena_size - bound) < written
            ):
                return plan.missing_extra
        return ""

    @property
    def saved_bytes(self) -> int:
        """Bytes of the number to declare (kTensorArenaSize) given back (none without a plan)."""
        if self.chosen is None:
            return 0
        return self.original_required_bytes - self.new_required_bytes


def optimize_model(
    source: Model | str | os.PathLike[str] | bytes,
    *,
    planner: str = "best",
    reorder: bool = False,
    inplace: bool = False,
    overlap: bool | OverlapRules = False,
    effort: float = OPTIMIZE_EFFORT,
    time_limit_s: float | None = None,
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
    `effort` is the whole search's budget (`arenalens.effort`: counted work, so the same input
    writes the same bytes on every machine); `time_limit_s` is an optional wall-clock cap, the one
    setting that can make the result depend on the machine's speed and load (None: no cap).
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
    request = Request(
        rules=rules,
        overlap=bool(overlap),
        planner=planner,
        reorder=reorder,
        inplace=inplace,
        effort=effort,
        time_limit_s=time_limit_s,
        seed=seed,
        reorderer=reorderer,
        prove_inplace=prove_inplace,
        build=chosen_build,
        split=split,
        target=target,
    )
    return _optimize(model, request)


@dataclass(frozen=True)
class Request:
    """What `optimize_model` was asked, settled: the overlap rules (which also say the builds
    the number to declare must hold on) and every setting of the search."""

    rules: OverlapRules
    overlap: bool
    planner: str
    reorder: bool
    inplace: bool
    effort: float
    time_limit_s: float | None
    seed: int
    reorderer: str
    prove_inplace: bool
    build: Build
    split: bool
    target: Target | None = None

    @property
    def size_builds(self) -> tuple[Build, ...]:
        """The builds the number to declare must hold on, the build planned for first."""
        others = tuple(b for b in self.rules.size_builds if b.name != self.build.name)
        return (self.build, *others)


@dataclass(frozen=True)
class _Original:
    """The model as it will run (its file, at the shapes it was given, without an offline plan
    that would corrupt tensors at them: outputs are compared against it) and what TFLM's own
    plan of it needs."""

    model: Model
    data: bytes
    conflicts: bool  # its own offline plan was dropped
    arena: ArenaProblem
    head: int
    required_by_build: Mapping[str, int]

    @property
    def required(self) -> int:
        """The number to declare for it: the largest over the builds it must hold on."""
        return max(self.required_by_build.values())

    @cached_property
    def proof_reference(self) -> bytes:
        """The file whose outputs a candidate must equal on the wheel: the model with TFLM's own
        plan. Its offline plan (say `optimize --overlap --kernels cmsis-nn` wrote it) may be
        right only on kernels the wheel does not run, where it computes other outputs."""
        if self.model.offline_plan is None or self.conflicts:
            return self.data
        return model_bytes(self.model, drop_offline_plan=True)


def _optimize(model: Model, request: Request) -> Optimization:
    """The search, step by step: the model as it runs, its split (with --split), the schedules
    and in-place aliases to try, every candidate plan, the one kept (the smallest that its
    validity check and, where it relies on a kernel's access order, the real runtime accept),
    and the file written."""
    refuse_placeholder_inputs(model)
    conflicts = plan_conflicts(model, request.build)
    for conflict in conflicts:
        if conflict.kind == SPLIT_SIZE:  # no plan makes it the original network again
            raise UsageError(f"{model.source}: {conflict.reason}; {conflict.fix}")
    if conflicts:
        model = replace(model, offline_plan=None, plan_record=None)
    cannot_run = tflm_runtime().support(model, request.build).obstacles
    if cannot_run:
        return _nothing_to_do(model, request.build, cannot_run)
    original = _original(model, request, conflicts=bool(conflicts))
    notes: list[str] = []
    splitting, working = _working_model(model, request, notes)
    choices, reordered = _choices(working, request, notes)
    candidates = _allplan_candidates(choices, request)
    if request.overlap:
        notes.extend(_overlap_notes(request.rules, candidates))
    if conflicts:
        notes.append(
            "the model's offline plan would corrupt tensors at these shapes or on this build: "
            "compared with TFLM's own plan, and replaced"
        )
    eligible = _eligible(candidates, original, request, notes)
    split_used = working is not model
    chosen, valid, proven = _first_kept(
        eligible, original, request, notes, working=working, split_used=split_used
    )
    if split_used and chosen is None:
        # No plan of the split model was kept: optimize the model as given instead.
        fallback = _optimize(model, replace(request, split=False))
        dropped = "split: not kept (no plan of the split model was kept); the model as given"
        return replace(fallback, notes=(*notes, dropped, *fallback.notes))
    split_shapes = input_shapes(working) if split_used else _split_before(model)
    # Only where it decides the write: nothing chosen, no plan to replace.
    resized = chosen is None and not original.conflicts and bool(resized_inputs(model))
    data = _written(
        chosen,
        original,
        request,
        notes,
        valid=valid,
        proven=proven,
        split_shapes=split_shapes,
        resized=resized,
    )
    return Optimization(
        source=model.source,
        build=request.build,
        original_head=original.head,
        original_required_bytes=original.required,
        original_lower_bound=sound_lower_bound(original.arena.problem),
        chosen=chosen,
        candidates=tuple(candidates),
        data=data,
        reorder=reordered,
        notes=tuple(notes),
        overlap=request.overlap,
        rules=request.rules,
        valid_for=valid if chosen is not None else (),
        proven=tuple(proven),
        original_required_by_build=MappingProxyType(dict(original.required_by_build)),
        split=splitting,
        original_data=original.proof_reference,
        replaces_plan=original.conflicts,
        resized=resized,
    )


def _original(model: Model, request: Request, *, conflicts: bool) -> _Original:
    """The model as it runs, and TFLM's own plan of it on every build it must hold on."""
    arena = tflm_runtime().arenas(model, build=request.build)[0]
    return _Original(
        model=model,
        data=model_bytes(model, drop_offline_plan=conflicts),
        conflicts=conflicts,
        arena=arena,
        head=run_planner(arena.runtime_planner, arena.problem).arena_size,
        required_by_build=MappingProxyType(required_by_build(model, request.size_builds)),
    )


def _working_model(
    model: Model, request: Request, notes: list[str]
) -> tuple[Splitting | None, Model]:
    """With --split, the split that lowers the number (the model planned from here on);
    otherwise the model itself."""
    if not request.split:
        return None, model
    splitting = _split(model, request)
    if splitting.model is None:
        notes.append(splitting.note)
        return splitting, model
    return splitting, splitting.model


# One way to run the model: its schedule's label and order, the model in that order, and the
# in-place aliases its plan may use.
_Choice = tuple[str, Schedule, Model, tuple[Alias, ...]]


def _choices(
    working: Model, request: Request, notes: list[str]
) -> tuple[list[_Choice], ReorderResult | None]:
    """The schedules to plan (the file's order; with --reorder, a lower-peak one) and, with
    --inplace, each with the aliases its operators allow."""
    base = replace(working, offline_plan=None, plan_record=None)
    schedules: list[tuple[str, Schedule]] = [("file order", FILE_ORDER)]
    reordered: ReorderResult | None = None
    if request.reorder:
        schedule, reordered = reorder_for_runtime(
            base,
            "tflm",
            reorderer=request.reorderer,
            effort=min(5.0, request.effort),
            time_limit_s=_capped(request.time_limit_s, 5.0),
            build=request.build,
        )
        if not schedule.is_file_order():
            schedules.append(("reordered", schedule))
        else:
            notes.append("reordering found no order with a lower peak than the file order")
    choices: list[_Choice] = []
    for schedule_label, schedule in schedules:
        scheduled = apply_schedule(base, schedule)
        choices.append((schedule_label, schedule, scheduled, ()))
        if request.inplace:
            found = find_aliases(scheduled, tflm_runtime().inplace_rule)
            if found:
                choices.append((schedule_label, schedule, scheduled, found))
            else:
                notes.append(f"{schedule_label}: no operator qualifies for in-place aliasing")
    return choices, reordered


def _allplan_candidates(choices: Sequence[_Choice], request: Request) -> list[Candidate]:
    """Every choice planned, with and (with --overlap) without overlaps, around each size
    build's scratch."""
    size_builds = request.size_builds
    variants = 2 * len(choices) * (2 if request.overlap else 1) * len(size_builds)
    # The effort covers the whole run: each choice plans up to two variants per size build
    # (x2 with overlaps).
    per_plan = max(1.0, request.effort / variants)
    per_plan_cap = _share(request.time_limit_s, variants)
    candidates: list[Candidate] = []
    for schedule_label, schedule, scheduled, aliases in choices:
        for with_overlap in (False, True) if request.overlap else (False,):
            candidates.extend(
                plan_candidates(
                    scheduled,
                    schedule,
                    aliases,
                    label=schedule_label,
                    planner=request.planner,
                    effort=per_plan,
                    time_limit_s=per_plan_cap,
                    seed=request.seed,
                    overlap_rules=request.rules if with_overlap else None,
                    build=request.build,
                    size_builds=size_builds,
                )
            )
    return candidates


def _eligible(
    candidates: Sequence[Candidate], original: _Original, request: Request, notes: list[str]
) -> list[Candidate]:
    """The candidates that declare less than TFLM's own plan (and keep its head), best first; on
    a board with several RAM banks, in the order their placement prefers."""
    eligible = sorted(
        (
            c
            for c in candidates
            if c.predicted_head <= original.head and c.required_bytes < original.required
        ),
        # As small a number to declare, a plan that shares no bytes first: it is right on every
        # kernel library (a smaller head alone buys the firmware nothing).
        key=lambda c: (c.required_bytes, c.needs_proof, c.predicted_head, candidates.index(c)),
    )
    target = request.target
    if target is not None and len(target.banks) > 1:
        from arenalens.placement_choice import order_by_placement  # noqa: PLC0415 - banks only

        placed = order_by_placement(eligible, request.build, target)
        if placed is not None:
            eligible, placement_notes = placed
            notes.extend(placement_notes)
    return eligible


def _first_kept(
    eligible: Sequence[Candidate],
    original: _Original,
    request: Request,
    notes: list[str],
    *,
    working: Model,
    split_used: bool,
) -> tuple[Candidate | None, tuple[KernelPath, ...], list[str]]:
    """The first eligible candidate whose validity check holds and, where it relies on a
    kernel's access order or a split, whose outputs the real runtime proves; with the code paths
    it is right on and what proved it."""
    valid: tuple[KernelPath, ...] = ()
    proven: list[str] = []
    for candidate in eligible:
        try:
            valid = checked_validity(candidate, request.rules, original.model.source)
        except PlanError as error:  # the independent check has the last word: never shown
            notes.append(f"{error}: dropped")
            continue
        if (candidate.needs_proof or split_used) and request.prove_inplace:
            # The wheel runs the reference kernels: a plan not right on them is not run there
            # (a split model then runs with TFLM's own plan, which proves the split alone).
            with_plan = not candidate.needs_proof or REFERENCE_PATH in valid
            if not with_plan:
                notes.append(
                    f"{candidate.label}: valid for {paths_text(valid)} by their kernels' "
                    f"access order; not run here (the {WHEEL} computes other outputs with it)"
                )
            if with_plan or split_used:
                proof = prove_candidate(
                    original.proof_reference,
                    candidate,
                    original.model,
                    request.build,
                    base=bytes(working.data),
                    with_plan=with_plan,
                )
                if proof is not None:
                    notes.append(f"{candidate.label}: not kept on real TFLM ({proof}); dropped")
                    continue
                relied = relied_on(candidate, split=split_used, with_plan=with_plan)
                proven.append(f"{WHEEL}: bit-identical outputs ({relied})")
                notes.append(f"{candidate.label}: proven bit-exact on the {WHEEL} ({relied})")
        return candidate, valid, proven
    return None, valid, proven


def _written(
    chosen: Candidate | None,
    original: _Original,
    request: Request,
    notes: list[str],
    *,
    valid: tuple[KernelPath, ...],
    proven: Sequence[str],
    split_shapes: tuple[tuple[int, ...], ...],
    resized: bool = False,
) -> bytes:
    """The file to write: the chosen plan with its record, checked as written; else the model
    as it runs (without the offline plan that would corrupt tensors, when it had one; at the
    input shapes given, when its file stores others)."""
    if chosen is not None:
        record = record_for(chosen, valid, proven, split_input_shapes=split_shapes)
        data = rewrite(chosen, record)
        check_written(data, chosen, original.model.source, request.build, record)
        return data
    if original.conflicts:
        notes.append(
            "no candidate declares fewer bytes than the runtime's own plan: written without an "
            "offline plan (TFLM plans it at setup, correctly at these shapes)"
        )
    elif resized:
        notes.append(
            "no candidate declares fewer bytes than the runtime's own plan: written at the input "
            "shapes given, with TFLM's own plan (TFLM runs the shapes a file stores)"
        )
    else:
        notes.append(
            "no candidate declares fewer bytes than the runtime's own plan: nothing to write"
        )
    return original.data


def _split_before(model: Model) -> tuple[tuple[int, ...], ...]:
    """The input shapes an earlier `optimize --split` split this model at (its record says so):
    the written model keeps them, since its bands still slice those rows."""
    return model.plan_record.split_input_shapes if model.plan_record is not None else ()


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


def _split(model: Model, request: Request) -> Splitting:
    """The split of `model` that lowers the number `optimize` declares for it on the build."""
    from arenalens.split.outcome import split_for_build  # noqa: PLC0415 - only with --split

    # Each split model is measured by a short search, without reordering or proofs.
    measuring = replace(
        request,
        reorder=False,
        effort=SPLIT_MEASURE_EFFORT,
        time_limit_s=_capped(request.time_limit_s, SPLIT_MEASURE_EFFORT),
        reorderer="auto",
        prove_inplace=False,
        split=False,
        target=None,
    )

    def measure(candidate: Model) -> int:
        return _optimize(candidate, measuring).new_required_bytes

    overlaps = (request.build, request.rules.paths) if request.overlap else None
    return split_for_build(model, measure, overlaps=overlaps)


def _capped(time_limit_s: float | None, most: float) -> float | None:
    """A user's wall-clock cap for one step of the search: at most `most` seconds (none: none)."""
    return None if time_limit_s is None else min(most, time_limit_s)


def _share(time_limit_s: float | None, parts: int) -> float | None:
    """A user's wall-clock cap shared by `parts` searches (at least a second each; none: none)."""
    return None if time_limit_s is None else max(1.0, time_limit_s / parts)


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


def offline_plan_for(model: Model, arena: ArenaProblem, offsets: Mapping[int, int]) -> OfflinePlan:
    """A head plan's offsets → the OfflineMemoryAllocation metadata TFLM reads (its rules')."""
    return tflm_runtime().offline_plan(model, arena, offsets)


def prove_outputs(
    original: bytes, rewritten: bytes, model: Model, *, invocations: int = 3, seed: int = 0
) -> OutputProof:
    """Run both files on real TFLM with the same random inputs → heads and output equality."""
    return tflm_runtime().prove_outputs(
        original, rewritten, model, invocations=invocations, seed=seed
    )


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
