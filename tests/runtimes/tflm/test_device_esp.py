"""ESP32 figures of whole models against esp-tflite-micro with ESP-NN on the ESP probes (RV32
under QEMU, ../shared/tools/esp): every figure exact, on every ESP build the probes stand for
(tests/conformance/targets.py `ESP_BUILDS`: the S3, P4, generic and ANSI C esp-nn paths, the S3
at esp-nn 1.2.0 and 1.1.2, TFLM's reference kernels).

* tests/device_core.py's runtime-allocation models (tests/data/device_core_esp.json:
  `python -m tests.device_core --esp`);
* the built-in examples (tests/data/device_examples_esp.json:
  `python -m tests.device_reference --measure-esp-examples`);
* the shared corpus (../shared/models/reference-esp.json: the plain allocator's head, tail and
  minimal arena; skipped where the corpus is absent);
* held-out models the flow campaign generates (tests/data/esp_heldout.json:
  `python -m tests.esp_heldout`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

import pytest

from arenalens.builds.abi import ILP32_INT_ENUMS
from arenalens.builds.build import device_build
from arenalens.runtimes.tflm import structs
from arenalens.runtimes.tflm.setup_layout import layout_for
from tests.conformance.predict import predict
from tests.conformance.targets import ESP_TARGET_NAMES, TARGETS
from tests.conftest import SHARED_MODELS, SHARED_REASON
from tests.device_core import ESP_TARGETS, FIELDS, MODELS, cached
from tests.device_reference import EXAMPLE_PREFIX, esp_examples, model_bytes
from tests.esp_heldout import CACHE as HELDOUT_CACHE
from tests.esp_heldout import model_bytes as heldout_model
from tests.esp_heldout import recipes as heldout_recipes

CORPUS = SHARED_MODELS / "reference-esp.json"


@cache
def _corpus() -> dict[str, dict[str, Any]]:
    if not CORPUS.is_file():
        return {}
    targets: dict[str, dict[str, Any]] = json.loads(CORPUS.read_text())["targets"]
    return targets


def test_an_esp_tensor_is_40_bytes_with_int_sized_enums() -> None:
    # quantization.type, type and allocation_type are enums: 4 bytes each on Xtensa and RISC-V,
    # 1 under the Arm EABI (32 B there); TfLiteEvalTensor has no enum that grows it.
    assert structs.TF_LITE_TENSOR.size(ILP32_INT_ENUMS, frozenset()) == 40
    assert layout_for(device_build("esp32s3")).tflite_tensor == 40
    assert layout_for(device_build("cortex-m7")).tflite_tensor == 32
    assert layout_for(device_build("esp32s3")).eval_tensor == 12


def test_every_core_model_is_measured_on_the_esp_probe() -> None:
    assert {target: sorted(models) for target, models in cached(esp=True).items()} == {
        target: sorted(MODELS) for target in ESP_TARGETS
    }, "python -m tests.device_core --esp"


@pytest.mark.parametrize(
    ("target", "name"),
    [
        pytest.param(target, name, id=f"{target}:{name}")
        for target, models in sorted(cached(esp=True).items())
        for name in sorted(models)
    ],
)
def test_core_model_prediction_equals_the_esp_probe(target: str, name: str) -> None:
    measured = cached(esp=True)[target][name]
    data = MODELS[name]()
    assert hashlib.sha256(data).hexdigest() == measured["sha256"], (
        f"{name} changed since it was measured: python -m tests.device_core --esp"
    )
    predicted = predict(data, TARGETS[target])
    assert {f: predicted[f] for f in FIELDS} == {f: measured[f] for f in FIELDS}
    assert predicted["categories"] == measured["categories"]


def test_every_example_is_measured_on_every_esp_build() -> None:
    from arenalens.examples import EXAMPLES

    assert {target: sorted(models) for target, models in esp_examples().items()} == {
        target: sorted(EXAMPLE_PREFIX + name for name in EXAMPLES) for target in ESP_TARGET_NAMES
    }, "python -m tests.device_reference --measure-esp-examples"


@pytest.mark.parametrize(
    ("target", "model"),
    [
        pytest.param(target, model, id=f"{target}:{model.removeprefix(EXAMPLE_PREFIX)}")
        for target, models in sorted(esp_examples().items())
        for model in sorted(models)
    ],
)
def test_example_prediction_equals_the_esp_probe(target: str, model: str) -> None:
    measured = esp_examples()[target][model]
    assert hashlib.sha256(model_bytes(model)).hexdigest() == measured["sha256"], (
        f"{model} changed since it was measured: "
        "python -m tests.device_reference --measure-esp-examples"
    )
    predicted = predict(model_bytes(model), TARGETS[target])
    assert {f: predicted[f] for f in FIELDS} == {f: measured[f] for f in FIELDS}
    assert predicted["categories"] == measured["categories"]


def _corpus_params() -> list[Any]:
    params = [
        pytest.param(target, model, id=f"{target}:{model.removesuffix('.tflite')}")
        for target, models in sorted(_corpus().items())
        for model in sorted(models)
    ]
    if not params:
        params.append(pytest.param(None, None, marks=pytest.mark.skip(reason=SHARED_REASON)))
    return params


@pytest.mark.parametrize(("target", "model"), _corpus_params())
def test_corpus_model_prediction_equals_the_esp_probe(target: str, model: str) -> None:
    measured = _corpus()[target][model]
    predicted = predict((SHARED_MODELS / model).read_bytes(), TARGETS[target])
    if measured["status"] != "ok":
        assert not predicted["loads"], f"{model} fails on {target}, predicted to load"
        return
    assert predicted["loads"], predicted.get("reasons")
    mine = (predicted["head"], predicted["tail_plain"], predicted["min_arena_plain"])
    assert mine == (measured["head"], measured["tail"], measured["min_arena"])


def test_the_corpus_covers_every_esp_build() -> None:
    if not _corpus():
        pytest.skip(SHARED_REASON)
    assert set(_corpus()) == set(ESP_TARGET_NAMES)


def _heldout_params() -> list[Any]:
    cache = json.loads(HELDOUT_CACHE.read_text())["models"]
    return [
        pytest.param(model, name, entry["sha256"], figures, id=f"{name}:{model}")
        for model, entry in sorted(cache.items())
        for name, figures in sorted(entry["targets"].items())
    ]


@pytest.mark.parametrize(("model", "target", "sha256", "measured"), _heldout_params())
def test_heldout_model_prediction_equals_the_esp_probe(
    model: str, target: str, sha256: str, measured: dict[str, Any]
) -> None:
    """Models no rule was fitted to (the flow campaign's generators): head, tail and minimal
    arena exact on every ESP build (tests/data/esp_heldout.json: `python -m tests.esp_heldout`)."""
    family, _, seed = model.partition(" seed=")
    data = heldout_model(family, int(seed))
    changed = f"{model} changed since it was measured: python -m tests.esp_heldout"
    assert hashlib.sha256(data).hexdigest() == sha256, changed
    predicted = predict(data, TARGETS[target])
    if not measured["loads"]:
        assert not predicted["loads"], f"{model} fails on {target}, predicted to load"
        return
    mine = (predicted["head"], predicted["tail_plain"], predicted["min_arena_plain"])
    assert mine == (measured["head"], measured["tail_plain"], measured["min_arena_plain"])


def test_every_heldout_model_is_measured_on_every_esp_build() -> None:
    cache = json.loads(HELDOUT_CACHE.read_text())["models"]
    assert sorted(cache) == sorted(f"{family} seed={seed}" for family, seed in heldout_recipes())
    assert all(set(entry["targets"]) == set(ESP_TARGET_NAMES) for entry in cache.values())
