"""TOPK_V2 with k read at Eval (tests/litert_topk_cases.py, drawn after the rule): arenalens
counts k at its bound, the input's last dimension (heap_invoke._topk_at_eval), so its figure
is never under the wheel's at k = 0 (measure.py's zeros, tests/data/litert_heap.json) nor at
the bound (tests/data/litert_topk_bound.json, `nice -n 10 python -m tests.litert_topk_measure`),
within 1% of the latter but for the caller's and placement allowances, and labelled an
estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from tests.litert_heap_cache import cached
from tests.litert_topk_cases import topk_case
from tests.litert_topk_measure import DATA, SEEDS

AT_BOUND = json.loads(DATA.read_text())["models"]
PHASES = (("after_allocate", "after_setup"), ("after_invoke", "after_first_invoke"),
          ("peak", "peak"))  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_topk_with_k_at_eval_is_bounded_and_labelled(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(topk_case(seed))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for mode, delegate in (("builtin", "none"), ("xnnpack", "xnnpack")):
        heap = interpreter_heap(analysis.model, sizes, delegate=delegate)
        kept = next(part for part in heap.parts if part.name == "first-invoke kernel buffers")
        assert not kept.exact and "TOPK_V2" in kept.meaning
        allowances = sum(part.nbytes for part in heap.parts if part.allowance)
        at_zero, at_bound = cached(f"topk9_{seed}.tflite")[mode], AT_BOUND[f"topk9_{seed}"][mode]
        for measured, predicted in PHASES:
            figure = getattr(heap, predicted)
            assert at_zero[measured] <= figure and at_bound[measured] <= figure, measured
            assert figure - allowances <= at_bound[measured] * 1.01, (mode, measured)
