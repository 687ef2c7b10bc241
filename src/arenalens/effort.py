"""Search effort: every search stops on a count of its own work, never on a clock.

"Same input, same bytes out": a search that stops when a clock runs out finds other plans on a
slower or busier machine, so what `plan`, `optimize` and `check` print or write would depend on
the machine. Each search here (hill climb, CP-SAT, beam and exact reordering) is instead given an
*effort*, in effort units of about a second of search each, and turns it into a budget of its own
steps with the constants below: the same effort gives the same steps, hence the same result, on
every machine and under any load (for CP-SAT: with the same OR-Tools release).

A wall-clock cap (`time_limit_s`; the CLI's `--time-limit`) exists only as a safety net a user
asks for: it is the one setting that can make output depend on the machine, and nothing sets it
by default. `deadline` and `past` read the clock only when such a cap was given.

The constants were measured on the team's 2-core machine: one unit costs 0.3 s of CPU (hill climb,
CP-SAT) to 1 s (the reorder searches on a graph with 1,500 operators ready), 1.7-6 s of wall clock
under its usual load average of 11 (`benchmarks/bench_effort.py` measures it on any machine).
"""

from __future__ import annotations

import time

# CP-SAT's deterministic time (its own count of work, `max_deterministic_time`) per effort unit.
# Its unit is meant to be close to a second (sat_parameters.proto), but on our 2-D no-overlap
# models one deterministic second took 70-300 s of wall clock (single worker, random problems of
# 40-300 buffers): a hundredth is about a second.
CPSAT_DETERMINISTIC_SECONDS = 0.01
# Buffers placed by the hill climb per effort unit (each step re-places every buffer).
HILLCLIMB_PLACEMENTS = 30_000
# Work the reorder searches do per effort unit, in units of about a microsecond each
# (`reorder.state.ready_work`, `advance_work`: what each step of theirs costs).
REORDER_WORK = 1_000_000

# The effort `arenalens optimize` (and `optimize_model`) searches with unless told otherwise, and
# the one every promise of what it writes is computed at: `check`'s remedy ladder, the optimize
# step of a model that fits, `--max-input` after optimize, `--target all`. Searches stop on
# counted work, so the same search at the same effort writes the same bytes: the figure and the
# placement a step promises are what its printed command, which names no --effort, writes.
OPTIMIZE_EFFORT = 10.0


def steps(effort: float, per_unit: int) -> int:
    """Effort units → a whole number of steps (at least one)."""
    return max(1, int(effort * per_unit))


def deadline(time_limit_s: float | None) -> float | None:
    """The wall-clock instant a user's cap ends at, or None (no cap: the clock is never read)."""
    if time_limit_s is None:
        return None
    return time.perf_counter() + time_limit_s


def past(end: float | None) -> bool:
    """True once a user's wall-clock cap has ended; always False without one."""
    return end is not None and time.perf_counter() > end


def seconds_left(end: float | None) -> float | None:
    """Seconds until a user's cap ends (at least a twentieth), or None without a cap."""
    if end is None:
        return None
    return max(0.05, end - time.perf_counter())


def cap_settings(end: float | None) -> dict[str, float]:
    """The `time_limit_s` setting to offer a planner or reorderer: the seconds left of a user's
    cap, or none at all without one."""
    return cap_setting(seconds_left(end))


def cap_setting(time_limit_s: float | None) -> dict[str, float]:
    """A user's cap as the `time_limit_s` setting to offer, or none at all without one."""
    return {} if time_limit_s is None else {"time_limit_s": time_limit_s}
