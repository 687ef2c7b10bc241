"""The older-wheel probe's plumbing: versions, replies, targets (the wheels themselves run only
when measuring: python -m tests.conformance.measure --target host@<version>)."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from arenalens.runtimes.tflm.probe import Category, Probe
from tests.conformance.measure import load, load_models, measured_releases
from tests.conformance.targets import TARGETS, release_target, target_named
from tests.conformance.wheels import check_version, probe_from_json, probe_to_json


def test_a_wheel_version_is_pypis_dated_dev_version() -> None:
    assert check_version("0.dev20250107191040") == "0.dev20250107191040"
    for wrong in ("2025-01", "0.dev2025", "0.1.0", "0.dev20250107191040x"):
        with pytest.raises(ValueError, match="not a tflite-micro wheel version"):
            check_version(wrong)


def test_a_probe_survives_the_workers_json_line() -> None:
    found = Probe(
        4096,
        "ok",
        head=288,
        tail=1088,
        total=1376,
        categories=MappingProxyType({"Persistent buffer data": Category(80, 72, 3, "allocations")}),
        log="Arena allocation head 288 bytes",
    )
    assert probe_from_json(json.loads(json.dumps(probe_to_json(found)))) == found


def test_release_targets_are_named_host_at_their_wheel() -> None:
    target = target_named("host@0.dev20250107191040")
    assert target == release_target("0.dev20250107191040")
    assert (target.name, target.wheel, target.device) == (
        "host@0.dev20250107191040",
        "0.dev20250107191040",
        False,
    )
    assert target_named("host") is TARGETS["host"] and TARGETS["host"].wheel is None


@pytest.mark.parametrize("version", measured_releases())
def test_every_measured_release_names_its_wheel_and_commit(version: str) -> None:
    from tests.conformance.measure import DATA

    record = json.loads((DATA / f"host@{version}" / "wheel.json").read_text())
    assert record["version"] == version and len(record["commit"]) >= 7
    measured = load(f"host@{version}")["cases"] or load_models(f"host@{version}")
    assert measured, f"host@{version}: nothing measured"


@pytest.mark.parametrize("version", measured_releases())
def test_every_cached_model_measurement_is_of_the_current_bytes(version: str) -> None:
    import hashlib

    from tests.conformance.measure import load_models, models

    current = {key: hashlib.sha256(data).hexdigest() for key, data in models().items()}
    stale = [
        key
        for key, figures in load_models(f"host@{version}").items()
        if key in current and figures["sha256"] != current[key]
    ]
    assert not stale, (
        f"re-measure: python -m tests.conformance.measure --target host@{version} --models "
        f"--stale ({stale})"
    )


def test_a_probe_build_at_an_older_commit_is_that_device_build_at_that_release() -> None:
    target = target_named("cortex-m7-reference@2b3f8d0")
    assert target.device and target.probe_target == "cortex-m7-reference"
    assert target.predicted.name == "cortex-m7/reference@2b3f8d0"
    assert target.predicted.tflm.commit.startswith("2b3f8d0")
    assert target.probes is not None and target.probes.name == "2b3f8d0"
    with pytest.raises(KeyError):
        target_named("host-reference@2b3f8d0")  # only the Cortex-M probe builds
