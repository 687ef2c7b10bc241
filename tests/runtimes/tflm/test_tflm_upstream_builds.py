"""The upstream repositories' own models on TFLM builds no rule was fitted to: older `tflite-micro`
wheels (`check --tflm <version>` on the host: head, tail, every category and the minimal arena,
or CANNOT RUN where the wheel refuses) and the other device probes (`check --cpu ... --kernels
...`: head, the plain allocator's tail and minimal arena), cached in tests/data/tflm_upstream/ by
tests/tflm_upstream_builds.py, which says how each file is remade. The models are read from the
fetched mirrors, so each test skips, saying so, where they are absent."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import pytest

import arenalens
from arenalens.builds.build import build_named
from tests.conformance.compare import differences
from tests.conformance.predict import predict
from tests.litert_upstream_measure import absence, mirror
from tests.tflm_upstream_builds import (
    DATA,
    PROBE_TARGETS,
    TWO_BUFFER_TARGETS,
    WHEELS,
    command,
    measured_target,
    read_models,
)

CACHES: dict[str, Any] = {
    path.stem: json.loads(path.read_text()) for path in sorted(DATA.glob("*.json"))
}


def test_every_build_asked_for_is_cached_with_the_command_that_remakes_it() -> None:
    wheels = {"host"} | {f"host@{wheel}" for wheel in WHEELS}
    assert set(CACHES) == wheels | set(PROBE_TARGETS) | set(TWO_BUFFER_TARGETS)
    for target, cache in CACHES.items():
        assert cache["command"] == command(target)
        assert cache["models"], target


@pytest.mark.parametrize("target", [t for t in CACHES if t.startswith("host@")])
def test_a_wheel_names_the_commit_it_was_built_from(target: str) -> None:
    assert CACHES[target]["wheel"] == target.removeprefix("host@")
    assert len(CACHES[target]["commit"]) >= 7


@functools.cache
def _mirrored() -> dict[str, bytes | None]:
    """Every cached model's bytes, read once ({} where a mirror is absent)."""
    names = {name for cache in CACHES.values() for name in cache["models"]}
    present = [name for name in sorted(names) if mirror(name.split(":", 1)[0]).is_dir()]
    return read_models(present)


def _model(name: str, sha256: str) -> bytes:
    repository, path = name.split(":", 1)
    if not mirror(repository).is_dir():
        pytest.skip(f"the {repository} mirror is absent")
    data = _mirrored()[name]
    if data is None or absence(data):
        pytest.skip(f"{path}: {absence(data)}")
    assert hashlib.sha256(data).hexdigest() == sha256, f"{name} changed since it was measured"
    return data


@pytest.mark.parametrize("target", sorted(set(CACHES) - set(TWO_BUFFER_TARGETS)))
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


@pytest.mark.parametrize("target", [t for t in CACHES if t.startswith("host")])
def test_check_with_the_release_declares_the_wheels_minimum(target: str) -> None:
    """`check --tflm <version>`: what the command line declares, not only the rules' figures."""
    version = target.removeprefix("host").removeprefix("@") or None
    for name, measured in sorted(CACHES[target]["models"].items())[::7]:
        data = _model(name, measured["sha256"])
        verdict = arenalens.check(data, budget="256MB", tflm=version)
        if "board_too_small" in measured:
            continue
        if measured["loads"]:
            assert verdict.required_bytes == measured["min_arena"], name
        else:
            assert not verdict.runs, name


TWO_BUFFER_FIELDS = ("persistent_min", "non_persistent_min", "tail", "head")


@pytest.mark.parametrize("target", sorted(set(CACHES) & set(TWO_BUFFER_TARGETS)))
def test_every_upstream_model_splits_as_on_the_two_buffer_probe(target: str) -> None:
    """Each buffer's minimum, and what each holds after setup, as tests/two_buffers.py
    measures them; a model the probe sets up at no size is one arenalens refuses."""
    from arenalens.runtimes.tflm.support import support
    from arenalens.tflite.reader import parse_model
    from tests.runtimes.tflm.test_two_buffers import _split
    from tests.two_buffers import PROBES

    build_name = PROBES[target].build
    build = build_named(build_name).with_recording(False)
    gaps = []
    for name, measured in sorted(CACHES[target]["models"].items()):
        data = _model(name, measured["sha256"])
        if measured["status"] != "ok":
            if support(parse_model(data, "model"), build).sets_up:
                gaps.append(f"{name}: sets up in arenalens, not on the probe")
            continue
        two = _split(data, build_name).two
        found = (two.persistent_bytes, two.non_persistent_bytes, two.tail_bytes, two.head_bytes)
        wanted = tuple(
            measured[k] for k in ("persistent_min", "non_persistent_min", "tail", "head")
        )
        if found != wanted or not measured["pair_ok"]:
            gaps.append(
                f"{name}: predicted {found}, measured {wanted} (pair {measured['pair_ok']})"
            )
    assert gaps == []
