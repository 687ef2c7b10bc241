"""The peak: which buffers are live at the busiest step, which operator runs, and what would help.

Design hints and the bytes each saves, on the runtime's tensor-only lower bound (the bytes live at
the busiest step, which every planner needs at least; docs/runtime-rules.md §M2 finds the
optimum equal to it on every real model):

* operator order — the `greedy` reorderer's order (`reorder/greedy.py`: repeatedly run the ready
  operator that leaves the fewest bytes live, the working-set rule of tflite-tools), checked by
  `check_schedule`; the saving is the lower bound under the file's order minus under the new one;
* channels — halve the last dimension of the largest tensor at the peak;
* stride — a stride-1 convolution producing that tensor would, at stride 2, write a quarter;
* input resolution — halve the input's height and width and re-plan with shapes propagated by the
  real LiteRT interpreter (only with `what_if`, since it runs the interpreter).

Channel and stride savings change one tensor only (their consumers shrink too), so they are lower
bounds on the saving; the order and resolution savings are exact for the tensor-only bound.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from types import MappingProxyType

from arenalens.analysis.arena_problem import ArenaProblem, PlannedBuffer
from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.diagnostics.operands import operands_of
from arenalens.errors import ArenalensError, RuntimeUnavailableError
from arenalens.image_inputs import image_axes
from arenalens.ir import Model, Operator, Tensor
from arenalens.names import short_name
from arenalens.planning.problem import Buffer, Problem, align_up
from arenalens.records import record
from arenalens.reorder.registry import run_reorderer
from arenalens.reorder.schedule import Schedule, apply_schedule, schedule_problem
from arenalens.runtimes import get_runtime
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.litert.lifetimes import litert_arena_rw, litert_timeline
from arenalens.units import format_bytes_exact

# The order hint's reorderer: deterministic (no clock), so `diagnose` says the same on every run.
ORDER_HINT_REORDERER = "greedy"
# It weighs every ready operator at each step: O(n²); beyond this many operators the hint is
# skipped to keep `diagnose` fast.
MAX_REORDER_OPERATORS = 3000
# Which hints fit an operator comes from its kernel's operand roles (`diagnostics.operands`):
# an operator with a filter writes as many channels as it has filters (or units), a design
# choice; others pass their input's channels through (RESHAPE, READ_VARIABLE, ADD ...), and a
# rank-1 tensor (an audio buffer) has samples, not channels. One whose filter slides over its
# first input (a convolution, not a transposed one) writes a quarter at stride 2.
_FILTER = "filter"


def _filtered(operator: Operator) -> bool:
    """Does the operator's kernel take a filter (its output channels are a design choice)?"""
    taken = operands_of(operator.opcode)
    return taken is not None and _FILTER in taken.inputs


def _slides_a_filter(operator: Operator) -> bool:
    """Does the operator slide a filter over its first input (stride shrinks its output)?"""
    taken = operands_of(operator.opcode)
    return taken is not None and taken.inputs[:2] == ("input", _FILTER)


_TOP_TENSORS = 5


@record()
class Peak:
    """The busiest step of one arena: its bytes, the operator running, the live buffers."""

    arena: ArenaProblem
    step: int
    live_bytes: int
    subgraph: int | None
    operator: int | None
    buffers: tuple[PlannedBuffer, ...]  # largest first


def find_peak(arena: ArenaProblem) -> Peak | None:
    """ArenaProblem → its busiest step (the earliest if several tie), or None when empty."""
    curve = arena.problem.live_bytes()
    if not curve:
        return None
    step, live = max(curve, key=lambda point: (point[1], -point[0]))
    if live == 0:
        return None
    live_buffers = [b for b in arena.problem.buffers if b.size and b.start <= step <= b.end]
    ordered = sorted(live_buffers, key=lambda b: (-b.size, b.id))
    where = next((s for s in arena.steps if s.step == step and s.operator is not None), None)
    return Peak(
        arena=arena,
        step=step,
        live_bytes=live,
        subgraph=None if where is None else where.subgraph,
        operator=None if where is None else where.operator,
        buffers=tuple(arena.buffers[b.id] for b in ordered),
    )


def _primary_peak(context: DiagnoseContext) -> Peak | None:
    """The primary arena's peak; None without a planned arena."""
    if context.analysis is None or not context.analysis.arenas:
        return None
    return find_peak(context.analysis.primary.arena)


def peak(context: DiagnoseContext) -> Iterator[Finding]:
    """The tensors and operator at the primary arena's peak."""
    found = _primary_peak(context)
    if found is None:
        return
    sizes = {b.id: b.size for b in found.arena.problem.buffers}
    listed = ", ".join(
        f"'{short_name(b.name)}' {format_bytes_exact(sizes[b.id])} "
        f"({100 * sizes[b.id] / found.live_bytes:.0f}%)"
        for b in found.buffers[:_TOP_TENSORS]
    )
    more = len(found.buffers) - _TOP_TENSORS
    tail = f" and {more} more" if more > 0 else ""
    running = _running(context.model, found)
    assert context.analysis is not None  # a peak was found in it
    plan_size = context.analysis.primary.runtime_plan.arena_size
    overlap_note = (
        " (more than the whole arena: fixed offline offsets overlap these buffers on purpose)"
        if found.live_bytes > plan_size
        else ""
    )
    yield Finding(
        rule="peak",
        severity=Severity.INFO,
        location=Location(
            found.subgraph,
            found.operator,
            tuple(
                b.tensor
                for b in found.buffers[:_TOP_TENSORS]
                if b.tensor is not None and _is_model_tensor(context.model, b.subgraph, b.tensor)
            ),
        ),
        message=f"{found.arena.name} peaks at step {found.step}{running}: "
        f"{format_bytes_exact(found.live_bytes)} live ({len(found.buffers)} buffers), of the "
        f"{format_bytes_exact(plan_size)} the runtime plans{overlap_note}: {listed}{tail}",
        fix="shrink what is live here: see the design hints (operator order, channels, stride, "
        "input resolution) for what each would save",
        details={
            "arena": found.arena.name,
            "step": found.step,
            "live_bytes": found.live_bytes,
            "buffers": [b.id for b in found.buffers],
        },
    )


def _is_model_tensor(model: Model, subgraph: int, tensor: int) -> bool:
    """False for runtime-added tensors (LiteRT temporaries get indices past the model's)."""
    return subgraph < len(model.subgraphs) and tensor < len(model.subgraphs[subgraph].tensors)


def _running(model: Model, found: Peak) -> str:
    if found.subgraph is None or found.operator is None:
        return ""
    opcode = model.subgraphs[found.subgraph].operators[found.operator].opcode
    return f", while operator {found.operator} ({opcode}) of subgraph {found.subgraph} runs"


# ---------------------------------------------------------------------------------------------
# design hints


def design_hints(context: DiagnoseContext) -> Iterator[Finding]:
    """Changes to the model that lower the peak, with the bytes each saves when computable."""
    found = _primary_peak(context)
    if found is None:
        return
    baseline = tensor_lower_bound(context.model, context.runtime)
    order_hint = _order_hint(context, baseline)
    if order_hint is not None:
        yield order_hint
    largest = _largest_activation(context, found)
    if largest is not None:
        yield from _tensor_hints(context, found, largest)
    resolution = _resolution_hint(context, baseline)
    if resolution is not None:
        yield resolution


def tensor_problem(model: Model, runtime: str) -> Problem:
    """Model → tensors only, placed by the runtime's lifetime rules and size granularity."""
    buffers: list[Buffer] = []
    if runtime == "litert":
        for lifetime in litert_timeline(model).lifetimes.values():
            tensor = model.subgraphs[lifetime.subgraph].tensors[lifetime.tensor]
            if (
                lifetime.subgraph != 0
                or lifetime.alias_of is not None
                or lifetime.first == NEVER_FREED
                or not litert_arena_rw(tensor)
                or tensor.packed_nbytes == 0
            ):
                continue
            size = align_up(tensor.packed_nbytes, get_runtime("litert").data_alignment)
            buffers.append(Buffer(len(buffers), lifetime.first, lifetime.last, size))
        return Problem(tuple(buffers))
    micro = tflm_runtime()
    for lifetime in micro.tensor_timeline(model).lifetimes.values():
        tensor = model.subgraphs[lifetime.subgraph].tensors[lifetime.tensor]
        if micro.planned(tensor):
            size = align_up(tensor.nbytes, micro.data_alignment)
            buffers.append(Buffer(len(buffers), lifetime.first, lifetime.last, size))
    return Problem(tuple(buffers))


def tensor_lower_bound(model: Model, runtime: str) -> int:
    """Bytes of tensors live at the busiest step, under the runtime's lifetime rules."""
    return tensor_problem(model, runtime).lower_bound()


def _order_hint(context: DiagnoseContext, baseline: int) -> Finding | None:
    model = context.model
    main = model.subgraphs[0]
    if (
        len(model.subgraphs) != 1
        or not 2 < len(main.operators) <= MAX_REORDER_OPERATORS
        or any(op.called_subgraphs for op in main.operators)
    ):
        return None
    problem = schedule_problem(model, 0, tensor_bytes=_working_set_bytes)
    order = list(run_reorderer(ORDER_HINT_REORDERER, problem).order)
    if order == list(range(len(main.operators))):
        return None
    # apply_schedule runs check_schedule: data, variable and resource dependencies all hold, so
    # the reordered model computes what the original does.
    reordered = apply_schedule(model, Schedule(MappingProxyType({0: tuple(order)})))
    bound = tensor_lower_bound(reordered, context.runtime)
    if bound >= baseline:
        return None
    moved = [index for position, index in enumerate(order) if position != index]
    return Finding(
        rule="design-hints",
        severity=Severity.INFO,
        location=Location(0, moved[0] if moved else None),
        message=f"operator order: running subgraph 0's operators in the order {_compact(order)} "
        f"(each step runs the ready operator that leaves the fewest bytes live) lowers the "
        f"tensor lower bound from {format_bytes_exact(baseline)} to {format_bytes_exact(bound)}",
        fix="emit the operators in that order (reorder the model's operator list, or build the "
        "branches in that order before conversion); the results are unchanged",
        saving_bytes=baseline - bound,
        details={"hint": "operator-order", "order": order, "lower_bound": bound},
    )


def _working_set_bytes(tensor: Tensor) -> int:
    """The bytes an order moves: every tensor but constants and variables (always live)."""
    return 0 if tensor.has_data or tensor.is_variable else tensor.nbytes


def _compact(order: Sequence[int], limit: int = 16) -> str:
    shown = ", ".join(str(i) for i in order[:limit])
    return f"[{shown}{', …' if len(order) > limit else ''}]"


def _largest_activation(context: DiagnoseContext, found: Peak) -> PlannedBuffer | None:
    """The largest tensor at the peak that a builtin operator writes (not an input, not scratch)."""
    for planned in found.buffers:
        if planned.tensor is None or planned.subgraph >= len(context.model.subgraphs):
            continue
        subgraph = context.model.subgraphs[planned.subgraph]
        if planned.tensor >= len(subgraph.tensors) or planned.tensor not in subgraph.producers:
            continue
        if subgraph.operators[subgraph.producers[planned.tensor]].is_custom:
            return None  # an NPU / custom kernel's layout: design hints do not apply
        return planned
    return None


def _tensor_hints(
    context: DiagnoseContext, found: Peak, planned: PlannedBuffer
) -> Iterator[Finding]:
    assert planned.tensor is not None
    subgraph = context.model.subgraphs[planned.subgraph]
    tensor = subgraph.tensors[planned.tensor]
    producer = subgraph.operators[subgraph.producers[planned.tensor]]
    problem = found.arena.problem
    before = problem.lower_bound()
    location = Location(planned.subgraph, producer.index, (planned.tensor,))
    channels = tensor.shape[-1] if tensor.shape else 1
    after = _bound_with_size(problem, planned.id, _scaled(problem, planned.id, 1, 2))
    designed = _filtered(producer) and len(tensor.shape) >= 2
    if designed and channels >= 2 and after < before:  # a hint that saves nothing is noise
        yield Finding(
            rule="design-hints",
            severity=Severity.INFO,
            location=location,
            message=f"channels: '{short_name(tensor.name)}' {list(tensor.shape)} "
            f"({format_bytes_exact(tensor.nbytes)}) "
            f"is the largest tensor at the peak; operator {producer.index} ({producer.opcode}) of "
            f"subgraph {planned.subgraph} "
            f"writes {channels} channels. Halving them to {channels // 2} lowers this arena's "
            f"lower bound from {format_bytes_exact(before)} to {format_bytes_exact(after)}",
            fix=f"reduce the output channels of operator {producer.index} of subgraph "
            f"{planned.subgraph} (width multiplier, "
            "fewer filters); downstream tensors shrink too, so the real saving is larger",
            saving_bytes=before - after,
            details={"hint": "channels", "tensor": planned.tensor, "channels": channels},
        )
    stride = _stride(producer)
    after = _bound_with_size(problem, planned.id, _scaled(problem, planned.id, 1, 4))
    if (
        _slides_a_filter(producer)
        and stride == (1, 1)
        and _spatial(tensor.shape)
        and after < before
    ):
        yield Finding(
            rule="design-hints",
            severity=Severity.INFO,
            location=location,
            message=f"stride: operator {producer.index} ({producer.opcode}) of subgraph "
            f"{planned.subgraph} runs at stride 1 "
            f"and writes '{short_name(tensor.name)}' {list(tensor.shape)}; at stride 2 it would "
            f"write a quarter, lowering the lower bound from {format_bytes_exact(before)} to "
            f"{format_bytes_exact(after)}",
            fix=f"use stride 2 in operator {producer.index} of subgraph {planned.subgraph} "
            "(or downsample earlier) if accuracy "
            "allows; every later feature map shrinks too",
            saving_bytes=before - after,
            details={"hint": "stride", "operator": producer.index},
        )


def _stride(operator: Operator) -> tuple[int, int] | None:
    try:
        return int(operator.options.get("stride_h", 0)), int(operator.options.get("stride_w", 0))
    except (TypeError, ValueError):
        return None


def _spatial(shape: tuple[int, ...]) -> bool:
    return len(shape) == 4 and shape[1] >= 2 and shape[2] >= 2


def _scaled(problem: Problem, buffer_id: int, numerator: int, denominator: int) -> int:
    size = problem.by_id[buffer_id].size
    return max(1, size * numerator // denominator)


def _bound_with_size(problem: Problem, buffer_id: int, size: int) -> int:
    buffers = tuple(b._replace(size=size) if b.id == buffer_id else b for b in problem.buffers)
    return Problem(buffers).lower_bound()


# Input scales tried for the resolution hint, in order: half first; 3/4 when the graph cannot take
# half (a fixed pooling window or flatten RESHAPE often pins the final feature map).
RESOLUTION_SCALES = ((1, 2), (3, 4))


def _resolution_hint(context: DiagnoseContext, baseline: int) -> Finding | None:
    """A smaller input height and width, re-planned with LiteRT's shape propagation."""
    main = context.model.subgraphs[0]
    images = [
        (t, layout)
        for t in main.inputs
        if t >= 0 and not main.tensors[t].has_data
        for layout in [image_axes(main.tensors[t].shape)]
        if layout is not None
    ]
    if len(images) != 1:
        return None
    index, axes = images[0]
    tensor = main.tensors[index]
    half = _scaled_shape(tensor.shape, axes, (1, 2))
    refused = _refused_at_every_size(context.model)
    if refused:
        # `--input-shape` sizes the smaller input with LiteRT's builtin kernels, which refuse
        # the model at its own size already: no command can measure it (it exits 2).
        finding = _resolution_finding(context, index, half, None, refused=refused)
        return replace(finding, details={**finding.details, "not_computed": refused})
    if not context.what_if:
        return _resolution_finding(context, index, half, None)
    failures = []
    for scale in RESOLUTION_SCALES:
        shape = _scaled_shape(tensor.shape, axes, scale)
        try:
            from arenalens.runtimes.litert.shapes import (  # noqa: PLC0415 - optional extra
                resize_model_inputs,
            )

            smaller = resize_model_inputs(context.model, {tensor.name: shape})
        except RuntimeUnavailableError as error:
            # Not the graph's limit: the interpreter that propagates shapes is not installed.
            finding = _resolution_finding(context, index, half, None, unavailable=True)
            return replace(finding, details={**finding.details, "not_computed": str(error)})
        except ArenalensError as error:
            failures.append(str(error))
            continue
        bound = tensor_lower_bound(smaller, context.runtime)
        if bound >= baseline:
            return None
        return _resolution_finding(context, index, shape, (baseline, bound))
    # LiteRT refused both sizes: `--input-shape` at either would exit 2, so none is named.
    finding = _resolution_finding(context, index, half, None, measurable=False)
    return replace(finding, details={**finding.details, "not_computed": failures[-1]})


def _refused_at_every_size(model: Model) -> str:
    """What LiteRT's builtin kernels refuse at setup whatever the input size ('': nothing),
    as diagnose's cannot-run finding words it: shape propagation (`--input-shape`) runs them."""
    from arenalens.cannot_run import group_refusals  # noqa: PLC0415 - image models only
    from arenalens.runtimes.litert.refusals import setup_refusals  # noqa: PLC0415

    refusals = group_refusals(model, setup_refusals(model))
    return refusals[0].text() if refusals else ""


def _scaled_shape(
    shape: tuple[int, ...], axes: tuple[int, int], scale: tuple[int, int]
) -> tuple[int, ...]:
    dims = list(shape)
    for axis in axes:
        dims[axis] = max(1, dims[axis] * scale[0] // scale[1])
    return tuple(dims)


def _resolution_finding(
    context: DiagnoseContext,
    index: int,
    shape: tuple[int, ...],
    bounds: tuple[int, int] | None,
    *,
    unavailable: bool = False,
    measurable: bool = True,
    refused: str = "",
) -> Finding:
    """The hint at `shape`; `bounds` (before, after) when re-planned, `unavailable` when
    --what-if could not re-plan for want of the LiteRT interpreter; not `measurable` when
    LiteRT could not size `shape`, `refused` what its builtin kernels refuse at every size
    (said first). A hint no `--input-shape` can measure names none."""
    tensor = context.model.subgraphs[0].tensors[index]
    layout = image_axes(tensor.shape)
    assert layout is not None
    height_axis, width_axis = layout
    factor = (tensor.shape[height_axis] * tensor.shape[width_axis]) / max(
        1, shape[height_axis] * shape[width_axis]
    )
    message = (
        (
            "input resolution: no smaller input can be sized: LiteRT, whose builtin kernels "
            f"size another input (--input-shape), refuses the model at every size ({refused}); "
            "once it runs, "
            if refused
            else "input resolution: "
        )
        + f"'{short_name(tensor.name)}' is "
        f"{tensor.shape[height_axis]}x{tensor.shape[width_axis]}; at "
        f"{shape[height_axis]}x{shape[width_axis]} every feature map before the first global "
        f"pooling shrinks about {factor:.2g}x"
    )
    wanted = "x".join(str(d) for d in shape)
    details: dict[str, object] = {"hint": "input-resolution", "shape": list(shape)}
    saving = None
    if bounds is None and not refused:
        if not measurable:
            message += " (LiteRT could not propagate a smaller input through this graph)"
        elif not context.what_if:
            message += " (diagnose --what-if re-plans it with LiteRT's shape propagation)"
        elif unavailable:
            from arenalens.runtimes.litert.shapes import INSTALL_HINT  # noqa: PLC0415

            message += (
                " (not re-planned: LiteRT, which propagates the shapes, is not installed: "
                f"{INSTALL_HINT})"
            )
    elif bounds is not None:
        before, after = bounds
        saving = before - after
        message += (
            f"; re-planned with LiteRT's shape propagation, the tensor lower bound goes from "
            f"{format_bytes_exact(before)} to {format_bytes_exact(after)}"
        )
        details["lower_bound"] = after
    fix = "train / convert at the lower resolution if accuracy allows"
    if refused:
        fix = (
            "first make LiteRT's builtin kernels take the model (they refuse it at every size, "
            f"so no --input-shape measures a smaller input); then {fix}"
        )
    elif measurable:
        fix += f"; measure it first with --input-shape '{tensor.name}={wanted}'"
    return Finding(
        rule="design-hints",
        severity=Severity.INFO,
        location=Location(0, None, (index,)),
        message=message,
        fix=fix,
        saving_bytes=saving,
        details=details,
    )
