"""optimize / compare / report --overlap: outputs sliding over the inputs they consume."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from arenalens import load_model
from arenalens.builds.build import KernelLibrary
from arenalens.cli import main
from arenalens.errors import UsageError
from arenalens.examples import example_bytes
from arenalens.optimization import optimize_model, prove_outputs
from arenalens.pipeline import analyze
from arenalens.runtimes.tflm.kernels import registry
from arenalens.runtimes.tflm.kernels.base import AccessOrder, KernelContext

# The goal for MLPerf Tiny VWW int8 and TFLM's person_detect: at most 40 KiB of head.
HEAD_GOAL = 40_960


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("name", "runtime_head"),
    [("mlperf_tiny__vww_96_int8.tflite", 73_728), ("tflite_micro__person_detect.tflite", 55_296)],
)
def test_vww_and_person_detect_fit_in_40_kib_on_real_tflm(
    shared_path: Path, name: str, runtime_head: int
) -> None:
    pytest.importorskip("tflite_micro")
    original = (shared_path / name).read_bytes()
    optimization = optimize_model(original, overlap=True)
    assert optimization.chosen is not None and optimization.chosen.shared
    model = load_model(original)
    for seed in (11, 12):  # seeds optimize did not use
        proof = prove_outputs(original, optimization.data, model, seed=seed)
        assert proof.identical, proof.detail
        assert proof.original_head == runtime_head
        assert proof.new_head == optimization.new_head <= HEAD_GOAL
    assert optimization.disjoint_head == 55_296
    assert optimization.chosen.lower_bound <= optimization.new_head


@pytest.mark.runtime
def test_cli_overlap_with_reorder_and_inplace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tflite_micro")
    out = tmp_path / "out.tflite"
    args = ["optimize", "example:vww_mobilenet_v1", "-o", str(out), "--json"]
    assert main([*args, "--overlap", "--reorder", "--inplace"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["written"] and out.exists()
    assert document["real_tflm"]["outputs_identical"]
    assert document["real_tflm"]["new_head"] == document["new_head"] == 36_880
    overlap = document["overlap"]
    assert overlap["disjoint_head"] == 55_296 and overlap["disjoint_lower_bound"] == 55_296
    assert overlap["shared"] and {p["opcode"] for p in overlap["shared"]} >= {"CONV_2D"}
    assert any("proven bit-exact" in note for note in document["notes"])


@pytest.mark.runtime
def test_a_wrong_rule_is_caught_by_the_real_runtime_and_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("tflite_micro")
    # Pretend every convolution may write its output in place: the proof must refuse it.
    rules = dict(registry.REFERENCE_KERNELS)
    conv = rules["CONV_2D"]
    assert isinstance(conv.access, AccessOrder)

    def in_place(view: KernelContext, slots: frozenset[int], output: int) -> int:
        return 0

    rules["CONV_2D"] = replace(conv, access=replace(conv.access, distance=in_place))
    monkeypatch.setattr(registry, "REFERENCE_KERNELS", MappingProxyType(rules))
    original = example_bytes("kws_ds_cnn")
    optimization = optimize_model(original, overlap=True)
    assert any("outputs differ" in note and "dropped" in note for note in optimization.notes)
    assert optimization.chosen is None or not any(
        pair.opcode == "CONV_2D" and pair.overlap.min_offset_distance == 0
        for pair in optimization.chosen.shared
    )
    proof = prove_outputs(original, optimization.data, load_model(original))
    assert proof.identical


def test_overlap_needs_the_runtime_proof(tmp_path: Path) -> None:
    out = tmp_path / "out.tflite"
    code = main(["optimize", "example:kws_ds_cnn", "-o", str(out), "--overlap", "--no-verify"])
    assert code == 2
    assert not out.exists()


def test_cmsis_nn_overlaps_are_a_subset_of_the_reference_ones() -> None:
    model = load_model(example_bytes("vww_mobilenet_v1"))
    reference = optimize_model(model, overlap=True, prove_inplace=False)
    cmsis = optimize_model(model, overlap=True, kernels=KernelLibrary.CMSIS_NN, prove_inplace=False)
    assert reference.new_head <= cmsis.new_head <= reference.disjoint_head
    allowed = {(p.operator, p.input_tensor) for c in reference.candidates for p in c.overlaps}
    assert {(p.operator, p.input_tensor) for c in cmsis.candidates for p in c.overlaps} <= allowed


def test_compare_overlap_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", "example:vww_mobilenet_v1", "--overlap", "--json", "--time-limit", "2"]
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["overlap"]["lower_bound"] < document["lower_bound"] == 55_296
    best = next(row for row in document["rows"] if row["planner"] == "best")
    assert best["with_overlaps"]["arena_bytes"] < best["arena_bytes"]
    runtime = next(row for row in document["rows"] if row["runtime_planner"])
    # The runtime's replica ignores overlaps: the same arena either way.
    assert runtime["with_overlaps"]["arena_bytes"] == runtime["arena_bytes"]
    assert main(["compare", "example:vww_mobilenet_v1", "--overlap", "--planners", "best"]) == 0
    assert "with overlaps" in capsys.readouterr().out


def test_compare_overlap_refuses_litert(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "example:kws_ds_cnn", "--overlap", "--runtime", "litert"]) == 2
    assert "needs TFLM" in capsys.readouterr().err


def test_report_overlap_shows_both_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "example:vww_mobilenet_v1", "--overlap", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    arena = document["reports"][0]["arenas"][0]
    assert arena["plans"][0]["planner"] == "best+overlaps"
    assert arena["plans"][0]["arena_size"] == arena["overlap_lower_bound"] == 36_880
    assert arena["lower_bound"] == 55_296
    assert len(arena["overlaps"]["output"]) == len(arena["overlaps"]["opcode"]) > 0
    assert main(["report", "example:vww_mobilenet_v1", "--overlap"]) == 0
    text = capsys.readouterr().out
    assert "with overlaps" in text and "best+overlaps" in text


def test_overlap_rules_come_from_the_build() -> None:
    model = load_model(example_bytes("kws_ds_cnn"))
    device = analyze(model, build="cortex-m7/cmsis-nn", overlap=True)
    assert device.overlap is not None and device.overlap.kernels is KernelLibrary.CMSIS_NN
    named = analyze(model, build="cortex-m7/cmsis-nn", overlap="cmsis-nn")
    assert named.overlap is not None and named.overlap.pairs == device.overlap.pairs
    host = analyze(model, overlap=True)
    assert host.overlap is not None and host.overlap.kernels is KernelLibrary.REFERENCE
    # CMSIS-NN's rules hold on the reference kernels too: a stricter plan for the wheel.
    stricter = analyze(model, overlap=KernelLibrary.CMSIS_NN)
    assert stricter.overlap is not None
    assert {p.overlap for p in stricter.overlap.pairs} <= {p.overlap for p in host.overlap.pairs}


def test_overlap_rules_that_contradict_the_build_are_refused() -> None:
    # The reference kernels' order on a CMSIS-NN build: plans its firmware would compute wrong.
    with pytest.raises(UsageError, match=r"does not hold on cortex-m7/cmsis-nn"):
        analyze(example_bytes("kws_ds_cnn"), build="cortex-m7/cmsis-nn", overlap="reference")
    with pytest.raises(UsageError, match=r"does not hold on cortex-m4/cmsis-nn"):
        optimize_model(
            example_bytes("kws_ds_cnn"),
            overlap=True,
            kernels=KernelLibrary.REFERENCE,
            build="cortex-m4/cmsis-nn",
            prove_inplace=False,
        )


@pytest.mark.parametrize(
    ("argv", "asked"),
    [
        (["--overlap"], None),
        (["--overlap", "--kernels", "cmsis-nn"], KernelLibrary.CMSIS_NN),
        (["--overlap", "--cpu", "m7", "--kernels", "reference"], None),
        (["--overlap", "--target", "nucleo-h743zi"], None),
    ],
)
def test_the_cli_asks_for_another_library_only_without_a_core(
    argv: list[str], asked: KernelLibrary | None
) -> None:
    from arenalens.cli import build_parser
    from arenalens.cli.common import overlap_library, selected_build

    args = build_parser(["report"]).parse_args(["report", "example:kws_ds_cnn", *argv])
    assert overlap_library(args) == asked
    build = selected_build(args)
    assert (build.is_host) == ("--cpu" not in argv and "--target" not in argv)
