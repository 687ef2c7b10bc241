"""Mutators: one valid model (plus a corpus to splice from) and a seeded RNG → a hostile variant.

Three families, each a plain function `(data, rng, corpus) -> Mutation`:

* **structural** rewrites one word the layout walk (`layout.py`) found: a vector length made huge
  or just small enough to pass a bounds check, an offset sent past the end of the file or to a
  table of another type, a vtable moved, a tensor index rewired to another tensor (cycles,
  self-loops, second producers), a shape dimension made absurd;
* **byte-level** havoc: bit flips, interesting integers at aligned words, chunks deleted,
  inserted, duplicated or overwritten, truncation, trailing garbage;
* **splicing**: the head of one model and the tail of another, or another model appended and a
  pointer of this one redirected into it (a subgraph or tensor borrowed from a different file).

Every choice comes from the `random.Random` passed in, so (seed, execution number) reproduces an
input exactly; tests can pass hypothesis's `st.randoms()` to get shrinking for free.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fuzz.layout import Layout, Site, SiteKind, find_layout


@dataclass(frozen=True, slots=True)
class Mutation:
    """A mutated input and a one-line recipe of what was done (for reports and replay)."""

    data: bytes
    recipe: str


Mutator = Callable[[bytes, random.Random, Sequence[bytes]], Mutation]

INT32_EDGES = (
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    16,
    127,
    128,
    255,
    256,
    1024,
    4096,
    32767,
    65535,
    65536,
    1 << 24,
    (1 << 30) + 1,
    (1 << 31) - 1,
    (1 << 31) - 2,
    -1,
    -2,
    -3,
    -128,
    -(1 << 31),
)
UINT16_EDGES = (0, 1, 2, 3, 4, 5, 6, 8, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF)
UINT8_EDGES = (0, 1, 2, 3, 5, 9, 17, 20, 21, 127, 128, 200, 254, 255)
UINT64_EDGES = (0, 1, 2, 16, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)


@lru_cache(maxsize=64)
def layout_of(data: bytes) -> Layout:
    """Cached layout walk (seeds are mutated many times)."""
    return find_layout(data)


def _put(data: bytes, position: int, fmt: str, value: int) -> bytes:
    packed = struct.pack(fmt, value)
    return data[:position] + packed + data[position + len(packed) :]


def _put_int(data: bytes, site: Site, value: int) -> bytes:
    """Write value into a site's word, wrapped to the site's width (two's complement)."""
    width_format = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[site.width]
    return _put(data, site.position, width_format, value % (1 << (8 * site.width)))


def _read_u32(data: bytes, position: int) -> int:
    value: int = struct.unpack_from("<I", data, position)[0]
    return value


def _pick_site(layout: Layout, rng: random.Random, kinds: tuple[SiteKind, ...]) -> Site | None:
    sites = layout.of_kind(*kinds)
    return rng.choice(sites) if sites else None


# -- structural ---------------------------------------------------------------------------------


def _retarget_value(site: Site, data: bytes, layout: Layout, rng: random.Random) -> tuple[int, str]:
    """A new uoffset for a site: outside, misaligned, onto another table or vector, or huge."""
    size = layout.size
    here = site.position
    choice = rng.randrange(8)
    if choice == 0:
        return size - here, "just past the end"
    if choice == 1:
        return size - here - rng.randrange(1, 4), "into the last bytes"
    if choice == 2:
        return rng.choice((0xFFFFFFFF, 0x7FFFFFFF, 0x80000000)), "huge"
    if choice == 3:
        return 0, "to itself"
    if choice == 4:
        current = _read_u32(data, here)
        return current + rng.choice((-4, -2, -1, 1, 2, 4)), "misaligned"
    if choice in (5, 6) and layout.tables:
        table_type = rng.choice(sorted(layout.tables))
        candidates = [p for p in layout.tables[table_type] if p > here]
        if candidates:
            return rng.choice(candidates) - here, f"onto a {table_type} table"
    vectors = [p for p in layout.vectors if p > here]
    if vectors:
        return rng.choice(vectors) - here, "onto another vector"
    return size - here, "just past the end"


def _value_for(site: Site, data: bytes, layout: Layout, rng: random.Random) -> tuple[int, str]:
    """A hostile value for one site, chosen by the site's role."""
    size = len(data)
    kind = site.kind
    if kind in (SiteKind.UOFFSET, SiteKind.OFFSET_ELEMENT, SiteKind.ROOT):
        return _retarget_value(site, data, layout, rng)
    if kind == SiteKind.SOFFSET:
        here = site.position
        vtables = [s.position for s in layout.of_kind(SiteKind.VTABLE_BYTES)]
        choice = rng.randrange(5)
        if choice == 0 and vtables:
            return here - rng.choice(vtables), "vtable of another table"
        if choice == 1:
            return 0, "vtable at the table itself"
        if choice == 2:
            return here + rng.randrange(1, 64), "vtable before the file"
        if choice == 3:
            return here - size + rng.randrange(0, 4), "vtable past the end"
        return rng.choice(INT32_EDGES), "edge value"
    if kind in (SiteKind.VTABLE_BYTES, SiteKind.TABLE_BYTES, SiteKind.FIELD):
        if rng.random() < 0.7:
            return rng.choice(UINT16_EDGES), "edge value"
        return rng.randrange(0, 0x10000), "random"
    if kind == SiteKind.LENGTH:
        current = _read_u32(data, site.position)
        fitting = max(0, (size - site.position - 4) // 4)
        options = (
            (0, "empty"),
            (current + 1, "one more"),
            (max(current - 1, 0), "one fewer"),
            (fitting, "as long as the file allows"),
            (fitting + 1, "one past what the file allows"),
            (size, "file size"),
            (0x7FFFFFFF, "2**31 - 1"),
            (0xFFFFFFFF, "2**32 - 1"),
        )
        return rng.choice(options)
    if kind == SiteKind.INDEX:
        indices = layout.of_kind(SiteKind.INDEX)
        if rng.random() < 0.5 and indices:
            other = rng.choice(indices)
            value = struct.unpack_from("<i", data, other.position)[0]
            return value, f"rewired to tensor {value}"
        return rng.choice(INT32_EDGES), "edge value"
    if kind == SiteKind.DIM:
        if rng.random() < 0.2:
            return rng.randrange(0, 1 << 14), "random"
        return rng.choice(INT32_EDGES), "edge value"
    # Scalars: by width.
    if site.width == 1:
        return rng.choice((*UINT8_EDGES, rng.randrange(256))), "edge value"
    if site.width == 2:
        return rng.choice(UINT16_EDGES), "edge value"
    if site.width == 8:
        return rng.choice((*UINT64_EDGES, size, size - 1)), "edge value"
    if rng.random() < 0.3:
        return rng.randrange(0, 300), "small"
    return rng.choice(INT32_EDGES), "edge value"


def mutate_structure(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """Rewrite 1-4 structural words found by the layout walk."""
    layout = layout_of(data)
    if not layout.sites:
        return mutate_bytes(data, rng, corpus)
    steps: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        site = rng.choice(layout.sites)
        value, why = _value_for(site, data, layout, rng)
        data = _put_int(data, site, value)
        steps.append(f"{site.label}={value} ({why})")
    return Mutation(data, "structure: " + "; ".join(steps))


def mutate_kind(kind: SiteKind) -> Mutator:
    """A structural mutator restricted to one site kind (tests and focused campaigns)."""

    def mutator(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
        layout = layout_of(data)
        site = _pick_site(layout, rng, (kind,))
        if site is None:
            return Mutation(data, f"structure: no {kind} site")
        value, why = _value_for(site, data, layout, rng)
        return Mutation(_put_int(data, site, value), f"structure: {site.label}={value} ({why})")

    return mutator


# -- byte-level ---------------------------------------------------------------------------------


def _havoc_once(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    size = len(data)
    if size < 8:
        return data + bytes(rng.randrange(256) for _ in range(4)), "append"
    choice = rng.randrange(8)
    position = rng.randrange(size)
    if choice == 0:
        bit = rng.randrange(8)
        flipped = data[position] ^ (1 << bit)
        return data[:position] + bytes((flipped,)) + data[position + 1 :], f"flip bit @{position}"
    if choice == 1:
        aligned = min(position & ~3, size - 4)
        value = rng.choice(INT32_EDGES)
        return _put(data, aligned, "<i", value), f"int32 {value} @{aligned}"
    if choice == 2:
        value = rng.choice(UINT8_EDGES)
        return data[:position] + bytes((value,)) + data[position + 1 :], f"byte {value} @{position}"
    length = rng.choice((1, 2, 4, 8, 16, 64, 256))
    if choice == 3:
        return data[:position] + data[position + length :], f"delete {length} @{position}"
    if choice == 4:
        chunk = bytes(rng.randrange(256) for _ in range(length))
        return data[:position] + chunk + data[position:], f"insert {length} @{position}"
    if choice == 5:
        chunk = data[position : position + length]
        return data[:position] + chunk + data[position:], f"duplicate {length} @{position}"
    if choice == 6:
        source = rng.randrange(size)
        chunk = data[source : source + length]
        end = position + len(chunk)
        return data[:position] + chunk + data[end:], f"copy {length} {source}→{position}"
    return data[:position] + bytes(length) + data[position + length :], f"zero {length} @{position}"


def mutate_bytes(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """1-8 byte-level havoc steps anywhere in the file."""
    steps = []
    for _ in range(rng.choice((1, 1, 2, 3, 4, 8))):
        data, step = _havoc_once(data, rng)
        steps.append(step)
    return Mutation(data, "bytes: " + "; ".join(steps))


def truncate(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """Cut the file: anywhere, just after a structural word, or a few bytes off the end."""
    size = len(data)
    choice = rng.randrange(3)
    if choice == 0 and size > 1:
        cut = rng.randrange(size)
    elif choice == 1 and layout_of(data).sites:
        site = rng.choice(layout_of(data).sites)
        cut = site.position + rng.randrange(site.width + 1)
    else:
        cut = max(0, size - rng.randrange(1, 64))
    if rng.random() < 0.2:
        return Mutation(data[:cut] + bytes(rng.randrange(1, 32)), f"truncate at {cut}, pad zeros")
    return Mutation(data[:cut], f"truncate at {cut} of {size}")


def splice_bytes(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """The head of this model and the tail of another, cut at the same or a random position."""
    if not corpus:
        return truncate(data, rng, corpus)
    other = rng.choice(corpus)
    cut = rng.randrange(max(1, min(len(data), len(other))))
    cut &= ~3
    other_cut = cut if rng.random() < 0.6 else rng.randrange(max(1, len(other))) & ~3
    return Mutation(data[:cut] + other[other_cut:], f"splice head {cut} + tail from {other_cut}")


def splice_tables(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """Append another model and point one of this model's offsets at a table inside it."""
    if not corpus:
        return mutate_structure(data, rng, corpus)
    other = rng.choice(corpus)
    layout = layout_of(data)
    other_layout = layout_of(other)
    pointers = layout.of_kind(SiteKind.UOFFSET, SiteKind.OFFSET_ELEMENT)
    if not pointers or not other_layout.tables:
        return mutate_bytes(data, rng, corpus)
    padding = (-len(data)) % 16
    base = len(data) + padding
    site = rng.choice(pointers)
    table_type = rng.choice(sorted(other_layout.tables))
    target = base + rng.choice(other_layout.tables[table_type])
    combined = data + bytes(padding) + other
    combined = _put(combined, site.position, "<I", target - site.position)
    return Mutation(combined, f"splice: {site.label} → appended {table_type} table")


MUTATORS: tuple[tuple[str, Mutator, int], ...] = (
    # (name, mutator, weight): structure-aware mutation finds the most, so it runs most.
    ("structure", mutate_structure, 45),
    ("bytes", mutate_bytes, 25),
    ("truncate", truncate, 10),
    ("splice_bytes", splice_bytes, 8),
    ("splice_tables", splice_tables, 12),
)


def mutate(data: bytes, rng: random.Random, corpus: Sequence[bytes] = ()) -> Mutation:
    """Pick a mutator by weight and apply it (sometimes twice, stacked)."""
    names = [name for name, _, _ in MUTATORS]
    weights = [weight for _, _, weight in MUTATORS]
    recipes = []
    for _ in range(1 if rng.random() < 0.8 else 2):
        name = rng.choices(names, weights)[0]
        mutator = next(m for n, m, _ in MUTATORS if n == name)
        result = mutator(data, rng, corpus)
        data = result.data
        recipes.append(result.recipe)
    return Mutation(data, " | ".join(recipes))


__all__ = [
    "INT32_EDGES",
    "MUTATORS",
    "Mutation",
    "Mutator",
    "layout_of",
    "mutate",
    "mutate_bytes",
    "mutate_kind",
    "mutate_structure",
    "splice_bytes",
    "splice_tables",
    "truncate",
]
