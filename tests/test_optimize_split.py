"""optimize --split: the split kept for what it saves on the build, proven on real TFLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens import load_model
from arenalens.builds.build import as_build
from arenalens.cli import main
from arenalens.optimization import optimize_model, prove_outputs, required_bytes
from tests.split import models

M7_CMSIS = "cortex-m7/cmsis-nn"


@pytest.mark.runtime
@pytest.mark.parametrize("build", [None, M7_CMSIS])
def test_split_saves_on_the_build_and_computes_the_same_bytes(build: str | None) -> None:
    pytest.importorskip("tflite_micro")
    original = models.stem_model(size=(64, 48))
    optimization = optimize_model(original, split=True, build=build)
    splitting = optimization.split
    assert splitting is not None and splitting.splits
    assert optimization.chosen is not None and optimization.saved_bytes > 0
    chosen_build = as_build(build)
    model = load_model(original)
    assert optimization.original_required_bytes == required_bytes(model, chosen_build)
    written = load_model(optimization.data)
    assert required_bytes(written, chosen_build) == optimization.new_required_bytes
    assert len(written.subgraphs[0].operators) > len(model.subgraphs[0].operators)
    for seed in (21, 22):  # seeds optimize did not use
        proof = prove_outputs(original, optimization.data, model, seed=seed)
        assert proof.identical, proof.detail
    assert any("operators split" in note for note in optimization.notes)


@pytest.mark.runtime
def test_split_with_overlap_on_cmsis_nn() -> None:
    pytest.importorskip("tflite_micro")
    original = models.residual_model()
    plain = optimize_model(original, overlap=True, build=M7_CMSIS)
    split = optimize_model(original, overlap=True, build=M7_CMSIS, split=True)
    assert split.new_required_bytes <= plain.new_required_bytes
    proof = prove_outputs(original, split.data, load_model(original), seed=5)
    assert proof.identical, proof.detail


@pytest.mark.runtime
def test_nothing_to_split_says_why() -> None:
    pytest.importorskip("tflite_micro")
    optimization = optimize_model(models.fully_connected_model(), split=True)
    assert optimization.split is not None and not optimization.split.splits
    assert any(
        note.startswith("split: nothing to split saves bytes") for note in optimization.notes
    )


@pytest.mark.runtime
def test_cli_split_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tflite_micro")
    model = tmp_path / "stem.tflite"
    model.write_bytes(models.stem_model(size=(64, 48)))
    out = tmp_path / "out.tflite"
    args = ["optimize", str(model), "-o", str(out), "--split", "--cpu", "cortex-m7"]
    assert main([*args, "--kernels", "cmsis-nn", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    split = document["split"]
    assert document["written"] and out.exists()
    assert split["splits"] and split["operators_added"] > 0 and split["tensors_added"] > 0
    assert split["copied_bytes"] > 0 and split["measured_after"] < split["measured_before"]
    assert document["real_tflm"]["outputs_identical"]
    assert document["new_required_bytes"] < document["required_bytes"]
    out.unlink()
    assert main([*args, "--kernels", "cmsis-nn"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the terminal width wraps lines
    assert "split: operators" in text and "extra work per inference" in text
    assert "copied by slices, pads and concatenations" in text
    assert "x86-64 tflite_micro wheel" in text


def test_cli_split_needs_the_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["optimize", "example:vww_mobilenet_v1", "-o", str(tmp_path / "o.tflite")]
    assert main([*args, "--split", "--no-verify"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "--split needs the real-runtime proof" in error
    assert not (tmp_path / "o.tflite").exists()


@pytest.mark.runtime
@pytest.mark.slow
def test_person_detect_declares_at_most_70000_bytes_on_cmsis_nn(shared_path: Path) -> None:
    pytest.importorskip("tflite_micro")
    original = (shared_path / "tflite_micro__person_detect.tflite").read_bytes()
    optimization = optimize_model(original, overlap=True, build=M7_CMSIS, split=True)
    assert optimization.original_required_bytes == 82_316
    assert optimization.new_required_bytes <= 70_000
    proof = prove_outputs(original, optimization.data, load_model(original), seed=9)
    assert proof.identical, proof.detail


@pytest.mark.runtime
@pytest.mark.slow
def test_vww_head_goes_below_its_whole_tensor_floor_on_the_reference_build(
    shared_path: Path,
) -> None:
    pytest.importorskip("tflite_micro")
    original = (shared_path / "mlperf_tiny__vww_96_int8.tflite").read_bytes()
    optimization = optimize_model(original, overlap=True, build="cortex-m7/reference", split=True)
    largest = max(t.nbytes for t in load_model(original).subgraphs[0].tensors if not t.is_constant)
    assert largest == 36_864
    assert optimization.new_head < largest
    proof = prove_outputs(original, optimization.data, load_model(original), seed=9)
    assert proof.identical, proof.detail
