"""The CLI imports only what its command needs: `plan --json` and `check` on one model (and the
in-process `arenalens.check`) never load the heavy optional modules (issue 31: a check must start
in a blink; numpy alone costs more than planning a small model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arenalens.examples import write_example

# Modules none of these commands may import: numerical and drawing libraries, the FlatBuffers
# packages (the reader has its own table view), the exact solver, the real runtimes, and process
# pools (only batches and real-interpreter runs need them).
HEAVY = (
    "numpy",
    "matplotlib",
    "flatbuffers",
    "tflite",
    "ortools",
    "tflite_micro",
    "ai_edge_litert",
    "hypothesis",
    "multiprocessing",
    "concurrent.futures",
)
# `plan --json` writes JSON only: no terminal renderer either.
JSON_ONLY = ("rich",)

_CHILD = """
import contextlib, io, json, sys
from arenalens.cli import main

def loaded():
    return sorted({name for name in sys.modules})

with contextlib.redirect_stdout(io.StringIO()):
    main(["plan", sys.argv[1], "--runtime", "tflm", "--json"])
after_plan = loaded()
with contextlib.redirect_stdout(io.StringIO()):
    main(["check", sys.argv[1], "--target", "nucleo-f401re"])
after_check = loaded()
import arenalens
arenalens.check(open(sys.argv[1], "rb").read(), budget=10**7, build="cortex-m7/cmsis-nn")
print(json.dumps([after_plan, after_check, loaded()]))
"""


def _imported(name: str, modules: list[str]) -> list[str]:
    return [m for m in modules if m == name or m.startswith(name + ".")]


def test_plan_and_check_import_no_heavy_module(tmp_path: Path) -> None:
    model = write_example("kws_ds_cnn", tmp_path)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(model)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    after_plan, after_check, after_api = json.loads(child.stdout.splitlines()[-1])
    for name in (*HEAVY, *JSON_ONLY):
        assert not _imported(name, after_plan), f"plan --json imported {name}"
    for name in HEAVY:
        assert not _imported(name, after_check), f"check imported {name}"
        assert not _imported(name, after_api), f"arenalens.check imported {name}"
