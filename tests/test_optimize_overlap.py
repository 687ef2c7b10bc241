"""optimize / compare / report --overlap: outputs sliding over the inputs they consume."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from arenalens import load_model
from arenalens.builds.build import CMSIS_NN, HOST, ISA_DSP, ISA_MVE, REFERENCE, device_build
from arenalens.builds.kernel_paths import (
    CMSIS_NN_PATHS,
    KNOWN_PATHS,
    REFERENCE_PATH,
    KernelPath,
    overlap_rules,
)
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
    optimization = optimize_model(original, overlap=overlap_rules(HOST, REFERENCE))
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
    assert main([*args, "--overlap", "--reorder", "--inplace", "--kernels", "reference"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["written"] and out.exists()
    assert document["real_tflm"]["outputs_identical"]
    assert document["real_tflm"]["new_head"] == document["new_head"] == 36_880
    overlap = document["overlap"]
    assert overlap["disjoint_head"] == 55_296 and overlap["disjoint_lower_bound"] == 55_296
    assert overlap["shared"] and {p["opcode"] for p in overlap["shared"]} >= {"CONV_2D"}
    assert any("proven bit-exact on the x86-64" in note for note in document["notes"])
    assert document["valid_for"] == ["reference"]
    assert document["proven"] and "tflite_micro wheel (reference kernels)" in document["proven"][0]


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
    optimization = optimize_model(original, overlap=overlap_rules(HOST, REFERENCE))
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
    reference = optimize_model(model, overlap=overlap_rules(HOST, REFERENCE), prove_inplace=False)
    cmsis = optimize_model(model, overlap=overlap_rules(HOST, CMSIS_NN), prove_inplace=False)
    assert reference.new_head <= cmsis.new_head <= reference.disjoint_head
    allowed = {(p.operator, p.input_tensor) for c in reference.candidates for p in c.overlaps}
    assert {(p.operator, p.input_tensor) for c in cmsis.candidates for p in c.overlaps} <= allowed


def test_compare_overlap_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", "example:vww_mobilenet_v1", "--overlap", "--json", "--effort", "2"]
    assert main([*args, "--kernels", "reference"]) == 0
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
    reference = ["--kernels", "reference"]
    assert main(["report", "example:vww_mobilenet_v1", "--overlap", "--json", *reference]) == 0
    document = json.loads(capsys.readouterr().out)
    arena = document["reports"][0]["arenas"][0]
    assert arena["plans"][0]["planner"] == "best+overlaps"
    assert arena["plans"][0]["arena_size"] == arena["overlap_lower_bound"] == 36_880
    assert arena["lower_bound"] == 55_296
    assert len(arena["overlaps"]["output"]) == len(arena["overlaps"]["opcode"]) > 0
    assert main(["report", "example:vww_mobilenet_v1", "--overlap", *reference]) == 0
    text = capsys.readouterr().out
    assert "with overlaps" in text and "best+overlaps" in text


def test_overlap_rules_come_from_the_build_and_who_named_its_kernels() -> None:
    model = load_model(example_bytes("kws_ds_cnn"))
    # A build name with its library names the library: that code path alone.
    device = analyze(model, build="cortex-m7/cmsis-nn", overlap=True)
    assert device.overlap is not None
    assert device.overlap.rules.paths == (KernelPath(CMSIS_NN, ISA_DSP),)
    assert device.overlap.rules.explicit
    with pytest.deprecated_call():  # the library named apart from the build: the same rules
        named = analyze(model, build="cortex-m7/cmsis-nn", overlap="cmsis-nn")
    assert named.overlap is not None and named.overlap.pairs == device.overlap.pairs
    # Not named: every library the chip may run, the number held on both of the core's builds.
    core = analyze(model, build="cortex-m7", overlap=True)
    assert core.overlap is not None and core.overlap.rules.paths == KNOWN_PATHS
    assert {b.name for b in core.overlap.rules.size_builds} == {
        "cortex-m7/reference",
        "cortex-m7/cmsis-nn",
    }
    host = analyze(model, overlap=True)
    assert host.overlap is not None and host.overlap.rules.paths == KNOWN_PATHS
    assert not host.overlap.rules.explicit
    # The reference kernels named: their order alone, a superset of the pairs safe everywhere.
    reference = analyze(model, overlap=overlap_rules(HOST, REFERENCE))
    assert reference.overlap is not None
    assert reference.overlap.rules.paths == (REFERENCE_PATH,)
    everywhere = {(p.overlap.output, p.overlap.input) for p in host.overlap.pairs}
    assert everywhere <= {(p.overlap.output, p.overlap.input) for p in reference.overlap.pairs}


def test_overlap_rules_that_contradict_the_build_are_refused() -> None:
    # The reference kernels' order on a CMSIS-NN build: plans its firmware would compute wrong.
    with (
        pytest.raises(UsageError, match=r"cortex-m7/cmsis-nn runs cmsis-nn kernels"),
        pytest.deprecated_call(),
    ):
        analyze(example_bytes("kws_ds_cnn"), build="cortex-m7/cmsis-nn", overlap="reference")
    with pytest.raises(UsageError, match=r"cortex-m4/cmsis-nn runs cmsis-nn kernels"):
        optimize_model(
            example_bytes("kws_ds_cnn"),
            overlap=overlap_rules(device_build("cortex-m4", "cmsis-nn"), REFERENCE),
            build="cortex-m4/cmsis-nn",
            prove_inplace=False,
        )
    with (
        pytest.raises(UsageError, match=r"cortex-m4/cmsis-nn runs cmsis-nn kernels"),
        pytest.deprecated_call(),
    ):
        optimize_model(
            example_bytes("kws_ds_cnn"),
            overlap=True,
            kernels=REFERENCE,
            build="cortex-m4/cmsis-nn",
            prove_inplace=False,
        )


@pytest.mark.parametrize(
    ("argv", "paths"),
    [
        (["--overlap"], KNOWN_PATHS),
        (["--overlap", "--kernels", "cmsis-nn"], CMSIS_NN_PATHS),
        (["--overlap", "--cpu", "m7", "--kernels", "reference"], (REFERENCE_PATH,)),
        (["--overlap", "--cpu", "m55", "--kernels", "cmsis-nn"], (KernelPath(CMSIS_NN, ISA_MVE),)),
        # A board implies CMSIS-NN for its figures, not for overlaps: its firmware may link the
        # reference kernels. Named with it, its core's path alone.
        (["--overlap", "--target", "nucleo-h743zi"], KNOWN_PATHS),
        (
            ["--overlap", "--target", "nucleo-h743zi", "--kernels", "cmsis-nn"],
            (KernelPath(CMSIS_NN, ISA_DSP),),
        ),
    ],
)
def test_the_cli_overlaps_hold_on_the_named_library_or_on_every_one(
    argv: list[str], paths: tuple[KernelPath, ...]
) -> None:
    from arenalens.cli import build_parser
    from arenalens.cli.check import runtime_for
    from arenalens.cli.common import overlap_rules_for, selected_build

    args = build_parser(["report"]).parse_args(["report", "example:kws_ds_cnn", *argv])
    args.runtime = runtime_for(args)  # as report's run resolves --runtime (default: by --target)
    build = selected_build(args)
    assert overlap_rules_for(args, build).paths == paths
    assert (build.is_host) == ("--cpu" not in argv and "--target" not in argv)
