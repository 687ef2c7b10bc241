"""TFLM's memory-plan printout: head arena + plan → the text `PrintMemoryPlan` writes.

Builds with `TF_LITE_SHOW_MEMORY_USE` print this from *CommitStaticMemoryPlan*
(*memory_planner/greedy_memory_planner.cc — GreedyMemoryPlanner::PrintMemoryPlan*,
docs/runtime-semantics.md §2.7); the pip package does not, so arenalens writes it. Format:

* one line per buffer in planner-index order, `"%c (id=%d): size=%d, offset=%d, first_used=%d
  last_used=%d"`, the character `*` when first == last, else the index's ordinal (0-9, a-z, A-Z,
  then index mod 62);
* one line per step t = 0..max(last), `"%4d: %s (%dk)"`: an 80-column bar where each buffer live
  at t covers columns [offset·80 // scale, (offset + size)·80 // scale), scale = max(80, highest
  end), drawn with its character, or `!` where something is already drawn; k = ⌈live bytes/1024⌉.

TFLM does this arithmetic in 32-bit `int`; this module wraps the same way, so the numbers match
the device's printout. When `offset·80` overflows (offsets above 26,843,545 B) C writes outside its
line buffer, which cannot be reproduced; the bar is then clipped and a note line says so. Lines end
with "\\n" (MicroPrintf writes "\\r\\n").
"""

from __future__ import annotations

from arenalens.analysis.problem import ArenaProblem
from arenalens.planning.problem import Plan

LINE_WIDTH = 80
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
    clipped = False
    for step in range(max_time + 1):
        bar = ["."] * LINE_WIDTH
        memory_use = 0
        for index, (size, offset, first, last) in enumerate(rows):
            if step < first or step > last or offset == -1:
                continue
            memory_use = _int32(memory_use + size)
            start = _c_divide(_int32(offset * LINE_WIDTH), scale)
            stop = _c_divide(_int32((offset + size) * LINE_WIDTH), scale)
            if start < 0 or stop > LINE_WIDTH:
                clipped = True
            for column in range(max(0, start), min(LINE_WIDTH, stop)):
                bar[column] = characters[index] if bar[column] == "." else "!"
        kilobytes = _c_divide(_int32(memory_use + 1023), 1024)
        lines.append(f"{step:4d}: {''.join(bar)} ({kilobytes}k)")
    if clipped:
        lines.append(
            "note: offsets above 26,843,545 bytes overflow TFLM's 32-bit int (offset*80); "
            "the device writes outside its 80-column line there, shown clipped"
        )
    return "\n".join(lines) + "\n"
