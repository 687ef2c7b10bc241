"""Regression tests for inputs the fuzzer found: each must end in a result or ModelError, quickly.

One test per bug, named after the symptom; the input is built here (small, readable) or by the
crafter in `fuzz.hostile` that found it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest
from fuzz.harness import deadline

from arenalens import ModelError, load_model
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.planning.litert_arena import NEVER_FREED
from arenalens.planning.offset_index import use_offset_index
from arenalens.runtimes.litert.lifetimes import litert_timeline
from arenalens.runtimes.tflm.lifetimes import tflm_timeline
from arenalens.tflite.builder import ModelBuilder
from tests.hang_guard import HEADROOM, no_hang, wall_bound


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block runs longer than `seconds`."""
    with deadline(wall_bound(seconds * HEADROOM * 4)), no_hang(seconds):
        yield


def in_place_self_write(opcode: str) -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, y = (graph.add_tensor(name, [1, 8]) for name in ("x", "a", "y"))
    graph.add_operator("RELU", [x], [a])
    inputs = [a, a] if opcode in ("ADD", "MUL") else [a]
    graph.add_operator(opcode, inputs, [a])  # writes the tensor it reads
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


@pytest.mark.parametrize("opcode", ["RESHAPE", "SOFTMAX", "ADD"])
def test_litert_in_place_operator_writing_its_input_does_not_hang(opcode: str) -> None:
    # Found by `in_place_loops`: the alias map got an edge a -> a and root() never returned.
    model = load_model(in_place_self_write(opcode))
    with within(1):
        timeline = litert_timeline(model)
    assert timeline.of(0, 1).alias_of is None


def test_litert_alias_chain_that_loops_back_does_not_hang() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b, y = (graph.add_tensor(name, [1, 8]) for name in ("x", "a", "b", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RESHAPE", [a], [b])  # b lives in a's bytes
    graph.add_operator("RESHAPE", [b], [a])  # ... and a in b's: a loop of aliases
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    with within(1):
        timeline = litert_timeline(model)
    assert timeline.of(0, 2).alias_of == 1


def nested_calls(depth: int, calls_per_level: int, opcode: str = "CALL_ONCE") -> bytes:
    """Subgraph i calls subgraph i + 1 `calls_per_level` times."""
    builder = ModelBuilder()
    graphs = [builder.add_subgraph(f"g{i}") for i in range(depth)]
    for index, graph in enumerate(graphs):
        x = graph.add_tensor("x", [1, 8])
        y = graph.add_tensor("y", [1, 8])
        if index + 1 < depth:
            for _ in range(calls_per_level):
                if opcode == "IF":
                    flag = graph.add_tensor("flag", [1], "BOOL")
                    graph.add_operator(
                        "IF",
                        [flag, x],
                        [graph.add_tensor("r", [1, 8])],
                        options={
                            "then_subgraph_index": index + 1,
                            "else_subgraph_index": index + 1,
                        },
                    )
                else:
                    graph.add_operator(
                        "CALL_ONCE", [], [], options={"init_subgraph_index": index + 1}
                    )
        graph.add_operator("RELU", [x], [y])
        graph.set_inputs([x])
        graph.set_outputs([y])
    return builder.build()


def test_tflm_deep_control_flow_does_not_hit_the_recursion_limit() -> None:
    # Found by `deep_control_flow`: the marker recursed once per nesting level (RecursionError).
    model = load_model(nested_calls(3000, 1))
    with within(5):
        timeline = tflm_timeline(model)
    # 3000 RELUs, 2999 CALL_ONCEs, 2999 subgraph entries, and step 0.
    assert len(timeline.steps) == 3000 + 2 * 2999 + 1
    # The innermost RELU runs after every call and entry above it.
    assert timeline.of(2999, 1).first == 2 * 2999 + 1


def test_tflm_exponential_control_flow_is_refused_quickly() -> None:
    # Found by `control_flow_fan_out`: each subgraph called twice per level, 40 levels deep, is a
    # walk of 2**40 steps; TFLM itself would take as long. Refused up front.
    model = load_model(nested_calls(40, 2))
    with within(1), pytest.raises(ModelError, match="control flow expands to more than"):
        tflm_timeline(model)


def test_tflm_step_count_matches_the_walk() -> None:
    from fuzz.seeds import control_flow_model

    from arenalens.runtimes.tflm.lifetimes import tflm_step_count

    for data in (nested_calls(6, 2), nested_calls(5, 3, "IF"), control_flow_model()):
        model = load_model(data)
        assert tflm_step_count(model, 10**9) == len(tflm_timeline(model).steps) - 1


def test_operators_sharing_one_long_inputs_vector_are_refused() -> None:
    # Found by `shared_vectors`: 20,000 operators pointing at one 20,000-entry inputs vector
    # (300 KB) are 400 million tensor references; the checker and lifetimes ran for minutes.
    from fuzz.hostile import shared_inputs_model

    data = shared_inputs_model(5_000, 5_000)  # 25 million references from 300 KB
    assert len(data) < 400_000
    with within(2), pytest.raises(ModelError, match="shared many times over"):
        load_model(data)


def test_subgraph_entries_sharing_one_table_are_refused() -> None:
    # Found by `shared_tables`: 10,000 subgraph entries pointing at one 10,000-tensor subgraph.
    from fuzz.hostile import shared_subgraphs_model

    data = shared_subgraphs_model(2_000, 2_000)  # 4 million tensors from 200 KB
    with within(2), pytest.raises(ModelError, match="shared many times over"):
        load_model(data)


def test_tensors_sharing_one_long_name_are_refused() -> None:
    import struct

    from fuzz.layout import SiteKind, find_layout

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    names = [graph.add_tensor("n" * 100_000 if i == 0 else f"t{i}", [1]) for i in range(10_000)]
    graph.set_inputs(names[:1])
    data = bytearray(builder.build())
    # Point every tensor's name at the long name (strings are written before their tables).
    sites = find_layout(bytes(data), max_sites=1 << 22).of_kind(SiteKind.UOFFSET)
    name_sites = [s for s in sites if s.label == "Tensor.name"]
    long_name = max(
        (s.position + struct.unpack_from("<I", data, s.position)[0] for s in name_sites),
        key=lambda p: struct.unpack_from("<I", data, p)[0],
    )
    for site in name_sites:
        if site.position < long_name:
            struct.pack_into("<I", data, site.position, long_name - site.position)
    with within(2), pytest.raises(ModelError, match="shared many times over"):
        load_model(bytes(data))  # 10,000 names of 100 KB: 1 GB of text from 300 KB


def test_legitimate_large_models_stay_under_the_decode_budget() -> None:
    from tests.fixtures.synthetic import SYNTHETIC_SHAPES, synthetic_model

    for shape in SYNTHETIC_SHAPES:
        load_model(synthetic_model(shape, 5_000, width=1))


def test_many_offline_plan_entries_decode_only_the_last() -> None:
    import struct

    from arenalens.tflite.reader import OFFLINE_PLAN_METADATA

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 8]), graph.add_tensor("y", [1, 8])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    offsets = struct.pack("<100000i", *([-1] * 100_000))
    big = builder.add_buffer(struct.pack("<iii", 1, 1, 100_000) + offsets)
    for _ in range(20_000):
        builder.metadata.append((OFFLINE_PLAN_METADATA, big))
    with within(3):
        model = load_model(builder.build())
    assert model.offline_plan is not None
    assert len(model.offline_plan.offsets) == 100_000


def test_litert_tensor_written_by_two_operators_is_placed_once() -> None:
    # Found by `odd_graph_io`: the tensor sat in two nodes' allocation sets, was placed twice,
    # and building the arena Problem raised "buffer ids must be unique".
    from arenalens.pipeline import analyze

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, y = (graph.add_tensor(name, [1, 8]) for name in ("x", "a", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("TANH", [x], [a])  # a second producer of a
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    analysis = analyze(load_model(builder.build()), runtime="litert")
    ids = [b.id for b in analysis.primary.arena.problem.buffers]
    assert sorted(ids) == sorted(set(ids)) and 1 in ids


def reference_hash_set_order(values: list[int]) -> list[int]:
    """The list version of the libstdc++ node-list emulation (O(n) per insert), for comparison."""
    from arenalens.runtimes.litert.libstdcxx import BUCKET_COUNT_CHAIN

    order: list[int] = []
    buckets, chain_position = 1, -1

    def insert(into: list[int], value: int, count: int) -> None:
        for position, other in enumerate(into):
            if other % count == value % count:
                into.insert(position, value)
                return
        into.insert(0, value)

    for value in values:
        if value in order:
            continue
        if len(order) + 1 > (0 if chain_position < 0 else buckets):
            chain_position += 1
            buckets = BUCKET_COUNT_CHAIN[chain_position]
            rehashed: list[int] = []
            for old in order:
                insert(rehashed, old, buckets)
            order = rehashed
        insert(order, value, buckets)
    return order


def test_hash_set_order_matches_the_list_emulation() -> None:
    from arenalens.runtimes.litert.libstdcxx import UnorderedIntSet

    rng = random.Random(0)
    for _ in range(300):
        values = [rng.randrange(rng.choice((20, 100, 5000))) for _ in range(rng.randrange(80))]
        assert list(UnorderedIntSet(values)) == reference_hash_set_order(values)


def test_hash_set_with_many_tensors_is_fast() -> None:
    # Found by `wide_operators`: one node writing 20,000 tensors; each insertion scanned the list.
    from arenalens.runtimes.litert.libstdcxx import UnorderedIntSet

    with within(1):
        values = UnorderedIntSet(range(0, 200_000, 7))
    assert len(values) == len(set(values)) == 28_572


def random_problem(rng: random.Random, count: int, *, fixed: bool = True) -> Problem:
    buffers = []
    for buffer_id in range(count):
        start = rng.randrange(-1, 20)
        end = NEVER_FREED if rng.random() < 0.2 else start + rng.randrange(0, 8)
        size = rng.choice((0, 1, 4, 64, 100, rng.randrange(1, 5000)))
        offset = rng.choice((0, 64, 128, 1000)) if fixed and rng.random() < 0.05 else None
        buffers.append(Buffer(buffer_id, start, end, size, offset))
    order = list(range(count))
    rng.shuffle(order)
    return Problem(tuple(buffers), alignment=rng.choice((1, 16, 64)), order=tuple(order))


def test_litert_arena_array_scan_matches_the_index() -> None:
    from arenalens.planning import litert_arena as module

    rng = random.Random(0)
    for _ in range(200):
        problem = random_problem(rng, rng.randrange(1, 120), fixed=False)
        expected = dict(module.litert_arena(problem))  # small: the index path
        assert not use_offset_index(problem)
        assert module._place_with_arrays(problem, module.placement_order(problem)) == expected


def test_tflm_greedy_array_scan_matches_the_index() -> None:
    from arenalens.planning import tflm_greedy as module

    rng = random.Random(1)
    for _ in range(200):
        problem = random_problem(rng, rng.randrange(1, 120))
        assert module._place_with_arrays(problem) == dict(module.tflm_greedy(problem))


@pytest.mark.parametrize("planner", ["litert_arena", "tflm_greedy"])
def test_interval_index_forms_agree(planner: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # IntervalIndex keeps per-step lists for short lifetimes and a segment tree otherwise; both
    # must give the replica planners the same offsets.
    from arenalens.planning import litert_arena, offset_index, tflm_greedy

    function = tflm_greedy.tflm_greedy if planner == "tflm_greedy" else litert_arena.litert_arena
    rng = random.Random(4)
    for _ in range(150):
        problem = random_problem(rng, rng.randrange(1, 150), fixed=planner == "tflm_greedy")
        monkeypatch.setattr(offset_index, "AREA_PER_BUFFER", 1 << 30)  # per-step lists
        by_step = dict(function(problem))
        monkeypatch.setattr(offset_index, "AREA_PER_BUFFER", -1)  # segment tree
        assert dict(function(problem)) == by_step


@pytest.mark.parametrize("planner", ["litert_arena", "tflm_greedy"])
def test_replica_planners_with_twenty_thousand_live_buffers_are_fast(planner: str) -> None:
    # Found by `wide_operators` / `many_live_buffers`: thousands of buffers live together made
    # SimpleMemoryArena's replica sort every live buffer for every placement (minutes).
    problem = Problem(
        tuple(Buffer(i, i % 3, 10, 64 + (i % 7) * 16) for i in range(20_000)), alignment=64
    )
    with within(12):  # about 1 s on an idle core; minutes before
        plan = run_planner(planner, problem)
    assert plan.arena_size >= problem.lower_bound()


def test_malformed_options_decoded_after_loading_raise_model_error() -> None:
    # Found by mutating `Options` vtables: options decode lazily (after load_model returned),
    # and a bad table raised a bare ValueError from the LiteRT Prepare rules.
    import struct

    from fuzz.layout import SiteKind, find_layout

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 8, 8, 4]), graph.add_tensor("y", [1, 8, 8, 4])
    graph.add_operator("MAX_POOL_2D", [x], [y], options={"filter_width": 2, "filter_height": 2})
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = bytearray(builder.build())
    site = next(
        s for s in find_layout(bytes(data)).of_kind(SiteKind.SOFFSET) if s.label == "Options.vtable"
    )
    struct.pack_into("<i", data, site.position, -len(data))  # vtable past the end of the file
    model = load_model(bytes(data))
    with pytest.raises(ModelError, match="malformed operator options"):
        dict(model.subgraphs[0].operators[0].options)


@pytest.mark.parametrize("input_shape", [[1], [], [1, 8, 8]])
def test_litert_prepare_refuses_a_conv_with_the_wrong_input_rank(input_shape: list[int]) -> None:
    # Found by mutating a tensor's vtable in str_ww_ref_model: CONV_2D's input lost its shape,
    # and the im2col rule indexed dims(0)[0] (IndexError). The real Prepare refuses such a node.
    import numpy as np

    from arenalens.pipeline import analyze

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", input_shape)
    weights = graph.add_constant("w", np.zeros((4, 3, 3, 4), dtype="float32"))
    y = graph.add_tensor("y", [1, 8, 8, 4])
    graph.add_operator("CONV_2D", [x, weights, -1], [y], options={"padding": "SAME"})
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    try:
        analyze(model, runtime="litert")  # a rule may accept what it does not index into
    except ModelError as error:
        assert "Prepare would refuse" in str(error)


def test_a_huge_vtable_shared_by_many_tables_is_read_quickly() -> None:
    # Found by `shared_tables` + a mutated Operator.vtable_bytes (52,484): every operator shares
    # the vtable, and each table view unpacked all 26,240 claimed field offsets.
    import struct

    from fuzz.layout import SiteKind, find_layout

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    last = graph.add_tensor("x", [1, 4])
    graph.set_inputs([last])
    for index in range(5000):
        output = graph.add_tensor(f"t{index}", [1, 4])
        graph.add_operator("RELU", [last], [output])
        last = output
    graph.set_outputs([last])
    data = bytearray(builder.build())
    sites = find_layout(bytes(data), max_sites=1 << 20).of_kind(SiteKind.VTABLE_BYTES)
    for site in sites:
        if site.label == "Operator.vtable_bytes":
            room = len(data) - site.position
            struct.pack_into("<H", data, site.position, min(0xFFFE, room - room % 2))
    with within(2), suppress(ModelError):
        load_model(bytes(data))


def test_litert_arena_refuses_fixed_buffers_instead_of_overlapping_them() -> None:
    # Found by the fuzz seeds once TFLM arenas (with offline-planned buffers) reached every
    # planner: litert_arena placed an online buffer before a fixed one and they overlapped.
    # LiteRT has no offline plans, so the replica now refuses them (PlanError, a clean message).
    from arenalens.errors import PlanError

    problem = Problem(
        (Buffer(2, 2, 3, 32), Buffer(3, 3, 4, 32, fixed_offset=0)), alignment=16, order=(2, 3)
    )
    with pytest.raises(PlanError, match="cannot honour fixed offsets"):
        run_planner("litert_arena", problem)


def reference_breadth_order(problem: Problem) -> list[int]:
    """greedy_by_breadth's order as first written (O(steps × n)), for comparison."""
    live = [b for b in problem.buffers if b.size and b.fixed_offset is None]
    steps = sorted({b.start for b in live})
    breadth = {step: sum(b.size for b in live if b.start <= step <= b.end) for step in steps}
    ordered: list[int] = []
    seen: set[int] = set()
    for step in sorted(steps, key=lambda s: (-breadth[s], s)):
        here = [b for b in live if b.start <= step <= b.end and b.id not in seen]
        for buffer in sorted(here, key=lambda b: (-b.size, b.start, b.id)):
            ordered.append(buffer.id)
            seen.add(buffer.id)
    ordered.extend(b.id for b in sorted(problem.buffers, key=lambda b: b.id) if b.id not in seen)
    return ordered


def test_breadth_order_matches_the_per_step_scan() -> None:
    from arenalens.planning.greedy_by_breadth import breadth_order

    rng = random.Random(2)
    for _ in range(300):
        problem = random_problem(rng, rng.randrange(0, 150))
        assert breadth_order(problem) == reference_breadth_order(problem)


@pytest.mark.parametrize("index", ["intervals", "arrays"])
def test_placement_indexes_match_the_list_scan(index: str) -> None:
    from arenalens.planning import placement

    rng = random.Random(3)
    for _ in range(200):
        problem = random_problem(rng, rng.randrange(1, 120))
        if any(b.end < b.start for b in problem.buffers):
            continue  # the indexes are used only when every buffer is live at some step
        order = [b.id for b in problem.buffers]
        rng.shuffle(order)
        for fit in placement.Fit:
            expected = placement.place_in_order(problem, order, fit=fit)  # small: list scan
            placed: placement._PlacedIntervals | placement._PlacedArrays = (
                placement._PlacedIntervals(problem.buffers)
                if index == "intervals"
                else placement._PlacedArrays(len(problem.buffers))
            )
            got: dict[int, int] = {}
            for buffer in sorted(problem.buffers, key=lambda b: b.id):
                if buffer.fixed_offset is not None:
                    got[buffer.id] = buffer.fixed_offset
                    placed.add(buffer, buffer.fixed_offset)
            for buffer_id in order:
                buffer = problem.by_id[buffer_id]
                if buffer.fixed_offset is None:
                    got[buffer_id] = placed.choose(buffer, problem.alignment, fit)
                    placed.add(buffer, got[buffer_id])
            assert got == expected


def test_every_planner_is_fast_on_a_twenty_thousand_operator_chain() -> None:
    # Measured on the scaling benchmark: greedy_by_breadth and hillclimb took 3.5-4 s on the
    # 10,000-operator chain (a Python scan of every placed buffer per placement, and breadths
    # recomputed per step). Quadratic code takes 15 s here; the planners now take under 1 s.
    from arenalens.planning import planner_names
    from arenalens.runtimes.tflm import arena as tflm
    from tests.fixtures.synthetic import synthetic_model

    problem = tflm.arenas(load_model(synthetic_model("chain", 20_000)))[0].problem
    for name in planner_names():
        knobs = {"effort": 2.0} if name in ("optimal", "best") else {}
        with no_hang(6, name):
            run_planner(name, problem, **knobs)


@pytest.mark.parametrize("name", ["beam", "exact", "auto"])
def test_reorderers_keep_to_their_effort_on_wide_graphs(name: str) -> None:
    # Found by `many_live_buffers` in the reorder stage: 1,500 operators ready at once; the beam
    # search's greedy finish and the exact search's every-256th clock check ran for minutes. The
    # effort counts each step by what it costs (`reorder.state.advance_work`), so 0.2 units stay
    # well under the 3 s (about 0.5 s on the team's machine under load).
    from fuzz.hostile import many_live_model

    from arenalens.reorder.registry import run_reorderer
    from arenalens.reorder.schedule import schedule_problem

    model = load_model(many_live_model(1500))
    problem = schedule_problem(model, 0, tensor_bytes=lambda t: t.nbytes)
    assert problem.op_count == 2999
    with within(3):
        result = run_reorderer(name, problem, effort=0.2)  # the order is checked inside
    assert result.peak <= result.file_order_peak or name == "beam"


def hostile_named_model(name: str) -> bytes:
    builder = ModelBuilder(description=name)
    graph = builder.add_subgraph(name)
    x, a, y = (graph.add_tensor(f"{name}{i}", [1, 8]) for i in range(3))
    graph.add_operator("CUSTOM:" + name, [x], [a])
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    builder.add_signature(name, graph)
    return builder.build()


def test_charts_of_a_model_with_a_four_kilobyte_operator_name_are_quick() -> None:
    # Found by `hostile_names`: step tick labels and the peak label carried the whole custom op
    # name, and matplotlib's tight layout took 100 s to measure 4,096 characters.
    pytest.importorskip("matplotlib")
    from arenalens.pipeline import analyze
    from arenalens.report.build import build_report
    from arenalens.report.images import render_images

    report = build_report(analyze(load_model(hostile_named_model("x" * 4096)), runtime="tflm"))
    with within(20):
        render_images(report)


def test_html_report_escapes_every_hostile_name() -> None:
    # Output safety: model text reaches the page only escaped (header) or inside JSON with
    # <, >, & written as \\u escapes; the fuzz report stage checks every generated model too.
    from fuzz.hostile import HOSTILE_NAMES
    from fuzz.stages import check_html_escaping

    from arenalens.pipeline import analyze
    from arenalens.report.build import build_report
    from arenalens.report.html_page import render_html

    for name in HOSTILE_NAMES:
        model = load_model(hostile_named_model(name))
        reports = [build_report(analyze(model, runtime=r)) for r in ("tflm", "litert")]
        page = render_html(reports)
        check_html_escaping(page, model)
        if "<" in name:
            assert name not in page


def model_without_buffers() -> bytes:
    import struct

    from fuzz.layout import SiteKind, find_layout

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    tensors = [graph.add_tensor(f"t{i}", [1, 16]) for i in range(4)]
    for source, target in itertools.pairwise(tensors):
        graph.add_operator("RELU", [source], [target])
    graph.set_inputs(tensors[:1])
    graph.set_outputs(tensors[-1:])
    data = bytearray(builder.build())
    site = next(
        s
        for s in find_layout(bytes(data)).of_kind(SiteKind.LENGTH)
        if s.label == "Model.buffers.length"
    )
    struct.pack_into("<I", data, site.position, 0)  # an empty buffers vector
    return bytes(data)


def test_optimize_on_a_model_without_buffers_keeps_tensors_planned() -> None:
    # Found by splicing chainx6 with another file: the model had no buffers, the rewriter made
    # the offline plan's bytes buffer 0, every tensor (all reading buffer 0) became a constant,
    # and optimize's read-back check raised PlanError (head 0 instead of the planned 144).
    from arenalens.optimization import optimize_model

    model = load_model(model_without_buffers())
    assert model.buffers == ()
    optimization = optimize_model(model, planner="greedy_by_size")
    written = load_model(optimization.data)
    assert not any(t.has_data for t in written.subgraphs[0].tensors)
    assert optimization.new_head <= optimization.original_head


def test_without_buffers_only_buffer_index_zero_is_accepted() -> None:
    import struct

    import numpy as np
    from fuzz.layout import SiteKind, find_layout

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 4]), graph.add_tensor("y", [1, 4])
    bias = graph.add_constant("bias", np.zeros((1, 4), dtype="float32"))  # buffer 1
    graph.add_operator("ADD", [x, bias], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = bytearray(builder.build())
    site = next(
        s
        for s in find_layout(bytes(data)).of_kind(SiteKind.LENGTH)
        if s.label == "Model.buffers.length"
    )
    struct.pack_into("<I", data, site.position, 0)
    with pytest.raises(ModelError, match="buffer index 1 out of range"):
        load_model(bytes(data))


def test_custom_options_pointing_past_the_file_raise_model_error() -> None:
    # Found by the fuzz campaign (a real audio preprocessor model, `custom_options` moved just
    # past the end): the TFLM scratch rules read custom options after loading, through the
    # unchecked generated accessors, and raised struct.error.
    import struct

    from fuzz.layout import SiteKind, find_layout

    from arenalens.tflite.custom_options import custom_options

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 8]), graph.add_tensor("y", [1, 8])
    graph.add_operator("CUSTOM:odd", [x], [y], custom_options=b"\x01\x02\x03\x04")
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = bytearray(builder.build())
    site = next(
        s
        for s in find_layout(bytes(data)).of_kind(SiteKind.UOFFSET)
        if s.label == "Operator.custom_options"
    )
    struct.pack_into("<I", data, site.position, len(data) - site.position)  # just past the end
    model = load_model(bytes(data))
    with pytest.raises(ModelError, match="custom options"):
        custom_options(model, 0, 0)


def test_custom_options_are_read_from_the_file() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 8]), graph.add_tensor("y", [1, 8])
    graph.add_operator("CUSTOM:odd", [x], [y], custom_options=b"\x01\x02\x03\x04")
    graph.add_operator("RELU", [y], [graph.add_tensor("z", [1, 8])])
    graph.set_inputs([x])
    graph.set_outputs([2])
    model = load_model(builder.build())
    from arenalens.tflite.reader import read_custom_options

    assert read_custom_options(model, 0, 0) == b"\x01\x02\x03\x04"
    assert read_custom_options(model, 0, 1) == b""


def test_planner_waste_search_time_is_one_budget_for_all_arenas() -> None:
    # Found by the campaign: 500 subgraph entries sharing one table give LiteRT 1,000 arenas,
    # and planner-waste spent its whole time limit on each (90 s at 0.05 s per arena).
    from fuzz.hostile import shared_subgraphs_model

    from arenalens.diagnostics.rules import diagnose

    model = load_model(shared_subgraphs_model(500, 10))
    with within(20):
        diagnose(model, runtime="litert", planner_effort=1.0, what_if=True)


def test_kernel_scratch_from_negative_dimensions_is_a_model_error() -> None:
    # Found by the campaign: a shape retargeted onto another vector gave an SVDF input the
    # dimension -1,087,775,173; its scratch request became a negative Buffer size (ValueError).
    from arenalens.runtimes.tflm import arena as tflm

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    batch = -1087775173
    x = graph.add_tensor("x", [batch, 32])
    weights = graph.add_tensor("weights_feature", [32, 32], data=bytes(4 * 32 * 32))
    time_weights = graph.add_tensor("weights_time", [32, 32], data=bytes(4 * 32 * 32))
    bias = graph.add_tensor("bias", [32], data=bytes(4 * 32))
    state = graph.add_tensor("state", [batch, 1024], is_variable=True)
    y = graph.add_tensor("y", [batch, 32])
    graph.add_operator("SVDF", [x, weights, time_weights, bias, state], [y], options={"rank": 1})
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    with pytest.raises(ModelError, match=r"operator 0 \(SVDF\).*negative size"):
        tflm.arenas(model)


def test_an_svdf_of_rank_zero_is_refused_not_a_crash() -> None:
    # Found by the campaign (seed 15, input 2163: an SVDF's options table cut short read rank
    # 0): the rule printed num_filters % rank and raised ZeroDivisionError. TFLM's PrepareSvdf
    # divides by the rank unchecked, so the model is refused as the crash it is.
    from arenalens.runtimes.tflm.support import setup_failures

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 32], dtype="INT8")
    weights = graph.add_tensor("weights_feature", [32, 32], dtype="INT8", data=bytes(32 * 32))
    time_weights = graph.add_tensor("weights_time", [32, 8], dtype="INT8", data=bytes(32 * 8))
    state = graph.add_tensor("state", [1, 256], dtype="INT8", is_variable=True)
    y = graph.add_tensor("y", [1, 32], dtype="INT8")
    graph.add_operator("SVDF", [x, weights, time_weights, -1, state], [y], options={"rank": 0})
    graph.set_inputs([x])
    graph.set_outputs([y])
    failures = setup_failures(load_model(builder.build()))
    assert any("rank 0: integer division by zero" in failure for failure in failures), failures


def test_an_offline_plan_past_two_gigabytes_is_refused() -> None:
    # Found by the campaign (absurd shapes): `optimize` packed offsets above 2**31 into the
    # int32 OfflineMemoryAllocation and raised struct.error.
    from arenalens.optimization import optimize_model

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1 << 29, 4])  # 8 GiB of float32, never allocated here
    a = graph.add_tensor("a", [1 << 29, 4])
    y = graph.add_tensor("y", [1 << 29, 4])
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("ADD", [a, x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    with pytest.raises(ModelError, match="32-bit offsets"):
        optimize_model(model, planner="greedy_by_size")


def test_a_reordered_model_reads_each_custom_operators_own_options() -> None:
    # Found by the campaign: after `apply_schedule`, custom options were read at the operator's
    # new index in the (unchanged) file, i.e. another operator's options; optimize's read-back
    # of the rewritten file then disagreed with the plan it had made.
    from flatbuffers import flexbuffers

    from arenalens.reorder.schedule import Schedule, apply_schedule
    from arenalens.runtimes.tflm.kernels.setups import scratch_requests
    from arenalens.tflite.rewriter import rewrite_model

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 1024], "INT16")
    outputs = []
    for length in (64, 512):
        output = graph.add_tensor(f"rfft{length}", [1, length + 2], "INT16")
        # T = 7 (TensorType INT16): without it the kernel takes the float variant and refuses
        # the INT16 tensors (no scratch request at all).
        options = flexbuffers.Dumps({"T": 7, "fft_length": length})
        graph.add_operator("CUSTOM:SignalRfft", [x], [output], custom_options=options)
        outputs.append(output)
    graph.set_inputs([x])
    graph.set_outputs(outputs)
    model = load_model(builder.build())
    reordered = apply_schedule(model, Schedule({0: (1, 0)}))
    written = load_model(rewrite_model(bytes(model.data), operator_orders={0: (1, 0)}))
    sizes = [request.nbytes for request in scratch_requests(reordered)]
    assert sizes == [request.nbytes for request in scratch_requests(written)]
    assert sizes == [512 * 2, 64 * 2]


@pytest.mark.parametrize("runtime", ["litert", "tflm"])
def test_zero_points_past_the_file_without_scales_are_a_model_error(runtime: str) -> None:
    # Found by the fuzz campaign (seed 14, input 1064: a spliced real model): a quantization
    # table with no scales but a zero-point vector claiming more entries than the file holds
    # was accepted at load (the reader checked zero points only beside scales), and the LiteRT
    # loader's count check (quantization_counts) then raised MalformedTableError, not ModelError.
    import struct

    from fuzz.layout import find_layout

    from arenalens import analyze
    from arenalens.tflite.builder import QuantizationSpec

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8], "INT8", quantization=QuantizationSpec((), (3,), 0))
    y = graph.add_tensor("y", [1, 8], "INT8")
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = bytearray(builder.build())
    site = next(
        s
        for s in find_layout(bytes(data)).sites
        if s.label == "QuantizationParameters.zero_point.length"
    )
    struct.pack_into("<I", data, site.position, 131_072)
    with pytest.raises(ModelError, match="claims 131,072 entries"):
        analyze(load_model(bytes(data)), runtime=runtime)
