"""TFLM predictions against reference.json, measured on the real interpreter: for every model of
../shared/models that TFLM loads, the head, the tail, every print_allocations() category, the
minimal arena (and head/tail printed there) and the preserve_all_tensors minimal arena.

The brief asks for the minimal arena within 1%; these tests hold it to the byte, because the
setup replay reproduces it exactly on every model.
"""

from __future__ import annotations

from typing import Any

import pytest

from arenalens import load_model
from arenalens.pipeline import analyze
from arenalens.planning import run_planner
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import predict_setup
from arenalens.runtimes.tflm.kernels.setups import scratch_requests
from tests.conftest import SHARED_MODELS, SHARED_REASON, shared_reference


def tflm_loadable() -> list[Any]:
    reference = shared_reference()
    names = sorted(name for name, entry in reference.items() if entry["tflm"].get("loads"))
    if not names:
        return [pytest.param(None, marks=pytest.mark.skip(reason=SHARED_REASON), id="no-corpus")]
    return [pytest.param(name, id=name.removesuffix(".tflite")) for name in names]


@pytest.fixture(scope="module")
def predictions() -> dict[str, Any]:
    """Analyses of the corpus, computed once per module."""
    return {}


def analysis_of(name: str, cache: dict[str, Any]) -> Any:
    if name not in cache:
        cache[name] = analyze(SHARED_MODELS / name, runtime="tflm")
    return cache[name]


@pytest.mark.parametrize("name", tflm_loadable())
def test_head_is_exact(name: str, predictions: dict[str, Any]) -> None:
    expected = shared_reference()[name]["tflm"]
    analysis = analysis_of(name, predictions)
    assert analysis.primary.runtime_plan.arena_size == expected["head"]
    assert analysis.budget.parts["head"] == expected["head"]


@pytest.mark.parametrize("name", tflm_loadable())
def test_tail_and_categories_are_exact(name: str, predictions: dict[str, Any]) -> None:
    expected = shared_reference()[name]["tflm"]
    analysis = analysis_of(name, predictions)
    assert analysis.budget.parts["tail"] == expected["tail"]
    result = analysis.primary
    aligned = predict_setup(analysis.model, result.arena, result.runtime_plan).aligned
    assert aligned.total == expected["total"]
    real = {
        category: (value["used"], value["requested"], value["count"])
        for category, value in expected["categories"].items()
    }
    assert dict(aligned.categories) == real


@pytest.mark.parametrize("name", tflm_loadable())
def test_minimal_arena_is_exact(name: str, predictions: dict[str, Any]) -> None:
    expected = shared_reference()[name]["tflm"]
    analysis = analysis_of(name, predictions)
    predicted = analysis.budget.required_bytes
    assert abs(predicted - expected["min_arena"]) <= 0.01 * expected["min_arena"]
    assert predicted == expected["min_arena"]
    result = analysis.primary
    at_minimum = predict_setup(analysis.model, result.arena, result.runtime_plan).at_minimum
    assert (at_minimum.head, at_minimum.tail) == (
        expected["at_min_arena"]["head"],
        expected["at_min_arena"]["tail"],
    )


@pytest.mark.parametrize("name", tflm_loadable())
def test_preserve_all_tensors_minimal_arena_is_exact(name: str) -> None:
    expected = shared_reference()[name]["tflm"]["preserve_all"]["min_arena"]
    model = load_model(SHARED_MODELS / name)
    arena = arenas(model)[0]
    plan = run_planner("tflm_linear", arena.problem)
    assert predict_setup(model, arena, plan).minimal_arena == expected


# docs/runtime-rules.md §T5: the scratch requests that explain each real head of the corpus.
SCRATCH_TABLE = {
    "tflite_micro__dtln_noise_suppression.tflite": [256] * 8,
    "tflite_micro__keyword_scrambled.tflite": [256, 256] * 4 + [128, 128] * 3,
    "tflite_micro__keyword_scrambled_8bit.tflite": [256, 256] * 4 + [128, 128] * 3,
    "tflite_micro__micro_speech_lstm.tflite": [160] * 4,
    "tflite_micro__trained_lstm.tflite": [80] * 4,
    "tflite_micro__trained_lstm_int8.tflite": [40] * 4,
    "tflite_micro__transpose_conv0.tflite": [18_432],
    "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite": [5_120, 16, 8],
    "tflite_micro__audio_preprocessor_float.tflite": [1_024],
    "tflite_micro__audio_preprocessor_int8.tflite": [1_024],
    "tflite_micro__hello_world_float.tflite": [],
    "mlperf_tiny__vww_96_int8.tflite": [],
}


@pytest.mark.parametrize("name", sorted(SCRATCH_TABLE))
def test_scratch_requests_match_the_corpus_table(name: str, shared_path: Any) -> None:
    model = load_model(shared_path / name)
    sizes = [request.nbytes for request in scratch_requests(model)]
    expected = SCRATCH_TABLE[name]
    if name.startswith("tflite_micro__keyword_scrambled"):
        assert sorted(sizes) == sorted(expected)  # order follows the SVDF layer sizes
    else:
        assert sizes == expected


def test_vela_offline_plan_head_is_derived_as_documented(shared_path: Any) -> None:
    # docs/runtime-rules.md §T9: four tensors at offset 0 (largest 74,464) plus two 48-byte
    # ethos-u scratch buffers.
    model = load_model(shared_path / "tflite_micro__person_detect_vela.tflite")
    arena = arenas(model)[0]
    fixed = [b for b in arena.problem.buffers if b.fixed_offset is not None]
    assert sorted(b.size for b in fixed) == [16, 9_216, 74_464, 74_464]
    plan = run_planner("tflm_greedy", arena.problem)
    scratch_offsets = sorted(
        plan.offsets[b.id] for b in arena.problem.buffers if b.fixed_offset is None
    )
    assert scratch_offsets == [74_464, 74_512]
    assert plan.arena_size == 74_560


def all_corpus_models() -> list[Any]:
    reference = shared_reference()
    if not reference:
        return [pytest.param(None, marks=pytest.mark.skip(reason=SHARED_REASON), id="no-corpus")]
    return [pytest.param(name, id=name.removesuffix(".tflite")) for name in sorted(reference)]


@pytest.mark.parametrize("name", all_corpus_models())
def test_setup_failures_predict_which_models_tflm_loads(name: str) -> None:
    from arenalens.runtimes.tflm.support import setup_failures

    loads = shared_reference()[name]["tflm"]["loads"]
    failures = setup_failures(load_model(SHARED_MODELS / name))
    assert (not failures) == loads, failures
