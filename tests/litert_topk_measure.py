"""The heap the real LiteRT interpreter holds for the TOPK_V2 cases of tests/litert_topk_cases.py
with k set to its bound (the input's last dimension), where measure.py sets every input to
zeros (k = 0): cached in tests/data/litert_topk_bound.json.

    nice -n 10 python -m tests.litert_topk_measure

The driver takes measure.py's steps (a warm interpreter first, then Interpreter(...),
allocate_tensors(), the inputs, invoke()) under ../shared/tools/litert-heap's tracer; only the
input named k differs. No kernel here depends on the ISA. tests/runtimes/litert/test_litert_topk.py
compares arenalens' figures with both measurements."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import MODES, REPO_ROOT, environment, printed_figures, tracer
from tests.litert_topk_cases import topk_case

DATA = REPO_ROOT / "tests/data/litert_topk_bound.json"
SEEDS = range(1, 13)
DRIVER = r"""
import ctypes, gc, json, sys
lib = ctypes.CDLL(None)
current, peak, reset = lib.mtrace_current, lib.mtrace_peak, lib.mtrace_reset
current.restype = peak.restype = ctypes.c_longlong
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, mode = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
kind = (OpResolverType.AUTO if mode == "xnnpack"
        else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
warm = Interpreter(model_content=data, experimental_op_resolver_type=kind)
del warm
gc.collect()
base = current()
reset()
it = Interpreter(model_content=data, experimental_op_resolver_type=kind)
it.allocate_tensors()
allocated = current() - base
details = it.get_input_details()
last = int(details[0]["shape"][-1])
for d in details:
    value = np.zeros(d["shape"], d["dtype"])
    if d["name"] == "k":
        value = np.full(d["shape"], last, d["dtype"])
    it.set_tensor(d["index"], value)
it.invoke()
print(json.dumps({"after_allocate": allocated, "after_invoke": current() - base,
                  "peak": peak() - base}))
"""


def main() -> int:
    document: dict[str, Any] = {
        "command": "nice -n 10 python -m tests.litert_topk_measure",
        "environment": environment(),
        "models": {},
    }
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        model = folder / "model.tflite"  # one path length for every model (see measure())
        for seed in SEEDS:
            model.write_bytes(topk_case(seed))
            entry = {}
            for mode in MODES:
                completed = subprocess.run(
                    [sys.executable, "-c", DRIVER, str(model), mode],
                    capture_output=True,
                    text=True,
                    env=dict(os.environ, LD_PRELOAD=str(library)),
                    timeout=300,
                    check=False,
                )
                entry[mode] = printed_figures(completed)
            document["models"][f"topk9_{seed}"] = entry
            print(seed, json.dumps(entry), flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
