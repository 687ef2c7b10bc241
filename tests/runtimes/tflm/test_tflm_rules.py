"""TFLM rules beyond the corpus: the head arena's construction, setup failures the runtime reports
whatever the arena size, and the one-pass minimal arena against brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.analysis.arena_problem import BufferKind
from arenalens.ir import OfflinePlan
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, minimal_arena_size, replay
from arenalens.runtimes.tflm.support import setup_failures
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.reader import parse_model


def relu_chain(*, offline: tuple[int, ...] | None = None, variable: bool = False) -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 10])
    middle = graph.add_tensor("m", [1, 10])
    result = graph.add_tensor("y", [1, 10])
    if variable:
        graph.add_tensor("state", [1, 6], is_variable=True)
    graph.add_operator("RELU", [source], [middle])
    graph.add_operator("RELU", [middle], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    if offline is not None:
        builder.add_metadata(
            "OfflineMemoryAllocation", encode_offline_plan(OfflinePlan(0, 1, offline))
        )
    return builder.build()


def test_head_buffers_are_rounded_to_16_or_the_given_alignment() -> None:
    model = parse_model(relu_chain(), "chain")
    (head,) = arenas(model)
    assert [b.size for b in head.problem.buffers] == [48, 48, 48]
    assert [(b.start, b.end) for b in head.problem.buffers] == [(0, 1), (1, 2), (2, 2)]
    assert head.size_rounding == 16 and head.problem.alignment == 1
    (wider,) = arenas(model, alignment=64)
    assert [b.size for b in wider.problem.buffers] == [64, 64, 64]


def test_an_offline_planned_variable_moves_into_the_head() -> None:
    model = parse_model(relu_chain(offline=(-1, -1, -1, 96), variable=True), "offline")
    (head,) = arenas(model)
    variable = next(b for b in head.buffers.values() if b.kind is BufferKind.VARIABLE)
    assert (variable.tensor, variable.nbytes) == (3, 24)
    assert head.problem.by_id[variable.id].fixed_offset == 96
    online = parse_model(relu_chain(variable=True), "online")
    assert all(b.kind is BufferKind.TENSOR for b in arenas(online)[0].buffers.values())


def test_setup_failures_name_dynamic_outputs_and_unsized_types() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 10])
    dynamic = graph.add_tensor("d", [1, -1])
    graph.add_operator("RELU", [source], [dynamic])
    graph.add_tensor("names", [2], "STRING", data=b"\0" * 16)
    graph.set_inputs([source])
    graph.set_outputs([dynamic])
    failures = setup_failures(parse_model(builder.build(), "bad"))
    assert any("Dynamic tensors are not supported" in f for f in failures)
    assert any("STRING" in f for f in failures)
    assert setup_failures(parse_model(relu_chain(), "good")) == []


@st.composite
def setups(draw: st.DrawFn) -> list[Allocation]:
    """Random but well-formed setups: tail allocations, head resizes, temps, one planner."""
    steps = [Allocation(Action.PERSISTENT, draw(st.integers(0, 120)), 8)]
    steps.append(Allocation(Action.HEAD, 16 * draw(st.integers(0, 6)), 8))
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["persistent", "temp", "reset"]))
        if kind == "persistent":
            alignment = draw(st.sampled_from([1, 2, 4, 8, 16]))
            # A kernel buffer written over live temps fails at some start addresses.
            failing = draw(
                st.lists(
                    st.tuples(st.integers(0, 400), st.integers(0, 40)).map(
                        lambda pair: (pair[0], pair[0] + pair[1])
                    ),
                    max_size=2,
                )
            )
            steps.append(
                Allocation(
                    Action.PERSISTENT,
                    draw(st.integers(0, 90)),
                    alignment,
                    fails_at=tuple(sorted(failing)),
                )
            )
        elif kind == "temp":
            alignment = draw(st.sampled_from([1, 4, 8, 16]))
            steps.append(Allocation(Action.TEMP, draw(st.integers(0, 90)), alignment))
        else:
            steps.append(Allocation(Action.RESET_TEMP, 0))
    steps.append(Allocation(Action.PLANNER, draw(st.integers(0, 6)), 16))
    steps.append(Allocation(Action.RESET_TEMP, 0))
    steps.append(Allocation(Action.RELEASE_HEAD, 0))
    steps.append(Allocation(Action.HEAD, draw(st.integers(0, 200)), 16))
    steps.append(Allocation(Action.PERSISTENT, draw(st.integers(0, 70)), 16))
    return steps


@settings(max_examples=200, deadline=None)
@given(sequence=setups())
def test_one_pass_minimum_equals_brute_force(sequence: list[Allocation]) -> None:
    # The minimal arena: the smallest size from which every larger size fits.
    # Above every allocation, alignment loss, planner table and failing start, all fit.
    ceiling = sum(s.nbytes * (40 if s.action is Action.PLANNER else 1) for s in sequence)
    ceiling += 16 * len(sequence) + 448
    minimum = minimal_arena_size(sequence)
    assert minimum == 0 or not replay(sequence, minimum - 1).fits
    assert all(replay(sequence, size).fits for size in range(minimum, ceiling + 1))


def scratch_sizes(data: bytes) -> list[tuple[str, int]]:
    from arenalens.runtimes.tflm.kernels.setups import scratch_requests

    return [(r.label, r.nbytes) for r in scratch_requests(parse_model(data, "synthetic"))]


def test_scratch_rules_on_synthetic_kernels() -> None:
    from tests import tflm_synthetic as synthetic

    # ADD_N keeps one pointer per input (8 B on the host); MIRROR_PAD two int arrays of rank 4.
    assert scratch_sizes(synthetic.add_n_float()) == [("add_n input pointers", 24)]
    assert [n for _, n in scratch_sizes(synthetic.mirror_pad())] == [16, 16]
    # SUM int8: accumulators per output element, then the iterator and axes arrays.
    assert [n for _, n in scratch_sizes(synthetic.reduce("SUM", "INT8")())] == [16, 16, 8]
    assert [n for _, n in scratch_sizes(synthetic.reduce("MEAN", "FLOAT32")())] == [16, 8]
    # TRANSPOSE_CONV int8: one int32 accumulator per output element (1x8x8x8).
    assert scratch_sizes(synthetic.transpose_conv_int8()) == [("transpose_conv accumulators", 2048)]
    # int4 weights are unpacked to one byte per element (8 x 3 x 3 x 4).
    assert scratch_sizes(synthetic.conv_int4()) == [("unpacked int4 filter", 288)]
    # DETECTION_POSTPROCESS: 32 boxes, 4 score columns, 5 detections, 3 classes.
    assert [n for _, n in scratch_sizes(synthetic.detection_postprocess())] == [
        32, 512, 512, 128, 128, 640, 640, 128, 640, 640, 640,
    ]  # fmt: skip
    assert scratch_sizes(synthetic.fully_connected_per_channel()) == []


def test_a_buffer_written_over_live_temps_must_clear_their_guarded_bytes() -> None:
    # A 64-byte temp whose first 8 bytes TFLM reads back, then a 60-byte persistent buffer: left
    # unwritten it may cover the temp (any size from 64 fits); filled while the temp lives, it
    # fails wherever it covers those bytes (starts -59..7), so from every size on it must start
    # at or above byte 16, i.e. align_down(size - 60, 16) >= 16.
    temp = Allocation(Action.TEMP, 64, 4)
    unwritten = [temp, Allocation(Action.PERSISTENT, 60, 16)]
    written = [temp, Allocation(Action.PERSISTENT, 60, 16, fails_at=((-59, 7),))]
    assert minimal_arena_size(unwritten) == 64
    assert minimal_arena_size(written) == 76
    assert not replay(written, 75).fits and replay(written, 76).fits


def test_one_arena_alignment_for_every_tflm_rule() -> None:
    """MicroArenaBufferAlignment() is defined once (runtimes/tflm/alignment.py): planned buffers,
    persistent buffers and the runtime's data alignment all use it."""
    from arenalens.runtimes import get_runtime
    from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT

    assert get_runtime("tflm").data_alignment == ARENA_ALIGNMENT == 16
