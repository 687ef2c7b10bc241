"""What to do next: MemoryReport + verdict + diagnosis → the report with its verdict, findings and
next steps, as plain rows every view (terminal, HTML, JSON) shows the same way.

The verdict (`verdict.py`) is computed once by the command and carries the answer and the steps
(commands the user can paste); the report only copies them, so the report's headline, its steps,
its HTML cards and `check` never disagree. The findings are diagnose's, minus those that are facts
the report shows in its own panels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from arenalens.report.data import FindingRow, InputSizeRow, MemoryReport

if TYPE_CHECKING:  # the CLI runs these; guidance only reads their results
    from arenalens.diagnostics import Diagnosis
    from arenalens.verdict import Verdict

# Rules whose findings are facts about the plan rather than things to act on; the report shows
# them in its own panels (peak; the tail in the whole-arena picture) and leaves them out of
# "what to do next".
CONTEXT_RULES = frozenset({"peak", "subgraph-arenas", "tail"})


def with_guidance(
    report: MemoryReport,
    *,
    verdict: Verdict | None = None,
    diagnosis: Diagnosis | None = None,
) -> MemoryReport:
    """The report with its verdict, findings, input sizes and next steps filled in."""
    findings = () if diagnosis is None else _findings(diagnosis)
    search = None if verdict is None else verdict.search
    sizes: tuple[InputSizeRow, ...] = ()
    largest = None
    if search is not None and verdict is not None:
        sizes = tuple(
            InputSizeRow(size.shape, size.shape[search.height_axis], size.required_bytes, size.fits)
            for size in search.sizes
        )
        if verdict.has_number and search.largest is not None:
            largest = search.largest.shape
    fit = None if verdict is None else verdict.fit
    return replace(
        report,
        verdict=verdict,
        findings=findings,
        budget=report.budget if fit is None else fit.available_bytes,
        input_name="" if search is None else search.input_name,
        input_sizes=sizes,
        max_input=largest,
        next_steps=() if verdict is None else verdict.next_steps,
    )


def serious_findings(diagnosis: Diagnosis) -> int:
    """How many error and warning findings "what to do next" points to."""
    return sum(
        1
        for finding in diagnosis.findings
        if finding.rule not in CONTEXT_RULES and finding.severity.value in ("error", "warning")
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
        if finding.rule not in CONTEXT_RULES
    )
