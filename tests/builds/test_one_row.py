"""A new core, chip, kernel-library release or kernel library is one data row (and, for a library,
its rules package): proven on a copy of the package whose checked data gains the rows, by the
figures `arenalens.check` gives with them, in a fresh process (the records load once, at import).

The rows added:
* a core, `cortex-m52` (Armv8.1-M with Helium: CMSIS-NN's MVE path), no code elsewhere;
* a chip, `test-m52-chip` in targets.json, built for it with CMSIS-NN;
* a release of esp-nn, `1.2.4`, with no byte-moving change after 1.2.3;
* a kernel library, `test-nn`, that the new core links: its row and a rules package that
  replaces no kernel (so every operator keeps TFLM's reference rule).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "arenalens"
MODEL = "example:kws_ds_cnn"

_CORE = {
    "name": "cortex-m52",
    "title": "Cortex-M52 (Armv8.1-M)",
    "architecture": "armv8.1-m.main+mve",
    "abi": "ilp32-arm-eabi",
    "toolchain": "tflm-cortex-m",
    "code_paths": {"reference": "none", "cmsis-nn": "mve", "test-nn": "none"},
    "default_kernels": "reference",
    "aliases": ["m52"],
}
_CHIP = {
    "name": "test-m52-chip",
    "title": "A Cortex-M52 chip (test row)",
    "core": "Cortex-M52 200 MHz",
    "cpu": "cortex-m52",
    "build_cpu": "cortex-m52",
    "kernels": "cmsis-nn",
    "sram_bytes": 262144,
    "arena_limit_bytes": 262144,
    "source": "a row added by tests/builds/test_one_row.py",
}
_LIBRARY = {
    "name": "test-nn",
    "title": "Test-NN",
    "path_title": "Test-NN (a library added by a test)",
    "rules": "arenalens.runtimes.tflm.kernels.test_nn",
    "access_by_code_path": False,
    "code_paths": [{"name": "none", "title": "plain C", "description": "portable C"}],
    "source": "a row added by tests/builds/test_one_row.py",
}
_RULES_PACKAGE = '''"""Test-NN kernel rules: a library that replaces no kernel of TFLM's."""

from types import MappingProxyType

from arenalens.runtimes.tflm.kernels.base import OptimizedKernels

KERNELS = OptimizedKernels(
    name="test-nn", title="Test-NN", replaces=frozenset(), rules=MappingProxyType({})
)
'''
_FIGURES = f"""
import json
import arenalens

def figure(**options):
    verdict = arenalens.check({MODEL!r}, **options)
    return [verdict.build.name, verdict.required_bytes, verdict.fits]

print(json.dumps({{
    "m55": figure(build="cortex-m55/cmsis-nn"),
    "m52": figure(build="cortex-m52/cmsis-nn"),
    "m52-alias": figure(build="m52/cmsis-nn"),
    "chip": figure(target="test-m52-chip"),
    "m52-reference": figure(build="cortex-m52/reference"),
    "m52-test-nn": figure(build="cortex-m52/test-nn"),
    "esp-1.2.3": figure(build="esp32s3/esp-nn@1.2.3"),
    "esp-1.2.4": figure(build="esp32s3/esp-nn@1.2.4"),
}}))
"""


def _with_rows(root: Path) -> Path:
    """A copy of the package under `root` with the rows (and the library's package) added."""
    copy = root / "arenalens"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    records_path = copy / "build_records.json"
    records: dict[str, Any] = json.loads(records_path.read_text(encoding="utf-8"))
    records["cores"].append(_CORE)
    records["kernel_libraries"].append(_LIBRARY)
    (esp_nn,) = [row for row in records["kernel_libraries"] if row["name"] == "esp-nn"]
    newest = dict(esp_nn["releases"][-1], name="1.2.4", source="a test row")
    esp_nn["releases"].append(newest)
    schema = json.loads((copy / "schemas" / "build_records.schema.json").read_text("utf-8"))
    jsonschema.validate(records, schema)
    records_path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    targets_path = copy / "targets.json"
    targets: dict[str, Any] = json.loads(targets_path.read_text(encoding="utf-8"))
    targets["chips"].append(_CHIP)
    targets_path.write_text(json.dumps(targets, indent=1), encoding="utf-8")
    rules = copy / "runtimes" / "tflm" / "kernels" / "test_nn"
    rules.mkdir()
    (rules / "__init__.py").write_text(_RULES_PACKAGE, encoding="utf-8")
    return root


@pytest.mark.slow
def test_a_core_a_chip_a_release_and_a_library_are_rows(tmp_path: Path) -> None:
    root = _with_rows(tmp_path)
    environment = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", _FIGURES],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    # The new core: CMSIS-NN's MVE path and the Arm ABI, as on a Cortex-M55.
    assert figures["m52"][0] == "cortex-m52/cmsis-nn"
    assert figures["m52"][1] == figures["m55"][1]
    assert figures["m52-alias"] == figures["m52"]
    # The new chip: its core and library, and a fit answer against its RAM.
    assert figures["chip"] == ["cortex-m52/cmsis-nn", figures["m52"][1], True]
    # The new library: its rules package replaces nothing, so every figure is the reference's.
    assert figures["m52-test-nn"][0] == "cortex-m52/test-nn"
    assert figures["m52-test-nn"][1] == figures["m52-reference"][1]
    assert figures["m52-reference"][1] != figures["m52"][1]
    # The new release: selectable by name, with 1.2.3's changes (none after it).
    assert figures["esp-1.2.4"][0] == "esp32s3/esp-nn@1.2.4"
    assert figures["esp-1.2.4"][1] == figures["esp-1.2.3"][1]
