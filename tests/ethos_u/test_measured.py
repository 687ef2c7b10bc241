"""Vela-compiled models: arenalens' figures on the Ethos-U build against the Ethos-U probe's
measurements (tests/data/ethos_u/development.json and, never used to write a rule, heldout.json;
`python -m tests.ethos_u.measure [--heldout]` remakes them): head, tail and every allocation
category with the recording allocator, tail and minimal arena with the plain one firmware uses;
every case with an NPU operator cannot-run, naming the Ethos-U build, on the same core without
the NPU; and every case Vela left wholly to the CPU runs there, with the probe's figures."""

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

CACHES = (DATA / "development.json", DATA / "heldout.json")


def _cases() -> dict[str, Any]:
    cases: dict[str, Any] = {}
    for path in CACHES:
        if path.exists():
            cases.update(json.loads(path.read_text())["cases"])
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


def _compiled(case_id: str) -> bool:
    """Whether Vela put any operator on the NPU (its model has an ethos-u operator)."""
    return is_vela_compiled(parse_model((MODELS / f"{case_id}.tflite").read_bytes(), case_id))


# Vela leaves float and signal operators to the CPU: some compilations have no NPU operator.
NPU_CASES = sorted(case_id for case_id in _cases() if _compiled(case_id))
CPU_ONLY_CASES = sorted(case_id for case_id in _cases() if not _compiled(case_id))


@pytest.mark.parametrize("case_id", NPU_CASES)
def test_without_the_npu_it_cannot_run_and_says_which_build_can(case_id: str) -> None:
    model = parse_model((MODELS / f"{case_id}.tflite").read_bytes(), case_id)
    found = support(model, device_build("cortex-m55"))
    assert not found.sets_up
    npu = SETTINGS[_cases()[case_id]["setting"]].accelerator
    assert any(f"--npu {npu}" in obstacle.fix for obstacle in found.obstacles)


@pytest.mark.parametrize("case_id", CPU_ONLY_CASES)
def test_a_model_vela_left_to_the_cpu_is_the_cpus_alone(case_id: str) -> None:
    """Vela's own summary says no NPU operator, and the model needs no NPU: it sets up on the
    core alone, with the probe's figures (the ETHOSU kernel registered or not changes nothing)."""
    entry = _cases()[case_id]
    assert entry["vela"]["npu_operators"] == 0 and entry["vela"]["cpu_operators"] > 0
    data = (MODELS / f"{case_id}.tflite").read_bytes()
    assert support(parse_model(data, case_id), device_build("cortex-m55")).sets_up
    cpu_alone = replace(target(), build=device_build("cortex-m55", recording=True))
    keys = ("loads", "head", "tail", "categories", "tail_plain", "min_arena_plain")
    predicted = predict(data, cpu_alone)
    assert {k: predicted.get(k) for k in keys} == {k: entry["probe"].get(k) for k in keys}


def test_the_cases_cover_both_kinds() -> None:
    """Both parametrized tests above have cases (an empty parameter list would skip, not fail)."""
    assert len(NPU_CASES) >= 80 and len(CPU_ONLY_CASES) >= 14


BOARDS_CACHE = DATA / "boards.json"
SHARED_REASON = "the shared corpus (../shared/models) or Vela (extra 'npu') is missing"


def _board_cases() -> list[str]:
    if not BOARDS_CACHE.exists():
        return []
    return sorted(
        case_id
        for case_id in json.loads(BOARDS_CACHE.read_text())["cases"]
        if "person_detect" in case_id  # MobileNetV2's compilations take too long for CI
    )


@pytest.mark.slow
@pytest.mark.parametrize("case_id", _board_cases())
def test_the_settings_chosen_for_the_boards_are_exact_on_the_probe(case_id: str) -> None:
    """The issue's done-when models are the shared corpus' (never copied here): compiled again
    with the setting `arenalens vela` chose, and predicted against the cached probe figures."""
    import importlib.util

    from tests.ethos_u.cases import BOARDS, SHARED_MODELS

    if not SHARED_MODELS.is_dir() or importlib.util.find_spec("ethosu") is None:
        pytest.skip(SHARED_REASON)
    from arenalens.vela.compiler import compile_model

    entry = json.loads(BOARDS_CACHE.read_text())["cases"][case_id]
    case = next(case for case in BOARDS if case.id == case_id)
    compiled = compile_model(case.source.model(), case.settings, name=case.source.id)
    if compiled.vela_version != entry["vela_version"]:
        pytest.skip(f"measured with Vela {entry['vela_version']}, {compiled.vela_version} here")
    predicted = predict(compiled.model, npu_target(entry["setting"]))
    keys = ("head", "tail", "categories", "tail_plain", "min_arena_plain")
    assert {k: predicted.get(k) for k in keys} == {k: entry["probe"].get(k) for k in keys}


@pytest.mark.parametrize("case_id", sorted(_cases()))
def test_velas_own_offline_plan_holds_on_every_code_path(case_id: str) -> None:
    """Vela may place an NPU operator's output over an input its command stream has finished
    reading (cnn-3, quant-3: the CPU operator's output feeding the NPU); that is Vela's schedule,
    not a conflict."""
    from arenalens.builds.kernel_paths import KNOWN_PATHS
    from arenalens.runtimes.tflm.plan_validity import wrong_outputs

    model = parse_model((MODELS / f"{case_id}.tflite").read_bytes(), case_id)
    assert {path.name: wrong_outputs(model, path) for path in KNOWN_PATHS} == {
        path.name: () for path in KNOWN_PATHS
    }


def _cmsis_nn_cases() -> dict[str, Any]:
    from tests.ethos_u.measure import CMSIS_NN_CACHE

    if not CMSIS_NN_CACHE.exists():
        return {}
    cases: dict[str, Any] = json.loads(CMSIS_NN_CACHE.read_text())["cases"]
    return cases


def test_the_cmsis_nn_probe_measured_every_fallback_case() -> None:
    """Every cached compilation with a CPU operator was measured on the CMSIS-NN probe (and the
    held-out ones besides), so the test below cannot pass by having no case."""
    from tests.ethos_u.measure import fallback_entries

    measured = _cmsis_nn_cases()
    assert set(fallback_entries()) <= set(measured)
    assert any(entry["heldout"] for entry in measured.values())


@pytest.mark.parametrize("case_id", sorted(_cmsis_nn_cases()))
def test_cmsis_nn_fallbacks_equal_the_cmsis_nn_probe(case_id: str) -> None:
    """The operators Vela leaves to the CPU run CMSIS-NN's kernels on these boards' firmware:
    `cortex-m55/cmsis-nn+ethos-u55-*` against the probe built with TFLM's CMSIS-NN library."""
    entry = _cmsis_nn_cases()[case_id]
    data = (MODELS / f"{case_id}.tflite").read_bytes()
    npu = SETTINGS[entry["setting"]].accelerator
    build = device_build("cortex-m55", "cmsis-nn", npu=npu, recording=True)
    predicted = predict(data, replace(target(), build=build))
    keys = ("loads", "head", "tail", "categories", "tail_plain", "min_arena_plain")
    assert {k: predicted.get(k) for k in keys} == {k: entry["probe"].get(k) for k in keys}
