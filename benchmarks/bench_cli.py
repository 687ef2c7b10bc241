"""Whole-process CLI speed: `arenalens plan MODEL --runtime tflm --json` vs the real TFLM's setup.

For generated models of 1,000 and 10,000 operators (a chain, wide branches, a U-Net with long
skips: tests/fixtures/synthetic.py), measured in the same run:

* **arenalens**: the whole `arenalens plan --runtime tflm --json` process (interpreter start,
  imports, load, lifetimes, kernel rules, the greedy plan, the setup replay, JSON), wall clock;
* **TFLM**: the real interpreter's `Interpreter.from_bytes(model, arena_size)` (parse, Init,
  Prepare, plan, commit: what firmware does at start-up), timed inside a child process that has
  already imported `tflite_micro`.

Each figure is the fastest of `--repeat` runs, the two sides taking turns (one arenalens run,
then one TFLM setup, and again), so a busy machine slows both alike. The ratio column is
arenalens / TFLM: at or under 1.0 means predicting TFLM's memory takes no longer than TFLM
takes to set itself up.

Run:  python benchmarks/bench_cli.py [--operators 1000 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchkit import synthetic_model

SHAPES = ("chain", "branches", "unet")
_TFLM_CHILD = """
import json, sys, time
from tflite_micro import runtime
data = open(sys.argv[1], "rb").read()
arena = int(sys.argv[2])
best = float("inf")
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    runtime.Interpreter.from_bytes(data, arena_size=arena)
    best = min(best, time.perf_counter() - started)
print(json.dumps(best))
"""


def arenalens_seconds(path: Path, repeat: int) -> tuple[float, int]:
    """Fastest whole-process `arenalens plan --runtime tflm --json`, and the arena it declares."""
    best = float("inf")
    required = 0
    command = [sys.executable, "-m", "arenalens", "plan", str(path), "--runtime", "tflm", "--json"]
    for _ in range(repeat):
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True, check=True)
        best = min(best, time.perf_counter() - started)
        required = int(json.loads(completed.stdout)["required_bytes"])
    return best, required


def tflm_seconds(path: Path, arena: int, repeat: int) -> float | str:
    """Fastest real TFLM setup of the model with a roomy arena, in a child process."""
    completed = subprocess.run(
        [sys.executable, "-c", _TFLM_CHILD, str(path), str(arena), str(repeat)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        return completed.stderr.strip().splitlines()[-1] if completed.stderr else "failed"
    seconds: float = json.loads(completed.stdout)
    return seconds


def _taking_turns(path: Path, repeat: int) -> tuple[float, float | str]:
    """(fastest arenalens run, fastest TFLM setup or why it failed), alternating the two."""
    mine: float = float("inf")
    theirs: float | str = float("inf")
    for _ in range(max(1, repeat)):
        seconds, required = arenalens_seconds(path, 1)
        mine = min(mine, seconds)
        measured = tflm_seconds(path, required + (1 << 20), 1)
        if isinstance(measured, str):
            return mine, measured
        theirs = min(float(theirs), measured)
    return mine, theirs


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operators", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = Table(title="arenalens plan --json (whole process) vs real TFLM setup")
    for column in ("model", "operators", "arenalens s", "TFLM s", "arenalens / TFLM"):
        table.add_column(column, justify="left" if column == "model" else "right")
    with tempfile.TemporaryDirectory() as folder:
        for operators in args.operators:
            for shape in SHAPES:
                path = Path(folder) / f"{shape}-{operators}.tflite"
                path.write_bytes(synthetic_model(shape, operators))
                mine, theirs = _taking_turns(path, args.repeat)
                ratio = f"{mine / theirs:.2f}x" if isinstance(theirs, float) else "—"
                shown = f"{theirs:.3f}" if isinstance(theirs, float) else theirs
                table.add_row(shape, f"{operators:,}", f"{mine:.3f}", shown, ratio)
    Console(width=120).print(table)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
