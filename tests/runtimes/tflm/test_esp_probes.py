"""Live: esp-tflite-micro with ESP-NN under QEMU (the probes in ../shared/tools/esp) against the
paths a user walks: `check --target <ESP board>`, `plan --cpu --kernels`, the C header, and a
model `optimize` wrote for an ESP chip (its offline plan must leave room for ESP-NN's scratch).
Marked `probes`; needs `qemu-system-riscv32` (Debian's qemu-system-misc, installed by .ci/run) and
the probes, and skips with the reason otherwise."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arenalens.cli import main
from arenalens.examples import write_example
from tests.conformance.cases import case_by_id
from tests.conformance.targets import ESP_PROBES, ESP_PROBES_REASON

pytestmark = pytest.mark.probes


@pytest.fixture(scope="module", autouse=True)
def _probes_available() -> None:
    if not (ESP_PROBES / "run.py").is_file():
        pytest.skip(ESP_PROBES_REASON)
    if shutil.which("qemu-system-riscv32") is None:
        pytest.skip("qemu-system-riscv32 is not installed (apt-get install qemu-system-misc)")


def _probe(path: Path, target: str, *arguments: str) -> dict[str, Any]:
    """One run of the ESP probe with the plain allocator firmware uses."""
    command = [sys.executable, str(ESP_PROBES / "run.py"), str(path), "--target", target]
    completed = subprocess.run(
        [*command, *arguments, "--allocator", "plain", "--json", "--timeout", "300"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    found: dict[str, Any] = json.loads(completed.stdout)
    return found


def _fits(path: Path, target: str, size: int) -> bool:
    return _probe(path, target, "--arena", str(size))["status"] == "ok"


def _document(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


@pytest.mark.parametrize(
    ("board", "kernels", "probe"),
    [
        ("esp32-s3-devkitc-1", None, "esp32s3-esp-nn"),
        ("esp32-s3-devkitc-1", "esp-nn@1.2.0", "esp32s3-esp-nn@v1.2.0"),
        ("esp32-c3-devkitm-1", None, "esp-generic-opt"),
    ],
)
def test_check_on_an_esp_board_needs_what_the_chip_needs(
    board: str,
    kernels: str | None,
    probe: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's promise: check --target <ESP board> compares the minimal arena esp-tflite-micro
    with ESP-NN needs on that chip with the board's RAM; the exact size fits, one byte less not."""
    path = tmp_path / "model.tflite"
    path.write_bytes(case_by_id("DEPTHWISE_CONV_2D.INT8.esp_3x3_c16_same").model())
    argv = ["check", str(path), "--target", board, "--json"]
    document = _document(capsys, [*argv, *(["--kernels", kernels] if kernels else [])])
    required = document["required_bytes"]
    assert document["verdict"] == "FITS"
    assert _fits(path, probe, required) and not _fits(path, probe, required - 1)


def test_plan_and_the_c_header_give_the_p4_probe_s_arena(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(case_by_id("CONV_2D.INT8.esp_1x3_c2_same_wide").model())
    plan = _document(capsys, ["plan", str(path), "--cpu", "esp32p4", "--json"])
    assert plan["build"]["name"] == "esp32p4/esp-nn"
    measured = _probe(path, "esp32p4-esp-nn", "--min-arena")
    assert plan["min_arena_bytes"] == measured["min_arena"]
    assert plan["head_bytes"] == measured["head"]
    assert main(["export", str(path), "--format", "c-header", "--cpu", "esp32p4"]) == 0
    header = capsys.readouterr().out
    declared = re.search(r"#define \w+_ARENA_SIZE (\d+)u", header)
    assert declared is not None and int(declared.group(1)) == measured["min_arena"]


def test_a_model_optimized_for_the_s3_runs_in_the_size_it_declares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """optimize --cpu esp32s3 writes an offline plan; TFLM places ESP-NN's scratch buffers around
    it on the chip: the declared kTensorArenaSize must be exactly what the S3 then needs."""
    source = write_example("resnet8_cifar", tmp_path)
    out = tmp_path / "optimized.tflite"
    argv = ["optimize", str(source), "--cpu", "esp32s3", "-o", str(out), "--no-verify", "--json"]
    document = _document(capsys, argv)
    declared = document["new_required_bytes"]
    assert declared < document["required_bytes"]  # the plan saves bytes on this model
    assert _fits(out, "esp32s3-esp-nn", declared)
    assert not _fits(out, "esp32s3-esp-nn", declared - 1)
