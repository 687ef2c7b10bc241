"""Random valid models for property tests: DAGs with branches, residuals, several outputs and
control-flow subgraphs, every operator shape-consistent so both runtimes' rules accept them.

All activations are float32 `[1, width]` rows. Each new operator reads recent tensors most of the
time (chains) and older ones sometimes (skips and residuals, which keep tensors live long),
SPLIT makes several outputs at once, and IF / WHILE / CALL_ONCE call small subgraphs of their
own. The graph outputs are a random mix of the last tensor, tensors other operators also read,
and dead ends.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

UNARY = ("RELU", "TANH", "LOGISTIC", "RELU6", "ABS")
BINARY = ("ADD", "MUL", "SUB", "MAXIMUM")
WIDTHS = (1, 4, 8, 16, 24, 64, 100)


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """Bounds of one random model."""

    max_operators: int = 30
    control_flow: bool = True
    max_outputs: int = 3


def random_dag_model(rng: random.Random, spec: GraphSpec = GraphSpec()) -> bytes:
    """A random valid model (bytes): a main DAG, maybe control-flow subgraphs."""
    builder = ModelBuilder(description="random DAG")
    main = builder.add_subgraph("main")
    _RandomGraph(builder, main, rng, spec).build(rng.randrange(1, spec.max_operators + 1))
    return builder.build()


class _RandomGraph:
    """Grows one subgraph operator by operator from a pool of available tensors."""

    def __init__(
        self, builder: ModelBuilder, graph: SubgraphBuilder, rng: random.Random, spec: GraphSpec
    ) -> None:
        self.builder = builder
        self.graph = graph
        self.rng = rng
        self.spec = spec
        self.available: list[int] = []  # tensors that may be read, oldest first
        self.width: dict[int, int] = {}
        self.count = 0

    def tensor(self, width: int) -> int:
        self.count += 1
        index = self.graph.add_tensor(f"t{self.count}", [1, width])
        self.width[index] = width
        return index

    def pick(self) -> int:
        """Mostly one of the last few tensors (chains); sometimes any older one (skips)."""
        if self.rng.random() < 0.75:
            return self.rng.choice(self.available[-3:])
        return self.rng.choice(self.available)

    def build(self, operators: int) -> None:
        inputs = [self.tensor(self.rng.choice(WIDTHS)) for _ in range(self.rng.randrange(1, 4))]
        self.available.extend(inputs)
        self.graph.set_inputs(inputs)
        for _ in range(operators):
            self.add_operator()
        produced = [t for t in self.available if t not in inputs]
        outputs = {self.available[-1]}
        for _ in range(self.rng.randrange(0, self.spec.max_outputs)):
            outputs.add(self.rng.choice(produced or self.available))
        self.graph.set_outputs(sorted(outputs))

    def add_operator(self) -> None:
        kinds = ["unary", "binary", "dense", "concat", "split"]
        if self.spec.control_flow and self.graph.index == 0:
            kinds += ["if", "while", "call_once"]
        kind = self.rng.choice(kinds)
        source = self.pick()
        width = self.width[source]
        if kind == "unary":
            output = self.tensor(width)
            self.graph.add_operator(self.rng.choice(UNARY), [source], [output])
        elif kind == "binary":
            partners = [t for t in self.available if self.width[t] == width]
            output = self.tensor(width)
            opcode = self.rng.choice(BINARY)
            self.graph.add_operator(opcode, [source, self.rng.choice(partners)], [output])
        elif kind == "dense":
            out_width = self.rng.choice(WIDTHS)
            weights = self.graph.add_constant(
                f"w{self.count}", np.ones((out_width, width), dtype="float32")
            )
            bias = self.graph.add_constant(f"b{self.count}", np.zeros(out_width, dtype="float32"))
            output = self.tensor(out_width)
            self.graph.add_operator("FULLY_CONNECTED", [source, weights, bias], [output])
        elif kind == "concat":
            parts = [source, self.pick()]
            output = self.tensor(sum(self.width[p] for p in parts))
            self.graph.add_operator("CONCATENATION", parts, [output], options={"axis": 1})
        elif kind == "split":
            count = self.rng.choice([d for d in (2, 4) if width % d == 0] or [1])
            axis = self.graph.add_constant(f"axis{self.count}", np.array(1, dtype="int32"))
            outputs = [self.tensor(width // count) for _ in range(count)]
            self.graph.add_operator("SPLIT", [axis, source], outputs)
            self.available.extend(outputs[:-1])
            output = outputs[-1]
        else:
            output = self.control_flow(kind, source, width)
        self.available.append(output)

    def control_flow(self, kind: str, source: int, width: int) -> int:
        """IF / WHILE / CALL_ONCE calling fresh subgraphs that map [1, width] → [1, width]."""
        output = self.tensor(width)
        if kind == "call_once":
            init = self.builder.add_subgraph(f"init{self.count}")
            state = init.add_tensor("state", [1, width])
            init.add_operator("RELU", [init.add_tensor("zero", [1, width])], [state])
            index = init.index
            self.graph.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": index})
            self.graph.add_operator("RELU", [source], [output])
            return output
        body = self.subgraph(f"body{self.count}", width)
        if kind == "if":
            other = self.subgraph(f"else{self.count}", width)
            flag = self.graph.add_tensor(f"flag{self.count}", [1], "BOOL")
            self.graph.add_operator(
                "IF",
                [flag, source],
                [output],
                options={"then_subgraph_index": body, "else_subgraph_index": other},
            )
            self.graph.set_inputs([*self.graph.inputs, flag])
            return output
        cond = self.builder.add_subgraph(f"cond{self.count}")
        value = cond.add_tensor("value", [1, width])
        limit = cond.add_constant("limit", np.zeros((1, width), dtype="float32"))
        less = cond.add_tensor("less", [1, width], "BOOL")
        flag = cond.add_tensor("flag", [], "BOOL")
        axis = cond.add_constant("axis", np.array([1], dtype="int32"))
        cond.add_operator("LESS", [value, limit], [less])
        cond.add_operator("REDUCE_ANY", [less, axis], [flag])
        cond.set_inputs([value])
        cond.set_outputs([flag])
        self.graph.add_operator(
            "WHILE",
            [source],
            [output],
            options={"cond_subgraph_index": cond.index, "body_subgraph_index": body},
        )
        return output

    def subgraph(self, name: str, width: int) -> int:
        """A small random DAG subgraph with one [1, width] input and output; its index."""
        graph = self.builder.add_subgraph(name)
        spec = GraphSpec(max_operators=6, control_flow=False, max_outputs=1)
        inner = _RandomGraph(self.builder, graph, self.rng, spec)
        first = inner.tensor(width)
        inner.available.append(first)
        graph.set_inputs([first])
        for _ in range(self.rng.randrange(1, spec.max_operators + 1)):
            inner.add_operator()
        same_width = [t for t in inner.available if inner.width[t] == width and t != first]
        last = same_width[-1] if same_width else first
        if last == first:
            last = inner.tensor(width)
            graph.add_operator("RELU", [first], [last])
        graph.set_outputs([last])
        return graph.index


__all__ = ["GraphSpec", "random_dag_model"]
