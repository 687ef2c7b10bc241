"""Held-out reductions whose axis is a graph input, read at Eval (runtimes/litert/heap_invoke.py
`_dynamic_axis_blocks`: the resolved axis, the output and, where Eval resizes it, the
accumulator, then the normalized dims): MEAN, SUM, REDUCE_PROD, REDUCE_MAX and REDUCE_MIN over
float32, int32 and per-tensor int8 inputs of rank 1 to 4, one to three axis values, with or
without keep_dims. Drawn after the accumulator rule (read off reduce.cc); measured on the wheel
by `nice -n 10 python -m tests.litert_heap_measure --only axis10_` (tests/data/litert_heap.json;
measure.py's zeros make every axis value 0)."""

from __future__ import annotations

import random

from arenalens.tflite.builder import ModelBuilder, quantization

_OPERATORS = ("MEAN", "MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN")
_DTYPES = ("FLOAT32", "INT32", "INT8")


def dynamic_axis_case(seed: int) -> bytes:
    """The same bytes per seed."""
    draw = random.Random(11_000 + seed)
    operator = draw.choice(_OPERATORS)
    dtype = draw.choice(_DTYPES if operator != "REDUCE_PROD" else ("FLOAT32", "INT8"))
    shape = [draw.randint(1, 9) for _ in range(draw.randint(1, 4))]
    model = ModelBuilder()
    g = model.add_subgraph("main")
    spec = quantization(draw.choice((0.05, 0.5)), 0) if dtype == "INT8" else None
    data = g.add_tensor("data", shape, dtype, quantization=spec)
    axis = g.add_tensor("axis", [draw.randint(1, 3)], "INT32")
    output = g.add_tensor("reduced", [1], dtype, quantization=spec)
    keep = draw.random() < 0.5
    g.add_operator(operator, [data, axis], [output], options={"keep_dims": keep})
    g.set_inputs([data, axis])
    g.set_outputs([output])
    return model.build()
