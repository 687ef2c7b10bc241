"""ESP32 builds (esp-tflite-micro with ESP-NN, on every esp-nn chip path and release, and TFLM's
reference kernels on the same core) against the ESP probes' cached measurements: every cached
case predicted exactly (head, the plain allocator's tail and minimal arena; on the full build the
recording allocator's tail and categories too), every case each build measures cached, and the
cases the other builds share with the full one by construction measured alike there
(tests/conformance/esp_variants.py says which and why).

Remake the caches under nice (QEMU): `python -m tests.conformance.measure --target esp32s3-esp-nn
--stale`, and for each other ESP build `... --target NAME --variant-cases --stale`.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import differences, under_predicted
from tests.conformance.esp_variants import FULL, differs_by_construction, variant_cases
from tests.conformance.measure import load
from tests.conformance.predict import predict
from tests.conformance.targets import ESP_TARGET_NAMES, TARGETS

# What every ESP build measures (the plain allocator: the one firmware runs).
PLAIN_FIELDS = ("loads", "head", "tail_plain", "min_arena_plain")
# Cases predicted high on purpose, on every target (docs/conformance.md), and why: never low.
KNOWN_HIGH = {
    "CUSTOM:TFLM_DECODE.INT8.prune_per_channel_output": (
        "DecodeStatePrune's state may land on the output's zero points, which makes Setup copy "
        "them at some sizes only: counted as a failure (kernels/compression.py)"
    ),
}


def _cached_params() -> list[Any]:
    return [
        pytest.param(name, case, cached[case.id], id=f"{name}:{case.id}")
        for name in ESP_TARGET_NAMES
        for cached in (load(name)["cases"],)
        for case in all_cases()
        if case.id in cached
    ]


@pytest.mark.parametrize(("name", "case", "measured"), _cached_params())
def test_the_prediction_is_the_esp_probe_s(name: str, case: Case, measured: dict[str, Any]) -> None:
    assert measured["sha256"] == case.sha256(), (
        f"{case.id} changed since it was measured on {name}: "
        f"python -m tests.conformance.measure --target {name} --case {case.id}"
    )
    predicted = predict(case.model(), TARGETS[name])
    if case.id in KNOWN_HIGH:
        assert not under_predicted(predicted, measured), differences(predicted, measured)
        assert differences(predicted, measured), f"{case.id} is exact now: drop it from KNOWN_HIGH"
        return
    assert differences(predicted, measured) == []


@pytest.mark.parametrize("name", ESP_TARGET_NAMES)
def test_every_case_the_build_measures_is_cached(name: str) -> None:
    cached = load(name)["cases"]
    missing = [case.id for case in variant_cases(name) if case.id not in cached]
    option = "" if name == FULL else " --variant-cases"
    assert not missing, (
        f"not measured on {name} (python -m tests.conformance.measure --target {name}{option} "
        f"--stale): {missing[:20]}{' ...' if len(missing) > 20 else ''}"
    )


@pytest.mark.parametrize("name", [name for name in ESP_TARGET_NAMES if name != FULL])
def test_the_cases_shared_by_construction_set_up_alike(name: str) -> None:
    """Every case a build measured although its setup cannot differ from the full build's by
    construction (the sample, and any measured before: their kernels are the same source on
    every ESP build) measured the same there as on the full build."""
    full, mine = load(FULL)["cases"], load(name)["cases"]
    unlike = [
        (case.id, {f: (full[case.id].get(f), mine[case.id].get(f)) for f in PLAIN_FIELDS})
        for case in all_cases()
        if not differs_by_construction(case, name)
        and case.id in full
        and case.id in mine
        and any(full[case.id].get(f) != mine[case.id].get(f) for f in PLAIN_FIELDS)
    ]
    assert not unlike, unlike
