"""Conformance against the live `tflite_micro` wheel: a sample of the generated cases, measured now.

The full table is compared with cached measurements (test_conformance.py); this test keeps that
cache honest. For one case of every operator it measures head, tail, every recorded category and
the minimal arena on the installed wheel, whatever its version, and checks that (a) the cache of
that version (`host` for the wheel arenalens is measured against, `host@<version>` for an older
one) holds the same figures, and (b) the prediction for the installed wheel's TFLM release is
never below them (with (a), the coverage table's and the release tests' "exact" holds live).
"""

from __future__ import annotations

from typing import Any

import pytest

from arenalens.builds.build import HOST, Build
from arenalens.errors import RuntimeUnavailableError
from arenalens.runtimes.tflm.probe import installed_build, installed_version
from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import differences, under_predicted
from tests.conformance.measure import load, measure_host
from tests.conformance.predict import predict
from tests.conformance.targets import RELEASE_PREFIX, TARGETS, Target

pytestmark = [pytest.mark.runtime, pytest.mark.slow]


def _one_case_per_operator() -> list[Case]:
    """The first case (in family order) of every operator: every kernel's rule meets the wheel."""
    chosen: dict[str, Case] = {}
    for case in all_cases():
        chosen.setdefault(case.opcode, case)
    return sorted(chosen.values(), key=lambda case: case.id)


def _installed() -> tuple[str, Build | None]:
    """The installed wheel's version and build (None: a release arenalens does not model);
    ("", None) without a wheel."""
    try:
        return installed_version(), installed_build()
    except RuntimeUnavailableError:
        return "", None


def _cache_name(version: str) -> str:
    """Where the measurements of this wheel version are cached."""
    return "host" if version in ("", HOST.tflm.wheel) else f"{RELEASE_PREFIX}{version}"


def _params() -> list[Any]:
    cached = load(_cache_name(_installed()[0]))["cases"]
    return [
        pytest.param(case, cached.get(case.id), id=case.id) for case in _one_case_per_operator()
    ]


@pytest.mark.parametrize(("case", "cached"), _params())
def test_the_wheel_measures_what_the_cache_says_and_the_prediction_agrees(
    case: Case, cached: dict[str, Any] | None
) -> None:
    pytest.importorskip("tflite_micro", reason="needs the real TFLM interpreter (extra 'runtime')")
    version, build = _installed()
    live = measure_host(case)
    live_figures = {key: value for key, value in live.items() if key != "error"}
    if build is None:
        # A wheel newer than the history: the newest release modelled must not under-state it.
        predicted = predict(case.model(), TARGETS["host"])
        assert not under_predicted(predicted, live), differences(predicted, live)
        return
    target = _cache_name(version)
    assert cached is not None, (
        f"{case.id}: not in the cache of tflite-micro {version} "
        f"(python -m tests.conformance.measure --target {target} --case {case.id})"
    )
    cached_figures = {key: value for key, value in cached.items() if key in live_figures}
    assert live_figures == cached_figures, (
        f"{case.id}: the wheel now measures {live_figures}, the cache says {cached_figures} "
        f"(python -m tests.conformance.measure --target {target} --case {case.id})"
    )
    predicted = predict(case.model(), Target(target, build, False))
    # Never below what the wheel needs (exact wherever the coverage table says so of the cache).
    assert not under_predicted(predicted, live), differences(predicted, live)
