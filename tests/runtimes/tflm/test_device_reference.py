"""Cortex-M figures of real models against real TFLM built for Cortex-M (run under QEMU): head,
tail, minimal arena, and the plain allocator's tail and minimal arena, on all five probe builds,
for the built-in examples (tests/data/device_examples.json) and the shared corpus
(reference-cortex-m.json; skipped when ../shared/models is absent).

Each model's outcome (exact, refused, over, under) is pinned in tests/data/device_reference.json;
any change fails here, naming the model and the differing figures. Rewrite the pins with
`python -m tests.device_reference` when a change is meant (a kernel rule made models exact).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from tests.conformance.targets import TARGETS
from tests.conftest import SHARED_REASON
from tests.device_reference import (
    EXACT,
    EXAMPLE_PREFIX,
    OUTCOMES,
    REFERENCE,
    UNDER,
    corpus,
    differences,
    examples,
    expected,
    measured,
    model_bytes,
    outcome,
    predicted,
)

CORPUS_MISSING = f"{REFERENCE} not found ({SHARED_REASON})"


def _pairs(source: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    return [(target, model) for target, models in sorted(source.items()) for model in models]


def _params() -> list[Any]:
    params = [
        pytest.param(target, model, id=f"{target}:{model.removesuffix('.tflite')}")
        for target, model in _pairs(examples()) + _pairs(corpus())
    ]
    if not corpus():
        params.append(pytest.param(None, None, marks=pytest.mark.skip(reason=CORPUS_MISSING)))
    return params


def _pinned(target: str, model: str) -> str | None:
    lists = expected().get(target, {})
    return next((name for name in OUTCOMES if model in lists.get(name, [])), None)


@pytest.mark.parametrize(("target", "model"), _params())
def test_device_outcome_is_the_pinned_one(target: str, model: str) -> None:
    if model.startswith(EXAMPLE_PREFIX):
        digest = hashlib.sha256(model_bytes(model)).hexdigest()
        assert digest == measured(target, model)["sha256"], (
            f"{model} changed since it was measured: "
            "python -m tests.device_reference --measure-examples"
        )
    found = outcome(predicted(target, model), measured(target, model))
    pinned = _pinned(target, model)
    detail = differences(target, model)
    if pinned == EXACT:
        assert found == EXACT, f"no longer exact on {target}: {detail}"
    elif found == EXACT:
        pytest.fail(f"now exact on {target} (was {pinned}): python -m tests.device_reference")
    if found == UNDER:
        assert pinned == UNDER, f"under-states the firmware arena on {target}: {detail}"
    assert found == pinned, (
        f"{target}: {pinned} → {found} ({detail}); if meant: python -m tests.device_reference"
    )


def test_every_measured_model_is_pinned() -> None:
    sources = [examples()] + ([corpus()] if corpus() else [])
    unpinned = [
        f"{target}:{model}"
        for source in sources
        for target, model in _pairs(source)
        if _pinned(target, model) is None
    ]
    assert not unpinned, f"python -m tests.device_reference: {unpinned}"


def test_every_probe_build_is_a_harness_target() -> None:
    assert set(examples()) <= set(TARGETS)
    if corpus():
        assert set(corpus()) == set(examples())
