"""The heap a real LiteRT interpreter holds with non-zero inputs, beside zeros: the int4z17
models (tests/litert_int4_cases.int4_zero_case), whose int4 filters EvalHybridDense unpacks only
for an input that is not all zeros, measured with tests/litert_heap_driver.py (arenalens' copy of
../shared/tools/litert-heap/measure.py that sets the inputs to a value) under heap_tracer.so,
each model and delegate with every input zeros and with every float input 0.5, and each
FULLY_CONNECTED's input recorded as all zeros or not in that run; cached in
tests/data/litert_heap_inputs_avx2.json (the AMD EPYC: AVX2, first Zen), remade by

    python -m tests.litert_heap_inputs

tests/runtimes/litert/test_litert_int4_zero_way.py compares the heap's figures with it: the
sizing figures (every such FULLY_CONNECTED reading a non-zero input) with the 0.5 runs, the
all-zero-inputs way with the zero runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import (
    MODES,
    REPO_ROOT,
    TIMEOUT_SECONDS,
    environment,
    printed_figures,
    tracer,
)
from tests.litert_int4_cases import ZERO_NAMES, int4_zero_case

DATA = REPO_ROOT / "tests/data/litert_heap_inputs_avx2.json"
DRIVER = REPO_ROOT / "tests/litert_heap_driver.py"
VALUES = ("zeros", "0.5")
COMMAND = "python -m tests.litert_heap_inputs"


def measure(library: Path, model: bytes, mode: str, value: str) -> dict[str, Any]:
    """One model under one delegate with its inputs at `value` → the driver's figures and
    FULLY_CONNECTED reads (or the error it printed). The model is written to
    `<mkdtemp>/model.tflite`, as tests/litert_heap_measure.py writes it (the path's length
    reaches the Python wrapper's own blocks)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.tflite"
        path.write_bytes(model)
        completed = subprocess.run(
            [sys.executable, str(DRIVER), str(path), mode, value],
            capture_output=True,
            text=True,
            env=dict(os.environ, LD_PRELOAD=str(library)),
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    figures = printed_figures(completed)
    if "error" in figures:
        return figures
    keys = ("after_create", "after_allocate", "after_invoke", "peak", "zero_reads")
    return {key: figures[key] for key in keys}


def main() -> int:
    document: dict[str, Any] = {"command": COMMAND, "environment": environment(), "models": {}}
    with tempfile.TemporaryDirectory() as scratch:
        library = tracer(Path(scratch))
        for n, name in enumerate(ZERO_NAMES, 1):
            model = int4_zero_case(n)
            entry = {
                mode: {value: measure(library, model, mode, value) for value in VALUES}
                for mode in MODES
            }
            document["models"][f"{name}.tflite"] = entry
            print(name, json.dumps(entry), flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
