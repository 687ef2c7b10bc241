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

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import TYPE_CHECKING

from arenalens.blocks import Block, board_blocks
from arenalens.memo import kept_by_identity
from arenalens.records import record
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


@record(slots=True)
class BankUse:
    """One buffer of a placement: which part, how many bytes, in which block."""

    part: str  # ARENA, PERSISTENT, NON_PERSISTENT or VARIABLES
    nbytes: int
    block: Block

    @property
    def spare_bytes(self) -> int:
        return self.block.available_bytes - self.nbytes


@record(slots=True)
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


@record(slots=True)
class BoardPlacement:
    """The best placement on a board (None: nothing fits) and the most the board could hold."""

    best: Placement | None
    largest_one_bytes: int  # the largest block: the largest single arena
    largest_one_block: str
    largest_two_bytes: int  # the two largest disjoint blocks together: the largest P + N
    largest_two_blocks: tuple[str, str] | None
    # The entries of the resource-variable table the best placement puts apart (0: it does not).
    variable_count: int = 0
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
    return place_lazily(split.single_bytes, lambda: split, target, reserve_bytes=reserve_bytes)


def place_lazily(
    single_bytes: int,
    split_of: Callable[[], ArenaSplit],
    target: Target,
    *,
    reserve_bytes: int = 0,
) -> BoardPlacement:
    """`place` of a split made only when a way with more than one buffer may win: a model whose
    one arena fits the board's fastest block (the usual check on a board) never makes it.

    The ways are tried fastest first (`_BoardWays.ways`: by score without the bytes); the first
    that fits wins, or one as fast with fewer bytes (the score's last term)."""
    board = _board_ways(target, reserve_bytes)
    split: ArenaSplit | None = None
    best: tuple[_Way, tuple[int, ...], int] | None = None
    short_bytes: int | None = None
    for way in board.ways:
        if best is not None and way.score != best[0].score:
            break  # slower than the winner: the rest is too
        parts = way.parts
        if parts is _ONE:
            found: tuple[int, ...] | None = (single_bytes,)
        else:
            if split is None:
                split = split_of()
            found = _sizes(split, parts)
        if found is None:
            continue  # no resource variables: no table to put apart
        sizes = found
        excess = 0  # bytes over the blocks' room, in a plain loop: a few per way
        for nbytes, room in zip(sizes, way.available, strict=True):
            if nbytes > room:
                excess += nbytes - room
        if short_bytes is None or excess < short_bytes:
            short_bytes = excess
        if not excess and (best is None or sum(sizes) < best[2]):
            best = (way, sizes, sum(sizes))
    return BoardPlacement(
        best=None if best is None else _placement(best[0], best[1]),
        largest_one_bytes=board.largest_one_bytes,
        largest_one_block=board.largest_one_block,
        largest_two_bytes=board.largest_two_bytes,
        largest_two_blocks=board.largest_two_blocks,
        variable_count=_apart_count(best[0] if best is not None else None, split),
        short_bytes=short_bytes or 0,
    )


def _apart_count(way: _Way | None, split: ArenaSplit | None) -> int:
    """The entries of the resource-variable table the way puts apart (0: it does not)."""
    if way is None or VARIABLES not in way.parts or split is None or split.variables is None:
        return 0
    return split.variables.count


def _placement(way: _Way, sizes: tuple[int, ...]) -> Placement:
    uses = tuple(
        BankUse(part, nbytes, block)
        for part, nbytes, block in zip(way.parts, sizes, way.blocks, strict=True)
    )
    kind = ONE_ARENA if ARENA in way.parts else TWO_BUFFERS
    return Placement(kind, uses, VARIABLES in way.parts, way.notes)


# The buffers of each way TFLM takes its memory, in the order they are tried: one arena, a
# persistent and a non-persistent buffer, and either with the resource variables' table apart.
_ONE = (ARENA,)
_TWO = (PERSISTENT, NON_PERSISTENT)
_ONE_APART = (ARENA, VARIABLES)
_TWO_APART = (PERSISTENT, NON_PERSISTENT, VARIABLES)


def _sizes(split: ArenaSplit, parts: tuple[str, ...]) -> tuple[int, ...] | None:
    """The bytes of a layout's parts (None: a layout with the variables apart, and none)."""
    two = split.two
    if parts is _TWO:
        return (two.persistent_bytes, two.non_persistent_bytes)
    variables = split.variables
    if variables is None:
        return None
    if parts is _ONE_APART:
        return (variables.single_bytes, variables.arena_bytes)
    apart = variables.two
    return (apart.persistent_bytes, apart.non_persistent_bytes, variables.arena_bytes)


@record(slots=True)
class _Way:
    """One assignment of a layout's parts to disjoint blocks, with what does not depend on the
    bytes: each block's room, the placement's score less its total bytes (`_score`) and its
    notes."""

    parts: tuple[str, ...]
    blocks: tuple[Block, ...]
    available: tuple[int, ...]
    score: tuple[int, ...]
    notes: tuple[str, ...]


@record(slots=True)
class _BoardWays:
    """A board at one reserve, as every placement searches it: made once per process."""

    # Every layout's assignments, fastest first (by score without the bytes); ties in the order
    # the layouts (one arena, two buffers, each with the variables apart) and the blocks come.
    ways: tuple[_Way, ...]
    # The largest block (the largest single arena), the two largest disjoint blocks (as
    # `BoardPlacement` says them).
    largest_one_bytes: int
    largest_one_block: str
    largest_two_bytes: int
    largest_two_blocks: tuple[str, str] | None


@kept_by_identity()
def _board_ways(target: Target, reserve_bytes: int) -> _BoardWays:
    """A board's blocks and the assignments of buffers to them: they depend on no model."""
    return _ways_of(board_blocks(target, reserve_bytes))


def _ways_of(candidates: tuple[Block, ...]) -> _BoardWays:
    ways = [
        _Way(
            parts,
            chosen,
            tuple(block.available_bytes for block in chosen),
            _block_score(parts, chosen),
            _notes(tuple(zip(parts, chosen, strict=True)), apart=VARIABLES in parts),
        )
        for parts in (_ONE, _TWO, _ONE_APART, _TWO_APART)
        for chosen in permutations(candidates, len(parts))
        if _disjoint(chosen)
    ]
    ways.sort(key=lambda way: way.score)  # stable: ties keep the order above
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
    return _BoardWays(
        tuple(ways),
        largest.available_bytes,
        largest.name,
        0 if two is None else two[0].available_bytes + two[1].available_bytes,
        None if two is None else (two[0].name, two[1].name),
    )


def _disjoint(chosen: tuple[Block, ...]) -> bool:
    return not any(first.shares_a_bank_with(second) for first, second in permutations(chosen, 2))


def placement_score(placement: Placement) -> tuple[int, ...]:
    """Lower is faster: the order this module's docstring gives."""
    return _score(placement)


def _score(placement: Placement) -> tuple[int, ...]:
    parts = tuple(use.part for use in placement.uses)
    blocks_used = tuple(use.block for use in placement.uses)
    return (*_block_score(parts, blocks_used), placement.total_bytes)


def _block_score(parts: tuple[str, ...], chosen: tuple[Block, ...]) -> tuple[int, ...]:
    """The score's terms that the blocks decide: all but the total bytes."""
    by_part = dict(zip(parts, chosen, strict=True))
    activations = by_part.get(ARENA) or by_part[NON_PERSISTENT]
    persistent = by_part.get(PERSISTENT) or activations
    return (
        max(block.speed_rank for block in chosen),
        activations.speed_rank,
        int(persistent.speed == EXTERNAL),
        len(chosen),
        persistent.speed_rank,
        sum(len(block.banks) for block in chosen),
        activations.first_index,
        persistent.first_index,
    )


def _notes(uses: Sequence[tuple[str, Block]], *, apart: bool) -> tuple[str, ...]:
    """The speed cost, DMA and what the code must do of parts in blocks (`Placement.notes`)."""
    notes: list[str] = []
    for part, block in uses:
        bank_names = block.name
        figures = "; ".join(bank.speed for bank in block.banks if bank.speed)
        if block.speed == EXTERNAL and figures:
            bank_names = f"{bank_names} ({figures})"
        if block.speed == EXTERNAL:
            if part in (ARENA, NON_PERSISTENT):
                notes.append(
                    f"{bank_names} is external RAM: the {_part_title(part)} buffer holds every "
                    "activation and scratch buffer, so compute-bound kernels (convolutions, "
                    "fully connected) read every activation from it on every inference: expect "
                    "inference several times slower than from on-chip SRAM"
                )
            else:
                notes.append(
                    f"{bank_names} is external RAM: the {_part_title(part)} part (kernel "
                    "data, tensor structs) is read there once per operator; the activations "
                    "stay on-chip"
                )
        if part in (ARENA, NON_PERSISTENT) and any(bank.dma is False for bank in block.banks):
            notes.append(
                f"{bank_names} is not reachable by the DMA: an input tensor filled by DMA "
                "(camera, microphone) must be copied in by the CPU"
            )
    if any(part == PERSISTENT for part, _ in uses):
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
