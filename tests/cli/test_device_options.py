"""--cpu / --kernels: every command plans for the selected Cortex-M build, says which build its
figures are for, and refuses bad or meaningless selections with exit code 2."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from arenalens import analyze, device_build
from arenalens.builds.build import (
    CMSIS_NN,
    CPUS,
    ESP_NN,
    HOST,
    build_named,
    cpu_named,
    select_build,
)
from arenalens.cli import main
from arenalens.errors import UsageError
from arenalens.optimization import optimize_model, required_bytes
from arenalens.tflite.reader import load_model
from tests import tflm_synthetic

MODEL = "example:kws_ds_cnn"
DEVICE = ["--cpu", "cortex-m7", "--kernels", "cmsis-nn"]


@pytest.fixture(scope="module")
def device_required() -> int:
    from arenalens.cli.common import load_model_argument

    return analyze(load_model_argument(MODEL), build="cortex-m7/cmsis-nn").budget.required_bytes


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_plan_json_names_the_build_and_its_number(
    capsys: pytest.CaptureFixture[str], device_required: int
) -> None:
    code, document = run_json(capsys, "plan", MODEL, *DEVICE)
    assert code == 0
    assert document["build"] == {
        "name": "cortex-m7/cmsis-nn",
        "title": "Cortex-M7 (Armv7E-M, DSP), CMSIS-NN kernels",
        "cpu": "cortex-m7",
        "kernels": "cmsis-nn",
        "isa": "dsp",
        "abi": "ILP32 (Arm EABI)",
        "allocator": "MicroAllocator",
        "compression": False,
        "kernels_release": "4ab83cc3cc98",
        "kernels_named_by": "user",
        "resource_variables": None,
        "tflm": {
            "release": "90b983c",
            "commit": "90b983c2b3f1480642e040bbd2ddb37b998f3424",
            "date": "2026-08-20",
            "wheel": None,
            "title": "TFLM 90b983c (2026-08-20)",
        },
    }
    assert document["min_arena_bytes"] == document["required_bytes"] == device_required
    assert document["min_arena_is_estimate"] == bool(document["budget"]["estimates"])
    _, host = run_json(capsys, "plan", MODEL)
    assert host["build"]["name"] == "host"
    assert host["build"]["allocator"] == "RecordingMicroAllocator"
    # 32-bit structs: the device needs less than the 64-bit wheel for the same plan.
    assert host["head_bytes"] == document["head_bytes"]
    assert host["tail_bytes"] > document["tail_bytes"]


def test_check_compares_the_device_number(
    capsys: pytest.CaptureFixture[str], device_required: int
) -> None:
    code, document = run_json(capsys, "check", MODEL, *DEVICE, "--budget", str(device_required))
    assert code == 0 and document["required_bytes"] == device_required
    assert document["build"]["name"] == "cortex-m7/cmsis-nn"
    code, _ = run_json(capsys, "check", MODEL, *DEVICE, "--budget", str(device_required - 1))
    assert code == 1


def test_the_c_header_declares_the_device_number(
    capsys: pytest.CaptureFixture[str], device_required: int
) -> None:
    assert main(["export", MODEL, "--format", "c-header", *DEVICE]) == 0
    header = capsys.readouterr().out
    assert f"#define EXAMPLE_KWS_DS_CNN_ARENA_SIZE {device_required}u" in header
    assert "kTensorArenaSize ARENALENS_UNUSED = EXAMPLE_KWS_DS_CNN_ARENA_SIZE" in header
    assert " * Build: Cortex-M7 (Armv7E-M, DSP), CMSIS-NN kernels, ILP32 (Arm EABI)" in header
    assert main(["export", MODEL, "--format", "json", *DEVICE]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["required_bytes"] == device_required
    assert document["build"]["cpu"] == "cortex-m7"


def test_report_diagnose_and_compare_say_which_build(
    capsys: pytest.CaptureFixture[str], device_required: int
) -> None:
    _, report = run_json(capsys, "report", MODEL, *DEVICE)
    assert report["reports"][0]["build"]["name"] == "cortex-m7/cmsis-nn"
    assert report["reports"][0]["required_bytes"] == device_required
    _, diagnosis = run_json(capsys, "diagnose", MODEL, *DEVICE)
    assert diagnosis["build"]["name"] == "cortex-m7/cmsis-nn"
    _, comparison = run_json(capsys, "compare", MODEL, *DEVICE, "--planners", "naive,tflm_greedy")
    assert comparison["build"]["name"] == "cortex-m7/cmsis-nn"


def test_optimize_plans_for_the_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.tflite"
    argv = ["optimize", "example:vww_mobilenet_v1", "-o", str(output), *DEVICE]
    code, document = run_json(capsys, *argv, "--planner", "first_fit", "--no-verify")
    assert code == 0
    assert document["build"]["name"] == "cortex-m7/cmsis-nn"
    written = load_model(output)
    # The written model's kTensorArenaSize on the device is the one reported, and smaller.
    assert (
        required_bytes(written, device_build("cortex-m7", "cmsis-nn"))
        == (document["new_required_bytes"])
    )
    assert document["new_required_bytes"] < document["required_bytes"]


def test_optimize_keeps_the_device_scratch_where_the_replica_puts_it() -> None:
    """ADD_N requests a scratch buffer: the offline plan must leave the build's scratch where
    TFLM's greedy planner places it online, so the predicted head is the real one."""
    model = load_model(tflm_synthetic.add_n_int8())
    for build in (HOST, device_build("cortex-m7", "cmsis-nn"), device_build("cortex-m0plus")):
        optimization = optimize_model(model, planner="first_fit", build=build)
        assert optimization.build == build
        pinned = [c for c in optimization.candidates if c.label.endswith("pinned scratch")]
        assert pinned and all(candidate.reproduced for candidate in pinned)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cpu", "cortex-m9"], "unknown CPU 'cortex-m9'"),
        (["--cpu", "m7", "--kernels", "xnnpack"], "unknown kernel library 'xnnpack'"),
        (["--kernels", "cmsis-nn"], "--kernels needs --cpu"),
        (["--runtime", "litert", "--cpu", "m4"], "--runtime litert has none"),
    ],
)
def test_bad_selections_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["plan", MODEL], ["check", MODEL, "--budget", "1MiB"], ["diagnose", MODEL]):
        assert main([*command, *argv]) == 2
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error
        assert len(error.strip().splitlines()) == 1


def test_core_names() -> None:
    assert cpu_named("Cortex-M0+").name == "cortex-m0plus"
    assert cpu_named("m55").name == "cortex-m55"
    assert cpu_named("CORTEX_M33").name == "cortex-m33"
    assert {cpu_named(name).name for name in CPUS} == set(CPUS)
    assert build_named("host") is HOST
    assert build_named("m7/cmsis-nn") == device_build("cortex-m7", "cmsis-nn")
    assert select_build(None, None) is HOST
    assert select_build(None, "reference") is HOST
    assert select_build("m3", None) == device_build("cortex-m3")
    with pytest.raises(UsageError):
        build_named("cortex-a53")


def test_cmsis_nn_code_path_follows_the_core() -> None:
    cortex_m = [name for name, core in CPUS.items() if CMSIS_NN in core.libraries]
    paths = {name: device_build(name, "cmsis-nn").isa for name in cortex_m}
    assert paths == {
        "cortex-m0plus": "none",
        "cortex-m3": "none",
        "cortex-m4": "dsp",
        "cortex-m7": "dsp",
        "cortex-m33": "dsp",
        "cortex-m55": "mve",
        "cortex-m85": "mve",
    }
    assert {device_build(name).isa for name in cortex_m} == {"none"}  # reference: plain C


def test_esp_nn_code_path_follows_the_chip() -> None:
    esp = [name for name, core in CPUS.items() if ESP_NN in core.libraries]
    paths = {name: device_build(name).isa for name in esp}
    assert paths == {
        "esp32": "esp-generic",
        "esp32s2": "esp-generic",
        "esp32s3": "esp32s3",
        "esp32c3": "esp-generic",
        "esp32c6": "esp-generic",
        "esp32p4": "esp32p4",
    }
    assert {device_build(name, "esp-nn-ansi").isa for name in esp} == {"esp-ansi"}
    assert {device_build(name, "reference").isa for name in esp} == {"none"}
    assert cpu_named("ESP32-S3").name == "esp32s3" and cpu_named("esp32_c6").name == "esp32c6"


def test_litert_analysis_has_no_build() -> None:
    from arenalens.cli.common import load_model_argument

    analysis = analyze(load_model_argument(MODEL), runtime="litert")
    assert analysis.build is None and not analysis.budget.build
    with pytest.raises(UsageError, match=re.escape("cortex-m4/reference")):
        analyze(load_model_argument(MODEL), runtime="litert", build="cortex-m4")


ESP = ["--cpu", "esp32s3", "--kernels", "esp-nn@1.2.0"]
ESP_BUILD = "esp32s3/esp-nn@1.2.0"


def test_every_command_sizes_the_same_esp_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One ESP build (chip, ESP-NN and its release) through every path: the same build named,
    the same kTensorArenaSize, in every command, the C header and the Python API."""
    from arenalens.cli.common import load_model_argument

    required = analyze(load_model_argument(MODEL), build=ESP_BUILD).budget.required_bytes
    assert required != analyze(load_model_argument(MODEL), build="esp32s3").budget.required_bytes
    _, plan = run_json(capsys, "plan", MODEL, *ESP)
    assert plan["build"]["name"] == ESP_BUILD and plan["build"]["kernels_release"] == "1.2.0"
    assert plan["build"]["abi"] == "ILP32 (Xtensa/RISC-V, int-sized enums)"
    assert plan["required_bytes"] == required
    code, check = run_json(capsys, "check", MODEL, *ESP, "--budget", str(required))
    assert code == 0 and check["required_bytes"] == required
    assert check["build"]["name"] == ESP_BUILD
    _, report = run_json(capsys, "report", MODEL, *ESP)
    assert report["reports"][0]["build"]["name"] == ESP_BUILD
    assert report["reports"][0]["required_bytes"] == required
    _, diagnosis = run_json(capsys, "diagnose", MODEL, *ESP)
    assert diagnosis["build"]["name"] == ESP_BUILD
    _, comparison = run_json(capsys, "compare", MODEL, *ESP, "--planners", "naive,tflm_greedy")
    assert comparison["build"]["name"] == ESP_BUILD
    assert main(["export", MODEL, "--format", "c-header", *ESP]) == 0
    header = capsys.readouterr().out
    assert f"#define EXAMPLE_KWS_DS_CNN_ARENA_SIZE {required}u" in header
    assert "ESP-NN kernels (ESP32-S3 path), esp-tflite-micro v1.3.8" in header
    assert " * Release: TFLM 0965635 (2026-07-13), esp-nn 1.2.0." in header
    output = tmp_path / "out.tflite"
    argv = ["optimize", "example:vww_mobilenet_v1", "-o", str(output), *ESP, "--no-verify"]
    code, optimized = run_json(capsys, *argv)
    assert code == 0 and optimized["build"]["name"] == ESP_BUILD
    build = build_named(ESP_BUILD)
    assert required_bytes(load_model(output), build) == optimized["new_required_bytes"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cpu", "esp32s3", "--kernels", "cmsis-nn"], "do not run on ESP32-S3"),
        (["--cpu", "cortex-m4", "--kernels", "esp-nn"], "do not run on Cortex-M4"),
        (["--cpu", "esp32s3", "--kernels", "esp-nn@1.0.2"], "esp-nn 1.0.2 is not modelled"),
        (["--cpu", "cortex-m4", "--kernels", "cmsis-nn@5.0"], "a release is taken for esp-nn"),
        (["--kernels", "esp-nn"], "ESP-NN on an ESP32 chip"),
        (["--cpu", "esp32-h4"], "unknown CPU 'esp32-h4'"),
    ],
)
def test_bad_esp_selections_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["plan", MODEL], ["check", MODEL, "--budget", "1MiB"]):
        assert main([*command, *argv]) == 2
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error
        assert len(error.strip().splitlines()) == 1
