"""What to do next: MemoryReport + fit check + diagnosis + input search → the report's verdict,
findings and next steps, as plain rows every view (terminal, HTML, JSON) shows the same way.

The steps are commands the user can paste: `arenalens optimize` when a better plan lowers the
number to declare (or makes it fit), `check --target all` to pick a board, `--max-input` to find
the input size that fits, `diagnose` for the design hints. A plan other than the runtime's exists
on the device only after `optimize` writes it, and the steps say so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from arenalens.builds.build import build_flags
from arenalens.report.data import FindingRow, InputSizeRow, MemoryReport, Verdict
from arenalens.report.labels import OVERLAP_PLAN_SUFFIX
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the CLI runs these; guidance only reads their results
    from arenalens.diagnostics import Diagnosis
    from arenalens.fit import FitCheck
    from arenalens.max_input import InputSearch

# Rules whose findings are facts about the plan rather than things to act on; the report shows
# them in its own panels (peak) and leaves them out of "what to do next".
_CONTEXT_RULES = frozenset({"peak", "subgraph-arenas"})


def with_guidance(
    report: MemoryReport,
    *,
    check: FitCheck | None = None,
    diagnosis: Diagnosis | None = None,
    search: InputSearch | None = None,
) -> MemoryReport:
    """The report with its verdict, findings and next steps filled in."""
    verdict = None if check is None else _verdict(check)
    findings = () if diagnosis is None else _findings(diagnosis)
    sizes: tuple[InputSizeRow, ...] = ()
    largest = None
    if search is not None:
        sizes = tuple(
            InputSizeRow(size.shape, size.shape[search.height_axis], size.required_bytes, size.fits)
            for size in search.sizes
        )
        largest = None if search.largest is None else search.largest.shape
    guided = replace(
        report,
        verdict=verdict,
        findings=findings,
        budget=report.budget if check is None else check.available_bytes,
        input_name="" if search is None else search.input_name,
        input_sizes=sizes,
        max_input=largest,
    )
    return replace(guided, next_steps=next_steps(guided))


def _verdict(check: FitCheck) -> Verdict:
    target = check.target
    if target is not None:
        where = f"{target.title} ({target.core})"
    elif check.budget_text and not check.budget_text.isdigit():
        where = f"{check.budget_text} = {format_bytes_exact(check.budget_bytes)}"
    else:
        where = format_bytes_exact(check.budget_bytes)
    if check.reserve_bytes:
        where += f", minus a {format_bytes_exact(check.reserve_bytes)} reserve"
    return Verdict(
        verdict=check.verdict,
        where=where,
        budget_bytes=check.budget_bytes,
        reserve_bytes=check.reserve_bytes,
        available_bytes=check.available_bytes,
        fits=check.fits,
        fits_after_optimize=check.fits_after_optimize,
        optimized_bytes=check.optimized_bytes,
        best_case_bytes=check.best_case_bytes,
        target=None if target is None else target.name,
        source="" if target is None else target.source,
    )


def _findings(diagnosis: Diagnosis) -> tuple[FindingRow, ...]:
    model = diagnosis.model
    return tuple(
        FindingRow(
            rule=finding.rule,
            severity=finding.severity.value,
            where=finding.location.describe(model),
            message=finding.message,
            fix=finding.fix,
            saving_bytes=finding.saving_bytes,
        )
        for finding in diagnosis.findings
        if finding.rule not in _CONTEXT_RULES
    )


def next_steps(report: MemoryReport) -> tuple[str, ...]:
    """Report (with verdict and findings) → what to do, most important first."""
    model = report.model_argument
    declared = report.required_bytes
    steps: list[str] = []
    verdict = report.verdict
    best = _best_plan(report)
    optimize = f"arenalens optimize {model}{build_flags(report.build)} -o optimized.tflite"
    if verdict is None:
        steps.append(
            f"Declare kTensorArenaSize = {format_bytes_exact(declared)}. To see where it fits: "
            f"`arenalens report {model} --target NAME` for one board, "
            f"`arenalens check {model} --target all` for every board."
        )
    elif verdict.fits:
        spare = verdict.available_bytes - declared
        steps.append(
            f"Declare kTensorArenaSize = {format_bytes_exact(declared)}: it fits {verdict.where} "
            f"with {format_bytes_exact(spare)} to spare."
        )
    elif verdict.fits_after_optimize:
        after = verdict.optimized_bytes
        figure = format_bytes_exact(after) if after is not None else "less"
        steps.append(
            f"It does not fit {verdict.where} as it is "
            f"({format_bytes_exact(declared - verdict.available_bytes)} short), "
            f"but after `{optimize}` it declares {figure}, which fits."
        )
    elif verdict.verdict == "CANNOT RUN":
        steps.append("The runtime cannot run this model: change the operators it names.")
    else:
        steps.append(
            f"It does not fit {verdict.where}: "
            f"{format_bytes_exact(declared - verdict.available_bytes)} short, and even a plan at "
            f"the lower bound needs {format_bytes_exact(verdict.best_case_bytes)}. Shrink the "
            f"model (the design hints below say what each change saves), find the largest "
            f"input that fits (`arenalens check {model} --target NAME --max-input`), or pick a "
            f"larger board (`arenalens check {model} --target all`)."
        )
    if best is not None and (verdict is None or verdict.fits):
        planner, required = best
        if planner.endswith(OVERLAP_PLAN_SUFFIX):  # the --overlap plan: optimize --overlap
            optimize += " --overlap"
        steps.append(
            f"`{optimize}` lowers kTensorArenaSize to {format_bytes_exact(required)} "
            f"({format_bytes_exact(declared - required)} less, "
            f"the '{planner}' plan written into the model)."
        )
    if report.max_input is not None:
        shape = "x".join(str(d) for d in report.max_input)
        steps.append(
            f"The largest input that fits is {report.input_name}={shape}: "
            f"`--input-shape '{report.input_name}={shape}'` plans the model at that size."
        )
    serious = [f for f in report.findings if f.severity in ("error", "warning")]
    if serious:
        steps.append(
            f"Fix the {len(serious)} error / warning finding(s) below "
            f"(`arenalens diagnose {model}` explains each)."
        )
    return tuple(steps)


def _best_plan(report: MemoryReport) -> tuple[str, int] | None:
    """The plan (other than the runtime's) that declares the fewest bytes, if it saves any."""
    if not report.arenas or report.runtime != "tflm":
        return None
    views = [v for v in report.primary.plans if v.required_bytes is not None]
    runtime = next((v for v in views if v.is_runtime), None)
    if runtime is None or runtime.required_bytes is None:
        return None
    others = [v for v in views if not v.is_runtime and v.planner != "naive"]
    if not others:
        return None
    best = min(others, key=lambda v: (v.required_bytes or 0, v.planner))
    if best.required_bytes is None or best.required_bytes >= runtime.required_bytes:
        return None
    return best.planner, best.required_bytes
