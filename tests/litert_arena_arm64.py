"""LiteRT's arenas on Linux arm64, as the aarch64 wheel plans them, cached in
tests/data/litert_arena_arm64.json:

    python -m tests.litert_arena_arm64 --tree .litert-isa   # every model of MODELS

`plan` and `export` label a Linux device's arenas as the x86-64 wheel's, unchanged
(`litert_memory.arenas_on_device` says why from LiteRT's sources). This is the proof: each
model's tensors' addresses after `allocate_tensors()` (builtin kernels, one thread), read by
arenalens' own probe (`runtimes/litert/probe.py`) run by the aarch64 `ai-edge-litert` wheel
under `qemu-aarch64 -cpu cortex-a76`, in the arm64 tree `python -m tests.litert_heap_isa --setup`
builds. tests/runtimes/litert/test_litert_arena_arm64.py compares them with the prediction,
arena by arena and tensor by tensor. The models: the kernel cases (im2col, hybrid and 4-bit
FULLY_CONNECTED, 3-D convolutions, ...), the built-in examples, and held-out random graphs and
int8 networks drawn with seeds not used before (7xxxxx).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.litert_heap_isa import GUEST_PYTHON
from tests.litert_heap_measure import REPO_ROOT

DATA = REPO_ROOT / "tests/data/litert_arena_arm64.json"
COMMAND = "python -m tests.litert_arena_arm64 --tree .litert-isa"
CPU = "cortex-a76"
RANDOM_GRAPH_SEEDS = tuple(range(700_001, 700_013))
NETWORK_SEEDS = tuple(range(700_101, 700_109))
# A tensor as the probe saw it, one row each (RealTensor's fields).
ROW = ("index", "status", "address", "nbytes", "dtype", "shape")
# The guest runs every model in one process (the interpreter import is most of a run's time).
GUEST_DRIVER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from probe import probe
for path in sys.argv[2:]:
    try:
        print(json.dumps({"path": path, "probe": probe(path)}), flush=True)
    except Exception as error:  # the wheel refusing a model is recorded, not fatal
        print(json.dumps({"path": path, "error": str(error)[:300]}), flush=True)
"""


def models() -> dict[str, Callable[[], bytes]]:
    """Name → the bytes of each model (the same bytes every call)."""
    import numpy as np
    from flows.models import cnn, float_cnn

    from arenalens.examples import EXAMPLES, example_bytes
    from tests.litert_kernel_cases import KERNEL_CASES
    from tests.litert_random_graphs import random_graph

    found: dict[str, Callable[[], bytes]] = dict(KERNEL_CASES)
    for name in sorted(EXAMPLES):
        found[f"example_{name}"] = lambda name=name: example_bytes(name)
    for seed in RANDOM_GRAPH_SEEDS:
        found[f"random_graph_{seed}"] = lambda seed=seed: random_graph(seed)
    for seed in NETWORK_SEEDS:
        found[f"int8_cnn_{seed}"] = lambda seed=seed: cnn(random.Random(seed)).data

        def floats(seed: int = seed) -> bytes:
            with np.errstate(over="ignore", invalid="ignore"):
                return float_cnn(random.Random(seed)).data

        found[f"float_cnn_{seed}"] = floats
    return found


def digest(data: bytes) -> str:
    """The model's structure (tensor shapes and types, operators and their tensors), which the
    arenas follow: some generators draw their weights afresh on every call."""
    from arenalens.tflite.reader import parse_model

    model = parse_model(data, "digest")
    text = repr(
        [
            (
                [(t.shape, t.shape_signature, t.dtype.name) for t in subgraph.tensors],
                [(o.opcode, o.inputs, o.outputs) for o in subgraph.operators],
                subgraph.inputs,
                subgraph.outputs,
            )
            for subgraph in model.subgraphs
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()


def guest_command(tree: Path, probe_folder: Path, paths: list[Path]) -> list[str]:
    """qemu-aarch64 with the emulated core's /proc/cpuinfo (cpuinfo reads its MIDR there)."""
    guest = " ".join(
        [
            f"qemu-aarch64 -cpu {CPU} -L {tree / 'root'} -E PYTHONPATH={tree / 'site'}",
            str(tree / "root" / GUEST_PYTHON),
            "-c",
            f"'{GUEST_DRIVER}'",
            str(probe_folder),
            *map(str, paths),
        ]
    )
    cpuinfo = tree / f"cpuinfo-{CPU}"
    return ["unshare", "-m", "sh", "-c", f"mount --bind {cpuinfo} /proc/cpuinfo && exec {guest}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the arm64 tree (.litert-isa)")
    parser.add_argument("--only", default="", help="models whose name contains this")
    arguments = parser.parse_args(argv)
    chosen = {name: make for name, make in models().items() if arguments.only in name}
    document: dict[str, Any] = json.loads(DATA.read_text()) if DATA.is_file() else {"models": {}}
    document["command"] = COMMAND
    document["environment"] = {"ai_edge_litert": version("ai-edge-litert"), "cpu": CPU}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        probe = REPO_ROOT / "src/arenalens/runtimes/litert/probe.py"
        (folder / "probe.py").write_text(probe.read_text())
        paths = {}
        for name, make in chosen.items():
            data = make()
            path = folder / f"{name}.tflite"
            path.write_bytes(data)
            paths[str(path)] = (name, digest(data))
        completed = subprocess.run(
            guest_command(arguments.tree.resolve(), folder, [Path(p) for p in paths]),
            capture_output=True,
            text=True,
            check=False,
        )
        for line in completed.stdout.splitlines():
            record = json.loads(line)
            name, sha = paths[record["path"]]
            entry: dict[str, Any] = {"structure": sha}
            if "probe" in record:
                entry["subgraphs"] = [
                    [[t.get(key) for key in ROW] for t in subgraph["tensors"]]
                    for subgraph in record["probe"]["subgraphs"]
                ]
            else:
                entry["error"] = record["error"]
            document["models"][name] = entry
            print(name, "error" if "error" in record else "ok", flush=True)
        if completed.returncode != 0:
            print(completed.stderr[-2000:], file=sys.stderr)
    document["models"] = dict(sorted(document["models"].items()))
    DATA.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
