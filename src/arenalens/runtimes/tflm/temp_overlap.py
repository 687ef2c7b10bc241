"""Kernel buffers written over live temp tensors: a buffer's hazard + where the temps lie → the
buffer start addresses at which TFLM's setup fails.

`SingleArenaBufferAllocator::AllocatePersistentBuffer` checks the new tail against the head, never
against the temp end, so a buffer a kernel allocates in Prepare can land on that kernel's own live
temp `TfLiteTensor` views (and, once the tail is below the temp pointer, the unsigned
`tail_ - temp` wraps). Nothing fails at allocation; setup fails only when the kernel writes a
byte of the buffer onto a temp member that is read afterwards:

* `DeallocateTempTfLiteTensor` reads every temp's `quantization.type` and `quantization.params`
  and its affine struct's `zero_point` pointer, to release them: a changed pointer breaks the temp
  checksum, a changed type skips two releases, and the next `ResetTempAllocations` fails ("All
  temp buffers must be freed before calling ResetTempAllocations()");
* the kernel may read more members afterwards (`TempField`): dims, type, data, ...;
* a buffer read again later in setup (a dims copy) must not lie under what
  `DeallocateTempTfLiteTensor` itself writes (quantization type and params, data, dims).

So fitting is not monotone in the arena size (a band of failing sizes can lie above fitting
ones); `setup` turns each hazard into address ranges (`Hazard.failing_starts`) and reports the
smallest size from which every larger one works.
"""

from __future__ import annotations

from arenalens.builds.abi import Abi
from arenalens.records import record
from arenalens.runtimes.tflm.kernels.base import OverTemps
from arenalens.runtimes.tflm.structs import (
    TEMP_AFFINE_PART,
    TEMP_TENSOR_PART,
    TEMP_ZERO_POINTS_PART,
    TF_LITE_AFFINE_QUANTIZATION,
    TF_LITE_TENSOR,
)

# What DeallocateTempTfLiteTensor reads (and so must survive), and what it writes.
_DEALLOC_READS = ("quantization.type", "quantization.params", "affine.zero_point")
_DEALLOC_WRITES = ("quantization.type", "quantization.params", "data", "dims")


@record(slots=True)
class Member:
    """One member of a temp view on one ABI: which temp (None: every live one), which struct,
    its byte range in that struct (None: to the struct's end), and the new values that break
    setup (None: any)."""

    temp: int | None
    part: str  # TEMP_TENSOR_PART | TEMP_AFFINE_PART | TEMP_ZERO_POINTS_PART
    offset: int
    nbytes: int | None
    breaks_on: frozenset[int] | None = None


@record(slots=True)
class Hazard:
    """A persistent buffer's `OverTemps`, resolved to bytes on one ABI."""

    nbytes: int
    written: tuple[tuple[int, int], ...]
    guarded: tuple[Member, ...]  # must not be overwritten (or not with a breaking value)
    under_writes: tuple[Member, ...]  # read_later: must not lie under these (Dealloc's writes)
    content: bytes
    live_from: int

    def failing_starts(
        self, temps: list[tuple[int, dict[str, tuple[int, int]]]], alignment: int
    ) -> tuple[tuple[int, int], ...]:
        """Live temps (fetch position, [start, end) of each of its structs) → closed ranges of
        buffer start addresses (multiples of `alignment`) at which setup fails."""
        found: list[tuple[int, int]] = []
        for position, parts in temps:
            if position < self.live_from:
                continue
            for member in self.guarded:
                span = _span(member, position, parts)
                if span is not None:
                    found += self._overwrites(span, member.breaks_on, alignment)
            for member in self.under_writes:
                span = _span(member, position, parts)
                if span is not None:
                    found += _starts_overlapping(span, ((0, self.nbytes),))
        return _merged(found)

    def _overwrites(
        self, span: tuple[int, int], breaks_on: frozenset[int] | None, alignment: int
    ) -> list[tuple[int, int]]:
        candidates = _starts_overlapping(span, self.written)
        if breaks_on is None:
            return candidates
        # Only some values break the read: try each aligned start in the candidate ranges.
        failing: list[tuple[int, int]] = []
        for low, high in candidates:
            for start in range(-(-low // alignment) * alignment, high + 1, alignment):
                if self._breaks(span, start, breaks_on):
                    failing.append((start, start))
        return failing

    def _breaks(self, span: tuple[int, int], start: int, breaks_on: frozenset[int]) -> bool:
        low, high = span[0] - start, span[1] - start
        covered = any(a <= low and high <= b for a, b in self.written)
        if not covered or high > len(self.content) or low < 0:
            return True  # partly overwritten, or with bytes the rule did not give: assume broken
        return int.from_bytes(self.content[low:high], "little") in breaks_on


def resolve(over: OverTemps, nbytes: int, abi: Abi) -> Hazard:
    """A kernel's `OverTemps` for a buffer of nbytes → byte ranges on one ABI."""
    written = over.ranges if over.ranges is not None else ((0, nbytes),)
    guarded = [_member(name, None, abi) for name in _DEALLOC_READS]
    guarded += [_member(f.name, f.temp, abi, f.breaks_on) for f in over.keep]
    under = [_member(name, None, abi) for name in _DEALLOC_WRITES] if over.read_later else []
    return Hazard(
        nbytes=nbytes,
        written=tuple(written),
        guarded=tuple(guarded),
        under_writes=tuple(under),
        content=over.content,
        live_from=over.live_from,
    )


def _member(
    name: str, temp: int | None, abi: Abi, breaks_on: frozenset[int] | None = None
) -> Member:
    if name == "zero_points":
        # TfLiteIntArray: an int size, then the values (one per scale).
        return Member(temp, TEMP_ZERO_POINTS_PART, 4, None, breaks_on)
    if name.startswith("affine."):
        offset, size = TF_LITE_AFFINE_QUANTIZATION.member(name.removeprefix("affine."), abi)
        return Member(temp, TEMP_AFFINE_PART, offset, size, breaks_on)
    offset, size = TF_LITE_TENSOR.member(name, abi)
    return Member(temp, TEMP_TENSOR_PART, offset, size, breaks_on)


def _span(
    member: Member, position: int, parts: dict[str, tuple[int, int]]
) -> tuple[int, int] | None:
    """The member's absolute [start, end) in this temp, or None (another temp, no affine)."""
    if member.temp is not None and member.temp != position:
        return None
    found = parts.get(member.part)
    if found is None:
        return None
    start, end = found
    if member.nbytes is None:
        return start + member.offset, end
    return start + member.offset, start + member.offset + member.nbytes


def _starts_overlapping(
    span: tuple[int, int], ranges: tuple[tuple[int, int], ...]
) -> list[tuple[int, int]]:
    """Buffer starts s at which a written [s + a, s + b) overlaps span [low, high):
    s in [low - b + 1, high - a - 1]."""
    low, high = span
    return [(low - b + 1, high - a - 1) for a, b in ranges if b > a]


def _merged(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)
