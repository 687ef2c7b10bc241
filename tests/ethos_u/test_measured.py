"""Vela-compiled models: arenalens' figures on the Ethos-U build against the Ethos-U probe's
measurements (tests/data/ethos_u/development.json, `python -m tests.ethos_u.measure` remakes
it): head, tail and every allocation category with the recording allocator, tail and minimal
arena with the plain one firmware uses; and every case cannot-run, naming the Ethos-U build, on
the same core without the NPU."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from arenalens.builds.build import device_build
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.reader import parse_model
from arenalens.vela.compiled import is_vela_compiled
from tests.conformance.predict import predict
from tests.ethos_u.cases import DATA, MODELS, SETTINGS
from tests.ethos_u.measure import target

DEVELOPMENT = DATA / "development.json"


def _cases() -> dict[str, Any]:
    if not DEVELOPMENT.exists():
        return {}
    cases: dict[str, Any] = json.loads(DEVELOPMENT.read_text())["cases"]
    return cases


def npu_target(setting: str) -> Any:
    """The probe as a predicted target: Cortex-M55, reference kernels, the case's NPU."""
    build = device_build("cortex-m55", npu=SETTINGS[setting].accelerator, recording=True)
    return replace(target(), build=build)


@pytest.mark.parametrize("case_id", sorted(_cases()))
def test_figures_equal_the_probe(case_id: str) -> None:
    entry = _cases()[case_id]
    measured = entry["probe"]
    predicted = predict((MODELS / f"{case_id}.tflite").read_bytes(), npu_target(entry["setting"]))
    keys = ("loads", "head", "tail", "categories", "tail_plain", "min_arena_plain")
    assert {k: predicted.get(k) for k in keys} == {k: measured.get(k) for k in keys}


@pytest.mark.parametrize("case_id", sorted(_cases()))
def test_without_the_npu_it_cannot_run_and_says_which_build_can(case_id: str) -> None:
    model = parse_model((MODELS / f"{case_id}.tflite").read_bytes(), case_id)
    if not is_vela_compiled(model):
        pytest.skip("Vela left every operator to the CPU")
    found = support(model, device_build("cortex-m55"))
    assert not found.sets_up
    npu = SETTINGS[_cases()[case_id]["setting"]].accelerator
    assert any(f"--npu {npu}" in obstacle.fix for obstacle in found.obstacles)
