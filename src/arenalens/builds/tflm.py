"""TFLM releases: a wheel version, a date or a commit → a point in TFLM's history, and which of the
changes that move arena bytes it has.

TFLM has no numbered releases: firmware pins a commit, and every dated `tflite-micro` wheel is one
commit of the main branch, its version the commit's time in UTC (0.dev20250808035851 is 2b3f8d0 of
2025-08-08 03:58:51). So a release is a time on one ordered history. `HISTORY` lists, oldest first,
every change between the oldest covered release and the newest wheel that moves a head, a tail, a
minimal arena or whether a model sets up: the commit it landed in and what it changes
(docs/tflm-releases.md gives the sources and the measurements of each). A struct layout or a
kernel rule asks whether a build has a change (`TflmRelease.has`, or the change's key in
`Build.features`, as `abi.Field(..., only_with=KEY)` does); nothing compares dates ad hoc.

Where a change is dated by its wheels only (its commit is past the TFLM sources read here), it
carries the last time known without it: a date between the two names no single state of TFLM and
is refused, asking for a wheel version or a commit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

from arenalens.builds.tflm_commits import COMMITS, COMPLETE_UNTIL
from arenalens.errors import UnplacedValueError, UsageError
from arenalens.records import record


@record(slots=True)
class Change:
    """One change of TFLM that moves arena bytes (or whether a model sets up)."""

    key: str
    landed: datetime  # the commit's time (UTC); for a change dated by wheels, the first with it
    commit: str  # short hash; "" when only its wheels are known
    summary: str
    # The last time known without it, when it is dated by its wheels only (else None).
    not_before: datetime | None = None
    # A change of how the tflite-micro wheel is built, not of TFLM's sources: device builds of
    # any release do not have it (`TflmRelease.features` leaves it out; `Build` asks `has`).
    wheel_only: bool = False


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


FULLY_CONNECTED_INT16_PER_CHANNEL = "fully-connected-int16-per-channel"
RELU_INT16 = "relu-int16"
POOLING_KEEPS_QUANTIZATION = "pooling-keeps-quantization"
SUB_INT32 = "sub-int32"
REVERSE_V2 = "reverse-v2"
WHEEL_COMPRESSION = "wheel-compression"
REDUCE_MIN = "reduce-min"
CONST_TENSOR_CHECKS = "const-tensor-checks"
PRELU_INT16 = "prelu-int16"
DECODE = "decode"
DYNAMIC_UPDATE_SLICE = "dynamic-update-slice"
REDUCE_ALL = "reduce-all"
REDUCE_SCRATCH = "reduce-scratch"
CAST_TO_BOOL = "cast-to-bool"
FULLY_CONNECTED_PARAMS_GROW = "fully-connected-params-grow"
ADD_SUB_QUANTIZATION_CHECK = "add-sub-quantization-check"
TRANSPOSE_CONV_ACTIVATION = "transpose-conv-activation"
WHEEL_OPT_MODE = "wheel-opt-mode"

# 90b983c2b (2026-08-20 19:27:21), the newest TFLM sources read here and the Cortex-M probes'.
_PROBES_TIME = datetime.fromtimestamp(COMPLETE_UNTIL, UTC)

HISTORY: tuple[Change, ...] = (
    Change(
        FULLY_CONNECTED_INT16_PER_CHANNEL,
        _utc("2025-03-17T16:44:48"),
        "39209b4",
        "FULLY_CONNECTED accepts int16 input with per-channel weights",
    ),
    Change(
        RELU_INT16,
        _utc("2025-03-21T21:20:40"),
        "b78bb7e",
        "RELU/RELU6 int16 kernels; Prepare refuses int16 zero points other than 0",
    ),
    Change(
        POOLING_KEEPS_QUANTIZATION,
        _utc("2025-04-04T17:16:17"),
        "12cd995",
        "int8/int16 pooling refuses an output scale or zero point unlike the input's",
    ),
    Change(
        SUB_INT32,
        _utc("2025-06-04T16:34:13"),
        "686df2d",
        "SUB int32 kernel; Prepare refuses quantized int32 tensors",
    ),
    Change(REVERSE_V2, _utc("2025-07-10T19:47:37"), "41a9c8a", "REVERSE_V2 registered"),
    Change(
        WHEEL_COMPRESSION,
        _utc("2025-08-04T18:26:52"),
        "9f409bb",
        "the tflite-micro wheel is built with USE_TFLM_COMPRESSION",
        wheel_only=True,
    ),
    Change(REDUCE_MIN, _utc("2025-08-05T22:11:17"), "3d4cdc1", "REDUCE_MIN registered"),
    Change(
        CONST_TENSOR_CHECKS,
        _utc("2025-08-08T03:58:51"),
        "2b3f8d0",
        "TRANSPOSE, STRIDED_SLICE, FILL, BROADCAST_TO, EXPAND_DIMS refuse non-constant operands",
    ),
    Change(
        PRELU_INT16,
        _utc("2025-09-09T14:55:34"),
        "aa6e625",
        "PRELU int16 kernel; Prepare refuses an int16 output with alpha other than int8",
    ),
    Change(DECODE, _utc("2025-10-17T16:36:56"), "d96fe66", "DECODE registered"),
    Change(
        DYNAMIC_UPDATE_SLICE,
        _utc("2025-11-10T17:22:59"),
        "62cbc8e",
        "DYNAMIC_UPDATE_SLICE registered",
    ),
    Change(REDUCE_ALL, _utc("2026-01-08T18:34:29"), "ef382bd", "REDUCE_ALL registered"),
    Change(
        REDUCE_SCRATCH,
        _utc("2026-01-16T17:21:16"),
        "0efdd51",
        "reduce kernels keep their index arrays in scratch buffers (OpDataReduce +4 B)",
    ),
    Change(
        TRANSPOSE_CONV_ACTIVATION,
        _utc("2026-02-10T15:23:45"),
        "5b93e5b",
        "TRANSPOSE_CONV applies its fused activation (before: ignored, its range never checked)",
    ),
    Change(
        WHEEL_OPT_MODE,
        _utc("2026-08-13T22:23:16"),
        "f8c117b",
        "the tflite-micro wheel is built in opt mode (NDEBUG: a failing TFLITE_DCHECK no longer "
        "aborts)",
        wheel_only=True,
    ),
    Change(
        CAST_TO_BOOL,
        _utc("2026-10-06T21:49:27"),
        "",
        "CAST writes bool outputs (before, its Invoke fails on them)",
        not_before=_PROBES_TIME,
    ),
    Change(
        FULLY_CONNECTED_PARAMS_GROW,
        _utc("2026-10-12T20:34:12"),
        "",
        "TfLiteFullyConnectedParams ends with a pointer and an int (LP64: 16 → 32 B)",
        not_before=_utc("2026-10-09T20:58:24"),
    ),
    Change(
        ADD_SUB_QUANTIZATION_CHECK,
        _utc("2026-10-14T21:16:02"),
        "",
        "ADD refuses an int8/int16 output without quantization in Prepare (before: an abort)",
        not_before=_utc("2026-10-12T20:34:12"),
    ),
)
CHANGES: Mapping[str, Change] = MappingProxyType({change.key: change for change in HISTORY})

# The oldest release the history starts from (every change after it is listed), and the newest
# one it reaches (the newest wheel measured).
OLDEST = _utc("2025-01-07T19:10:40")
NEWEST = _utc("2026-10-23T18:27:59")
_WHEEL = re.compile(r"^0\.dev(\d{14})$")
_DAY = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True, slots=True)
class TflmRelease:
    """One point of TFLM's history: the tflite-micro sources a build compiles, and so which of
    the changes of `HISTORY` it has."""

    time: datetime  # the commit's time (UTC), or the end of the date asked for
    commit: str = ""  # the commit, as much of its hash as is known ("" for an unknown one)
    wheel: str = ""  # the tflite-micro version built from it, when it names the release
    asked: str = ""  # the date the user gave (2025-08), when the release was named by one
    # The source changes it has (their keys, as `abi.Field(only_with=...)` names them); the
    # wheel-only ones are asked with `has`.
    features: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        found = frozenset(c.key for c in HISTORY if c.landed <= self.time and not c.wheel_only)
        object.__setattr__(self, "features", found)

    def has(self, key: str) -> bool:
        """Is the change in this release? (KeyError for a key the history does not list.)"""
        return CHANGES[key].landed <= self.time

    @property
    def name(self) -> str:
        """How build names spell it: the short commit, else the wheel or the date asked for."""
        return self.commit[:7] or self.wheel or self.asked or self.date

    @property
    def date(self) -> str:
        """The ISO date of its sources."""
        return f"{self.time:%Y-%m-%d}"

    @property
    def title(self) -> str:
        """'TFLM 2b3f8d0 (2025-08-08, tflite-micro 0.dev20250808035851)' and the like."""
        if not self.commit:
            return f"TFLM as of {self.asked or self.date}"
        details = [self.date]
        if self.wheel:
            details.append(f"tflite-micro {self.wheel}")
        if self.asked:
            details.append(f"the newest commit of {self.asked}")
        return f"TFLM {self.commit[:7]} ({', '.join(details)})"


def changes_between(first: TflmRelease, second: TflmRelease) -> tuple[Change, ...]:
    """The changes one of two releases has and the other has not, oldest first."""
    low, high = sorted((first.time, second.time))
    return tuple(change for change in HISTORY if low < change.landed <= high)


def release_with(change: Change) -> TflmRelease:
    """The first release with a change: its commit (or, for a change dated by wheels, the
    first wheel's time with it)."""
    return TflmRelease(change.landed, change.commit)


def _commit_named(key: str) -> tuple[str, int] | None:
    """The one listed commit a hash (or its prefix) names; None when none does."""
    matches = [(commit, seconds) for commit, seconds in COMMITS if commit.startswith(key)]
    if len(matches) > 1:
        raise UsageError(f"TFLM commit '{key}' is ambiguous: give more of its hash")
    return matches[0] if matches else None


def wheel_release(version: str) -> TflmRelease:
    """A `tflite-micro` wheel version → its release (the commit is looked up when known)."""
    found = _WHEEL.match(version.strip())
    if found is None:
        raise UsageError(f"not a tflite-micro version: '{version}' (e.g. 0.dev20250808035851)")
    # YYYYmmddHHMMSS read field by field: strptime loads _strptime, calendar and locale, and
    # this module reads a wheel version as it loads.
    digits = found.group(1)
    year, month, day = int(digits[0:4]), int(digits[4:6]), int(digits[6:8])
    hour, minute, second = int(digits[8:10]), int(digits[10:12]), int(digits[12:14])
    time = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    seconds = int(time.timestamp())
    commit = next((c for c, t in COMMITS if t == seconds), "")
    return _covered(TflmRelease(time, commit, f"0.dev{found.group(1)}"), version)


def tflm_release(text: str) -> TflmRelease:
    """`--tflm` → a release: a `tflite-micro` wheel version, a date (YYYY-MM or YYYY-MM-DD: TFLM
    as of the end of that month or day) or a commit hash; UsageError naming what is covered."""
    key = text.strip().lower()
    if key.startswith("0.dev"):
        return wheel_release(key)
    day = _DAY.match(key)
    if day is not None:
        return _as_of(day, text.strip())
    if _COMMIT.match(key):
        named = _commit_named(key)
        if named is None:
            raise UsageError(
                f"unknown TFLM commit '{text.strip()}': arenalens knows every commit to "
                f"{datetime.fromtimestamp(COMPLETE_UNTIL, UTC):%Y-%m-%d} and the wheels' after it; "
                f"give the tflite-micro version built from it or its date ({coverage()})"
            )
        commit, seconds = named
        return _covered(TflmRelease(datetime.fromtimestamp(seconds, UTC), commit), text)
    raise UsageError(
        f"--tflm '{text.strip()}': give a tflite-micro version (0.dev20250808035851), a date "
        f"(2025-08 or 2025-08-08) or a TFLM commit ({coverage()})"
    )


def _as_of(day: re.Match[str], asked: str) -> TflmRelease:
    """TFLM at the end of a month or day: its newest commit where every commit is listed,
    else the time itself (past the sources read here, only the wheels' commits are known)."""
    year, month, date = int(day.group(1)), int(day.group(2)), day.group(3)
    try:
        start = datetime(year, month, int(date) if date else 1, tzinfo=UTC)
    except ValueError:
        raise UsageError(f"--tflm '{asked}': not a date") from None
    if date:
        end = start + timedelta(days=1)
    else:
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    if start > NEWEST:
        return _covered(TflmRelease(start, asked=asked), asked)  # refused: newer than the history
    last = min(end - timedelta(seconds=1), NEWEST)
    _covered(TflmRelease(last, asked=asked), asked)
    seconds = int(last.timestamp())
    newest = max((c for c in COMMITS if c[1] <= seconds), key=lambda c: c[1], default=None)
    if newest is None or (seconds > COMPLETE_UNTIL and newest[1] != seconds):
        return TflmRelease(last, asked=asked)
    return TflmRelease(datetime.fromtimestamp(newest[1], UTC), newest[0], asked=asked)


def _covered(release: TflmRelease, asked: str) -> TflmRelease:
    """The release, or UsageError when the history does not cover it or cannot place it."""
    if release.time < OLDEST:
        raise UsageError(f"TFLM {asked.strip()} is older than arenalens models ({coverage()})")
    if release.time > NEWEST:
        raise UsageError(f"TFLM {asked.strip()} is newer than arenalens models ({coverage()})")
    for change in HISTORY:
        if change.not_before is not None and change.not_before < release.time < change.landed:
            without, with_it = _wheel_version(change.not_before), _wheel_version(change.landed)
            raise UnplacedValueError(
                f"TFLM {asked.strip()} falls between tflite-micro {without} and {with_it} "
                f"({change.not_before:%Y-%m-%d %H:%M} and {change.landed:%Y-%m-%d %H:%M} UTC), "
                f"where '{change.summary}' landed at a commit arenalens cannot place",
                (("--tflm", with_it, "with it"), ("--tflm", without, "without it")),
                ask="name the one you build",
            )
    return release


def _wheel_version(time: datetime) -> str:
    """The tflite-micro version of the wheel built at that time (a change dated by its wheels
    is bracketed by two wheels' times)."""
    return f"0.dev{time:%Y%m%d%H%M%S}"


def coverage() -> str:
    """What --tflm accepts, in one phrase."""
    return (
        f"covered: TFLM from {OLDEST:%Y-%m-%d} (tflite-micro 0.dev{OLDEST:%Y%m%d%H%M%S}) "
        f"to {NEWEST:%Y-%m-%d} (0.dev{NEWEST:%Y%m%d%H%M%S})"
    )


# The `tflite-micro` PyPI wheel arenalens is measured against (the newest it models), and the
# commit the Cortex-M probes build (../shared/tools/cortex-m/README.md): the defaults of the host
# build and of device builds.
TFLM_WHEEL = wheel_release("0.dev20261023182759")
TFLM_CORTEX_M_PROBES = tflm_release("90b983c2b3f1480642e040bbd2ddb37b998f3424")
