"""The remedy ladder: a TFLM model that does not fit → the rewrites `arenalens optimize` can make,
tried in order, each with the number to declare it reaches, what it costs and the command that
gets there; the first that fits is the answer.

The rungs, cheapest first (each command adds its option to the ones below that helped):

1. as given: TFLM's own plan;
2. offline plan (`optimize`): tensors and scratch planned together, written as TFLM's
   OfflineMemoryAllocation; no change to operators or outputs, right on every build;
3. reorder + in-place (`--reorder --inplace`): another operator order, elementwise operators
   writing over an input only they read;
4. overlap (`--overlap`): outputs start below the inputs they consume, as far as the kernels'
   access order allows; right only on the kernel libraries it was planned for;
5. split (`--overlap --split`): large activations computed in parts by stock operators (more
   operators to register, bytes copied per inference); the only rung below the lower bound of
   plans that keep tensors whole.

Only past the last rung do a smaller input or another board help. A rung is computed as its
command computes it (`optimize_model` with the same build, overlap rules, board and effort:
`effort.OPTIMIZE_EFFORT`, optimize's own default, so the figure a rung promises is the one its
printed command writes, byte for byte), without running the real interpreter (the command
keeps a plan only when the real runtime computes bit-identical outputs, which the flow
campaign checks), and the climb stops at the first rung that fits: a model that fits as given
runs no optimizer. The first rung that fits is also checked as written (`fit.written_check`:
its placement in the board's banks, what it leaves, TIGHT), so the step that promises it and
`check` of the model it writes give one answer.
"""

from __future__ import annotations

import enum
import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from arenalens.builds.records import KERNEL_LIBRARIES
from arenalens.planning.problem import missing_extra_note
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the optimizer loads only when a model does not fit
    from arenalens.builds.build import Build
    from arenalens.builds.kernel_paths import OverlapRules
    from arenalens.ir import Model
    from arenalens.optimization import Optimization
    from arenalens.targets import Target


class Remedy(enum.StrEnum):
    """One rung, by what it changes."""

    AS_GIVEN = "as given"
    OFFLINE_PLAN = "offline plan"
    REORDER = "reorder + in-place"
    OVERLAP = "overlap"
    SPLIT = "split"


# The options of `arenalens optimize` each remedy adds.
REMEDY_OPTIONS: Mapping[Remedy, tuple[str, ...]] = {
    Remedy.AS_GIVEN: (),
    Remedy.OFFLINE_PLAN: (),
    Remedy.REORDER: ("--reorder", "--inplace"),
    Remedy.OVERLAP: ("--overlap",),
    Remedy.SPLIT: ("--split",),
}
REWRITES = (Remedy.OFFLINE_PLAN, Remedy.REORDER, Remedy.OVERLAP, Remedy.SPLIT)


# How a step names each rewrite ('rewritten with ... it fits').
_REMEDY_WORDS = {
    Remedy.OFFLINE_PLAN: "an offline plan",
    Remedy.REORDER: "another operator order and in-place operators",
    Remedy.OVERLAP: "outputs sliding over the inputs they consume (--overlap)",
    Remedy.SPLIT: "large activations split into parts (--split) and overlaps",
}


@dataclass(frozen=True, slots=True)
class Rung:
    """One remedy tried: the number to declare it reaches, whether that fits, what it costs."""

    remedy: Remedy
    required_bytes: int
    fits: bool
    options: tuple[str, ...] = ()  # optimize's options that reach it ('' for as given)
    cost: str = ""  # what the firmware pays: extra operators and work, libraries it is right on
    valid_on: tuple[str, ...] = ()  # kernel code paths its plan is right on; () every build
    operators_added: int = 0
    copied_bytes: int = 0  # per inference, by the split's slices, pads and concatenations
    extra_macs: int = 0  # recomputed in halos per inference
    # The install command of the extra whose exact search its plan went without ('' none:
    # `Optimization.missing_extra`): with it the number may be lower.
    missing_extra: str = ""

    @property
    def rewrites(self) -> bool:
        """True for a rung `arenalens optimize` writes (all but 'as given')."""
        return self.remedy is not Remedy.AS_GIVEN

    def as_dict(self) -> dict[str, Any]:
        """JSON form (`remedies` of check, report and the Python API)."""
        return {
            "remedy": self.remedy.value,
            "required_bytes": self.required_bytes,
            "fits": self.fits,
            "optimize_options": list(self.options) if self.rewrites else None,
            "cost": self.cost,
            "valid_on": list(self.valid_on) or None,
            "operators_added": self.operators_added,
            "copied_bytes_per_inference": self.copied_bytes,
            "extra_macs_per_inference": self.extra_macs,
            "missing_extra": self.missing_extra or None,
        }

    @property
    def extra_note(self) -> str:
        """'; planned without OR-Tools' exact search, which may lower it: pip install ...' for
        the text beside its number, else ''."""
        return missing_extra_note(self.missing_extra)

    @property
    def words(self) -> str:
        """The rewrite in words ('outputs sliding over the inputs they consume (--overlap)')."""
        return _REMEDY_WORDS.get(self.remedy, self.remedy.value)


@dataclass(frozen=True)
class Ladder:
    """The rungs tried, in order, up to the first that fits (or all of them)."""

    rungs: tuple[Rung, ...]
    available_bytes: int
    # The lower bound of plans that keep tensors whole, in the model's own order.
    whole_tensor_bound: int

    @property
    def first_fit(self) -> Rung | None:
        """The cheapest rung that fits; None when none does."""
        return next((rung for rung in self.rungs if rung.fits), None)

    @property
    def fits(self) -> bool:
        """True when some rung fits."""
        return self.first_fit is not None

    @property
    def best(self) -> Rung:
        """The rung with the smallest number (the cheapest of equals)."""
        return min(self.rungs, key=lambda rung: rung.required_bytes)

    @property
    def answer(self) -> Rung:
        """The rung the verdict leads with: the first that fits, else the smallest reached."""
        return self.first_fit or self.best

    @property
    def missing_extra(self) -> str:
        """The install command of the extra whose exact search could change the answer ('' none):
        a rung up to the answer planned without it above its lower bound (`Rung.missing_extra`),
        so with it the answer's number may be lower, a cheaper rung may fit, or one fit at all."""
        end = self.rungs.index(self.answer) + 1 if self.fits else len(self.rungs)
        return next((rung.missing_extra for rung in self.rungs[:end] if rung.missing_extra), "")

    @property
    def complete(self) -> bool:
        """True when every rung was tried (none fits before the last)."""
        return len(self.rungs) == len(REWRITES) + 1

    def as_list(self) -> list[dict[str, Any]]:
        """JSON form."""
        return [rung.as_dict() for rung in self.rungs]


def as_given(required_bytes: int, available_bytes: int, whole_tensor_bound: int) -> Ladder:
    """The ladder of a model that fits as given (or of a runtime with no rewrites): one rung."""
    rung = Rung(Remedy.AS_GIVEN, required_bytes, required_bytes <= available_bytes)
    return Ladder((rung,), available_bytes, whole_tensor_bound)


def climb(
    model: Model,
    *,
    build: Build,
    rules: OverlapRules,
    required_bytes: int,
    available_bytes: int,
    whole_tensor_bound: int,
    floor_bytes: int = 0,
    effort: float,
    cache: dict[tuple[str, ...], Optimization] | None = None,
    target: Target | None = None,
) -> Ladder:
    """Try each rung in order until one fits (see the module docstring). `floor_bytes`: what no
    rewrite lowers (TFLM's tail); `cache`: optimizations already made for this model and build,
    by their options (`check --target all` climbs once per build for many boards)."""
    rungs = [Rung(Remedy.AS_GIVEN, required_bytes, required_bytes <= available_bytes)]
    options: tuple[str, ...] = ()
    smallest = required_bytes
    for remedy in REWRITES:
        if rungs[-1].fits:
            break
        added = REMEDY_OPTIONS[remedy]
        if remedy is Remedy.SPLIT and "--overlap" not in options:
            added = ("--overlap", *added)  # split aims at the steps overlaps leave busiest
        tried = (*options, *added)
        if floor_bytes > available_bytes:
            break  # no rewrite lowers the tail: nothing fits
        optimization = (cache or {}).get(tried) or rewrite(
            model, tried, build=build, rules=rules, effort=effort, target=target
        )
        if cache is not None:
            cache[tried] = optimization
        if not optimization.runs:
            break
        reached = optimization.new_required_bytes
        rungs.append(_rung(remedy, optimization, tried, available_bytes))
        if reached < smallest:
            # Later rungs keep an option only when it lowered the number.
            options, smallest = tried, reached
    return Ladder(tuple(rungs), available_bytes, whole_tensor_bound)


def rewrite(
    model: Model,
    options: tuple[str, ...],
    *,
    build: Build,
    rules: OverlapRules,
    effort: float,
    target: Target | None = None,
) -> Optimization:
    """What `arenalens optimize` with these options computes for the build (without the real
    runtime's proof, which only ever drops a rewrite the access rules allowed). The same rewrite
    asked again in this process (check's text then its JSON, a report after a check, the
    --max-input search at the model's own size, a notebook) is answered from `_REWRITES`: a
    split search takes seconds (the answer is the same: searches stop on counted work)."""
    from arenalens.optimization import optimize_model  # noqa: PLC0415 - only when needed

    key = _rewrite_key(model, options, build=build, rules=rules, target=target)
    found = _REWRITES.get(key)
    if found is not None and found[0] == effort:  # the same search: the same bytes
        _REWRITES.move_to_end(key)
        return found[1]
    optimization = optimize_model(
        model,
        reorder="--reorder" in options,
        inplace="--inplace" in options,
        overlap=rules if "--overlap" in options else False,
        split="--split" in options,
        effort=effort,
        build=build,
        target=target,
        prove_inplace=False,
    )
    _REWRITES[key] = (effort, optimization)
    while len(_REWRITES) > _REWRITES_KEPT:
        _REWRITES.popitem(last=False)
    return optimization


def rewrite_class(build: Build, rules: OverlapRules) -> tuple[Any, ...]:
    """What a rewrite's figures depend on, without the names: builds that differ only in the
    core they are named for (a Cortex-M4, M7 and M33 with CMSIS-NN's DSP path, one ABI, one
    TFLM and CMSIS-NN release) reach the same figures, so `check --target all` rewrites once for
    all their boards. The core's record reaches the figures only through these fields and the
    kernel paths of the rules (`kernel_paths.overlap_rules`)."""
    return (
        _unnamed(build),
        rules.paths,
        tuple(_unnamed(size_build) for size_build in rules.size_builds),
        rules.explicit,
    )


def _unnamed(build: Build) -> Build:
    return replace(build, name="", title="", core=None, kernels_named_by=None)


# The rewrites made in this process, most recent last (each holds its rewritten model's bytes).
_REWRITES: OrderedDict[tuple[Any, ...], tuple[float, Optimization]] = OrderedDict()
_REWRITES_KEPT = 16


def _rewrite_key(
    model: Model,
    options: tuple[str, ...],
    *,
    build: Build,
    rules: OverlapRules,
    target: Target | None,
) -> tuple[Any, ...]:
    """What a rewrite depends on: the model's bytes and its (possibly resized) graph, the
    options, the build, the kernels' rules and the board."""
    digest = hashlib.sha256(model.data).digest()
    shapes = tuple(
        tuple(tensor.shape for tensor in subgraph.tensors) for subgraph in model.subgraphs
    )
    board = None if target is None else (target.name, target.banks)  # what optimize reads of it
    return (digest, shapes, options, build, rules, board)


def _rung(
    remedy: Remedy, optimization: Optimization, options: tuple[str, ...], available_bytes: int
) -> Rung:
    reached = optimization.new_required_bytes
    valid_on = tuple(path.name for path in optimization.valid_for)
    splitting = optimization.split
    added = splitting.operators_added if splitting is not None else 0
    copied = splitting.copied_bytes if splitting is not None else 0
    macs = splitting.extra_macs if splitting is not None else 0
    return Rung(
        remedy,
        reached,
        reached <= available_bytes,
        options=options,
        cost=rung_cost(remedy, valid_on=valid_on, added=added, copied=copied, macs=macs),
        valid_on=valid_on,
        operators_added=added,
        copied_bytes=copied,
        extra_macs=macs,
        missing_extra=optimization.missing_extra,
    )


def rung_cost(
    remedy: Remedy, *, valid_on: tuple[str, ...], added: int, copied: int, macs: int
) -> str:
    """What a rung costs the firmware, in one phrase."""
    parts = []
    if remedy is Remedy.OFFLINE_PLAN:
        parts.append("no change to operators or outputs")
    if remedy is Remedy.REORDER:
        parts.append("operators in another order, outputs unchanged")
    if added:
        work = f"{format_bytes_exact(copied)} copied per inference"
        if macs:
            work += f", {macs:,} MACs recomputed"
        parts.append(f"+{added} operators ({work})")
    if valid_on:
        parts.append(f"its plan is right on {libraries_text(valid_on)} only")
    elif remedy is not Remedy.AS_GIVEN:
        parts.append("right on every kernel library")
    return "; ".join(parts)


def libraries_text(paths: tuple[str, ...]) -> str:
    """'reference and CMSIS-NN kernels' for every CMSIS-NN code path; 'CMSIS-NN (dsp path)' for
    one: each library by its record's title, with the code paths named when not all of them."""
    by_library: dict[str, list[str]] = {}
    for path in paths:
        library, _, code_path = path.partition("/")
        by_library.setdefault(library, []).append(code_path)
    words = []
    for library, code_paths in by_library.items():
        record = KERNEL_LIBRARIES.get(library)
        title = library if record is None else record.title
        every = record is None or {path.name for path in record.code_paths} <= set(code_paths)
        named = [path for path in code_paths if path]
        words.append(title if every or not named else f"{title} ({', '.join(named)} path)")
    return " and ".join(words) + " kernels"


def rung_title(rung: Rung) -> str:
    """'split + overlap' for the split rung (it always allows overlaps), else the remedy."""
    if rung.remedy is Remedy.SPLIT:
        return "split + overlap"
    return rung.remedy.value


def rungs_text(ladder: Ladder) -> str:
    """'offline plan 328,032 B, overlap 328,032 B, split + overlap 193,048 B': what each rewrite
    reached."""
    return ", ".join(
        f"{rung_title(rung)} {format_bytes_exact(rung.required_bytes)}"
        for rung in ladder.rungs
        if rung.rewrites
    )
