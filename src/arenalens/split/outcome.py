"""What `optimize --split` did: a model + the build's measure → the split model and its account
(what was cut, the number the build declares before and after, the extra work).

`optimize` hands this the way it measures a model (the minimal kTensorArenaSize on the selected
build of the model planned as `optimize` plans it), so the search keeps a split only for what it
saves on that build: head and tail, the new operators' and tensors' structs, per-channel arrays
and kernel scratch included. The split model is then planned, proven and written like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arenalens.analysis.overlap_pairs import with_overlaps
from arenalens.builds.build import Build
from arenalens.builds.kernel_paths import KernelPath
from arenalens.ir import Model
from arenalens.planning.problem import OverlapSavings
from arenalens.runtimes import get_runtime
from arenalens.split.operators import channel_rule, row_rule
from arenalens.split.parts import Part, RegionSplit
from arenalens.split.schedule import SplitPlan, live_profile
from arenalens.split.search import SearchResult, search_splits


@dataclass(frozen=True)
class Splitting:
    """The split chosen for one build (None: nothing saves) and its account."""

    original_measured: int  # the number to declare without splitting, planned as optimize plans
    plan: SplitPlan | None
    model: Model | None  # the split model (not planned yet)
    measured: int | None  # the number to declare for it, measured the same way
    levels: tuple[str, ...]  # what each level of the search measured
    note: str  # one line: what was split, or why nothing was

    @property
    def splits(self) -> tuple[RegionSplit, ...]:
        """The regions cut, in operator order."""
        return self.plan.splits if self.plan is not None else ()

    @property
    def extra_macs(self) -> int:
        """MACs computed twice per inference (rows of halos)."""
        return self.plan.extra_macs if self.plan is not None else 0

    @property
    def copied_bytes(self) -> int:
        """Bytes the added slices, pads and concatenations write per inference."""
        return self.plan.copied_bytes if self.plan is not None else 0

    @property
    def weight_bytes(self) -> int:
        """Constant bytes added to the file (sliced weights, slice bounds, paddings)."""
        return sum(s.weight_bytes for s in self.splits)

    @property
    def operators_added(self) -> int:
        """Operators the split model has beyond the original's."""
        return sum(len(s.operators) - len(s.region.operators) for s in self.splits)

    @property
    def tensors_added(self) -> int:
        """Tensors the split creates (some take the slots of tensors it made unused)."""
        parts: set[Part] = set()
        for split in self.splits:
            for operator in split.operators:
                parts.update(
                    t for t in (*operator.inputs, *operator.outputs) if isinstance(t, Part)
                )
        return len(parts)


def split_for_build(
    model: Model,
    measure: Callable[[Model], int],
    *,
    overlaps: tuple[Build, Sequence[KernelPath]] | None = None,
) -> Splitting:
    """Search the splits that lower the measured number to declare; say why when none does.

    `overlaps`: the build and the kernel code paths whose allowed overlaps `measure` plans with
    (the search then aims at the steps that stay busiest with them)."""
    credits = overlap_credits(model, *overlaps) if overlaps is not None else None
    result: SearchResult = search_splits(model, measure, credits=credits)
    chosen = result.chosen
    if chosen is None:
        return Splitting(
            result.original_bytes,
            None,
            None,
            None,
            result.rounds,
            f"split: nothing to split saves bytes on this build ({_why_not(model)})",
        )
    described = "; ".join(s.describe() for s in chosen.plan.splits)
    return Splitting(
        result.original_bytes,
        chosen.plan,
        chosen.model,
        chosen.required_bytes,
        result.rounds,
        f"split: {described}",
    )


def overlap_credits(model: Model, build: Build, paths: Sequence[KernelPath]) -> dict[int, int]:
    """Operator of subgraph 0 → the most bytes the overlaps these code paths allow may save at
    its step."""
    tflm = get_runtime("tflm")
    arena = tflm.arenas(model, build)[0]
    pairs = tflm.overlaps(model, arena, paths=paths)
    if not pairs:
        return {}
    savings = OverlapSavings(with_overlaps(arena, pairs).problem)
    # TFLM's step 0 is the subgraph's inputs; operator i runs at step i + 1.
    return {
        operator.index: savings.at(operator.index + 1) for operator in model.subgraphs[0].operators
    }


def _why_not(model: Model) -> str:
    """Why the operator at the busiest step cannot be cut (or that cutting costs more)."""
    if not model.subgraphs or not model.subgraphs[0].operators:
        return "the model has no operators"
    origin = live_profile(model, SplitPlan(0)).peak_origin
    subgraph = model.subgraphs[0]
    operator = subgraph.operators[origin]
    rows = row_rule(model, subgraph, operator)
    channels = channel_rule(model, subgraph, operator, head=True)
    if isinstance(rows, str) and isinstance(channels, str):
        return f"at the busiest step, operator {origin}: {rows}"
    return f"the busiest step is at operator {origin}; its splits cost more tail than they save"
