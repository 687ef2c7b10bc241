"""glibc's malloc (x86-64, glibc 2.36) as a heap tracer counts it: a request → the bytes
`malloc_usable_size` reports for the block it gets.

*malloc/malloc.c*: a request of n bytes takes a chunk of `request2size(n)` = max(32, round_up(n +
8, 16)) bytes, of which all but the 8-byte size field are usable. Requests whose chunk reaches
the mmap threshold (128 KiB: `DEFAULT_MMAP_THRESHOLD`) are mmapped whole: `round_up(chunk + 8,
page)` bytes, of which all but the 16-byte header are usable. The threshold is dynamic: freeing
a mmapped chunk larger than it (up to 32 MiB) raises it to that chunk's size (`__libc_free`),
so what a process freed before decides; in the wheel's Python process numpy's and the wheel's
imports had raised it to about 260-320 KiB, and a 128 KiB block came from the heap (qwen_fc's
blockwise vector), but not always that far: measuring ruy18_10 the same process mmapped a
235,500 B block while the ruy18 blocks of about 200 KB came from its heap. Counted as mmapped
here, as in a process that never freed a larger one (a C++ app that starts the interpreter
first): up to a page's rounding over, never under. Such a block's count is therefore a bound
(`threshold_decides`), and the figures holding one say so.

`aligned_alloc(64, n)` (*_int_memalign*) asks for `chunk + 64 + 32` bytes and returns an aligned
chunk inside it. A heap chunk gives back its leading part, and its trailing part only when that
is larger than 32 bytes; where the block lands decides which, so the usable size is the chunk's
or 32 bytes more. `aligned_block_usable` returns the larger (never under; at most 32 B over).
A mmapped chunk keeps its tail: its usable size is the mapping less 64 bytes (48 of leading
alignment and the header).
"""

from __future__ import annotations

SIZE_FIELD_BYTES = 8
MINIMUM_CHUNK_BYTES = 32
MALLOC_ALIGNMENT = 16
MMAP_THRESHOLD_BYTES = 128 * 1024
# DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: __libc_free raises the threshold at most this far.
MMAP_THRESHOLD_MAX_BYTES = 32 * 1024 * 1024
PAGE_BYTES = 4096
MMAP_HEADER_BYTES = 16


def chunk_bytes(nbytes: int) -> int:
    """request2size: the chunk a request of `nbytes` takes."""
    return max(
        MINIMUM_CHUNK_BYTES,
        (nbytes + SIZE_FIELD_BYTES + MALLOC_ALIGNMENT - 1) & ~(MALLOC_ALIGNMENT - 1),
    )


def _page_round(nbytes: int) -> int:
    return (nbytes + PAGE_BYTES - 1) // PAGE_BYTES * PAGE_BYTES


def usable(nbytes: int) -> int:
    """malloc / calloc / operator new(n) → malloc_usable_size of the block (0 for no block)."""
    if nbytes < 0:
        return 0
    chunk = chunk_bytes(nbytes)
    if chunk >= MMAP_THRESHOLD_BYTES:
        return _page_round(chunk + SIZE_FIELD_BYTES) - MMAP_HEADER_BYTES
    return chunk - SIZE_FIELD_BYTES


def aligned_usable(alignment: int, nbytes: int) -> int:
    """aligned_alloc / posix_memalign(alignment, n) → the larger usable size the block can
    have (see the module docstring: the heap case depends on where the block lands)."""
    if alignment <= MALLOC_ALIGNMENT:
        return usable(nbytes)
    chunk = chunk_bytes(nbytes)
    padded = chunk_bytes(chunk + alignment + MINIMUM_CHUNK_BYTES)
    if padded >= MMAP_THRESHOLD_BYTES:
        # The mapping's first user byte is 16 past a page; the aligned chunk starts at the
        # next multiple of the alignment that leaves a whole leading chunk (>= 32 B).
        lead = alignment - MMAP_HEADER_BYTES
        while lead < MINIMUM_CHUNK_BYTES:
            lead += alignment
        return _page_round(padded + SIZE_FIELD_BYTES) - lead - MMAP_HEADER_BYTES
    return chunk - SIZE_FIELD_BYTES + MINIMUM_CHUNK_BYTES


def threshold_decides(nbytes: int, alignment: int = 0) -> bool:
    """Whether the block a request gets is mmapped or cut from the heap depends on what the
    process freed before (its chunk is between the mmap threshold and the most a free can raise
    it to): `usable` / `aligned_usable` count it mmapped, up to a page over the heap's."""
    if nbytes <= 0:
        return False
    chunk = chunk_bytes(nbytes)
    if alignment > MALLOC_ALIGNMENT:
        chunk = chunk_bytes(chunk + alignment + MINIMUM_CHUNK_BYTES)
    return MMAP_THRESHOLD_BYTES <= chunk < MMAP_THRESHOLD_MAX_BYTES


def counted_mmapped(usable_bytes: int) -> bool:
    """Whether a block counted `usable_bytes` (by `usable` / `aligned_usable`) may be one the
    mmap threshold decides: its usable size is a mapping's of a chunk from the threshold to the
    most a free raises it to (a heap chunk just under the threshold can count as much: taken
    as decided too, so a figure says bound rather than exact)."""
    lowest = MMAP_THRESHOLD_BYTES - 4 * MMAP_HEADER_BYTES  # a 64-aligned mapping's least
    return lowest <= usable_bytes <= MMAP_THRESHOLD_MAX_BYTES
