"""The split setups (`runtimes/tflm/two_buffers.py`) against real TFLM: the two-buffer
`MicroAllocator::Create(persistent, P, non_persistent, N)` and resource variables on their own
allocator, measured on probes and cached in tests/data/two_buffers.json (`python -m
tests.two_buffers` remakes it). Every minimum must be exact, above all never low on the
persistent side, where TFLM does not reliably fail."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arenalens.builds.build import build_named
from arenalens.planning.registry import run_planner
from arenalens.runtimes.arena_split import ArenaSplit
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import budget
from arenalens.tflite.reader import parse_model
from tests.two_buffers import CACHE, ESP_VARS, MODELS, clean, smallest

MEASURED: dict[str, Any] = json.loads(CACHE.read_text())


def _split(data: bytes, build_name: str) -> ArenaSplit:
    model = parse_model(data, "model")
    build = build_named(build_name).with_recording(False)
    arena = arenas(model, build=build)[0]
    plan = run_planner("tflm_greedy", arena.problem)
    found = budget(model, [arena], [plan], build=build).split
    assert found is not None
    return found


def _model_bytes(name: str) -> bytes | None:
    if name.startswith("fixture:"):
        from tests.fixtures.bank_models import BANK_MODELS

        return dict(BANK_MODELS)[name.removeprefix("fixture:")]()
    if name.startswith("case:"):
        from tests.conformance.cases import case_by_id

        return case_by_id(name.removeprefix("case:")).model()
    path = MODELS / name
    return path.read_bytes() if path.exists() else None


def _cases(probe: str) -> list[Any]:
    entry = MEASURED.get(probe, {})
    return [
        pytest.param(probe, entry["build"], name, figures, id=f"{probe}:{name}")
        for name, figures in sorted(entry.get("models", {}).items())
        if figures.get("status") == "ok"
    ]


TWO_BUFFER_PROBES = [name for name in MEASURED if name != ESP_VARS]


@pytest.mark.parametrize(
    ("probe", "build_name", "name", "figures"),
    [case for probe in TWO_BUFFER_PROBES for case in _cases(probe)],
)
def test_two_buffer_minima_are_the_probes(
    probe: str, build_name: str, name: str, figures: dict[str, Any]
) -> None:
    data = _model_bytes(name)
    if data is None:
        pytest.skip(f"{name} not in {MODELS}")
    import hashlib

    assert hashlib.sha256(data).hexdigest() == figures["sha256"], "model changed: re-measure"
    assert figures["pair_ok"], "the pair of minima must set up together"
    two = _split(data, build_name).two
    assert (two.persistent_bytes, two.non_persistent_bytes) == (
        figures["persistent_min"],
        figures["non_persistent_min"],
    )
    assert (two.tail_bytes, two.head_bytes) == (figures["tail"], figures["head"])


@pytest.mark.parametrize(("probe", "build_name", "name", "figures"), _cases(ESP_VARS))
def test_variables_apart_are_the_probes(
    probe: str, build_name: str, name: str, figures: dict[str, Any]
) -> None:
    import hashlib

    data = _model_bytes(name)
    assert data is not None
    assert hashlib.sha256(data).hexdigest() == figures["sha256"], "model changed: re-measure"
    split = _split(data, build_name)
    assert split.variables is not None
    assert split.variables.single_bytes == figures["main_min"]
    assert split.variables.arena_bytes == figures["var_arena_min"]


def test_measurements_cover_the_corpus_and_generated_cases() -> None:
    """The cache holds shared models, generated cases (resource variables among them) and the
    placement tests' models, all with the pair of minima setting up together."""
    for probe in TWO_BUFFER_PROBES:
        models = MEASURED[probe]["models"]
        assert any(name.startswith("case:") for name in models)
        assert any(name.startswith("case:VAR_HANDLE") for name in models)
        assert any(name.startswith("fixture:") for name in models)
        assert any(name.endswith(".tflite") for name in models)
        assert all(found.get("pair_ok", True) for found in models.values())


@pytest.mark.parametrize(
    ("probe", "name"),
    [
        pytest.param(probe, name, id=f"{probe}:{name}")
        for probe in TWO_BUFFER_PROBES
        for name, found in sorted(MEASURED[probe]["models"].items())
        if found.get("status") != "ok"
    ],
)
def test_what_the_probe_cannot_set_up_is_predicted_to_fail(probe: str, name: str) -> None:
    """A model that sets up at no size on the probe (a refusal, an abort that hangs) is one
    arenalens says the build cannot run."""
    from arenalens.runtimes.tflm.support import support

    data = _model_bytes(name)
    if data is None:
        pytest.skip(f"{name} not in {MODELS}")
    build = build_named(MEASURED[probe]["build"]).with_recording(False)
    assert not support(parse_model(data, "model"), build).sets_up


def test_a_clean_run_is_only_a_clean_run() -> None:
    ok = "RESULT status=ok allocator=two guards=ok null_write=0 head=1 tail=2"
    assert clean(ok)
    assert not clean(ok.replace("null_write=0", "null_write=1"))
    assert not clean(ok.replace("guards=ok", "guards=clobbered"))
    assert not clean("Failed to allocate tail memory. Requested: 16\n" + ok)
    assert not clean("TIMEOUT")


@pytest.mark.parametrize("minimum", [0, 1, 15, 16, 17, 1000, 40_928, 1 << 20])
@pytest.mark.parametrize("start", [1, 16, 999, 50_000])
def test_smallest_finds_the_threshold_from_anywhere(minimum: int, start: int) -> None:
    assert smallest(lambda size: size >= minimum, start) == minimum


@pytest.mark.parametrize(
    "build_name", ["cortex-m7/cmsis-nn", "cortex-m4/reference", "cortex-m55", "esp32s3/esp-nn"]
)
def test_the_split_from_the_settled_sequence_is_the_whole_ones(build_name: str) -> None:
    """A check reads the split from the sequence `settle` walked (condensed runs); a report's
    written steps give the same buffers, on every generated case and bank fixture."""
    from arenalens.runtimes.tflm.two_buffers import arena_split
    from tests.conformance.cases import all_cases
    from tests.fixtures.bank_models import BANK_MODELS

    build = build_named(build_name)
    makers = [case.model for case in all_cases()[::7]] + [make for _, make in BANK_MODELS]
    condensed = 0
    for make in makers:
        model = parse_model(make(), "model")
        arena = arenas(model, build=build)[0]
        found = budget(model, [arena], [run_planner("tflm_greedy", arena.problem)], build=build)
        prediction, count = found.split_of.args  # type: ignore[attr-defined]
        whole = arena_split(
            prediction.sequence,
            prediction.layout,
            single_bytes=prediction.minimal_arena,
            variable_count=count,
        )
        assert found.split == whole
        condensed += len(prediction.condensed) < len(prediction.sequence)
    assert condensed > len(makers) // 2  # most settled sequences are condensed
