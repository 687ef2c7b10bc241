"""Older TFLM releases against real TFLM built from them: every conformance case, every shared
model and every built-in example, predicted for the build at that release and compared with the
cached measurements of
* the `tflite-micro` wheel of the release (`--tflm <version>` on the host: data/host@<version>/,
  remade by `python -m tests.conformance.measure --target host@<version>` and `... --models`);
* a Cortex-M probe built at an older commit with the probes' kit (`--tflm <commit> --cpu ...`:
  data/<probe build>@<commit>/, remade by `... --target cortex-m7-reference@<commit>`, with the
  probe in tests/conformance/targets.py's RELEASE_PROBES).

A release is exact when head, tail, every recorded category and the minimal arena (on a probe:
with both allocators) agree, or both say the model cannot be set up; README's exactness table
quotes these counts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conformance.cases import FAMILIES, all_cases
from tests.conformance.compare import differences
from tests.conformance.measure import (
    DATA,
    load,
    load_models,
    measured_device_releases,
    measured_releases,
    models,
    remake_command,
)
from tests.conformance.predict import predict
from tests.conformance.targets import RELEASE_PREFIX, REPO_ROOT, target_named
from tests.conftest import SHARED_MODELS

README = REPO_ROOT / "README.md"

RELEASES = measured_releases()
TARGETS = [RELEASE_PREFIX + version for version in RELEASES] + measured_device_releases()

# Release targets whose conformance cases are still being measured (their cached cases are
# compared all the same): target → the command that completes them. A target leaves this table
# when done.
BEING_MEASURED: dict[str, str] = {}


def test_at_least_three_older_wheels_are_measured() -> None:
    assert len(RELEASES) >= 3, RELEASES


@pytest.mark.parametrize("name", TARGETS)
def test_every_case_and_model_is_measured(name: str) -> None:
    measured = load(name)["cases"]
    missing = [case.id for case in all_cases() if case.id not in measured]
    if name in BEING_MEASURED:
        assert missing, f"{name} is complete: take it out of BEING_MEASURED"
    else:
        assert not missing, (
            f"not measured on {name} ({len(missing)}): python -m tests.conformance.measure "
            f"--target {name} --stale"
        )
    unmeasured = sorted(set(models()) - set(load_models(name)))
    assert not unmeasured, f"python -m tests.conformance.measure --target {name} --models --stale"


@pytest.mark.parametrize("name", TARGETS)
def test_every_cached_file_says_the_command_that_remakes_it(name: str) -> None:
    for path in sorted((DATA / name).glob("*.json")):
        if path.stem in ("wheel", "probe"):
            continue
        about = json.loads(path.read_text())["about"]
        options = "--models" if path.stem == "models" else f"--family {path.stem}"
        assert f"`{remake_command(name, options)}`" in about, path


@pytest.mark.parametrize("name", measured_device_releases())
def test_a_probe_built_at_another_commit_is_recorded(name: str) -> None:
    """probe.json names the probe the figures come from: the TFLM commit its sources are at
    (the target's), its ELF's hash and the compiler (build_release_probe.sh's build_info.txt)."""
    record = json.loads((DATA / name / "probe.json").read_text())
    base, _, commit = name.partition("@")
    assert record["target"] == name and record["tflm_commit"] == commit
    assert record["elf"] == f"tflm-{base}.elf" and len(record["elf_sha256"]) == 64
    sources = [line for line in record["built_from"] if " tensorflow+tflite-micro " in line]
    assert len(sources) == 1 and sources[0].split()[-1].startswith(commit), sources
    assert any(line.startswith("arm-none-eabi-gcc") for line in record["built_from"])


def _readme_row(name: str) -> str:
    """README's exactness-table row of a release target: `| wheel <version> |` for an older wheel,
    `... built at <commit> |` for a probe built at another commit (while in BEING_MEASURED, its
    cases exact so far: `N of N measured so far`)."""
    label = (
        f"| wheel {name.removeprefix(RELEASE_PREFIX)} |"
        if name.startswith(RELEASE_PREFIX)
        else f"built at {name.partition('@')[2]} |"
    )
    rows = [line for line in README.read_text().splitlines() if label in line]
    assert len(rows) == 1, f"README's release table has no single row for {name}"
    return rows[0]


@pytest.mark.parametrize("name", TARGETS)
def test_the_readme_quotes_the_measured_counts(name: str) -> None:
    row = _readme_row(name)
    cases = len(all_cases())
    measured = len(load(name)["cases"])
    quoted = f"{cases} of {cases}"
    if name in BEING_MEASURED:
        quoted = f"{measured} of {measured} measured so far"
    assert f"| {quoted} |" in row, row
    if SHARED_MODELS.is_dir():
        chosen = len(models())
        assert row.endswith(f"| {chosen} of {chosen} |"), row


def _gaps(name: str, family: str) -> list[str]:
    target = target_named(name)
    measured = load(target.name)["cases"]
    found = []
    for case in all_cases():
        entry = measured.get(case.id)
        if case.family != family or entry is None:
            continue
        assert entry["sha256"] == case.sha256(), (
            f"{case.id} changed since it was measured: python -m tests.conformance.measure "
            f"--target {target.name} --case {case.id}"
        )
        diff = differences(predict(case.model(), target), entry)
        if diff:
            found.append(f"{case.id}: {'; '.join(diff)}")
    return found


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name", TARGETS)
def test_every_case_is_exact_on_the_release(name: str, family: str) -> None:
    assert _gaps(name, family) == []


@pytest.mark.parametrize("name", TARGETS)
def test_every_shared_model_and_example_is_exact_on_the_release(name: str) -> None:
    target = target_named(name)
    chosen = models()
    gaps: list[Any] = []
    for key, entry in sorted(load_models(target.name).items()):
        if key in chosen:
            diff = differences(predict(chosen[key], target), entry)
            gaps += [f"{key}: {'; '.join(diff)}"] if diff else []
    assert gaps == []
