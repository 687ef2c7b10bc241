"""Live: real TFLM built for Cortex-M, run under QEMU (the probes in ../shared/tools/cortex-m),
against `arenalens plan --cpu --kernels` and the pinned corpus outcomes. Marked `probes`; needs
`qemu-system-arm` (installed by .ci/run) and the probes, and skips with the reason otherwise.
About 5 s per minimal-arena bisection, two per model (recording and plain allocator)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from arenalens.cli import main
from tests import tflm_synthetic
from tests.conformance.predict import predict
from tests.conformance.targets import PROBES, PROBES_REASON, TARGETS
from tests.conftest import SHARED_MODELS, SHARED_REASON
from tests.device_core import FIELDS, MODELS, cached, measure
from tests.device_reference import EXACT, corpus, differences, expected, outcome

pytestmark = pytest.mark.probes


@pytest.fixture(scope="module", autouse=True)
def _probes_available() -> None:
    if not (PROBES / "run.py").is_file():
        pytest.skip(PROBES_REASON)
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed (apt-get install qemu-system-arm)")


def test_plan_json_gives_the_probe_minimal_arena(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The number the README promises: plan --cpu --kernels --json → min_arena_bytes is what
    firmware (plain MicroAllocator) needs on that core with those kernels."""
    path = tmp_path / "add_n_int8.tflite"
    path.write_bytes(tflm_synthetic.add_n_int8())
    measured = measure(path, "cortex-m7-cmsis-nn")
    assert main(["plan", str(path), "--cpu", "cortex-m7", "--kernels", "cmsis-nn", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["build"]["name"] == "cortex-m7/cmsis-nn"
    assert document["build"]["allocator"] == "MicroAllocator"
    assert document["min_arena_bytes"] == measured["min_arena_plain"]
    assert document["head_bytes"] == measured["head"]
    assert document["tail_bytes"] == measured["tail_plain"]
    # The recording allocator's figures and categories too, through the conformance harness.
    mine = predict(path.read_bytes(), TARGETS["cortex-m7-cmsis-nn"])
    for name in ("head", "tail", "min_arena", "tail_plain", "min_arena_plain", "categories"):
        assert mine[name] == measured[name], name


def test_corpus_model_on_the_probe_matches_the_reference_file() -> None:
    """The probe reproduces the checked reference figures, and the prediction's outcome against
    the live measurement is the pinned one."""
    model = "tflite_micro__hello_world_int8.tflite"
    target = "cortex-m55-reference"
    if not corpus():
        pytest.skip(SHARED_REASON)
    measured = measure(SHARED_MODELS / model, target)
    recorded = corpus()[target][model]
    for name in ("head", "tail", "min_arena", "tail_plain", "min_arena_plain"):
        assert measured[name] == recorded[name], name
    pinned = [name for name, models in expected()[target].items() if model in models]
    found = outcome(predict((SHARED_MODELS / model).read_bytes(), TARGETS[target]), measured)
    assert [found] == pinned, differences(target, model)
    if found == EXACT:
        assert not differences(target, model)


def test_cached_core_figures_are_the_probe(tmp_path: Path) -> None:
    """tests/data/device_core.json (which the unit tests compare with) is what the probe says."""
    name, target = "io_2x3_i8", "cortex-m7-reference"
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(MODELS[name]())
    recorded = cached()[target][name]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded["sha256"]
    measured = measure(path, target)
    assert {f: measured[f] for f in FIELDS} == {f: recorded[f] for f in FIELDS}
    assert measured["categories"] == recorded["categories"]
