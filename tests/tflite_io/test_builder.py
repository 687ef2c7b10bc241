"""Model builder: what it writes reads back through the reader, and the runtimes accept it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tflite

from arenalens import ModelError, UsageError, load_model
from arenalens.ir import OfflinePlan, TensorKind
from arenalens.tflite.builder import (
    ModelBuilder,
    SubgraphBuilder,
    quantization,
)
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.reader import BUFFER_DATA_ALIGNMENT, OFFLINE_PLAN_METADATA
from tests.hang_guard import no_hang

ARENA_BYTES = 256 * 1024


def _float_tensor(graph: SubgraphBuilder, name: str, shape: tuple[int, ...] = (1, 4)) -> int:
    return graph.add_tensor(name, shape, "FLOAT32")


def _single_op_model(opcode: str, options: dict[str, Any] | None, **kwargs: Any) -> bytes:
    """One operator on float tensors (shapes irrelevant), plus two empty callable subgraphs."""
    builder = ModelBuilder(description="one op")
    main = builder.add_subgraph("main")
    for name in ("callee_a", "callee_b"):
        builder.add_subgraph(name)
    first, second = _float_tensor(main, "a"), _float_tensor(main, "b")
    outputs = kwargs.pop("outputs", 1)
    results = [_float_tensor(main, f"out_{i}") for i in range(outputs)]
    main.add_operator(opcode, [first, second], results, options=options, **kwargs)
    main.set_inputs([first, second])
    main.set_outputs(results)
    return builder.build()


def _chain_model() -> bytes:
    """x → FULLY_CONNECTED (no bias) → SOFTMAX, with a signature and metadata."""
    builder = ModelBuilder(description="chain")
    main = builder.add_subgraph("main")
    x = _float_tensor(main, "x")
    weights = main.add_constant("weights", np.eye(4, dtype=np.float32))
    hidden = _float_tensor(main, "hidden")
    probabilities = _float_tensor(main, "probabilities")
    main.add_operator(
        "FULLY_CONNECTED", [x, weights, -1], [hidden], options={"fused_activation_function": "RELU"}
    )
    main.add_operator("SOFTMAX", [hidden], [probabilities])
    main.set_inputs([x])
    main.set_outputs([probabilities])
    builder.add_signature("serving_default", main)
    builder.add_metadata("min_runtime_version", b"1.5.0\0")
    return builder.build()


# -- structure ------------------------------------------------------------------------------


def test_chain_round_trips_through_the_reader() -> None:
    model = load_model(_chain_model(), strict=True)
    assert model.description == "chain"
    assert model.version == 3
    (main,) = model.subgraphs
    assert main.name == "main"
    assert [t.name for t in main.tensors] == ["x", "weights", "hidden", "probabilities"]
    assert [op.opcode for op in main.operators] == ["FULLY_CONNECTED", "SOFTMAX"]
    fully_connected, softmax = main.operators
    assert fully_connected.inputs == (0, 1, -1)
    assert fully_connected.options["fused_activation_function"] == 1
    assert softmax.options["beta"] == 1.0  # the converter's default, not the schema's 0
    assert main.inputs == (0,) and main.outputs == (3,)
    weights = main.tensors[1]
    assert weights.kind is TensorKind.CONSTANT
    assert model.buffer_bytes(weights.buffer) == np.eye(4, dtype=np.float32).tobytes()
    assert [t.buffer for t in main.tensors if not t.is_constant] == [0, 0, 0]


def test_same_calls_give_same_bytes() -> None:
    assert _chain_model() == _chain_model()


def test_buffer_zero_is_empty_and_data_is_aligned() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    for size in (1, 3, 17, 4, 33, 100):
        main.add_tensor(f"c{size}", (size,), "INT8", data=bytes(range(size)))
    main.add_tensor("activation", (4,), "INT8")
    model = load_model(builder.build())
    assert model.buffers[0].nbytes == 0
    assert [b.nbytes for b in model.buffers[1:]] == [1, 3, 17, 4, 33, 100]
    assert all(b.file_offset % BUFFER_DATA_ALIGNMENT == 0 for b in model.buffers[1:])
    for tensor in model.subgraphs[0].tensors[:-1]:
        assert model.buffer_bytes(tensor.buffer) == bytes(range(tensor.shape[0]))


def test_shared_buffer() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    buffer = builder.add_buffer(np.arange(4, dtype=np.int32).tobytes())
    first = main.add_tensor("first", (4,), "INT32", buffer=buffer)
    second = main.add_tensor("second", (2, 2), "INT32", buffer=buffer)
    model = load_model(builder.build())
    tensors = model.subgraphs[0].tensors
    assert tensors[first].buffer == tensors[second].buffer == buffer
    assert tensors[second].is_constant


def test_quantization_and_shape_signature() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    main.add_tensor(
        "per_channel",
        (3, 1, 1, 2),
        "INT8",
        data=np.zeros((3, 1, 1, 2), np.int8),
        quantization=quantization([0.5, 0.25, 0.125], 0, axis=0),
    )
    main.add_tensor(
        "per_tensor", (1, 4), "INT8", quantization=quantization(0.1, -3), shape_signature=(-1, 4)
    )
    per_channel, per_tensor = load_model(builder.build()).subgraphs[0].tensors
    assert per_channel.quantization is not None
    assert per_channel.quantization.channel_count == 3
    assert per_channel.quantization.scale == 0.5
    assert per_tensor.quantization is not None
    assert per_tensor.quantization.zero_point == -3
    assert per_tensor.shape_signature == (-1, 4)
    assert per_tensor.has_dynamic_dims


def test_signature_defs() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    other = builder.add_subgraph("other")
    x, y = _float_tensor(main, "x"), _float_tensor(main, "y")
    main.add_operator("RELU", [x], [y])
    main.set_inputs([x])
    main.set_outputs([y])
    a, b = _float_tensor(other, "a"), _float_tensor(other, "b")
    other.add_operator("LOGISTIC", [a], [b])
    builder.add_signature("serving_default", main)
    builder.add_signature("squash", other, inputs={"values": a}, outputs={"squashed": b})
    signatures = load_model(builder.build()).signature_defs
    assert [(s.key, s.subgraph, s.inputs, s.outputs) for s in signatures] == [
        ("serving_default", 0, (("x", 0),), (("y", 1),)),
        ("squash", 1, (("values", 0),), (("squashed", 1),)),
    ]


def test_metadata_and_offline_plan() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    x, y = _float_tensor(main, "x"), _float_tensor(main, "y")
    main.add_operator("RELU", [x], [y])
    plan = OfflinePlan(version=0, subgraph_count=1, offsets=(0, 16))
    plan_buffer = builder.add_metadata(OFFLINE_PLAN_METADATA, encode_offline_plan(plan))
    builder.add_metadata("note", b"hello")
    model = load_model(builder.build())
    assert [(m.name, m.buffer) for m in model.metadata] == [
        (OFFLINE_PLAN_METADATA, plan_buffer),
        ("note", plan_buffer + 1),
    ]
    assert model.offline_plan == plan
    assert model.buffer_bytes(plan_buffer + 1) == b"hello"
    assert model.buffers[plan_buffer].file_offset % BUFFER_DATA_ALIGNMENT == 0


def test_variable_tensor_and_optional_input() -> None:
    model = load_model(_variable_model(), strict=True)
    main = model.subgraphs[0]
    state = main.tensors[2]
    assert state.is_variable and state.kind is TensorKind.VARIABLE
    assert main.operators[0].inputs == (0, 1, -1)


def test_odd_graphs_are_written_as_asked() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    x, orphan = _float_tensor(main, "x"), _float_tensor(main, "written_by_nobody")
    y, unread = _float_tensor(main, "y"), _float_tensor(main, "unread")
    out = _float_tensor(main, "out")
    main.add_operator("SPLIT_V", [x], [y, unread], options_type="NONE")
    main.add_operator("ADD", [y, orphan], [out])
    main.set_inputs([x])
    main.set_outputs([out])
    data = builder.build()
    graph = load_model(data).subgraphs[0]
    assert orphan not in graph.producers
    assert unread not in graph.consumers
    assert graph.operators[0].options == {}
    with pytest.raises(ModelError, match="written by no operator"):
        load_model(data, strict=True)


def test_custom_operator_and_large_builtin_code() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    x, y, z = (_float_tensor(main, name) for name in "xyz")
    main.add_operator("CUSTOM:ethos-u", [x], [y], custom_options=b"\x01\x02")
    main.add_operator("GELU", [y], [z], options={"approximate": True}, version=2)
    data = builder.build()
    custom, gelu = load_model(data).subgraphs[0].operators
    assert (custom.opcode, custom.custom_code) == ("CUSTOM:ethos-u", "ethos-u")
    assert (gelu.opcode, gelu.version, gelu.options["approximate"]) == ("GELU", 2, True)
    # Codes above 127 do not fit the old byte field, which holds the placeholder 127.
    code = tflite.Model.GetRootAs(data, 0).OperatorCodes(1)
    assert (code.BuiltinCode(), code.DeprecatedBuiltinCode()) == (150, 127)
    raw_custom = tflite.Model.GetRootAs(data, 0).Subgraphs(0).Operators(0)
    assert bytes(raw_custom.CustomOptionsAsNumpy()) == b"\x01\x02"


def test_intermediates() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph()
    x, y, gate = (_float_tensor(main, name) for name in ("x", "y", "gate"))
    main.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, -1], [y], intermediates=[gate])
    (operator,) = load_model(builder.build()).subgraphs[0].operators
    assert operator.intermediates == (gate,)
    assert operator.inputs == (x, -1)


# -- options --------------------------------------------------------------------------------

# opcode → (options given, options expected back from the reader: given, enum names decoded).
OPTION_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "CONV_2D": (
        {"padding": "VALID", "stride_w": 2, "stride_h": 3, "fused_activation_function": "RELU6"},
        {"padding": 1, "stride_w": 2, "stride_h": 3, "fused_activation_function": 3},
    ),
    "DEPTHWISE_CONV_2D": (
        {"depth_multiplier": 2, "dilation_wfactor": 2},
        {"depth_multiplier": 2, "dilation_wfactor": 2, "stride_w": 1, "stride_h": 1},
    ),
    "FULLY_CONNECTED": ({"keep_num_dims": True}, {"keep_num_dims": True}),
    "ADD": ({"fused_activation_function": "RELU"}, {"fused_activation_function": 1}),
    "MUL": ({"fused_activation_function": "TANH"}, {"fused_activation_function": 4}),
    "SUB": ({"pot_scale_int16": False}, {"pot_scale_int16": False}),
    "CONCATENATION": ({"axis": -1}, {"axis": -1}),
    "RESHAPE": ({"new_shape": [2, 2]}, {"new_shape": (2, 2)}),
    "SOFTMAX": ({"beta": 0.5}, {"beta": 0.5}),
    "AVERAGE_POOL_2D": (
        {"filter_width": 3, "filter_height": 2},
        {"filter_width": 3, "filter_height": 2, "stride_w": 1, "stride_h": 1},
    ),
    "MAX_POOL_2D": ({"padding": "SAME"}, {"padding": 0, "filter_width": 1}),
    "MEAN": ({"keep_dims": True}, {"keep_dims": True}),
    "PAD": ({}, {}),
    "LOGISTIC": ({}, {}),
    "RELU": ({}, {}),
    "QUANTIZE": ({}, {}),
    "DEQUANTIZE": ({}, {}),
    "SPLIT": ({}, {"num_splits": 1}),
    "IF": (
        {"then_subgraph_index": 1, "else_subgraph_index": 2},
        {"then_subgraph_index": 1, "else_subgraph_index": 2},
    ),
    "WHILE": (
        {"cond_subgraph_index": 1, "body_subgraph_index": 2},
        {"cond_subgraph_index": 1, "body_subgraph_index": 2},
    ),
    "CALL_ONCE": ({"init_subgraph_index": 2}, {"init_subgraph_index": 2}),
    "SVDF": (
        {"rank": 2, "asymmetric_quantize_inputs": True},
        {"rank": 2, "asymmetric_quantize_inputs": True},
    ),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (
        {"cell_clip": 0.5, "time_major": True, "fused_activation_function": "TANH"},
        {"cell_clip": 0.5, "time_major": True, "fused_activation_function": 4},
    ),
    "TRANSPOSE_CONV": (
        {"padding": "VALID", "stride_w": 2},
        {"padding": 1, "stride_w": 2, "stride_h": 1},
    ),
    "VAR_HANDLE": (
        {"container": "c", "shared_name": "state"},
        {"container": "c", "shared_name": "state"},
    ),
    "READ_VARIABLE": ({}, {}),
    "ASSIGN_VARIABLE": ({}, {}),
}


@pytest.mark.parametrize("opcode", sorted(OPTION_CASES))
def test_options_round_trip(opcode: str) -> None:
    given, expected = OPTION_CASES[opcode]
    (operator,) = load_model(_single_op_model(opcode, given)).subgraphs[0].operators
    assert operator.opcode == opcode
    for field, value in expected.items():
        assert operator.options[field] == value, field
    if opcode == "IF":
        assert operator.called_subgraphs == (1, 2)


def test_split_counts_its_outputs() -> None:
    (operator,) = load_model(_single_op_model("SPLIT", None, outputs=3)).subgraphs[0].operators
    assert operator.options["num_splits"] == 3


def test_options_type_override_and_none() -> None:
    data = _single_op_model("CUSTOM:mine", {"beta": 2.0}, options_type="SoftmaxOptions")
    (operator,) = load_model(data).subgraphs[0].operators
    assert operator.options == {"beta": 2.0}
    (bare,) = (
        load_model(_single_op_model("CONV_2D", None, options_type="NONE")).subgraphs[0].operators
    )
    assert bare.options == {}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.add_operator("NOT_AN_OP", [0], [1]), "unknown builtin operator"),
        (lambda g: g.add_operator("ADD", [0, 7], [1]), "names tensor 7, out of range"),
        (lambda g: g.add_operator("ADD", [0, 0], [-1]), "names tensor -1"),
        (lambda g: g.add_operator("ADD", [0], [1], options={"stride": 1}), "not a field of"),
        (
            lambda g: g.add_operator("ADD", [0], [1], options={"fused_activation_function": "X"}),
            "not a value of",
        ),
        (lambda g: g.add_operator("RELU", [0], [1], options={"alpha": 1}), "no options table"),
        (lambda g: g.add_operator("RELU", [0], [1], options_type="Nope"), "options table"),
        (lambda g: g.add_tensor("t", (2,), "FLOAT32", data=np.zeros(3, np.float32)), "shape"),
        (lambda g: g.add_tensor("t", (2,), "FLOAT32", data=np.zeros(2, np.int32)), "data is"),
        (lambda g: g.add_tensor("t", (2,), "FLOAT99"), "unknown tensor type"),
        (lambda g: g.add_tensor("t", (2,), "INT8", buffer=99), "does not exist"),
        (lambda g: g.set_outputs([5]), "out of range"),
        (lambda g: g.model.add_signature("s", 4), "out of range"),
    ],
)
def test_mistakes_raise_usage_errors(call: Any, message: str) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph()
    _float_tensor(graph, "a")
    _float_tensor(graph, "b")
    with pytest.raises(UsageError, match=message):
        call(graph)


def test_model_without_subgraphs_is_refused() -> None:
    with pytest.raises(UsageError, match="at least one subgraph"):
        ModelBuilder().build()


def test_twenty_thousand_operators_build_in_seconds() -> None:
    with no_hang(10, "20,000 operators"):
        builder = ModelBuilder()
        main = builder.add_subgraph()
        scale = quantization(0.05, 0)
        previous = main.add_tensor("input", (1, 8, 8, 4), "INT8", quantization=scale)
        main.set_inputs([previous])
        for step in range(20_000):
            following = main.add_tensor(f"t{step}", (1, 8, 8, 4), "INT8", quantization=scale)
            main.add_operator("ADD", [previous, previous], [following])
            previous = following
        main.set_outputs([previous])
        data = builder.build()
    assert load_model(data).operator_count == 20_000


# -- models the runtimes run ------------------------------------------------------------------


def _control_flow_model() -> bytes:
    """main: y = IF(cond, x) (then: x + x, else: x * x); z = WHILE(i < 3) { i += 1; y += y }."""
    builder = ModelBuilder(description="control flow")
    main = builder.add_subgraph("main")
    then_graph, else_graph = builder.add_subgraph("then"), builder.add_subgraph("else")
    cond_graph, body_graph = builder.add_subgraph("while_cond"), builder.add_subgraph("while_body")
    condition = main.add_tensor("cond", (1,), "BOOL")
    x, y, z = (_float_tensor(main, name) for name in "xyz")
    counter = main.add_constant("counter", np.zeros(1, np.int32))
    counter_out = main.add_tensor("counter_out", (1,), "INT32")
    main.add_operator(
        "IF",
        [condition, x],
        [y],
        options={"then_subgraph_index": then_graph.index, "else_subgraph_index": else_graph.index},
    )
    main.add_operator(
        "WHILE",
        [counter, y],
        [counter_out, z],
        options={"cond_subgraph_index": cond_graph.index, "body_subgraph_index": body_graph.index},
    )
    main.set_inputs([condition, x])
    main.set_outputs([z])
    for graph, opcode in ((then_graph, "ADD"), (else_graph, "MUL")):
        a, b = _float_tensor(graph, "a"), _float_tensor(graph, "b")
        graph.add_operator(opcode, [a, a], [b])
        graph.set_inputs([a])
        graph.set_outputs([b])
    step, values = cond_graph.add_tensor("i", (1,), "INT32"), _float_tensor(cond_graph, "v")
    limit = cond_graph.add_constant("limit", np.array([3], np.int32))
    keep_going = cond_graph.add_tensor("keep_going", (1,), "BOOL")
    cond_graph.add_operator("LESS", [step, limit], [keep_going])
    cond_graph.set_inputs([step, values])
    cond_graph.set_outputs([keep_going])
    step, values = body_graph.add_tensor("i", (1,), "INT32"), _float_tensor(body_graph, "v")
    one = body_graph.add_constant("one", np.array([1], np.int32))
    next_step = body_graph.add_tensor("i_next", (1,), "INT32")
    next_values = _float_tensor(body_graph, "v_next")
    body_graph.add_operator("ADD", [step, one], [next_step])
    body_graph.add_operator("ADD", [values, values], [next_values])
    body_graph.set_inputs([step, values])
    body_graph.set_outputs([next_step, next_values])
    builder.add_signature("serving_default", main)
    return builder.build()


def _resource_variable_model() -> bytes:
    """CALL_ONCE(init: accumulator = 0); total = accumulator + x; accumulator = total."""
    builder = ModelBuilder(description="resource variables")
    main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
    x = _float_tensor(main, "x")
    handle = main.add_tensor("handle", (1,), "RESOURCE")
    value, total = _float_tensor(main, "value"), _float_tensor(main, "total")
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    main.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "accumulator"})
    main.add_operator("READ_VARIABLE", [handle], [value])
    main.add_operator("ADD", [value, x], [total])
    main.add_operator("ASSIGN_VARIABLE", [handle, total], [])
    main.set_inputs([x])
    main.set_outputs([total])
    init_handle = init.add_tensor("handle", (1,), "RESOURCE")
    zeros = init.add_constant("zeros", np.zeros((1, 4), np.float32))
    init.add_operator("VAR_HANDLE", [], [init_handle], options={"shared_name": "accumulator"})
    init.add_operator("ASSIGN_VARIABLE", [init_handle, zeros], [])
    return builder.build()


def _variable_model() -> bytes:
    """z = FULLY_CONNECTED(x, identity, no bias) + state, where state is a variable tensor."""
    builder = ModelBuilder(description="variable tensor")
    main = builder.add_subgraph("main")
    x = _float_tensor(main, "x")
    weights = main.add_constant("identity", np.eye(4, dtype=np.float32))
    state = main.add_tensor("state", (1, 4), "FLOAT32", is_variable=True)
    y, z = _float_tensor(main, "y"), _float_tensor(main, "z")
    main.add_operator("FULLY_CONNECTED", [x, weights, -1], [y])
    main.add_operator("ADD", [y, state], [z])
    main.set_inputs([x])
    main.set_outputs([z])
    return builder.build()


def test_control_flow_structure() -> None:
    model = load_model(_control_flow_model(), strict=True)
    assert [sg.name for sg in model.subgraphs] == [
        "main",
        "then",
        "else",
        "while_cond",
        "while_body",
    ]
    if_op, while_op = model.subgraphs[0].operators
    assert if_op.called_subgraphs == (1, 2)
    assert while_op.called_subgraphs == (3, 4)
    assert model.signature_defs[0].inputs == (("cond", 0), ("x", 1))


def test_resource_variable_structure() -> None:
    model = load_model(_resource_variable_model(), strict=True)
    main = model.subgraphs[0]
    assert main.operators[0].called_subgraphs == (1,)
    assert main.operators[1].options["shared_name"] == "accumulator"
    assert main.operators[4].outputs == ()


def _run(data: bytes, inputs: list[np.ndarray], *, invocations: int = 1) -> list[np.ndarray]:
    """Model bytes and inputs → [LiteRT output, TFLM output] after `invocations` runs."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    tflite_micro = pytest.importorskip("tflite_micro")
    interpreter = litert.Interpreter(
        model_content=data,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interpreter.allocate_tensors()
    micro = tflite_micro.runtime.Interpreter.from_bytes(data, arena_size=ARENA_BYTES)
    for _ in range(invocations):
        for detail, array in zip(interpreter.get_input_details(), inputs, strict=True):
            interpreter.set_tensor(detail["index"], array)
        interpreter.invoke()
        for position, array in enumerate(inputs):
            micro.set_input(array, position)
        micro.invoke()
    return [
        interpreter.get_tensor(interpreter.get_output_details()[0]["index"]),
        np.array(micro.get_output(0)),
    ]


X = np.arange(4, dtype=np.float32).reshape(1, 4)


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("condition", "expected"), [(True, [0, 16, 32, 48]), (False, [0, 8, 32, 72])]
)
def test_if_and_while_run(condition: bool, expected: list[float]) -> None:
    for output in _run(_control_flow_model(), [np.array([condition]), X]):
        np.testing.assert_array_equal(output, [expected])


@pytest.mark.runtime
def test_call_once_and_resource_variables_run() -> None:
    ones = np.ones((1, 4), np.float32)
    for output in _run(_resource_variable_model(), [ones], invocations=3):
        np.testing.assert_array_equal(output, 3 * ones)


@pytest.mark.runtime
def test_variable_tensor_and_omitted_bias_run() -> None:
    for output in _run(_variable_model(), [X]):
        np.testing.assert_array_equal(output, X)


@pytest.mark.runtime
def test_signature_visible_to_litert() -> None:
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    interpreter = litert.Interpreter(model_content=_chain_model())
    assert interpreter.get_signature_list() == {
        "serving_default": {"inputs": ["x"], "outputs": ["probabilities"]}
    }
