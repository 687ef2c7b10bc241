"""Support rules: can the runtime run the model at all — kernels it lacks, types and options its
kernels refuse, in Prepare (setup fails) or at Invoke. One finding per distinct reason, with every
operator it hits and what to change in the conversion (`cannot_run.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from arenalens.builds.build import build_document
from arenalens.cannot_run import Refusal, group_refusals
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import (
    Finding,
    Location,
    Severity,
    model_argument,
    optimize_output,
)
from arenalens.plan_validity import SHAPES, SPLIT_SIZE, PlanConflict
from arenalens.runtimes import Obstacle
from arenalens.runtimes.door import tflm_runtime

# Covered by their own rules (dynamic-tensor-unsupported, operand checks): reported there once.
_OWN_RULES = ("Dynamic tensors are not supported",)


def _obstacles(context: DiagnoseContext) -> tuple[Obstacle, ...]:
    if context.analysis is not None:
        return context.analysis.budget.obstacles
    if context.runtime != "tflm":
        return ()
    return tflm_runtime().support(context.model).obstacles


def cannot_run(context: DiagnoseContext) -> Iterator[Finding]:
    """One error per distinct reason the runtime cannot set the model up or invoke it. LiteRT
    is judged under the app's delegate, XNNPACK by default (`delegate_verdict`, as check judges
    it): there the operators XNNPACK takes and then fails to create stop it too, and a builtin
    kernel's refusal of an operator XNNPACK takes is a warning for apps without the delegate."""
    obstacles = _obstacles(context)
    builtin_only: tuple[Refusal, ...] = ()
    if context.runtime == "litert" and context.analysis is not None:
        from arenalens.litert_memory import delegate_verdict  # noqa: PLC0415 - LiteRT only

        verdict = delegate_verdict(context.analysis, context.delegate)
        obstacles = verdict.obstacles
        builtin_only = group_refusals(context.model, verdict.builtin_only)
    kept = [o for o in obstacles if not any(text in o.reason for text in _OWN_RULES)]
    for refusal in group_refusals(context.model, kept):
        yield _refusal_finding(refusal, Severity.ERROR, "; no arena size makes this model run")
    for refusal in builtin_only:
        yield _refusal_finding(
            refusal,
            Severity.WARNING,
            " with the builtin kernels only (--delegate none): XNNPACK, LiteRT's default "
            "delegate, takes the operator and never runs that check",
        )


def _refusal_finding(refusal: Refusal, severity: Severity, scope: str) -> Finding:
    when = "setup (AllocateTensors) fails" if refusal.phase == "setup" else "Invoke fails"
    first = refusal.operators[0] if refusal.operators else (None, None)
    return Finding(
        rule="cannot-run",
        severity=severity,
        location=Location(*first),
        message=f"{when}: {refusal.text()}{scope}",
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


def cannot_run_correctly(context: DiagnoseContext) -> Iterator[Finding]:
    """One error when the model's offline plan makes the build analysed compute wrong outputs
    (the verdict's plan conflicts: `plan_validity.plan_conflicts`)."""
    if context.analysis is None or context.runtime != "tflm":
        return
    # The verdict's own computation, so diagnose and check give the same answer.
    from arenalens.declared import declared_arena  # noqa: PLC0415 - diagnose runs it for TFLM

    conflicts = declared_arena(context.analysis).conflicts
    if not conflicts:
        return
    device = context.analysis.budget.device
    yield Finding(
        rule="cannot-run-correctly",
        severity=Severity.ERROR,
        location=Location(),
        message=f"CANNOT RUN CORRECTLY on {device}: "
        + "; ".join(conflict.reason for conflict in conflicts),
        fix=_replan_fix(context, conflicts[0]),
        details={
            "conflicts": [conflict.as_dict() for conflict in conflicts],
            "build": build_document(context.analysis.budget.build) or {},
        },
    )


def _replan_fix(context: DiagnoseContext, conflict: PlanConflict) -> str:
    """The conflict's fix as a command runnable as printed: the model as typed, the analysed
    build's options, and an output file (the verdict's own fix names the command generically)."""
    assert context.analysis is not None  # cannot_run_correctly only runs with an analysis
    model = model_argument(context.model)
    output = optimize_output(context.model)
    if conflict.kind == SPLIT_SIZE:
        return conflict.fix  # the file to rewrite is the original, which arenalens cannot name
    if conflict.kind == SHAPES:
        command = f"arenalens optimize {model}{context.build_options()} -o {output}"
        return (
            f"plan again for the tensor sizes it runs with: `{command}` writes a checked plan "
            "in place of this one (add --input-shape for the size the application feeds), or "
            "run the model without the offline plan"
        )
    flags = context.build_options(overlap=True)
    command = f"arenalens optimize {model}{flags} -o {output} --overlap"
    return (
        f"flash it only with a build it is right on, or plan it again: `{command}` writes a "
        "plan whose overlaps hold on this build (without --kernels on every kernel library the "
        "core may run)"
    )
