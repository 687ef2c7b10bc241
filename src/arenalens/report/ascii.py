"""TFLM's memory-plan printout: head arena + plan → the text `PrintMemoryPlan` writes.

Builds with `TF_LITE_SHOW_MEMORY_USE` print this from *CommitStaticMemoryPlan*
(*memory_planner/greedy_memory_planner.cc — GreedyMemoryPlanner::PrintMemoryPlan*,
docs/runtime-rules.md §T7); the pip package does not, so arenalens writes it. Format:

* one line per buffer in planner-index order, `"%c (id=%d): size=%d, offset=%d, first_used=%d
  last_used=%d"`, the character `*` when first == last, else the index's ordinal (0-9, a-z, A-Z,
  then index mod 62);
* one line per step t = 0..max(last), `"%4d: %s (%dk)"`: an 80-column bar where each buffer live
  at t covers columns [offset·80 // scale, (offset + size)·80 // scale), scale = max(80, highest
  end), drawn with its character, or `!` where something is already drawn; k = ⌈live bytes/1024⌉.

A model with more than 10,000 steps prints each stretch of unchanged steps as one line (TFLM
prints every step). TFLM does this arithmetic in 32-bit `int`; this module wraps the same way, so
the numbers match the device's printout. When `offset·80` overflows (offsets above 26,843,545 B) C
writes outside its line buffer, which cannot be reproduced; the bar is then clipped and a note line
says so. Lines end with "\\n" (MicroPrintf writes "\\r\\n").
"""

from __future__ import annotations

import itertools

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.planning.problem import Plan

LINE_WIDTH = 80
# Above this many steps (control flow run thousands of times), each stretch of unchanged steps
# prints as its first line and one "as step N" line; TFLM would print every step.
MAX_STEP_LINES = 10_000
_INT32_MASK = (1 << 32) - 1


def _int32(value: int) -> int:
    """Python int → the value a 32-bit two's-complement C `int` holds after the same operation."""
    value &= _INT32_MASK
    return value - (1 << 32) if value >= 1 << 31 else value


def _c_divide(numerator: int, denominator: int) -> int:
    """C integer division: truncates toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator >= 0) else -quotient


def ordinal_character(index: int) -> str:
    """Planner index → TFLM's buffer character: 0-9, a-z, A-Z, then index mod 62."""
    index %= 62
    if index < 10:
        return chr(ord("0") + index)
    if index < 36:
        return chr(ord("a") + index - 10)
    return chr(ord("A") + index - 36)


def render_tflm_memory_plan(arena: ArenaProblem, plan: Plan) -> str:
    """Head arena + plan → PrintMemoryPlan's text, byte for byte (with "\\n" line endings)."""
    buffers = sorted(arena.problem.buffers, key=lambda b: b.id)
    rows = [(b.size, plan.offsets[b.id], b.start, b.end) for b in buffers]
    characters = [
        "*" if first == last else ordinal_character(index)
        for index, (_, _, first, last) in enumerate(rows)
    ]
    lines = [
        f"{characters[index]} (id={index}): size={size}, offset={offset}, "
        f"first_used={first} last_used={last}"
        for index, (size, offset, first, last) in enumerate(rows)
    ]
    scale = LINE_WIDTH
    max_time = 0
    for size, offset, _, last in rows:
        scale = max(scale, _int32(offset + size))
        max_time = max(max_time, last)
    # The bar only changes where a buffer starts or ends: draw it once per such segment.
    changes: dict[int, list[int]] = {}
    for index, (_, offset, first, last) in enumerate(rows):
        if offset != -1 and first <= last and last >= 0:
            changes.setdefault(max(first, 0), []).append(index)
            changes.setdefault(last + 1, []).append(index)
    boundaries = sorted({0, *changes, max_time + 1})
    collapse = max_time + 1 > MAX_STEP_LINES
    live: set[int] = set()
    clipped = False
    for begin, end in itertools.pairwise(boundaries):
        live.symmetric_difference_update(changes.get(begin, ()))
        bar, kilobytes, clipped_here = _bar(rows, characters, sorted(live), scale)
        clipped = clipped or clipped_here
        steps = range(begin, end) if not collapse else range(begin, begin + 1)
        lines.extend(f"{step:4d}: {bar} ({kilobytes}k)" for step in steps)
        if collapse and end - begin > 1:
            lines.append(f"{begin + 1:4d}-{end - 1}: as step {begin}")
    if clipped:
        lines.append(
            "note: offsets above 26,843,545 bytes overflow TFLM's 32-bit int (offset*80); "
            "the device writes outside its 80-column line there, shown clipped"
        )
    return "\n".join(lines) + "\n"


def _bar(
    rows: list[tuple[int, int, int, int]], characters: list[str], live: list[int], scale: int
) -> tuple[str, int, bool]:
    """The 80-column bar and ⌈live KiB⌉ of one step with these buffers live; True when clipped."""
    bar = ["."] * LINE_WIDTH
    memory_use = 0
    clipped = False
    for index in live:
        size, offset, _, _ = rows[index]
        memory_use = _int32(memory_use + size)
        start = _c_divide(_int32(offset * LINE_WIDTH), scale)
        stop = _c_divide(_int32((offset + size) * LINE_WIDTH), scale)
        if start < 0 or stop > LINE_WIDTH:
            clipped = True
        for column in range(max(0, start), min(LINE_WIDTH, stop)):
            bar[column] = characters[index] if bar[column] == "." else "!"
    return "".join(bar), _c_divide(_int32(memory_use + 1023), 1024), clipped
