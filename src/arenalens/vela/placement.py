"""An Ethos-U model's SRAM pieces + the board's RAM → the bank each piece goes to, or why they do
not fit.

What an Ethos-U model puts in SRAM the NPU must reach comes in up to three contiguous pieces
(`vela/memory.py` says why each exists): the tensor arena; for a model compiled for
Dedicated_Sram the fast memory firmware hands `ethosu_init` (what the model needs, or the
`fast_memory_size` firmware gives, when it says); for a model compiled with Sram_Only the read-only
data the NPU reads in place (weights, biases and command stream). They fit a board whose RAM banks
the NPU reaches when each piece goes to one bank with room for it (pieces may share a bank; every
assignment is tried, at most three pieces); without banks, when all of them fit the board's
largest block together (never a yes one block cannot hold). A fast memory given smaller than the
model's fast scratch never fits: the driver refuses every inference. `vela` compares Vela's
settings with this, and `check`'s verdict requires it (`fit.FitCheck.npu`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arenalens.targets import Target
    from arenalens.vela.memory import NpuMemory

ARENA = "arena"
FAST_MEMORY = "fast memory"
SRAM_WEIGHTS = "SRAM weights"
ANY_BANK = "any"  # no board or budget asked about
LARGEST_BLOCK = "largest block"  # a budget, or a board whose NPU banks are not listed


@dataclass(frozen=True, slots=True)
class Memories:
    """The RAM a board gives the model: its largest contiguous block, and the free bytes of each
    bank the NPU reaches (empty: the banks are not known)."""

    block_bytes: int
    banks: tuple[tuple[str, int], ...] = ()  # (name, bytes free for the model)


def board_memories(target: Target, block_bytes: int | None = None) -> Memories:
    """A board's RAM for the NPU: the banks it is documented to reach, less what firmware
    already takes there, and its largest block (or `block_bytes`, e.g. less a reserve)."""
    banks = tuple(
        (bank.name, bank.size_bytes - bank.firmware_bytes) for bank in target.banks if bank.npu
    )
    block = target.arena_limit_bytes if block_bytes is None else block_bytes
    return Memories(block, banks)


def place(pieces: tuple[int, ...], banks: tuple[tuple[str, int], ...]) -> tuple[str, ...] | None:
    """The first assignment of pieces to banks (largest piece first) that fits, or None; at
    most three pieces, so every assignment is tried."""
    order = sorted(range(len(pieces)), key=lambda index: -pieces[index])
    free = [size for _, size in banks]
    chosen: list[int] = [0] * len(pieces)

    def fill(position: int) -> bool:
        if position == len(order):
            return True
        piece = order[position]
        for bank, room in enumerate(free):
            if pieces[piece] <= room:
                free[bank] -= pieces[piece]
                chosen[piece] = bank
                if fill(position + 1):
                    return True
                free[bank] += pieces[piece]
        return False

    return tuple(banks[bank][0] for bank in chosen) if fill(0) else None


def placement(
    pieces: tuple[tuple[str, int], ...], memories: Memories | None
) -> tuple[tuple[str, str], ...] | None:
    """(piece, the bank it goes to) for each named piece, or None when they do not fit."""
    names = tuple(name for name, _ in pieces)
    sizes = tuple(size for _, size in pieces)
    if memories is None:
        return tuple((name, ANY_BANK) for name in names)
    if not memories.banks:
        fits = sum(sizes) <= memories.block_bytes
        return tuple((name, LARGEST_BLOCK) for name in names) if fits else None
    banks = place(sizes, memories.banks)
    return None if banks is None else tuple(zip(names, banks, strict=True))


def sram_pieces(
    arena_bytes: int, fast_memory_bytes: int = 0, sram_weights_bytes: int = 0
) -> tuple[tuple[str, int], ...]:
    """The contiguous pieces in SRAM, named, the arena first (pieces of 0 B left out)."""
    pieces = (
        (ARENA, arena_bytes),
        (FAST_MEMORY, fast_memory_bytes),
        (SRAM_WEIGHTS, sram_weights_bytes),
    )
    return tuple(piece for piece in pieces if piece[1] > 0)


@dataclass(frozen=True, slots=True)
class NpuFit:
    """A compiled model's SRAM pieces against a board or budget: where each goes, or that they
    do not fit. The arena is the number to declare; `at_arena` asks again for another one (the
    arena `optimize` would write)."""

    memory: NpuMemory
    memories: Memories
    arena_bytes: int
    weights_in_sram: bool = False  # compiled with Sram_Only: the read-only data sits in SRAM
    fast_memory_given: int | None = None  # the fast_memory_size firmware hands ethosu_init

    @property
    def fast_memory_bytes(self) -> int:
        """The fast memory's piece: what firmware gives, else what the model needs (0 unless
        compiled for Dedicated_Sram)."""
        if not self.memory.dedicated_sram:
            return 0
        given = self.fast_memory_given
        return self.memory.fast_memory_bytes if given is None else given

    @property
    def sram_weights_bytes(self) -> int:
        """The read-only data the NPU reads from SRAM (Sram_Only), else 0."""
        if not self.weights_in_sram:
            return 0
        return self.memory.read_only_bytes + self.memory.command_stream_bytes

    @property
    def pieces(self) -> tuple[tuple[str, int], ...]:
        """Every piece in SRAM, the arena first."""
        return sram_pieces(self.arena_bytes, self.fast_memory_bytes, self.sram_weights_bytes)

    @property
    def sram_bytes(self) -> int:
        """All the pieces together."""
        return sum(size for _, size in self.pieces)

    @property
    def refusal(self) -> str:
        """The driver's refusal of the fast memory firmware gives ('' when none is given, or it
        is enough)."""
        from arenalens.vela.memory import fast_memory_refusal  # noqa: PLC0415 - NPU models only

        given = self.fast_memory_given
        return "" if given is None else fast_memory_refusal(self.memory, given)

    @property
    def placement(self) -> tuple[tuple[str, str], ...] | None:
        """(piece, bank) for each piece, or None when they do not fit."""
        return placement(self.pieces, self.memories)

    @property
    def fits(self) -> bool:
        """Every piece has a place and the driver accepts the fast memory given."""
        return not self.refusal and self.placement is not None

    @property
    def beside_arena(self) -> bool:
        """True when the model puts more than its arena in SRAM."""
        return len(self.pieces) > 1

    def at_arena(self, arena_bytes: int) -> NpuFit:
        """The same pieces with another arena."""
        return replace(self, arena_bytes=arena_bytes)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: the pieces, the RAM they were compared with and where each goes."""
        placed = self.placement
        return {
            "pieces": [{"piece": name, "bytes": size} for name, size in self.pieces],
            "sram_bytes": self.sram_bytes,
            "available_bytes": self.memories.block_bytes,
            "banks": [{"name": name, "free_bytes": free} for name, free in self.memories.banks]
            or None,
            "placement": None
            if placed is None
            else [{"piece": piece, "bank": bank} for piece, bank in placed],
            "fast_memory_given_bytes": self.fast_memory_given,
            "weights_in_sram": self.weights_in_sram,
            "fits": self.fits,
        }
