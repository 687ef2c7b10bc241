"""The upstream repositories' own models on TFLM builds no rule was fitted to: older `tflite-micro`
wheels (`check --tflm <version>` on the host: head, tail, every category and the minimal arena,
or CANNOT RUN where the wheel refuses) and the other device probes (`check --cpu ... --kernels
...`: head, the plain allocator's tail and minimal arena), cached in tests/data/tflm_upstream/ by
tests/tflm_upstream_builds.py, which says how each file is remade. The models are read from the
fetched mirrors, so each test skips, saying so, where they are absent."""

from __future__ import annotations

import json
from typing import Any

import pytest

import arenalens
from tests.conformance.compare import differences
from tests.conformance.predict import predict
from tests.litert_upstream_measure import absence, mirror, model_bytes
from tests.tflm_upstream_builds import DATA, PROBE_TARGETS, WHEELS, command, measured_target

CACHES: dict[str, Any] = {
    path.stem: json.loads(path.read_text()) for path in sorted(DATA.glob("*.json"))
}


def test_every_build_asked_for_is_cached_with_the_command_that_remakes_it() -> None:
    assert set(CACHES) == {f"host@{wheel}" for wheel in WHEELS} | set(PROBE_TARGETS)
    for target, cache in CACHES.items():
        assert cache["command"] == command(target)
        assert cache["models"], target


@pytest.mark.parametrize("target", [t for t in CACHES if t.startswith("host@")])
def test_a_wheel_names_the_commit_it_was_built_from(target: str) -> None:
    assert CACHES[target]["wheel"] == target.removeprefix("host@")
    assert len(CACHES[target]["commit"]) >= 7


def _model(name: str, sha256: str) -> bytes:
    repository, path = name.split(":", 1)
    if not mirror(repository).is_dir():
        pytest.skip(f"the {repository} mirror is absent")
    data = model_bytes(repository, path)
    if data is None or absence(data):
        pytest.skip(f"{path}: {absence(data)}")
    import hashlib

    assert hashlib.sha256(data).hexdigest() == sha256, f"{name} changed since it was measured"
    return data


@pytest.mark.parametrize("target", sorted(CACHES))
def test_every_upstream_model_is_exact_on_the_build(target: str) -> None:
    build = measured_target(target)
    gaps = []
    for name, measured in sorted(CACHES[target]["models"].items()):
        data = _model(name, measured["sha256"])
        predicted = predict(data, build)
        if "board_too_small" in measured:  # the probe's whole RAM: the figure must exceed it
            if (
                not predicted["loads"]
                or predicted["min_arena_plain"] <= measured["board_too_small"]
            ):
                gaps.append(f"{name}: predicted {predicted}, too big for the probe's arena")
            continue
        found = differences(predicted, measured)
        gaps += [f"{name}: {'; '.join(found)}"] if found else []
    assert gaps == []


@pytest.mark.parametrize("target", [t for t in CACHES if t.startswith("host@")])
def test_check_with_the_release_declares_the_wheels_minimum(target: str) -> None:
    """`check --tflm <version>`: what the command line declares, not only the rules' figures."""
    version = target.removeprefix("host@")
    for name, measured in sorted(CACHES[target]["models"].items())[::7]:
        data = _model(name, measured["sha256"])
        verdict = arenalens.check(data, budget="256MB", tflm=version)
        if "board_too_small" in measured:
            continue
        if measured["loads"]:
            assert verdict.required_bytes == measured["min_arena"], name
        else:
            assert not verdict.runs, name
