"""Placement: a model's arena split (`runtimes.arena_split`) + a board's RAM banks → where each
part goes so that it fits and runs fastest, or the most the board could hold.

The candidates are every way TFLM takes its memory (one arena; a persistent and a
non-persistent buffer; either with the resource variables' table on an allocator of its own),
each buffer in a *block*: one bank, or banks the catalogue says follow each other
(`MemoryBank.joins_next`), as one static array may span them. Buffers of one placement take
disjoint blocks. Of those that fit, the fastest wins, judged in this order:

1. the slowest bank it uses at all (external RAM only when nothing on-chip holds the parts);
2. the bank of the activations, the one arena or the non-persistent part (every activation and
   scratch buffer is read and written there on every inference: compute-bound kernels read
   each activation several times);
3. the persistent part (kernel data and tensor structs, read once per operator) out of external
   RAM where it can be;
4. fewer buffers (one arena where it runs as fast as a split), then the persistent part's bank;
5. fewer banks spanned, then the banks' catalogue order (fastest first), then fewer bytes.

The firmware's reserve (the board's default or `--reserve`) is taken once, from the bank the
SDK's linker script puts .data/.bss, the heap and the stacks in (`MemoryBank.static_array`);
where the catalogue does not say which bank that is, from every block (it may be any of them:
never more than the board has). The same blocks give the single arena's figure
(`blocks.largest_block`), so `check`, `--target all` and the JSON agree on where the reserve went.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import TYPE_CHECKING

from arenalens.blocks import Block, blocks
from arenalens.targets import EXTERNAL, Target
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:
    from arenalens.runtimes.arena_split import ArenaSplit

ONE_ARENA = "one arena"
TWO_BUFFERS = "two buffers"
# The parts a placement puts in banks.
ARENA = "arena"
PERSISTENT = "persistent"
NON_PERSISTENT = "non-persistent"
VARIABLES = "resource variables"


@dataclass(frozen=True, slots=True)
class BankUse:
    """One buffer of a placement: which part, how many bytes, in which block."""

    part: str  # ARENA, PERSISTENT, NON_PERSISTENT or VARIABLES
    nbytes: int
    block: Block

    @property
    def spare_bytes(self) -> int:
        return self.block.available_bytes - self.nbytes


@dataclass(frozen=True, slots=True)
class Placement:
    """Where each part of the arena goes on one board, and what that costs."""

    kind: str  # ONE_ARENA or TWO_BUFFERS
    uses: tuple[BankUse, ...]
    variables_apart: bool  # the resource variables' table on its own allocator
    notes: tuple[str, ...]  # the speed cost, DMA, and what the code must do

    @property
    def total_bytes(self) -> int:
        return sum(use.nbytes for use in self.uses)

    def use(self, part: str) -> BankUse | None:
        """The buffer of one part, or None."""
        return next((use for use in self.uses if use.part == part), None)

    @property
    def activations(self) -> BankUse:
        """The buffer that holds the activations: the one arena, or the non-persistent one."""
        found = self.use(ARENA) or self.use(NON_PERSISTENT)
        assert found is not None
        return found

    def summary(self) -> str:
        """'persistent 9,232 B in SRAM1-3, non-persistent 122,880 B in DTCM'."""
        return ", ".join(
            f"{_part_title(use.part)} {format_bytes_exact(use.nbytes)} in {use.block.name}"
            for use in self.uses
        )


@dataclass(frozen=True, slots=True)
class BoardPlacement:
    """The best placement on a board (None: nothing fits) and the most the board could hold."""

    best: Placement | None
    largest_one_bytes: int  # the largest block: the largest single arena
    largest_one_block: str
    largest_two_bytes: int  # the two largest disjoint blocks together: the largest P + N
    largest_two_blocks: tuple[str, str] | None
    variable_count: int = 0  # the resource-variable table's entries (0: no variables)
    # The fewest bytes the buffers must lose for some placement to fit (0 when one does): of
    # every way to place them, the least total excess over the blocks they would take.
    short_bytes: int = 0

    @property
    def fits(self) -> bool:
        return self.best is not None

    @property
    def most_bytes(self) -> int:
        """The most the board holds: one arena in its largest block, or a persistent and a
        non-persistent buffer in its two largest disjoint blocks."""
        return max(self.largest_one_bytes, self.largest_two_bytes)


def place(split: ArenaSplit, target: Target, *, reserve_bytes: int = 0) -> BoardPlacement:
    """Arena split + board → the placement that fits and runs fastest, and the most it holds."""
    candidates = blocks(target.banks, reserve_bytes)
    best: tuple[tuple[int, ...], Placement] | None = None
    short_bytes: int | None = None
    for uses, apart in _placements(split, candidates):
        excess = sum(max(0, use.nbytes - use.block.available_bytes) for use in uses)
        short_bytes = excess if short_bytes is None else min(short_bytes, excess)
        if excess:
            continue
        placement = Placement(
            ONE_ARENA if _has(uses, ARENA) else TWO_BUFFERS,
            uses,
            apart,
            _notes(uses, apart),
        )
        score = _score(placement)
        if best is None or score < best[0]:
            best = (score, placement)
    largest = max(candidates, key=lambda block: (block.available_bytes, -block.first_index))
    pairs = [
        (first, second)
        for first, second in permutations(candidates, 2)
        if not first.shares_a_bank_with(second)
    ]
    two = max(
        pairs,
        key=lambda pair: (pair[0].available_bytes + pair[1].available_bytes, -pair[0].first_index),
        default=None,
    )
    return BoardPlacement(
        best=None if best is None else best[1],
        largest_one_bytes=largest.available_bytes,
        largest_one_block=largest.name,
        largest_two_bytes=0 if two is None else two[0].available_bytes + two[1].available_bytes,
        largest_two_blocks=None if two is None else (two[0].name, two[1].name),
        variable_count=0 if split.variables is None else split.variables.count,
        short_bytes=short_bytes or 0,
    )


def _has(uses: Sequence[BankUse], part: str) -> bool:
    return any(use.part == part for use in uses)


def _placements(
    split: ArenaSplit, candidates: Sequence[Block]
) -> list[tuple[tuple[BankUse, ...], bool]]:
    """Every assignment of a split's buffers to disjoint blocks."""
    layouts: list[tuple[tuple[tuple[str, int], ...], bool]] = [
        (((ARENA, split.single_bytes),), False),
        (
            (
                (PERSISTENT, split.two.persistent_bytes),
                (NON_PERSISTENT, split.two.non_persistent_bytes),
            ),
            False,
        ),
    ]
    variables = split.variables
    if variables is not None:
        layouts.append(
            (((ARENA, variables.single_bytes), (VARIABLES, variables.arena_bytes)), True)
        )
        layouts.append(
            (
                (
                    (PERSISTENT, variables.two.persistent_bytes),
                    (NON_PERSISTENT, variables.two.non_persistent_bytes),
                    (VARIABLES, variables.arena_bytes),
                ),
                True,
            )
        )
    found: list[tuple[tuple[BankUse, ...], bool]] = []
    for parts, apart in layouts:
        for chosen in permutations(candidates, len(parts)):
            if any(first.shares_a_bank_with(second) for first, second in permutations(chosen, 2)):
                continue
            uses = tuple(
                BankUse(part, nbytes, block)
                for (part, nbytes), block in zip(parts, chosen, strict=True)
            )
            found.append((uses, apart))
    return found


def placement_score(placement: Placement) -> tuple[int, ...]:
    """Lower is faster: the order this module's docstring gives."""
    return _score(placement)


def _score(placement: Placement) -> tuple[int, ...]:
    uses = placement.uses
    activations = placement.activations
    persistent = placement.use(PERSISTENT) or activations
    return (
        max(use.block.speed_rank for use in uses),
        activations.block.speed_rank,
        int(persistent.block.speed == EXTERNAL),
        len(uses),
        persistent.block.speed_rank,
        sum(len(use.block.banks) for use in uses),
        activations.block.first_index,
        persistent.block.first_index,
        placement.total_bytes,
    )


def _notes(uses: Sequence[BankUse], apart: bool) -> tuple[str, ...]:
    notes: list[str] = []
    for use in uses:
        bank_names = use.block.name
        figures = "; ".join(bank.speed for bank in use.block.banks if bank.speed)
        if use.block.speed == EXTERNAL and figures:
            bank_names = f"{bank_names} ({figures})"
        if use.block.speed == EXTERNAL:
            if use.part in (ARENA, NON_PERSISTENT):
                notes.append(
                    f"{bank_names} is external RAM: the {_part_title(use.part)} buffer holds every "
                    "activation and scratch buffer, so compute-bound kernels (convolutions, "
                    "fully connected) read every activation from it on every inference: expect "
                    "inference several times slower than from on-chip SRAM"
                )
            else:
                notes.append(
                    f"{bank_names} is external RAM: the {_part_title(use.part)} part (kernel "
                    "data, tensor structs) is read there once per operator; the activations "
                    "stay on-chip"
                )
        if use.part in (ARENA, NON_PERSISTENT) and any(
            bank.dma is False for bank in use.block.banks
        ):
            notes.append(
                f"{bank_names} is not reachable by the DMA: an input tensor filled by DMA "
                "(camera, microphone) must be copied in by the CPU"
            )
    if any(use.part == PERSISTENT for use in uses):
        notes.append(
            "TFLM does not reliably fail below the persistent minimum (several of its "
            "allocations are unchecked): never make the persistent buffer smaller"
        )
    if apart:
        notes.append(
            "the resource variables' table has an allocator of its own; their buffers stay in "
            "the persistent memory"
        )
    return tuple(notes)


def _part_title(part: str) -> str:
    return {
        ARENA: "arena",
        PERSISTENT: "persistent",
        NON_PERSISTENT: "non-persistent",
        VARIABLES: "variables",
    }[part]


def placement_document(found: BoardPlacement) -> dict[str, object]:
    """The placement as JSON (`check --json`'s `placement`)."""
    best = found.best
    return {
        "fits": found.fits,
        "kind": None if best is None else best.kind,
        "variables_apart": None if best is None else best.variables_apart,
        "banks": []
        if best is None
        else [
            {
                "part": use.part,
                "bytes": use.nbytes,
                "bank": use.block.name,
                "kind": use.block.speed,
                "available_bytes": use.block.available_bytes,
                "spare_bytes": use.spare_bytes,
                "section": use.block.banks[0].section or None,
                "allocate": use.block.banks[0].allocate or None,
            }
            for use in best.uses
        ],
        "notes": [] if best is None else list(best.notes),
        "largest_one_bytes": found.largest_one_bytes,
        "largest_one_bank": found.largest_one_block,
        "largest_two_bytes": found.largest_two_bytes,
        "largest_two_banks": None
        if found.largest_two_blocks is None
        else list(found.largest_two_blocks),
        "most_bytes": found.most_bytes,
        "short_bytes": found.short_bytes,
    }
