"""The caller's blocks and the XNNPACK delegate's first Invoke (runtimes/litert/heap_caller.py,
heap_invoke.py) against the 2.3.0 wheel's figures cached in tests/data/litert_heap_upstream.json
(`nice -n 10 python -m tests.litert_upstream_measure` remakes it).

Small models (~100 KB of heap) are where the caller's blocks weigh: with an allowance of 400 B
plus 768 B per extra input they stood at 1.010-1.023x after the first invoke. Replayed from
numpy's caches (what they can keep, taken as empty before), the figure is within 1% at every
moment, allowances included, and never under. (Session 9 saw XNNPACK peaks fall under with a
tighter bound; that was its evaluation taking the bound off peaks made at XNNPACK's build
moment, where the caller holds nothing.) Skips, saying so, where the mirrors are absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.heap_invoke import external_values_steps
from tests.litert_heap_cache import cached, names
from tests.litert_upstream_measure import DATA
from tests.runtimes.litert.test_litert_heap import model_path
from tests.runtimes.litert.test_litert_upstream import DELEGATES, PHASES, _analysis

CACHE: dict[str, Any] = json.loads(DATA.read_text())
_LITERT = "google-ai-edge+LiteRT:litert/"
# Models whose first-invoke figure the caller's allowance kept at 1.010-1.023x (session 9's
# list) and seanet's add0 (its peak at 1.014x under both delegates).
SMALL = (
    *(
        f"{_LITERT}js/packages/core/testdata/{name}.tflite"
        for name in ("add_10x10", "add_1d_2d_3d_4d", "add_c1_c7", "mixed_input_model")
    ),
    *(
        f"{_LITERT}test/testdata/{name}.tflite"
        for name in (
            "gather_string", "island_partial", "reverse_signature_model", "simple_atan2_op",
            "single_add_default_a8w8_recipe_quantized", "single_mul_default_a8w8_recipe_quantized",
            "sqrt_mean_mul_multiple", "topo_sort_interleaved", "simple_add_dynamic_shape",
        )
    ),
    "tensorflow+tflite-micro:tensorflow/lite/micro/integration_tests/seanet/add/add0.tflite",
)  # fmt: skip


@pytest.mark.parametrize("name", SMALL, ids=lambda name: name.rsplit("/", 1)[1])
def test_small_models_are_within_one_percent_allowances_included(name: str, tmp_path: Path) -> None:
    analysis = _analysis(name, tmp_path)
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for mode, delegate in DELEGATES:
        heap = interpreter_heap(analysis.model, sizes, delegate=delegate)
        real = CACHE["models"][name][mode]
        for measured, predicted in PHASES:
            figure = getattr(heap, predicted)
            assert real[measured] <= figure <= real[measured] * 1.01, (mode, measured)


def test_the_xnnpack_first_invoke_builds_its_external_values() -> None:
    """The wheel's blocks (tests/litert_heap_trace.py's events in the invoke) for a delegated
    chain of 40 one-element ADDs, 41 externals (40 inputs, the output): the vector of external
    values doubles from 1 to 64 entries, each new block taken before the old is freed."""
    assert list(external_values_steps(41)) == [
        24, 40, -24, 72, -40, 136, -72, 264, -136, 520, -264, 1032, -520, -1032,
    ]  # fmt: skip
    assert list(external_values_steps(0)) == []


# Held-out small models (tests/litert_caller_cases.py, drawn after heap_caller.py replayed
# numpy's caches; tests/data/litert_heap.json): 1.015-1.074x after the first invoke with the
# former allowance, within 1% now, allowances included, under both delegates.
CALLER_CASES = sorted(name for name in names() if name.startswith("caller10_"))


@pytest.mark.parametrize("name", CALLER_CASES)
def test_held_out_small_models_are_within_one_percent(name: str, tmp_path: Path) -> None:
    path = model_path(name, tmp_path)
    assert path is not None
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for mode, delegate in DELEGATES:
        heap = interpreter_heap(analysis.model, sizes, delegate=delegate)
        real = cached(name)[mode]
        for measured, predicted in PHASES:
            figure = getattr(heap, predicted)
            assert real[measured] <= figure <= real[measured] * 1.01, (mode, measured)


def test_there_are_held_out_small_models() -> None:
    assert len(CALLER_CASES) == 24
