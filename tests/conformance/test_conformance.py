"""Conformance: generated cases predicted vs measured on the real runtimes (cached under data/ by
`python -m tests.conformance.measure`); docs/conformance.md records which are exact."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import differences, under_predicted
from tests.conformance.coverage import DOC, render
from tests.conformance.measure import load
from tests.conformance.predict import predict
from tests.conformance.targets import TARGETS


def _host_params() -> list[Any]:
    cached = load("host")["cases"]
    return [
        pytest.param(case, cached[case.id], id=case.id) for case in all_cases() if case.id in cached
    ]


def test_every_case_is_measured_on_the_host() -> None:
    missing = [case.id for case in all_cases() if case.id not in load("host")["cases"]]
    assert not missing, f"not measured (python -m tests.conformance.measure --stale): {missing}"


@pytest.mark.parametrize(("case", "measured"), _host_params())
def test_host_prediction_is_never_below_the_wheel(case: Case, measured: dict[str, Any]) -> None:
    assert measured["sha256"] == case.sha256(), (
        f"{case.id} changed since it was measured: "
        f"python -m tests.conformance.measure --target host --case {case.id}"
    )
    predicted = predict(case.model(), TARGETS["host"])
    assert not under_predicted(predicted, measured), differences(predicted, measured)


def test_every_measurement_is_of_the_current_model() -> None:
    stale = []
    for name in TARGETS:
        measured = load(name)["cases"]  # once per target: it reads every family's file
        stale += [
            f"{name}:{case.id}"
            for case in all_cases()
            if (entry := measured.get(case.id)) is not None and entry["sha256"] != case.sha256()
        ]
    assert not stale, f"re-measure (python -m tests.conformance.measure --stale): {stale}"


def test_coverage_table_is_current() -> None:
    assert DOC.exists(), "python -m tests.conformance.coverage"
    assert DOC.read_text() == render(), (
        "docs/conformance.md is out of date: python -m tests.conformance.coverage"
    )
