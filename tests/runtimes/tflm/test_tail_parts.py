"""The whole arena by section (`budget.arena_sections`) and the tail by part (`tail_parts`):
sections cover kTensorArenaSize exactly, head from the array's start and tail from its end; the
tail's parts add up to the tail; and the parts of each print_allocations() category add up to
what the real interpreter prints for it (the wheel: reference.json; real TFLM for Cortex-M
under QEMU: reference-cortex-m.json and the examples' cached measurements)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from arenalens.builds.build import Build
from arenalens.cli.common import load_model_argument
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.pipeline import analyze
from arenalens.planning import run_planner
from arenalens.report.build import build_report
from arenalens.report.data import report_document
from arenalens.runtimes.sections import ArenaSection
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import predict_setup
from arenalens.runtimes.tflm.setup_replay import Action
from arenalens.runtimes.tflm.tail_parts import (
    IO_POINTERS,
    KERNEL_BUFFERS,
    RESOURCE_VARIABLES,
    RUNTIME_OBJECTS,
    part_of,
    tail_breakdown,
)
from arenalens.tflite.reader import parse_model
from tests import tflm_synthetic
from tests.conformance.targets import TARGETS
from tests.conftest import SHARED_MODELS, shared_model_names, shared_reference
from tests.device_reference import corpus, examples


def check_sections(sections: tuple[ArenaSection, ...], required: int) -> None:
    """The invariants every TFLM arena_sections list keeps."""
    assert [s.name for s in sections if s.name != "setup"] == ["head", "tail"]
    assert sections[0].offset == 0
    for before, after in itertools.pairwise(sections):
        assert after.offset == before.end
    assert sections[-1].end == required
    for section in sections:
        assert sum(part.nbytes for part in section.parts) == section.nbytes, section.name
        assert all(part.nbytes > 0 for part in section.parts)


def _prediction(data: bytes, build: Build) -> Any:
    model = parse_model(data, "case")
    arena = arenas(model, build=build)[0]
    plan = run_planner("tflm_greedy", arena.problem)
    return predict_setup(model, arena, plan, build)


def _category_bytes(breakdown: Any) -> dict[str, tuple[int, int]]:
    """Category → (used, count) summed over the parts that belong to it."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for part in breakdown.parts:
        if part.category:
            found[part.category][0] += part.nbytes
            found[part.category][1] += part.count
    return {name: (used, count) for name, (used, count) in found.items()}


def _measured(categories: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {name: (value["used"], value["count"]) for name, value in categories.items()}


def test_parts_of_the_examples_add_up_to_the_measured_categories_on_cortex_m() -> None:
    """Every built-in example on every probe build: per category, the parts' bytes and counts
    are what real TFLM for Cortex-M printed (recording allocator, roomy arena)."""
    for target, models in examples().items():
        for model, figures in models.items():
            name = model.removeprefix("example:")
            prediction = _prediction(example_bytes(name), TARGETS[target].build)
            breakdown = tail_breakdown(prediction.sequence, prediction.aligned.arena_size)
            assert breakdown.nbytes == figures["tail"], (target, model)
            assert _category_bytes(breakdown) == _measured(figures["categories"]), (target, model)


def _corpus_params() -> list[Any]:
    pairs = [
        (target, model)
        for target, models in corpus().items()
        for model, figures in models.items()
        if figures.get("loads")
    ]
    reference = shared_reference()
    pairs += [
        ("host", name) for name, entry in sorted(reference.items()) if entry["tflm"].get("loads")
    ]
    if not pairs:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="no corpus"))]
    return [pytest.param(t, m, id=f"{t}-{m.removesuffix('.tflite')}") for t, m in sorted(pairs)]


@pytest.mark.parametrize(("target", "model"), _corpus_params())
def test_parts_of_the_corpus_add_up_to_the_measured_categories(target: str, model: str) -> None:
    """The shared corpus on the wheel and on every Cortex-M probe build."""
    figures = shared_reference()[model]["tflm"] if target == "host" else corpus()[target][model]
    prediction = _prediction((SHARED_MODELS / model).read_bytes(), TARGETS[target].build)
    breakdown = tail_breakdown(prediction.sequence, prediction.aligned.arena_size)
    assert breakdown.nbytes == figures["tail"]
    assert _category_bytes(breakdown) == _measured(figures["categories"])


def test_parts_keep_the_replay_categories_at_every_size() -> None:
    """At the minimal arena (where the tail's padding differs) the parts of each category still
    add up to what the replay counts there, and the whole breakdown to the tail printed there."""
    for name in sorted(EXAMPLES):
        for build in (TARGETS["host"].build, TARGETS["cortex-m55-cmsis-nn"].build):
            prediction = _prediction(example_bytes(name), build)
            minimum = prediction.at_minimum
            breakdown = tail_breakdown(prediction.sequence, minimum.arena_size)
            assert breakdown.nbytes == minimum.tail
            expected = {c: (used, count) for c, (used, _, count) in minimum.categories.items()}
            assert _category_bytes(breakdown) == expected


def test_every_persistent_allocation_has_a_named_part() -> None:
    """The classifier puts only the runtime's own objects into 'runtime objects', and tells
    resource variables and the interpreter's pointer arrays from kernel buffers."""
    data = tflm_synthetic.resource_variables_mixed()
    prediction = _prediction(data, TARGETS["host"].build)
    seen: dict[str, set[str]] = defaultdict(set)
    for step in prediction.sequence:
        if step.action is Action.PERSISTENT:
            seen[part_of(step).name].add(step.what)
    assert seen[RUNTIME_OBJECTS.name] == {
        "allocator and planner",
        "builtin allocator",
        "subgraph allocations",
    }
    assert any("table" in what for what in seen[RESOURCE_VARIABLES.name])
    assert any("resource variable '" in what for what in seen[RESOURCE_VARIABLES.name])
    assert seen[IO_POINTERS.name] == {"input tensor pointers", "output tensor pointers"}
    assert not any("resource variable" in what for what in seen[KERNEL_BUFFERS.name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_sections_cover_the_minimal_arena(name: str) -> None:
    for target in ("host", "cortex-m7-reference", "cortex-m55-cmsis-nn"):
        build = TARGETS[target].plain if TARGETS[target].device else TARGETS[target].build
        model = parse_model(example_bytes(name), name)
        budget = analyze(model, build=build).budget
        check_sections(budget.sections, budget.required_bytes)
        head, *_, tail = budget.sections
        assert head.nbytes == budget.parts["head"]
        assert tail.nbytes == budget.parts["tail_at_minimum"]


REPORT_BUILDS = ("host", "cortex-m7/reference", "cortex-m55/cmsis-nn")


def _report_models() -> list[Any]:
    names = [f"example:{name}" for name in sorted(EXAMPLES)]
    names += [str(SHARED_MODELS / name) for name in shared_model_names()]
    return [pytest.param(name, id=Path(name).stem.removeprefix("example:")) for name in names]


@pytest.mark.parametrize("argument", _report_models())
def test_report_documents_cover_the_number_to_declare(argument: str) -> None:
    """`report --json`'s arena_sections on every example and shared model, on the wheel, a
    Cortex-M reference build and a CMSIS-NN build: they cover required_bytes exactly, and every
    plan's sections cover the number to declare with it."""
    model = load_model_argument(argument)
    for build in REPORT_BUILDS:
        analysis = analyze(model, build=build)
        document = report_document([build_report(analysis)])["reports"][0]
        sections = document["arena_sections"]
        assert sections[0]["offset"] == 0
        for before, after in itertools.pairwise(sections):
            assert after["offset"] == before["offset"] + before["bytes"]
        assert sum(section["bytes"] for section in sections) == document["required_bytes"]
        for section in sections:
            assert sum(part["bytes"] for part in section["parts"]) == section["bytes"]
        assert [s["name"] for s in sections if s["name"] != "setup"] == ["head", "tail"]
        tail = sections[-1]
        assert tail["bytes"] == document["required_parts"]["tail_at_minimum"]
        for plan in document["arenas"][0]["plans"]:
            assert sum(section["bytes"] for section in plan["sections"]) == plan["declare_bytes"]


def _live_models() -> list[Any]:
    synthetic = [
        "resource_variables_mixed",
        "svdf_with_variable_state",
        "fully_connected_per_channel",
    ]
    return [pytest.param(f"synthetic:{name}", id=name) for name in synthetic] + [
        pytest.param(f"example:{name}", id=name) for name in ("kws_ds_cnn", "fc_autoencoder")
    ]


def _live_model_bytes(argument: str) -> bytes:
    kind, name = argument.split(":", 1)
    return tflm_synthetic.SYNTHETIC_MODELS[name]() if kind == "synthetic" else example_bytes(name)


@pytest.mark.runtime
@pytest.mark.parametrize("argument", _live_models())
def test_arena_sections_are_what_the_interpreter_prints_at_the_minimal_arena(
    argument: str, tmp_path: Path
) -> None:
    """Live, on the tflite-micro wheel, through `report --json`'s document: arena_sections cover
    kTensorArenaSize exactly (the wheel sets the model up in it and not in one byte less), the
    head and tail sections are the head and tail the interpreter prints at that size (where the
    tail's padding differs from a roomy arena's), the setup section is the rest, and the tail's
    parts are the bytes of every print_allocations() category, part by part."""
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    data = _live_model_bytes(argument)
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    document = report_document([build_report(analyze(parse_model(data, argument)))])["reports"][0]
    required = document["required_bytes"]
    sections = {section["name"]: section for section in document["arena_sections"]}
    assert sum(section["bytes"] for section in sections.values()) == required
    real = probe(str(path), required)
    assert real.fits
    assert not probe(str(path), required - 1).fits
    assert (sections["head"]["bytes"], sections["tail"]["bytes"]) == (real.head, real.tail)
    assert sections["tail"]["offset"] + real.tail == required  # the tail ends the array
    setup = sections.get("setup", {"bytes": 0})["bytes"]
    assert setup == required - real.head - real.tail
    breakdown = tail_breakdown(_prediction(data, TARGETS["host"].build).sequence, real.arena_size)
    measured = {name: (c.used, c.count) for name, c in real.categories.items()}
    assert _category_bytes(breakdown) == measured
    assert {part["name"]: part["bytes"] for part in sections["tail"]["parts"]} == {
        part.name: part.nbytes for part in breakdown.parts
    }
