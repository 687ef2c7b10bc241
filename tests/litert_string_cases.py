"""Held-out models with string tensors for LiteRT's heap: string inputs the caller sets (the
wrapper's set_tensor through LiteRT's DynamicBuffer, runtimes/litert/heap_caller.py) and GATHERs
writing string outputs at Eval. Each seed draws one or two string inputs of its own shapes
(a rank-0 one passed straight to an output among them), gathered by constant or input indices,
sometimes gathered again; drawn after heap_caller.py was written and measured on the wheel by
`nice -n 10 python -m tests.litert_heap_measure --only strings9_` (tests/data/litert_heap.json)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder


def _gather(
    g: SubgraphBuilder, draw: random.Random, params: int, count: int, name: str
) -> tuple[int, int, list[int]]:
    """GATHER of flat positions out of `params`' `count` strings → (output, its string count,
    the graph inputs it adds)."""
    dtype = draw.choice(("INT32", "INT64"))
    picked = draw.randint(1, 24)
    shape = [picked] if draw.random() < 0.7 else [picked, draw.randint(1, 3)]
    if draw.random() < 0.5:
        values = np.array(
            [draw.randrange(count) for _ in range(int(np.prod(shape)))],
            dtype=np.int32 if dtype == "INT32" else np.int64,
        ).reshape(shape)
        indices = g.add_constant(f"{name}_indices", values)
        inputs: list[int] = []
    else:
        indices = g.add_tensor(f"{name}_indices", shape, dtype)  # the caller's zeros
        inputs = [indices]
    output = g.add_tensor(name, shape, "STRING")
    g.add_operator("GATHER", [params, indices], [output], options={"axis": 0})
    return output, int(np.prod(shape)), inputs


def string_case(seed: int) -> bytes:
    """One to two string inputs gathered once or twice; the same bytes per seed."""
    draw = random.Random(9_000 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    count = draw.choice((1, 2, 3, 5, 8, 9, 16, 17, 31, 64, 100, 130))
    strings = g.add_tensor("strings", [count], "STRING")  # GatherStrings takes 1-D only
    output, gathered, inputs = _gather(g, draw, strings, count, "gathered")
    inputs = [strings, *inputs]
    outputs = [output]
    if draw.random() < 0.4:
        again, _, more = _gather(g, draw, output, gathered, "again")
        inputs.extend(more)
        outputs.append(again)
    if draw.random() < 0.5:
        extra_shape = [] if draw.random() < 0.5 else [draw.randint(1, 40)]
        extra = g.add_tensor("passed", extra_shape, "STRING")
        inputs.append(extra)
        outputs.append(extra)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()
