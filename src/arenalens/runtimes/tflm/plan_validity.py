"""Where an offline plan computes the right outputs: model → the tensors its offsets let share
bytes while both are live, and for each kernel code path whether its kernels tolerate every one.

TFLM applies `OfflineMemoryAllocation` unchecked (docs/runtime-rules.md §T9). Two tensors live at
one step may still share bytes safely when one is an operator's output, born there, placed at
least its kernel's access-order distance below an input that dies there (`overlap`), or at the
same offset as an input the kernel aliases in place (`analysis.inplace`: RESHAPE skips its copy).
Whether a kernel tolerates it depends on the code path the build runs (`kernel_paths`): a plan can
be right on the reference kernels and wrong on CMSIS-NN's, which is what `CANNOT RUN CORRECTLY`
reports. Tensors that share bytes in any other way are wrong on every build. Overlaps that belong
to one Vela ethos-u operator alone are the NPU command stream's business and are left out.

arenalens' record next to the plan (`PlanRecord`, written by `optimize`) narrows the answer: a path
it does not list is refused even where this version's rules would allow it, since the writer
vouched for no more. A record written for another plan (its digest differs) or by a later version
is set aside, with a note, and the rules alone decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arenalens.builds.kernel_paths import (
    ALL_PATHS,
    KNOWN_PATHS,
    KernelPath,
    build_for,
    sorted_paths,
)
from arenalens.ir import Model, PlanRecord, Tensor
from arenalens.memo import recent_by_identity
from arenalens.names import short_name
from arenalens.runtimes.tflm.lifetimes import execution_timeline, tflm_planned
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.plan_record import EVERY_BUILD, record_matches
from arenalens.units import format_bytes_exact
from arenalens.vela import NPU_OPCODE

VELA_OPCODE = NPU_OPCODE  # the operator Vela compiles a graph into
# Reasons listed per path; the rest are counted.
MAX_REASONS = 6


@dataclass(frozen=True, slots=True)
class PlacedTensor:
    """One tensor the offline plan places: where, how many bytes, and when it is really in use."""

    subgraph: int
    tensor: int
    offset: int
    nbytes: int
    first: int  # execution steps, inclusive
    last: int


@dataclass(frozen=True, slots=True)
class SharedBytes:
    """Two tensors the offline plan gives common bytes while both are live.

    `operator` is set when one is the output of a subgraph-0 operator, born at its step, and the
    other an input of it that dies there: whether that is safe is the kernel's question.
    """

    first: PlacedTensor
    second: PlacedTensor
    operator: int | None = None
    output: PlacedTensor | None = None
    input: PlacedTensor | None = None
    # Vela's own: both belong to one ethos-u operator alone, or its output starts over an input
    # at that operator (the command stream's schedule orders them)
    vela: bool = False


@dataclass(frozen=True)
class PlanValidity:
    """The offline plan's shared bytes and arenalens' record of where it holds."""

    shared: tuple[SharedBytes, ...]
    record: PlanRecord | None  # the record, when it describes this very plan
    note: str = ""  # why a record in the file was set aside

    @property
    def shares_bytes(self) -> bool:
        """True when some tensors share bytes while live (outside Vela's own operators)."""
        return any(not pair.vela for pair in self.shared)


@recent_by_identity()
def plan_validity(model: Model) -> PlanValidity:
    """Model → the offline plan's shared bytes and the record that applies to it."""
    plan = model.offline_plan
    record = model.plan_record
    note = ""
    if record is not None and not record_matches(record, plan, _encoded(model)):
        note = (
            "the arenalens_plan_validity record describes another offline plan (or a later "
            "arenalens): set aside; the kernels' access rules alone judge this one"
        )
        record = None
    return PlanValidity(_shared_bytes(model), record, note)


def wrong_outputs(
    model: Model, path: KernelPath, *, limit: int | None = MAX_REASONS
) -> tuple[str, ...]:
    """Why a build running this code path computes wrong outputs with the model's offline plan,
    one line per problem, the rest counted past `limit` (empty: the plan is right there)."""
    validity = plan_validity(model)
    if not validity.shares_bytes:
        return ()
    reasons = list(_problems(model, path))
    record = validity.record
    if not reasons and record is not None and not _record_allows(record, path):
        reasons.append(
            f"the plan's record (written by {record.writer or 'arenalens'}) vouches for "
            f"{', '.join(record.valid_for) or 'no build'} only, not {path.name}"
        )
    if limit is not None and len(reasons) > limit:
        more = len(reasons) - limit + 1
        reasons = [*reasons[: limit - 1], f"... and {more} more"]
    return tuple(reasons)


def wrong_everywhere(model: Model) -> tuple[str, ...]:
    """The problems of the model's offline plan that no known kernel code path tolerates
    (tensors live together, or an output over an input every path's kernel reads later): wrong
    on every build."""
    validity = plan_validity(model)
    found = []
    for pair in validity.shared:
        if pair.vela:
            continue
        problems = [pair_problem(model, pair, path) for path in KNOWN_PATHS]
        if all(problems):
            found.append(problems[0])
    return tuple(found)


def valid_paths(model: Model, paths: Iterable[KernelPath] = ALL_PATHS) -> tuple[KernelPath, ...]:
    """The code paths (of those given) on which the model's offline plan is right."""
    return tuple(path for path in sorted_paths(paths) if not wrong_outputs(model, path))


def validity_summary(model: Model) -> str:
    """'valid for: reference, cmsis-nn/dsp' for reports ('' when the plan shares no bytes)."""
    if not plan_validity(model).shares_bytes:
        return ""
    found = valid_paths(model)
    return "valid for: " + (", ".join(path.name for path in found) if found else "no build")


def _record_allows(record: PlanRecord, path: KernelPath) -> bool:
    return EVERY_BUILD in record.valid_for or path.name in record.valid_for


def _encoded(model: Model) -> bytes:
    return b"" if model.offline_plan is None else encode_offline_plan(model.offline_plan)


# ---------------------------------------------------------------------------------------------
# The shared bytes


def placed_tensors(model: Model) -> list[PlacedTensor]:
    """Tensors with an offline offset (!= -1) that TFLM honours, in offset order (empty when the
    model has no usable plan)."""
    plan = model.offline_plan
    if plan is None or len(plan.offsets) != model.tensor_count:
        return []
    timeline = execution_timeline(model)
    placed: list[PlacedTensor] = []
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offset = plan.offsets[model.tensor_offset_index(subgraph.index, tensor.index)]
            if offset == -1 or not _offline_planned(tensor):
                continue
            lifetime = timeline.of(subgraph.index, tensor.index)
            placed.append(
                PlacedTensor(
                    subgraph.index,
                    tensor.index,
                    offset,
                    tensor.nbytes,
                    lifetime.first,
                    lifetime.last,
                )
            )
    return sorted(placed, key=lambda t: (t.offset, t.subgraph, t.tensor))


def _offline_planned(tensor: Tensor) -> bool:
    """TFLM honours an offline offset for planned tensors and for variables (§T2)."""
    return tflm_planned(tensor) or (
        tensor.is_variable and not tensor.has_data and tensor.nbytes > 0
    )


def _shared_bytes(model: Model) -> tuple[SharedBytes, ...]:
    placed = placed_tensors(model)
    found: list[SharedBytes] = []
    step_operators: dict[int, int] | None = None
    for index, first in enumerate(placed):
        end = first.offset + first.nbytes
        for second in placed[index + 1 :]:
            if second.offset >= end:
                break
            if first.first > second.last or second.first > first.last:
                continue
            if first.first < 0 or second.first < 0:
                continue  # never written: nothing to overwrite
            if step_operators is None:
                step_operators = _subgraph0_steps(model)
            found.append(_classify(model, first, second, step_operators))
    return tuple(found)


def _subgraph0_steps(model: Model) -> dict[int, int]:
    """Execution step → the subgraph-0 operator that runs at it (run once)."""
    steps: dict[int, int] = {}
    seen: dict[int, int] = {}
    for step in execution_timeline(model).steps:
        if step.subgraph == 0 and step.operator is not None:
            steps[step.step] = step.operator
            seen[step.operator] = seen.get(step.operator, 0) + 1
    return {step: op for step, op in steps.items() if seen[op] == 1}


def _classify(
    model: Model, first: PlacedTensor, second: PlacedTensor, steps: dict[int, int]
) -> SharedBytes:
    if first.subgraph == second.subgraph:
        vela = _vela_operator(model, first, second)
        if vela:
            return SharedBytes(first, second, vela=True)
    if first.subgraph == 0 and second.subgraph == 0:
        for output, source in ((first, second), (second, first)):
            if output.first != source.last:
                continue
            operator = steps.get(output.first)
            if operator is None:
                continue
            op = model.subgraphs[0].operators[operator]
            if output.tensor in op.outputs and source.tensor in op.inputs:
                # Vela places an NPU operator's output over an input its command stream has
                # finished reading: its live ranges run through the NPU schedule's own passes
                # (live_range.py: extract_live_ranges_from_schedule inside the operator's step).
                vela = op.opcode == VELA_OPCODE
                return SharedBytes(first, second, operator, output, source, vela=vela)
    return SharedBytes(first, second)


def _vela_operator(model: Model, first: PlacedTensor, second: PlacedTensor) -> bool:
    """True when both tensors are touched by one ethos-u operator and nothing else."""
    subgraph = model.subgraphs[first.subgraph]
    users: set[int] = set()
    for tensor in (first.tensor, second.tensor):
        users |= set(subgraph.consumers.get(tensor, ()))
        producer = subgraph.producers.get(tensor)
        if producer is not None:
            users.add(producer)
    if len(users) != 1:
        return False
    (operator,) = users
    return subgraph.operators[operator].opcode == VELA_OPCODE


# ---------------------------------------------------------------------------------------------
# Judging them on one code path


def _problems(model: Model, path: KernelPath) -> list[str]:
    found: list[tuple[int, int, str]] = []
    for pair in plan_validity(model).shared:
        if pair.vela:
            continue
        problem = pair_problem(model, pair, path)
        if problem:
            found.append(
                (-1 if pair.operator is None else pair.operator, pair.first.tensor, problem)
            )
    return [problem for _, _, problem in sorted(found)]


def pair_problem(model: Model, pair: SharedBytes, path: KernelPath) -> str:
    """'' when this code path's kernel tolerates the pair, else why not."""
    if pair.operator is None or pair.output is None or pair.input is None:
        return _live_together(model, pair)
    return _kernel_problem(model, pair.operator, pair.output, pair.input, path)


@recent_by_identity(capacity=64)
def _kernel_problem(
    model: Model, operator: int, output: PlacedTensor, source: PlacedTensor, path: KernelPath
) -> str:
    # The access rules load numpy: only models whose plan shares bytes get here.
    from arenalens.runtimes.tflm.kernels.base import KernelContext  # noqa: PLC0415
    from arenalens.runtimes.tflm.overlap import overlap_distance  # noqa: PLC0415

    subgraph = model.subgraphs[0]
    op = subgraph.operators[operator]
    below = source.offset - output.offset
    if below == 0 and _aliased_in_place(model, operator, output.tensor, source.tensor, path):
        return ""
    view = KernelContext(model, subgraph, op, build_for(path))
    answer = overlap_distance(view, source.tensor, output.tensor, (path,))
    where = f"{op.opcode} (op {operator}) writes {_name(model, output)} over {_name(model, source)}"
    if answer.distance is None:
        return f"{where}, which {path.title} never allows ({answer.reason})"
    if below < answer.distance:
        placed = (
            f"starting {format_bytes_exact(below)} below it"
            if below >= 0
            else f"starting {format_bytes_exact(-below)} above it"
        )
        return (
            f"{where} {placed}; {path.title} reads that input after writing over it unless the "
            f"output starts at least {format_bytes_exact(answer.distance)} below "
            f"({answer.pattern})"
        )
    return ""


def _aliased_in_place(
    model: Model, operator: int, output: int, source: int, path: KernelPath
) -> bool:
    """An in-place alias `analysis.inplace` allows, whose kernel this path runs as the reference
    one (RESHAPE, EXPAND_DIMS: no library replaces them); where the kernel has an access order,
    that order decides (distance 0 is an overlap like any other)."""
    from arenalens.analysis.inplace import find_aliases  # noqa: PLC0415
    from arenalens.runtimes.tflm.kernels import registry  # noqa: PLC0415
    from arenalens.runtimes.tflm.kernels.base import AccessOrder  # noqa: PLC0415

    found = find_aliases(model, registry.inplace_of)
    aliases = {(a.operator, a.input, a.output) for a in found if a.subgraph == 0}
    if (operator, source, output) not in aliases or not path.has_rules:
        return False
    opcode = model.subgraphs[0].operators[operator].opcode
    reference = registry.REFERENCE_KERNELS.get(opcode)
    if reference is None or isinstance(reference.access, AccessOrder):
        return False
    own = registry.library_rule(opcode, path.kernels)
    return own is not None and own.access is reference.access


def _live_together(model: Model, pair: SharedBytes) -> str:
    first, second = pair.first, pair.second
    low = max(first.offset, second.offset)
    high = min(first.offset + first.nbytes, second.offset + second.nbytes)
    return (
        f"{_name(model, first)} and {_name(model, second)} share bytes [{low}, {high}) while "
        f"both are live (steps {max(first.first, second.first)} to "
        f"{min(first.last, second.last)}): one overwrites the other on every build"
    )


def _name(model: Model, placed: PlacedTensor) -> str:
    tensor = model.subgraphs[placed.subgraph].tensors[placed.tensor]
    return f"tensor {placed.tensor} '{short_name(tensor.name)}'"


def paths_names(paths: Sequence[KernelPath]) -> tuple[str, ...]:
    """Paths → their names, sorted (a record's valid_for)."""
    return tuple(path.name for path in sorted_paths(paths))


__all__ = [
    "ALL_PATHS",
    "PlacedTensor",
    "PlanValidity",
    "SharedBytes",
    "pair_problem",
    "paths_names",
    "placed_tensors",
    "plan_validity",
    "valid_paths",
    "validity_summary",
    "wrong_everywhere",
    "wrong_outputs",
]
