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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import NamedTuple

from arenalens.analysis.lifetimes import ScratchRequest
from arenalens.builds.build import HOST, Build
from arenalens.ir import Model, Tensor
from arenalens.memo import forgettable
from arenalens.planning.problem import align_up
from arenalens.runtimes.tflm import temp_overlap
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.kernels.base import (
    MAX_SCRATCH_PER_OPERATOR,
    Event,
    KernelContext,
    Persistent,
    TempBytes,
    TempTensor,
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
from arenalens.runtimes.tflm.setup_replay import Action, Allocation
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes

# `Allocation.part` of the two kinds of persistent step a split setup moves: the allocator
# objects Create places (other objects with two buffers) and MicroResourceVariables' table
# (in its own allocator's arena when the variables get one).
RUNTIME_OBJECTS = "runtime objects"
VARIABLE_TABLE = "resource variable table"


# `Allocation` from all its fields in one C call: a setup sequence is hundreds of steps a check,
# and the NamedTuple's own constructor is a Python function (it fills in defaults).
_step = partial(tuple.__new__, Allocation)


def _struct_parts(
    layout: RuntimeLayout, channel_count: int | None
) -> tuple[tuple[str, int, int], ...]:
    """(part, bytes, alignment) of a TfLiteTensor struct and its quantization copies (None: the
    tensor has none to copy: `_copied_channels`), in allocation order."""
    alignment = layout.struct_alignment
    struct = (temp_overlap.TENSOR, layout.tflite_tensor, alignment)
    if channel_count is None:
        return (struct,)
    return (
        struct,
        (temp_overlap.AFFINE, layout.affine_quantization, alignment),
        (temp_overlap.ZERO_POINTS, 4 + 4 * channel_count, 4),
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
                (PERSISTENT_TENSORS if part == temp_overlap.TENSOR else QUANTIZATION)
                if recorded
                else "",
                1,
                part,
                None,
                (),
            )
        )
        for part, nbytes, alignment in _struct_parts(layout, _copied_channels(tensor))
    ]


@dataclass(frozen=True)
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
        found.append(replace(setup, prepare=(*setup.prepare, allocation), kinds=None, holds=None))
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
    steps = _model_steps(model, layout, facts.preserve_all_tensors, resource_table)
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
    heads = _heads_after_prepare(operators, facts, layout)
    for setup, label, own, nbytes in zip(operators, labels, kept, heads, strict=True):
        if own is not None:
            steps.extend(own.prepare)
        else:
            _kernel_steps(writing, setup.prepare, setup.context, label, "Prepare")
        steps.append(_RESET_TEMP)
        what = f"scratch requests after {label}"
        steps.append(_step((Action.HEAD, nbytes, pointer, what, "", 1, "", None, ())))
    steps.extend(_planning_steps(model, facts, layout))
    steps.extend(_io_tensor_steps(model, layout))
    return _with_failing_starts(steps) if writing.hazards else tuple(steps)


def condensed_sequence(
    model: Model,
    facts: PlanFacts,
    layout: RuntimeLayout,
    setups: Sequence[OperatorSetup],
    *,
    resource_table: int | None = None,
) -> tuple[Allocation, ...] | None:
    """`setup_sequence` as `setup_replay.settle` needs it, for a check that wants the figures
    and not every step's message: the operators' steps without messages, each run of temp
    allocations one step, each run of tail allocations one step where its alignments allow
    (`_Condensed`). Settled, it gives what the whole sequence gives; replayed at a size that
    fails, it may stop at another step. None where a kernel buffer is written over live temps
    (`temp_overlap`: its failing starts need every temp struct's place)."""
    steps = _model_steps(model, layout, facts.preserve_all_tensors, resource_table)
    # Temp positions before the planner never depend on the arena size: from the first head.
    condensed = _Condensed(steps, layout, layout.scratch_request * MAX_SCRATCH_PER_OPERATOR)
    condensed.options([setup.builtin_data for setup in setups])
    if not condensed.phases([(setup.init, -1) for setup in setups if setup.init]):
        return None
    heads = _heads_after_prepare(setups, facts, layout)
    # ResetTempAllocations and the head resize after each Prepare: the resize sets the temp
    # end alike.
    if not condensed.phases(zip([setup.prepare for setup in setups], heads, strict=True)):
        return None
    condensed.flush()
    steps.extend(_planning_steps(model, facts, layout))
    steps.extend(_io_tensor_steps(model, layout))
    return tuple(steps)


def _model_steps(
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


def _heads_after_prepare(
    operators: Sequence[OperatorSetup], facts: PlanFacts, layout: RuntimeLayout
) -> list[int]:
    """The head FinishPrepareNodeAllocations sizes after each operator's Prepare: room for the
    scratch requests so far and the next operator's most."""
    scratch_per_operator: dict[tuple[int, int], int] = {}
    for request in facts.scratch:
        key = (request.subgraph, request.operator)
        scratch_per_operator[key] = scratch_per_operator.get(key, 0) + 1
    heads: list[int] = []
    requests_so_far = 0
    for setup in operators:
        if scratch_per_operator:
            view = setup.context
            key = (view.subgraph.index, view.operator.index)
            requests_so_far += scratch_per_operator.get(key, 0)
        heads.append(layout.scratch_request * (requests_so_far + MAX_SCRATCH_PER_OPERATOR))
    return heads


def _run_of(
    parts: tuple[tuple[str, int, int], ...],
) -> tuple[int, int, tuple[tuple[str, int, int], ...]]:
    """(bytes, alignment, parts) of allocations made one after another: from a start aligned to
    that alignment they take exactly those bytes (each size a multiple of it, each alignment
    dividing it); alignment 0 where no such alignment exists."""
    aligned = max(alignment for _, _, alignment in parts)
    if any(aligned % alignment or nbytes % aligned for _, nbytes, alignment in parts):
        aligned = 0
    return sum(nbytes for _, nbytes, _ in parts), aligned, parts


_TAIL, _TEMP, _HEAD = Action.PERSISTENT, Action.TEMP, Action.HEAD

_Parts = tuple[int, int, tuple[tuple[str, int, int], ...]]  # a temp struct's `_run_of`
# By layout (its id, the layout kept to check it): channel count → a temp struct's
# `_run_of(_struct_parts)`. A function of the build's struct sizes alone, as the layout is: kept
# for the process, like the layouts (`layout_for`), a few builds' worth.
_PARTS: dict[int, tuple[RuntimeLayout, dict[int | None, _Parts]]] = {}
_PARTS_LAYOUTS = 64


def _parts_for(layout: RuntimeLayout) -> dict[int | None, _Parts]:
    """The temp struct parts found so far on this layout (filled by `_Condensed`)."""
    found = _PARTS.get(id(layout))
    if found is None or found[0] is not layout:
        if len(_PARTS) >= _PARTS_LAYOUTS:
            _PARTS.clear()
        found = _PARTS[id(layout)] = (layout, {})
    return found[1]


class _Condensed:
    """The operators' steps written for `settle` alone (`condensed_sequence`).

    A run of temp allocations is one temp step from where the run starts to where it ends (temp
    only grows within it, and a check against the tail holds for the whole run iff for its end).
    The run goes on over tail allocations that a later temp allocation of the run follows: that
    one's end is at least as high and the tail then at least as low, so its check holds only if
    the earlier ones' do (the tail allocations check the head, never temp). A run of tail
    allocations is one step where every later one's alignment divides the first's and its
    rounded size is a multiple of it (the tail then stays aligned to the first's, and each later
    one moves it by exactly its rounded size; the tail only falls, so the head check at the end
    holds for the run). Steps keep their order: a temp run the open tail run follows
    (`behind`) is written before it."""

    __slots__ = (
        "behind",
        "layout",
        "parts",
        "run_start",
        "steps",
        "tail_alignment",
        "tail_bytes",
        "temp",
    )

    def __init__(self, steps: list[Allocation], layout: RuntimeLayout, temp: int) -> None:
        self.steps, self.layout, self.temp = steps, layout, temp
        self.run_start = -1  # where the open temp run starts (-1: none open)
        self.tail_bytes = self.tail_alignment = 0  # the open tail run (alignment 0: none)
        # The open tail run started after the open temp run's last allocation (else no tail
        # run is open while a temp run is).
        self.behind = False
        self.parts = _parts_for(layout)

    def options(self, sizes: Sequence[tuple[int, int] | None]) -> None:
        """Every operator's parsed options, (bytes, alignment) or None: tail allocations, the
        open tail run in local variables."""
        if self.run_start >= 0:
            self._close_temp()
        tail_bytes, tail_alignment, steps = self.tail_bytes, self.tail_alignment, self.steps
        for size in sizes:
            if size is None:
                continue
            nbytes, alignment = size
            if tail_alignment:
                if not tail_alignment % alignment:
                    rounded = -(-nbytes // alignment) * alignment
                    if not rounded % tail_alignment:
                        tail_bytes += rounded
                        continue
                steps.append(_step((_TAIL, tail_bytes, tail_alignment, "", "", 1, "", None, ())))
            tail_bytes, tail_alignment = nbytes, alignment
        self.tail_bytes, self.tail_alignment = tail_bytes, tail_alignment

    def events(self, events: Sequence[Event], head: int = -1) -> bool:
        """One kernel phase's events, then (`head` >= 0) the head resized to `head` bytes, the
        temp end with it; False where a buffer is written over live temps."""
        return self.phases(((events, head),))

    def phases(self, phases: Iterable[tuple[Sequence[Event], int]]) -> bool:
        """Kernel phases in order, each (its events, the head size after it or -1: `events`):
        one loop for all of a model's Init or Prepare phases, the open runs followed in local
        variables (a phase is a handful of events, most of them temp tensors, and a model has
        tens of phases: per-phase calls and attribute traffic would cost more than the events).
        """
        temp, run_start, parts_of = self.temp, self.run_start, self.parts
        tail_bytes, tail_alignment, steps = self.tail_bytes, self.tail_alignment, self.steps
        behind, pointer = self.behind, self.layout.struct_alignment
        for events, head in phases:
            for event in events:
                kind = type(event)
                if kind is TempTensor or kind is TempBytes:
                    if run_start < 0 or behind:
                        # The open tail run is written; the temp run starts, or goes on over it.
                        if tail_alignment:
                            steps.append(
                                _step((_TAIL, tail_bytes, tail_alignment, "", "", 1, "", None, ()))
                            )
                            tail_alignment = 0
                        if run_start < 0:
                            run_start = temp
                        behind = False
                    if kind is not TempTensor:  # TempBytes (rare)
                        alignment = event.alignment  # type: ignore[union-attr]
                        temp = -(-temp // alignment) * alignment + event.nbytes  # type: ignore[union-attr]
                        continue
                    # `_copied_channels`, inline: the parts of its struct and quantization copies.
                    quantization = event.tensor.quantization  # type: ignore[union-attr]
                    channels = (
                        None
                        if quantization is None or quantization.zero_point is None
                        else quantization.channel_count
                    )
                    entry = parts_of.get(channels)
                    if entry is None:
                        entry = self._parts_of(channels)
                    total, aligned, parts = entry
                    if aligned and not temp % aligned:
                        temp += total
                        continue
                    for _, nbytes, alignment in parts:
                        temp = -(-temp // alignment) * alignment + nbytes
                elif kind is Persistent:
                    if event.written is not None:  # type: ignore[union-attr]
                        return False
                    # A tail allocation, 16-aligned: into the open tail run where it may join.
                    nbytes = event.nbytes  # type: ignore[union-attr]
                    if tail_alignment:
                        if not tail_alignment % ARENA_ALIGNMENT:
                            rounded = -(-nbytes // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
                            if not rounded % tail_alignment:
                                tail_bytes += rounded
                                continue
                        if behind:  # the temp run before the tail run, written first
                            steps.append(
                                _step((_TEMP, temp - run_start, 1, "", "", 1, "", None, ()))
                            )
                            run_start, behind = -1, False
                        steps.append(
                            _step((_TAIL, tail_bytes, tail_alignment, "", "", 1, "", None, ()))
                        )
                    elif run_start >= 0:
                        behind = True
                    tail_bytes, tail_alignment = nbytes, ARENA_ALIGNMENT
            if head >= 0:
                # The head resized: the open runs written (the temp run first, a tail run open
                # with it follows it), the temp end moves to it.
                if run_start >= 0:
                    steps.append(_step((_TEMP, temp - run_start, 1, "", "", 1, "", None, ())))
                    run_start, behind = -1, False
                if tail_alignment:
                    steps.append(
                        _step((_TAIL, tail_bytes, tail_alignment, "", "", 1, "", None, ()))
                    )
                    tail_alignment = 0
                steps.append(_step((_HEAD, head, pointer, "", "", 1, "", None, ())))
                temp = head
        self.temp, self.run_start, self.behind = temp, run_start, behind
        self.tail_bytes, self.tail_alignment = tail_bytes, tail_alignment
        return True

    def _parts_of(self, channels: int | None) -> _Parts:
        """A temp tensor's `_run_of(_struct_parts)`, by the channels its quantization copies."""
        entry = self.parts[channels] = _run_of(_struct_parts(self.layout, channels))
        return entry

    def temp_bytes(self, nbytes: int, alignment: int) -> None:
        """A temp allocation: the open temp run grows (over the open tail run, written)."""
        self.events((TempBytes(nbytes, alignment),))

    def flush(self) -> None:
        """Write the open runs, the temp run first (a tail run open with it follows it)."""
        if self.run_start >= 0:
            self._close_temp()
        if self.tail_alignment:
            self._close_tail()

    def _close_temp(self) -> None:
        nbytes = self.temp - self.run_start
        self.steps.append(_step((_TEMP, nbytes, 1, "", "", 1, "", None, ())))
        self.run_start, self.behind = -1, False

    def _close_tail(self) -> None:
        nbytes, alignment = self.tail_bytes, self.tail_alignment
        self.steps.append(_step((_TAIL, nbytes, alignment, "", "", 1, "", None, ())))
        self.tail_alignment = 0


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
            if step.part == temp_overlap.TENSOR:
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


def _planning_steps(model: Model, facts: PlanFacts, layout: RuntimeLayout) -> list[Allocation]:
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


def _io_tensor_steps(model: Model, layout: RuntimeLayout) -> list[Allocation]:
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
        if type(allocation) is TempTensor:  # events have no subclasses; most are temp tensors
            # The same tensor always costs the same temp bytes: build its steps once.
            tensor = allocation.tensor
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
                hazard = temp_overlap.resolve(over, nbytes, view.build.abi)
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
