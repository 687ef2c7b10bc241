"""Paths through an ESP32 board: one answer everywhere, and a plan written for one kernel library
refused where it would compute garbage (esp-nn's int8 loops allow no overlap: a plan that slides
an output over its input on TFLM's reference kernels is CANNOT RUN CORRECTLY on ESP-NN)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from arenalens.builds.build import HOST
from arenalens.builds.kernel_paths import overlap_rules
from arenalens.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, document


def test_report_check_and_plan_give_one_esp_number(capsys: pytest.CaptureFixture[str]) -> None:
    model, board = "example:vww_mobilenet_v1", "esp32-s3-devkitc-1"
    _, check = run_json(capsys, "check", model, "--target", board)
    _, report = run_json(capsys, "report", model, "--target", board)
    _, plan = run_json(capsys, "plan", model, "--cpu", "esp32s3")
    assert check["build"]["name"] == report["reports"][0]["build"]["name"] == "esp32s3/esp-nn"
    assert check["required_bytes"] == report["reports"][0]["required_bytes"]
    assert check["required_bytes"] == plan["required_bytes"] == 122_512  # the S3 figure
    assert check["verdict"] == "FITS" and not check["declare"]["reasons"]


@pytest.mark.runtime
def test_a_plan_for_the_reference_kernels_cannot_run_correctly_on_esp_nn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model

    monkeypatch.chdir(tmp_path)
    pytest.importorskip("tflite_micro")
    # --kernels reference: overlaps the reference kernels' access order allows (ESP-NN's is not
    # traced, so a plan for the ESP32 holds none).
    written = optimize_model(
        example_bytes("vww_mobilenet_v1"),
        overlap=overlap_rules(HOST, "reference"),
        prove_inplace=False,
    )
    assert written.chosen is not None and written.chosen.shared
    model = tmp_path / "overlapped.tflite"
    model.write_bytes(written.data)
    code, document = run_json(capsys, "check", str(model), "--target", "esp32-s3-devkitc-1")
    assert (code, document["verdict"]) == (1, "CANNOT RUN CORRECTLY")
    (conflict,) = document["plan_conflicts"]
    assert conflict["kind"] == "build" and "ESP-NN (esp-tflite-micro" in conflict["reason"]
    command = document["next_steps"][0]["command"]
    assert command.endswith("--target esp32-s3-devkitc-1 -o optimized.tflite --overlap")
    # Run as printed: a plan that holds on the board's builds (no overlap on ESP-NN).
    code, optimized = run_json(capsys, *shlex.split(command)[1:])
    assert code == 0 and optimized["written"], optimized["notes"]
    code, document = run_json(capsys, "check", "optimized.tflite", "--target", "esp32-s3-devkitc-1")
    assert document["verdict"] == "FITS" and document["plan_holds"]
