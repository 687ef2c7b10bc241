"""Search state shared by the reorderers: executed operators as a bit set, and the bytes live.

A state is the set S of operators already run (a bit mask); the tensors live after S depend on S
alone: written by S (or live from the start) and still read by an operator outside S, or kept to
the end. So the search memoizes on S, and the bytes live while an operator v runs from S are
`live(S) + new outputs of v + extra(v)`.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.reorder.schedule import ScheduleProblem


@dataclass(frozen=True)
class Compiled:
    """ScheduleProblem as bit masks for fast transitions."""

    op_count: int
    required: tuple[int, ...]  # per op: mask of operators that must run first
    tensor_bytes: dict[int, int]
    outputs: tuple[tuple[int, ...], ...]
    inputs: tuple[tuple[int, ...], ...]
    extra: tuple[int, ...]
    reader_mask: dict[int, int]  # tensor → mask of operators reading it
    kept: frozenset[int]
    initial_live: frozenset[int]
    initial_bytes: int  # bytes live at step 0

    @property
    def full(self) -> int:
        """Mask of all operators."""
        return (1 << self.op_count) - 1


def compile_problem(problem: ScheduleProblem) -> Compiled:
    """ScheduleProblem → Compiled masks."""
    required = tuple(sum(1 << p for p in preds) for preds in problem.predecessors)
    reader_mask = {t: sum(1 << op for op in ops) for t, ops in problem.readers.items()}
    initial = set(problem.initial)
    initial_bytes = sum(problem.tensor_bytes[t] for t in initial)
    live = frozenset(t for t in initial if reader_mask.get(t) or t in problem.kept)
    return Compiled(
        op_count=problem.op_count,
        required=required,
        tensor_bytes=dict(problem.tensor_bytes),
        outputs=problem.op_outputs,
        inputs=problem.op_inputs,
        extra=problem.op_extra,
        reader_mask=reader_mask,
        kept=problem.kept,
        initial_live=live,
        initial_bytes=initial_bytes,
    )


# What the searches' steps cost, in work units of about a microsecond (`arenalens.effort`),
# measured on graphs of 60 to 3,000 operators: `ready` tests every operator against masks of
# op_count bits (about 35 ns a 64-bit word); `advance` costs about 40 us plus a microsecond a
# word of its masks (hashing, copying and queueing the new state).
_WORD_BITS = 64
_WORD_OPERATIONS_PER_UNIT = 30
_ADVANCE_UNITS = 40


def ready_work(compiled: Compiled) -> int:
    """Work units one `ready` call costs."""
    words = compiled.op_count // _WORD_BITS + 1
    return compiled.op_count * words // _WORD_OPERATIONS_PER_UNIT + 1


def advance_work(compiled: Compiled) -> int:
    """Work units one `advance` call (and the search's bookkeeping of its state) costs."""
    return _ADVANCE_UNITS + compiled.op_count // _WORD_BITS


def ready(compiled: Compiled, done: int) -> list[int]:
    """Operators not yet run whose required operators have all run, by index."""
    return [
        op
        for op in range(compiled.op_count)
        if not done >> op & 1 and compiled.required[op] & ~done == 0
    ]


def advance(
    compiled: Compiled, done: int, live: frozenset[int], live_bytes: int, op: int
) -> tuple[int, frozenset[int], int, int]:
    """Run op from (done, live) → (done, live, live bytes after, bytes while op runs)."""
    new_outputs = [t for t in compiled.outputs[op] if t not in live]
    added = sum(compiled.tensor_bytes[t] for t in new_outputs)
    running = live_bytes + added + compiled.extra[op]
    after = done | 1 << op
    freed = 0
    next_live = set(live)
    next_live.update(new_outputs)
    for tensor in (*compiled.inputs[op], *compiled.outputs[op]):
        finished = compiled.reader_mask.get(tensor, 0) & ~after == 0
        if finished and tensor in next_live and tensor not in compiled.kept:
            next_live.discard(tensor)
            freed += compiled.tensor_bytes[tensor]
    return after, frozenset(next_live), live_bytes + added - freed, running
