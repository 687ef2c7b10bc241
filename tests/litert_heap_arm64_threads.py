"""The heap the aarch64 LiteRT wheel holds with 1 and 4 threads for models with float CONV_2D
left to the builtin kernels, measured under qemu-aarch64 and cached in
tests/data/litert_heap_arm64_threads.json:

    python -m tests.litert_heap_arm64_threads --tree .litert-isa

On x86-64 conv.cc takes its multithreaded Eigen kernel with more than one thread (other
temporaries, Eigen's pool: not modelled); Arm builds define TFLITE_WITH_RUY and have no such
kernel, so `heap.threads_unsized` sizes them. This is the check: tests.litert_heap_threads'
driver (`Interpreter(num_threads=N)`, builtin kernels, allocate, one invoke of zeros) run by
the aarch64 `ai-edge-litert` wheel with the aarch64 heap tracer, in the arm64 tree that
`python -m tests.litert_heap_isa --setup` builds, on an emulated Cortex-A76. The models: three
held-out float CNNs (flows' float_cnn, seeds 7005xx) and two shared ones when present.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from flows.models import float_cnn

from tests.litert_heap_isa import GUEST_PYTHON
from tests.litert_heap_measure import REPO_ROOT
from tests.litert_heap_threads import DRIVER

DATA = REPO_ROOT / "tests/data/litert_heap_arm64_threads.json"
COMMAND = "python -m tests.litert_heap_arm64_threads --tree .litert-isa"
CPU = "cortex-a76"
ISA = "arm64-dotprod"  # what a Cortex-A76 selects (isa.device_isa)
THREADS = (1, 4)
HELD_OUT_SEEDS = (700502, 700505, 700518)
SHARED = ("mlperf_tiny__vww_96_float.tflite", "mlperf_tiny__pretrainedResnet.tflite")


def held_out(seed: int) -> bytes:
    with np.errstate(over="ignore", invalid="ignore"):
        return float_cnn(random.Random(seed)).data


def model_bytes(name: str) -> bytes | None:
    """A cached model's bytes: a held-out one made again, a shared one read (None: absent)."""
    if name.startswith("float_cnn_"):
        return held_out(int(name.removeprefix("float_cnn_")))
    path = REPO_ROOT.parent / "shared" / "models" / name
    return path.read_bytes() if path.is_file() else None


def measure(tree: Path, data: bytes, threads: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "model.tflite").write_bytes(data)
        (folder / "driver.py").write_text(DRIVER)
        guest = (
            f"qemu-aarch64 -cpu {CPU} -L {tree / 'root'} -E LD_PRELOAD={tree / 'heap_tracer.so'}"
            f" -E PYTHONPATH={tree / 'site'} {tree / 'root' / GUEST_PYTHON}"
            f" {folder / 'driver.py'} {folder / 'model.tflite'} builtin {threads}"
        )
        cpuinfo = tree / f"cpuinfo-{CPU}"
        completed = subprocess.run(
            ["unshare", "-m", "sh", "-c", f"mount --bind {cpuinfo} /proc/cpuinfo && exec {guest}"],
            capture_output=True,
            text=True,
            check=True,
        )
    figures: dict[str, int] = json.loads(completed.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the arm64 tree (.litert-isa)")
    arguments = parser.parse_args(argv)
    document = {"command": COMMAND, "cpu": CPU, "isa": ISA, "models": {}}
    for name in (*(f"float_cnn_{seed}" for seed in HELD_OUT_SEEDS), *SHARED):
        data = model_bytes(name)
        if data is None:
            continue
        entry = {str(n): measure(arguments.tree.resolve(), data, n) for n in THREADS}
        document["models"][name] = entry
        print(name, json.dumps(entry), flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
