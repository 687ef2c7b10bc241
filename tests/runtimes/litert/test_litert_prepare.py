"""LiteRT's post-Prepare state and ArenaPlanner order, pinned on small built models.

Every expectation here was checked against the real interpreter by
tests/runtimes/litert/test_litert_runtime.py (`verify` agrees on every tensor offset of every case).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.builds.build import HOST
from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.runtimes import get_runtime
from arenalens.runtimes.litert.planner import plan_order
from arenalens.runtimes.litert.prepare.driver import prepare_model
from arenalens.runtimes.litert.prepare.registry import KERNEL_RULES
from arenalens.runtimes.litert.prepare.state import Allocation
from arenalens.runtimes.litert.rules import LITERT_ALIGNMENT, arenas, litert_plans
from arenalens.tflite.reader import parse_model
from tests.hang_guard import no_hang
from tests.litert_cases import CASES
from tests.litert_kernel_cases import KERNEL_CASES

ALL_CASES = CASES | KERNEL_CASES


@functools.cache
def case_model(name: str) -> Model:
    """One built case, parsed."""
    return parse_model(ALL_CASES[name](), name)


def temporaries(name: str, subgraph: int = 0) -> list[tuple[str, str, Any, str]]:
    """(role, dtype, shape, allocation) of every runtime tensor a kernel gave a role."""
    prepared = prepare_model(case_model(name))[subgraph]
    return [
        (t.role, t.dtype, t.shape, t.allocation.value)
        for t in prepared.tensors[prepared.model_tensor_count :]
        if t.role
    ]


def test_runtime_rules_object() -> None:
    rules = get_runtime("litert")
    assert rules.name == "litert"
    assert rules.default_alignment == LITERT_ALIGNMENT == 64
    assert rules.verify is not None


def test_every_kernel_rule_names_its_source_file() -> None:
    for opcode, rule in KERNEL_RULES.items():
        # The XNNPACK delegate's kernel node (its Prepare of the handles it took) is the one
        # rule whose source is a delegate's.
        assert rule.source.startswith(("tflite/kernels/", "tflite/delegates/xnnpack/")), opcode
        assert rule.source.endswith(".cc"), opcode


def test_rules_marked_verified_are_exercised_by_a_live_checked_model() -> None:
    # `verified=True` must stay honest: the opcode occurs in a rule case (checked live by
    # test_litert_runtime.py) or in a corpus model LiteRT allocates (test_litert_models.py).
    exercised = {
        op.opcode
        for build in ALL_CASES.values()
        for subgraph in parse_model(build(), "case").subgraphs
        for op in subgraph.operators
    }
    # Corpus-only opcodes (mobilenet_v2 has MEAN, PAD, TRANSPOSE; dtln and others the LSTMs).
    exercised |= {"TRANSPOSE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF", "MEAN", "PAD"}
    marked = {opcode for opcode, rule in KERNEL_RULES.items() if rule.verified}
    assert marked <= exercised, marked - exercised
    assert {"CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BROADCAST_TO"} <= marked
    assert {"CUSTOM:TFLite_Detection_PostProcess", "BROADCAST_ARGS"} <= marked


def test_arenas_come_in_pairs_subgraph_zero_first() -> None:
    names = [arena.name for arena in arenas(case_model("control_flow_if"))]
    assert names == [
        "subgraph 0",
        "subgraph 0 persistent",
        "subgraph 1",
        "subgraph 1 persistent",
        "subgraph 2",
        "subgraph 2 persistent",
    ]
    assert all(a.runtime_planner == "litert_arena" for a in arenas(case_model("split20")))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("conv_float_im2col", [("im2col", "FLOAT32", (1, 4, 4, 27), "arena_rw")]),
        ("conv_dilated", [("im2col", "FLOAT32", (1, 5, 5, 18), "arena_rw")]),
        ("conv_1x1_chain", []),
        (
            "conv_hybrid_per_tensor",
            [
                ("im2col", "INT8", (1, 3, 3, 36), "arena_rw"),
                ("input_quantized", "INT8", (1, 6, 6, 4), "arena_rw"),
                ("scaling_factors", "FLOAT32", (36,), "arena_rw"),
                ("accumulator", "INT32", (3, 9), "arena_rw"),
            ],
        ),
        (
            "conv_hybrid_per_channel",
            [
                ("im2col", "INT8", (1, 3, 3, 36), "arena_rw"),
                ("input_quantized", "INT8", (1, 6, 6, 4), "arena_rw"),
                ("scaling_factors", "FLOAT32", (36,), "arena_rw"),
                ("accumulator", "INT32", (3, 9), "arena_rw"),
                ("input_offsets", "INT32", (36,), "arena_rw"),
                ("row_sums", "INT32", (3,), "arena_rw_persistent"),
            ],
        ),
        (
            "depthwise_hybrid",
            [
                ("input_quantized", "INT8", (1, 6, 6, 4), "arena_rw"),
                ("scaling_factors", "FLOAT32", (1,), "arena_rw"),
                ("input_offsets", "INT32", (1,), "arena_rw"),
            ],
        ),
        (
            "reductions",
            [
                ("index", "INT32", (4,), "arena_rw"),
                ("resolved_axis", "INT32", (2,), "arena_rw"),
                ("accumulator", "INT32", (8,), "arena_rw"),
                ("normalized_dims", "INT32", None, "dynamic"),
                ("index", "INT32", (4,), "arena_rw"),
                ("resolved_axis", "INT32", (1,), "arena_rw"),
                ("accumulator", "FLOAT32", (25,), "arena_rw"),
                ("normalized_dims", "INT32", None, "dynamic"),
                ("index", "INT32", (3,), "arena_rw"),
                ("resolved_axis", "INT32", (2,), "arena_rw"),
                ("accumulator", "FLOAT32", None, "none"),  # REDUCE_MAX never sizes it
                ("normalized_dims", "INT32", None, "dynamic"),
            ],
        ),
        (
            "batch_matmul_hybrid",
            [
                ("lhs_transposed", "FLOAT32", (2, 8, 4), "arena_rw"),
                ("rhs_transposed", "INT8", (2, 3, 8), "arena_rw_persistent"),
                ("input_quantized", "INT8", (2, 4, 8), "arena_rw"),
                ("scaling_factors", "FLOAT32", (8,), "arena_rw"),
                ("accumulator", "INT32", (3, 4), "arena_rw"),
                ("input_offsets", "INT32", (8,), "arena_rw"),
                ("row_sums", "INT32", (6,), "arena_rw_persistent"),
            ],
        ),
        ("conv_3d", [("im2col", "FLOAT32", (1, 3, 4, 4, 36), "arena_rw")]),
        ("add_n", [("scratch", "FLOAT32", (10,), "arena_rw")]),
        (
            "transpose_conv_int8",
            [
                ("col2im", "INT32", (16, 27), "dynamic"),
                ("transposed_weights", "INT8", (3, 3, 3, 4), "dynamic"),
                ("scratch", "INT32", (1, 8, 8, 3), "dynamic"),
            ],
        ),
        # A non-constant output shape leaves col2im untyped and the int16 scratch unsized.
        (
            "transpose_conv_int16_shape_input",
            [
                ("col2im", "NOTYPE", None, "dynamic"),
                ("transposed_weights", "INT8", (3, 3, 3, 4), "dynamic"),
                ("scratch", "INT64", None, "dynamic"),
            ],
        ),
        (
            "transpose_conv_int16_int32_bias",  # quantized_bias_type INT32 → int32 scratch
            [
                ("col2im", "INT32", (16, 27), "dynamic"),
                ("transposed_weights", "INT8", (3, 3, 3, 4), "dynamic"),
                ("scratch", "INT32", (1, 8, 8, 3), "dynamic"),
            ],
        ),
        (
            "transpose_conv_uint8",
            [
                ("col2im", "INT32", (16, 27), "dynamic"),
                ("transposed_weights", "UINT8", (3, 3, 3, 4), "dynamic"),
                ("scratch", "INT32", (1, 8, 8, 3), "dynamic"),
            ],
        ),
        # Weights that are not MmapRo (here a DEQUANTIZE output): transposed at Eval.
        (
            "transpose_conv_weights_dequantized",
            [
                ("col2im", "FLOAT32", (16, 27), "dynamic"),
                ("transposed_weights", "NOTYPE", None, "dynamic"),
            ],
        ),
        (
            "transpose_conv_hybrid_shape_input",
            [
                ("col2im", "NOTYPE", None, "dynamic"),
                ("transposed_weights", "INT8", (3, 3, 3, 4), "dynamic"),
                ("input_quantized", "INT8", (1, 4, 4, 4), "arena_rw"),
                ("scaling_factors", "FLOAT32", (16,), "arena_rw"),
                ("input_offsets", "INT32", (16,), "arena_rw"),
            ],
        ),
        (
            "detection_regular_nms",
            [
                ("decoded_boxes", "FLOAT32", (40, 4), "arena_rw"),
                ("scores", "FLOAT32", (40, 7), "arena_rw"),
            ],
        ),
        (
            "rnn_hybrid",
            [
                ("input_quantized", "INT8", (2, 5), "arena_rw"),
                ("hidden_state_quantized", "INT8", (2, 6), "arena_rw"),
                ("scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("accumulator", "INT32", (6, 2), "arena_rw"),
                ("zero_points", "INT32", (2,), "arena_rw"),
                ("row_sums", "INT32", (2, 6), "arena_rw_persistent"),
            ],
        ),
        ("rnn_float", []),  # the six Init tensors stay typeless
        (
            # Auxiliary weights: a third row-sum row and the ninth Init tensor.
            "bidirectional_rnn_hybrid_merged_aux",
            [
                ("input_quantized", "INT8", (2, 3, 5), "arena_rw"),
                ("forward_hidden_state_quantized", "INT8", (2, 6), "arena_rw"),
                ("backward_hidden_state_quantized", "INT8", (2, 4), "arena_rw"),
                ("scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("accumulator", "INT32", (6, 2), "arena_rw"),
                ("zero_points", "INT32", (2,), "arena_rw"),
                ("forward_row_sums", "INT32", (3, 6), "arena_rw_persistent"),
                ("backward_row_sums", "INT32", (3, 4), "arena_rw_persistent"),
                ("aux_input_quantized", "INT8", (2, 3, 3), "arena_rw"),
            ],
        ),
        (
            "svdf_hybrid",
            [
                ("scratch", "FLOAT32", (2, 8), "arena_rw"),
                ("input_quantized", "INT8", (2, 10), "arena_rw"),
                ("scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("float_weights_time", "FLOAT32", (8, 4), "arena_rw_persistent"),
                ("zero_points", "FLOAT32", (2,), "arena_rw"),
                ("row_sums", "FLOAT32", (8,), "arena_rw_persistent"),
            ],
        ),
        ("lstm_float", [("scratch", "FLOAT32", (2, 30), "arena_rw")]),
        # UNIDIRECTIONAL_SEQUENCE_LSTM adds 16 to the scratch width (5·6 + 16; CIFG 4·6 + 16).
        ("sequence_lstm_float", [("scratch", "FLOAT32", (2, 46), "arena_rw")]),
        ("sequence_lstm_float_cifg", [("scratch", "FLOAT32", (2, 40), "arena_rw")]),
        (
            "sequence_lstm_hybrid",
            [
                ("scratch", "FLOAT32", (2, 46), "arena_rw"),
                ("input_quantized", "INT8", (2, 3, 5), "arena_rw"),
                ("output_state_quantized", "INT8", (2, 6), "arena_rw"),
                ("cell_state_quantized", "INT8", (2, 6), "arena_rw"),
                ("input_scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("output_state_scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("product_scaling_factors", "FLOAT32", (2,), "arena_rw"),
                ("recovered_cell_weights", "FLOAT32", (6,), "arena_rw"),
                ("accumulator", "INT32", (6, 2), "arena_rw"),
                ("input_zero_points", "FLOAT32", (2,), "arena_rw"),
                ("output_state_zero_points", "FLOAT32", (2,), "arena_rw"),
                ("row_sums", "INT32", (8, 6), "arena_rw_persistent"),
            ],
        ),
    ],
)
def test_kernel_temporaries(name: str, expected: list[tuple[str, str, Any, str]]) -> None:
    assert temporaries(name) == expected


def test_fully_connected_adds_six_tensors_and_uses_five_when_hybrid() -> None:
    prepared = prepare_model(case_model("fully_connected_hybrid"))[0]
    assert len(prepared.tensors) - prepared.model_tensor_count == 12
    first, second = prepared.nodes
    assert first.temporaries == (6, 7, 8, 9, 10)
    assert second.temporaries == (12, 13, 14, 15, 16)
    assert prepared.tensors[11].dtype == "NOTYPE"  # the sixth stays typeless (sparse ledger)


def test_init_time_tensors_come_before_prepare_time_ones() -> None:
    # LSTM (full kernel) adds 12 + 9 tensors in Init, before any Prepare: indices 17..37.
    prepared = prepare_model(case_model("lstm_float"))[0]
    assert prepared.model_tensor_count == 17
    assert prepared.nodes[0].temporaries == (17,)
    assert len(prepared.tensors) == 17 + 21


def test_dynamic_outputs_split_planning_into_chunks() -> None:
    mean = prepare_model(case_model("mean_dynamic_axis"))[0]
    assert mean.chunks == ((0, 1), (2, 2))
    assert mean.nodes[1].dynamic_output
    reshape = prepare_model(case_model("reshape_unknown_shape"))[0]
    assert reshape.chunks == ((0, 1), (2, 2))  # kTfLiteOutputShapeNotKnown ends the chunk
    output = reshape.tensors[reshape.nodes[1].outputs[0]]
    assert output.allocation == Allocation.ARENA_RW and output.nbytes == 2 * 32 * 4
    pad = prepare_model(case_model("pad_dynamic"))[0]
    assert pad.tensors[pad.nodes[1].outputs[0]].allocation == Allocation.DYNAMIC


def test_constant_folding_and_persistent_outputs() -> None:
    prepared = prepare_model(case_model("constant_folding"))[0]
    by_name = {t.name: t for t in prepared.tensors}
    assert by_name["w"].allocation == Allocation.ARENA_RW_PERSISTENT  # DEQUANTIZE of a constant
    assert by_name["shape"].allocation == Allocation.PERSISTENT_RO  # SHAPE
    assert by_name["c"].allocation == Allocation.PERSISTENT_RO  # RESHAPE of a constant
    assert by_name["b"].allocation == Allocation.ARENA_RW  # RESHAPE of an activation


def test_shape_ops_fold_constants_and_end_the_chunk_at_broadcast() -> None:
    prepared = prepare_model(case_model("shape_ops"))[0]
    allocation = {t.name: t.allocation for t in prepared.tensors}
    for folded in ("doubled", "steps", "tiled", "sliced"):  # MUL, RANGE, TILE, STRIDED_SLICE
        assert allocation[folded] == Allocation.PERSISTENT_RO, folded
    for static in ("resized", "top", "bottom", "cut"):
        assert allocation[static] == Allocation.ARENA_RW, static
    assert allocation["broadcast"] == Allocation.DYNAMIC
    assert prepared.chunks == ((0, 7), (8, 9))


@pytest.mark.parametrize("fold", ["concat", "reshape", "shape"])
def test_rfft2d_reads_an_fft_length_folded_in_prepare(fold: str) -> None:
    # fft_length [8, 32] computed by constant folding: the temporaries and the output are
    # sized from the folded values, as for a constant (checked on the wheel by
    # test_rule_cases_match_real_interpreter).
    assert temporaries(f"rfft2d_length_folded_{fold}") == [
        ("integer_working_area", "INT32", (2 + 4,), "arena_rw"),  # 2 + isqrt(max(8, 16))
        ("double_working_area", "INT64", (16 // 2 + 32 // 4,), "arena_rw"),
        ("input_output_rows", "INT64", (8,), "arena_rw"),
        ("input_output", "INT64", (8, 34), "arena_rw"),
    ]
    prepared = prepare_model(case_model(f"rfft2d_length_folded_{fold}"))[0]
    by_name = {t.name: t for t in prepared.tensors}
    assert by_name["fft_length"].allocation == Allocation.PERSISTENT_RO
    assert by_name["spectrum"].shape == (1, 8, 17)


def test_folded_shape_arithmetic_and_reduce_prod_noop() -> None:
    prepared = prepare_model(case_model("shape_arithmetic_folded"))[0]
    allocation = {t.name: t.allocation for t in prepared.tensors}
    for folded in ("dims", "batch", "rest", "features", "target"):
        assert allocation[folded] == Allocation.PERSISTENT_RO, folded
    # REDUCE_PROD folded (data->noop): its temporaries live on the heap, never planned.
    assert [t[1:] for t in temporaries("shape_arithmetic_folded")] == [
        ("INT32", (1,), "arena_rw"),  # index, sized for the input rank (1)
        ("INT32", (1,), "dynamic"),  # resolved axis
        ("INT64", (1,), "dynamic"),  # accumulator: one per output element
        ("INT32", (1,), "dynamic"),  # normalized dims
    ]
    assert prepared.chunks == ((0, len(prepared.nodes) - 1),)


def test_folded_constants_and_dynamic_split() -> None:
    prepared = prepare_model(case_model("folding_and_dynamic_split"))[0]
    allocation = {t.name: t.allocation for t in prepared.tensors}
    assert allocation["both"] == allocation["gathered"] == Allocation.PERSISTENT_RO
    assert allocation["half0"] == allocation["half1"] == Allocation.DYNAMIC
    assert prepared.chunks == ((0, 3), (4, 4))


def test_in_place_aliases_collapse_to_one_root() -> None:
    model = case_model("in_place_chains")
    order = litert_plans(model)[0].order
    names = {t.index: t.name for t in model.subgraphs[0].tensors}
    aliases = {names[alias]: names[root] for alias, root in order.aliases.items()}
    # EXPAND_DIMS, SQUEEZE, RESHAPE (pure aliases), SOFTMAX and ADD (modify in place, sole
    # reader) all end up in `a`'s bytes; the ADD skips its constant first operand.
    assert aliases == {"b": "a", "c": "a", "d": "a", "e": "a", "f": "a"}
    # The root lives until its last alias's last reader (node 6).
    a = next(i for i, n in names.items() if n == "a")
    assert (order.alloc[a], order.dealloc[a]) == (0, 6)


def test_control_flow_children_inputs() -> None:
    prepared = prepare_model(case_model("control_flow_while"))
    cond, body = prepared[1], prepared[2]
    assert all(cond.tensors[t].allocation == Allocation.ARENA_RW for t in cond.inputs if t >= 0)
    assert all(body.tensors[t].allocation == Allocation.CUSTOM for t in body.inputs)
    assert all(p.allocated_by_allocate_tensors for p in prepared)
    branches = prepare_model(case_model("control_flow_if"))
    for branch in branches[1:]:
        assert [branch.tensors[t].allocation for t in branch.inputs] == [Allocation.CUSTOM]


def test_while_pass_through_and_unused_branch_inputs() -> None:
    main, cond, body, then, otherwise = prepare_model(case_model("control_flow_pass_through"))
    loop = main.nodes[1]
    assert loop.opcode == "WHILE" and loop.outputs[2] == -1  # unread pass-through dropped
    assert cond.inputs == (0, -1, -1)  # cond reads only the counter
    assert [cond.tensors[t].nbytes for t in (1, 2)] == [0, 0]
    assert [body.tensors[t].allocation for t in body.inputs] == [Allocation.CUSTOM] * 3
    assert then.inputs == (0, 1) and otherwise.inputs == (0, -1)


def test_split20_ties_need_the_exact_hash_order_and_sort() -> None:
    # docs/runtime-rules.md §L5: 20 equal-size SPLIT outputs allocated at one node are one
    # 20-way tie (> 16, so std::sort's introsort partitions them). Measured on the real
    # interpreter: 2,592 B.
    prepared = prepare_model(case_model("split20"))[0]
    order = plan_order(prepared)
    assert [len(group) for group in order.tie_groups] == [20]

    def stable_sort(items: list[int], less: Any) -> None:
        def compare(first: int, second: int) -> int:
            return -1 if less(first, second) else int(less(second, first))

        items.sort(key=functools.cmp_to_key(compare))

    def plan(**options: Any) -> tuple[int, dict[int, int]]:
        result = plan_order(prepared, **options)
        buffers = tuple(
            Buffer(t, result.alloc[t], result.dealloc[t], prepared.tensors[t].nbytes)
            for t in result.arena_order
        )
        problem = Problem(buffers, alignment=64, order=result.arena_order)
        planned = run_planner("litert_arena", problem)
        return planned.arena_size, dict(planned.offsets)

    exact_size, exact = plan()
    assert exact_size == 2592
    stable_size, stable = plan(sort=stable_sort)
    assert stable_size == 2528
    assert sum(stable[t] != exact[t] for t in exact) == 39  # of 42 offsets
    index_size, _ = plan(hash_set_order=False)
    assert index_size == 2528


def test_timeline_has_runtime_lifetimes_and_aliases() -> None:
    model = case_model("conv_float_im2col")
    timeline = get_runtime("litert").timeline(model, HOST)
    im2col = timeline.of(0, 4)
    assert (im2col.first, im2col.last) == (0, 0)  # a temporary lives at its node only
    output = timeline.of(0, model.subgraphs[0].outputs[0])
    assert output.last == NEVER_FREED


def test_budget_sums_every_arena() -> None:
    analysis = analyze(CASES["svdf_hybrid"](), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    assert analysis.runtime_budget.required_bytes == sum(sizes)
    assert analysis.runtime_budget.parts == {
        "subgraph 0": sizes[0],
        "subgraph 0 persistent": sizes[1],
    }
    assert sizes == [392, 416]


def test_twenty_thousand_operator_model_analyzes_fast() -> None:

    from arenalens.tflite.builder import ModelBuilder

    builder = ModelBuilder()
    graph = builder.add_subgraph()
    previous = first = graph.add_tensor("x", [1, 64])
    for index in range(20_000):
        current = graph.add_tensor(f"t{index}", [1, 64])
        graph.add_operator("RELU", [previous], [current])
        previous = current
    graph.set_inputs([first])
    graph.set_outputs([previous])
    model = parse_model(builder.build(), "chain")
    with no_hang(5, "20,000-operator LiteRT model"):
        problems = arenas(model)
        plan = run_planner("litert_arena", problems[0].problem)
    # The input stays at 0; the chain alternates between 256 and 512 (measured: 768 B).
    assert plan.arena_size == 3 * 256


def test_transpose_conv_output_shape_must_be_a_model_constant() -> None:
    # IsConstantTensor, not IsConstantOrPersistentTensor: SHAPE folds to PersistentRo, yet the
    # TRANSPOSE_CONV output is Dynamic and ends the chunk, as for a graph-input shape.
    for name in ("transpose_conv_shape_folded", "transpose_conv_shape_input"):
        prepared = prepare_model(case_model(name))[0]
        by_name = {t.name: t for t in prepared.tensors}
        assert by_name["y"].allocation == Allocation.DYNAMIC, name
        node = next(n for n in prepared.nodes if n.opcode == "TRANSPOSE_CONV")
        assert prepared.chunks[0] == (0, node.position), name
    folded = prepare_model(case_model("transpose_conv_shape_folded"))[0]
    assert {t.name: t for t in folded.tensors}["output_shape"].allocation == (
        Allocation.PERSISTENT_RO
    )


def test_transpose_conv_resizes_its_output_to_the_constant_shape() -> None:
    # The file says [1, 9, 9, 3]; Prepare resizes the output to the output_shape constant.
    prepared = prepare_model(case_model("transpose_conv_resized_output"))[0]
    output = {t.name: t for t in prepared.tensors}["y"]
    assert (output.shape, output.nbytes) == ((1, 8, 8, 3), 768)


def test_detection_postprocess_resizes_outputs_and_uses_init_tensors() -> None:
    # max_detections 3 × max_classes_per_detection 3 = 9 detections, whatever the file says.
    prepared = prepare_model(case_model("detection_outputs_resized"))[0]
    node = prepared.nodes[-1]
    assert node.temporaries == (prepared.model_tensor_count, prepared.model_tensor_count + 1)
    shapes = [prepared.tensors[t].shape for t in node.outputs]
    assert shapes == [(1, 9, 4), (1, 9), (1, 9), (1,)]
    assert {prepared.tensors[t].dtype for t in node.outputs} == {"FLOAT32"}
    assert prepared.notes == ()  # no "temporaries not modelled" note any more


def test_broadcast_args_folds_constant_shapes_only() -> None:
    for name, folded in (
        ("broadcast_args_constant", True),
        ("broadcast_args_folded", True),
        ("broadcast_args_input", False),
    ):
        prepared = prepare_model(case_model(name))[0]
        allocation = {t.name: t.allocation for t in prepared.tensors}
        if folded:
            # A folded shape lets BROADCAST_TO size its output in Prepare: one chunk.
            assert allocation["target"] == Allocation.PERSISTENT_RO, name
            assert allocation["wide"] == Allocation.ARENA_RW, name
            assert len(prepared.chunks) == 1, name
        else:
            # Planned in the arena, [max(3, 3)] int32; BROADCAST_TO's output turns Dynamic.
            assert allocation["target"] == Allocation.ARENA_RW
            assert {t.name: t for t in prepared.tensors}["target"].nbytes == 12
            assert allocation["wide"] == Allocation.DYNAMIC
            assert len(prepared.chunks) == 2


def test_var_handles_take_four_bytes_of_the_persistent_arena() -> None:
    prepared = prepare_model(case_model("resource_variables"))[0]
    handles = [t for t in prepared.tensors if t.name.endswith("/handle")]
    assert [(t.allocation, t.nbytes) for t in handles] == [(Allocation.ARENA_RW_PERSISTENT, 4)] * 3
    allocation = {t.name: t.allocation for t in prepared.tensors}
    assert allocation["known"] == Allocation.ARENA_RW
    assert allocation["unranked"] == Allocation.DYNAMIC  # READ_VARIABLE with a rank-0 output
    sizes = [
        result.runtime_plan.arena_size
        for result in analyze(ALL_CASES["resource_variables"](), runtime="litert").arenas
    ]
    assert sizes[1] == 2 * 64 + 4  # three ids, 64 B apart (measured: 132 B)


def test_bidirectional_lstm_forward_scratch_alone_gets_sixteen_more_columns() -> None:
    # bidirectional_sequence_lstm.cc: forward [B, 5·cell + 16], backward [B, 5·cell]; CIFG 4·cell.
    assert temporaries("bidirectional_lstm_float") == [
        ("forward_scratch", "FLOAT32", (2, 46), "arena_rw"),
        ("backward_scratch", "FLOAT32", (2, 30), "arena_rw"),
    ]
    assert temporaries("bidirectional_lstm_float_cifg")[:2] == [
        ("forward_scratch", "FLOAT32", (2, 40), "arena_rw"),
        ("backward_scratch", "FLOAT32", (2, 24), "arena_rw"),
    ]
    hybrid = {
        role: shape for role, _, shape, _ in temporaries("bidirectional_lstm_hybrid_aux_projection")
    }
    # 8 rows, + 4 for the auxiliary input, + ceil(3 / 6) = 1 for the projection.
    assert hybrid["forward_row_sums"] == hybrid["backward_row_sums"] == (13, 6)
    assert hybrid["aux_input_quantized"] == (2, 3, 3)
    assert len(hybrid) == 19


def test_int4_fully_connected_takes_the_packed_kernel_layout() -> None:
    # Batch 5 packs 4 rows at a time (x86-64 SSE build) → 8 rows; 40 columns → 64; 6 units → 8.
    assert temporaries("fully_connected_int4_padded") == [
        ("input_quantized", "INT8", (8, 64), "arena_rw"),
        ("scaling_factors", "FLOAT32", (8,), "arena_rw"),
        ("accumulator", "INT32", (8, 8), "arena_rw"),
        ("input_offsets", "INT32", (8,), "arena_rw"),
        ("unused", "NOTYPE", None, "none"),  # no row sums: nothing in the persistent arena
    ]
    # Fewer than 32 columns: the dense hybrid kernel, row sums included.
    dense = temporaries("fully_connected_int4_dense_kernel")
    assert dense[-1] == ("row_sums", "INT32", (8,), "arena_rw_persistent")


def test_integer_lstm_kernel_follows_the_intermediate_count() -> None:
    # lstm.cc: 5 intermediates → 8x8→16 (6 scratches), 12 → 8x8→8 (8 scratches), [B, cell].
    assert [dtype for _, dtype, _, _ in temporaries("lstm_integer_8x8_16")] == [
        "INT16",
        "INT16",
        "INT16",
        "INT16",
        "INT8",
        "INT32",
    ]
    eight = temporaries("lstm_integer_8x8_8")
    assert [dtype for _, dtype, _, _ in eight] == ["INT8", "INT8"] + ["INT16"] * 6
    assert {shape for _, _, shape, _ in eight} == {(2, 6)}


def test_custom_operators_the_wheel_registers_are_not_obstacles() -> None:
    # register.cc AddCustom: NumericVerify runs (the numeric_verify case allocates for real).
    from arenalens.runtimes.litert.refusals import unresolved_custom_operators

    for name in ("numeric_verify", "detection_fast_nms"):
        assert unresolved_custom_operators(case_model(name)) == (), name
