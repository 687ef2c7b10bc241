"""Conformance against the live `tflite_micro` wheel: a sample of the generated cases, measured now.

The full table is compared with cached measurements (test_conformance.py); this test keeps that
cache honest. For one case of every operator it measures head, tail, every recorded category and
the minimal arena on the installed wheel, and checks that (a) the cache holds the same figures and
(b) the prediction is never below them (with (a), the coverage table's "exact" holds live).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import differences, under_predicted
from tests.conformance.measure import load, measure_host
from tests.conformance.predict import predict
from tests.conformance.targets import TARGETS

pytestmark = [pytest.mark.runtime, pytest.mark.slow]


def _one_case_per_operator() -> list[Case]:
    """The first case (in family order) of every operator: every kernel's rule meets the wheel."""
    chosen: dict[str, Case] = {}
    for case in all_cases():
        chosen.setdefault(case.opcode, case)
    return sorted(chosen.values(), key=lambda case: case.id)


def _params() -> list[Any]:
    cached = load("host")["cases"]
    return [
        pytest.param(case, cached.get(case.id), id=case.id) for case in _one_case_per_operator()
    ]


@pytest.mark.parametrize(("case", "cached"), _params())
def test_the_wheel_measures_what_the_cache_says_and_the_prediction_agrees(
    case: Case, cached: dict[str, Any] | None
) -> None:
    pytest.importorskip("tflite_micro", reason="needs the real TFLM interpreter (extra 'runtime')")
    live = measure_host(case)
    live_figures = {key: value for key, value in live.items() if key != "error"}
    assert cached is not None, f"{case.id}: not in the cache (python -m tests.conformance.measure)"
    cached_figures = {key: value for key, value in cached.items() if key in live_figures}
    assert live_figures == cached_figures, (
        f"{case.id}: the wheel now measures {live_figures}, the cache says {cached_figures} "
        f"(python -m tests.conformance.measure --target host --case {case.id})"
    )
    predicted = predict(case.model(), TARGETS["host"])
    # Exact wherever the cache (now shown to be the wheel's) is: docs/conformance.md's claim.
    assert not under_predicted(predicted, live), differences(predicted, live)
