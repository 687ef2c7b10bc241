"""Offline-plan rules: `OfflineMemoryAllocation` metadata (Vela, TFLM's test builder) checked.

TFLM places offline tensors at their exact offsets with no overlap or alignment check, and fails
setup when the offset count differs from the tensor count (docs/runtime-rules.md §T9). LiteRT
ignores the metadata.

Two tensors may share bytes safely when one is an operator's output placed at least its kernel's
access-order distance below an input that dies at that operator (`optimize --overlap` writes such
plans; `runtimes.tflm.plan_validity` judges them): those are reported with the kernel code paths
they are right on, as info, or a warning when a known one computes wrong outputs with them (the
`cannot-run-correctly` rule says so as an error for the build analysed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from arenalens.builds.kernel_paths import CMSIS_NN_PATHS, KNOWN_PATHS
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import (
    Finding,
    Location,
    Severity,
    model_argument,
    optimize_output,
)
from arenalens.ir import Model
from arenalens.names import short_name
from arenalens.plan_validity import split_conflict
from arenalens.runtimes.door import tflm_runtime
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # what the TFLM door hands out
    from arenalens.runtimes.door import PlacedTensor, SharedBytes


def offline_plan_count(context: DiagnoseContext) -> Iterator[Finding]:
    """An offline plan whose offset count differs from the model's tensor count."""
    plan = context.model.offline_plan
    if plan is None or context.runtime != "tflm":
        return
    expected = context.model.tensor_count
    if len(plan.offsets) == expected:
        return
    yield Finding(
        rule="offline-plan-count",
        severity=Severity.ERROR,
        location=Location(),
        message=f"the OfflineMemoryAllocation metadata has {len(plan.offsets)} offsets but the "
        f"model has {expected} tensors; TFLM fails setup with 'Nbr of offline buffer offsets "
        f"({len(plan.offsets)}) in metadata not equal nbr tensors ({expected})'",
        fix="re-run the tool that wrote the plan (Vela) on this exact model; a graph edit after "
        "compilation changed the tensor count. Or delete the metadata to plan online",
        details={"offsets": len(plan.offsets), "tensors": expected},
    )


def offline_plan_overlap(context: DiagnoseContext) -> Iterator[Finding]:
    """Offline offsets that give two tensors live at the same step common bytes: an error when no
    kernel tolerates it, Vela's own NPU overlaps as info, and outputs placed below the inputs
    they consume with the kernel code paths they are right on (`plan_validity`)."""
    if context.runtime != "tflm" or context.model.offline_plan is None:
        return
    validity = tflm_runtime().plan_validity(context.model)
    by_vela_operator: dict[int, list[SharedBytes]] = {}
    at_operators: list[SharedBytes] = []
    for pair in validity.shared:
        if pair.vela:
            operator = _shared_operator(context.model, pair)
            by_vela_operator.setdefault(operator, []).append(pair)
        elif pair.operator is None or not _right_anywhere(context.model, pair):
            yield _overlap_finding(context, pair.first, pair.second)
        else:
            at_operators.append(pair)
    for operator, pairs in sorted(by_vela_operator.items()):
        yield _vela_overlap_finding(context, operator, pairs)
    if at_operators:
        yield _kernel_overlap_finding(context, at_operators, validity.note)


def _right_anywhere(model: Model, pair: SharedBytes) -> bool:
    """True when some known kernel code path tolerates this output over its input."""
    return any(not tflm_runtime().pair_problem(model, pair, path) for path in KNOWN_PATHS)


def _kernel_overlap_finding(
    context: DiagnoseContext, pairs: list[SharedBytes], note: str
) -> Finding:
    model = context.model
    listing = ", ".join(
        f"{model.subgraphs[0].operators[p.operator or 0].opcode} (op {p.operator})"
        for p in pairs[:8]
    ) + (f", ... ({len(pairs) - 8} more)" if len(pairs) > 8 else "")
    valid = tflm_runtime().valid_paths(model)
    known_invalid = [path for path in KNOWN_PATHS if path not in valid]
    message = (
        f"the offline plan lets {len(pairs)} operator output(s) start below an input they "
        f"consume ({listing}); right on: "
        + (", ".join(path.title for path in valid) if valid else "no kernel library")
    )
    if known_invalid:
        message += "; wrong outputs on: " + ", ".join(path.title for path in known_invalid)
    if note:
        message += f" ({note})"
    # A plan right everywhere needs no command; one right on some builds names the command
    # that replaces it, runnable as printed (the model as typed, never written over). A split
    # model asked about at another size has no new plan (optimize refuses it): only the
    # original can be split again, as the sibling finding says.
    split = split_conflict(model)
    fix = (
        "nothing to do: every kernel library arenalens knows tolerates these overlaps"
        if not known_invalid
        else split.fix
        if split is not None
        else "flash it only with a build it is right on (check says CANNOT RUN CORRECTLY on "
        "the others), or plan it again without --kernels, so that it holds on every kernel "
        f"library: `arenalens optimize {model_argument(model)} -o {optimize_output(model)} "
        "--overlap`"
    )
    severity = Severity.INFO
    if known_invalid:
        severity = Severity.WARNING if valid else Severity.ERROR
    return Finding(
        rule="offline-plan-overlap",
        severity=severity,
        location=Location(0, None, tuple(sorted({p.output.tensor for p in pairs if p.output}))),
        message=message,
        fix=fix,
        details={
            "safe_overlaps": len(pairs),
            "valid_for": [path.name for path in valid],
            "cmsis_nn_safe": all(path in valid for path in CMSIS_NN_PATHS),
            "vela": False,
        },
    )


def _overlap_finding(
    context: DiagnoseContext, first: PlacedTensor, second: PlacedTensor
) -> Finding:
    low = max(first.offset, second.offset)
    high = min(first.offset + first.nbytes, second.offset + second.nbytes)
    steps_from = max(first.first, second.first)
    steps_to = min(first.last, second.last)
    model = context.model
    split = split_conflict(model)
    fix = (
        split.fix  # a new plan for this file is refused: only the original can be split again
        if split is not None
        else "regenerate the offline plan for this model (`arenalens optimize "
        f"{model_argument(model)} -o {optimize_output(model)}` writes a checked one), or set "
        "these offsets to -1 so TFLM plans them online"
    )
    return Finding(
        rule="offline-plan-overlap",
        severity=Severity.ERROR,
        location=Location(first.subgraph, None, (first.tensor, second.tensor)),
        message=f"the offline plan puts {_label(model, first)} "
        f"[{first.offset}, {first.offset + first.nbytes}) and {_label(model, second)} "
        f"[{second.offset}, {second.offset + second.nbytes}) in common bytes [{low}, {high}) "
        f"while both are live (steps {steps_from} to {steps_to}); TFLM applies offline offsets "
        "unchecked, so one tensor overwrites the other (garbage outputs)",
        fix=fix,
        details={"bytes": high - low, "vela": False},
    )


def _vela_overlap_finding(
    context: DiagnoseContext, operator: int, pairs: list[SharedBytes]
) -> Finding:
    involved = sorted(
        {t for pair in pairs for t in (pair.first, pair.second)}, key=lambda t: t.tensor
    )
    listing = ", ".join(
        f"{_label(context.model, t)} [{t.offset}, {t.offset + t.nbytes})" for t in involved
    )
    return Finding(
        rule="offline-plan-overlap",
        severity=Severity.INFO,
        location=Location(involved[0].subgraph, operator, tuple(t.tensor for t in involved)),
        message=f"the offline plan overlaps {listing} while they are live together; all belong "
        f"only to Vela's ethos-u operator {operator} of subgraph {involved[0].subgraph}, whose "
        "command stream orders the NPU's "
        "reads and writes, so Vela shares these bytes on purpose",
        fix="nothing to do for a Vela-compiled model; do not edit the graph around the ethos-u "
        "operator without re-running Vela",
        details={"pairs": len(pairs), "vela": True},
    )


def _label(model: Model, placed: PlacedTensor) -> str:
    tensor = model.subgraphs[placed.subgraph].tensors[placed.tensor]
    return f"tensor {placed.tensor} '{short_name(tensor.name)}'"


def _shared_operator(model: Model, pair: SharedBytes) -> int:
    """The one operator that touches both tensors of a Vela pair."""
    subgraph = model.subgraphs[pair.first.subgraph]
    tensor = pair.first.tensor
    producer = subgraph.producers.get(tensor)
    if producer is not None:
        return producer
    return subgraph.consumers.get(tensor, (0,))[0]


def offline_plan_incomplete(context: DiagnoseContext) -> Iterator[Finding]:
    """Planned tensors the offline plan leaves online (-1) next to offline ones."""
    model = context.model
    plan = model.offline_plan
    if plan is None or context.runtime != "tflm" or len(plan.offsets) != model.tensor_count:
        return
    # Outputs a kernel binds in Prepare (VAR_HANDLE's resource id) are never planned, so an
    # offline plan rightly leaves them at -1 (arenalens optimize does).
    micro = tflm_runtime()
    bound_in_prepare = micro.prepare_bound_tensors(model)
    for subgraph in model.subgraphs:
        online = tuple(
            t.index
            for t in subgraph.tensors
            if micro.planned(t)
            and (subgraph.index, t.index) not in bound_in_prepare
            and plan.offsets[model.tensor_offset_index(subgraph.index, t.index)] == -1
        )
        if not online:
            continue
        nbytes = sum(subgraph.tensors[t].nbytes for t in online)
        yield Finding(
            rule="offline-plan-incomplete",
            severity=Severity.WARNING,
            location=Location(subgraph.index, None, online),
            message=f"the offline plan leaves {len(online)} planned tensor(s) "
            f"({format_bytes_exact(nbytes)}) at -1: TFLM's greedy planner places them around the "
            "fixed ones, so the layout is no longer the one the plan's author checked (and "
            "misaligned fixed offsets misalign them too)",
            fix="give every planned tensor an offset (re-run Vela, or `arenalens optimize "
            f"{model_argument(model)} -o {optimize_output(model)}` on the final model), or drop "
            "the "
            "metadata to plan everything online",
            details={"nbytes": nbytes, "count": len(online)},
        )


def offline_plan_ignored(context: DiagnoseContext) -> Iterator[Finding]:
    """An offline plan under LiteRT, which ignores it."""
    if context.model.offline_plan is None or context.runtime != "litert":
        return
    yield Finding(
        rule="offline-plan-ignored",
        severity=Severity.INFO,
        location=Location(),
        message="the model carries an OfflineMemoryAllocation plan, which only TFLM reads; "
        "LiteRT plans every tensor itself",
        fix="nothing to do; run with --runtime tflm to check the plan itself",
    )
