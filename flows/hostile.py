"""Hostile input along the paths: a flow model truncated or mutated (`fuzz.mutate`), then run
through one command as a user types it, in a folder of its own, in a forked child under a
wall-clock limit. What every command must do with a file it cannot read (the brief's bad input):

* one line on stderr naming the file, exit 2, no traceback (`one-line-error`, `no-crash`);
* no output file left behind, not even a partial one (`no-partial-output`);
* the user's input unchanged (`input-unchanged`);
* an end within the limit (`no-hang`).

A mutant the command reads (exit 0 or 1) is fine: it is judged on the last three only.

    python -m flows --hostile 300 --seed 1000601
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arenalens.runtimes.child import run_in_child
from flows.claims import CONFIRMED, WRONG
from flows.commands import inside, run_cli
from flows.models import random_subject

MODEL = "model.tflite"
HOSTILE_TIME_LIMIT_SECONDS = 300
# One command per mutant, as users type it; the files it may write (judged when it refuses).
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("inspect", MODEL),
    ("plan", MODEL),
    ("plan", MODEL, "--runtime", "litert", "--json"),
    ("check", MODEL, "--budget", "256KB"),
    ("check", MODEL, "--target", "nucleo-f401re", "--json"),
    ("check", MODEL, "--runtime", "litert", "--budget", "64MB"),
    ("check", MODEL, "--cpu", "cortex-m55", "--npu", "ethos-u55-128", "--budget", "1MB"),
    ("check", MODEL, "--tflm", "2025-06", "--budget", "1MB", "--max-input"),
    ("diagnose", MODEL, "--target", "stm32f746"),
    ("export", MODEL, "--format", "c-header", "-o", "arena.h"),
    ("export", MODEL, "--format", "json", "-o", "plan.json"),
    ("export", MODEL, "--format", "model-explorer", "-o", "overlay.json"),
    ("compare", MODEL, "--effort", "1"),
    ("optimize", MODEL, "-o", "optimized.tflite", "--effort", "1"),
    ("optimize", MODEL, "-o", "optimized.tflite", "--overlap", "--inplace", "--effort", "1"),
    ("report", MODEL, "-o", "report.html"),
    ("report", MODEL, "--images", "images"),
    ("vela", MODEL, "--cpu", "cortex-m55", "--npu", "ethos-u55-128", "-o", "compiled.tflite"),
    ("verify", MODEL),
)
KINDS = ("no-crash", "no-hang", "one-line-error", "no-partial-output", "input-unchanged")


@dataclass(frozen=True)
class Hostile:
    """Mutant n of the campaign `seed`: a flow model, what was done to it, one command."""

    seed: int
    index: int
    recipe: str
    data: bytes
    argv: tuple[str, ...]

    @property
    def replay_command(self) -> str:
        return f"python -m flows --hostile 1 --start {self.index} --seed {self.seed}"


def hostile(seed: int, index: int) -> Hostile:
    """Mutant `index` of `seed`: drawn from (seed, index) alone."""
    from fuzz.mutate import mutate, truncate

    rng = random.Random(f"flows-hostile:{seed}:{index}")
    subject = random_subject(rng, ())
    data = subject.data
    if not data:  # an `example:NAME` subject: its bytes
        from arenalens.examples import example_bytes

        data = example_bytes(subject.argument.removeprefix("example:"))
    mutated = truncate(data, rng) if rng.random() < 0.3 else mutate(data, rng)
    argv = rng.choice(COMMANDS)
    return Hostile(seed, index, f"{subject.recipe}: {mutated.recipe}", mutated.data, argv)


@dataclass
class HostileSummary:
    """Outcomes per (kind, outcome), exit codes per command, and every failure."""

    seed: int
    inputs: int = 0
    claims: Counter[tuple[str, str]] = field(default_factory=Counter)
    exits: Counter[tuple[str, int]] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)

    def add(self, case: Hostile, code: int | None, rulings: list[tuple[str, str, str]]) -> None:
        self.inputs += 1
        self.exits[(case.argv[0], -1 if code is None else code)] += 1
        for kind, outcome, detail in rulings:
            self.claims[(kind, outcome)] += 1
            if outcome == WRONG:
                self.failures.append(
                    {
                        "input": case.index,
                        "recipe": case.recipe,
                        "command": "arenalens " + " ".join(case.argv),
                        "kind": kind,
                        "detail": detail,
                        "replay": case.replay_command,
                    }
                )


def judge_outcome(
    code: int, err: str, *, before: set[str], after: set[str], unchanged: bool
) -> list[tuple[str, str, str]]:
    """The rulings on one command's end (`code`, stderr, the folder's files before and after)."""
    lines = err.strip().splitlines()
    crashed = code == 3 or "Traceback" in err or "internal error" in err
    rulings = [("no-crash", WRONG if crashed else CONFIRMED, lines[-1][:200] if crashed else "")]
    rulings.append(("input-unchanged", CONFIRMED if unchanged else WRONG, MODEL))
    if code == 2:
        one_line = len(lines) == 1 and lines[0].startswith("arenalens") and MODEL in lines[0]
        rulings.append(("one-line-error", CONFIRMED if one_line else WRONG, err.strip()[:300]))
        left = sorted(after - before)
        detail = ", ".join(left)
        rulings.append(("no-partial-output", WRONG if left else CONFIRMED, detail))
    elif code not in (0, 1) and not crashed:
        rulings.append(("one-line-error", WRONG, f"exit {code}: {err.strip()[:200]}"))
    return rulings


def walk_hostile(case: Hostile, folder: Path) -> tuple[int, list[tuple[str, str, str]]]:
    """Run the command on the mutant in `folder` (in this process) → exit code and rulings."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MODEL
    path.write_bytes(case.data)
    digest = hashlib.sha256(case.data).hexdigest()
    before = _files(folder)
    with inside(folder):
        ran = run_cli(case.argv)
    unchanged = path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == digest
    after = _files(folder)
    return ran.code, judge_outcome(
        ran.code, ran.err, before=before, after=after, unchanged=unchanged
    )


def _files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def run_hostile(
    seed: int, count: int, start: int = 0, progress: Callable[..., None] | None = None
) -> HostileSummary:
    """Mutants start..start+count-1 of `seed`, each in a forked child → the summary."""
    summary = HostileSummary(seed)
    with tempfile.TemporaryDirectory(prefix="arenalens-hostile-") as base:
        for index in range(start, start + count):
            case = hostile(seed, index)
            folder = Path(base) / f"input-{index}"
            payload, _ = run_in_child(
                _child, (case, folder), timeout_seconds=HOSTILE_TIME_LIMIT_SECONDS
            )
            code: int | None = None
            rulings: list[tuple[str, str, str]] = [("no-hang", WRONG, "died or hung")]
            if payload is not None:
                code = payload["code"]
                rulings = [("no-hang", CONFIRMED, ""), *map(tuple, payload["rulings"])]
            summary.add(case, code, rulings)
            if progress is not None:
                progress(case, code, rulings)
    return summary


def _child(sender: Any, case: Hostile, folder: Path) -> None:
    os.environ["ARENALENS_DEBUG"] = "1"  # an internal error's traceback, to report
    code, rulings = walk_hostile(case, folder)
    sender.send({"code": code, "rulings": rulings})
    sender.close()


def summary_document(summary: HostileSummary) -> dict[str, Any]:
    """The summary as JSON: outcomes per kind, exit codes per command, every failure."""
    return {
        "schema": "arenalens.flows.hostile",
        "seed": summary.seed,
        "inputs": summary.inputs,
        "claims": {
            kind: {
                outcome: count
                for (k, outcome), count in sorted(summary.claims.items())
                if k == kind
            }
            for kind in KINDS
        },
        "exits": {
            f"{command} {code}": count for (command, code), count in sorted(summary.exits.items())
        },
        "failures": summary.failures,
    }
