"""The measurement's minimal arena: the size from which every larger size works, also for kernels
whose unchecked Init allocation lets setup succeed in a band below it (ELU int16)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.conformance.measure import _lost_allocation, minimum_size

# ELU int16 (1x4x4x3) on cortex-m7-reference, plain allocator, as measured: setup succeeds at
# 512..584 without the 256-byte OpData (tail 308..320), fails at 592..776, works from 780.
_ROOMY_PLAIN = {"tail": 580}


def _probe_elu_int16(size: int) -> dict[str, Any]:
    if 512 <= size <= 584:
        return {"status": "ok", "tail": 320 - (size % 16 > 4) * 12}
    if size >= 780:
        return {"status": "ok", "tail": 580 if size % 16 in (12, 13, 14, 15) else 576}
    return {"status": "fail"}


def _fits(size: int) -> bool:
    found = _probe_elu_int16(size)
    return found["status"] == "ok" and not _lost_allocation(found, _ROOMY_PLAIN)


def test_a_run_that_kept_fewer_kernel_buffers_lost_one() -> None:
    roomy = {"tail": 1088, "categories": {"Persistent buffer data": {"count": 4}}}
    assert _lost_allocation({"categories": {"Persistent buffer data": {"count": 3}}}, roomy)
    assert not _lost_allocation({"categories": {"Persistent buffer data": {"count": 4}}}, roomy)


def test_a_plain_run_lost_an_allocation_only_when_its_tail_shrank_by_16_or_more() -> None:
    assert _lost_allocation({"tail": 320}, _ROOMY_PLAIN)
    assert _lost_allocation({"tail": 564}, _ROOMY_PLAIN)
    assert not _lost_allocation({"tail": 565}, _ROOMY_PLAIN)


def test_the_minimal_arena_is_above_the_band_where_setup_lost_its_op_data() -> None:
    # Bracketed from below the band (head + tail of a run that lost the OpData) or above it.
    assert minimum_size(_fits, 600, 1 << 20) == 780
    assert minimum_size(_fits, 772, 1 << 20) == 780
    # Without the check, a bisection can stop inside the band.
    assert minimum_size(lambda n: _probe_elu_int16(n)["status"] == "ok", 600, 1 << 20) == 512


def _counting(minimum: int) -> tuple[list[int], Callable[[int], bool]]:
    runs: list[int] = []

    def fits(size: int) -> bool:
        runs.append(size)
        return size >= minimum

    return runs, fits


def test_a_right_guess_costs_two_runs() -> None:
    runs, fits = _counting(1196)
    assert minimum_size(fits, 1192, 1 << 20, [1196]) == 1196
    assert runs == [1196, 1195]


def test_wrong_guesses_still_give_the_minimum_and_bracket_the_bisection() -> None:
    for minimum in (1100, 1180, 1190, 1196, 1300, 5000):
        runs, fits = _counting(minimum)
        found = minimum_size(fits, 1192, 1 << 20, [1192, 1184, 1180, 1188])
        assert found == minimum, (minimum, runs)
        assert len(runs) == len(set(runs)), "a size is run once"
    # A guess the earlier answers decide is not run: 1184 after 1192 failed.
    runs, fits = _counting(1196)
    minimum_size(fits, 1192, 1 << 20, [1192, 1184])
    assert 1184 not in runs


def test_guesses_do_not_hide_the_band_where_setup_lost_its_op_data() -> None:
    assert minimum_size(_fits, 600, 1 << 20, [512, 584, 600]) == 780


def test_a_guess_a_few_bytes_off_is_bracketed_from_where_it_lies() -> None:
    asked: list[int] = []

    def fits(size: int) -> bool:
        asked.append(size)
        return size >= 1000

    for guess, most in ((992, 5), (1008, 7), (1100, 13), (700, 16)):
        asked.clear()
        assert minimum_size(fits, 900, 1 << 20, [guess]) == 1000
        assert len(asked) == len(set(asked)) <= most  # each size once; a bisection asks 20
    asked.clear()
    minimum_size(fits, 900, 1 << 20, [1000])
    assert asked == [1000, 999]
