"""Predicted vs real TFLM: (model file, head arena, plan) → VerifyResult from the real interpreter.

The real numbers come from `tflite_micro` (`tflm_probe`, one child process per construction):
head, tail, total and every `print_allocations()` category at a roomy arena size, and on request
the smallest arena size that works, found by bisection like the reference measurements
(docs/runtime-rules.md §M1, §T14). Predictions use the runtime's own plan (the greedy planner),
whatever planner the analysis chose, because that is what the interpreter runs.
"""

from __future__ import annotations

import os

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.builds.build import Build, build_title
from arenalens.builds.tflm import changes_between, coverage, release_with
from arenalens.errors import ModelError, RuntimeRefusedError
from arenalens.ir import Model
from arenalens.planning.problem import Plan, align_up
from arenalens.planning.registry import run_planner
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import SetupPrediction, predict_setup
from arenalens.runtimes.tflm.probe import (
    Probe,
    installed_build,
    installed_version,
    minimal_arena,
    probe,
)
from arenalens.runtimes.verification import VerifyResult, VerifyRow
from arenalens.units import format_bytes_delta

# The smallest "roomy" size tried, like the reference's first rung (1 MiB).
ROOMY_MINIMUM = 1 << 20


def verify(
    path: str | os.PathLike[str],
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    build: Build,
    *,
    min_arena: bool = False,
) -> VerifyResult:
    """Run the real interpreter on the file and compare it with the prediction for the head
    arena and TFLM's own plan of it, on a host build (the installed wheel's release unless
    another is asked for: then the notes say the two releases differ)."""
    version = installed_version()
    path = os.fspath(path)
    prediction = predict_setup(model, arena, plan, build)
    roomy = align_up(
        max(ROOMY_MINIMUM, 2 * prediction.minimal_arena, 4 * os.path.getsize(path)), 16
    )
    real = probe(path, roomy)
    if not real.fits:
        raise RuntimeRefusedError(path, f"TFLM could not set up this model: {_last_line(real.log)}")
    rows = list(_allocation_rows(prediction, real))
    notes = [
        f"real interpreter: tflite-micro {version}, arena_size={roomy}",
        *_release_notes(version, model, build),
        *prediction.layout.assumptions,
    ]
    if min_arena:
        rows.append(_minimal_arena_row(path, prediction, roomy))
    return VerifyResult(
        runtime="tflm",
        rows=tuple(rows),
        notes=tuple(notes),
        interpreter=f"tflite-micro {version}",
        predicted_for=build_title(build),
    )


def _release_notes(version: str, model: Model, build: Build) -> list[str]:
    """Why a difference may be the release's: the prediction is for another TFLM release than
    the interpreter's (then which of TFLM's changes between the two move this model's
    figures), or the interpreter's is one arenalens does not model."""
    installed = installed_build()
    if installed is None:
        return [
            f"tflite-micro {version} is a TFLM release arenalens does not model ({coverage()}): "
            f"predicted for {build.tflm.title}, so differences may be the releases'"
        ]
    if installed.tflm == build.tflm:
        return []
    older, newer = sorted((build, installed), key=lambda each: each.tflm.time)
    moves = _changes_that_move(model, older, newer)
    between = f"from TFLM {older.tflm.name} to {newer.tflm.name}"
    return [
        f"predicted for {build.tflm.title}, not the interpreter's {installed.tflm.title}; "
        "`verify` without --tflm predicts for the interpreter's release",
        f"what TFLM changed {between} that moves this model's figures: {'; '.join(moves)}"
        if moves
        else f"nothing TFLM changed {between} moves this model's figures",
    ]


def _changes_that_move(model: Model, older: Build, newer: Build) -> list[str]:
    """Each change of TFLM's history between two releases after which this model's predicted
    head, tail or minimal arena differ: "<what changed> (<commit>, <date>): tail +16 B"."""
    found = []
    before = _figures(model, older)
    for change in changes_between(older.tflm, newer.tflm):
        after = _figures(model, older.at_release(release_with(change)))
        if after != before:
            where = (
                f"{change.commit}, {change.landed:%Y-%m-%d}"
                if change.commit
                else (f"first in the wheel of {change.landed:%Y-%m-%d}")
            )
            found.append(f"{change.summary} ({where}): {_moved(before, after)}")
        before = after
    return found


def _figures(model: Model, build: Build) -> tuple[int, int, int] | None:
    """(head, tail, minimal arena) predicted on a build; None when TFLM cannot set it up."""
    try:
        arena = arenas(model, build=build)[0]
        plan = run_planner(arena.runtime_planner, arena.problem, **arena.runtime_options)
        prediction = predict_setup(model, arena, plan, build)
    except ModelError:
        return None
    return prediction.head, prediction.tail, prediction.minimal_arena


def _moved(before: tuple[int, int, int] | None, after: tuple[int, int, int] | None) -> str:
    """How the figures moved: "tail +16 B, minimal arena +16 B", or whether it sets up."""
    if before is None or after is None:
        return "the model sets up" if before is None else "the model no longer sets up"
    names = ("head", "tail", "minimal arena")
    return ", ".join(
        f"{name} {format_bytes_delta(new - old)}"
        for name, old, new in zip(names, before, after, strict=True)
        if new != old
    )


def _allocation_rows(prediction: SetupPrediction, real: Probe) -> list[VerifyRow]:
    predicted = prediction.aligned
    rows = [
        _row("head bytes", predicted.head, real.head),
        _row("tail bytes", predicted.tail, real.tail),
        _row("total bytes", predicted.total, real.total),
    ]
    names = list(predicted.categories)
    names += [name for name in real.categories if name not in predicted.categories]
    for name in names:
        mine = predicted.categories.get(name)
        theirs = real.categories.get(name)
        rows.append(
            _row(
                f"'{name}' used",
                mine[0] if mine else None,
                theirs.used if theirs else None,
                note="" if mine is None or theirs is None else f"requested {theirs.requested}",
            )
        )
    return rows


def _minimal_arena_row(path: str, prediction: SetupPrediction, roomy: int) -> VerifyRow:
    """Bisect the real minimum, starting next to the prediction (two probes when it is right)."""
    guess = prediction.minimal_arena

    def fits(size: int) -> bool:
        return probe(path, size).fits

    low, high = 0, roomy
    if fits(guess):
        high = guess
        if not fits(guess - 1):
            low = guess - 1
    else:
        low = guess
    real = minimal_arena(fits, low=low, high=high)
    return _row("minimal arena_size", guess, real, note="bisection, crashes count as too small")


def _row(label: str, predicted: int | None, real: int | None, note: str = "") -> VerifyRow:
    return VerifyRow(label, predicted, real, predicted == real, note)


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-2] if len(lines) >= 2 else (lines[-1] if lines else "no message")
