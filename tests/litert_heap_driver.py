#!/usr/bin/env python3
"""arenalens' copy of ../shared/tools/litert-heap/measure.py with the inputs' values as an
option: the heap a real LiteRT interpreter holds for one model, counted by heap_tracer.so
(LD_PRELOAD), its inputs set to zeros (as measure.py sets them) or to a non-zero value.

    LD_PRELOAD=<path>/heap_tracer.so python tests/litert_heap_driver.py MODEL builtin|xnnpack \
        zeros|<value>

Prints one JSON object as measure.py does (after_create, after_allocate, after_invoke, peak,
above the baseline), and `zero_reads`: each FULLY_CONNECTED's operator index → whether its
input was all zeros in that invoke (read after the figures, from a second interpreter of the
builtin kernels that keeps every tensor: EvalHybridDense makes an int4 filter's int8 copy only
for an input that is not all zeros). A non-zero value fills every input with it (np.full: the
same block size as np.zeros' for a float input); integer and boolean inputs stay zeros.
"""

import ctypes
import gc
import json
import os
import sys

lib = ctypes.CDLL(None)
try:
    current, peak, reset = lib.mtrace_current, lib.mtrace_peak, lib.mtrace_reset
except AttributeError:
    sys.exit("litert_heap_driver.py: run it with LD_PRELOAD=<path>/heap_tracer.so")
current.restype = peak.restype = ctypes.c_longlong

import numpy as np  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

path, mode, value = sys.argv[1], sys.argv[2], sys.argv[3]
fill = 0.0 if value == "zeros" else float(value)
with open(path, "rb") as file:
    data = file.read()
kind = (
    OpResolverType.AUTO if mode == "xnnpack" else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
)
warm = Interpreter(
    model_content=data, experimental_op_resolver_type=kind
)  # loads the libraries first
del warm
gc.collect()


def inputs(details):
    """Each input's array: np.zeros as measure.py, or np.full for a float input."""
    if fill == 0.0 or np.dtype(details["dtype"]).kind != "f":
        return np.zeros(details["shape"], details["dtype"])
    return np.full(details["shape"], fill, details["dtype"])


base = current()
reset()
it = Interpreter(model_content=data, experimental_op_resolver_type=kind)
created = current() - base
it.allocate_tensors()
allocated = current() - base
for d in it.get_input_details():
    it.set_tensor(d["index"], inputs(d))
it.invoke()
invoked = current() - base
figures = {
    "model": os.path.basename(path),
    "mode": mode,
    "inputs": value,
    "after_create": created,
    "after_allocate": allocated,
    "after_invoke": invoked,
    "peak": peak() - base,
}
kept = Interpreter(
    model_content=data,
    experimental_preserve_all_tensors=True,
    experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
)
kept.allocate_tensors()
for d in kept.get_input_details():
    kept.set_tensor(d["index"], inputs(d))
kept.invoke()
reads = {}
for op in kept._get_ops_details():
    if op["op_name"] == "FULLY_CONNECTED":
        reads[str(op["index"])] = bool(not np.any(kept.get_tensor(int(op["inputs"][0]))))
figures["zero_reads"] = reads
print(json.dumps(figures))
