"""TFLM releases: what --tflm accepts, which changes a release has, and the history's own order."""

from __future__ import annotations

import pytest

from arenalens.builds.build import device_build
from arenalens.builds.tflm import (
    ADD_SUB_QUANTIZATION_CHECK,
    CHANGES,
    FULLY_CONNECTED_PARAMS_GROW,
    HISTORY,
    OLDEST,
    REDUCE_SCRATCH,
    WHEEL_COMPRESSION,
    tflm_release,
    wheel_release,
)
from arenalens.builds.tflm_commits import COMMITS
from arenalens.errors import UnplacedValueError, UsageError


def test_a_wheel_version_is_its_commits_time_and_names_the_commit() -> None:
    release = wheel_release("0.dev20250808035851")
    assert (release.name, release.wheel) == ("2b3f8d0", "0.dev20250808035851")
    assert release.commit == "2b3f8d0f018bc9911fc134682e08fec05d851118"
    assert release.title == "TFLM 2b3f8d0 (2025-08-08, tflite-micro 0.dev20250808035851)"
    assert release.has(WHEEL_COMPRESSION) and not release.has(REDUCE_SCRATCH)


def test_a_commit_is_found_by_any_unique_prefix() -> None:
    assert tflm_release("2b3f8d0f018bc991") == tflm_release("2b3f8d0")
    assert tflm_release("0efdd51a3").has(REDUCE_SCRATCH)
    assert not tflm_release("e028871fb").has(REDUCE_SCRATCH)  # the commit before it


def test_a_month_is_tflm_as_of_its_end() -> None:
    august = tflm_release("2025-08")
    assert august.title == "TFLM 3b20912 (2025-08-25, the newest commit of 2025-08)"
    # Past the sources read here only the wheels' commits are known: a date names no commit.
    assert tflm_release("2026-10-20").title == "TFLM as of 2026-10-20"
    assert tflm_release("2026-10-20").has(ADD_SUB_QUANTIZATION_CHECK)
    assert [c.key for c in HISTORY if august.has(c.key)] == [
        c.key for c in HISTORY if c.landed <= wheel_release("0.dev20250808035851").time
    ]
    assert tflm_release("2025-08-04").has(WHEEL_COMPRESSION)
    assert not tflm_release("2025-08-03").has(WHEEL_COMPRESSION)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.dev20241223180107", "older than arenalens models"),
        ("2024-12", "older than arenalens models"),
        ("2027-01", "newer than arenalens models"),
        ("deadbeef", "unknown TFLM commit"),
        ("2025-13", "not a date"),
        ("v2.16", "give a tflite-micro version"),
        ("2026-10-10", r"\(2026-10-09 20:58 and 2026-10-12 20:34 UTC\)"),
        ("2026-10-13", r"\(2026-10-12 20:34 and 2026-10-14 21:16 UTC\)"),
        ("2026-09", r"\(2026-08-20 16:47 and 2026-10-06 21:49 UTC\)"),
    ],
)
def test_what_the_history_cannot_place_is_a_one_line_error_naming_what_is_covered(
    text: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message) as raised:
        tflm_release(text)
    assert "\n" not in str(raised.value)
    if "newer" in message or "older" in message or "unknown" in message:
        assert "covered: TFLM from 2025-01-07" in str(raised.value)


def test_a_date_between_two_wheels_of_a_change_names_both_wheels() -> None:
    with pytest.raises(UnplacedValueError) as raised:
        tflm_release("2026-10-10")
    assert raised.value.instead == (
        ("--tflm", "0.dev20261012203412", "with it"),
        ("--tflm", "0.dev20261009205824", "without it"),
    )
    assert str(raised.value).endswith(
        "name the one you build: --tflm 0.dev20261012203412 (with it) or "
        "--tflm 0.dev20261009205824 (without it)"
    )
    for _, value, _ in raised.value.instead:
        assert wheel_release(value).wheel == value


def test_a_change_dated_by_its_wheels_is_placed_by_them() -> None:
    assert not wheel_release("0.dev20261009205824").has(FULLY_CONNECTED_PARAMS_GROW)
    assert wheel_release("0.dev20261012203412").has(FULLY_CONNECTED_PARAMS_GROW)
    assert tflm_release("2026-10-16").has(FULLY_CONNECTED_PARAMS_GROW)
    assert not wheel_release("0.dev20261012203412").has(ADD_SUB_QUANTIZATION_CHECK)
    assert wheel_release("0.dev20261014211602").has(ADD_SUB_QUANTIZATION_CHECK)


def test_the_history_is_ordered_and_every_dated_commit_is_a_known_commit() -> None:
    times = [change.landed for change in HISTORY]
    assert times == sorted(times) and all(time > OLDEST for time in times)
    assert len(CHANGES) == len(HISTORY)
    known = {(commit[:7], seconds) for commit, seconds in COMMITS}
    for change in HISTORY:
        if change.commit:
            assert (change.commit, int(change.landed.timestamp())) in known, change.key
        else:
            assert change.not_before is not None and change.not_before < change.landed


def test_each_change_splits_the_commits_by_time_as_by_order() -> None:
    # Committer times are not monotone along the branch (a few commits are older than their
    # parent), so `Release.has` comparing times is right only because no commit on one side of
    # a change's commit has a time on the other side.
    assert len({commit for commit, _ in COMMITS}) == len(COMMITS)
    position = {commit[:7]: index for index, (commit, _) in enumerate(COMMITS)}
    for change in HISTORY:
        if not change.commit:
            continue
        index, landed = position[change.commit], int(change.landed.timestamp())
        assert all(seconds < landed for _, seconds in COMMITS[:index]), change.key
        assert all(seconds > landed for _, seconds in COMMITS[index + 1 :]), change.key


@pytest.mark.parametrize(
    ("kernels", "tflm", "releases"),
    [
        # CMSIS-NN is modelled for TFLM 2026-07-08 to 2026-08-20: only "without it" is made.
        ("cmsis-nn", "2026-08", ("0.dev20260820164721",)),
        # The reference kernels are made at both.
        ("reference", "2026-08", ("0.dev20261006214927", "0.dev20260820164721")),
        # Neither release is one CMSIS-NN is modelled at: the newest it is modelled at.
        ("cmsis-nn", "2026-10-10", ("90b983c",)),
    ],
)
def test_an_unplaced_release_suggests_only_what_the_build_is_made_at(
    kernels: str, tflm: str, releases: tuple[str, ...]
) -> None:
    # Found by flows10 (seed 1000801): `--tflm 2026-08 --kernels cmsis-nn` suggested
    # `--tflm 0.dev20261006214927`, which the same command then refused for CMSIS-NN.
    with pytest.raises(UnplacedValueError) as raised:
        device_build("cortex-m7", kernels, tflm=tflm)
    assert tuple(value for _, value, _ in raised.value.instead) == releases
    for _, value, _ in raised.value.instead:
        device_build("cortex-m7", kernels, tflm=value)  # made as suggested
