"""runtimes/child.py: a real-interpreter job runs in a child from any caller, a daemonic
multiprocessing worker included (multiprocessing refuses those children of its own)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from typing import Any

import pytest

from arenalens.runtimes.child import run_in_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _answer(sender: Connection, value: int) -> None:
    sender.send({"value": value, "pid": os.getpid()})
    sender.close()


def _crash(sender: Connection) -> None:
    os.kill(os.getpid(), signal.SIGABRT)


def _silent(sender: Connection) -> None:
    sender.close()


def _outcomes(results: Any) -> None:
    results.put(
        (
            run_in_child(_answer, (7,), timeout_seconds=30),
            run_in_child(_crash, (), timeout_seconds=30),
            run_in_child(_silent, (), timeout_seconds=30),
        )
    )


def _check(outcomes: Any, caller: int) -> None:
    (payload, code), (crashed, crash_code), (silent, silent_code) = outcomes
    assert payload is not None and payload["value"] == 7 and payload["pid"] != caller
    assert code == 0
    assert crashed is None and crash_code == -signal.SIGABRT
    assert silent is None and silent_code == 0


def test_a_job_runs_in_a_child_and_a_crash_costs_only_the_child() -> None:
    results: Any = multiprocessing.get_context("fork").SimpleQueue()
    _outcomes(results)
    _check(results.get(), os.getpid())


def test_a_daemonic_worker_can_run_a_job_in_a_child() -> None:
    context = multiprocessing.get_context("fork")
    results: Any = context.SimpleQueue()
    worker = context.Process(target=_outcomes, args=(results,), daemon=True)
    worker.start()
    worker.join(60)
    assert worker.exitcode == 0
    _check(results.get(), worker.pid or 0)
