"""Plan rules: the runtime's own plan checked against execution, alignment, the optimum, subgraphs.

Each rule reads `context.analysis`, the runtime plan arenalens reproduces (offline offsets
included), so it judges what the device will really do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from arenalens.analysis.arena_problem import ArenaProblem, PlannedBuffer
from arenalens.analysis.overlap_pairs import shared_pairs
from arenalens.analysis.placeholders import placeholder_inputs
from arenalens.builds.build import Build
from arenalens.builds.kernel_paths import overlap_rules
from arenalens.diagnostics.context import DiagnoseContext, Interval
from arenalens.diagnostics.findings import (
    Finding,
    Location,
    Severity,
    model_argument,
    optimize_output,
)
from arenalens.effort import cap_settings, deadline, past
from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.names import short_name
from arenalens.pipeline import ArenaResult
from arenalens.planning.problem import Plan, Problem
from arenalens.planning.registry import planner_names, run_planner
from arenalens.runtimes import get_runtime
from arenalens.units import format_bytes_exact

# Planners tried, best first, for the optimum `planner-waste` compares against; missing ones
# (not registered, or their extra not installed) are skipped.
# `best` runs every heuristic, hill climbing and CP-SAT within its time; the quick heuristics
# after it are what arenas get once the search budget is spent.
OPTIMUM_PLANNERS = ("best", "greedy_by_size", "greedy_by_breadth", "first_fit")


def _arenas(context: DiagnoseContext) -> Sequence[ArenaResult]:
    return () if context.analysis is None else context.analysis.arenas


# ---------------------------------------------------------------------------------------------
# output-overwritten


def output_overwritten(context: DiagnoseContext) -> Iterator[Finding]:
    """Model outputs whose bytes another buffer is written into while the output is still live."""
    outputs = {t for t in context.model.subgraphs[0].outputs if t >= 0}
    for result in _arenas(context):
        arena, plan = result.arena, result.runtime_plan
        buffers = sorted(arena.buffers.values(), key=lambda b: b.id)
        for output in buffers:
            if output.subgraph != 0 or not _holds_any(output, outputs):
                continue
            output_interval = context.execution_interval(arena, output)
            if output_interval.first < 0:
                continue
            for other in buffers:
                if other.id == output.id or not _bytes_overlap(plan, output, other):
                    continue
                other_interval = context.execution_interval(arena, other)
                if _overwrites(context, output, output_interval, other, other_interval):
                    yield _overwrite_finding(
                        context, arena, plan, output, other, other_interval=other_interval
                    )


def _holds_any(planned: PlannedBuffer, tensors: set[int]) -> bool:
    return planned.tensor in tensors or any(alias in tensors for alias in planned.aliases)


def _bytes_overlap(plan: Plan, first: PlannedBuffer, second: PlannedBuffer) -> bool:
    start_first, start_second = plan.offsets[first.id], plan.offsets[second.id]
    return (
        first.nbytes > 0
        and second.nbytes > 0
        and start_first < start_second + second.nbytes
        and start_second < start_first + first.nbytes
    )


def _overwrites(
    context: DiagnoseContext,
    output: PlannedBuffer,
    output_interval: Interval,
    other: PlannedBuffer,
    other_interval: Interval,
) -> bool:
    """Is `other` written after the output is written and before the output's last use?"""
    if other_interval.first < 0 or other_interval.first > output_interval.last:
        return False
    if other_interval.first > output_interval.first:
        return True
    # Written at the same step: only another output of the same operator clobbers it.
    return (
        other_interval.first == output_interval.first
        and other.subgraph == output.subgraph
        and other.tensor is not None
        and output.tensor is not None
        and context.model.subgraphs[0].producers.get(other.tensor)
        == context.model.subgraphs[0].producers.get(output.tensor)
    )


def _overwrite_finding(
    context: DiagnoseContext,
    arena: ArenaProblem,
    plan: Plan,
    output: PlannedBuffer,
    other: PlannedBuffer,
    *,
    other_interval: Interval,
) -> Finding:
    start = plan.offsets[output.id]
    other_start = plan.offsets[other.id]
    fixed = arena.problem.by_id[other.id].fixed_offset is not None
    cause = (
        "the offline plan fixes both offsets"
        if fixed or arena.problem.by_id[output.id].fixed_offset is not None
        else "the planner's lifetimes miss when the bytes are really used (a control-flow "
        "operator whose nested subgraph TFLM does not mark: docs/runtime-rules.md §T4)"
    )
    tensors = tuple(t for t in (output.tensor, other.tensor) if t is not None)
    producer = (
        None if output.tensor is None else context.model.subgraphs[0].producers.get(output.tensor)
    )
    return Finding(
        rule="output-overwritten",
        severity=Severity.ERROR,
        location=Location(0, producer, tensors),
        message=f"model output '{short_name(output.name)}' [{start}, {start + output.nbytes}) "
        f"in {arena.name} "
        f"shares bytes with {other.kind.value} '{short_name(other.name)}' [{other_start}, "
        f"{other_start + other.nbytes}), which is written at step {other_interval.first}, after "
        f"the output and before the application reads it: the output comes back as garbage "
        f"({cause})",
        fix="give the output its own bytes: regenerate the offline plan with the output live to "
        f"the end (`{_optimize_command(context)}`), or set both offsets to -1 to let TFLM plan "
        "them; copy the output out inside the graph if the plan must stay",
        details={"arena": arena.name, "output_buffer": output.id, "other_buffer": other.id},
    )


# ---------------------------------------------------------------------------------------------
# misaligned-offset


def misaligned_offset(context: DiagnoseContext) -> Iterator[Finding]:
    """Planned offsets that are not multiples of the alignment the kernels need."""
    alignment = context.required_alignment
    for result in _arenas(context):
        arena, plan = result.arena, result.runtime_plan
        misaligned = sorted(
            (
                arena.buffers[b.id]
                for b in arena.problem.buffers
                if b.size and plan.offsets[b.id] % alignment
            ),
            key=lambda planned: planned.id,
        )
        if not misaligned:
            continue
        yield _misaligned_finding(context, result, misaligned, alignment)


def _misaligned_finding(
    context: DiagnoseContext,
    result: ArenaResult,
    misaligned: list[PlannedBuffer],
    alignment: int,
) -> Finding:
    arena, plan = result.arena, result.runtime_plan
    fixed = [p for p in misaligned if arena.problem.by_id[p.id].fixed_offset is not None]
    examples = ", ".join(f"'{short_name(p.name)}' at {plan.offsets[p.id]}" for p in misaligned[:3])
    aligned_size = _aligned_arena_size(arena, alignment)
    cost = ""
    saving = None
    if aligned_size is not None:
        delta = aligned_size - plan.arena_size
        cost = (
            f" A plan aligned to {alignment} needs {format_bytes_exact(aligned_size)} "
            f"({'+' if delta >= 0 else ''}{format_bytes_exact(delta)})."
        )
        saving = -delta if delta < 0 else None
    runtime_alignment = get_runtime(context.runtime).data_alignment
    # `optimize` writes offsets that are multiples of the runtime's own alignment, no more.
    rewrite = f"`{_optimize_command(context)}` writes one whose offsets are multiples of "
    rewrite += f"{runtime_alignment}"
    aligned_plan = (
        f"an offline plan whose offsets are multiples of {alignment} (`arenalens plan "
        f"{model_argument(context.model)}{context.build_options()} --alignment {alignment}` shows "
        "one and the arena it needs)"
    )
    if fixed:
        why = f"{len(fixed)} of them have fixed offline offsets that break it"
        fix = (
            f"regenerate the offline plan ({rewrite}), or set those offsets to -1."
            if alignment <= runtime_alignment
            else f"write {aligned_plan}, or set those offsets to -1."
        )
    else:
        why = (
            "TFLM rounds sizes to 16 and packs buffers back to back, so offsets are multiples "
            "of 16 only"
            if context.runtime == "tflm"
            else "the runtime aligns offsets to a smaller boundary"
        )
        fix = f"write {aligned_plan}."
    fix += f" Declare the arena array itself aligned too: alignas({alignment})."
    subgraphs = sorted({p.subgraph for p in misaligned})
    return Finding(
        rule="misaligned-offset",
        severity=Severity.ERROR if fixed and alignment <= 16 else Severity.WARNING,
        location=Location(
            subgraphs[0] if len(subgraphs) == 1 else None,
            None,
            tuple(p.tensor for p in misaligned if p.tensor is not None)
            if len(subgraphs) == 1
            else (),
        ),
        message=f"{len(misaligned)} buffer(s) in {arena.name} start at offsets that are not "
        f"multiples of {alignment} ({examples}); kernels that load {alignment}-byte vectors "
        f"fault or slow down on them. {why}.{cost}",
        fix=fix,
        saving_bytes=saving,
        details={
            "alignment": alignment,
            "count": len(misaligned),
            "aligned_arena_bytes": aligned_size,
        },
    )


def _aligned_arena_size(arena: ArenaProblem, alignment: int) -> int | None:
    """The runtime's own planner on the same buffers with offsets aligned: the fix's cost."""
    problem = arena.problem
    aligned = Problem(
        tuple(
            b._replace(fixed_offset=None)
            if b.fixed_offset is not None and b.fixed_offset % alignment
            else b
            for b in problem.buffers
        ),
        alignment=max(alignment, problem.alignment),
        order=problem.order,
    )
    try:
        return run_planner(arena.runtime_planner, aligned, **dict(arena.runtime_options)).arena_size
    except (ArenalensError, TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# planner-waste


def planner_waste(context: DiagnoseContext) -> Iterator[Finding]:
    """Arenas where the runtime's planner needs more bytes than the best plan arenalens finds.

    The search effort (`planner_effort`, `arenalens.effort`) is one budget for the whole model,
    spent first on the arenas with the most bytes above their lower bound: each gets half of what
    is left (the last one all of it), and once the share is too small to search, the remaining
    arenas get the quick heuristics only (a model with 500 subgraphs must not take 500 searches).
    Counted, not timed: the findings are the same on every machine.
    """
    if _no_figure_to_lower(context):
        return
    candidates = [
        result
        for result in _arenas(context)
        if result.runtime_plan.arena_size > result.lower_bound and result.arena.problem.buffers
    ]
    end = deadline(context.planner_time_limit_s)
    left = context.planner_effort
    best_plans: dict[int, Plan | None] = {}
    by_gain = sorted(
        range(len(candidates)),
        key=lambda i: candidates[i].lower_bound - candidates[i].runtime_plan.arena_size,
    )
    for rank, position in enumerate(by_gain):
        share = left if rank == len(by_gain) - 1 else left / 2
        left -= share
        problem = candidates[position].arena.problem
        best_plans[position] = _best_plan(problem, share, end)
    for position, result in enumerate(candidates):
        best = best_plans[position]
        if best is None or best.arena_size >= result.runtime_plan.arena_size:
            continue
        declared_saving = _declared_saving(context, result, best)
        if declared_saving is None or declared_saving > 0:
            yield _waste_finding(context, result, best, declared_saving)


# A planner-waste finding is a WARNING (TFLM) only when it is worth a rewrite: at least this many
# bytes and this share of the number to declare; smaller gaps are INFO.
WASTE_WARNING_BYTES = 256
WASTE_WARNING_SHARE = 0.01


def _declared_saving(context: DiagnoseContext, result: ArenaResult, best: Plan) -> int | None:
    """Bytes of the number to declare (TFLM: kTensorArenaSize) the better plan saves, with the
    tail and setup it implies; None under LiteRT, which takes no offline plan."""
    analysis = context.analysis
    if analysis is None or context.runtime != "tflm":
        return None
    rules = get_runtime(context.runtime)
    arenas = [r.arena for r in analysis.arenas]
    plans = [best if r is result else r.runtime_plan for r in analysis.arenas]
    try:
        with_best = rules.budget(
            context.model, arenas, plans, analysis.runtime_build
        ).required_bytes
    except ArenalensError:
        return None
    return analysis.runtime_budget.required_bytes - with_best


# A share of planner-waste's effort below this searches nothing (heuristics only).
SMALLEST_SEARCH_EFFORT = 0.05


def _best_plan(problem: Problem, effort: float, end: float | None) -> Plan | None:
    """The smallest plan of OPTIMUM_PLANNERS; searching planners run only with an effort worth
    searching (and before a user's wall-clock cap `end` has passed), and get all of it."""
    known = set(planner_names())
    best: Plan | None = None
    for name in OPTIMUM_PLANNERS:
        searches = name in known and _is_search_planner(name)
        if name not in known or (searches and (effort < SMALLEST_SEARCH_EFFORT or past(end))):
            continue
        knobs: dict[str, float] = {"effort": effort, **cap_settings(end)} if searches else {}
        try:
            plan = run_planner(name, problem, **knobs)
        except ArenalensError:
            continue  # e.g. OR-Tools missing for 'optimal'
        if best is None or plan.arena_size < best.arena_size:
            best = plan
        if plan.arena_size <= problem.lower_bound():
            break
    return best


def _is_search_planner(name: str) -> bool:
    """True for planners that search (they take an effort)."""
    from arenalens.planning.registry import get_planner  # noqa: PLC0415 - keeps imports flat

    return get_planner(name).settings.takes("effort")


def _waste_finding(
    context: DiagnoseContext, result: ArenaResult, best: Plan, declared_saving: int | None
) -> Finding:
    runtime_size = result.runtime_plan.arena_size
    saving = runtime_size - best.arena_size
    lower_bound = result.lower_bound
    optimal = best.proven_optimal or best.arena_size == lower_bound
    quality = (
        "the optimum"
        if optimal
        else f"the best plan found ({format_bytes_exact(lower_bound)} is the lower bound)"
    )
    percent = 100.0 * saving / runtime_size
    runtime_title = "TFLM's greedy planner" if context.runtime == "tflm" else "LiteRT's planner"
    message = (
        f"{runtime_title} needs {format_bytes_exact(runtime_size)} for {result.arena.name}; "
        f"{quality} is {format_bytes_exact(best.arena_size)} (planner '{best.planner}'): "
        f"{format_bytes_exact(saving)} ({percent:.1f}%) wasted"
    )
    severity = Severity.INFO
    if context.runtime == "tflm" and declared_saving is not None:
        required = context.analysis.runtime_budget.required_bytes if context.analysis else 0
        message += f"; kTensorArenaSize would drop by {format_bytes_exact(declared_saving)}"
        if declared_saving >= max(WASTE_WARNING_BYTES, WASTE_WARNING_SHARE * required):
            severity = Severity.WARNING
        how = (
            f"`arenalens optimize {model_argument(context.model)}{context.build_options()} -o "
            f"{optimize_output(context.model)}` writes such "
            "a plan "
            "into the model as an OfflineMemoryAllocation that TFLM honours (it writes nothing "
            "if the number to declare would not drop)"
        )
        if context.model.offline_plan is not None:
            how = (
                "the model already carries an offline plan; the rest is where TFLM puts its "
                "online buffers around it: " + how
            )
    else:
        how = (
            "LiteRT has no offline plans: reorder operators or change tensor sizes instead; "
            "the number shows what a better planner would reach"
        )
    return Finding(
        rule="planner-waste",
        severity=severity,
        location=Location(),
        message=message,
        fix=how,
        saving_bytes=declared_saving,
        details={
            "arena": result.arena.name,
            "runtime_bytes": runtime_size,
            "best_bytes": best.arena_size,
            "best_planner": best.planner,
            "lower_bound": lower_bound,
            "proven_optimal": optimal,
            "declared_saving_bytes": declared_saving,
        },
    )


# ---------------------------------------------------------------------------------------------
# subgraph-arenas


def subgraph_arenas(context: DiagnoseContext) -> Iterator[Finding]:
    """Several subgraphs: how their arenas combine, which is largest, what unreachable ones cost."""
    if len(context.model.subgraphs) < 2 or context.analysis is None:
        return
    if context.runtime == "tflm":
        yield from _tflm_subgraphs(context)
    else:
        yield _litert_subgraphs(context)


def _callers(context: DiagnoseContext) -> dict[int, tuple[int, int]]:
    """Subgraph → (subgraph, operator) of the first control-flow operator that runs it."""
    callers: dict[int, tuple[int, int]] = {}
    for subgraph in context.model.subgraphs:
        for op in subgraph.operators:
            for called in op.called_subgraphs:
                if called >= 0:
                    callers.setdefault(called, (subgraph.index, op.index))
    return callers


def _reachable(context: DiagnoseContext) -> set[int]:
    reached, stack = {0}, [0]
    while stack:
        subgraph = context.model.subgraphs[stack.pop()]
        for op in subgraph.operators:
            for called in op.called_subgraphs:
                if called >= 0 and called not in reached:
                    reached.add(called)
                    stack.append(called)
    return reached


def _subgraph_peak(arena: ArenaProblem, subgraph: int) -> int:
    own = tuple(b for b in arena.problem.buffers if arena.buffers[b.id].subgraph == subgraph)
    return Problem(own).lower_bound() if own else 0


def _tflm_subgraphs(context: DiagnoseContext) -> Iterator[Finding]:
    assert context.analysis is not None
    result = context.analysis.primary
    arena = result.arena
    reachable = _reachable(context)
    callers = _callers(context)
    peaks = {sg.index: _subgraph_peak(arena, sg.index) for sg in context.model.subgraphs}
    largest = max(peaks, key=lambda index: (peaks[index], -index))
    parts = []
    for index, peak in peaks.items():
        if index == 0:
            role = "main"
        elif index in reachable:
            caller = callers.get(index)
            role = f"run by operator {caller[1]} of subgraph {caller[0]}" if caller else "nested"
        else:
            role = "unreachable"
        parts.append(f"subgraph {index} ({role}) peaks at {format_bytes_exact(peak)}")
    unreachable = sorted(set(peaks) - reachable)
    saving = _unreachable_cost(arena, result, unreachable) if unreachable else 0
    message = (
        f"TFLM plans all {len(peaks)} subgraphs in one head of "
        f"{format_bytes_exact(result.runtime_plan.arena_size)}: nested subgraphs share the "
        f"caller's timeline, so their tensors reuse the caller's free bytes; {'; '.join(parts)}. "
        f"Largest: subgraph {largest}"
    )
    if saving > 0:
        message += (
            f". The unreachable subgraph(s) {unreachable} keep lifetime (-1, -1): TFLM still "
            f"plans and stacks their buffers, which raises the head by {format_bytes_exact(saving)}"
        )
    yield Finding(
        rule="subgraph-arenas",
        severity=Severity.WARNING if saving > 0 else Severity.INFO,
        location=Location(largest),
        message=message,
        fix="remove subgraphs nothing calls (export only the signature the device runs)"
        if saving > 0
        else f"to shrink the head, work on subgraph {largest} first",
        saving_bytes=saving or None,
        details={"peaks": {str(k): v for k, v in peaks.items()}, "largest": largest},
    )


def _unreachable_cost(arena: ArenaProblem, result: ArenaResult, unreachable: list[int]) -> int:
    """Head bytes the unreachable subgraphs add: re-plan without their buffers."""
    kept = tuple(
        b for b in arena.problem.buffers if arena.buffers[b.id].subgraph not in set(unreachable)
    )
    problem = Problem(kept, alignment=arena.problem.alignment)
    try:
        plan = run_planner(arena.runtime_planner, problem, **dict(arena.runtime_options))
    except (ArenalensError, TypeError, ValueError):
        return 0
    return max(0, result.runtime_plan.arena_size - plan.arena_size)


def _litert_subgraphs(context: DiagnoseContext) -> Finding:
    assert context.analysis is not None
    sizes = {r.arena.name: r.runtime_plan.arena_size for r in context.analysis.arenas}
    total = sum(sizes.values())
    largest = max(sizes, key=lambda name: (sizes[name], name))
    listing = "; ".join(f"{name}: {format_bytes_exact(size)}" for name, size in sizes.items())
    reachable = _reachable(context)
    unreachable = [sg.index for sg in context.model.subgraphs if sg.index not in reachable]
    extra = (
        f" Subgraphs {unreachable} are reached by no control-flow operator: LiteRT allocates "
        "them only when their SignatureRunner runs."
        if unreachable
        else ""
    )
    return Finding(
        rule="subgraph-arenas",
        severity=Severity.INFO,
        location=Location(),
        message=f"LiteRT gives each subgraph its own arena and persistent arena, separate heap "
        f"blocks that never share bytes ({listing}; {format_bytes_exact(total)} in all). Largest: "
        f"{largest}. Control-flow children free their arena after each Eval.{extra}",
        fix=f"to lower the total, work on {largest} first",
        details={"arenas": sizes, "total_bytes": total},
    )


# ---------------------------------------------------------------------------------------------
# overlap-savings

# Deterministic planners only (a number of hill-climbing moves set by the problem's size, the time
# limit a safety net for hostile models): the same model gives the same finding on every machine.
# `optimize` searches further.
OVERLAP_PLANNERS = ("greedy_by_size", "greedy_by_breadth", "first_fit", "hillclimb")
OVERLAP_HILLCLIMB_MOVES = 2000  # for problems up to 10 buffers; fewer for larger ones
OVERLAP_HILLCLIMB_EFFORT = 10.0  # more than the moves above ever take: the moves bound it


def overlap_savings(context: DiagnoseContext) -> Iterator[Finding]:
    """TFLM: what `optimize --overlap` gives back, counted as the command counts it: the number
    to declare (kTensorArenaSize) of the model with that plan written, against the model as it
    is; only when that beats the best plan sharing no bytes (else plain `optimize` does as well)
    and saves anything at all (setup may decide kTensorArenaSize, not the head)."""
    if context.runtime != "tflm" or context.analysis is None:
        return
    if _no_figure_to_lower(context):
        return
    build = context.analysis.runtime_build
    model = replace(context.model, offline_plan=None, plan_record=None)
    # What `optimize --overlap` does for this build: overlaps right on every kernel library the
    # core may run (the build's own only when the user named it), and the number held on each
    # of the core's builds, so the saving is one every build it may meet gets.
    rules = overlap_rules(build)
    tflm = get_runtime("tflm")
    try:
        arena = tflm.arenas(model, build)[0]
    except ArenalensError:
        return
    pairs = tflm.overlaps(model, arena, paths=rules.paths)
    if not pairs:
        return
    disjoint_problem = replace(arena.problem, alignment=tflm.data_alignment, order=(), overlaps=())
    overlap_problem = replace(disjoint_problem, overlaps=tuple(p.overlap for p in pairs))
    if overlap_problem.lower_bound() >= disjoint_problem.lower_bound():
        return  # nothing shared at the busiest step: no saving below the bound to report
    disjoint = _deterministic_best(disjoint_problem)
    overlapped = _deterministic_best(overlap_problem)
    if overlapped.arena_size >= disjoint.arena_size:
        return
    declared = context.analysis.runtime_budget.required_bytes
    with_disjoint = _declared_with(model, arena, disjoint, rules.size_builds)
    with_overlaps = _declared_with(model, arena, overlapped, rules.size_builds)
    if with_overlaps is None or with_disjoint is None:
        return
    beyond = min(declared, with_disjoint) - with_overlaps
    if beyond <= 0:
        return  # setup or the tail decides kTensorArenaSize: the smaller head gives nothing
    bounds = (disjoint_problem.lower_bound(), overlap_problem.lower_bound())
    shared = shared_pairs(arena, pairs, overlapped.offsets)
    opcodes = ", ".join(sorted({p.opcode for p in shared}))
    runtime_size = context.analysis.primary.runtime_plan.arena_size
    flags = context.build_options(overlap=not rules.explicit)
    command = (
        f"arenalens optimize {model_argument(context.model)}{flags} "
        f"-o {optimize_output(context.model)} --overlap"
    )
    yield Finding(
        rule="overlap-savings",
        severity=Severity.INFO,
        location=Location(0, None, tuple(sorted({p.output_tensor for p in shared}))),
        message=f"letting {len(shared)} operator outputs ({opcodes}) start below an input they "
        f"consume, as far as their kernels' access order allows (every overlap right on "
        f"{rules.title}: {rules.why}), the head needs "
        f"{format_bytes_exact(overlapped.arena_size)} instead of "
        f"{format_bytes_exact(disjoint.arena_size)} (the best plan sharing no bytes; TFLM's "
        f"own: {format_bytes_exact(runtime_size)}; lower bound {format_bytes_exact(bounds[0])} "
        f"without overlaps, {format_bytes_exact(bounds[1])} with them): kTensorArenaSize "
        f"{format_bytes_exact(declared)} → {format_bytes_exact(with_overlaps)}, "
        f"{format_bytes_exact(beyond)} of it beyond `optimize` without --overlap",
        fix=f"`{command}` writes that plan (or a smaller one), records the builds it is right "
        "on, and keeps it only when the real TFLM interpreter computes bit-identical outputs "
        "with it"
        + (
            ""
            if rules.explicit
            else " (with --kernels, overlaps for that library alone may save more, on that "
            "build only)"
        ),
        # What --overlap adds to `optimize` (planner-waste counts the rest): the two add up.
        saving_bytes=beyond,
        details={
            "disjoint_bytes": disjoint.arena_size,
            "overlap_bytes": overlapped.arena_size,
            "runtime_bytes": runtime_size,
            "overlaps_used": len(shared),
            "overlaps_allowed": len(pairs),
            "required_bytes": declared,
            "required_with_overlaps": with_overlaps,
            "saving_beyond_optimize": beyond,
        },
    )


def _declared_with(
    model: Model, arena: ArenaProblem, plan: Plan, builds: Sequence[Build]
) -> int | None:
    """The number to declare with a head plan written into the model as `optimize` writes it
    (an OfflineMemoryAllocation for the tensors; each build places its scratch buffers around
    them): the largest over the builds it must hold on."""
    from arenalens.optimization import offline_plan_for  # noqa: PLC0415 - a rewrite's figure

    try:
        offline = offline_plan_for(model, arena, plan.offsets)
        planned = replace(model, offline_plan=offline)
        rules = get_runtime("tflm")
        found = []
        for build in builds:
            arenas = rules.arenas(planned, build=build)
            plans = [
                run_planner(item.runtime_planner, item.problem, **item.runtime_options)
                for item in arenas
            ]
            found.append(rules.budget(planned, arenas, plans, build=build).required_bytes)
        return max(found)
    except ArenalensError:
        return None


def _deterministic_best(problem: Problem) -> Plan:
    """The smallest plan of OVERLAP_PLANNERS (the same on every machine)."""
    moves = max(20, min(OVERLAP_HILLCLIMB_MOVES, 20_000 // max(1, len(problem.buffers))))
    knobs = {"max_iterations": moves, "effort": OVERLAP_HILLCLIMB_EFFORT}
    plans = [
        run_planner(name, problem, **(knobs if name == "hillclimb" else {}))
        for name in OVERLAP_PLANNERS
    ]
    return min(plans, key=lambda plan: (plan.arena_size, OVERLAP_PLANNERS.index(plan.planner)))


def _no_figure_to_lower(context: DiagnoseContext) -> bool:
    """True when no saving of this model's figure means anything: its input size is unknown
    (`_sized_for_a_placeholder`), or the runtime cannot run it at any arena size (the cannot-run
    finding leads, and `optimize` writes nothing for it: the flow campaign found overlap-savings
    promising 7,680 B on a float16-weight model TFLM refuses)."""
    if _sized_for_a_placeholder(context):
        return True
    return context.analysis is not None and not context.analysis.runs


def _sized_for_a_placeholder(context: DiagnoseContext) -> bool:
    """True for a TFLM model whose input size is unknown (a stored placeholder, no
    --input-shape): bytes saved at the placeholder size mean nothing, and `optimize` refuses
    such a model (dynamic-shape says to give the size)."""
    return context.runtime == "tflm" and bool(placeholder_inputs(context.model))


def _optimize_command(context: DiagnoseContext) -> str:
    """`arenalens optimize` of this model for the analysed build, runnable as printed."""
    return (
        f"arenalens optimize {model_argument(context.model)}{context.build_options()} "
        f"-o {optimize_output(context.model)}"
    )
