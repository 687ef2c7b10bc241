"""The upstream repositories' own models on real TFLM under QEMU (Cortex-M7 with CMSIS-NN,
ESP32-S3 with ESP-NN): the kTensorArenaSize `check` declares for the build is the smallest arena
the probe's firmware allocator sets up, byte for byte. Held out: no rule was fitted to these
models (tests/tflm_upstream_devices.py says which, and remakes the cache). The models are read
from the fetched mirrors, so the test skips, saying so, where they are absent."""

from __future__ import annotations

import json
from typing import Any

import pytest

import arenalens
from tests.litert_upstream_measure import absence, mirror, model_bytes
from tests.tflm_upstream_devices import BUILDS, COMMAND, DATA

CACHE: dict[str, Any] = json.loads(DATA.read_text())


def test_the_cache_says_how_it_was_made() -> None:
    assert CACHE["command"] == COMMAND
    assert len(CACHE["models"]) >= 50
    for entry in CACHE["models"].values():
        assert set(entry) == set(BUILDS)


@pytest.mark.parametrize("name", sorted(CACHE["models"]), ids=lambda n: n.split(":", 1)[1])
def test_check_declares_what_the_device_needs(name: str) -> None:
    repository, path = name.split(":", 1)
    if not mirror(repository).is_dir():
        pytest.skip(f"the {repository} mirror is absent")
    data = model_bytes(repository, path)
    if data is None or absence(data):
        pytest.skip(f"{path}: {absence(data)}")
    for build, measured in CACHE["models"][name].items():
        if "min_arena" not in measured:
            continue  # the probe's board cannot hold it (QEMU's RAM), recorded as such
        verdict = arenalens.check(data, budget="256MB", build=build)
        assert verdict.required_bytes == measured["min_arena"], build
