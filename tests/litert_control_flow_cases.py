"""Resource variables read and assigned inside IF / WHILE subgraphs: which reads the builtin
kernels run before their variable exists depends on which subgraph runs, and when
(runtimes/litert/variable_order.py). Each case is one float [1, 4] variable 's'; the main
subgraph's inputs are a BOOL condition (IF) or an INT32 count (WHILE: the loop runs while
count < 1, so count 0 runs the body once, count 1 never) and x [1, 4].

    python -m tests.litert_control_flow_cases          # each probe on the wheel, by input
    python -m tests.litert_control_flow_cases --write  # held-out cases' runs -> tests/data
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from pathlib import Path

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

SHAPE = [1, 4]


def _handle(graph: SubgraphBuilder, name: str = "s") -> int:
    tensor = graph.add_tensor(f"{name}/handle", [1], "RESOURCE")
    graph.add_operator("VAR_HANDLE", [], [tensor], options={"shared_name": name})
    return tensor


def _branch(graph: SubgraphBuilder, steps: str) -> None:
    """One IF branch taking x, giving y: 'read' adds the variable to x, 'assign' assigns x to
    it first, '' gives RELU(x)."""
    x, y = graph.add_tensor("x", SHAPE), graph.add_tensor("y", SHAPE)
    if steps == "":
        graph.add_operator("RELU", [x], [y])
    for step in steps.split("+") if steps else ():
        handle = _handle(graph)
        if step == "assign":
            graph.add_operator("ASSIGN_VARIABLE", [handle, x], [])
        else:
            read = graph.add_tensor("read", SHAPE)
            graph.add_operator("READ_VARIABLE", [handle], [read])
            graph.add_operator("ADD", [x, read], [y])
    if "read" not in steps and steps:
        graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])


def if_model(then: str, otherwise: str, *, before: str = "", after: str = "") -> bytes:
    """IF(cond, x) with branches doing `then` / `otherwise` ('read', 'assign', 'assign+read',
    ''); the main subgraph may 'assign' x before the IF and may 'read' the variable after it
    (added to the IF's output)."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    branches = builder.add_subgraph("then"), builder.add_subgraph("else")
    cond, x = main.add_tensor("cond", [1], "BOOL"), main.add_tensor("x", SHAPE)
    if before == "assign":
        main.add_operator("ASSIGN_VARIABLE", [_handle(main), x], [])
    picked = main.add_tensor("picked", SHAPE)
    main.add_operator(
        "IF",
        [cond, x],
        [picked],
        options={"then_subgraph_index": branches[0].index, "else_subgraph_index": 2},
    )
    out = picked
    if after == "read":
        read, out = main.add_tensor("read", SHAPE), main.add_tensor("out", SHAPE)
        main.add_operator("READ_VARIABLE", [_handle(main)], [read])
        main.add_operator("ADD", [picked, read], [out])
    main.set_inputs([cond, x])
    main.set_outputs([out])
    for graph, steps in zip(branches, (then, otherwise), strict=True):
        _branch(graph, steps)
    return builder.build()


def while_model(cond_reads: bool, body: str, *, before: str = "", after: str = "") -> bytes:
    """WHILE(count, x): the cond subgraph gives count < 1 (and reads the variable first when
    `cond_reads`); the body adds 1 to count and does `body` on x ('read': x + s, 'assign':
    s = x, 'read+assign', 'assign+read', ''); main may 'assign' x before and 'read' after."""
    builder = ModelBuilder()
    main, cond, loop = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    count, x = main.add_tensor("count", [1], "INT32"), main.add_tensor("x", SHAPE)
    if before == "assign":
        main.add_operator("ASSIGN_VARIABLE", [_handle(main), x], [])
    outputs = [main.add_tensor("count_out", [1], "INT32"), main.add_tensor("x_out", SHAPE)]
    main.add_operator(
        "WHILE",
        [count, x],
        outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": loop.index},
    )
    out = outputs[1]
    if after == "read":
        read, out = main.add_tensor("read", SHAPE), main.add_tensor("out", SHAPE)
        main.add_operator("READ_VARIABLE", [_handle(main)], [read])
        main.add_operator("ADD", [outputs[1], read], [out])
    main.set_inputs([count, x])
    main.set_outputs([outputs[0], out])

    step, state = cond.add_tensor("count", [1], "INT32"), cond.add_tensor("x", SHAPE)
    limit = cond.add_constant("limit", np.array([1], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    if cond_reads:
        read = cond.add_tensor("read", SHAPE)
        cond.add_operator("READ_VARIABLE", [_handle(cond)], [read])
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])

    step, state = loop.add_tensor("count", [1], "INT32"), loop.add_tensor("x", SHAPE)
    one = loop.add_constant("one", np.array([1], np.int32))
    next_step = loop.add_tensor("count_next", [1], "INT32")
    loop.add_operator("ADD", [step, one], [next_step])
    value = state
    for index, action in enumerate(body.split("+") if body else ()):
        handle = _handle(loop)
        if action == "assign":
            loop.add_operator("ASSIGN_VARIABLE", [handle, value], [])
        else:
            read, total = (
                loop.add_tensor(f"read{index}", SHAPE),
                loop.add_tensor(f"t{index}", SHAPE),
            )
            loop.add_operator("READ_VARIABLE", [handle], [read])
            loop.add_operator("ADD", [value, read], [total])
            value = total
    result = loop.add_tensor("x_next", SHAPE)
    loop.add_operator("RELU", [value], [result])
    loop.set_inputs([step, state])
    loop.set_outputs([next_step, result])
    return builder.build()


def wheel_runs(data: bytes, delegate: str, first_input: int) -> bool:
    """Whether the wheel sets the model up and runs one invoke with the first input (IF's
    condition as 0/1, WHILE's count) and x = 1."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = (
        OpResolverType.AUTO
        if delegate == "xnnpack"
        else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    )
    try:
        interpreter = Interpreter(model_content=data, experimental_op_resolver_type=kind)
        interpreter.allocate_tensors()
        first, second = interpreter.get_input_details()
        interpreter.set_tensor(first["index"], np.full(first["shape"], first_input, first["dtype"]))
        interpreter.set_tensor(second["index"], np.ones(second["shape"], second["dtype"]))
        interpreter.invoke()
    except RuntimeError:
        return False
    return True


def probe_cases() -> dict[str, bytes]:
    """The cases the read-order rule was derived with (written before the rule)."""
    return {
        "if_then_reads": if_model("read", ""),
        "if_both_read": if_model("read", "read"),
        "if_assign_before_then_reads": if_model("read", "", before="assign"),
        "if_then_assigns_read_after": if_model("assign", "", after="read"),
        "if_both_assign_read_after": if_model("assign", "assign", after="read"),
        "if_then_assigns_then_reads": if_model("assign+read", ""),
        "while_cond_reads": while_model(True, ""),
        "while_cond_reads_assigned_before": while_model(True, "", before="assign"),
        "while_body_reads_first": while_model(False, "read+assign"),
        "while_body_assigns_first": while_model(False, "assign+read"),
        "while_body_assigns_read_after": while_model(False, "assign", after="read"),
    }


# Held out (written after the rule was committed): WHILE loops whose body holds an IF on the
# loop count, variables 's' and 't', an optional CALL_ONCE init, reads and assignments placed
# by a seeded draw; the wheel runs each with counts -7, -2, -1, 0 and 1.
HELD_OUT_COUNTS = (-7, -2, -1, 0, 1)
_STEPS = ("", "read", "assign", "assign+read", "read+assign")


def nested_model(seed: int) -> bytes:
    """WHILE(count, x) while count < 1; the body adds 1 to count and runs IF(count < limit)
    with branches drawn from _STEPS over a variable drawn from 's' / 't'; main may zero a
    variable in a CALL_ONCE init, assign x before the loop and read after it."""
    rng = random.Random(seed)
    names = ("s", "t")
    builder = ModelBuilder()
    main, cond, loop = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    then, otherwise = builder.add_subgraph("then"), builder.add_subgraph("else")
    init = builder.add_subgraph("init") if rng.random() < 0.3 else None
    count, x = main.add_tensor("count", [1], "INT32"), main.add_tensor("x", SHAPE)
    if init is not None:
        main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
        zeros = init.add_constant("zeros", np.zeros(SHAPE, np.float32))
        init.add_operator("ASSIGN_VARIABLE", [_handle(init, rng.choice(names)), zeros], [])
    if rng.random() < 0.3:
        main.add_operator("ASSIGN_VARIABLE", [_handle(main, rng.choice(names)), x], [])
    outputs = [main.add_tensor("count_out", [1], "INT32"), main.add_tensor("x_out", SHAPE)]
    main.add_operator(
        "WHILE",
        [count, x],
        outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": loop.index},
    )
    out = outputs[1]
    if rng.random() < 0.5:
        read, out = main.add_tensor("read", SHAPE), main.add_tensor("out", SHAPE)
        main.add_operator("READ_VARIABLE", [_handle(main, rng.choice(names))], [read])
        main.add_operator("ADD", [outputs[1], read], [out])
    main.set_inputs([count, x])
    main.set_outputs([outputs[0], out])

    step, state = cond.add_tensor("count", [1], "INT32"), cond.add_tensor("x", SHAPE)
    one = cond.add_constant("one", np.array([1], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, one], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])

    step, state = loop.add_tensor("count", [1], "INT32"), loop.add_tensor("x", SHAPE)
    one = loop.add_constant("one", np.array([1], np.int32))
    limit = loop.add_constant("limit", np.array([rng.choice((-1, 0, 1))], np.int32))
    next_step, pick = (
        loop.add_tensor("count_next", [1], "INT32"),
        loop.add_tensor("pick", [1], "BOOL"),
    )
    loop.add_operator("ADD", [step, one], [next_step])
    loop.add_operator("LESS", [step, limit], [pick])
    value = loop.add_tensor("value", SHAPE)
    loop.add_operator(
        "IF",
        [pick, state],
        [value],
        options={"then_subgraph_index": then.index, "else_subgraph_index": otherwise.index},
    )
    loop.set_inputs([step, state])
    loop.set_outputs([next_step, value])
    for branch in (then, otherwise):
        _steps(branch, rng.choice(_STEPS), rng.choice(names))
    return builder.build()


def _steps(graph: SubgraphBuilder, steps: str, name: str) -> None:
    """A branch x -> y doing `steps` on variable `name` in order, then RELU."""
    x = graph.add_tensor("x", SHAPE)
    value = x
    for index, step in enumerate(steps.split("+") if steps else ()):
        handle = _handle(graph, name)
        if step == "assign":
            graph.add_operator("ASSIGN_VARIABLE", [handle, value], [])
        else:
            read, total = (
                graph.add_tensor(f"read{index}", SHAPE),
                graph.add_tensor(f"t{index}", SHAPE),
            )
            graph.add_operator("READ_VARIABLE", [handle], [read])
            graph.add_operator("ADD", [value, read], [total])
            value = total
    y = graph.add_tensor("y", SHAPE)
    graph.add_operator("RELU", [value], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])


def held_out_cases() -> dict[str, bytes]:
    """24 drawn models (seeds 8001..8024)."""
    return {f"cf8_{seed - 8000}": nested_model(seed) for seed in range(8001, 8025)}


WHEEL = Path(__file__).resolve().parent / "data" / "litert_control_flow.json"
REMAKE = "python -m tests.litert_control_flow_cases --write"


def measure_held_out() -> dict[str, dict[str, list[bool]]]:
    """Each held-out case on the wheel: per delegate, whether each count in HELD_OUT_COUNTS ran."""
    return {
        name: {
            delegate: [wheel_runs(data, delegate, count) for count in HELD_OUT_COUNTS]
            for delegate in ("none", "xnnpack")
        }
        for name, data in held_out_cases().items()
    }


def main() -> None:
    if "--write" in sys.argv[1:]:
        from importlib.metadata import version

        document = {
            "command": REMAKE,
            "wheel": f"ai-edge-litert {version('ai-edge-litert')}",
            "counts": list(HELD_OUT_COUNTS),
            "cases": measure_held_out(),
        }
        WHEEL.write_text(json.dumps(document, indent=1) + "\n")
        return
    cases = probe_cases()
    for (name, data), delegate in itertools.product(cases.items(), ("none", "xnnpack")):
        runs = [wheel_runs(data, delegate, value) for value in (0, 1)]
        print(f"{name:36} {delegate:8} input 0: {runs[0]!s:5}  input 1: {runs[1]}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
