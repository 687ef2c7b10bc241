"""Golden outputs: CLI JSON, text and exports of examples and synthetic models stay unchanged."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from tests.golden.cases import GoldenCase, golden_cases, run_case


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("golden-models")


@pytest.mark.parametrize("case", golden_cases(), ids=lambda case: case.name)
def test_output_is_unchanged(case: GoldenCase, model_folder: Path) -> None:
    assert case.path.exists(), f"no golden output for {case.name}: regenerate them"
    expected = case.path.read_text()
    actual = run_case(case, model_folder)
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                "stored",
                "now",
                n=2,
            )
        )
        pytest.fail(
            f"{case.name} changed (python -m tests.golden.regenerate if on purpose):\n"
            + diff[:6000]
        )
