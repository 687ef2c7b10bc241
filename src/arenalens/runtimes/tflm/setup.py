"""TFLM setup sequence: model + plan facts → every allocation `AllocateTensors` makes, in order.

The sequence is data (`setup_sequence`: a tuple of `setup_replay.Allocation`s) that
`setup_replay` replays against an arena size; struct sizes come from the build's layout
(`setup_layout.layout_for`), kernel allocations from `kernels`. The order follows:

* *MicroAllocator::StartModelAllocation, FinishModelAllocation, CommitStaticMemoryPlan*
  (micro_allocator.cc) and *MicroInterpreter::AllocateTensors* (micro_interpreter.cc).
* *MicroResourceVariables* (micro_resource_variable.cc): the resource-variable table the
  interpreter's owner creates right after the allocator, and the variables' buffers
  (`tflm_resources`).
* Kernel buffers filled while their temps are live (`temp_overlap`): the start addresses at
  which each breaks setup (`Allocation.fails_at`), set here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import attrgetter
from typing import NamedTuple, cast

from arenalens.analysis.lifetimes import ScratchRequest
from arenalens.builds.build import HOST, Build
from arenalens.ir import Model, Tensor
from arenalens.memo import forgettable
from arenalens.planning.problem import align_up
from arenalens.records import record
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.kernels.base import (
    MAX_SCRATCH_PER_OPERATOR,
    Event,
    KernelContext,
    Persistent,
    TempBytes,
    TempTensor,
    TempTensors,
)
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, operator_setups
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.setup_layout import (
    EVAL_TENSORS,
    HOST_64,
    NODES,
    PERSISTENT_BUFFERS,
    PERSISTENT_TENSORS,
    QUANTIZATION,
    VARIABLES,
    RuntimeLayout,
)
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, new_allocation
from arenalens.runtimes.tflm.structs import (
    TEMP_AFFINE_PART,
    TEMP_TENSOR_PART,
    TEMP_ZERO_POINTS_PART,
)
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes

# `Allocation.part` of the two kinds of persistent step a split setup moves: the allocator
# objects Create places (other objects with two buffers) and MicroResourceVariables' table
# (in its own allocator's arena when the variables get one).
RUNTIME_OBJECTS = "runtime objects"
VARIABLE_TABLE = "resource variable table"


_step = new_allocation


def struct_parts(
    layout: RuntimeLayout, channel_count: int | None
) -> tuple[tuple[str, int, int], ...]:
    """(part, bytes, alignment) of a TfLiteTensor struct and its quantization copies (None: the
    tensor has none to copy: `_copied_channels`), in allocation order."""
    alignment = layout.struct_alignment
    struct = (TEMP_TENSOR_PART, layout.tflite_tensor, alignment)
    if channel_count is None:
        return (struct,)
    return (
        struct,
        (TEMP_AFFINE_PART, layout.affine_quantization, alignment),
        (TEMP_ZERO_POINTS_PART, 4 + 4 * channel_count, 4),
    )


def _copied_channels(tensor: Tensor) -> int | None:
    """The channel count of the quantization TFLM copies with the tensor's struct (None: none)."""
    quantization = tensor.quantization
    # TFLM copies quantization only when both scale and zero_point are non-empty.
    if quantization is None or quantization.zero_point is None:
        return None
    return quantization.channel_count


def _tensor_struct(
    tensor: Tensor, layout: RuntimeLayout, action: Action, what: str, *, recorded: bool
) -> list[Allocation]:
    """A TfLiteTensor struct plus its quantization copies, as persistent or temp allocations."""
    # (action, nbytes, alignment, what, category, count, part, hazard, fails_at).
    return [
        _step(
            (
                action,
                nbytes,
                alignment,
                what,
                (PERSISTENT_TENSORS if part == TEMP_TENSOR_PART else QUANTIZATION)
                if recorded
                else "",
                1,
                part,
                None,
                (),
            )
        )
        for part, nbytes, alignment in struct_parts(layout, _copied_channels(tensor))
    ]


@record()
class PlanFacts:
    """What setup needs to know about the plan besides the model."""

    scratch: tuple[ScratchRequest, ...]  # kernel scratch requests, in request order
    planned_buffer_count: int  # buffers given to the planner
    head_bytes: int  # the plan's maximum: the head TFLM reserves
    tail_variables: tuple[tuple[str, int], ...]  # (name, bytes) of variables placed in the tail
    preserve_all_tensors: bool = False  # LinearMemoryPlanner (kPreserveAllTensors)


def setups_with_resources(model: Model, build: Build = HOST) -> tuple[OperatorSetup, ...]:
    """Every operator's setup on a build, with the resource-variable buffers that ASSIGN_VARIABLE
    allocates in its Prepare (they depend on the operators prepared before it: `resources`)."""
    resources = resource_variables(model, build.resource_variables).buffers
    if not resources:  # no ASSIGN_VARIABLE allocates (most models): the setups as they are
        return operator_setups(model, build)
    found: list[OperatorSetup] = []
    for setup in operator_setups(model, build):
        context = setup.context
        buffer = resources.get((context.subgraph.index, context.operator.index))
        if buffer is None:
            found.append(setup)
            continue
        # MicroResourceVariables::Allocate, between fetching the value and releasing it.
        what = f"resource variable '{buffer.shared_name}'"
        allocation = Persistent(tflm_tensor_bytes(buffer.tensor), what)
        found.append(setup._replace(prepare=(*setup.prepare, allocation), kinds=None, holds=None))
    return tuple(found)


def setup_sequence(
    model: Model,
    facts: PlanFacts,
    layout: RuntimeLayout = HOST_64,
    setups: Sequence[OperatorSetup] | None = None,
    *,
    resource_table: int | None = None,
) -> tuple[Allocation, ...]:
    """Model + plan facts → every allocation MicroInterpreter::AllocateTensors makes, in order.

    `setups` (from `setups_with_resources`) may be passed in to share them between replays;
    `resource_table` is the MicroResourceVariables table the firmware creates (None: the Python
    interpreter's count, one per distinct VAR_HANDLE shared_name).
    """
    steps = model_steps(model, layout, facts.preserve_all_tensors, resource_table)
    operators = setups_with_resources(model) if setups is None else setups
    writing = _Writing(layout, steps)
    labels = [_label(setup.context) for setup in operators]  # each used up to three times
    # A remembered setup's steps are made once (`_kept_steps`); the others' are written here.
    kept = [
        None if setup.kinds is None else _kept_steps(writing, setup, label)
        for setup, label in zip(operators, labels, strict=True)
    ]
    # PrepareNodeAndRegistrationDataFromFlatbuffer: builtin options, every operator.
    for setup, label, own in zip(operators, labels, kept, strict=True):
        steps.extend(_options_steps(setup, label) if own is None else own.options)
    # InitSubgraphs: kernel Init.
    for setup, label, own in zip(operators, labels, kept, strict=True):
        if own is not None:
            steps.extend(own.init)
        elif setup.init:
            _kernel_steps(writing, setup.init, setup.context, label, "Init")
    # PrepareSubgraphs: kernel Prepare, then FinishPrepareNodeAllocations.
    pointer = layout.struct_alignment
    heads = heads_after_prepare(operators, facts, layout)
    for setup, label, own, nbytes in zip(operators, labels, kept, heads, strict=True):
        if own is not None:
            steps.extend(own.prepare)
        else:
            _kernel_steps(writing, setup.prepare, setup.context, label, "Prepare")
        steps.append(_RESET_TEMP)
        what = f"scratch requests after {label}"
        steps.append(_step((Action.HEAD, nbytes, pointer, what, "", 1, "", None, ())))
    steps.extend(planning_steps(model, facts, layout))
    steps.extend(io_tensor_steps(model, layout))
    return _with_failing_starts(steps) if writing.hazards else tuple(steps)


def model_steps(
    model: Model, layout: RuntimeLayout, preserve_all_tensors: bool, resource_table: int | None
) -> list[Allocation]:
    """The steps before the operators': the allocator's objects, the resource-variable table,
    StartModelAllocation's eval tensors and nodes."""
    pointer = layout.struct_alignment
    objects = (
        layout.preserve_all_allocator_objects if preserve_all_tensors else layout.allocator_objects
    )
    steps: list[Allocation] = [
        Allocation(
            Action.PERSISTENT, objects, pointer, "allocator and planner", part=RUNTIME_OBJECTS
        )
    ]
    # MicroResourceVariables::Create, between the allocator and the interpreter (tflm_resources).
    capacity = resource_variables(model, resource_table).capacity
    if capacity:
        for nbytes, what in (
            (layout.resource_variables, "resource variable table"),
            (layout.resource_variable * capacity, f"{capacity} resource variable entries"),
        ):
            steps.append(
                Allocation(
                    Action.PERSISTENT,
                    nbytes,
                    ARENA_ALIGNMENT,
                    what,
                    PERSISTENT_BUFFERS,
                    part=VARIABLE_TABLE,
                )
            )
    # StartModelAllocation.
    steps.append(
        Allocation(Action.PERSISTENT, layout.builtin_data_allocator, pointer, "builtin allocator")
    )
    first_head = layout.scratch_request * MAX_SCRATCH_PER_OPERATOR
    steps.append(Allocation(Action.HEAD, first_head, pointer, "scratch request buffer"))
    steps.append(
        Allocation(
            Action.PERSISTENT,
            layout.subgraph_allocations * len(model.subgraphs),
            pointer,
            "subgraph allocations",
        )
    )
    # Per subgraph, its eval tensors; then per subgraph, its nodes and registrations.
    for each_bytes, what, category, attribute in (
        (layout.eval_tensor, "eval tensors", EVAL_TENSORS, "tensors"),
        (layout.node_and_registration, "nodes", NODES, "operators"),
    ):
        for subgraph in model.subgraphs:
            count = len(getattr(subgraph, attribute))
            steps.append(
                Allocation(
                    Action.PERSISTENT,
                    each_bytes * count,
                    pointer,
                    f"{what} of subgraph {subgraph.index}",
                    category,
                    count,
                )
            )
    return steps


def heads_after_prepare(
    operators: Sequence[OperatorSetup], facts: PlanFacts, layout: RuntimeLayout
) -> list[int]:
    """The head FinishPrepareNodeAllocations sizes after each operator's Prepare: room for the
    scratch requests so far and the next operator's most."""
    requests = [0] * len(operators)  # scratch requests made by each operator's Prepare
    for position in _requesting_positions(operators, facts.scratch):
        requests[position] += 1
    so_far = accumulate(requests, initial=MAX_SCRATCH_PER_OPERATOR)
    next(so_far)  # before the first Prepare
    return list(map(layout.scratch_request.__mul__, so_far))


def _requesting_positions(
    operators: Sequence[OperatorSetup], scratch: Sequence[ScratchRequest]
) -> list[int]:
    """Where each scratch request's operator is among `operators`: one setup per operator of the
    model in model order (`operator_setups`) puts it at its subgraph's first position plus its
    index, looked up only for the few requests; any other list is searched."""
    if not scratch:
        return []
    model = operators[0].context.model
    firsts = list(accumulate(map(len, map(_OPERATORS, model.subgraphs)), initial=0))
    if len(operators) != firsts[-1]:
        firsts = []
    found: list[int] = []
    for request in scratch:
        subgraph, operator = request.subgraph, request.operator
        position = firsts[subgraph] + operator if 0 <= subgraph < len(firsts) - 1 else -1
        if 0 <= position < len(operators):
            view = operators[position].context
            if view.subgraph.index == subgraph and view.operator.index == operator:
                found.append(position)
                continue
        found.extend(
            position
            for position, setup in enumerate(operators)
            if (setup.context.subgraph.index, setup.context.operator.index) == (subgraph, operator)
        )
    return found


_OPERATORS = attrgetter("operators")


# ResetTempAllocations after every Prepare: one frozen step shared by all of them.
_RESET_TEMP = Allocation(Action.RESET_TEMP, 0)


def _with_failing_starts(steps: list[Allocation]) -> tuple[Allocation, ...]:
    """Kernel buffers written over live temps get the start addresses at which they break setup
    (`temp_overlap`): temp positions never depend on the arena size, so walk them once."""
    placed: list[Allocation] = []
    head = temp = 0
    # (fetch position, [start, end) of each struct of the temp view)
    live: list[tuple[int, dict[str, tuple[int, int]]]] = []
    for step in steps:
        action = step.action
        if action is Action.TEMP:
            start = align_up(temp, step.alignment)
            temp = start + step.nbytes
            if step.part == TEMP_TENSOR_PART:
                live.append((len(live), {step.part: (start, temp)}))
            elif step.part and live:
                live[-1][1][step.part] = (start, temp)
        elif action is Action.HEAD:
            head = temp = step.nbytes
            live = []
        elif action in (Action.RESET_TEMP, Action.RELEASE_HEAD):
            head = 0 if action is Action.RELEASE_HEAD else head
            temp = head
            live = []
        elif action is Action.PERSISTENT and step.hazard is not None:
            failing = step.hazard.failing_starts(live, step.alignment)
            placed.append(step._replace(fails_at=failing))
            continue
        placed.append(step)
    return tuple(placed)


def planning_steps(model: Model, facts: PlanFacts, layout: RuntimeLayout) -> list[Allocation]:
    """FinishModelAllocation: scratch handles, then CommitStaticMemoryPlan."""
    pointer = layout.struct_alignment
    steps: list[Allocation] = []
    scratch = facts.scratch
    if scratch:
        steps.append(
            Allocation(
                Action.PERSISTENT, layout.scratch_handle * len(scratch), pointer, "scratch handles"
            )
        )
    steps.append(
        Allocation(
            Action.TEMP, layout.pointer_bytes * len(model.subgraphs), pointer, "subgraph offsets"
        )
    )
    steps.append(
        Allocation(
            Action.TEMP,
            layout.allocation_info * (model.tensor_count + len(scratch)),
            pointer,
            "allocation info",
        )
    )
    for name, nbytes in facts.tail_variables:
        steps.append(
            Allocation(Action.PERSISTENT, nbytes, ARENA_ALIGNMENT, f"variable {name}", VARIABLES)
        )
    planner = Action.LINEAR_PLANNER if facts.preserve_all_tensors else Action.PLANNER
    steps.append(Allocation(planner, facts.planned_buffer_count, ARENA_ALIGNMENT, "memory planner"))
    steps.append(Allocation(Action.RESET_TEMP, 0))
    steps.append(Allocation(Action.RELEASE_HEAD, 0))
    steps.append(
        Allocation(Action.HEAD, facts.head_bytes, ARENA_ALIGNMENT, "head (planned buffers)")
    )
    return steps


def io_tensor_steps(model: Model, layout: RuntimeLayout) -> list[Allocation]:
    """The input and output TfLiteTensor structs MicroInterpreter keeps after setup."""
    steps: list[Allocation] = []
    main = model.subgraphs[0]
    for role, indices in (("input", main.inputs), ("output", main.outputs)):
        steps.append(
            Allocation(
                Action.PERSISTENT,
                layout.pointer_bytes * len(indices),
                ARENA_ALIGNMENT,
                f"{role} tensor pointers",
                PERSISTENT_BUFFERS,
            )
        )
        for index in indices:
            tensor = main.tensors[index]
            steps.extend(
                _tensor_struct(
                    tensor, layout, Action.PERSISTENT, f"{role} tensor {index}", recorded=True
                )
            )
    return steps


@dataclass
class _Writing:
    """A sequence being written: the build's sizes, the steps so far, and the temp structs of
    each tensor by id (the same tensor always costs the same temp bytes)."""

    layout: RuntimeLayout
    steps: list[Allocation]
    temp_structs: dict[int, list[Allocation]] = field(default_factory=dict)
    hazards: bool = False  # a kernel buffer written over live temps (`temp_overlap`)


class _OperatorSteps(NamedTuple):
    """One operator's steps in the three passes: its options, its Init, its Prepare (without
    the temp reset and head resize after it)."""

    options: tuple[Allocation, ...]
    init: tuple[Allocation, ...]
    prepare: tuple[Allocation, ...]


# A remembered setup's steps (`OperatorSetup.kinds`: its events are the memo's objects), by
# (its events, the build's layout, the operator's label): whatever model recalls it at that
# place on that build, its steps are these. Each entry keeps the objects its key names by id.
_REMEMBERED_STEPS: dict[
    tuple[int, int, int, str],
    tuple[tuple[object, object, object], _OperatorSteps, bool],
] = {}
_REMEMBERED_CAPACITY = 16384
forgettable(_REMEMBERED_STEPS.clear)


def _kept_steps(writing: _Writing, setup: OperatorSetup, label: str) -> _OperatorSteps:
    """A remembered setup's options, Init and Prepare steps, written once (as `setup_sequence`
    writes any other setup's: `_options_steps`, `_kernel_steps`)."""
    key = (id(setup.init), id(setup.prepare), id(writing.layout), label)
    found = _REMEMBERED_STEPS.get(key)
    if found is not None:
        init, prepare, layout = found[0]
        if init is setup.init and prepare is setup.prepare and layout is writing.layout:
            writing.hazards |= found[2]
            return found[1]
    # Its own steps and hazard flag; the temp structs it shares with the sequence's are equal
    # wherever they were made (the same tensor costs the same temp bytes).
    own = _Writing(writing.layout, [], writing.temp_structs)
    if setup.init:
        _kernel_steps(own, setup.init, setup.context, label, "Init")
    init_steps, own.steps = tuple(own.steps), []
    _kernel_steps(own, setup.prepare, setup.context, label, "Prepare")
    written = _OperatorSteps(tuple(_options_steps(setup, label)), init_steps, tuple(own.steps))
    hazards = own.hazards
    writing.hazards |= hazards
    _REMEMBERED_STEPS[key] = ((setup.init, setup.prepare, writing.layout), written, hazards)
    while len(_REMEMBERED_STEPS) > _REMEMBERED_CAPACITY:
        del _REMEMBERED_STEPS[next(iter(_REMEMBERED_STEPS))]
    return written


def _options_steps(setup: OperatorSetup, label: str) -> list[Allocation]:
    """The operator's parsed builtin options (PrepareNodeAndRegistrationDataFromFlatbuffer)."""
    if setup.builtin_data is None:
        return []
    size, alignment = setup.builtin_data
    return [_step((Action.PERSISTENT, size, alignment, f"options of {label}", "", 1, "", None, ()))]


def _kernel_steps(
    writing: _Writing,
    allocations: Sequence[Event],
    view: KernelContext,
    operator_label: str,
    phase: str,
) -> None:
    """Append one kernel phase's allocations to the steps (one call per operator and phase)."""
    steps, layout, temp_structs = writing.steps, writing.layout, writing.temp_structs
    label = ""  # written when a step needs it: most Prepare events are temp tensors
    for allocation in allocations:
        kind = type(allocation)  # events have no subclasses; most are temp tensors
        if kind is TempTensors or kind is TempTensor:
            # The same tensor always costs the same temp bytes: build its steps once.
            run = allocation if kind is TempTensors else (allocation,)
            for tensor in cast(tuple[Tensor, ...], run):
                cached = temp_structs.get(id(tensor))
                if cached is None:
                    what = f"temp TfLiteTensor for tensor {tensor.index} '{tensor.name}'"
                    cached = _tensor_struct(tensor, layout, Action.TEMP, what, recorded=False)
                    temp_structs[id(tensor)] = cached
                steps.extend(cached)
            continue
        if not label:
            label = f"{phase} of {operator_label}"
        if type(allocation) is Persistent:
            nbytes, what, over = allocation
            hazard = None
            if over is not None:
                writing.hazards = True
                # Only such buffers need the temp structs' members: imported here, not with
                # the setups (its records cost a check's start-up ~9 M instructions).
                from arenalens.runtimes.tflm.temp_overlap import resolve  # noqa: PLC0415

                hazard = resolve(over, nbytes, view.build.abi)
            what = f"{label}: {what}"
            steps.append(
                _step(
                    (
                        Action.PERSISTENT,
                        nbytes,
                        ARENA_ALIGNMENT,
                        what,
                        PERSISTENT_BUFFERS,
                        1,
                        "",
                        hazard,
                        (),
                    )
                )
            )
        elif type(allocation) is TempBytes:
            steps.append(
                Allocation(Action.TEMP, allocation.nbytes, allocation.alignment, f"{label}: temp")
            )


def _label(view: KernelContext) -> str:
    return (
        f"operator {view.operator.index} ({view.operator.opcode}) of subgraph {view.subgraph.index}"
    )
