"""Shared fixtures: the real-model corpus (../shared/models) when present, and CLI helpers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# LiteRT's Eigen float blocks follow the CPU's caches (eigen_blocking.replayed_caches): the
# suite's figures are the measuring machine's whatever CPU runs it.
os.environ["ARENALENS_CPU_CACHES"] = "49152,2097152,314572800"
# LiteRT's figures are for the running machine's ISA by default (isa.default_isa): the suite
# pins the measuring machine's, so that they do not follow the CPU that runs it either.
os.environ["ARENALENS_ISA"] = "x86-64-avx512"
# Timings are benchmarks' business (benchmarks/), not a unit test's: hypothesis's default 200 ms
# deadline per example failed a property under CI's load (two workers on two cores) while the
# answers were right. Every property runs without a clock.
settings.register_profile("arenalens", deadline=None)
settings.load_profile("arenalens")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = Path(
    os.environ.get("ARENALENS_SHARED_MODELS", REPO_ROOT.parent / "shared" / "models")
)
SHARED_REASON = f"real-model corpus not found at {SHARED_MODELS} (set ARENALENS_SHARED_MODELS)"


def shared_reference() -> dict[str, Any]:
    """reference.json of the corpus, or {} when the corpus is absent."""
    path = SHARED_MODELS / "reference.json"
    if not path.is_file():
        return {}
    models: dict[str, Any] = json.loads(path.read_text())["models"]
    return models


def shared_model_names() -> list[str]:
    """File names of the corpus models (empty when absent), sorted."""
    if not SHARED_MODELS.is_dir():
        return []
    return sorted(p.name for p in SHARED_MODELS.glob("*.tflite"))


def shared_params() -> list[Any]:
    """pytest params over the corpus; one skipped param with a reason when it is absent."""
    names = shared_model_names()
    if not names:
        return [pytest.param(None, marks=pytest.mark.skip(reason=SHARED_REASON), id="no-corpus")]
    return [pytest.param(name, id=name.removesuffix(".tflite")) for name in names]


@pytest.fixture
def shared_path() -> Iterator[Path]:
    """The corpus folder (skips when absent)."""
    if not SHARED_MODELS.is_dir():
        pytest.skip(SHARED_REASON)
    yield SHARED_MODELS
