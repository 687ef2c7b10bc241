"""Support rules: can the runtime run the model at all — kernels it lacks, types and options its
kernels refuse, in Prepare (setup fails) or at Invoke."""

from __future__ import annotations

from collections.abc import Iterator

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
    """One error per reason the runtime cannot set the model up or invoke it."""
    for obstacle in _obstacles(context):
        if any(text in obstacle.reason for text in _OWN_RULES):
            continue
        when = "setup (AllocateTensors) fails" if obstacle.phase == "setup" else "Invoke fails"
        yield Finding(
            rule="cannot-run",
            severity=Severity.ERROR,
            location=Location(obstacle.subgraph, obstacle.operator),
            message=f"{when}: {obstacle.text()}; no arena size makes this model run",
            fix=_fix(obstacle),
            details=obstacle.as_dict(),
        )


def cannot_run_correctly(context: DiagnoseContext) -> Iterator[Finding]:
    """One error when the model runs with wrong outputs on the build analysed: its offline plan
    shares bytes this build's kernels read after writing over them."""
    if context.analysis is None or context.runtime != "tflm":
        return
    reasons = context.analysis.runtime_budget.wrong_outputs
    if not reasons:
        return
    device = context.analysis.budget.device
    yield Finding(
        rule="cannot-run-correctly",
        severity=Severity.ERROR,
        location=Location(),
        message=f"CANNOT RUN CORRECTLY on {device}: " + "; ".join(reasons),
        fix="flash it only with a build its plan is right on (see offline-plan-overlap), or run "
        "`arenalens optimize` on the original model for this build (without --kernels its plan "
        "holds on every kernel library)",
        details={"reasons": list(reasons), "build": dict(context.analysis.budget.build)},
    )


def _fix(obstacle: Obstacle) -> str:
    if obstacle.opcode is None:
        return "convert the model with types and operators the runtime supports"
    if "no kernel" in obstacle.reason or "registered" in obstacle.reason:
        return (
            f"replace {obstacle.opcode} with operators the runtime has kernels for (for example "
            "with a converter option, or by computing that step outside the model), or register "
            "a kernel for it in the firmware's op resolver"
        )
    if obstacle.dtype:
        return (
            f"convert so that {obstacle.opcode} sees a type its kernel accepts "
            f"(it refuses {obstacle.dtype}): e.g. full-integer quantization"
        )
    return f"change {obstacle.opcode}'s operands or options to what its kernel accepts"
