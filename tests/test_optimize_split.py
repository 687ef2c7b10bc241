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


def test_a_split_record_names_the_input_shapes_and_reads_back() -> None:
    from arenalens.ir import PlanRecord
    from arenalens.tflite.plan_record import decode_plan_record, encode_plan_record

    plain = PlanRecord(version=1, plan_sha256="0" * 64, valid_for=("*",))
    assert b"split_input_shapes" not in encode_plan_record(plain)  # unsplit records: same bytes
    split = PlanRecord(
        version=1, plan_sha256="0" * 64, valid_for=("*",), split_input_shapes=((1, 64, 48, 3),)
    )
    assert decode_plan_record(encode_plan_record(split), "m") == split
    with pytest.raises(Exception, match="'split_input_shapes' is not a short list of shapes"):
        decode_plan_record(encode_plan_record(plain)[:-1] + b',"split_input_shapes":[[1,-2]]}', "m")


@pytest.mark.runtime
def test_a_split_model_is_its_own_size_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flow campaign (seed 77712, flow 20) split resnet8 at 32x32, then followed check's step
    at 39x35: `optimize optimized.tflite --input-shape ...` wrote a model whose outputs were not
    the original network's (the bands slice the rows of 32x32). The split's input size is in the
    record: at another size check says CANNOT RUN CORRECTLY and names the original as the way,
    optimize refuses in one line and writes nothing, and at its own size a new plan keeps it."""
    pytest.importorskip("tflite_micro")
    pytest.importorskip("ai_edge_litert")
    split = tmp_path / "split.tflite"
    assert main(["optimize", "example:resnet8_cifar", "-o", str(split), "--split"]) == 0
    capsys.readouterr()
    record = load_model(split.read_bytes()).plan_record
    assert record is not None and record.split_input_shapes == ((1, 32, 32, 3),)
    other = ("--input-shape", "input=1x39x35x3")
    assert main(["check", str(split), *other, "--budget", "1MB", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "CANNOT RUN CORRECTLY"
    assert document["plan_conflicts"][0]["kind"] == "split"
    (step,) = document["next_steps"]
    assert step["command"] is None and "split the original model" in step["text"]
    # diagnose's findings quote no command that cannot run as printed (seed 500631 flow 39:
    # their fix quoted `arenalens optimize --split` and `arenalens optimize`, usage errors).
    assert main(["diagnose", str(split), *other, "--json"]) in (0, 1)
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert any("split the original model" in finding["fix"] for finding in findings)
    texts = [f"{finding['message']} {finding['fix']}" for finding in findings]
    quoted = [part for text in texts for part in text.split("`")[1::2]]
    assert all(str(split) in part for part in quoted if part.startswith("arenalens ")), quoted
    again = tmp_path / "again.tflite"
    assert main(["optimize", str(split), *other, "-o", str(again)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "split this model at input 1x32x32x3" in error
    assert not again.exists()
    # At its own size a new plan (overlaps: 46,680 -> 38,024 B) keeps the split's size.
    assert main(["optimize", str(split), "-o", str(again), "--overlap"]) == 0
    capsys.readouterr()
    rewritten = load_model(again.read_bytes()).plan_record
    assert rewritten is not None and rewritten.split_input_shapes == ((1, 32, 32, 3),)


@pytest.mark.runtime
def test_split_at_another_input_size_writes_and_plans_that_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Held-out flow campaign (seed 99123, flow 73): a model stored at one size, split at
    --input-shape another. The split was edited into the file's bytes, which still stored the old
    shapes of the tensors it keeps: every plan of it failed on the wheel ('TFLM failed to
    allocate tensors'), and check's step promised a figure optimize then did not write. Now the
    split starts from the model at the asked size: written, proven, and set up at its figure."""
    pytest.importorskip("tflite_micro")
    pytest.importorskip("ai_edge_litert")
    from arenalens.runtimes.tflm.probe import probe

    model = tmp_path / "stem.tflite"
    model.write_bytes(models.stem_model(size=(24, 20)))
    written = tmp_path / "split.tflite"
    asked = ("--input-shape", "image=1x64x48x3")
    argv = ["optimize", str(model), *asked, "-o", str(written), "--split", "--json"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["written"] and document["split"]["splits"]
    split = load_model(written.read_bytes())
    main_graph = split.subgraphs[0]
    assert main_graph.tensors[main_graph.inputs[0]].shape == (1, 64, 48, 3)
    figure = document["new_required_bytes"]
    assert required_bytes(split) == figure
    assert probe(str(written), figure).fits and not probe(str(written), figure - 1).fits
