"""Support rules: can the runtime run the model at all — kernels it lacks, types and options its
kernels refuse, in Prepare (setup fails) or at Invoke. One finding per distinct reason, with every
operator it hits and what to change in the conversion (`cannot_run.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from arenalens.cannot_run import group_refusals
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.runtimes import Obstacle

# Covered by their own rules (dynamic-tensor-unsupported, operand checks): reported there once.
_OWN_RULES = ("Dynamic tensors are not supported",)


def _obstacles(context: DiagnoseContext) -> tuple[Obstacle, ...]:
    if context.analysis is not None:
        return context.analysis.budget.obstacles
    if context.runtime != "tflm":
        return ()
    from arenalens.runtimes.tflm.support import support  # noqa: PLC0415 - TFLM only

    return support(context.model).obstacles


def cannot_run(context: DiagnoseContext) -> Iterator[Finding]:
    """One error per distinct reason the runtime cannot set the model up or invoke it."""
    obstacles = [
        obstacle
        for obstacle in _obstacles(context)
        if not any(text in obstacle.reason for text in _OWN_RULES)
    ]
    for refusal in group_refusals(context.model, obstacles):
        when = "setup (AllocateTensors) fails" if refusal.phase == "setup" else "Invoke fails"
        first = refusal.operators[0] if refusal.operators else (None, None)
        yield Finding(
            rule="cannot-run",
            severity=Severity.ERROR,
            location=Location(*first),
            message=f"{when}: {refusal.text()}; no arena size makes this model run",
            fix=refusal.fix,
            details={
                "subgraph": first[0],
                "operator": first[1],
                "phase": refusal.phase,
                "opcode": refusal.opcode,
                "reason": refusal.reason,
                "operators": [list(pair) for pair in refusal.operators],
                "count": refusal.count,
            },
        )
