"""Graph rules: tensors never read, read before written or touched by nothing; operand lists.

These need only the model: they hold whatever planner runs, and they explain the symptoms a plan
cannot (a SIGSEGV on a null tensor, an arena larger than the data needs).
"""

from __future__ import annotations

from collections.abc import Iterator

from arenalens.diagnostics.context import DiagnoseContext, tensor_name
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.diagnostics.operands import operands_of
from arenalens.ir import Operator, Subgraph, Tensor
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.litert.lifetimes import litert_arena_rw
from arenalens.units import format_bytes_exact
from arenalens.vela import NPU_OPCODE

# Vela compiles a whole graph into one custom op whose scratch tensors only the NPU writes.


def _planned(context: DiagnoseContext, tensor: Tensor) -> bool:
    """Would the runtime give this tensor arena bytes?"""
    if context.runtime == "litert":
        return litert_arena_rw(tensor) and tensor.packed_nbytes > 0
    return tflm_runtime().planned(tensor)


def _tensor_bytes(context: DiagnoseContext, tensor: Tensor) -> int:
    return tensor.packed_nbytes if context.runtime == "litert" else tensor.nbytes


def tensor_never_read(context: DiagnoseContext) -> Iterator[Finding]:
    """Operator outputs that nothing reads and the model does not return."""
    for subgraph in context.model.subgraphs:
        returned = set(subgraph.outputs)
        for op in subgraph.operators:
            unread = [
                t
                for t in op.outputs
                if t >= 0
                and t not in returned
                and t not in subgraph.consumers
                and _planned(context, subgraph.tensors[t])
            ]
            if not unread:
                continue
            yield _never_read_finding(context, subgraph, op, tuple(unread))


def _never_read_finding(
    context: DiagnoseContext, subgraph: Subgraph, op: Operator, unread: tuple[int, ...]
) -> Finding:
    nbytes = sum(_tensor_bytes(context, subgraph.tensors[t]) for t in unread)
    names = ", ".join(tensor_name(context.model, subgraph.index, t) for t in unread)
    some_outputs_used = len(unread) < len([t for t in op.outputs if t >= 0])
    if context.runtime == "litert":
        cost = (
            f"LiteRT never frees an unconsumed output, so its {format_bytes_exact(nbytes)} stay "
            f"allocated from operator {op.index} to the end of subgraph {subgraph.index}"
        )
    else:
        cost = (
            f"TFLM still plans {format_bytes_exact(nbytes)} for it, live while operator "
            f"{op.index} of subgraph {subgraph.index} runs"
        )
    fix = (
        "nothing to do if the operator must produce it (a SPLIT/UNPACK slice you ignore); "
        "otherwise drop the operator or its unused output before conversion, or return the "
        "tensor as a model output if you meant to read it"
        if some_outputs_used
        else "remove the operator (dead code the converter kept), or add the tensor to the model "
        "outputs if the application reads it"
    )
    return Finding(
        rule="tensor-never-read",
        severity=Severity.INFO if some_outputs_used else Severity.WARNING,
        location=Location(subgraph.index, op.index, unread),
        message=f"{names} written by operator {op.index} ({op.opcode}) of subgraph "
        f"{subgraph.index} is never read and is not "
        f"a model output; {cost}",
        fix=fix,
        saving_bytes=nbytes if context.runtime == "litert" else None,
        details={"nbytes": nbytes},
    )


def tensor_unused(context: DiagnoseContext) -> Iterator[Finding]:
    """Non-constant tensors no operator touches and the subgraph neither takes nor returns."""
    for subgraph in context.model.subgraphs:
        touched = set(subgraph.inputs) | set(subgraph.outputs)
        touched.update(subgraph.producers)
        touched.update(subgraph.consumers)
        for op in subgraph.operators:
            touched.update(op.intermediates)
        unused = tuple(
            t.index
            for t in subgraph.tensors
            if t.index not in touched and _planned(context, t) and not t.is_variable
        )
        if not unused:
            continue
        nbytes = sum(_tensor_bytes(context, subgraph.tensors[t]) for t in unused)
        tflm_note = (
            "TFLM still plans them with lifetime (-1, -1): they stack on each other and on other "
            "never-written buffers, and raise the head if that stack exceeds the real peak"
            if context.runtime == "tflm"
            else "LiteRT never places them (nothing allocates them), so they cost nothing there"
        )
        yield Finding(
            rule="tensor-unused",
            severity=Severity.INFO if context.runtime == "litert" else Severity.WARNING,
            location=Location(subgraph.index, None, unused),
            message=f"{len(unused)} tensor(s) ({format_bytes_exact(nbytes)}) are read and written "
            f"by no operator and are not subgraph inputs or outputs; {tflm_note}",
            fix="strip the orphaned tensors (re-export the model; a converter leaves them when "
            "graph surgery removes their operators)",
            saving_bytes=None,
            details={"nbytes": nbytes, "count": len(unused)},
        )


def read_before_written(context: DiagnoseContext) -> Iterator[Finding]:
    """Operators reading a tensor that is not constant, input or variable, and never written.

    A tensor with no elements (a dimension of 0, e.g. an empty shape operand) holds no bytes to
    read, so nothing can be garbage: it is never reported."""
    for subgraph in context.model.subgraphs:
        available = {
            t.index for t in subgraph.tensors if t.has_data or t.is_variable or 0 in t.shape
        }
        available.update(t for t in subgraph.inputs if t >= 0)
        reported: set[int] = set()
        for op in subgraph.operators:
            missing = tuple(
                t
                for t in dict.fromkeys(op.inputs)
                if t >= 0 and t not in available and t not in reported
            )
            available.update(t for t in op.outputs if t >= 0)
            if not missing:
                continue
            reported.update(missing)
            yield _read_before_written_finding(context, subgraph, op, missing)


def _read_before_written_finding(
    context: DiagnoseContext, subgraph: Subgraph, op: Operator, missing: tuple[int, ...]
) -> Finding:
    names = ", ".join(tensor_name(context.model, subgraph.index, t) for t in missing)
    location = Location(subgraph.index, op.index, missing)
    if op.opcode == NPU_OPCODE:
        return Finding(
            rule="read-before-written",
            severity=Severity.INFO,
            location=location,
            message=f"{names} are read by the Vela ethos-u operator {op.index} of subgraph "
            f"{subgraph.index} and written by no "
            "operator: these are Vela's NPU scratch areas, which the NPU itself writes",
            fix="nothing to do; keep them in the arena (Vela's offline plan places them)",
            details={"vela_scratch": True},
        )
    if context.runtime == "litert":
        effect = (
            "LiteRT never allocates such a tensor: its data pointer stays null and the kernel "
            "reads through it (a SIGSEGV / SIGBUS, or garbage from whatever the pointer holds)"
        )
    else:
        effect = (
            "TFLM marks it live from before the first operator (first = -1), so it takes bytes "
            "for the whole run up to its last read, and the kernel reads whatever those bytes "
            "held (garbage outputs)"
        )
    return Finding(
        rule="read-before-written",
        severity=Severity.ERROR,
        location=location,
        message=f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index} reads {names}, "
        "which is not a constant, a "
        f"model input or a variable and is written by no earlier operator; {effect}",
        fix="make the tensor a subgraph input, give it constant data, or add the operator that "
        "should produce it (a graph edit probably dropped it)",
        details={"nbytes": sum(subgraph.tensors[t].nbytes for t in missing)},
    )


def operand_count(context: DiagnoseContext) -> Iterator[Finding]:
    """Operators with fewer (or more) inputs or outputs than their kernel requires."""
    for subgraph in context.model.subgraphs:
        for op in subgraph.operators:
            spec = operands_of(op.opcode)
            if spec is None:
                continue
            problems = _count_problems(op, spec.min_inputs, spec.max_inputs, "input", op.inputs)
            problems += _count_problems(
                op, spec.min_outputs, spec.max_outputs, "output", op.outputs
            )
            if not problems:
                continue
            yield Finding(
                rule="operand-count",
                severity=Severity.ERROR,
                location=Location(subgraph.index, op.index),
                message=f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index} has "
                f"{'; '.join(problems)}: the "
                "kernel's Prepare rejects it (or, without that check, reads past the list)",
                fix=f"re-export the model; {op.opcode} needs "
                f"{_expected(spec.min_inputs, spec.max_inputs)} inputs and "
                f"{_expected(spec.min_outputs, spec.max_outputs)} outputs "
                "(pass omitted optional inputs as -1, do not drop them)",
                details={"inputs": len(op.inputs), "outputs": len(op.outputs)},
            )


def _count_problems(
    op: Operator, minimum: int, maximum: int | None, noun: str, indices: tuple[int, ...]
) -> list[str]:
    count = len(indices)
    if count < minimum:
        return [f"{count} {noun}s, needs at least {minimum}"]
    if maximum is not None and count > maximum:
        return [f"{count} {noun}s, accepts at most {maximum}"]
    return []


def _expected(minimum: int, maximum: int | None) -> str:
    if maximum is None:
        return f"{minimum} or more"
    return str(minimum) if minimum == maximum else f"{minimum} to {maximum}"


def optional_input_misplaced(context: DiagnoseContext) -> Iterator[Finding]:
    """Omitted (-1) inputs in slots the kernel requires, and -1 outputs."""
    for subgraph in context.model.subgraphs:
        for op in subgraph.operators:
            spec = operands_of(op.opcode)
            bad_inputs = (
                ()
                if spec is None
                else tuple(
                    slot
                    for slot, tensor in enumerate(op.inputs)
                    if tensor < 0 and slot not in spec.optional
                )
            )
            bad_outputs = tuple(slot for slot, tensor in enumerate(op.outputs) if tensor < 0)
            if not bad_inputs and not bad_outputs:
                continue
            parts = []
            if bad_inputs:
                optional = sorted(spec.optional) if spec is not None else []
                allowed = f"only slots {optional} may be -1" if optional else "none may be -1"
                parts.append(f"input slot(s) {list(bad_inputs)} hold -1 ({allowed})")
            if bad_outputs:
                parts.append(f"output slot(s) {list(bad_outputs)} hold -1")
            yield Finding(
                rule="optional-input-misplaced",
                severity=Severity.ERROR,
                location=Location(subgraph.index, op.index),
                message=f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index}: "
                f"{'; '.join(parts)}. The kernel "
                "fetches that slot as a tensor and gets none (a null-pointer read); the -1 was "
                "probably meant for a neighbouring optional slot",
                fix="put each omitted optional input in its own slot as -1 and every required "
                "input in its slot (check the slot order of the operator's schema)",
                details={"input_slots": list(bad_inputs), "output_slots": list(bad_outputs)},
            )
