"""IFs and WHILEs whose Prepare sets their outputs dynamic (if.cc Prepare, while.cc
Prepare_impl: SetTensorToDynamic, then Eval_dynamic at Invoke), and ones that stay static,
for LiteRT's arena (runtimes/litert/prepare/driver._eval_dynamic): drawn after that rule was
written, held out. `verify --runtime litert` compares every address after allocate_tensors()
on the wheel: a dynamic output has none, and the parent's Prepare stops after the node
(PrepareOpsStartingAt), so the operators its outputs feed are planned at Invoke.

Main inputs: count (INT32 [1], or [] for `while_scalar`), x (FLOAT32 [1, W]) and, for the
kinds that reshape by a run-time shape, shape (INT32 [2]). Kinds, by seed:

* while_grow: the body concatenates or pads x (it grows every turn: dynamic);
* while_dynamic: the body RESHAPEs x by a loop value (a dynamic tensor in the body);
* while_scalar: the count goes in as [] and comes out [1] (total_elements == 1: static);
* while_static: the body works on x at its shape (static);
* if_shapes: the branches give outputs of different shapes (dynamic);
* if_dynamic: a branch RESHAPEs x by the shape input (a dynamic tensor in a branch);
* if_same: both branches give x's shape (static);
* while_if: the body runs an IF of different output shapes (dynamic through the body);
* if_while: the then branch runs a growing WHILE (dynamic through the branch);
* while_while: the body runs a growing WHILE over a zero of its own.

A static extra loop value or IF input rides along at random; static work may run before; the
control flow's outputs feed one or two operators after it.

    python -m tests.litert_dynamic_control_flow_cases 0 200   # the campaign on the wheel
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

KINDS = (
    "while_grow", "while_dynamic", "while_scalar", "while_static", "if_shapes", "if_dynamic",
    "if_same", "while_if", "if_while", "while_while",
)  # fmt: skip
# The kinds whose (outermost) IF or WHILE runs Eval_dynamic.
DYNAMIC = frozenset(KINDS) - {"while_scalar", "while_static", "if_same"}


class _Case:
    """One case's builder and draws."""

    def __init__(self, seed: int) -> None:
        self.draw = random.Random(seed)
        self.builder = ModelBuilder()
        self.width = self.draw.choice((4, 8, 16, 64, 256))
        self.extra = self.draw.random() < 0.5
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def work(self, graph: SubgraphBuilder, data: int) -> int:
        """A shape-keeping operator on a float tensor."""
        output = graph.add_tensor(self.name("w"), list(graph.shape(data)))
        opcode = self.draw.choice(("RELU", "TANH", "ADD", "LOGISTIC"))
        if opcode == "ADD":
            graph.add_operator("ADD", [data, data], [output])
        else:
            graph.add_operator(opcode, [data], [output])
        return output

    def grow(self, graph: SubgraphBuilder, data: int) -> int:
        """x → a wider x: CONCATENATION with itself or a PAD by a constant."""
        width = graph.shape(data)[1]
        if self.draw.random() < 0.5:
            output = graph.add_tensor(self.name("cat"), [1, 2 * width])
            graph.add_operator("CONCATENATION", [data, data], [output], options={"axis": 1})
            return output
        pad = self.draw.choice((1, 3))
        paddings = graph.add_constant(self.name("pads"), np.array([[0, 0], [0, pad]], np.int32))
        output = graph.add_tensor(self.name("pad"), [1, width + pad])
        graph.add_operator("PAD", [data, paddings], [output])
        return output


def _cond(case: _Case, specs: list[tuple[list[int], str]], turns: int) -> int:
    """The condition subgraph: count < turns over the loop values `specs`."""
    cond = case.builder.add_subgraph(case.name("cond"))
    values = [cond.add_tensor(case.name("c"), shape, dtype) for shape, dtype in specs]
    limit = cond.add_constant(case.name("limit"), np.array([turns], np.int32))
    flag = cond.add_tensor(case.name("go"), [1], "BOOL")
    cond.add_operator("LESS", [values[0], limit], [flag])
    cond.set_inputs(values)
    cond.set_outputs([flag])
    return cond.index


def _while(case: _Case, graph: SubgraphBuilder, values: list[int], kind: str) -> list[int]:
    """WHILE over `values` (count, x[, shape][, y]); the body as `kind` says → its outputs."""
    specs = [(list(graph.shape(value)), _dtype(graph, value)) for value in values]
    turns = case.draw.choice((0, 1, 3))
    body = case.builder.add_subgraph(case.name("body"))
    given = [body.add_tensor(case.name("b"), shape, dtype) for shape, dtype in specs]
    count, x = given[0], given[1]
    one = body.add_constant(case.name("one"), np.array([1], np.int32))
    step = body.add_tensor(case.name("step"), [1], "INT32")
    body.add_operator("ADD", [count, one], [step])
    if kind == "while_grow":
        result = case.grow(body, x)
    elif kind == "while_dynamic":
        result = body.add_tensor(case.name("reshaped"), list(specs[1][0]))
        body.add_operator("RESHAPE", [x, given[2]], [result])
    elif kind == "while_if":
        result = _if(case, body, [count, x], "if_shapes")[0]
    elif kind == "while_while":
        zero = body.add_tensor(case.name("zero"), [1], "INT32")
        body.add_operator("SUB", [count, count], [zero])
        result = _while(case, body, [zero, x], "while_grow")[1]
    else:
        result = case.work(body, x)
    taken = [step, result, *given[2:]]
    if case.extra and specs[-1][1] == "FLOAT32" and len(given) > 2:
        taken[-1] = case.work(body, given[-1])  # a static loop value beside the changing one
    body.set_inputs(given)
    body.set_outputs(taken)
    outputs = [
        graph.add_tensor(case.name("out"), shape, dtype, shape_signature=_signature(shape))
        for shape, dtype in specs
    ]
    cond = _cond(case, specs, turns)
    graph.add_operator(
        "WHILE", values, outputs,
        options={"cond_subgraph_index": cond, "body_subgraph_index": body.index},
    )  # fmt: skip
    return outputs


def _if(case: _Case, graph: SubgraphBuilder, values: list[int], kind: str) -> list[int]:
    """IF(count < k, values[1:]) with branches as `kind` says → its outputs."""
    count, rest = values[0], values[1:]
    limit = graph.add_constant(case.name("k"), np.array([case.draw.choice((0, 1))], np.int32))
    pick = graph.add_tensor(case.name("pick"), [1], "BOOL")
    graph.add_operator("LESS", [count, limit], [pick])
    if kind == "if_while":
        rest = [count, *rest]
    specs = [(list(graph.shape(value)), _dtype(graph, value)) for value in rest]
    branches = []
    out_shape = list(specs[-1][0] if kind == "if_while" else specs[0][0])
    for which in ("then", "else"):
        branch = case.builder.add_subgraph(case.name(which))
        given = [branch.add_tensor(case.name("g"), shape, dtype) for shape, dtype in specs]
        x = given[-1] if kind == "if_while" else given[0]
        if which == "then" and kind == "if_shapes":
            result = case.grow(branch, x)
        elif which == "then" and kind == "if_dynamic":
            result = branch.add_tensor(case.name("reshaped"), out_shape)
            branch.add_operator("RESHAPE", [x, given[1]], [result])
        elif which == "then" and kind == "if_while":
            result = _while(case, branch, [given[0], x], "while_grow")[1]
        else:
            result = case.work(branch, x)
        branch.set_inputs(given)
        branch.set_outputs([result])
        branches.append(branch.index)
    output = graph.add_tensor(case.name("picked"), out_shape, shape_signature=_signature(out_shape))
    graph.add_operator(
        "IF", [pick, *rest], [output],
        options={"then_subgraph_index": branches[0], "else_subgraph_index": branches[1]},
    )  # fmt: skip
    return [output]


def _dtype(graph: SubgraphBuilder, tensor: int) -> str:
    return {0: "FLOAT32", 2: "INT32"}[graph.tensors[tensor].type_code]


def _signature(shape: list[int]) -> list[int]:
    return [*shape[:-1], -1] if shape else []


def dynamic_control_flow_case(seed: int) -> bytes:
    """The seed's case: its kind by seed (KINDS in turn), the rest drawn."""
    case = _Case(seed)
    kind = KINDS[seed % len(KINDS)]
    main = case.builder.add_subgraph("main")
    count = main.add_tensor("count", [] if kind == "while_scalar" else [1], "INT32")
    x = main.add_tensor("x", [1, case.width])
    inputs = [count, x]
    data = case.work(main, x) if case.draw.random() < 0.5 else x
    values = [count, data]
    if kind in ("while_dynamic", "if_dynamic"):
        shape = main.add_tensor("shape", [2], "INT32")
        inputs.append(shape)
        values.append(shape)
    if case.extra:
        extra = main.add_tensor("y", [1, case.draw.choice((2, 4, 8))])
        inputs.append(extra)
        values.append(extra)
    if kind.startswith("while"):
        outputs = _while(case, main, values, kind)
        results = [outputs[1]]
        if case.draw.random() < 0.5:
            step = main.add_tensor("count_after", list(main.shape(outputs[0])), "INT32")
            main.add_operator("ADD", [outputs[0], outputs[0]], [step])
            results.append(step)
    else:
        results = _if(case, main, values, kind)
    after = case.work(main, results[0])
    if case.draw.random() < 0.5:
        after = case.work(main, after)
    main.set_inputs(inputs)
    main.set_outputs([after, *results[1:]])
    return case.builder.build()


def main(argv: list[str]) -> int:
    """Seeds [first, last) on the wheel: each case's disagreements with verify's rows."""
    from tests.litert_random_graphs import disagreements_of

    first, last = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (0, 100)
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(first, last):
            path = Path(folder) / f"dyncf_{seed}.tflite"
            path.write_bytes(dynamic_control_flow_case(seed))
            rows = disagreements_of(path)
            if rows is None:
                print(f"{seed} {KINDS[seed % len(KINDS)]}: the wheel refuses it")
            elif rows:
                failed += 1
                print(f"{seed} {KINDS[seed % len(KINDS)]}: {rows}")
    print(f"{last - first} cases, {failed} disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
