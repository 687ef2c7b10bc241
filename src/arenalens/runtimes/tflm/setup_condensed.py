"""Condensed setup: the setup sequence (`setup.setup_sequence`) as a check settles it, for the
figures alone, without every step's message.

`condensed_sequence` writes each run of temp allocations as one step and each run of tail
allocations as one where its alignments allow (`_Condensed`); `settled_setup` goes further and
never writes the kernels' Prepare steps: from the first 16-aligned tail allocation on every
residue of the arena size moves alike (`setup_replay.Lockstep`), and each Prepare event is taken
straight into that walk (`_take_prepares`). Either settles to what the whole sequence settles to
(tests/runtimes/tflm/test_setup_condensed.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arenalens.ir import Model, Tensor
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.kernels.base import (
    MAX_SCRATCH_PER_OPERATOR,
    Event,
    Persistent,
    TempBytes,
    TempTensor,
    TempTensors,
)
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup
from arenalens.runtimes.tflm.setup import (
    PlanFacts,
    heads_after_prepare,
    io_tensor_steps,
    model_steps,
    planning_steps,
    struct_parts,
)
from arenalens.runtimes.tflm.setup_layout import RuntimeLayout
from arenalens.runtimes.tflm.setup_replay import (
    NOTHING,
    Action,
    Allocation,
    Lockstep,
    ResidueWalk,
    Settled,
)
from arenalens.runtimes.tflm.setup_replay import new_allocation as _step


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
    condensed = _condensed_before_prepare(model, facts, layout, setups, resource_table)
    if condensed is None:
        return None
    heads = heads_after_prepare(setups, facts, layout)
    # ResetTempAllocations and the head resize after each Prepare: the resize sets the temp
    # end alike.
    if not condensed.phases(zip([setup.prepare for setup in setups], heads, strict=True)):
        return None
    condensed.flush()
    steps = condensed.steps
    steps.extend(planning_steps(model, facts, layout))
    steps.extend(io_tensor_steps(model, layout))
    return tuple(steps)


def settled_setup(
    model: Model,
    facts: PlanFacts,
    layout: RuntimeLayout,
    setups: Sequence[OperatorSetup],
    *,
    resource_table: int | None = None,
) -> Settled | None:
    """`settle(setup_sequence(...))`, for a check: the steps up to the kernels' Prepare condensed
    and walked; every Prepare's events taken straight into the walk (`_take_prepares`), where
    every residue moves alike from the first 16-aligned tail allocation on, never written as
    steps; then the planner's and the I/O structs' steps. None where a kernel buffer is written
    over live temps (as `condensed_sequence`), or where the residues do not yet move alike when
    Prepare starts (no 16-aligned tail allocation before it): settle the condensed sequence."""
    condensed = _condensed_before_prepare(model, facts, layout, setups, resource_table)
    if condensed is None:
        return None
    condensed.flush()
    walk = ResidueWalk(layout.planner_bytes_per_buffer)
    walk.take(condensed.steps)
    lockstep = walk.aligned
    if lockstep is None:
        return None
    heads = heads_after_prepare(setups, facts, layout)
    phases = zip([setup.prepare for setup in setups], heads, strict=True)
    if not _take_prepares(lockstep, phases, layout):
        return None
    walk.take(planning_steps(model, facts, layout))
    walk.take(io_tensor_steps(model, layout))
    return walk.settled()


def _condensed_before_prepare(
    model: Model,
    facts: PlanFacts,
    layout: RuntimeLayout,
    setups: Sequence[OperatorSetup],
    resource_table: int | None,
) -> _Condensed | None:
    """The condensed steps up to the kernels' Prepare (the model's, the options, every Init),
    the last runs still open; None where a buffer is written over live temps."""
    steps = model_steps(model, layout, facts.preserve_all_tensors, resource_table)
    # Temp positions before the planner never depend on the arena size: from the first head.
    condensed = _Condensed(steps, layout, layout.scratch_request * MAX_SCRATCH_PER_OPERATOR)
    condensed.options([setup.builtin_data for setup in setups])
    if not condensed.phases([(setup.init, -1) for setup in setups if setup.init]):
        return None
    return condensed


def _take_prepares(
    lockstep: Lockstep, phases: Iterable[tuple[Sequence[Event], int]], layout: RuntimeLayout
) -> bool:
    """Every kernel's Prepare events, each followed by ResetTempAllocations and the head resized
    (its size in `phases`), taken into the walk's lockstep as `Lockstep.walk` takes the steps
    `setup_sequence` writes for them: one loop, its state in local variables (most events are
    temp tensors). False where a buffer is written over live temps."""
    base, highest, head, temp = lockstep.base, lockstep.highest, lockstep.head, lockstep.temp
    structs = _structs_for(layout)
    parts_of, exact, run_alignment = structs.parts, structs.exact, structs.alignment
    # The highest temp end since the tail last moved (it bounds the tail before the next move).
    highest_end = nothing = NOTHING
    for events, resized in phases:
        for event in events:
            kind = type(event)
            if kind is TempTensors and not temp % run_alignment:
                # The usual run, from an aligned temp end: each view's bytes added, no alignment
                # to follow (`_Structs.exact`); a channel count not met yet is walked below.
                end = temp
                try:
                    for tensor in event:  # type: ignore[union-attr]
                        quantization = tensor.quantization  # type: ignore[union-attr]
                        end += exact[
                            None
                            if quantization is None or quantization.zero_point is None
                            else quantization.channel_count
                        ]
                except KeyError:
                    pass
                else:
                    temp = end  # temp only grows over a run: its end is the highest
                    if temp > highest_end:  # noqa: PLR1730 - max() is a call, per event
                        highest_end = temp
                    continue
            if kind is TempTensors or kind is TempTensor:
                # `_after_temps`, inline: its call would cost about as much as the run's turn here
                # (callgrind: VWW ~2K of ~5K per run); this is the check's walk, every run of
                # every operator.
                for tensor in event if kind is TempTensors else (event,):  # type: ignore[union-attr]
                    quantization = tensor.quantization  # type: ignore[union-attr]
                    channels = (
                        None
                        if quantization is None or quantization.zero_point is None
                        else quantization.channel_count
                    )
                    entry = parts_of.get(channels)
                    if entry is None:
                        entry = structs.entry(channels)
                    total, aligned, parts = entry
                    if aligned and not temp % aligned:
                        temp += total
                    else:
                        for _, nbytes, alignment in parts:
                            temp = -(-temp // alignment) * alignment + nbytes
                # Temp only grows over a run: its end is the highest.
                if temp > highest_end:  # noqa: PLR1730 - max() is a call, per event
                    highest_end = temp
            elif kind is Persistent:
                if event.written is not None:  # type: ignore[union-attr]
                    return False
                if highest_end != nothing:
                    if highest_end - base > highest:  # noqa: PLR1730
                        highest = highest_end - base
                    highest_end = nothing
                base -= event.nbytes  # type: ignore[union-attr]
                base -= base % ARENA_ALIGNMENT
                if head - base > highest:  # noqa: PLR1730
                    highest = head - base
            elif kind is TempBytes:
                alignment = event.alignment  # type: ignore[union-attr]
                temp = -(-temp // alignment) * alignment + event.nbytes  # type: ignore[union-attr]
                if temp > highest_end:  # noqa: PLR1730
                    highest_end = temp
        # ResetTempAllocations, then FinishPrepareNodeAllocations resizes the head.
        head = temp = resized
        if head > highest_end:  # noqa: PLR1730
            highest_end = head
    if highest_end != nothing and highest_end - base > highest:
        highest = highest_end - base
    lockstep.base, lockstep.highest, lockstep.head, lockstep.temp = base, highest, head, temp
    lockstep.temp_known = True
    return True


def _after_temps(tensors: Sequence[Tensor], temp: int, structs: _Structs) -> int:
    """The temp end after temp tensor views fetched from `temp` on, one after another: each a
    TfLiteTensor struct and its quantization copies (`setup.struct_parts`; their `_run_of` in
    `structs`, by channel count). One call per run of them (`TempTensors`)."""
    parts_of = structs.parts
    for tensor in tensors:
        # `setup._copied_channels`, inline: a call per tensor would cost about as much as the
        # rest of its turn here (this runs for every temp tensor of every operator, per check).
        quantization = tensor.quantization
        channels = (
            None
            if quantization is None or quantization.zero_point is None
            else quantization.channel_count
        )
        entry = parts_of.get(channels)
        if entry is None:
            entry = structs.entry(channels)
        total, aligned, parts = entry
        if aligned and not temp % aligned:
            temp += total
        else:
            for _, nbytes, alignment in parts:
                temp = -(-temp // alignment) * alignment + nbytes
    return temp


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


class _Structs:
    """A layout's temp tensor views by the channel count they copy (None: no quantization), filled
    as met: each one's `_run_of(struct_parts)` (`parts`), and in `exact` the bytes of those that
    take exactly their bytes from an `alignment`-aligned temp end and leave it so aligned (the
    largest alignment of a view's parts): a run of them from such an end moves it by their sum."""

    __slots__ = ("alignment", "exact", "layout", "parts")

    def __init__(self, layout: RuntimeLayout) -> None:
        self.layout = layout
        self.parts: dict[int | None, _Parts] = {}
        self.exact: dict[int | None, int] = {}
        self.alignment = max(alignment for _, _, alignment in struct_parts(layout, 1))

    def entry(self, channels: int | None) -> _Parts:
        """The `_run_of` of a view copying `channels` zero points, found once."""
        found = self.parts.get(channels)
        if found is None:
            found = self.parts[channels] = _run_of(struct_parts(self.layout, channels))
            total, aligned, _ = found
            if aligned and not self.alignment % aligned and not total % self.alignment:
                self.exact[channels] = total
        return found


# By layout (its id, the layout kept to check it): its `_Structs`. A function of the build's
# struct sizes alone, as the layout is: kept for the process, like the layouts (`layout_for`), a
# few builds' worth.
_STRUCTS: dict[int, tuple[RuntimeLayout, _Structs]] = {}
_STRUCTS_LAYOUTS = 64


def _structs_for(layout: RuntimeLayout) -> _Structs:
    """The temp views met so far on this layout."""
    found = _STRUCTS.get(id(layout))
    if found is None or found[0] is not layout:
        if len(_STRUCTS) >= _STRUCTS_LAYOUTS:
            _STRUCTS.clear()
        found = _STRUCTS[id(layout)] = (layout, _Structs(layout))
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
        "run_start",
        "steps",
        "structs",
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
        self.structs = _structs_for(layout)

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
        temp, run_start, structs = self.temp, self.run_start, self.structs
        tail_bytes, tail_alignment, steps = self.tail_bytes, self.tail_alignment, self.steps
        behind, layout = self.behind, self.layout
        pointer = layout.struct_alignment
        for events, head in phases:
            for event in events:
                kind = type(event)
                if kind is TempTensors or kind is TempTensor or kind is TempBytes:
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
                    if kind is TempBytes:  # (rare)
                        alignment = event.alignment  # type: ignore[union-attr]
                        temp = -(-temp // alignment) * alignment + event.nbytes  # type: ignore[union-attr]
                        continue
                    temp = _after_temps(
                        event if kind is TempTensors else (event,),  # type: ignore[arg-type]
                        temp,
                        structs,
                    )
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
