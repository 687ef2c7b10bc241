"""Exact reordering: the operator order with the smallest peak, by a search over executed sets.

The peak of an order is the largest live-bytes value over its steps, and the bytes live after a
prefix depend only on the *set* S of operators it ran (`state.py`). So the problem is a bottleneck
shortest path over the lattice of valid sets S (downsets of the dependency graph), solved with a
Dijkstra-style best-first search keyed by (peak so far, operators left): the first time the full
set is popped, its peak is optimal. Each S is expanded once (memoization), and states whose peak
already exceeds a known order's peak (the file order, or a heuristic's) are never queued.

Source: Liberis & Lane, "Neural networks on microcontrollers: saving memory at inference via
operator reordering" (arXiv 1910.05110, 2019), whose dynamic program over sets of computed
operators this is, and the working-set model of tflite-tools (github.com/eliberis/tflite-tools).
Tractable when the graph is narrow (chains, a few branches); `max_states` and its `effort` (counted
work: the operator steps tried, each by what it costs, `arenalens.effort`) bound it, the same on
every machine, and it reports "not tractable" instead of guessing.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from arenalens.effort import REORDER_WORK, deadline, past, steps
from arenalens.reorder.registry import ReorderOutput, register_reorderer
from arenalens.reorder.schedule import ScheduleProblem
from arenalens.reorder.state import advance, advance_work, compile_problem, ready, ready_work


@register_reorderer(
    "exact",
    description="optimal order by best-first search over sets of executed operators (memoized)",
    source="Liberis & Lane 2019 (arXiv 1910.05110); tflite-tools",
)
def exact(
    problem: ScheduleProblem,
    *,
    effort: float = 5.0,
    time_limit_s: float | None = None,
    max_states: int = 200_000,
    upper_bound: int | None = None,
    fallback: Sequence[int] | None = None,
) -> ReorderOutput:
    """ScheduleProblem → the order of smallest peak, proven; file order when not tractable."""
    result = search(
        problem,
        effort=effort,
        time_limit_s=time_limit_s,
        max_states=max_states,
        upper_bound=upper_bound,
    )
    if result is None:
        order = list(fallback) if fallback is not None else list(range(problem.op_count))
        return ReorderOutput(order=order, notes=("exact search not tractable within its limits",))
    order, states = result
    return ReorderOutput(order=order, proven_optimal=True, stats={"states": states})


def search(
    problem: ScheduleProblem,
    *,
    effort: float = 5.0,
    time_limit_s: float | None = None,
    max_states: int = 200_000,
    upper_bound: int | None = None,
) -> tuple[list[int], int] | None:
    """Best-first search → (optimal order, states expanded), or None past the limits.

    With `upper_bound`, orders whose peak exceeds it are pruned; if every order does, the best
    order is still found because the file order's peak is used when it is smaller.
    """
    compiled = compile_problem(problem)
    file_peak = problem.peak(range(problem.op_count))
    bound = file_peak if upper_bound is None else min(upper_bound, file_peak)
    budget = steps(effort, REORDER_WORK)
    step_work, scan_work = advance_work(compiled), ready_work(compiled)
    end = deadline(time_limit_s)
    work = 0
    start_live = compiled.initial_live
    start_bytes = sum(compiled.tensor_bytes[t] for t in start_live)
    best: dict[int, int] = {0: compiled.initial_bytes}
    parent: dict[int, tuple[int, int]] = {}
    lives: dict[int, tuple[frozenset[int], int]] = {0: (start_live, start_bytes)}
    queue: list[tuple[int, int, int]] = [(compiled.initial_bytes, compiled.op_count, 0)]
    expanded = 0
    while queue:
        peak, left, done = heapq.heappop(queue)
        if peak > best[done]:
            continue
        if done == compiled.full:
            return _path(parent, done), expanded
        expanded += 1
        # Steps tried, not states, measure the work: one expansion of a wide graph (a thousand
        # operators ready) tries a thousand steps.
        if expanded > max_states or work > budget or past(end):
            return None
        live, live_bytes = lives.pop(done)
        work += scan_work
        for op in ready(compiled, done):
            work += step_work
            after, next_live, next_bytes, running = advance(compiled, done, live, live_bytes, op)
            step_peak = max(peak, running)
            if step_peak > bound or step_peak >= best.get(after, step_peak + 1):
                continue
            best[after] = step_peak
            parent[after] = (done, op)
            lives[after] = (next_live, next_bytes)
            heapq.heappush(queue, (step_peak, left - 1, after))
    return None


def _path(parent: dict[int, tuple[int, int]], done: int) -> list[int]:
    order: list[int] = []
    while done:
        done, op = parent[done]
        order.append(op)
    order.reverse()
    return order
