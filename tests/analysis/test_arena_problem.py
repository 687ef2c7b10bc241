"""ArenaProblem's buffer meanings: made when first read, equal to what they stand for."""

from __future__ import annotations

import pickle

from arenalens import analyze, check
from arenalens.analysis.arena_problem import BufferKind, PlannedBuffer, PlannedBuffers
from arenalens.examples import example_bytes


def test_planned_buffers_are_made_when_first_read() -> None:
    rows = [
        (0, BufferKind.TENSOR, 0, 3, None, "conv", 100),
        (1, BufferKind.SCRATCH, 0, None, 2, "scratch", 48),
    ]
    meanings = PlannedBuffers(rows)
    assert len(meanings) == 2  # known without making any
    assert meanings._made is None
    expected = {row[0]: PlannedBuffer(*row) for row in rows}
    assert meanings[1] == expected[1]
    assert dict(meanings) == expected and meanings == expected and expected == meanings
    assert list(meanings) == [0, 1] and 2 not in meanings
    assert pickle.loads(pickle.dumps(meanings)) == expected


def test_a_check_makes_no_planned_buffer() -> None:
    # The TFLM head's meanings are read by reports and optimize, never by check's answer.
    data = example_bytes("vww_mobilenet_v1")
    check(data, budget=10**9, build="cortex-m7/cmsis-nn")
    head = analyze(data, build="cortex-m7/cmsis-nn").primary.arena
    assert isinstance(head.buffers, PlannedBuffers) and head.buffers._made is None
    assert [p.id for p in head.buffers.values()] == [b.id for b in head.problem.buffers]
    assert all(type(p) is PlannedBuffer for p in head.buffers.values())
