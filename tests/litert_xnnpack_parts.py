"""XNNPACK's own blocks in a real LiteRT interpreter, part by part, and the partition its
delegate made, cached in tests/data/litert_xnnpack_parts.json:

    python -m tests.litert_xnnpack_parts             # every model of tests/data/litert_heap.json
    python -m tests.litert_xnnpack_parts --only cnn  # models whose name contains 'cnn'

Per model, with LiteRT's default delegate (OpResolverType.AUTO), the blocks live after
allocate_tensors() (tests/litert_heap_trace.py's tracer and driver), by the XNNPACK function
that asked for them: packed weights (xnn_get_pointer_to_write_weights), indirection buffers
(reshape_igemm / reshape_dwconv), the workspace (xnn_plan_memory) and LiteRT's arena
(ResizableAlignedBuffer), each as the list of requested sizes in allocation order; and each
delegate node's inputs and outputs as `Interpreter._get_ops_details()` lists them (which tensors
XNNPACK took). tests/runtimes/litert/test_litert_xnnpack.py compares runtimes/litert/
heap_xnnpack.py with it, part by part. Needs the `runtime` extra, gcc and binutils.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import DATA as HEAP_DATA
from tests.litert_heap_measure import (
    HELD_OUT,
    REPO_ROOT,
    cache_document,
    held_out_model,
    measure,
    tracer,
)
from tests.litert_xnnpack_cases import CASES, HELD_OUT5, HELD_OUT6

DATA = REPO_ROOT / "tests/data/litert_xnnpack_parts.json"
COMMAND = "python -m tests.litert_xnnpack_parts"
# Generated models measured only after runtimes/litert/heap_xnnpack.py, xnnpack_packing.py and
# xnnpack_workspace.py were written (new seeds of the held-out families): their parts and
# their heap figures (measure.py, XNNPACK) are kept here, with the set name "fresh".
FRESH = (
    *((f"fresh_cnn_{seed}", "cnn", seed) for seed in (5, 6, 7, 8)),
    *((f"fresh_float_cnn_{seed}", "float_cnn", seed) for seed in (5, 6, 7, 8)),
    *((f"fresh_dag_{seed}", "dag", seed) for seed in (3, 4)),
    *((f"fresh_audio_{seed}", "audio", seed) for seed in (3, 4)),
    *((f"fresh_graph_{seed}", "graph", seed) for seed in (7, 31, 77, 99)),
)
# A second held-out set, generated and measured only after the objects replay, the dead-node
# clean-up, wide depthwise windows, float BATCH_MATMUL and the static-parameter rule were
# written (session 4): new seeds of every family.
FRESH4 = (
    *((f"fresh4_cnn_{seed}", "cnn", seed) for seed in (11, 12, 13)),
    *((f"fresh4_float_cnn_{seed}", "float_cnn", seed) for seed in (11, 12, 13)),
    *((f"fresh4_dag_{seed}", "dag", seed) for seed in (11, 12, 13)),
    *((f"fresh4_audio_{seed}", "audio", seed) for seed in (11, 12)),
    *((f"fresh4_graph_{seed}", "graph", seed) for seed in (131, 257, 389, 421, 613, 797)),
)
# Generated models for rules modelled after the first sweep (tests/litert_xnnpack_cases.py),
# measured with their heap figures like FRESH.
XCASES = tuple((f"xcase_{name}", "xcase", 0) for name in CASES)
# Session 5's held-out set: models drawn at random for the rules written then (TRANSPOSE_CONV,
# 8-bit BATCH_MATMUL, the reshaping and element-wise operators), generated and measured only
# after those rules and their xcase_ models were final.
FRESH5 = tuple((f"fresh5_{name}", "rules5", 0) for name in HELD_OUT5)
# Session 6's held-out set for the run-time-B hybrid BATCH_MATMUL (its B an internal value,
# A packed after the packed B): drawn at random, measured after the rule was committed.
FRESH6 = tuple((f"fresh6_{name}", "bmm6", 0) for name in HELD_OUT6)
# Session 6's held-out set for BATCH_MATMUL with adj_x (the delegate's transpose of A):
# tests/litert_peak_cases.batch_matmul_adj_x_case, measured after the rule was committed.
ADJX6 = tuple((f"adjx6_{seed}", "adj_x", seed) for seed in range(11, 27))
# A second draw, after the rows of a hybrid A stored transposed (its last dimension) were read
# off adjx6_23 and committed.
ADJX6 += tuple((f"adjx6b_{seed}", "adj_x", seed) for seed in range(31, 43))
# The part a block belongs to: the first of these names on its allocation stack.
_SITES = (
    ("xnn_get_pointer_to_write_weights", "packed_weights"),
    ("reshape_igemm", "indirection"),
    ("reshape_dwconv", "indirection"),
    ("reshape_subconv2d_path", "indirection"),  # a strided TRANSPOSE_CONV's sub-convolutions
    ("reshape_max_pooling2d_nhwc", "indirection"),
    ("reshape_average_pooling2d_nhwc", "indirection"),  # none seen on the cached models
    ("xnn_plan_memory", "workspace"),
    ("tflite::ResizableAlignedBuffer::Resize", "arena"),
)


def model_file(name: str, folder: Path) -> Path | None:
    """A cached model's file: a shared one, or a held-out one generated again."""
    families = {
        f"{held}.tflite": (family, seed, held)
        for held, family, seed in (*HELD_OUT, *FRESH, *FRESH4, *XCASES, *FRESH5, *FRESH6, *ADJX6)
    }
    if name in families:
        family, seed, held = families[name]
        path = folder / name
        case = held.removeprefix("heldout_case_").removeprefix("xcase_")
        case = case.removeprefix("fresh5_").removeprefix("fresh6_")
        path.write_bytes(held_out_model(family, seed, case))
        return path
    path = REPO_ROOT.parent / "shared" / "models" / name
    return path if path.is_file() else None


def parts(model: Path, folder: Path) -> dict[str, Any]:
    """One model → its XNNPACK parts' requests and the delegate's partitions."""
    import re

    from tests.litert_heap_trace import events, symbol, trace

    log = trace(model, "xnnpack", folder)
    live: dict[str, tuple[str, int, str]] = {}
    for phase, op, request, _usable, pointer, frames in events(log):
        if op == "F":
            live.pop(pointer, None)
            continue
        part = "other"
        names = [
            re.sub(r"\(.*$", "", symbol(frame))
            for frame in itertools.takewhile(lambda f: not f.startswith("libpython"), frames)
        ]
        if _runtime_array(names):
            live[pointer] = (phase, request, "runtime")
            continue
        for name in names:
            found = [label for site, label in _SITES if name.startswith(site)]
            if found:
                part = found[0]
                break
        live[pointer] = (phase, request, part)
    found: dict[str, Any] = {label: [] for _, label in _SITES}
    for phase, request, part in live.values():
        if phase == "allocate" and part not in ("other", "runtime"):
            found[part].append(request)
    # xnn_create_runtime_v4's operator-data and value arrays, in allocation order.
    arrays = [
        request
        for phase, request, part in live.values()
        if part == "runtime" and phase == "allocate"
    ]
    pairs = zip(arrays[0::2], arrays[1::2], strict=True)
    found["runtime_arrays"] = [list(pair) for pair in pairs]
    found["partitions"] = _partitions(model)
    return found


def _runtime_array(names: list[str]) -> bool:
    """A block xnn_create_runtime_v4 asks xnn_allocate_zero_memory for itself (its
    operator-data or value array), not through an operator's create."""
    for position, name in enumerate(names):
        if name == "xnn_create_runtime_v4":
            return any(n.startswith("xnn_allocate_zero_memory") for n in names[:position])
        if name.startswith(("xnn_create_", "create_")):
            return False
    return False


def _partitions(model: Path) -> list[dict[str, list[int]]]:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_path=str(model), experimental_op_resolver_type=OpResolverType.AUTO
    )
    interpreter.allocate_tensors()
    return [
        {"inputs": [int(i) for i in node["inputs"]], "outputs": [int(i) for i in node["outputs"]]}
        for node in interpreter._get_ops_details()
        if node["op_name"] == "DELEGATE"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="models whose name contains this")
    arguments = parser.parse_args(argv)
    document = cache_document(DATA, COMMAND)
    heap = json.loads(HEAP_DATA.read_text())
    names = [name for name, entry in heap["models"].items() if "error" not in entry["xnnpack"]]
    held_out = (*FRESH, *FRESH4, *XCASES, *FRESH5, *FRESH6, *ADJX6)
    names += [f"{name}.tflite" for name, _, _ in held_out]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name in sorted(names):
            if arguments.only not in name:
                continue
            path = model_file(name, folder)
            if path is None:
                continue
            try:
                document["models"][name] = parts(path, folder)
                if name.startswith(
                    ("fresh_", "fresh4_", "xcase_", "fresh5_", "fresh6_", "adjx6_", "adjx6b_")
                ):
                    document["models"][name]["heap"] = measure(library, path, "xnnpack")
            except Exception as error:  # recorded, the sweep goes on
                document["models"][name] = {"error": str(error)[:300]}
            print(name, flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
