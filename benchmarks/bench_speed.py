"""Speed for search loops and CI (issue 31): candidates per second, whole-process commands, the
10,000-operator plan against real TFLM, and a batch over a folder of a thousand models.

Four tables, every figure measured in this run (the machine's load average is printed with each):

1. **In process**: `arenalens.check(bytes, budget=..., build="cortex-m7/cmsis-nn")` on five models
   of different sizes, a new bytes object every call (nothing is cached by identity), against a
   budget each fits (no remedy to look for): median milliseconds (wall and CPU) and candidates per
   second per core (1 / median CPU seconds). Cold: every cache that depends on models is emptied
   before each call (`arenalens.clear_caches()`, or the kernel setups' memo where that is all
   there is), since a search loop never checks the same candidate twice. Then the remedy path:
   VWW against a budget it does not fit, so `check` runs the optimizer, next to `optimize_model`
   alone on the same model (what `arenalens optimize` does). Then a stream of distinct seeded
   candidates of a MobileNet-like search space (resolution, width, depth, each depthwise kernel;
   their own weights), each checked once in order: with the caches kept across the stream (what
   a search loop sees), and cold.
2. **Whole process**: `arenalens check`, `plan --json` and `report` of a small model, and
   `python -c pass`, taking turns, median wall and CPU seconds, and each command over `pass`;
   then the remedy ladder on the command line: `check` of VWW against a budget it does not fit
   (the optimizer runs) next to the `optimize` command its first step prints.
   Bytecode is cached as an installed package has it (one untimed warm-up run writes it into a
   temporary `PYTHONPYCACHEPREFIX`).
3. **10,000 and 20,000 operators**: `arenalens plan MODEL --runtime tflm --json` on generated
   chains (tests/fixtures/synthetic.py), whole process, against the real TFLM's whole process
   (`python -c` importing `tflite_micro` and running `Interpreter.from_bytes`: load, Init,
   Prepare, AllocateTensors), taking turns; the ratio, and time per doubling (2.0x is linear).
4. **Batch**: `arenalens check FOLDER --budget 1MB --json` over a folder of a thousand generated
   models, with every core and with `--jobs 1`: models per second.

Each measurement runs in a child process, so `--baseline SRC` (the `src` folder of another
checkout, e.g. `git worktree add /tmp/before <commit>`) measures that code too, in the same run,
taking turns, with a before/after column; and `--python EXE` (repeatable) runs every figure under
each interpreter given (a virtual environment's python with the project's dependencies), since the
interpreter's build moves every figure: CPython built without profile-guided and link-time
optimisation (pyenv's default) runs the same bytecode about 1.4x slower than the builds python.org,
Debian, Ubuntu and conda ship. Each interpreter is named with its version and the time it takes
for a fixed pure-Python workload (`_INTERPRETER_PROBE`), measured in the same run.

Run:  python benchmarks/bench_speed.py [--repeat 5] [--calls 40] [--baseline /tmp/before/src]
          [--python /usr/bin/python3 --python .venv/bin/python]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchkit import REPO_ROOT, SHARED, synthetic_model

SOURCE = REPO_ROOT / "src"
BUILD = "cortex-m7/cmsis-nn"
# (label, shared corpus file, built-in example used when the corpus is absent)
MODELS = (
    ("hello_world int8 (3 ops)", "tflite_micro__hello_world_int8.tflite", "fc_autoencoder"),
    ("kws_ref_model (13 ops)", "mlperf_tiny__kws_ref_model.tflite", "kws_ds_cnn"),
    ("resnet8 int8 (~20 ops)", "mlperf_tiny__pretrainedResnet_quant.tflite", "resnet8_cifar"),
    ("vww_96 int8 (31 ops)", "mlperf_tiny__vww_96_int8.tflite", "vww_mobilenet_v1"),
    (
        "mobilenet_v2 224 (84 ops)",
        "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite",
        "mobilenet_v1_224",
    ),
)
FITS_BUDGET = 16 * 1024 * 1024
REMEDY_MODEL = MODELS[3]
REMEDY_BUDGET = 90 * 1024  # VWW needs 100,712 B as given, 82,280 B once optimized
SMALL_MODEL = MODELS[0]
BATCH_MODELS = 1000
STREAM_CANDIDATES = 40
STREAM_SEED = 31

_IN_PROCESS = """
import importlib, json, pathlib, statistics, sys, time
import arenalens
import arenalens.ladder
from arenalens.optimization import optimize_model
from arenalens.tflite.reader import load_model
path, budget, build, calls, mode = sys.argv[1:6]
budget, calls = int(budget), int(calls)

def model_caches_clear():
    # Cold: every cache that depends on models is emptied before a call (what the process keeps
    # of rules and builds stays), so no figure comes from a memo of an earlier call.
    clear = getattr(arenalens, "clear_caches", None)
    if clear is not None:
        return clear
    try:
        return importlib.import_module("arenalens.runtimes.tflm.kernels.setup_memo").clear
    except ImportError:  # code without a memo across calls
        return lambda: None

forget_models = model_caches_clear()  # looked up once: a failed import each call costs time

def prepared(data):
    # A new bytes object every call, and the caches forgotten, before the clock starts: the
    # caller's copy (about a millisecond for mobilenet_v2's 3.4 MB) is not the check's work.
    fresh = bytes(bytearray(data))
    if mode.endswith("cold"):
        forget_models()
    if mode == "remedy-cold":
        # The process keeps its last rewrites (`ladder.rewrite`): forget them, so the optimizer
        # runs every call, as it does for candidates that all differ.
        getattr(arenalens.ladder, "_REWRITES", {}).clear()
    return fresh

def check(fresh):
    if mode == "optimize-cold":
        return optimize_model(load_model(fresh), effort=4.0, build=build).new_required_bytes
    return arenalens.check(fresh, budget=budget, build=build).required_bytes

def timed(data):
    fresh = prepared(data)
    wall, cpu = time.perf_counter(), time.process_time()
    answer = check(fresh)
    return time.process_time() - cpu, time.perf_counter() - wall, answer

if mode.startswith("stream"):
    # Distinct candidates, each checked once, in order (caches kept unless cold); the model
    # rows' own warm-up beforehand, so the process is as warm as theirs.
    candidates = [p.read_bytes() for p in sorted(pathlib.Path(path).glob("*.tflite"))]
    warm = pathlib.Path(sys.argv[6]).read_bytes()
    for _ in range(3):
        check(prepared(warm))
    forget_models()
    samples = [timed(data) for data in candidates]
    answer = f"{len(candidates)} candidates, sum {sum(s[2] for s in samples):,}"
else:
    data = pathlib.Path(path).read_bytes()
    for _ in range(3):
        answer = check(prepared(data))
    samples = [timed(data) for _ in range(calls)]
cpus, walls = [s[0] for s in samples], [s[1] for s in samples]
print(json.dumps([statistics.median(walls), statistics.median(cpus), answer]))
"""

# A fixed pure-Python workload (dict, tuple and attribute work, as the checker does), timed in
# each interpreter to say how fast that interpreter runs bytecode: best of 5, milliseconds.
_INTERPRETER_PROBE = """
import json, platform, sys, time
def work():
    table = {}
    for index in range(60_000):
        key = (index & 255, index >> 8)
        table[key] = table.get(key, 0) + len(key)
    return sum(table.values())
best = min((lambda start: (work(), time.process_time() - start)[1])(time.process_time())
           for _ in range(5))
print(json.dumps([platform.python_version(), platform.python_implementation(), best * 1000]))
"""

_TFLM = """
import sys
from tflite_micro import runtime
runtime.Interpreter.from_bytes(open(sys.argv[1], "rb").read(), arena_size=int(sys.argv[2]))
"""


@dataclass(frozen=True)
class Variant:
    """What one column measures: this code (`source`, a src folder) under this interpreter."""

    label: str
    python: str
    source: Path


def variants_of(sources: dict[str, Path], pythons: Sequence[str]) -> list[Variant]:
    """Every source under every interpreter, labelled by what differs."""
    found = []
    for python in pythons:
        for name, source in sources.items():
            label = name if len(pythons) == 1 else f"{name} · {interpreter_label(python)}"
            found.append(Variant(label, python, source))
    return found


def interpreter_label(python: str) -> str:
    """A short name for an interpreter: its path, home folder shortened."""
    return python.replace(str(Path.home()), "~")


def labels_of(variants: Sequence[Variant]) -> list[str]:
    return [variant.label for variant in variants]


def by_interpreter(variants: Sequence[Variant], variant: Variant) -> str:
    """' under PYTHON' where the table has several interpreters, else nothing."""
    if len({each.python for each in variants}) == 1:
        return ""
    return f" under {interpreter_label(variant.python)}"


def installed_environment(folder: Path, source: Path) -> dict[str, str]:
    """This environment running `source`, its bytecode cached under `folder` (as pip installs)."""
    environment = dict(os.environ, PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment["PYTHONPATH"] = str(source)
    return environment


def adopt_orphans() -> bool:
    """Linux: make this process the subreaper of its descendants, so that a batch's pool workers
    (children of multiprocessing's forkserver, which outlives the command) are reaped here and
    their CPU time counted with the command's. False where that cannot be done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # Linux only

    set_child_subreaper = 36  # PR_SET_CHILD_SUBREAPER, <linux/prctl.h>
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(set_child_subreaper, 1, 0, 0, 0) == 0)


def _reap_orphans(deadline_s: float = 60.0) -> None:
    """Wait for the descendants a finished command left behind (with `adopt_orphans`)."""
    ends = time.monotonic() + deadline_s
    while time.monotonic() < ends:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # none left
        if pid == 0:
            time.sleep(0.01)


def timed(command: Sequence[str], environment: dict[str, str]) -> tuple[float, float, str]:
    """One child process: (wall s, CPU s of the child and, with `adopt_orphans`, of every
    process it started, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment, check=False, timeout=900
    )
    wall = time.perf_counter() - started
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # check exits 1 when a model does not fit
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def nas_candidate(choice: random.Random, seed: int) -> tuple[tuple[object, ...], bytes]:
    """One candidate of a MobileNetV1-like search space, as a NAS draws them before training:
    input resolution, width multiplier, how many of the 13 separable blocks, each depthwise
    kernel 3, 5 or 7, its own random weights (so its own quantization scales) → (its
    architecture, its .tflite bytes)."""
    from arenalens.examples.layers import Int8Network
    from arenalens.examples.vww_mobilenet_v1 import BLOCKS

    resolution = choice.choice((64, 80, 96, 112, 128, 160))
    width = choice.choice((0.25, 0.35, 0.5, 0.75))
    depth = choice.randint(7, len(BLOCKS))
    kernels = tuple(choice.choice((3, 5, 7)) for _ in range(depth))
    net = Int8Network(seed=seed, description="NAS candidate")
    image = net.input("input", (1, resolution, resolution, 3), (0.0, 1.0))
    x = net.conv2d(image, "stem", channels=max(8, int(32 * width)), stride=2)
    blocks = zip(BLOCKS[:depth], kernels, strict=True)
    for number, ((stride, channels), kernel) in enumerate(blocks, start=1):
        x = net.depthwise_conv2d(x, f"block_{number}/dw", kernel=(kernel, kernel), stride=stride)
        pointwise = max(8, int(channels * width))
        x = net.conv2d(x, f"block_{number}/pw", channels=pointwise, kernel=(1, 1))
    _, height, columns, features = x.shape
    x = net.average_pool(x, "pool", pool=(height, columns))
    x = net.reshape(x, "flatten", (1, features))
    logits = net.fully_connected(x, "logits", units=2)
    architecture = (resolution, width, kernels)
    return architecture, net.build([image], [net.softmax(logits, "softmax")])


def write_candidates(folder: Path) -> Path:
    """STREAM_CANDIDATES distinct candidates (seeded) written into `folder`, in draw order."""
    folder.mkdir(exist_ok=True)
    choice = random.Random(STREAM_SEED)
    seen: set[tuple[object, ...]] = set()
    while len(seen) < STREAM_CANDIDATES:
        architecture, data = nas_candidate(choice, seed=STREAM_SEED * 1000 + len(seen))
        if architecture not in seen:
            (folder / f"candidate-{len(seen):03}.tflite").write_bytes(data)
            seen.add(architecture)
    return folder


def model_path(folder: Path, row: tuple[str, str, str]) -> Path:
    """The corpus file, or the built-in example written into `folder`."""
    shared = SHARED / row[1]
    if shared.exists():
        return shared
    from arenalens.examples import write_example  # only without the corpus

    return write_example(row[2], folder)


def in_process(
    variants: Sequence[Variant], folder: Path, calls: int, repeat: int, console: Console
) -> dict[str, dict[str, list[float]]]:
    """Table 1; returns {source label: {row: [wall ms, cpu ms]}} for the summary."""
    rows = [(row[0], model_path(folder, row), FITS_BUDGET, "check-cold") for row in MODELS]
    remedy = model_path(folder, REMEDY_MODEL)
    rows.append(
        (f"{REMEDY_MODEL[0]}, 90 KiB budget (optimizer runs)", remedy, REMEDY_BUDGET, "remedy-cold")
    )
    rows.append(
        (f"{REMEDY_MODEL[0]}: optimize_model alone", remedy, REMEDY_BUDGET, "optimize-cold")
    )
    stream = write_candidates(folder / "candidates")
    stream_label = f"{STREAM_CANDIDATES} distinct MobileNet-like candidates, once each"
    rows.append((f"{stream_label}, caches kept", stream, FITS_BUDGET, "stream"))
    rows.append((f"{stream_label}, cold", stream, FITS_BUDGET, "stream-cold"))
    results: dict[str, dict[str, list[float]]] = {variant.label: {} for variant in variants}
    started_load = load()
    for label, path, budget, mode in rows:
        for _ in range(repeat):
            for variant in variants:
                name = variant.label
                environment = installed_environment(folder, variant.source)
                command = [
                    variant.python,
                    "-c",
                    _IN_PROCESS,
                    str(path),
                    str(budget),
                    BUILD,
                    str(calls),
                    mode,
                    str(model_path(folder, MODELS[3])),  # the stream's warm-up model
                ]
                wall, cpu, answer = json.loads(timed(command, environment)[2])
                best = results[name].get(label)
                figures = [wall * 1000, cpu * 1000, answer]
                # Median per child, fastest child of `repeat`: the least disturbed by the machine.
                if best is None or figures[1] < best[1]:
                    results[name][label] = figures
    table = Table(
        title=f"1. arenalens.check in process, build {BUILD}, cold: caches that depend on models "
        f"emptied before every call, but in the 'caches kept' row (load {started_load} → {load()})"
    )
    table.add_column("model")
    for variant in variants:
        table.add_column(f"{variant.label}: ms (CPU)", justify="right")
        table.add_column(f"{variant.label}: candidates/s/core", justify="right")
    # Before and after under the same interpreter, where a baseline is measured.
    pairs = [
        (before, after)
        for before, after in itertools.pairwise(variants)
        if before.python == after.python and before.source != after.source
    ]
    for _, after in pairs:
        table.add_column(f"speed-up (CPU){by_interpreter(variants, after)}", justify="right")
    table.add_column("required bytes", justify="right")
    for label, *_ in rows:
        cells = [label]
        for variant in variants:
            wall, cpu, _ = results[variant.label][label]
            cells += [f"{wall:.2f} ({cpu:.2f})", f"{1000 / cpu:,.0f}"]
        for before, after in pairs:
            old, new = (results[variant.label][label][1] for variant in (before, after))
            cells.append(f"{old / new:.2f}x")
        answers = {results[variant.label][label][2] for variant in variants}
        cells.append(", ".join(f"{a:,}" if isinstance(a, int) else a for a in sorted(answers)))
        table.add_row(*cells)
    console.print(table)
    return results


def whole_process(variants: Sequence[Variant], folder: Path, repeat: int, console: Console) -> None:
    """Table 2: whole-process commands on a small model against `python -c pass`."""
    small = model_path(folder, SMALL_MODEL)
    remedy = model_path(folder, REMEDY_MODEL)
    remedy_label = REMEDY_MODEL[0].split()[0]
    core, kernels = BUILD.split("/")
    build_options = ["--cpu", core, "--kernels", kernels]
    commands = {
        "python -c pass": ["-c", "pass"],
        "check --target nucleo-f401re": [
            "-m",
            "arenalens",
            "check",
            str(small),
            "--target",
            "nucleo-f401re",
        ],
        "plan --json": ["-m", "arenalens", "plan", str(small), "--json"],
        "report (terminal)": ["-m", "arenalens", "report", str(small)],
        # The remedy ladder on the command line (issue 31: no slower than `optimize`): VWW
        # against a budget it does not fit, so `check` runs the optimizer to find its first
        # step, next to the `optimize` run that step prints (which also runs the written model
        # on the real TFLM when the wheel is installed).
        f"check {remedy_label} --budget 90KiB (remedy)": [
            "-m",
            "arenalens",
            "check",
            str(remedy),
            *build_options,
            "--budget",
            f"{REMEDY_BUDGET // 1024}KiB",
        ],
        f"optimize {remedy_label} -o": [
            "-m",
            "arenalens",
            "optimize",
            str(remedy),
            *build_options,
            "-o",
            str(folder / "optimized.tflite"),
        ],
    }
    started_load = load()
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for variant in variants:
        for arguments in commands.values():  # warm-up: writes the bytecode cache
            timed([variant.python, *arguments], installed_environment(folder, variant.source))
    for _ in range(repeat):
        for command, arguments in commands.items():
            for variant in variants:
                wall, cpu, _ = timed(
                    [variant.python, *arguments],
                    installed_environment(folder, variant.source),
                )
                times.setdefault((variant.label, command), []).append((wall, cpu))
    table = Table(
        title=f"2. whole process, {SMALL_MODEL[0]} ({REMEDY_MODEL[0]} in the last two rows), "
        f"median of {repeat} "
        f"(load {started_load} → {load()})"
    )
    table.add_column("command")
    for name in labels_of(variants):
        table.add_column(f"{name}: wall s", justify="right")
        table.add_column(f"{name}: CPU s", justify="right")
        table.add_column(f"{name}: over pass", justify="right")
        table.add_column(f"{name}: CPU over pass", justify="right")
    for command in commands:
        cells = [command]
        for name in labels_of(variants):
            walls = statistics.median(w for w, _ in times[(name, command)])
            cpus = statistics.median(c for _, c in times[(name, command)])
            base = statistics.median(w for w, _ in times[(name, "python -c pass")])
            base_cpu = statistics.median(c for _, c in times[(name, "python -c pass")])
            pass_row = command.startswith("python")
            # Wall time over `pass` is the figure; CPU over `pass` is what a busy
            # machine changes least.
            cells += [
                f"{walls:.3f}",
                f"{cpus:.3f}",
                "" if pass_row else f"{walls - base:.3f}",
                "" if pass_row else f"{cpus - base_cpu:.3f}",
            ]
        table.add_row(*cells)
    console.print(table)


def large_plans(variants: Sequence[Variant], folder: Path, repeat: int, console: Console) -> None:
    """Table 3: the 10,000- and 20,000-operator chains, whole processes, against real TFLM."""
    started_load = load()
    table = Table(
        title="3. plan --runtime tflm --json vs real TFLM load + AllocateTensors, whole "
        f"processes, median of {repeat} (load {started_load} → …)"
    )
    table.add_column("model")
    table.add_column("TFLM: wall s", justify="right")
    table.add_column("TFLM: CPU s", justify="right")
    for name in labels_of(variants):
        table.add_column(f"{name}: wall s", justify="right")
        table.add_column(f"{name}: CPU s", justify="right")
        table.add_column(f"{name} / TFLM", justify="right")
        table.add_column(f"{name}: CPU / TFLM CPU", justify="right")
    walls: dict[tuple[str, int], float] = {}
    cpus: dict[tuple[str, int], float] = {}
    for operators in (10_000, 20_000):
        path = folder / f"chain-{operators}.tflite"
        path.write_bytes(synthetic_model("chain", operators))
        samples: dict[str, list[tuple[float, float]]] = {}
        required = 0
        for variant in variants:  # warm-up
            output = timed(
                [
                    variant.python,
                    "-m",
                    "arenalens",
                    "plan",
                    str(path),
                    "--runtime",
                    "tflm",
                    "--json",
                ],
                installed_environment(folder, variant.source),
            )[2]
            required = int(json.loads(output)["required_bytes"])
        tflm_environment = dict(os.environ)
        for _ in range(repeat):
            wall, cpu, _ = timed(
                [sys.executable, "-c", _TFLM, str(path), str(required + (1 << 20))],
                tflm_environment,
            )
            samples.setdefault("TFLM", []).append((wall, cpu))
            for variant in variants:
                wall, cpu, _ = timed(
                    [
                        variant.python,
                        "-m",
                        "arenalens",
                        "plan",
                        str(path),
                        "--runtime",
                        "tflm",
                        "--json",
                    ],
                    installed_environment(folder, variant.source),
                )
                samples.setdefault(variant.label, []).append((wall, cpu))
        tflm_wall = statistics.median(w for w, _ in samples["TFLM"])
        tflm_cpu = statistics.median(c for _, c in samples["TFLM"])
        cells = [f"chain, {operators:,} operators", f"{tflm_wall:.3f}", f"{tflm_cpu:.3f}"]
        walls[("TFLM", operators)], cpus[("TFLM", operators)] = tflm_wall, tflm_cpu
        for name in labels_of(variants):
            wall = statistics.median(w for w, _ in samples[name])
            cpu = statistics.median(c for _, c in samples[name])
            walls[(name, operators)], cpus[(name, operators)] = wall, cpu
            cells += [
                f"{wall:.3f}",
                f"{cpu:.3f}",
                f"{wall / tflm_wall:.2f}x",
                f"{cpu / tflm_cpu:.2f}x",
            ]
        table.add_row(*cells)

    def doubling(name: str) -> list[str]:
        return [
            f"{walls[(name, 20_000)] / walls[(name, 10_000)]:.2f}x",
            f"{cpus[(name, 20_000)] / cpus[(name, 10_000)]:.2f}x",
        ]

    cells = ["per doubling (10k → 20k)", *doubling("TFLM")]
    for name in labels_of(variants):
        cells += [*doubling(name), "", ""]
    table.add_row(*cells)
    console.print(table)
    console.print(f"   load at the end: {load()}")


def batch(variants: Sequence[Variant], folder: Path, repeat: int, console: Console) -> None:
    """Table 4: a folder of a thousand generated models, every core vs one, taking turns."""
    models = folder / "batch"
    models.mkdir(exist_ok=True)
    for index in range(BATCH_MODELS):
        shape = ("chain", "branches", "unet")[index % 3]
        (models / f"{shape}-{index:04}.tflite").write_bytes(synthetic_model(shape, 4 + index % 60))
    started_load = load()
    table = Table(
        title=f"4. check FOLDER --budget 1MB --json over {BATCH_MODELS:,} generated models, "
        f"4-63 operators, median of {repeat} (load {started_load} → …)"
    )
    table.add_column("code")
    table.add_column("jobs")
    table.add_column("wall s", justify="right")
    table.add_column("models/s", justify="right")
    # CPU time is the work itself, what a busy machine changes least. A pool's workers are the
    # children of the forkserver, which outlives the command: counted only where this process
    # can adopt them (`adopt_orphans`, Linux), else the one-job row alone has a figure.
    every_process = adopt_orphans()
    table.add_column("CPU s (all processes)", justify="right")
    table.add_column("models per CPU s", justify="right")
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    count = 0
    for _ in range(repeat):
        for jobs in ("0", "1"):
            for variant in variants:
                command = [
                    variant.python,
                    "-m",
                    "arenalens",
                    "check",
                    str(models),
                    "--budget",
                    "1MB",
                    "--json",
                    "--jobs",
                    jobs,
                ]
                wall, cpu, output = timed(command, installed_environment(folder, variant.source))
                count = len(json.loads(output))
                samples.setdefault((variant.label, jobs), []).append((wall, cpu))
    for name in labels_of(variants):
        for jobs in ("0", "1"):
            wall = statistics.median(w for w, _ in samples[(name, jobs)])
            cpu = statistics.median(c for _, c in samples[(name, jobs)])
            label = f"{os.cpu_count()} (every core)" if jobs == "0" else "1"
            counted = jobs == "1" or every_process
            cpu_cells = (f"{cpu:.2f}", f"{count / cpu:,.0f}") if counted else ("", "")
            table.add_row(name, label, f"{wall:.2f}", f"{count / wall:,.0f}", *cpu_cells)
    console.print(table)
    console.print(f"   load at the end: {load()}")


def main() -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="children per figure")
    parser.add_argument("--calls", type=int, default=40, help="in-process calls per child")
    parser.add_argument("--baseline", type=Path, help="the src folder of the code to compare with")
    parser.add_argument("--only", nargs="+", choices=("in-process", "commands", "large", "batch"))
    parser.add_argument(
        "--python",
        action="append",
        metavar="EXE",
        help="an interpreter to measure under (repeatable; default: this one); it needs the "
        "project's dependencies, e.g. a virtual environment's python",
    )
    args = parser.parse_args()
    sources = (
        {"arenalens": SOURCE}
        if args.baseline is None
        else {"before": args.baseline.resolve(), "after": SOURCE}
    )
    pythons = args.python or [sys.executable]
    variants = variants_of(sources, pythons)
    console = Console(width=240)
    only = set(args.only or ("in-process", "commands", "large", "batch"))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if "in-process" in only:
            in_process(variants, folder, args.calls, args.repeat, console)
        if "commands" in only:
            whole_process(variants, folder, args.repeat, console)
        if "large" in only:
            large_plans(variants, folder, args.repeat, console)
        if "batch" in only:
            batch(variants, folder, args.repeat, console)
    for python in pythons:
        console.print(interpreter_line(python))
    console.print(
        f"{os.cpu_count()} CPUs, load average {load()} (1/5/15 min); the real TFLM rows under "
        f"{interpreter_label(sys.executable)}"
    )
    return 0


def interpreter_line(python: str) -> str:
    """An interpreter, its version and how fast it runs a fixed pure-Python workload."""
    output = subprocess.run(
        [python, "-c", _INTERPRETER_PROBE], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    version, implementation, probe_ms = json.loads(output)
    return (
        f"{interpreter_label(python)}: {implementation} {version}, the fixed pure-Python "
        f"workload in {probe_ms:.1f} ms CPU (best of 5)"
    )


if __name__ == "__main__":
    sys.exit(main())
