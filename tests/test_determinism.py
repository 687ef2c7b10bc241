"""Same input, same bytes out: no search stops on a wall clock (`arenalens.effort`).

Every search (hill climb, CP-SAT, beam and exact reordering, planner-waste) counts its own work.
Here the clock jumps ten seconds at every reading, so a search that still stopped on wall time
would stop at once, with another plan; the outputs must be those of a normal run, byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arenalens.cli import main
from arenalens.examples import example_bytes
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.reorder.registry import run_reorderer
from arenalens.reorder.schedule import schedule_problem
from arenalens.tflite.reader import load_model
from tests.fixtures.synthetic import synthetic_model

SECONDS_PER_READING = 10.0


@contextlib.contextmanager
def slow_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """time.perf_counter and time.monotonic jump ten seconds at every reading."""
    readings = itertools.count()
    start = time.perf_counter()

    def reading() -> float:
        return start + SECONDS_PER_READING * next(readings)

    with monkeypatch.context() as patched:
        patched.setattr(time, "perf_counter", reading)
        patched.setattr(time, "monotonic", reading)
        yield


def run(argv: list[str]) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return code, stdout.getvalue() + stderr.getvalue()


def crowded_problem() -> Problem:
    """Thirty buffers of random lifetimes and sizes where every search matters: the hill climb
    improves on its start for hundreds of steps (3,056 → 2,960 B) and CP-SAT then proves the
    optimum (2,912 B) from it."""
    rng = random.Random(33)
    buffers = []
    for index in range(30):
        start = rng.randrange(0, 12)
        buffers.append(Buffer(index, start, start + rng.randrange(0, 5), 16 * rng.randrange(1, 40)))
    return Problem(tuple(buffers), alignment=16)


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("hillclimb", {"seed": 0}),
        ("best", {"effort": 0.5}),
        ("optimal", {"effort": 0.5}),
    ],
)
def test_search_planners_find_the_same_plan_on_a_slow_clock(
    name: str, settings: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    if name in ("best", "optimal"):
        pytest.importorskip("ortools")
    problem = crowded_problem()
    normal = run_planner(name, problem, **settings)
    with slow_clock(monkeypatch):
        slow = run_planner(name, problem, **settings)
    assert dict(slow.offsets) == dict(normal.offsets)
    assert (slow.bound, slow.proven_optimal, slow.notes) == (
        normal.bound,
        normal.proven_optimal,
        normal.notes,
    )


@pytest.mark.parametrize("name", ["beam", "exact", "auto"])
def test_reorderers_find_the_same_order_on_a_slow_clock(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = load_model(synthetic_model("branches", 60))
    problem = schedule_problem(model, 0, tensor_bytes=lambda t: t.nbytes)
    normal = run_reorderer(name, problem, effort=0.2)
    with slow_clock(monkeypatch):
        slow = run_reorderer(name, problem, effort=0.2)
    assert slow.order == normal.order


def test_optimize_writes_the_same_bytes_on_a_slow_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """optimize --reorder: the reorder search and the planners' searches (hill climb in the
    portfolio) decide the written file."""
    model = tmp_path / "model.tflite"
    model.write_bytes(example_bytes("branchy_inception"))
    argv = ["optimize", str(model), "--reorder", "--no-verify", "--json", "--effort", "2"]
    normal = run([*argv, "-o", str(tmp_path / "normal.tflite")])
    with slow_clock(monkeypatch):
        slow = run([*argv, "-o", str(tmp_path / "slow.tflite")])
    assert slow[0] == normal[0]
    assert slow[1].replace("slow.tflite", "normal.tflite") == normal[1]
    assert (tmp_path / "slow.tflite").read_bytes() == (tmp_path / "normal.tflite").read_bytes()


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "example:branchy_inception", "--planner", "best", "--json"],
        ["diagnose", "example:branchy_inception", "--json", "--effort", "1"],
    ],
    ids=["plan-best", "diagnose"],
)
def test_plan_and_diagnose_print_the_same_bytes_on_a_slow_clock(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ortools")
    normal = run(argv)
    with slow_clock(monkeypatch):
        slow = run(argv)
    assert slow == normal
