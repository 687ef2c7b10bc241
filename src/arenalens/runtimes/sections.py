"""Arena sections: the memory a runtime needs → ordered, named byte ranges that cover it exactly.

The number to declare is one figure; its sections say where each of its bytes goes. TFLite Micro
has one array, `kTensorArenaSize`: the head (planned buffers) from its start, the tail
(persistent data) from its end, and between them what setup needs only while `AllocateTensors()`
runs. LiteRT has one heap block per arena; its sections are those blocks, counted end to end in
the order listed. Every section's parts add up to it, so a picture drawn from them is to scale.
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.records import record


@record(slots=True)
class SectionItem:
    """One allocation inside a part: what it is for, and its bytes (alignment padding included)."""

    what: str
    nbytes: int


@record(slots=True)
class SectionPart:
    """One kind of data inside a section, and the bytes it takes there."""

    name: str
    nbytes: int
    meaning: str = ""
    # The runtime's own name for these bytes (TFLM: the print_allocations() category that counts
    # them; "" when the runtime does not record them).
    category: str = ""
    count: int = 0  # how many allocations (0: not counted, a region)
    largest: tuple[SectionItem, ...] = ()  # its largest allocations, largest first

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "name": self.name,
            "bytes": self.nbytes,
            "meaning": self.meaning,
            "category": self.category or None,
            "count": self.count,
            "largest": [{"what": item.what, "bytes": item.nbytes} for item in self.largest],
        }


@record(slots=True)
class ArenaSection:
    """A byte range [offset, offset + nbytes) of the memory to declare, and what fills it."""

    name: str
    offset: int
    nbytes: int
    parts: tuple[SectionPart, ...]
    meaning: str = ""

    @property
    def end(self) -> int:
        """The first byte past the section."""
        return self.offset + self.nbytes

    def as_dict(self) -> dict[str, object]:
        """JSON form (`arena_sections` of report documents)."""
        return {
            "name": self.name,
            "offset": self.offset,
            "bytes": self.nbytes,
            "meaning": self.meaning,
            "parts": [part.as_dict() for part in self.parts],
        }


def laid_end_to_end(
    pieces: Sequence[tuple[str, int, tuple[SectionPart, ...], str]],
) -> tuple[ArenaSection, ...]:
    """(name, bytes, parts, meaning) in address order → sections at consecutive offsets from 0;
    empty pieces are left out."""
    sections = []
    offset = 0
    for name, nbytes, parts, meaning in pieces:
        if nbytes <= 0:
            continue
        sections.append(ArenaSection(name, offset, nbytes, parts, meaning))
        offset += nbytes
    return tuple(sections)


LIVE_AT_PEAK = "live at the busiest step"
PLANNER_GAPS = "gaps the plan leaves"
SHARED_BYTES = "planned buffers, some sharing bytes"


def planned_parts(arena_bytes: int, lower_bound: int) -> tuple[SectionPart, ...]:
    """A planned arena of arena_bytes → the bytes live at its busiest step (the lower bound: no
    plan can use less) and the gaps its plan leaves above that; one part when the plan beats the
    bound (offline or overlapping buffers share bytes on purpose)."""
    if arena_bytes <= 0:
        return ()
    if lower_bound > arena_bytes:
        return (
            SectionPart(
                SHARED_BYTES,
                arena_bytes,
                "outputs placed over inputs they consume, or fixed offsets that share bytes",
            ),
        )
    parts = [
        SectionPart(
            LIVE_AT_PEAK,
            lower_bound,
            "bytes live together at the busiest step: no plan of these buffers can use less",
        )
    ]
    if arena_bytes > lower_bound:
        parts.append(
            SectionPart(
                PLANNER_GAPS,
                arena_bytes - lower_bound,
                "bytes the plan leaves unused at the busiest step (fragmentation, offset "
                "alignment): a better plan may give them back",
            )
        )
    return tuple(part for part in parts if part.nbytes > 0)


def with_section_resized(
    sections: Sequence[ArenaSection], name: str, nbytes: int, lower_bound: int
) -> tuple[ArenaSection, ...]:
    """The sections with the planned one called `name` at another size (another plan of that
    arena, everything else as it was), laid end to end again."""
    return laid_end_to_end(
        [
            (
                section.name,
                nbytes if section.name == name else section.nbytes,
                planned_parts(nbytes, lower_bound) if section.name == name else section.parts,
                section.meaning,
            )
            for section in sections
        ]
    )


def sections_json(sections: Sequence[ArenaSection]) -> list[dict[str, object]]:
    """Sections → their JSON list."""
    return [section.as_dict() for section in sections]
