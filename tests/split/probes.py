"""Split models on real TFLM for Cortex-M (QEMU output probes): measure once, cache, test always.

Every case is a model and how to split it: generated models cut by hand (each split kind: bands
with explicit PAD at the borders, PADV2 before max pooling, a residual ADD, channel groups with
per-channel and per-tensor weights and a depth multiplier) and the shared models as `optimize
--overlap --split` writes them for each build. For every output probe target (Cortex-M3, M7, M55
with CMSIS-NN, Cortex-M7 with reference kernels) the split model is written for that target's
build (its offline plan holds for that build's scratch buffers); the "(no --kernels)" cases are
the one file `optimize --overlap --split --cpu cortex-m7` writes (no kernel library named: its
overlaps must hold on every library the core may run), run on every target. Both files run at the
kTensorArenaSize arenalens declares for them on that build, over 5 seeds: every model output
and every tensor both files compute (same index, same size: the region results and everything
after them) must hash the same.

Remake the cache (about 30 minutes under QEMU; needs qemu-system-arm and ../shared/tools/cortex-m):

    python -m tests.split.probes                    # every case → tests/data/split_probes.json
    python -m tests.split.probes --only stem        # the cases whose name contains "stem"

The test (`test_device_probes.py`) checks the cached results, and that the generated cases'
split models are still the bytes the current code writes (sha256): a change to the splitting
code that changes a written model needs a new measurement.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arenalens import load_model
from arenalens.builds.build import as_build
from arenalens.optimization import optimize_model, required_bytes
from arenalens.split.parts import SplitKind
from tests.conftest import SHARED_MODELS
from tests.split import models
from tests.split.checks import Cut, split_model

CACHE = Path(__file__).resolve().parents[1] / "data" / "split_probes.json"
PROBES = SHARED_MODELS.parent / "tools" / "cortex-m"
SEEDS = "1-5"
# Output probe target → the arenalens build it runs.
TARGETS = {
    "cortex-m3-cmsis-nn": "cortex-m3/cmsis-nn",
    "cortex-m7-cmsis-nn": "cortex-m7/cmsis-nn",
    "cortex-m55-cmsis-nn": "cortex-m55/cmsis-nn",
    "cortex-m7-reference": "cortex-m7/reference",
}
BANDS, CHANNELS = SplitKind.BANDS, SplitKind.CHANNELS


@dataclass(frozen=True)
class GeneratedCase:
    """A generated model cut by hand: the same split model on every target (no offline plan)."""

    name: str
    make: Callable[[], bytes]
    cuts: tuple[Cut, ...]

    def written(self) -> bytes:
        """The split model's bytes."""
        return split_model(self.make(), self.cuts)[0]


GENERATED = (
    GeneratedCase("stem bands", lambda: models.stem_model(size=(48, 40)), ((BANDS, 0, 3, 4),)),
    GeneratedCase(
        "stem two band regions",
        lambda: models.stem_model(1, size=(48, 40)),
        ((BANDS, 0, 1, 5), (BANDS, 2, 3, 3)),
    ),
    GeneratedCase("residual bands", models.residual_model, ((BANDS, 0, 4, 4),)),
    GeneratedCase("pooling bands", models.pooling_model, ((BANDS, 0, 3, 3),)),
    GeneratedCase("channel groups", models.channel_model, ((CHANNELS, 0, 2, 3),)),
    GeneratedCase(
        "channel groups, per-tensor",
        lambda: models.channel_model(1, per_tensor=True),
        ((CHANNELS, 0, 2, 4),),
    ),
    GeneratedCase(
        "channel groups, multiplier 2",
        lambda: models.channel_model(2, multiplier=2),
        ((CHANNELS, 0, 2, 4),),
    ),
)
# Shared models `optimize --overlap --split` splits (kernel library named as the build's).
SHARED = (
    "tflite_micro__person_detect",
    "mlperf_tiny__vww_96_int8",
    "tflite_micro__mobilenet_v2_quantized_1x3x224x224",
)

# The same models written without --kernels (`optimize --overlap --split --cpu cortex-m7`): one
# file whose plan must hold on every library the core may run, run on every target.
DEFAULT_BUILD = "cortex-m7"
# (mobilenet_v2 224's is not among them yet: its four targets take about an hour under QEMU.)
DEFAULT_MODELS = ("tflite_micro__person_detect", "mlperf_tiny__vww_96_int8")
DEFAULT = tuple(f"{name} (no --kernels)" for name in DEFAULT_MODELS)


def run_probe(data: bytes, target: str, arena: int) -> dict[str, Any]:
    """One model on one output probe at `arena` bytes → the probe's JSON."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.tflite"
        path.write_bytes(data)
        done = subprocess.run(
            [
                sys.executable,
                str(PROBES / "run_outputs.py"),
                str(path),
                "--target",
                target,
                "--arena",
                str(arena),
                "--seeds",
                SEEDS,
                "--timeout",
                "3600",
            ],
            capture_output=True,
            text=True,
            timeout=4 * 3600,
            check=False,
        )
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def common_tensors(original: bytes, split: bytes) -> set[int]:
    """Tensor indices of subgraph 0 that are the same tensor in both files: same name and shape
    (a region's result and every tensor after it; not the slots the split gave new tensors)."""
    before = load_model(original).subgraphs[0].tensors
    after = load_model(split).subgraphs[0].tensors
    return {
        t.index
        for t in before
        if t.index < len(after) and (after[t.index].name, after[t.index].shape) == (t.name, t.shape)
    }


def compare(original: dict[str, Any], split: dict[str, Any], common: set[int]) -> dict[str, Any]:
    """Two probe runs → whether every output and every common tensor hashed the same."""
    seeds: dict[str, Any] = {}
    identical = original["status"] == split["status"] == "ok"
    compared = 0
    for seed, before in original.get("seeds", {}).items():
        after = split.get("seeds", {}).get(seed, {})
        outputs_equal = [o["fnv"] for o in before.get("outputs", [])] == [
            o["fnv"] for o in after.get("outputs", [])
        ]
        tensors = 0
        differing = []
        for tensor, op in before.get("ops", {}).items():
            other = after.get("ops", {}).get(tensor)
            if int(tensor) not in common or other is None or other["bytes"] != op["bytes"]:
                continue
            tensors += 1
            if other["fnv"] != op["fnv"]:
                differing.append(int(tensor))
        compared = max(compared, tensors)
        same = outputs_equal and not differing and before.get("invoke") == after.get("invoke")
        identical = identical and same
        seeds[seed] = {
            "outputs": [o["fnv"] for o in after.get("outputs", [])],
            "outputs_equal": outputs_equal,
            "tensors_compared": tensors,
            "tensors_differing": differing,
        }
    identical = identical and len(seeds) == 5
    return {"identical": identical, "tensors_compared": compared, "seeds": seeds}


def measure_case(name: str, original: bytes, written_for: Callable[[str], bytes]) -> dict[str, Any]:
    """One case on every target."""
    results: dict[str, Any] = {}
    for target, build_name in TARGETS.items():
        build = as_build(build_name)
        written = written_for(build_name)
        arena_before = required_bytes(load_model(original), build)
        arena_after = required_bytes(load_model(written), build)
        before = run_probe(original, target, arena_before)
        after = run_probe(written, target, arena_after)
        outcome = compare(before, after, common_tensors(original, written))
        results[target] = {
            "sha256": hashlib.sha256(written).hexdigest(),
            "arena_before": arena_before,
            "arena_after": arena_after,
            "setup_before": before.get("setup", {}),
            "setup_after": after.get("setup", {}),
            **outcome,
        }
        print(
            f"{name} on {target}: {arena_before:,} -> {arena_after:,} B, "
            f"identical={outcome['identical']} ({outcome['tensors_compared']} tensors)",
            file=sys.stderr,
        )
    return results


def shared_written(name: str) -> Callable[[str], bytes]:
    """The file `optimize --overlap --split` writes for a build (kernel library named)."""
    data = (SHARED_MODELS / f"{name}.tflite").read_bytes()

    def written(build_name: str) -> bytes:
        build = as_build(build_name)
        # The build's name names its kernel library: overlaps hold on that library.
        optimization = optimize_model(data, overlap=True, build=build, split=True)
        assert optimization.split is not None and optimization.split.splits, name
        return optimization.data

    return written


def default_written(name: str) -> bytes:
    """The file `optimize --overlap --split --cpu cortex-m7` writes (no kernel library named)."""
    data = (SHARED_MODELS / f"{name}.tflite").read_bytes()
    optimization = optimize_model(data, overlap=True, build=as_build(DEFAULT_BUILD), split=True)
    assert optimization.split is not None and optimization.split.splits, name
    return optimization.data


def main() -> int:
    """Measure every case (or those named) and merge them into the cache."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", metavar="TEXT", help="only cases whose name contains TEXT")
    args = parser.parse_args()
    cache: dict[str, Any] = json.loads(CACHE.read_text()) if CACHE.is_file() else {}
    cases = cache.setdefault("cases", {})
    cache["command"] = "python -m tests.split.probes"
    cache["seeds"] = SEEDS
    for case in GENERATED:
        if args.only and args.only not in case.name:
            continue
        written = case.written()
        cases[case.name] = measure_case(case.name, case.make(), lambda _build, w=written: w)
        CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    for name in SHARED:
        if args.only and args.only not in name:
            continue
        original = (SHARED_MODELS / f"{name}.tflite").read_bytes()
        cases[name] = measure_case(name, original, shared_written(name))
        CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    for name, case in zip(DEFAULT_MODELS, DEFAULT, strict=True):
        if args.only and args.only not in case:
            continue
        original = (SHARED_MODELS / f"{name}.tflite").read_bytes()
        written = default_written(name)
        cases[case] = measure_case(case, original, lambda _build, w=written: w)
        CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
