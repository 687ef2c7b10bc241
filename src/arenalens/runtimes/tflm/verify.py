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
from arenalens.builds.build import HOST
from arenalens.errors import ModelError
from arenalens.ir import Model
from arenalens.planning.problem import Plan, align_up
from arenalens.runtimes import VerifyResult, VerifyRow
from arenalens.runtimes.tflm.budget import SetupPrediction, predict_setup
from arenalens.runtimes.tflm.probe import Probe, minimal_arena, probe, require_tflite_micro

# The smallest "roomy" size tried, like the reference's first rung (1 MiB).
ROOMY_MINIMUM = 1 << 20


def verify(
    path: str | os.PathLike[str],
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    *,
    min_arena: bool = False,
) -> VerifyResult:
    """Run the real interpreter on the file and compare it with the prediction for the head
    arena and TFLM's own plan of it, on the wheel."""
    require_tflite_micro()
    path = os.fspath(path)
    prediction = predict_setup(model, arena, plan, HOST)
    roomy = align_up(
        max(ROOMY_MINIMUM, 2 * prediction.minimal_arena, 4 * os.path.getsize(path)), 16
    )
    real = probe(path, roomy)
    if not real.fits:
        raise ModelError(path, f"TFLM could not set up this model: {_last_line(real.log)}")
    rows = list(_allocation_rows(prediction, real))
    notes = [f"real interpreter: tflite_micro, arena_size={roomy}", *prediction.layout.assumptions]
    if min_arena:
        rows.append(_minimal_arena_row(path, prediction, roomy))
    return VerifyResult(runtime="tflm", rows=tuple(rows), notes=tuple(notes))


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
