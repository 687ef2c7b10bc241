"""Shape cases: IF, WHILE, CALL_ONCE (branches use RESHAPE, so only this family's kernels appear),
VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, SubgraphBuilder
from tests.conformance.cases import Case
from tests.conformance.cases.shape.common import Q, data_quantization, shape_case
from tests.conformance.models import INT8_Q, per_channel

# -- IF, WHILE, CALL_ONCE (branches use RESHAPE, so only this family's kernels appear) ----------


def _tensor(graph: SubgraphBuilder, name: str, shape: Sequence[int], dtype: str, q: Q) -> int:
    quantized = data_quantization(dtype) if q == "data" else q
    return graph.add_tensor(name, list(shape), dtype, quantization=quantized)  # type: ignore[arg-type]


def _copy(graph: SubgraphBuilder, source: int, result: int, shape: Sequence[int]) -> None:
    """A RESHAPE to the same shape: the cheapest operator that moves data."""
    graph.add_operator("RESHAPE", [source], [result], options={"new_shape": list(shape)})


def _if_model(
    *,
    cond_type: str = "BOOL",
    cond_q: QuantizationSpec | None = None,
    cond_shape: tuple[int, ...] = (1,),
    dtype: str = "FLOAT32",
    branch_ops: int = 1,
    then_inputs: int = 1,
    else_inputs: int = 1,
) -> Callable[[], bytes]:
    def build() -> bytes:
        builder = ModelBuilder()
        main = builder.add_subgraph("main")
        branches = [builder.add_subgraph("then"), builder.add_subgraph("else")]
        condition = main.add_tensor("cond", list(cond_shape), cond_type, quantization=cond_q)
        source = _tensor(main, "x", (1, 64), dtype, "data")
        result = _tensor(main, "y", (1, 64), dtype, "data")
        main.add_operator(
            "IF",
            [condition, source],
            [result],
            options={"then_subgraph_index": 1, "else_subgraph_index": 2},
        )
        main.set_inputs([condition, source])
        main.set_outputs([result])
        for graph, count in zip(branches, (then_inputs, else_inputs), strict=True):
            inputs = [_tensor(graph, f"i{k}", (1, 64), dtype, "data") for k in range(count)]
            current = inputs[0]
            for step in range(branch_ops):
                following = _tensor(graph, f"t{step}", (1, 64), dtype, "data")
                _copy(graph, current, following, (1, 64))
                current = following
            graph.set_inputs(inputs)
            graph.set_outputs([current])
        return builder.build()

    return build


def _while_model(
    *,
    variables: int = 1,
    dtype: str = "FLOAT32",
    cond_inputs: int | None = None,
    body_inputs: int | None = None,
) -> Callable[[], bytes]:
    """WHILE over a bool flag (the condition: a copy of it) and `variables - 1` data tensors
    (the body copies each); a false flag ends the loop at once."""

    def build() -> bytes:
        builder = ModelBuilder()
        main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
        specs = [((1,), "BOOL", None)] + [((1, 32), dtype, "data")] * (variables - 1)
        inputs = [_tensor(main, f"v{k}", s, t, q) for k, (s, t, q) in enumerate(specs)]
        outputs = [_tensor(main, f"r{k}", s, t, q) for k, (s, t, q) in enumerate(specs)]
        main.add_operator(
            "WHILE", inputs, outputs, options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
        )
        main.set_inputs(inputs)
        main.set_outputs(outputs)
        count = len(specs) if cond_inputs is None else cond_inputs
        cond_tensors = [
            _tensor(cond, f"c{k}", *specs[min(k, len(specs) - 1)]) for k in range(count)
        ]
        flag = cond.add_tensor("continue", [1], "BOOL")
        _copy(cond, cond_tensors[0], flag, (1,))
        cond.set_inputs(cond_tensors)
        cond.set_outputs([flag])
        count = len(specs) if body_inputs is None else body_inputs
        body_tensors = [
            _tensor(body, f"b{k}", *specs[min(k, len(specs) - 1)]) for k in range(count)
        ]
        results = []
        for k, (shape, t, q) in enumerate(specs):
            result = _tensor(body, f"n{k}", shape, t, q)
            _copy(body, body_tensors[min(k, count - 1)], result, shape)
            results.append(result)
        body.set_inputs(body_tensors)
        body.set_outputs(results)
        return builder.build()

    return build


def _while_less_add() -> bytes:
    """The usual counter loop: LESS in the condition, ADD in the body (other families' kernels)."""
    builder = ModelBuilder()
    main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    count, result = main.add_tensor("i", [1], "INT32"), main.add_tensor("o", [1], "INT32")
    main.add_operator(
        "WHILE", [count], [result], options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
    )
    main.set_inputs([count])
    main.set_outputs([result])
    step = cond.add_tensor("i", [1], "INT32")
    limit = cond.add_constant("limit", np.array([10], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step])
    cond.set_outputs([flag])
    step = body.add_tensor("i", [1], "INT32")
    one = body.add_constant("one", np.array([1], np.int32))
    following = body.add_tensor("next", [1], "INT32")
    body.add_operator("ADD", [step, one], [following])
    body.set_inputs([step])
    body.set_outputs([following])
    return builder.build()


def _call_once_model(*, with_input: bool = False, init_ops: int = 2) -> Callable[[], bytes]:
    def build() -> bytes:
        builder = ModelBuilder()
        main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
        source, result = main.add_tensor("x", [1, 64]), main.add_tensor("y", [1, 64])
        main.add_operator(
            "CALL_ONCE", [source] if with_input else [], [], options={"init_subgraph_index": 1}
        )
        _copy(main, source, result, (1, 64))
        main.set_inputs([source])
        main.set_outputs([result])
        current = init.add_tensor("a", [1, 8])
        init.set_inputs([current])
        for step in range(init_ops):
            following = init.add_tensor(f"t{step}", [1, 8])
            _copy(init, current, following, (1, 8))
            current = following
        init.set_outputs([current])
        return builder.build()

    return build


def control_flow_cases() -> list[Case]:
    return [
        shape_case("IF", "FLOAT32", "one_op_branches", _if_model()),
        shape_case("IF", "INT8", "two_op_branches", _if_model(dtype="INT8", branch_ops=2)),
        shape_case("IF", "BOOL", "quantized_condition", _if_model(cond_q=per_channel(16))),
        shape_case("IF", "FLOAT32", "else_takes_more_inputs", _if_model(else_inputs=2)),
        shape_case("IF", "INT32", "refused_condition_type", _if_model(cond_type="INT32")),
        shape_case("IF", "BOOL", "refused_two_conditions", _if_model(cond_shape=(2,))),
        shape_case("IF", "FLOAT32", "refused_then_arity", _if_model(then_inputs=2)),
        shape_case("WHILE", "BOOL", "flag_only", _while_model()),
        shape_case("WHILE", "FLOAT32", "three_variables", _while_model(variables=3)),
        shape_case("WHILE", "INT8", "two_variables", _while_model(variables=2, dtype="INT8")),
        shape_case("WHILE", "INT32", "less_add", _while_less_add),
        shape_case(
            "WHILE", "FLOAT32", "refused_body_arity", _while_model(variables=2, body_inputs=1)
        ),
        shape_case(
            "WHILE", "FLOAT32", "refused_cond_arity", _while_model(variables=2, cond_inputs=3)
        ),
        shape_case("CALL_ONCE", "FLOAT32", "init_subgraph", _call_once_model()),
        shape_case("CALL_ONCE", "FLOAT32", "refused_input", _call_once_model(with_input=True)),
    ]


# -- VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE --------------------------------------------------


def _variables_model(
    *,
    dtype: str = "FLOAT32",
    assign_in: tuple[str, ...] = ("main",),
    names: tuple[str, ...] = ("v",),
    read_first: bool = True,
    value_q: Q = "data",
    shape: tuple[int, ...] = (2, 24),
) -> Callable[[], bytes]:
    """Variables of `shape` read into main's output and assigned from main's input, in main
    and/or a CALL_ONCE init subgraph (which assigns zeros)."""

    def build() -> bytes:
        builder = ModelBuilder()
        main = builder.add_subgraph("main")
        init = builder.add_subgraph("init") if "init" in assign_in else None
        if init is not None:
            main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": 1})
        source = _tensor(main, "x", shape, dtype, "data")
        outputs = []
        for name in names:
            handle = main.add_tensor(f"{name}/handle", [1], "RESOURCE")
            main.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
            value = _tensor(main, f"{name}/value", shape, dtype, "data")
            steps = [
                ("READ_VARIABLE", [handle], [value]),
                ("ASSIGN_VARIABLE", [handle, source], []),
            ]
            if "main" not in assign_in:
                steps = steps[:1]
            for opcode, operands, results in steps if read_first else steps[::-1]:
                main.add_operator(opcode, operands, results)
            outputs.append(value)
        main.set_inputs([source])
        main.set_outputs(outputs)
        if init is not None:
            for name in names:
                handle = init.add_tensor(f"{name}/handle", [1], "RESOURCE")
                init.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
                zeros = np.zeros(shape, {"FLOAT32": np.float32, "INT8": np.int8}[dtype])
                quantized = data_quantization(dtype) if value_q == "data" else value_q
                constant = init.add_constant(f"{name}/zeros", zeros, dtype, quantization=quantized)  # type: ignore[arg-type]
                init.add_operator("ASSIGN_VARIABLE", [handle, constant], [])
        return builder.build()

    return build


def variable_cases() -> list[Case]:
    return [
        shape_case("VAR_HANDLE", "FLOAT32", "assign_in_main", _variables_model()),
        shape_case("VAR_HANDLE", "INT8", "assign_in_main", _variables_model(dtype="INT8")),
        shape_case(
            "VAR_HANDLE", "FLOAT32", "assign_in_init", _variables_model(assign_in=("init",))
        ),
        shape_case(
            "VAR_HANDLE",
            "INT8",
            "assign_in_both",
            _variables_model(dtype="INT8", assign_in=("main", "init")),
        ),
        shape_case(
            "VAR_HANDLE",
            "INT8",
            "init_value_other_quantization",
            _variables_model(dtype="INT8", assign_in=("init",), value_q=INT8_Q),
        ),
        shape_case("VAR_HANDLE", "FLOAT32", "two_variables", _variables_model(names=("a", "b"))),
        shape_case("VAR_HANDLE", "FLOAT32", "same_name_twice", _variables_model(names=("v", "v"))),
        shape_case(
            "VAR_HANDLE", "FLOAT32", "assign_before_read", _variables_model(read_first=False)
        ),
        shape_case("VAR_HANDLE", "FLOAT32", "never_assigned", _variables_model(assign_in=())),
        # The same kernels listed under their own opcodes, with resource buffers whose sizes are
        # not multiples of the 16-byte alignment (60 and 13 bytes).
        shape_case(
            "READ_VARIABLE",
            "FLOAT32",
            "read_after_assign",
            _variables_model(read_first=False, shape=(3, 5)),
        ),
        shape_case(
            "ASSIGN_VARIABLE",
            "INT8",
            "assign_then_read",
            _variables_model(dtype="INT8", read_first=False, shape=(1, 13)),
        ),
    ]
