"""Overlap plans against real TFLM for Cortex-M with real inputs (tests/overlap_proofs.py).

The cached measurements (tests/data/overlap_proofs.json, `python -m tests.overlap_proofs`) are
the device's word: whatever the current rules say a plan is right on must have run bit-identical
there, at the declared kTensorArenaSize and above it, on every seed. A `probes`-marked test re-runs
a few cases live on the QEMU probes.
"""

from __future__ import annotations

from typing import Any

import pytest

from arenalens.optimization import required_bytes
from arenalens.runtimes.tflm.plan_validity import plan_validity, wrong_outputs
from arenalens.tflite.reader import load_model
from tests import overlap_proofs as proofs
from tests.conftest import SHARED_MODELS

CACHE = proofs.load_cache()
MODEL_CASES: list[dict[str, Any]] = CACHE.get("models", [])
RULE_CASES: list[dict[str, Any]] = CACHE.get("rules", [])


def _model_id(case: dict[str, Any]) -> str:
    return f"{case['model'].removesuffix('.tflite')}-{case['kernels'] or 'default'}"


def _original(case: dict[str, Any]) -> bytes:
    path = SHARED_MODELS / case["model"]
    if not path.is_file():
        pytest.skip(f"shared model {case['model']} not found at {SHARED_MODELS}")
    return path.read_bytes()


def _valid_on(case: dict[str, Any], target: str) -> bool:
    """The written plan's record says it is right on this probe build ('*': shares no bytes)."""
    valid = case["valid_for"]
    return "*" in valid or proofs.target_path(target).name in valid


def _identical(run: dict[str, Any]) -> bool:
    return bool(run["status"] == "ok" and run["outputs_identical"] and run["operators_identical"])


def test_the_cache_says_how_to_remake_it() -> None:
    assert CACHE["command"] == proofs.COMMAND
    assert len(CACHE["seeds"].split("-")) == 2 and CACHE["seeds"] == "1-5"
    assert MODEL_CASES and RULE_CASES
    measured = {target for case in MODEL_CASES for target in case["targets"]}
    assert measured == set(proofs.TARGETS)


@pytest.mark.parametrize("case", MODEL_CASES, ids=_model_id)
def test_what_the_rules_call_right_ran_bit_identical(case: dict[str, Any]) -> None:
    """Rebuild the measured file; on every probe build the current rules call it right on, it
    ran bit-identical at the declared size (the one arenalens still reports) and 1 KiB above."""
    written = load_model(proofs.written_model(_original(case), case))
    for target, measured in case["targets"].items():
        build = proofs.TARGETS[target]
        assert required_bytes(written, build) == measured["declared"], target
        if wrong_outputs(written, proofs.target_path(target)):
            continue
        for run in measured["runs"]:
            assert _identical(run), (target, run)


@pytest.mark.parametrize("case", [c for c in MODEL_CASES if c["kernels"] is None], ids=_model_id)
def test_a_plan_written_without_kernels_is_right_on_every_probe_build(
    case: dict[str, Any],
) -> None:
    for target, measured in case["targets"].items():
        assert _valid_on(case, target), target
        for run in measured["runs"]:
            assert _identical(run), (target, run)


def test_reference_plans_are_caught_where_cmsis_nn_computes_otherwise() -> None:
    """The issue's bug, measured: plans for the reference kernels that CMSIS-NN builds compute
    wrongly; every one of them is refused for those builds by the record and the rules."""
    wrong = 0
    for case in (c for c in MODEL_CASES if c["kernels"] == "reference"):
        written = load_model(proofs.written_model(_original(case), case))
        for target, measured in case["targets"].items():
            if all(_identical(run) for run in measured["runs"]):
                continue
            wrong += 1
            assert not _valid_on(case, target), (case["model"], target)
            assert wrong_outputs(written, proofs.target_path(target)), (case["model"], target)
    assert wrong, "no reference-kernel plan computed wrong outputs on a CMSIS-NN build"


@pytest.mark.parametrize("case", RULE_CASES, ids=lambda case: case["rule"])
def test_every_rule_holds_at_its_own_distance(case: dict[str, Any]) -> None:
    data = proofs.RULE_CASES[case["rule"]]()
    assert proofs.rule_distances(data) == case["distances"], "rules changed: re-measure"
    for target, runs in case["targets"].items():
        own = case["distances"][proofs.target_path(target).name]
        if own is None:
            continue
        assert _identical(runs[str(own)]), (target, own)


@pytest.mark.probes
@pytest.mark.parametrize(
    ("name", "kernels", "target"),
    [
        ("mlperf_tiny__kws_ref_model.tflite", "reference", "cortex-m7-cmsis-nn"),
        ("mlperf_tiny__pretrainedResnet_quant.tflite", None, "cortex-m3-cmsis-nn"),
    ],
)
def test_live_on_the_probes(name: str, kernels: str | None, target: str) -> None:
    missing = proofs.probes_missing()
    if missing:
        pytest.skip(missing)
    if not (SHARED_MODELS / name).is_file():
        pytest.skip(f"shared model {name} not found")
    originals = proofs.OriginalRuns("1-2")
    case = proofs.measure_model(name, kernels, originals, [target])
    assert case is not None
    runs = case["targets"][target]["runs"]
    written = load_model(proofs.written_model((SHARED_MODELS / name).read_bytes(), case))
    if _valid_on(case, target):
        assert plan_validity(written).shares_bytes, "nothing shared: a weak check"
        assert all(_identical(run) for run in runs), runs
    else:
        # A plan for the reference kernels on a CMSIS-NN build: refused, and rightly.
        assert wrong_outputs(written, proofs.target_path(target))
        assert not all(_identical(run) for run in runs), runs


@pytest.mark.probes
def test_live_rule_on_the_probes() -> None:
    missing = proofs.probes_missing()
    if missing:
        pytest.skip(missing)
    case = proofs.measure_rule(
        "conv 1x1 int8", proofs.OriginalRuns("1-2"), ["cortex-m7-reference", "cortex-m7-cmsis-nn"]
    )
    reference = case["distances"]["reference"]
    assert _identical(case["targets"]["cortex-m7-reference"][str(reference)])
    # CMSIS-NN's DSP 1x1 path re-reads its input per output-channel pair: the reference
    # distance computes other outputs there.
    assert not _identical(case["targets"]["cortex-m7-cmsis-nn"][str(reference)])
