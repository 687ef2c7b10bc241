"""Split models on real TFLM for Cortex-M: the cached output-probe measurements.

Measured by `python -m tests.split.probes` (QEMU, about 30 minutes): every case on Cortex-M3,
M7 and M55 with CMSIS-NN and Cortex-M7 with reference kernels, 5 seeds, at the
kTensorArenaSize arenalens declares for each file on that build.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tests.split.probes import CACHE, DEFAULT, GENERATED, SHARED, TARGETS


def _cache() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(CACHE.read_text())
    return document


def test_every_case_was_measured_on_every_output_probe() -> None:
    cases = _cache()["cases"]
    assert set(cases) == {case.name for case in GENERATED} | set(SHARED) | set(DEFAULT)
    for name, targets in cases.items():
        assert set(targets) == set(TARGETS), name


@pytest.mark.parametrize("name", [case.name for case in GENERATED] + list(SHARED + DEFAULT))
def test_outputs_and_every_common_tensor_are_identical(name: str) -> None:
    for target, result in _cache()["cases"][name].items():
        where = f"{name} on {target}"
        assert result["identical"], where
        assert result["setup_after"]["status"] == "ok", where
        assert int(result["setup_after"]["arena_size"]) == result["arena_after"], where
        assert len(result["seeds"]) == 5, where
        for seed in result["seeds"].values():
            assert seed["outputs_equal"] and not seed["tensors_differing"], where
            assert seed["tensors_compared"] >= 1, where


@pytest.mark.parametrize("case", GENERATED, ids=[case.name for case in GENERATED])
def test_the_cached_models_are_the_ones_the_code_writes(case: Any) -> None:
    digest = hashlib.sha256(case.written()).hexdigest()
    for target, result in _cache()["cases"][case.name].items():
        assert result["sha256"] == digest, (
            f"{case.name}: the split model changed since it was measured on {target}; "
            "re-run python -m tests.split.probes"
        )


def test_the_split_models_need_fewer_bytes_on_the_device() -> None:
    for name in SHARED + DEFAULT:
        for target, result in _cache()["cases"][name].items():
            assert result["arena_after"] < result["arena_before"], f"{name} on {target}"
            used = int(result["setup_after"]["used"])
            assert used <= result["arena_after"], f"{name} on {target}"
