"""Choosing splits: a model → the split plan whose kTensorArenaSize is smallest on one build.

The search lowers a target for the busiest step level by level (each 15% below the last peak
reached). At each level it covers every step over the target: around the operator running at the
first such step it lists every region and every way to cut it (bands of rows, channel groups, 2
to 10 parts) that brings all of the region's steps under the target, and takes the cheapest (the
fewest new operators, tensors and per-channel data, the least extra work). Several steps usually
sit at one peak, and one split alone would only add tail bytes; a level splits them all. Each
level's plan is then *measured* with the caller's `measure` (the number the build declares for
the split model, planned as `optimize` plans it). The best measured plan is kept, and the search
stops when a level cannot be covered or two levels in a row measure no better. Nothing is kept
on the estimate alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.split.bands import split_bands
from arenalens.split.channels import split_channels
from arenalens.split.lowering import write_split
from arenalens.split.parts import Part, Region, RegionSplit, Role, SplitKind
from arenalens.split.regions import Rules, regions
from arenalens.split.schedule import LiveProfile, SplitPlan, live_profile, region_peak
from arenalens.units import format_bytes_exact

# Ways to cut a region: bands of rows / channel groups (TFLM's CONCATENATION joins at most 10).
BAND_COUNTS = (2, 3, 4, 5, 6, 8, 10)
GROUP_COUNTS = (2, 3, 4, 6, 8)
# Regions tried around the busiest operator: at most this many operators long.
SEARCH_REGION_OPERATORS = 16
# Each level's target is a fraction of the busiest step the last level reached: the first of
# these that can be covered; levels at most; levels in a row that measure no better before the
# search stops.
LEVEL_STEPS = (0.85, 0.92, 0.97)
# Regions one level may split (a model with more busy steps than this stays as it is).
MAX_SPLITS_PER_LEVEL = 64
MAX_LEVELS = 16
PATIENCE = 2
# Tail estimate per new operator and tensor (node, registration, kernel data; eval tensor) and
# per output channel of a convolution (its per-channel multiplier and shift): for ranking only.
_TAIL_PER_OPERATOR = 128
_TAIL_PER_TENSOR = 16
_TAIL_PER_CHANNEL = 8

Measure = Callable[[Model], int]


@dataclass(frozen=True)
class Measured:
    """A plan with the split model it writes and the bytes the build declares for it."""

    plan: SplitPlan
    required_bytes: int
    data: bytes
    model: Model


@dataclass(frozen=True)
class SearchResult:
    """The chosen plan (None: no split declares fewer bytes) and what each round measured."""

    original_bytes: int
    chosen: Measured | None
    rounds: tuple[str, ...] = ()
    refusals: tuple[str, ...] = field(default=())


def search_splits(
    model: Model,
    measure: Measure,
    *,
    kinds: tuple[SplitKind, ...] = (SplitKind.BANDS, SplitKind.CHANNELS),
    subgraph: int = 0,
    max_levels: int = MAX_LEVELS,
    credits: Mapping[int, int] | None = None,
) -> SearchResult:
    """Split the busiest steps level by level while the measured number to declare falls.

    `credits`: bytes each original operator's allowed overlaps save at its step (the profile
    the levels lower is then the one the planner can reach with overlaps)."""
    rules = Rules.of(model, subgraph)
    cuts = _Cuts(rules, kinds, credits or {})
    original_bytes = measure(model)
    if not rules.subgraph.operators:
        return SearchResult(original_bytes, None, ("the subgraph has no operators",))
    best: Measured | None = None
    plan = SplitPlan(subgraph)
    peak = cuts.profile(model, plan).peak
    notes: list[str] = []
    worse = 0
    for _ in range(max_levels):
        covered: SplitPlan | str = "no level tried"
        for step in LEVEL_STEPS:
            covered = _cover(model, rules, plan, int(peak * step), cuts)
            if not isinstance(covered, str):
                break
        if isinstance(covered, str):
            notes.append(covered)
            break
        plan = covered
        target = peak = cuts.profile(model, plan).peak
        measured = _measure(model, plan, measure)
        bar = original_bytes if best is None else best.required_bytes
        if measured is None:
            notes.append(
                f"busiest step {format_bytes_exact(target)}: the build cannot set the split "
                "model up"
            )
            break
        notes.append(
            f"busiest step {format_bytes_exact(target)} ({len(plan.splits)} splits): "
            f"{format_bytes_exact(measured.required_bytes)} to declare"
        )
        if measured.required_bytes < bar:
            best, worse = measured, 0
        else:
            worse += 1
            if worse >= PATIENCE:
                break
    return SearchResult(original_bytes, best, tuple(notes))


def _cover(
    model: Model,
    rules: Rules,
    plan: SplitPlan,
    target: int,
    cuts: _Cuts,
) -> SplitPlan | str:
    """Split until no step lives more than `target` bytes (or say which step cannot)."""
    for _ in range(min(len(rules.subgraph.operators) + 1, MAX_SPLITS_PER_LEVEL)):
        profile = cuts.profile(model, plan)
        over = [step for step, live in enumerate(profile.steps) if live > target]
        if not over:
            return plan
        origin = profile.origins[over[0]]
        cheapest: tuple[tuple[int, int], RegionSplit] | None = None
        for region, kind in cuts.regions_around(plan, origin):
            # More parts cost more tail: a region's cheapest cut is the fewest parts that fit.
            for split in cuts.splits(region, kind):
                if region_peak(model, profile, split) > target:
                    continue
                cost = (_tail_estimate(split), split.extra_macs + split.copied_bytes)
                if cheapest is None or cost < cheapest[0]:
                    cheapest = (cost, split)
                break
        if cheapest is None:
            return (
                f"operator {origin}: no split brings its step "
                f"({format_bytes_exact(profile.steps[over[0]])}) under {format_bytes_exact(target)}"
            )
        plan = plan.with_split(cheapest[1])
    return f"more than {MAX_SPLITS_PER_LEVEL} regions would need splitting at one level"


class _Cuts:
    """Regions and their cuts, each computed once per search."""

    def __init__(
        self, rules: Rules, kinds: tuple[SplitKind, ...], credits: Mapping[int, int]
    ) -> None:
        self.rules = rules
        self.kinds = kinds
        self.credits = credits
        self.cache: dict[tuple[Region, SplitKind, int], RegionSplit | str] = {}
        self.found: dict[tuple[int, SplitKind], tuple[Region, ...]] = {}

    def profile(self, model: Model, plan: SplitPlan) -> LiveProfile:
        """The plan's live bytes per step, overlap credits taken."""
        return live_profile(model, plan, self.credits)

    def regions_around(self, plan: SplitPlan, origin: int) -> Iterator[tuple[Region, SplitKind]]:
        """Every region around `origin` that contains each split it overlaps."""
        for kind in self.kinds:
            key = (origin, kind)
            if key not in self.found:
                self.found[key] = tuple(
                    regions(self.rules, kind, around=origin, max_operators=SEARCH_REGION_OPERATORS)
                )
            for region in self.found[key]:
                inside = set(region.operators)
                if any(
                    inside & set(s.region.operators) and not set(s.region.operators) <= inside
                    for s in plan.splits
                ):
                    continue
                yield region, kind

    def splits(self, region: Region, kind: SplitKind) -> Iterator[RegionSplit]:
        """The region's cuts into 2, 3, ... parts (those that exist), fewest parts first."""
        counts = BAND_COUNTS if kind is SplitKind.BANDS else GROUP_COUNTS
        cut = split_bands if kind is SplitKind.BANDS else split_channels
        for parts in counts:
            key = (region, kind, parts)
            if key not in self.cache:
                self.cache[key] = cut(self.rules, region, parts)
            split = self.cache[key]
            if not isinstance(split, str):
                yield split


def _tail_estimate(split: RegionSplit) -> int:
    """A rough tail cost of a split's new operators and tensors (ranking only)."""
    tensors: set[Part] = set()
    channels = 0
    for operator in split.operators:
        tensors.update(t for t in (*operator.inputs, *operator.outputs) if isinstance(t, Part))
        if operator.role is Role.COMPUTE and operator.macs:
            output = operator.outputs[0]
            channels += output.shape[-1] if isinstance(output, Part) else 0
    return (
        _TAIL_PER_OPERATOR * len(split.operators)
        + _TAIL_PER_TENSOR * len(tensors)
        + _TAIL_PER_CHANNEL * channels
    )


def _measure(model: Model, plan: SplitPlan, measure: Measure) -> Measured | None:
    """Write the plan and measure it (None: the build cannot set the split model up)."""
    try:
        data, written = write_split(model, plan)
        return Measured(plan, measure(written), data, written)
    except ArenalensError:
        return None
