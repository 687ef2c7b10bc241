"""Overlap plans that are right on every build they meet (issue 23, item 1).

`optimize --overlap` without --kernels plans on every kernel library the core may run and records
where its plan is right; `check`, `verify`, `report` and `diagnose` read the record, re-check the
plan against the build's access rules and say CANNOT RUN CORRECTLY (exit 1) for other builds.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from arenalens.builds.build import HOST, device_build
from arenalens.builds.kernel_paths import (
    CMSIS_NN_PATHS,
    ESP_NN_PATH,
    KNOWN_PATHS,
    REFERENCE_PATH,
    VENDOR_PATH,
    overlap_rules,
    path_named,
)
from arenalens.cli import main
from arenalens.errors import ModelError, UsageError
from arenalens.examples import example_bytes
from arenalens.ir import PlanRecord
from arenalens.optimization import optimize_model, required_bytes
from arenalens.plan_validity import plan_conflicts
from arenalens.runtimes.tflm.plan_validity import plan_validity, valid_paths, wrong_outputs
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.plan_record import (
    PLAN_RECORD_METADATA,
    decode_plan_record,
    encode_plan_record,
)
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import rewrite_model

M7_CMSIS = ["--cpu", "cortex-m7", "--kernels", "cmsis-nn"]


@pytest.fixture(scope="module")
def reference_plan() -> bytes:
    """kws_ds_cnn with overlaps for the reference kernels only (its 1x1 convolutions slide)."""
    optimization = optimize_model(
        example_bytes("kws_ds_cnn"), overlap=overlap_rules(HOST, "reference"), prove_inplace=False
    )
    assert optimization.chosen is not None and optimization.chosen.shared
    return optimization.data


@pytest.fixture(scope="module")
def default_plan() -> bytes:
    """resnet8_cifar through `optimize --overlap --cpu cortex-m7` (no --kernels): its peak is
    a 3x3 convolution, whose output may slide on every kernel library."""
    optimization = optimize_model(
        example_bytes("resnet8_cifar"),
        overlap=True,
        build=device_build("cortex-m7"),
        prove_inplace=False,
    )
    assert optimization.chosen is not None and optimization.chosen.shared
    return optimization.data


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# -- the rules a plan must hold on -------------------------------------------------------------


def test_without_kernels_every_library_of_the_core() -> None:
    rules = overlap_rules(device_build("cortex-m4"))
    assert rules.paths == KNOWN_PATHS and not rules.explicit
    assert [b.name for b in rules.size_builds] == ["cortex-m4/reference", "cortex-m4/cmsis-nn"]
    assert overlap_rules(HOST).paths == KNOWN_PATHS
    assert overlap_rules(HOST).size_builds == (HOST,)


def test_named_kernels_take_that_code_path_only() -> None:
    dsp = overlap_rules(device_build("cortex-m7", "cmsis-nn"), "cmsis-nn")
    assert [p.name for p in dsp.paths] == ["cmsis-nn/dsp"] and dsp.explicit
    assert overlap_rules(HOST, "cmsis-nn").paths == CMSIS_NN_PATHS
    assert overlap_rules(device_build("cortex-m3"), "reference").paths == (REFERENCE_PATH,)
    with pytest.raises(UsageError, match="names another library"):
        overlap_rules(device_build("cortex-m7", "reference"), "cmsis-nn")


def test_a_core_without_a_32_bit_model_may_run_its_vendors_kernels() -> None:
    rules = overlap_rules(HOST, chip="k210")
    assert rules.paths == (REFERENCE_PATH, VENDOR_PATH) and rules.unknown == (VENDOR_PATH,)
    # A chip that is a core of the build records runs that core's libraries, whose rules answer.
    esp = overlap_rules(HOST, chip="esp32-s3")
    assert esp.paths == (REFERENCE_PATH, ESP_NN_PATH) and esp.unknown == ()
    assert path_named("esp-nn") == ESP_NN_PATH and path_named("cmsis-nn/avx") is None


# -- what optimize writes ----------------------------------------------------------------------


def test_the_default_plan_is_right_on_every_known_path_and_says_so(default_plan: bytes) -> None:
    written = load_model(default_plan)
    record = written.plan_record
    assert record is not None
    assert record.valid_for == tuple(path.name for path in KNOWN_PATHS)
    assert record.writer.startswith("arenalens ")
    assert valid_paths(written, KNOWN_PATHS) == KNOWN_PATHS
    for cpu in ("cortex-m3", "cortex-m7", "cortex-m55"):
        for kernels in ("reference", "cmsis-nn"):
            assert not wrong_outputs(written, overlap_rules(device_build(cpu, kernels)).paths[0])
            assert not plan_conflicts(written, device_build(cpu, kernels))


def test_the_default_number_holds_on_both_builds_of_the_core() -> None:
    optimization = optimize_model(
        example_bytes("resnet8_cifar"),
        overlap=True,
        build=device_build("cortex-m7"),
        prove_inplace=False,
    )
    chosen = optimization.chosen
    assert chosen is not None
    assert set(chosen.required_by_build) == {"cortex-m7/reference", "cortex-m7/cmsis-nn"}
    assert optimization.new_required_bytes == max(chosen.required_by_build.values())
    written = load_model(optimization.data)
    for name, declared in chosen.required_by_build.items():
        assert required_bytes(written, device_build(*name.split("/"))) == declared
    assert optimization.original_required_bytes == max(
        optimization.original_required_by_build.values()
    )


def test_a_reference_plan_is_recorded_as_such(reference_plan: bytes) -> None:
    written = load_model(reference_plan)
    assert written.plan_record is not None
    assert written.plan_record.valid_for == ("reference",)
    reasons = wrong_outputs(written, CMSIS_NN_PATHS[1])
    assert reasons and "CONV_2D" in reasons[0] and "reads that input after writing" in reasons[0]


def test_default_optimize_leaves_the_1x1_convolutions_alone() -> None:
    """kws_ds_cnn's peak is a 1x1 convolution: CMSIS-NN's pure-C and DSP paths re-read its input
    per output-channel pair, so the safe default shares no bytes there."""
    optimization = optimize_model(example_bytes("kws_ds_cnn"), overlap=True, prove_inplace=False)
    shared = optimization.chosen.shared if optimization.chosen else ()
    assert not any(pair.opcode == "CONV_2D" for pair in shared)
    assert any("overlaps hold on: reference, cmsis-nn/none" in n for n in optimization.notes)


def test_an_esp32_board_gets_no_int8_overlap(capsys: pytest.CaptureFixture[str]) -> None:
    """ESP32 firmware may run ESP-NN, whose int8 loops (esp-nn's own C and assembly) arenalens
    has not traced: every int8 operator ESP-NN replaces refuses to overlap."""
    optimization = optimize_model(
        example_bytes("resnet8_cifar"),
        overlap=overlap_rules(HOST, chip="esp32-s3"),
        prove_inplace=False,
    )
    assert optimization.chosen is None or not optimization.chosen.shared
    assert any("overlaps hold on: reference, esp-nn" in note for note in optimization.notes)
    argv = ["report", "example:resnet8_cifar", "--overlap", "--json"]
    assert main([*argv, "--target", "esp32-s3"]) == 0
    arena = json.loads(capsys.readouterr().out)["reports"][0]["arenas"][0]
    assert arena["plans"][0]["planner"] == "best+overlaps"
    assert not arena["plans"][0]["shared_regions"] and not arena["overlaps"]["output"]


# -- the record in the file ----------------------------------------------------------------------


def test_the_record_round_trips_and_replacing_the_plan_drops_it(reference_plan: bytes) -> None:
    written = load_model(reference_plan)
    record = written.plan_record
    assert record is not None
    assert decode_plan_record(encode_plan_record(record), "x") == record
    assert PLAN_RECORD_METADATA in {m.name for m in written.metadata}
    assert written.offline_plan is not None
    replanned = rewrite_model(reference_plan, offline_plan=written.offline_plan)
    assert load_model(replanned).plan_record is None


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"\xff\xfe", "not JSON"),
        (b"[]", "schema"),
        (b'{"schema": "arenalens.plan_validity", "version": 0}', "version"),
        (b'{"schema": "arenalens.plan_validity", "version": 1, "plan_sha256": 5}', "sha256"),
        (b"x" * 70_000, "70,000 B"),
    ],
)
def test_a_malformed_record_is_a_malformed_model(raw: bytes, problem: str) -> None:
    with pytest.raises(ModelError, match=problem):
        decode_plan_record(raw, "m.tflite")


def test_a_record_of_another_plan_or_a_later_version_is_set_aside(reference_plan: bytes) -> None:
    written = load_model(reference_plan)
    assert written.plan_record is not None
    later = decode_plan_record(b'{"schema": "arenalens.plan_validity", "version": 7}', "x")
    assert later.version == 7 and later.valid_for == ()
    for record in (later, replace(written.plan_record, plan_sha256="0" * 64)):
        model = replace(written, plan_record=record)
        validity = plan_validity(model)
        assert validity.record is None and "set aside" in validity.note
        # The rules alone still judge it.
        assert not wrong_outputs(model, REFERENCE_PATH)
        assert wrong_outputs(model, CMSIS_NN_PATHS[1])


def test_the_record_narrows_what_the_rules_allow(default_plan: bytes) -> None:
    written = load_model(default_plan)
    assert written.offline_plan is not None and written.plan_record is not None
    digest = written.plan_record.plan_sha256
    narrow = PlanRecord(1, digest, ("cmsis-nn/dsp",))
    model = replace(written, plan_record=narrow)
    assert not wrong_outputs(model, CMSIS_NN_PATHS[1])
    (reason,) = wrong_outputs(model, REFERENCE_PATH)
    assert "vouches for cmsis-nn/dsp only" in reason


def test_a_plan_written_before_records_is_judged_by_the_rules(reference_plan: bytes) -> None:
    written = load_model(reference_plan)
    assert written.offline_plan is not None
    bare = load_model(rewrite_model(reference_plan, offline_plan=written.offline_plan))
    assert bare.plan_record is None
    assert valid_paths(bare, KNOWN_PATHS) == (REFERENCE_PATH,)
    assert encode_offline_plan(bare.offline_plan) == encode_offline_plan(written.offline_plan)


# -- every command says it -------------------------------------------------------------------------


def test_check_says_cannot_run_correctly(
    reference_plan: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "ref.tflite", reference_plan)
    assert main(["check", path, "--budget", "1MiB", *M7_CMSIS, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "CANNOT RUN CORRECTLY" and not document["fits"]
    assert document["declare"]["status"] == "cannot-run-correctly"
    assert any("CONV_2D" in reason for reason in document["declare"]["reasons"])
    assert main(["check", path, "--budget", "1MiB", *M7_CMSIS]) == 1
    text = capsys.readouterr().out
    assert "CANNOT RUN CORRECTLY" in text and "cannot run correctly: the offline plan" in text
    # The same file on the build it was made for fits.
    assert main(["check", path, "--budget", "1MiB", "--cpu", "cortex-m7"]) == 0
    capsys.readouterr()


def test_check_target_all_marks_the_boards_it_is_wrong_on(
    reference_plan: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "ref.tflite", reference_plan)
    main(["check", path, "--target", "all", "--json"])
    rows = {row["board"]: row for row in json.loads(capsys.readouterr().out)["boards"]}
    # Cortex-M boards imply CMSIS-NN; ESP32 boards may run ESP-NN: wrong on both.
    assert rows["nucleo-f746zg"]["verdict"] == "CANNOT RUN CORRECTLY"
    assert rows["esp32-s3-devkitc-1"]["verdict"] == "CANNOT RUN CORRECTLY"
    assert not rows["nucleo-f746zg"]["fits"]


def test_report_and_diagnose_say_it(
    reference_plan: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "ref.tflite", reference_plan)
    assert main(["report", path, *M7_CMSIS, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    report = document["reports"][0]
    assert report["declare"]["status"] == "cannot-run-correctly"
    assert main(["report", path, *M7_CMSIS]) == 1
    text = capsys.readouterr().out
    assert "CANNOT RUN CORRECTLY" in text and "The offline plan does not hold on this build" in text
    # The build the plan was made for: nothing to say, exit 0.
    assert main(["report", path, "--cpu", "cortex-m7", "--kernels", "reference"]) == 0
    assert "cannot run correctly" not in capsys.readouterr().out
    assert main(["diagnose", path, *M7_CMSIS, "--no-color"]) == 1
    text = capsys.readouterr().out
    assert "ERROR   cannot-run-correctly" in text and "CANNOT RUN CORRECTLY on Cortex-M7" in text
    assert main(["diagnose", path, "--cpu", "cortex-m7", "--no-color"]) == 0
    assert "cannot-run-correctly" not in capsys.readouterr().out
    assert main(["plan", path, *M7_CMSIS, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert not document["plan_holds"] and document["plan_conflicts"][0]["kind"] == "build"


@pytest.mark.runtime
def test_verify_says_it_for_the_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tflite_micro")
    from tests.diagnostics.models import chain, tensor_count, with_offline_plan

    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[0], offsets[3], offsets[6], offsets[9] = 2048, 512, 0, 4096  # 7 bytes too close
    path = _write(tmp_path, "close.tflite", with_offline_plan(builder, offsets).build())
    assert main(["verify", path, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert (
        document["cannot_run_correctly"] and "CONV_2D (op 1)" in document["cannot_run_correctly"][0]
    )
    assert main(["verify", path]) == 1
    assert capsys.readouterr().out.startswith("CANNOT RUN CORRECTLY on the x86-64")


@pytest.mark.runtime
def test_optimize_names_the_build_its_proof_ran_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tflite_micro")
    out = tmp_path / "out.tflite"
    argv = ["optimize", "example:resnet8_cifar", "-o", str(out), "--overlap", "--json"]
    assert main([*argv, "--cpu", "cortex-m7"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["valid_for"] == [path.name for path in KNOWN_PATHS]
    assert document["proven"] and all("x86-64 tflite_micro wheel" in p for p in document["proven"])
    assert set(document["new_required_by_build"]) == {"cortex-m7/reference", "cortex-m7/cmsis-nn"}
    assert any("proven bit-exact on the x86-64" in note for note in document["notes"])
    assert load_model(out).plan_record is not None
