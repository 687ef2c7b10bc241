"""A split plan: region splits laid into their subgraph → the new operator list and its live bytes.

The live-bytes profile (every activation's aligned size, summed over the steps it lives, as TFLM's
lifetimes count them) is what the search ranks candidates by before it measures the few best on
the build's own budget: no plan of the operators can be smaller than its busiest step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arenalens.ir import Model, Subgraph
from arenalens.split.parts import Part, PartOperator, RegionSplit, TensorRef

ALIGNMENT = 16  # TFLM rounds every planned buffer up to MicroArenaBufferAlignment()

Entry = int | PartOperator  # an original operator kept, or an operator of a split


@dataclass(frozen=True)
class SplitPlan:
    """Non-overlapping region splits of one subgraph."""

    subgraph: int
    splits: tuple[RegionSplit, ...] = ()

    def entries(self, model: Model) -> list[Entry]:
        """The subgraph's new operator list: each region replaced by its split, in place."""
        subgraph = model.subgraphs[self.subgraph]
        starts = {s.region.first: s for s in self.splits}
        covered = {i for s in self.splits for i in s.region.operators}
        entries: list[Entry] = []
        for operator in subgraph.operators:
            split = starts.get(operator.index)
            if split is not None:
                entries.extend(split.operators)
            elif operator.index not in covered:
                entries.append(operator.index)
        return entries

    def with_split(self, split: RegionSplit) -> SplitPlan:
        """This plan with `split` added, dropping the splits its region overlaps."""
        ops = set(split.region.operators)
        kept = tuple(s for s in self.splits if not ops & set(s.region.operators))
        ordered = sorted((*kept, split), key=lambda s: s.region.first)
        return SplitPlan(self.subgraph, tuple(ordered))

    @property
    def extra_macs(self) -> int:
        """MACs computed twice over every split."""
        return sum(s.extra_macs for s in self.splits)

    @property
    def copied_bytes(self) -> int:
        """Bytes the added slices, pads and concatenations write, per inference."""
        return sum(s.copied_bytes for s in self.splits)


@dataclass(frozen=True)
class LiveProfile:
    """Aligned activation bytes live at each step of a subgraph's operator list."""

    steps: tuple[int, ...]
    origins: tuple[int, ...]  # the original operator each step computes (part of)
    sizes: Mapping[TensorRef, int]  # aligned bytes of every activation
    first: Mapping[TensorRef, int]  # the step each activation starts living
    last: Mapping[TensorRef, int]  # and its last step

    @property
    def peak(self) -> int:
        """The busiest step's bytes."""
        return max(self.steps, default=0)

    @property
    def peak_origin(self) -> int:
        """The original operator running at the busiest step."""
        return self.origins[self.steps.index(self.peak)] if self.steps else 0


def live_profile(
    model: Model, plan: SplitPlan, credits: Mapping[int, int] | None = None
) -> LiveProfile:
    """A plan → its live bytes per step (subgraph inputs live from the first step, outputs to
    the last, every activation from the step that writes it to the last that reads it), less
    `credits`: bytes an original operator kept whole may share between its output and a dying
    input (allowed overlaps; the parts of a split get none, which errs high)."""
    subgraph = model.subgraphs[plan.subgraph]
    entries = plan.entries(model)
    if not entries:
        return LiveProfile((), (), {}, {}, {})
    first: dict[TensorRef, int] = {}
    last: dict[TensorRef, int] = {}
    for index in subgraph.inputs:
        first[index] = 0
    origins: list[int] = []
    for step, entry in enumerate(entries):
        inputs, outputs, origin = _tensors(subgraph, entry)
        origins.append(origin)
        for tensor in outputs:
            first.setdefault(tensor, step)
            last[tensor] = max(last.get(tensor, step), step)
        for tensor in inputs:
            last[tensor] = step
    end = len(entries) - 1
    for index in subgraph.outputs:
        last[index] = end
        first.setdefault(index, end)
    # A difference array: +size where a tensor starts living, -size after its last step.
    changes = [0] * (len(entries) + 1)
    sizes: dict[TensorRef, int] = {}
    for tensor, start in first.items():
        size = _aligned_bytes(subgraph, tensor)
        if not size:
            continue
        sizes[tensor] = size
        last[tensor] = max(last.get(tensor, start), start)
        changes[start] += size
        changes[last[tensor] + 1] -= size
    steps: list[int] = []
    running = 0
    for step, change in enumerate(changes[:-1]):
        running += change
        entry = entries[step]
        credit = credits.get(entry, 0) if credits and isinstance(entry, int) else 0
        steps.append(running - credit)
    return LiveProfile(tuple(steps), tuple(origins), sizes, first, last)


def region_peak(model: Model, profile: LiveProfile, split: RegionSplit) -> int:
    """The busiest step of `split` laid into the plan `profile` was made for, in place of its
    region (which that plan computes whole or by splits inside it)."""
    subgraph = model.subgraphs[split.region.subgraph]
    covered = set(split.region.operators)
    steps = [step for step, origin in enumerate(profile.origins) if origin in covered]
    start, end = min(steps), max(steps)
    source = split.region.source
    inputs = set(subgraph.inputs)
    # Activations live at every step of the region that it neither writes nor reads last: they
    # stay live at every step of the split (the source too, when read after the region).
    through = 0
    for tensor, size in profile.sizes.items():
        written_inside = start <= profile.first[tensor] <= end and tensor not in inputs
        if written_inside or profile.first[tensor] > start or profile.last[tensor] < end:
            continue
        if tensor != source or profile.last[tensor] > end:
            through += size
    first: dict[TensorRef, int] = {}
    last: dict[TensorRef, int] = {}
    for step, operator in enumerate(split.operators):
        for tensor in operator.outputs:
            first.setdefault(tensor, step)
            last[tensor] = step
        for tensor in operator.inputs:
            if isinstance(tensor, Part) or tensor == source:
                last[tensor] = step
    if profile.last.get(source, end) <= end:
        first[source] = 0
    else:
        last.pop(source, None)
    changes = [0] * (len(split.operators) + 1)
    for tensor, begin in first.items():
        size = _aligned_bytes(subgraph, tensor)
        changes[begin] += size
        changes[last.get(tensor, begin) + 1] -= size
    peak = running = 0
    for change in changes[:-1]:
        running += change
        peak = max(peak, running)
    return through + peak


def _tensors(
    subgraph: Subgraph, entry: Entry
) -> tuple[Sequence[TensorRef], Sequence[TensorRef], int]:
    if isinstance(entry, int):
        operator = subgraph.operators[entry]
        return (
            [t for t in operator.inputs if t >= 0],
            [t for t in operator.outputs if t >= 0],
            entry,
        )
    return (
        [t for t in entry.inputs if not isinstance(t, int) or t >= 0],
        list(entry.outputs),
        entry.origin,
    )


def _aligned_bytes(subgraph: Subgraph, tensor: TensorRef) -> int:
    if isinstance(tensor, Part):
        size = 0 if tensor.data is not None else tensor.nbytes
    else:
        original = subgraph.tensors[tensor]
        size = 0 if original.is_constant or original.is_variable else original.nbytes
    return -(-size // ALIGNMENT) * ALIGNMENT
