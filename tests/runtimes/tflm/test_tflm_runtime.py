"""Live checks against the real TFLM interpreter (extra `runtime`): `verify` on small corpus
models and on synthetic models for rules the corpus does not reach (scratch kernels, per-channel
and int4 weights, control flow with an unreachable subgraph, offline plans, variables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.builds.build import HOST
from arenalens.cli import main
from arenalens.pipeline import analyze
from arenalens.tflite.reader import load_model
from tests.tflm_synthetic import SYNTHETIC_MODELS

pytestmark = pytest.mark.runtime


@pytest.fixture(autouse=True)
def _needs_tflite_micro() -> None:
    pytest.importorskip("tflite_micro")


@pytest.mark.parametrize(
    "name", ["tflite_micro__hello_world_int8.tflite", "tflite_micro__trained_lstm.tflite"]
)
def test_verify_agrees_on_corpus_models(name: str, shared_path: Path, capsys: object) -> None:
    code = main(["verify", str(shared_path / name), "--runtime", "tflm", "--min-arena"])
    assert code == 0


@pytest.mark.parametrize("name", sorted(SYNTHETIC_MODELS))
def test_verify_agrees_on_synthetic_models(name: str, tmp_path: Path) -> None:
    from arenalens.runtimes.tflm.verify import verify

    path = tmp_path / f"{name}.tflite"
    path.write_bytes(SYNTHETIC_MODELS[name]())
    primary = analyze(path, runtime="tflm").primary
    result = verify(
        path, load_model(path), primary.arena, primary.runtime_plan, HOST, min_arena=True
    )
    mismatches = [(r.label, r.predicted, r.real) for r in result.rows if not r.agrees]
    assert not mismatches


def test_too_small_arenas_fail_or_crash_in_the_child_only(shared_path: Path) -> None:
    from arenalens.runtimes.tflm.probe import probe

    model = str(shared_path / "tflite_micro__hello_world_float.tflite")
    assert probe(model, 1935).status == "too_small"
    assert probe(model, 1936).fits
    # kPreserveAllTensors at this size segfaults inside TFLM; the parent survives.
    crashed = probe(
        str(shared_path / "mlperf_tiny__ad01_fp32.tflite"), 1935, preserve_all_tensors=True
    )
    assert crashed.status == "crash"
