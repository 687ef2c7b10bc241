"""Overlap plans on real TFLM for Cortex-M, with real inputs: the output probes run the original
and the rewritten model and compare the hash of every output and of every operator's output.

The output probes (`../shared/tools/cortex-m/run_outputs.py`: TFLM built for Cortex-M3, M7 and M55
with CMSIS-NN, and Cortex-M7 with the reference kernels, under qemu-system-arm) fill every input
from a seed and hash every operator's output right after it runs. A rewritten model computes the
right outputs on a build when every hash equals the original's, seed by seed. Each written model
is run at exactly the kTensorArenaSize arenalens tells users to declare for that build, and 1 KiB
above it (what people add), over several seeds.

Two kinds of cases, measured once and cached in tests/data/overlap_proofs.json:

* **models**: the shared models through `optimize --overlap --cpu cortex-m7` without --kernels
  (the default), with `--kernels reference` and with `--kernels cmsis-nn`; the written plan and
  its record are cached with the measurements, so tests rebuild the very file that was measured.
* **rules**: one-operator models (tests/overlap_cases.py) whose output is placed exactly the
  distance each code path's rule allows below its input, one element closer, and where the
  reference rule places it, each run on every probe build.

tests/runtimes/tflm/test_overlap_proofs.py checks the current rules against the cache (a plan the
rules call right on a build must have run bit-identical there), and re-runs a few cases live.

    python -m tests.overlap_proofs                 # measure everything, rewrite the cache
    python -m tests.overlap_proofs --only kws      # only cases whose name contains 'kws'
    python -m tests.overlap_proofs --rules         # only the rule cases
    python -m tests.overlap_proofs --models --choices default   # only optimize without --kernels
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arenalens.builds.build import Build, device_build
from arenalens.builds.kernel_paths import KNOWN_PATHS, KernelPath, path_of
from arenalens.ir import Model, OfflinePlan
from arenalens.optimization import optimize_model, required_bytes
from arenalens.tflite.plan_record import decode_plan_record, encode_plan_record
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import rewrite_model
from tests import overlap_cases as cases
from tests.conftest import SHARED_MODELS

PROBES = SHARED_MODELS.parent / "tools" / "cortex-m"
CACHE = Path(__file__).resolve().parent / "data" / "overlap_proofs.json"
COMMAND = "python -m tests.overlap_proofs"
# The output-probe builds and the arenalens build each one is.
TARGETS: Mapping[str, Build] = {
    "cortex-m7-reference": device_build("cortex-m7", "reference"),
    "cortex-m3-cmsis-nn": device_build("cortex-m3", "cmsis-nn"),
    "cortex-m7-cmsis-nn": device_build("cortex-m7", "cmsis-nn"),
    "cortex-m55-cmsis-nn": device_build("cortex-m55", "cmsis-nn"),
}
SEEDS = "1-5"
ABOVE_BYTES = 1024  # the slack people add to a declared size
# `optimize --overlap --cpu cortex-m7` with each --kernels choice (None: not given).
KERNEL_CHOICES: Mapping[str, str | None] = {
    "default": None,
    "reference": "reference",
    "cmsis-nn": "cmsis-nn",
}
CPU = "cortex-m7"
# Float models are not run on the Cortex-M3 probe: no FPU, every float operation in software,
# hours per seed under QEMU. Their kernels are the reference float kernels on every build (TFLM's
# cmsis_nn kernels call them), run on the Cortex-M7 and M55 builds.
SOFT_FLOAT_TARGETS = frozenset({"cortex-m3-cmsis-nn"})
SOFT_FLOAT_WHY = "float model: the Cortex-M3 has no FPU (software float, hours under QEMU)"
OPTIMIZE_EFFORT = 10.0
PROBE_TIMEOUT_S = 3600


def probes_missing() -> str | None:
    """Why the output probes cannot run here (None: they can)."""
    if not (PROBES / "run_outputs.py").is_file():
        return f"the Cortex-M output probes are not at {PROBES}"
    if shutil.which("qemu-system-arm") is None:
        return "qemu-system-arm is not installed"
    return None


def target_path(target: str) -> KernelPath:
    """The kernel code path a probe build runs."""
    return path_of(TARGETS[target])


# ---------------------------------------------------------------------------------------------
# Running the probes


def run_outputs(data: bytes, target: str, *, arena: int | None, seeds: str = SEEDS) -> Any:
    """One QEMU run of the output probe: the model at `arena` bytes (None: generous) → its JSON."""
    with tempfile.TemporaryDirectory(prefix="arenalens-proof-") as folder:
        path = Path(folder) / "model.tflite"
        path.write_bytes(data)
        command = [sys.executable, str(PROBES / "run_outputs.py"), str(path)]
        command += ["--target", target, "--seeds", seeds]
        if arena is not None:
            command += ["--arena", str(arena)]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    if not done.stdout.strip():
        raise RuntimeError(f"run_outputs.py {target}: no output ({done.stderr.strip()[-300:]})")
    return json.loads(done.stdout)


def output_hashes(run: Mapping[str, Any]) -> dict[str, list[str]]:
    """Seed → the hash of every model output, in order."""
    return {
        seed: [output["fnv"] for output in entry["outputs"]]
        for seed, entry in sorted(run.get("seeds", {}).items())
    }


def operator_hashes(run: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Seed → {tensor index: hash of that operator output right after it ran}."""
    return {
        seed: {tensor: op["fnv"] for tensor, op in entry.get("ops", {}).items()}
        for seed, entry in sorted(run.get("seeds", {}).items())
    }


@dataclass(frozen=True)
class Measured:
    """One run of a rewritten model, compared with the original on the same build."""

    arena: int
    status: str  # run_outputs.py's: ok, fail, fault, timeout, invoke_fail, error
    outputs_identical: bool | None  # None: it did not run
    operators_identical: bool | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "arena": self.arena,
            "status": self.status,
            "outputs_identical": self.outputs_identical,
            "operators_identical": self.operators_identical,
        }


def compare(original: Mapping[str, Any], rewritten: Mapping[str, Any], arena: int) -> Measured:
    """The rewritten model's run against the original's (same seeds, same build)."""
    status = str(rewritten.get("status"))
    if status != "ok":
        return Measured(arena, status, None, None)
    outputs = output_hashes(rewritten) == output_hashes(original)
    expected = operator_hashes(original)
    found = operator_hashes(rewritten)
    operators = bool(expected) and all(
        found.get(seed, {}).get(tensor) == value
        for seed, ops in expected.items()
        for tensor, value in ops.items()
    )
    return Measured(arena, status, outputs, operators)


class OriginalRuns:
    """The original models' runs, one per (model, target), at a generous arena."""

    def __init__(self, seeds: str) -> None:
        self.seeds = seeds
        self.runs: dict[tuple[str, str], Any] = {}

    def of(self, name: str, data: bytes, target: str) -> Any:
        key = (name, target)
        if key not in self.runs:
            run = run_outputs(data, target, arena=None, seeds=self.seeds)
            if run.get("status") != "ok":
                raise RuntimeError(f"{name} does not run on {target}: {run.get('detail')}")
            self.runs[key] = run
        return self.runs[key]


# ---------------------------------------------------------------------------------------------
# Model cases: optimize --overlap on the shared models


def model_names() -> list[str]:
    """The shared models with a convolution or pool (whose outputs may slide over an input) that
    TFLM sets up on every probe build (../shared/models/reference-cortex-m.json)."""
    reference = json.loads((SHARED_MODELS / "reference-cortex-m.json").read_text())["targets"]
    set_up = set.intersection(
        *(
            {name for name, entry in found.items() if entry.get("min_arena")}
            for found in reference.values()
        )
    )
    names = []
    for path in sorted(SHARED_MODELS.glob("*.tflite")):
        if path.name not in set_up:
            continue
        model = load_model(path)
        opcodes = {op.opcode for sg in model.subgraphs for op in sg.operators}
        if opcodes & {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"}:
            names.append(path.name)
    return names


def written_model(original: bytes, case: Mapping[str, Any]) -> bytes:
    """The file `optimize` wrote for a cached case, rebuilt from its plan and record."""
    model = load_model(original)
    plan = OfflinePlan(0, len(model.subgraphs), tuple(case["offsets"]))
    record = decode_plan_record(case["record"].encode(), "cache") if case["record"] else None
    return rewrite_model(original, offline_plan=plan, plan_record=record)


def measure_model(
    name: str, kernels: str | None, originals: OriginalRuns, targets: Iterable[str]
) -> dict[str, Any] | None:
    """optimize --overlap --cpu cortex-m7 [--kernels] on one shared model → the written plan
    and, on every probe build, its runs at the declared size and above (None: nothing written)."""
    original = (SHARED_MODELS / name).read_bytes()
    build = device_build(CPU, kernels)
    optimization = optimize_model(original, overlap=True, build=build, effort=OPTIMIZE_EFFORT)
    if optimization.chosen is None:
        return None
    written = load_model(optimization.data)
    assert written.offline_plan is not None
    record = written.plan_record
    runs: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for target in targets:
        if target in SOFT_FLOAT_TARGETS and _has_float(written):
            skipped[target] = SOFT_FLOAT_WHY
            continue
        declared = required_bytes(written, TARGETS[target])
        reference = originals.of(name, original, target)
        measured = []
        for arena in (declared, declared + ABOVE_BYTES):
            run = run_outputs(optimization.data, target, arena=arena, seeds=originals.seeds)
            measured.append(compare(reference, run, arena).as_dict())
        runs[target] = {"declared": declared, "runs": measured}
        print(f"  {name} [{kernels or 'default'}] {target}: {measured}", file=sys.stderr)
    return {
        "model": name,
        "kernels": kernels,
        "cpu": CPU,
        "offsets": list(written.offline_plan.offsets),
        "record": encode_plan_record(record).decode() if record is not None else "",
        "valid_for": list(record.valid_for) if record is not None else [],
        "required_bytes": optimization.original_required_bytes,
        "new_required_bytes": optimization.new_required_bytes,
        "targets": runs,
        "skipped": skipped,
    }


def _has_float(model: Model) -> bool:
    return any(t.dtype.name == "FLOAT32" for sg in model.subgraphs for t in sg.tensors)


# ---------------------------------------------------------------------------------------------
# Rule cases: one operator, its output placed at each code path's distance


RULE_CASES: Mapping[str, Callable[[], bytes]] = {
    "conv 3x3 int8": lambda: cases.int8_conv(kernel=3, stride=1, channels=8),
    "conv 3x3 stride 2 int8": lambda: cases.int8_conv(kernel=3, stride=2, channels=6),
    "conv 1x1 int8": lambda: cases.int8_conv(kernel=1, stride=1, channels=8, padding="VALID"),
    "conv 1x1 stride 2 int8": lambda: cases.int8_conv(
        kernel=1, stride=2, channels=8, padding="VALID"
    ),
    "conv 1x1 7 channels int8": lambda: cases.int8_conv(
        kernel=1, stride=1, channels=7, padding="VALID"
    ),
    "conv 1x3 one row int8": lambda: cases.int8_conv(
        kernel=(1, 3), stride=1, channels=8, shape=(1, 1, 16, 4)
    ),
    "conv 1x3 one row stride 2 int8": lambda: cases.int8_conv(
        kernel=(1, 3), stride=2, channels=5, shape=(1, 1, 17, 8), padding="VALID"
    ),
    "depthwise 3x3 int8": lambda: cases.int8_depthwise(stride=1),
    "depthwise 3x3 130 channels int8": lambda: cases.int8_depthwise(stride=1, shape=(1, 5, 5, 130)),
    "depthwise multiplier 4 int8": lambda: cases.int8_depthwise(
        stride=1, shape=(1, 7, 7, 3), multiplier=4
    ),
    "depthwise one input channel int8": lambda: cases.int8_depthwise(
        stride=1, shape=(1, 7, 7, 1), multiplier=8
    ),
    "depthwise 3x3 stride 2 int8": lambda: cases.int8_depthwise(stride=2),
    "depthwise 5x5 int8": lambda: cases.int8_depthwise(stride=1, kernel=5),
    "average pool int8": lambda: cases.int8_pool(
        "AVERAGE_POOL_2D", pool=2, stride=2, padding="VALID"
    ),
    "average pool 3x3 20 channels int8": lambda: cases.int8_pool(
        "AVERAGE_POOL_2D", pool=3, stride=1, padding="SAME", shape=(1, 7, 7, 20)
    ),
    "max pool int8": lambda: cases.int8_pool("MAX_POOL_2D", pool=3, stride=1, padding="SAME"),
    "add int8": cases.int8_add,
    "softmax int8": cases.int8_softmax,
    "pad int8": cases.int8_pad,
    "pad channels int8": lambda: cases.int8_pad(((0, 0), (1, 0), (0, 1), (1, 2))),
    "transpose 4-D int8": lambda: cases.int8_transpose((1, 4, 6, 5), (0, 2, 1, 3)),
    "transpose last axes int8": lambda: cases.int8_transpose((1, 3, 6, 10), (0, 1, 3, 2)),
    "transpose 2-D int8": lambda: cases.int8_transpose((12, 10), (1, 0)),
    "conv 3x3 float": lambda: cases.float_conv(kernel=3, stride=1),
    "depthwise multiplier 2 float": lambda: cases.float_depthwise(multiplier=2, stride=1),
    "pad float": cases.float_pad,
    "transpose float": cases.float_transpose,
}


def rule_distances(data: bytes) -> dict[str, int | None]:
    """Code path name → the distance its rules allow the operator's output below input 0."""
    found: dict[str, int | None] = {}
    for path in KNOWN_PATHS:
        try:
            placed = cases.place_overlap(data, paths=(path,))
        except AssertionError:  # no overlap allowed on this path
            found[path.name] = None
            continue
        found[path.name] = placed.distance
    return found


def placed_at(data: bytes, distance: int) -> bytes:
    """The one-operator model with its output exactly `distance` bytes below its input."""
    reference = cases.place_overlap(data, paths=KNOWN_PATHS[:1])
    return cases.place_overlap(data, short_by=reference.distance - distance).data


def measure_rule(name: str, originals: OriginalRuns, targets: Iterable[str]) -> dict[str, Any]:
    """One rule case → its distances per code path and, on every probe build, the runs at that
    build's distance, one element closer, and at every other path's distance."""
    data = RULE_CASES[name]()
    model = load_model(data)
    source = model.subgraphs[0].tensors[model.subgraphs[0].operators[0].inputs[0]]
    element = source.dtype.element_bytes or 1
    distances = rule_distances(data)
    runs: dict[str, Any] = {}
    for target in targets:
        reference = originals.of(f"rule:{name}", data, target)
        own = distances[target_path(target).name]
        tried = {d for d in distances.values() if d is not None}
        if own is not None:
            tried.add(own - element)
        measured = {}
        for distance in sorted(tried, reverse=True):
            run = run_outputs(placed_at(data, distance), target, arena=None, seeds=originals.seeds)
            measured[str(distance)] = compare(reference, run, 0).as_dict()
        runs[target] = measured
        print(f"  rule {name} {target} (own {own}): {measured}", file=sys.stderr)
    return {"rule": name, "distances": distances, "element_bytes": element, "targets": runs}


# ---------------------------------------------------------------------------------------------
# The cache


def load_cache() -> dict[str, Any]:
    """The cached measurements ({} when there are none)."""
    if not CACHE.is_file():
        return {}
    cached: dict[str, Any] = json.loads(CACHE.read_text())
    return cached


def main(argv: list[str] | None = None) -> int:
    """Measure the cases and rewrite the cache (cases not measured this time are kept)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", metavar="TEXT", help="only cases whose name contains TEXT")
    parser.add_argument("--rules", action="store_true", help="only the rule cases")
    parser.add_argument("--models", action="store_true", help="only the model cases")
    parser.add_argument("--seeds", default=SEEDS, help=f"seeds (default {SEEDS})")
    parser.add_argument(
        "--targets", default=",".join(TARGETS), help="probe builds, comma-separated"
    )
    parser.add_argument(
        "--choices",
        default=",".join(KERNEL_CHOICES),
        help="the --kernels choices of the model cases, comma-separated",
    )
    args = parser.parse_args(argv)
    missing = probes_missing()
    if missing:
        print(f"overlap_proofs: {missing}", file=sys.stderr)
        return 2
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    cache = load_cache()
    models: dict[str, Any] = {
        f"{c['model']}|{c['kernels'] or 'default'}": c for c in cache.get("models", [])
    }
    rules: dict[str, Any] = {c["rule"]: c for c in cache.get("rules", [])}
    originals = OriginalRuns(args.seeds)

    def save() -> None:
        # After every case: a long measurement that stops keeps what it measured.
        CACHE.write_text(
            json.dumps(
                {
                    "command": COMMAND,
                    "about": __doc__.splitlines()[0],
                    "seeds": args.seeds,
                    "above_bytes": ABOVE_BYTES,
                    "probes": "../shared/tools/cortex-m (run_outputs.py; see its README)",
                    "models": [models[key] for key in sorted(models)],
                    "rules": [rules[key] for key in sorted(rules)],
                },
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )

    if not args.models:
        for name in RULE_CASES:
            if args.only and args.only not in name:
                continue
            rules[name] = measure_rule(name, originals, targets)
            save()
    if not args.rules:
        for name in model_names():
            for label, kernels in KERNEL_CHOICES.items():
                if (args.only and args.only not in name) or label not in args.choices.split(","):
                    continue
                print(f"{name} [{label}]", file=sys.stderr)
                case = measure_model(name, kernels, originals, targets)
                key = f"{name}|{label}"
                if case is None:
                    models.pop(key, None)
                else:
                    models[key] = case
                save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
