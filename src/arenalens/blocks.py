"""A board's RAM as *blocks*: each bank, and each run of banks the catalogue says follow each
other (`MemoryBank.joins_next`), as one static array may span them, less what firmware keeps
there; and the block one arena can take most of (`largest_block`, the single arena's figure).

Every check on a board with banks asks for its largest block; only a board with several banks
places an arena split in them (`placement.py`, which builds on these blocks).
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.memo import kept_by_identity
from arenalens.records import record
from arenalens.targets import BANK_KINDS, EXTERNAL, MemoryBank, Target


@record(slots=True)
class Block:
    """Banks one buffer may occupy: one bank, or banks that follow each other."""

    banks: tuple[MemoryBank, ...]
    first_index: int  # the first bank's position in the part's list
    # Their sizes less what a boot stage keeps there (`MemoryBank.firmware_bytes`), and less the
    # reserve when the bank the SDK's .data/.bss and stacks land in is among them.
    available_bytes: int
    reserved_bytes: int = 0  # the firmware's reserve taken from this block (0: kept elsewhere)

    @property
    def name(self) -> str:
        return "+".join(bank.name for bank in self.banks)

    @property
    def speed_rank(self) -> int:
        """The slowest of its banks: an array that spans them runs at that speed."""
        return max(bank.kind_rank for bank in self.banks)

    @property
    def speed(self) -> str:
        return BANK_KINDS[self.speed_rank]

    def shares_a_bank_with(self, other: Block) -> bool:
        return any(bank in other.banks for bank in self.banks)


def blocks(banks: Sequence[MemoryBank], reserve_bytes: int = 0) -> tuple[Block, ...]:
    """Every bank, and every run of banks that follow each other, as blocks, each less what
    firmware takes there: the reserve in the block that holds the SDK's data bank (every block
    when no bank is marked so)."""
    found: list[Block] = []
    known = any(bank.static_array for bank in banks)
    for start in range(len(banks)):
        end = start
        while True:
            run = tuple(banks[start : end + 1])
            size = sum(bank.size_bytes - bank.firmware_bytes for bank in run)
            taken = reserve_bytes if not known or any(bank.static_array for bank in run) else 0
            found.append(Block(run, start, max(size - taken, 0), min(taken, size)))
            if not banks[end].joins_next or end + 1 >= len(banks):
                break
            end += 1
    return tuple(found)


@kept_by_identity()
def board_blocks(target: Target, reserve_bytes: int = 0) -> tuple[Block, ...]:
    """`blocks` of a target's banks, made once per target and reserve in a process: a search
    loop checks thousands of models against the same board, and a board's blocks depend on
    nothing a model says."""
    return blocks(target.banks, reserve_bytes)


def largest_block(target: Target, reserve_bytes: int = 0, *, on_chip: bool = False) -> Block | None:
    """The block one arena can take most of (the reserve taken where `blocks` takes it), of
    on-chip banks only when asked; None for a target without (such) banks."""
    found = [
        block
        for block in board_blocks(target, reserve_bytes)
        if not on_chip or block.speed != EXTERNAL
    ]
    if not found:
        return None
    return max(found, key=lambda block: (block.available_bytes, -block.first_index))
