"""Whole-process CLI speed: `arenalens plan MODEL --runtime tflm --json` vs the real TFLM's setup.

For generated models of 1,000 and 10,000 operators (a chain, wide branches, a U-Net with long
skips: tests/fixtures/synthetic.py), measured in the same run:

* **arenalens**: the whole `arenalens plan --runtime tflm --json` process (interpreter start,
  imports, load, lifetimes, kernel rules, the greedy plan, the setup replay, JSON), wall clock
  and CPU time (user + system), as an installed package runs it: with its modules' bytecode
  cached (pip compiles a wheel's modules when it installs them). The cache lives in a temporary
  folder (`PYTHONPYCACHEPREFIX`), written by one untimed warm-up run, whatever
  `PYTHONDONTWRITEBYTECODE` says, and the source tree is left alone;
* **arenalens, compiling**: the same command in this shell's environment; with
  `PYTHONDONTWRITEBYTECODE=1` (as on the development machines) and no `__pycache__` in the
  source tree, every run compiles arenalens's modules again (about 0.15 s). This was the only
  arenalens column before;
* **TFLM**: the real interpreter's `Interpreter.from_bytes(model, arena_size)` (parse, Init,
  Prepare, plan, commit: what firmware does at start-up), wall clock and CPU time, timed inside
  a child process that has already imported `tflite_micro`.

Each figure is the fastest of `--repeat` runs, the sides taking turns (one run of each, and
again), so a busy machine slows them alike. The ratio columns are arenalens / TFLM: at or under
1.0 means predicting TFLM's memory takes no longer than TFLM takes to set itself up.

Run:  python benchmarks/bench_cli.py [--operators 1000 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchkit import synthetic_model

SHAPES = ("chain", "branches", "unet")
_TFLM_CHILD = """
import json, sys, time
from tflite_micro import runtime
data = open(sys.argv[1], "rb").read()
started, started_cpu = time.perf_counter(), time.process_time()
runtime.Interpreter.from_bytes(data, arena_size=int(sys.argv[2]))
print(json.dumps([time.perf_counter() - started, time.process_time() - started_cpu]))
"""


@dataclass
class Fastest:
    """The fastest wall-clock and CPU seconds seen (each minimum on its own)."""

    wall: float = float("inf")
    cpu: float = float("inf")

    def add(self, wall: float, cpu: float) -> None:
        self.wall = min(self.wall, wall)
        self.cpu = min(self.cpu, cpu)


def installed_environment(folder: Path) -> dict[str, str]:
    """This environment with bytecode written to, and read from, a cache under `folder`."""
    environment = dict(os.environ, PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def arenalens_run(path: Path, environment: dict[str, str] | None) -> tuple[float, float, int]:
    """One whole-process `arenalens plan --runtime tflm --json`: (wall s, CPU s, arena it
    declares)."""
    command = [sys.executable, "-m", "arenalens", "plan", str(path), "--runtime", "tflm", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(json.loads(completed.stdout)["required_bytes"])


def tflm_run(path: Path, arena: int) -> tuple[float, float] | str:
    """One real TFLM setup of the model with a roomy arena, in a child process: (wall s, CPU s),
    or why it failed."""
    completed = subprocess.run(
        [sys.executable, "-c", _TFLM_CHILD, str(path), str(arena)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        return completed.stderr.strip().splitlines()[-1] if completed.stderr else "failed"
    wall, cpu = json.loads(completed.stdout)
    return float(wall), float(cpu)


def _taking_turns(
    path: Path, repeat: int, installed: dict[str, str]
) -> tuple[Fastest, Fastest, Fastest | str]:
    """(arenalens installed, arenalens compiling, TFLM or why it failed), taking turns."""
    arenalens_run(path, installed)  # warm-up: writes the bytecode cache, not timed
    mine, compiling, theirs = Fastest(), Fastest(), Fastest()
    for _ in range(max(1, repeat)):
        wall, cpu, required = arenalens_run(path, installed)
        mine.add(wall, cpu)
        wall, cpu, _ = arenalens_run(path, None)
        compiling.add(wall, cpu)
        measured = tflm_run(path, required + (1 << 20))
        if isinstance(measured, str):
            return mine, compiling, measured
        theirs.add(*measured)
    return mine, compiling, theirs


def _ratio(mine: float, theirs: Fastest | str, cpu: bool = False) -> str:
    if isinstance(theirs, str):
        return "—"
    return f"{mine / (theirs.cpu if cpu else theirs.wall):.2f}x"


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operators", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = Table(title="arenalens plan --json (whole process) vs real TFLM setup; seconds")
    columns = (
        "model",
        "operators",
        "arenalens",
        "TFLM",
        "arenalens / TFLM",
        "CPU: arenalens",
        "CPU: TFLM",
        "CPU ratio",
        "compiling: arenalens",
        "compiling / TFLM",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "model" else "right")
    with tempfile.TemporaryDirectory() as folder:
        installed = installed_environment(Path(folder))
        for operators in args.operators:
            for shape in SHAPES:
                path = Path(folder) / f"{shape}-{operators}.tflite"
                path.write_bytes(synthetic_model(shape, operators))
                mine, compiling, theirs = _taking_turns(path, args.repeat, installed)
                table.add_row(
                    shape,
                    f"{operators:,}",
                    f"{mine.wall:.3f}",
                    theirs if isinstance(theirs, str) else f"{theirs.wall:.3f}",
                    _ratio(mine.wall, theirs),
                    f"{mine.cpu:.3f}",
                    "—" if isinstance(theirs, str) else f"{theirs.cpu:.3f}",
                    _ratio(mine.cpu, theirs, cpu=True),
                    f"{compiling.wall:.3f}",
                    _ratio(compiling.wall, theirs),
                )
    Console(width=160).print(table)
    dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; arenalens columns with "
        f"bytecode cached (warm-up run); 'compiling' in this environment "
        f"(PYTHONDONTWRITEBYTECODE={dont_write or 'unset'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
