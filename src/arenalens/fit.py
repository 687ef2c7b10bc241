"""Fit check: the number to declare vs the RAM a budget, a board, or every board offers.

The number compared is the arena the user must declare (`declared.py`; TFLM: the minimal
kTensorArenaSize, head + tail + setup; LiteRT: arenas + persistent arenas) against
`budget - reserve`, where the reserve is RAM the rest of the firmware keeps (stacks, heap, DMA).
Besides "does it fit as it is", a check that does not fit climbs the remedy ladder
(`ladder.py`: offline plan, reorder + in-place, overlap, split, each computed as its
`arenalens optimize` command computes it) to the first rewrite that fits; only past its last rung
do a smaller input or another board help. A model that fits as given runs no optimizer.

A Vela-compiled model needs more than its arena in the SRAM its Ethos-U NPU reaches: the fast
memory of a Dedicated_Sram compilation, the weights of a Sram_Only one (`vela/placement.py`). It
fits only when those pieces have a place too (`FitCheck.npu`), as it is and after optimize.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import field, replace
from functools import cached_property, partial
from types import MappingProxyType
from typing import TYPE_CHECKING

from arenalens.blocks import Block, largest_block
from arenalens.builds.build import Build
from arenalens.declared import DeclaredArena, Status, StatusAnswers, declared_arena
from arenalens.errors import UsageError
from arenalens.pipeline import Analysis, ArenaResult
from arenalens.plan_validity import plan_conflicts
from arenalens.records import record
from arenalens.target_build import runtime_runs_on
from arenalens.targets import Target
from arenalens.units import format_bytes_exact
from arenalens.vela import is_vela_compiled

if TYPE_CHECKING:
    from arenalens.builds.build import Build
    from arenalens.builds.kernel_paths import OverlapRules
    from arenalens.ir import Model
    from arenalens.ladder import Ladder
    from arenalens.optimization import Optimization
    from arenalens.placement import BankUse, BoardPlacement
    from arenalens.runtimes import MemoryBudget
    from arenalens.runtimes.arena_split import ArenaSplit
    from arenalens.vela.placement import NpuFit


ADDRESS_SPACE_32 = 1 << 32  # bytes a 32-bit core addresses: no arena is larger
DELEGATES = ("xnnpack", "none")  # LiteRT's, as `runtimes/litert/heap.py` models them
# A fit with less headroom than this share of the available bytes is FITS, TIGHT.
TIGHT_MARGIN_PERCENT = 5


@record()
class FitCheck(StatusAnswers):
    """Does one model's arena fit a budget? With the numbers behind the answer."""

    model: str
    source: str
    declared: DeclaredArena
    budget_bytes: int  # --budget, or the target's arena limit
    reserve_bytes: int
    target: Target | None
    # The analysis's arenas, planned: `best_case_bytes` is worked out of them when asked.
    arenas: tuple[ArenaResult, ...] = field(default=(), repr=False, compare=False)
    # The remedies tried when it does not fit as given (None: not climbed, or not TFLM).
    ladder: Ladder | None = None
    budget_text: str = ""  # the budget as the user typed it ("320KB")
    # True when the reserve is the target's usual firmware's (no --reserve given).
    reserve_is_default: bool = False
    assumptions: tuple[str, ...] = ()
    # The build the number is for (None for LiteRT); `declared` says it in words and says why it
    # may be off.
    build: Build | None = None
    # Where each part goes on a board with several RAM banks (`placement.py`); None for a
    # budget, a board with one bank, or a number that is not the runtime's own split.
    placement: BoardPlacement | None = None
    # A Vela-compiled model's SRAM pieces (arena, fast memory, SRAM weights) against the board's
    # banks the NPU reaches, or the budget (None: the model has no NPU operator). The arena is
    # one piece there: its scratch, which the NPU addresses, must sit in a bank it reaches.
    npu: NpuFit | None = None
    # On a target with RAM banks: the largest block one arena can take, less the reserve only
    # when the SDK's data bank is in it (`blocks.largest_block`): the reserve is taken once,
    # from the bank that holds it. None: the budget less the reserve.
    block: Block | None = None
    # The check of the model the ladder's first fitting rung writes, on the same budget or board
    # and reserve: what `arenalens check` of the written model answers (placement, spare,
    # TIGHT), computed once so that the step promising it and that check say the same.
    written: FitCheck | None = None

    @cached_property
    def best_case_bytes(self) -> int:
        """What the number would be if every arena were packed to the lower bound of plans that
        keep tensors whole (in the model's operator order): overlaps and splits go below it.
        Worked out when first asked (the remedy ladder, --json, the steps): a check that fits
        reads none of it."""
        wasted = sum(max(0, result.plan.arena_size - result.lower_bound) for result in self.arenas)
        return self.required_bytes - wasted

    @property
    def runtime(self) -> str:
        """The runtime whose rules made the number."""
        return self.declared.runtime

    @property
    def planner(self) -> str:
        """The plan the number is for."""
        return self.declared.planner

    @property
    def required_bytes(self) -> int:
        """The number to declare."""
        return self.declared.required_bytes

    @property
    def parts(self) -> Mapping[str, int]:
        """The number's parts by name (TFLM: head, tail, setup)."""
        return MappingProxyType({part.name: part.nbytes for part in self.declared.parts})

    @property
    def available_bytes(self) -> int:
        """What one arena may use: the budget minus the reserve, or on a board with RAM banks
        its largest block (minus the reserve where the firmware keeps it)."""
        if self.block is not None:
            return self.block.available_bytes
        return self.budget_bytes - self.reserve_bytes

    @property
    def reserve_taken_bytes(self) -> int:
        """The part of the reserve `available_bytes` is short of: all of it for a budget, none
        when the board's firmware keeps it in another bank than the arena's."""
        if self.block is not None:
            return self.block.reserved_bytes
        return self.reserve_bytes

    @property
    def headroom_bytes(self) -> int:
        """Available minus required: spare bytes, negative when short."""
        return self.available_bytes - self.required_bytes

    @property
    def tightest_use(self) -> BankUse | None:
        """Placed in the board's banks: the buffer with the least to spare in its bank (the one
        `spare_bytes`, the margin and a check's headroom count); None when not placed."""
        placement = self.placement
        if placement is None or placement.best is None:
            return None
        return min(placement.best.uses, key=lambda use: use.spare_bytes)

    @property
    def spare_available_bytes(self) -> int:
        """What `spare_bytes` is counted against: placed in banks, the block of the buffer with
        the least to spare; else `available_bytes`. `spare_available_bytes - spare_bytes` is the
        bytes in that block (`spare_part_bytes`)."""
        use = self.tightest_use
        return self.available_bytes if use is None else use.block.available_bytes

    @property
    def spare_part_bytes(self) -> int:
        """The bytes `spare_bytes` is what is left of: the tightest buffer when placed in banks
        (the whole number for one arena), else the number to declare."""
        use = self.tightest_use
        return self.required_bytes if use is None else use.nbytes

    @property
    def spare_block(self) -> Block | None:
        """The block `spare_bytes` is counted in: the tightest buffer's when placed in banks;
        unplaced on a board with banks, the largest block one arena can take; None for a
        budget."""
        use = self.tightest_use
        return self.block if use is None else use.block

    @property
    def spare_where(self) -> str:
        """Where `spare_bytes` is counted, in words: the block ('dtcm'), with the part when it is
        not the whole number ('internal-dram (persistent 27,072 B)'); '' for a budget."""
        block = self.spare_block
        if block is None:
            return ""
        if self.spare_part_bytes == self.required_bytes:
            return block.name
        use = self.tightest_use
        assert use is not None
        return f"{block.name} ({use.part} {format_bytes_exact(use.nbytes)})"

    @property
    def margin_bytes(self) -> int:
        """The headroom below which a fit is TIGHT (`TIGHT_MARGIN` of the available bytes; placed
        in banks, of the block of the buffer with the least to spare)."""
        return _margin(self.spare_available_bytes)

    @property
    def margin_percent(self) -> int:
        """The margin as a share of the available bytes."""
        return TIGHT_MARGIN_PERCENT

    @property
    def tight(self) -> bool:
        """True when it fits with less headroom than the margin (placed in banks: any buffer
        with less than the margin of its block): a firmware update, a larger stack or a library
        release may take it."""
        if not self.fits:
            return False
        placement = self.placement
        if placement is not None and placement.best is not None:
            return any(
                use.spare_bytes < _margin(use.block.available_bytes) for use in placement.best.uses
            )
        return self.spare_bytes < self.margin_bytes

    @property
    def spare_bytes(self) -> int:
        """What is left: placed in the board's banks, the least any of its buffers leaves in its
        bank; else the headroom of the one arena in the largest block (negative: short, as the
        remedy ladder counts it)."""
        use = self.tightest_use
        return self.headroom_bytes if use is None else use.spare_bytes

    @property
    def meaningful(self) -> bool:
        """True when the number to declare means what it says: the model runs, correctly, at
        a known input size. Nothing that presumes a number is said otherwise."""
        return self.declared.status.gives_a_number

    @property
    def npu_fits(self) -> bool:
        """False when the arena fits but the NPU's other pieces do not fit beside it (or the
        driver refuses the fast memory firmware gives)."""
        return self.npu is None or self.npu.fits

    @property
    def fits(self) -> bool:
        """True when the number means something and fits: as one arena in the largest block,
        or split across the board's banks (`placement`), with the NPU's pieces beside it."""
        if not self.meaningful or not self.npu_fits:
            return False
        return self.headroom_bytes >= 0 or (self.placement is not None and self.placement.fits)

    @property
    def placed_apart(self) -> bool:
        """True when it fits only with its parts in separate banks (or in a bank the largest
        static block does not count, such as external RAM)."""
        return self.fits and self.headroom_bytes < 0

    def room(self) -> str:
        """Where a fitting model goes and what it leaves, as its check says it: '44,520 B to
        spare in sram1', 'persistent 30,052 B in sram1, non-persistent 163,088 B in dtcm;
        1,024 B to spare', '2,048 B to spare', with ', FITS, TIGHT (under the 5% margin)'
        below the margin (the remedy step's promise of the written model)."""
        placement = None if self.placement is None else self.placement.best
        spare = format_bytes_exact(self.spare_bytes)
        if placement is not None and placement.kind != "one arena":
            text = f"{placement.summary()}; {spare} to spare"
        elif placement is not None:
            text = f"{spare} to spare in {placement.uses[0].block.name}"
        else:
            text = f"{spare} to spare"
        if self.tight:
            text += f", FITS, TIGHT (under the {self.margin_percent}% margin)"
        return text

    def room_after(self, required_bytes: int) -> str:
        """What a rewrite declaring `required_bytes` leaves: as the check of the model it writes
        says it (`written`, `room`). When that check is for a smaller number (--cpu alone: the
        rewrite's number holds on every library the core may link, the check is for the
        default one), both: the headroom at the rewrite's number, then the check's own."""
        written = self.written
        if written is not None and written.required_bytes == required_bytes:
            return written.room()
        spare = f"{format_bytes_exact(self.available_bytes - required_bytes)} to spare"
        if written is None or written.build is None:
            return spare
        return (
            f"{spare}; the check below, for {written.build.name} alone, says "
            f"{format_bytes_exact(written.required_bytes)} with {written.room()}"
        )

    def _npu_fits_at(self, arena_bytes: int) -> bool:
        """Whether the NPU's pieces would fit beside an arena of this size."""
        return self.npu is None or self.npu.at_arena(arena_bytes).fits

    @property
    def optimized_bytes(self) -> int | None:
        """The number to declare after the remedy the verdict leads with (the first rewrite that
        fits, else the smallest reached); None when no rewrite was tried."""
        if self.ladder is None or len(self.ladder.rungs) < 2:
            return None
        return self.ladder.answer.required_bytes

    @property
    def optimized_missing_extra(self) -> str:
        """The extra whose exact search could change `optimized_bytes` or whether a rewrite
        fits (`Ladder.missing_extra`; '' none)."""
        if self.ladder is None or len(self.ladder.rungs) < 2:
            return ""
        return self.ladder.missing_extra

    @property
    def fits_after_optimize(self) -> bool | None:
        """Whether some `arenalens optimize` rewrite makes it fit: True when it fits already,
        None when the ladder was not climbed."""
        if not self.meaningful:
            return False
        if self.fits:
            return True
        if self.runtime != "tflm":
            return False  # LiteRT takes no offline plan
        if self.ladder is None:
            return None
        rung = self.ladder.first_fit
        return rung is not None and self._npu_fits_at(rung.required_bytes)

    @property
    def optimize_decides(self) -> bool:
        """True when only the remedy ladder can tell whether a rewrite makes it fit."""
        return (
            self.runtime == "tflm"
            and self.meaningful
            and not self.fits
            and self.ladder is None
            and self._npu_fits_at(0)
        )

    @property
    def tail_bytes(self) -> int:
        """What no rewrite lowers (TFLM's tail: persistent structs and kernel data)."""
        return self.parts.get("tail", 0)


def _margin(available_bytes: int) -> int:
    return -(-available_bytes * TIGHT_MARGIN_PERCENT // 100)


def check_fit(
    analysis: Analysis,
    *,
    budget_bytes: int | None = None,
    target: Target | None = None,
    reserve_bytes: int | None = None,
    budget_text: str = "",
    fast_memory_bytes: int | None = None,
    weights_in_sram: bool = False,
    delegate: str | None = None,
    threads: int = 1,
    isa: str = "",
) -> FitCheck:
    """Analysis + budget (or target) + reserve → FitCheck; UsageError for impossible budgets.
    Without a reserve a target keeps what its usual firmware takes (`Target.firmware`), a
    budget nothing.
    For a Vela-compiled model, `fast_memory_bytes` is the fast_memory_size firmware hands
    `ethosu_init` (None: what the model needs) and `weights_in_sram` says it was compiled with
    Sram_Only (its weights are a piece in SRAM too).
    Under LiteRT the number compared is what the app needs (`litert_memory`: the model file and
    the interpreter's peak heap) under `delegate` (None: XNNPACK, LiteRT's default), on `isa`
    (None: the Linux device's, refined by its core)."""
    if budget_bytes is not None and target is None:
        budget = budget_bytes
    elif target is not None and budget_bytes is None:
        budget = target.arena_limit_bytes
    else:
        raise UsageError("give exactly one of --budget SIZE or --target NAME")
    build = analysis.build
    if build is not None and build.pointer_bytes == 4 and budget > ADDRESS_SPACE_32:
        raise UsageError(
            f"a budget of {format_bytes_exact(budget)} is more than a 32-bit build "
            f"({build.name}) can address (4 GiB)"
        )
    reserve_is_default = reserve_bytes is None
    if reserve_bytes is None:
        reserve_bytes = 0 if target is None else target.reserve_bytes
    if reserve_bytes < 0:
        raise UsageError(f"--reserve must not be negative, got {reserve_bytes}")
    if reserve_bytes >= budget:
        raise UsageError(
            f"--reserve {format_bytes_exact(reserve_bytes)} leaves nothing of the "
            f"{format_bytes_exact(budget)} budget"
        )
    runtime_runs_on(analysis.runtime, target)
    if delegate is not None and (analysis.runtime != "litert" or delegate not in DELEGATES):
        raise UsageError(
            f"delegate {delegate!r}: LiteRT's delegate is one of {', '.join(DELEGATES)} "
            "(--runtime litert)"
        )
    if analysis.runtime == "litert":
        from arenalens.litert_memory import (  # noqa: PLC0415
            DEFAULT_DELEGATE,
            litert_memory,
            target_isa,
        )

        declared = litert_memory(
            analysis,
            delegate or DEFAULT_DELEGATE,
            isa=target_isa(target, isa),
            threads=threads,
        )
    else:
        declared = _for_vendor_kernels(
            _for_core(declared_arena(analysis), target), analysis, target
        )
    npu = _npu_fit(
        analysis,
        declared,
        target,
        budget - reserve_bytes,
        fast_memory_bytes=fast_memory_bytes,
        weights_in_sram=weights_in_sram,
    )
    placement = None
    budget_of = analysis.budget
    if (
        target is not None
        and len(target.banks) > 1
        and budget_of.splits
        and declared.status.gives_a_number
        and budget_of.required_bytes == declared.required_bytes
        # A Vela-compiled model's arena holds the NPU's scratch: it goes whole to a bank the
        # NPU reaches, beside the NPU's other pieces (`npu`), never split into banks it may not.
        and npu is None
    ):
        from arenalens.placement import place_lazily  # noqa: PLC0415 - boards with several banks

        # The split is made only when a placement in several buffers may win (`place_lazily`).
        placement = place_lazily(
            budget_of.required_bytes,
            partial(_split_of, budget_of),
            target,
            reserve_bytes=reserve_bytes,
        )
    # A Vela-compiled model's arena goes to a bank its NPU reaches (`npu`): its block stays the
    # target's arena limit.
    block = None if target is None or npu is not None else largest_block(target, reserve_bytes)
    return FitCheck(
        model=analysis.model.name,
        source=analysis.model.source,
        declared=declared,
        budget_bytes=budget,
        reserve_bytes=reserve_bytes,
        target=target,
        arenas=analysis.arenas,
        budget_text=budget_text,
        reserve_is_default=reserve_is_default and reserve_bytes > 0,
        assumptions=tuple(analysis.budget.assumptions),
        build=analysis.budget.build,
        placement=placement,
        npu=npu,
        block=block,
    )


def _split_of(budget: MemoryBudget) -> ArenaSplit:
    split = budget.split
    assert split is not None  # `MemoryBudget.splits`
    return split


def _npu_fit(
    analysis: Analysis,
    declared: DeclaredArena,
    target: Target | None,
    available_bytes: int,
    *,
    fast_memory_bytes: int | None,
    weights_in_sram: bool,
) -> NpuFit | None:
    """The SRAM pieces of a Vela-compiled model (TFLM) against the board's banks the NPU reaches
    or, without a board, the available bytes as one block; None for a model without an NPU
    operator."""
    if analysis.runtime != "tflm" or not is_vela_compiled(analysis.model):
        return None
    # The NPU's SRAM pieces are placed for Vela-compiled models only.
    from arenalens.vela.placement import Memories, NpuFit, board_memories  # noqa: PLC0415

    memories = (
        Memories(available_bytes) if target is None else board_memories(target, available_bytes)
    )
    from arenalens.vela.memory import npu_memory  # noqa: PLC0415 - reads the ethos-u operators

    memory = npu_memory(analysis.model)
    if memory is None:
        return None
    return NpuFit(
        memory,
        memories,
        declared.required_bytes,
        weights_in_sram=weights_in_sram,
        fast_memory_given=fast_memory_bytes,
    )


def _for_core(declared: DeclaredArena, target: Target | None) -> DeclaredArena:
    """The declared arena, marked an estimate when it is the host's figure for a target core
    arenalens has no 32-bit model of (RISC-V outside the ESP32 family)."""
    if target is None or target.kernels is not None or declared.runtime != "tflm":
        return declared
    if declared.status not in (Status.EXACT, Status.ESTIMATE):
        return declared
    reason = (
        "no 32-bit model of this core: the figure is the x86-64 wheel's, at or "
        "above what a 32-bit build with TFLM's reference kernels needs, but without vendor "
        "kernels' scratch (e.g. ESP-NN's): measure it on the device"
    )
    return replace(declared, status=Status.ESTIMATE, reasons=(*declared.reasons, reason))


def _for_vendor_kernels(
    declared: DeclaredArena, analysis: Analysis, target: Target | None
) -> DeclaredArena:
    """On a core without a 32-bit model the firmware may run the vendor's kernels (ESP-NN on
    ESP32 chips): an offline plan must be right on them too (`kernel_paths.overlap_rules`)."""
    if (
        target is None
        or target.kernels is not None
        or declared.runtime != "tflm"
        or analysis.model.offline_plan is None
        or declared.status in (Status.CANNOT_RUN, Status.WRONG_OUTPUTS)
    ):
        return declared
    from arenalens.builds.build import HOST  # noqa: PLC0415 - TFLM only
    from arenalens.builds.kernel_paths import overlap_rules  # noqa: PLC0415

    build = analysis.build or HOST
    paths = overlap_rules(build, chip=target.chip or target.name).paths
    conflicts = plan_conflicts(analysis.model, build, paths=paths)
    if not conflicts:
        return declared
    return replace(
        declared,
        status=Status.WRONG_OUTPUTS,
        reasons=tuple(conflict.reason for conflict in conflicts),
        conflicts=conflicts,
    )


def board_fits(
    check_for: Callable[[Target], FitCheck], boards: Iterable[Target]
) -> tuple[FitCheck, ...]:
    """Every board checked, most useful first: boards that fit (smallest RAM first: the
    cheapest that will do), then those that fit after optimize, then the rest (closest first);
    ties by name. `check_for` makes one board's check (its core may change the number)."""
    checks = [check_for(board) for board in boards]

    def order(check: FitCheck) -> tuple[int, int, str]:
        assert check.target is not None
        if check.fits:
            return (0, check.available_bytes, check.target.name)
        if check.fits_after_optimize:
            return (1, -check.headroom_bytes, check.target.name)
        usable = check.runs and check.plan_holds
        return (2 if usable else 3, -check.headroom_bytes, check.target.name)

    return tuple(sorted(checks, key=order))


def with_ladder(
    check: FitCheck,
    model: Model,
    *,
    build: Build,
    rules: OverlapRules,
    effort: float,
    cache: dict[tuple[str, ...], Optimization] | None = None,
    written: bool = True,
) -> FitCheck:
    """The check with its remedy ladder climbed, when only that decides the answer (TFLM, the
    number means something, it does not fit as given); else the check unchanged. With
    `written`, also the check of the model the first fitting rung writes (`FitCheck.written`)."""
    if not check.optimize_decides:
        return check
    from arenalens.ladder import climb, rewrite  # noqa: PLC0415 - the optimizer loads only here

    ladder = climb(
        model,
        build=build,
        rules=rules,
        required_bytes=check.required_bytes,
        available_bytes=check.available_bytes,
        whole_tensor_bound=check.best_case_bytes,
        floor_bytes=check.tail_bytes,
        effort=effort,
        cache=cache,
        target=check.target,
    )
    rung = ladder.first_fit
    if rung is None or not written:
        return replace(check, ladder=ladder)
    optimization = (cache or {}).get(rung.options) or rewrite(
        model, rung.options, build=build, rules=rules, effort=effort, target=check.target
    )
    return replace(check, ladder=ladder, written=written_check(check, optimization.data, build))


def written_check(check: FitCheck, data: bytes, build: Build | None) -> FitCheck:
    """The check of a model `arenalens optimize` wrote (its bytes), against the same budget or
    board, reserve and NPU options as `check`: what `arenalens check OUT.tflite` with the options
    the next step prints answers, and what `optimize --target` ends with."""

    npu = check.npu
    return check_fit(
        _written_analysis(data, build, check.source),
        budget_bytes=None if check.target is not None else check.budget_bytes,
        target=check.target,
        reserve_bytes=None if check.reserve_is_default else check.reserve_bytes,
        budget_text=check.budget_text,
        fast_memory_bytes=None if npu is None else npu.fast_memory_given,
        weights_in_sram=npu is not None and npu.weights_in_sram,
    )


def _written_analysis(data: bytes, build: Build | None, source: str) -> Analysis:
    """The written model analysed for the build (the last few kept: a check's text then its
    JSON, a report after a check)."""
    import hashlib  # noqa: PLC0415 - OpenSSL's loader costs more than a small check

    from arenalens.pipeline import analyze  # noqa: PLC0415
    from arenalens.tflite.reader import parse_model  # noqa: PLC0415

    key = (hashlib.sha256(data).digest(), build)
    found = _WRITTEN.get(key)
    if found is None:
        found = analyze(parse_model(data, source), build=build)
        _WRITTEN[key] = found
        while len(_WRITTEN) > 4:
            del _WRITTEN[next(iter(_WRITTEN))]
    return found


_WRITTEN: dict[tuple[bytes, Build | None], Analysis] = {}
