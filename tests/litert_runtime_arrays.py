"""The operator-data and value arrays each XNNPACK runtime of a real LiteRT interpreter holds,
read off the wheel with tests/litert_heap_trace.py's allocation tracer and cached in
tests/data/litert_runtime_arrays.json:

    python -m tests.litert_runtime_arrays --only var11_,var12_      # models whose name matches

Per single-subgraph cached model (tests/litert_heap_cache.py) that XNNPACK runs: the request of
each runtime's `xnn_operator_data` array (240 B per node XNNPACK counts) and `xnn_runtime_value`
array (160 B per value), in the order the delegate kernels are created
(xnn_create_runtime_v4: the runtime struct, 96 B, then the two arrays), the blocks still live
after allocate_tensors() only (a LUT fusion builds and frees a runtime of its own).
runtimes/litert/xnnpack_objects.runtime_array_requests is held to them
(tests/runtimes/litert/test_xnnpack_slots.py). Needs the `runtime` extra, gcc and binutils.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_cache import cached, names
from tests.litert_heap_measure import DATA, HELD_OUT, held_out_model
from tests.litert_heap_trace import events, site, trace
from tests.litert_xnnpack_parts import model_file

ARRAYS = DATA.with_name("litert_runtime_arrays.json")
RUNTIME_STRUCT_BYTES = 96  # struct xnn_runtime: marks each runtime's three blocks
_FAMILIES = {f"{name}.tflite": (family, seed, name) for name, family, seed in HELD_OUT}


def model_bytes(name: str, folder: Path) -> bytes | None:
    """A cached model's bytes: a held-out one generated again, or a shared one."""
    if name in _FAMILIES:
        family, seed, held = _FAMILIES[name]
        return held_out_model(family, seed, held.removeprefix("heldout_case_"))
    path = model_file(name, folder)
    return None if path is None else path.read_bytes()


def runtime_arrays(model: bytes, folder: Path) -> list[list[int]]:
    """[operator-data request, value-array request] of each XNNPACK runtime the wheel keeps."""
    path = folder / "model.tflite"
    path.write_bytes(model)
    live: dict[str, int] = {}
    for phase, operation, request, _usable, pointer, frames in events(
        trace(path, "xnnpack", folder)
    ):
        if phase != "allocate":
            continue
        if operation == "F":
            live.pop(pointer, None)
        elif "xnn_create_runtime_v4" in site(frames):
            live[pointer] = request  # a freed pointer reused goes last: allocation order
    requests = list(live.values())
    return [
        requests[index + 1 : index + 3]
        for index, request in enumerate(requests)
        if request == RUNTIME_STRUCT_BYTES and index + 2 < len(requests)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated parts of model names")
    arguments = parser.parse_args(argv)
    from arenalens.tflite.reader import parse_model

    document: dict[str, Any] = json.loads(ARRAYS.read_text()) if ARRAYS.is_file() else {}
    parts = [part for part in arguments.only.split(",") if part]
    # The command remakes every entry: the parts measured before and these.
    before = document.get("command", "").partition(" --only ")[2].split(",")
    listed = [*(part for part in before if part), *(part for part in parts if part not in before)]
    document["command"] = "python -m tests.litert_runtime_arrays --only " + ",".join(listed)
    found: dict[str, Any] = document.setdefault("models", {})
    for name in names():
        if parts and not any(part in name for part in parts):
            continue
        if "error" in cached(name)["xnnpack"]:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            data = model_bytes(name, Path(scratch))
            if data is None or len(parse_model(data, name).subgraphs) > 1:
                continue
            found[name] = runtime_arrays(data, Path(scratch))
        print(name, found[name], flush=True)
        # Written after each model: a long run stopped keeps what it measured.
        ARRAYS.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
