"""Reductions over an axis read at Eval (runtimes/litert/heap_invoke.py `_dynamic_axis_blocks`)
against the 2.3.0 wheel: held-out tests/litert_reduction_cases.py (axis10_*, drawn after the
rule; tests/data/litert_heap.json, measure.py's zeros as axis values). The figure is a bound
for any axis values, labelled an estimate: never under, and within 1% but for the allowances
(the output and accumulator at most the input's elements over its smallest dimension; before,
the whole input: axis10_15 1.22x after the first invoke)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from tests.litert_heap_cache import cached, names
from tests.runtimes.litert.test_litert_heap import DELEGATE_OF_MODE, PHASES, model_path

AXIS_CASES = sorted(name for name in names() if name.startswith("axis10_"))


def test_there_are_held_out_reductions() -> None:
    assert len(AXIS_CASES) == 16


@pytest.mark.parametrize("name", AXIS_CASES)
def test_a_reduction_over_axes_read_at_eval_is_bounded(name: str, tmp_path: Path) -> None:
    path = model_path(name, tmp_path)
    assert path is not None
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for mode, delegate in DELEGATE_OF_MODE.items():
        heap = interpreter_heap(analysis.model, sizes, delegate=delegate)
        kept = {part.name: part for part in heap.parts}["first-invoke kernel buffers"]
        assert not kept.exact, mode
        allowances = sum(part.nbytes for part in heap.parts if part.allowance)
        real = cached(name)[mode]
        for measured, predicted in PHASES:
            figure = getattr(heap, predicted)
            assert real[measured] <= figure <= real[measured] * 1.01 + allowances, (mode, measured)
