"""The heap a real LiteRT interpreter holds with 1, 2 and 4 threads, measured with
../shared/tools/litert-heap's heap_tracer.so and cached in tests/data/litert_heap_threads.json:

    python -m tests.litert_heap_threads             # the models of THREAD_MODELS
    python -m tests.litert_heap_threads --only vww  # those whose name contains 'vww'

The driver takes measure.py's steps (a warm interpreter first, then Interpreter(...),
allocate_tensors(), zero inputs, one invoke(); bytes above the baseline, the peak since it)
with `num_threads=N` passed to Interpreter, under both resolvers (builtin =
BUILTIN_WITHOUT_DEFAULT_DELEGATES, xnnpack = AUTO). Worker threads allocate from their own
glibc arenas; the tracer counts every block whichever arena it comes from. The model is copied
to a path of one length first (tests/litert_heap_measure.py says why).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import DATA as HEAP_DATA
from tests.litert_heap_measure import (
    REPO_ROOT,
    TIMEOUT_SECONDS,
    cache_document,
    printed_figures,
    tracer,
)
from tests.litert_xnnpack_parts import model_file

DATA = REPO_ROOT / "tests/data/litert_heap_threads.json"
COMMAND = "python -m tests.litert_heap_threads"
THREADS = (1, 2, 4)
MODES = ("builtin", "xnnpack")
# Shared models and held-out generated ones: int8 and float CNNs, fully connected and recurrent
# models, with and without XNNPACK partitions that leave operators to the builtin kernels.
THREAD_MODELS = (
    "mlperf_tiny__vww_96_int8.tflite",
    "mlperf_tiny__vww_96_float.tflite",
    "mlperf_tiny__pretrainedResnet_quant.tflite",
    "mlperf_tiny__pretrainedResnet.tflite",
    "mlperf_tiny__ad01_int8.tflite",
    "mlperf_tiny__ad01_fp32.tflite",
    "mlperf_tiny__kws_ref_model.tflite",
    "mlperf_tiny__kws_ref_model_float32.tflite",
    "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite",
    "tflite_micro__micro_speech_lstm.tflite",
    "heldout_cnn_1.tflite",
    "heldout_float_cnn_3.tflite",
    "heldout_case_conv_float_im2col.tflite",
    "heldout_case_fully_connected_hybrid.tflite",
    # Held out: measured after the thread bounds were set from the models above.
    "heldout_cnn_3.tflite",
    "heldout_dag_2.tflite",
    "heldout_graph_59.tflite",
    "tflite_micro__hello_world_int8.tflite",
)
DRIVER = r"""
import ctypes, gc, json, sys
lib = ctypes.CDLL(None)
current, peak, reset = lib.mtrace_current, lib.mtrace_peak, lib.mtrace_reset
current.restype = peak.restype = ctypes.c_longlong
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, mode, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
kind = (OpResolverType.AUTO if mode == "xnnpack"
        else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
warm = Interpreter(model_content=data, experimental_op_resolver_type=kind, num_threads=threads)
del warm
gc.collect()
base = current()
reset()
it = Interpreter(model_content=data, experimental_op_resolver_type=kind, num_threads=threads)
created = current() - base
it.allocate_tensors()
allocated = current() - base
for d in it.get_input_details():
    it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
it.invoke()
invoked = current() - base
print(json.dumps({"after_create": created, "after_allocate": allocated,
                  "after_invoke": invoked, "peak": peak() - base}))
"""


def measure(library: Path, model: Path, mode: str, threads: int) -> dict[str, Any]:
    """One model, resolver and thread count → the four figures (or the error printed)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "model.tflite"
        copy.write_bytes(model.read_bytes())
        completed = subprocess.run(
            [sys.executable, "-c", DRIVER, str(copy), mode, str(threads)],
            capture_output=True,
            text=True,
            env=dict(os.environ, LD_PRELOAD=str(library)),
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    return printed_figures(completed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="models whose name contains this")
    arguments = parser.parse_args(argv)
    document = cache_document(DATA, COMMAND)
    heap = json.loads(HEAP_DATA.read_text())
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name in THREAD_MODELS:
            if arguments.only not in name or name not in heap["models"]:
                continue
            path = model_file(name, folder)
            if path is None:
                continue
            entry = {
                mode: {str(n): measure(library, path, mode, n) for n in THREADS} for mode in MODES
            }
            document["models"][name] = entry
            print(name, json.dumps(entry), flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
