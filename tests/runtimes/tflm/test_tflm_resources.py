"""TFLM resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, CALL_ONCE): the variable
table, the buffers ASSIGN_VARIABLE allocates in Prepare, and the numbers the real interpreter
prints. The pinned numbers were measured on the `tflite_micro` pip package
(0.dev20261023182759, x86-64); the live tests (`runtime`) re-measure them."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.builds.build import device_build
from arenalens.pipeline import analyze
from arenalens.planning import run_planner
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import plan_facts, predict_setup
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.setup import setup_sequence
from arenalens.runtimes.tflm.setup_layout import HOST_64, PERSISTENT_BUFFERS, layout_for
from arenalens.runtimes.tflm.support import setup_failures
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import parse_model
from tests import tflm_synthetic as synthetic

Categories = dict[str, tuple[int, int, int]]

# name → head, tail, minimal arena_size, and print_allocations() categories (used, requested,
# count) at a roomy arena; at the minimal arena every model prints the same head and tail.
PINNED: dict[str, tuple[int, int, int, Categories]] = {
    "resource_variables_mixed": (
        96,
        3280,
        4144,
        {
            "TfLiteEvalTensor data": (432, 432, 18),
            "Persistent TfLiteTensor data": (128, 128, 2),
            "Persistent buffer data": (664, 425, 26),
            "NodeAndRegistration struct": (1408, 1408, 22),
        },
    ),
    "resource_variables_init_only": (
        416,
        2256,
        2896,
        {
            "TfLiteEvalTensor data": (288, 288, 12),
            "Persistent TfLiteTensor data": (128, 128, 2),
            "Persistent buffer data": (472, 340, 15),
            "NodeAndRegistration struct": (768, 768, 12),
        },
    ),
    "resource_variable_shared_handles": (
        96,
        1408,
        1744,
        {
            "TfLiteEvalTensor data": (120, 120, 5),
            "Persistent TfLiteTensor data": (128, 128, 2),
            "Persistent buffer data": (248, 172, 10),
            "NodeAndRegistration struct": (384, 384, 6),
        },
    ),
    "resource_handle_through_if": (
        160,
        1600,
        2288,
        {
            "TfLiteEvalTensor data": (240, 240, 10),
            "Persistent TfLiteTensor data": (192, 192, 3),
            "Persistent buffer data": (224, 156, 10),
            "NodeAndRegistration struct": (384, 384, 6),
        },
    ),
    "resource_variable_in_while_body": (
        288,
        1984,
        2880,
        {
            "TfLiteEvalTensor data": (360, 360, 15),
            "Persistent TfLiteTensor data": (256, 256, 4),
            "Persistent buffer data": (344, 296, 11),
            "NodeAndRegistration struct": (448, 448, 7),
        },
    ),
    # Before resource variables were modelled: tail 8,352, persistent buffers 2,404 B used,
    # minimal arena 13,728.
    "streaming_state": (
        5376,
        11008,
        16384,
        {
            "TfLiteEvalTensor data": (1464, 1464, 61),
            "Persistent TfLiteTensor data": (128, 128, 2),
            "Persistent buffer data": (5592, 5304, 37),
            "NodeAndRegistration struct": (2624, 2624, 41),
        },
    ),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_setup_prediction_matches_the_measured_interpreter(name: str) -> None:
    head, tail, minimum, categories = PINNED[name]
    model = parse_model(synthetic.SYNTHETIC_MODELS[name](), name)
    arena = arenas(model)[0]
    prediction = predict_setup(model, arena, run_planner("tflm_greedy", arena.problem))
    assert (prediction.head, prediction.tail) == (head, tail)
    assert dict(prediction.aligned.categories) == categories
    assert prediction.minimal_arena == minimum
    assert (prediction.at_minimum.head, prediction.at_minimum.tail) == (head, tail)
    assert prediction.unknown_kernels == ()


def test_streaming_fixture_table_ids_and_buffers() -> None:
    model = parse_model(synthetic.SYNTHETIC_MODELS["streaming_state"](), "streaming")
    resources = resource_variables(model)
    assert resources.capacity == 4
    assert resources.names == tuple((None, f"state_{k}") for k in range(4))
    # Main's ASSIGN_VARIABLEs allocate (Prepare runs subgraph 0 first); the init subgraph's find
    # every buffer there. Each state is 8 frames of 32 floats.
    assert {key: (b.variable, b.tensor.name) for key, b in resources.buffers.items()} == {
        (0, 11): (0, "layer_0/next_state"),
        (0, 17): (1, "layer_1/next_state"),
        (0, 23): (2, "layer_2/next_state"),
        (0, 29): (3, "layer_3/next_state"),
    }
    assert resources.failures == ()


def test_buffers_follow_prepare_order_when_only_the_init_subgraph_assigns() -> None:
    model = parse_model(synthetic.resource_variables_init_only(), "init_only")
    resources = resource_variables(model)
    # Ids come from main's VAR_HANDLEs (p, q, never); the init subgraph assigns q, then p.
    assert resources.names == ((None, "p"), (None, "q"), (None, "never"))
    assert [(key, b.variable) for key, b in resources.buffers.items()] == [((1, 1), 1), ((1, 3), 0)]


def test_handles_that_arrive_as_subgraph_inputs_allocate_nothing() -> None:
    model = parse_model(synthetic.resource_handle_through_if(), "if")
    resources = resource_variables(model)
    assert (resources.capacity, dict(resources.buffers)) == (1, {})
    # The branches' handle inputs are ordinary 4-byte tensors: planned in the head.
    names = sorted((b.subgraph, b.name) for b in arenas(model)[0].buffers.values())
    assert (1, "h") in names and (2, "h") in names and (0, "s/handle") not in names


def test_a_body_that_binds_its_own_handle_allocates_in_its_prepare() -> None:
    model = parse_model(synthetic.resource_variable_in_while_body(), "while")
    resources = resource_variables(model)
    assert [(key, b.tensor.name) for key, b in resources.buffers.items()] == [((2, 3), "total")]


def test_var_handle_outputs_are_never_planned() -> None:
    model = parse_model(synthetic.resource_variables_mixed(), "mixed")
    planned = {(b.subgraph, b.name) for b in arenas(model)[0].buffers.values()}
    assert not any(name.endswith("/handle") for _, name in planned)


def test_the_table_is_allocated_right_after_the_allocator() -> None:
    model = parse_model(synthetic.resource_variables_mixed(), "mixed")
    arena = arenas(model)[0]
    plan = run_planner("tflm_greedy", arena.problem)
    facts = plan_facts(model, arena, plan)
    cortex_m = layout_for(device_build("cortex-m7"))
    for layout, table, entry in ((HOST_64, 16, 40), (cortex_m, 12, 20)):
        steps = setup_sequence(model, facts, layout)
        assert [(s.nbytes, s.alignment, s.category) for s in steps[1:3]] == [
            (table, 16, PERSISTENT_BUFFERS),
            (entry * 4, 16, PERSISTENT_BUFFERS),
        ]
    steps = setup_sequence(model, facts)
    buffers = [s for s in steps if s.what.startswith("Prepare") and "resource variable" in s.what]
    # int8 1x7, int16 3x5, float32 2x9, int64 1x3: sizes that are not multiples of 16.
    assert [s.nbytes for s in buffers] == [7, 30, 72, 24]


def containers_model(first: str | None, second: str | None) -> bytes:
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    source = main.add_tensor("x", [1, 6])
    result = main.add_tensor("y", [1, 6])
    handles = []
    for container in (first, second):
        handle = main.add_tensor("h", [1], "RESOURCE")
        options = {"shared_name": "s"} | ({} if container is None else {"container": container})
        main.add_operator("VAR_HANDLE", [], [handle], options=options)
        handles.append(handle)
    main.add_operator("ASSIGN_VARIABLE", [handles[0], source], [])
    main.add_operator("RELU", [source], [result])
    main.add_operator("ASSIGN_VARIABLE", [handles[1], result], [])
    main.set_inputs([source])
    main.set_outputs([result])
    return builder.build()


# (first container, second container) → a phrase of the predicted setup failure, or None.
CONTAINER_CASES: dict[tuple[str | None, str | None], str | None] = {
    ("c1", "c1"): None,
    ("c1", None): None,  # a null container matches any
    ("c1", "c2"): "Maximum resource variable count (1) reached",  # Python counts names only
    (None, "c1"): "null container",  # strcmp against a null container: the pip build crashes
}


@pytest.mark.parametrize(("first", "second"), sorted(CONTAINER_CASES, key=str))
def test_container_rules_predict_setup_failures(first: str | None, second: str | None) -> None:
    failures = setup_failures(parse_model(containers_model(first, second), "containers"))
    expected = CONTAINER_CASES[(first, second)]
    if expected is None:
        assert failures == []
    else:
        assert len(failures) == 1 and expected in failures[0]


# ---------------------------------------------------------------------------------------------
# Live: the real interpreter


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(PINNED))
def test_pinned_numbers_are_what_the_interpreter_prints(name: str, tmp_path: Path) -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    head, tail, minimum, categories = PINNED[name]
    path = str(tmp_path / f"{name}.tflite")
    Path(path).write_bytes(synthetic.SYNTHETIC_MODELS[name]())
    real = probe(path, 1 << 20)
    assert (real.head, real.tail) == (head, tail)
    assert {k: (c.used, c.requested, c.count) for k, c in real.categories.items()} == categories
    at_minimum = probe(path, minimum)
    assert (at_minimum.head, at_minimum.tail) == (head, tail)
    # Fit is monotone only within one residue mod 16: check every size of the 16 below.
    assert not any(probe(path, size).fits for size in range(minimum - 16, minimum))


@pytest.mark.runtime
def test_preserve_all_tensors_minimal_arena_with_resource_variables(tmp_path: Path) -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    path = str(tmp_path / "mixed.tflite")
    Path(path).write_bytes(synthetic.resource_variables_mixed())
    model = analyze(path, runtime="tflm").model
    arena = arenas(model)[0]
    minimum = predict_setup(model, arena, run_planner("tflm_linear", arena.problem)).minimal_arena
    assert probe(path, minimum, preserve_all_tensors=True).fits
    assert not probe(path, minimum - 1, preserve_all_tensors=True).fits


@pytest.mark.runtime
@pytest.mark.parametrize(("first", "second"), sorted(CONTAINER_CASES, key=str))
def test_container_failures_match_the_interpreter(
    first: str | None, second: str | None, tmp_path: Path
) -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.probe import probe

    path = str(tmp_path / "containers.tflite")
    Path(path).write_bytes(containers_model(first, second))
    real = probe(path, 1 << 20)
    expected = CONTAINER_CASES[(first, second)]
    assert real.fits == (expected is None)
    if expected is not None and "count" in expected:
        assert expected in real.log
