"""Held-out TOPK_V2 models whose k is a graph input, read at Eval (topk_v2.cc ResizeOutput):
arenalens counts k at its bound, the input's last dimension (runtimes/litert/heap_invoke
_topk_at_eval). Each seed draws the input's shape and type and whether a second operator
follows; drawn after the rule was written. measure.py invokes on zeros (k = 0);
tests/litert_topk_measure.py measures each at the bound too."""

from __future__ import annotations

import random

from arenalens.tflite.builder import ModelBuilder


def topk_case(seed: int) -> bytes:
    """TOPK_V2 of a drawn input with k from a graph input; the same bytes per seed."""
    draw = random.Random(9_500 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    rank = draw.randint(1, 3)
    shape = [draw.choice((1, 2, 3, 7)) for _ in range(rank - 1)] + [draw.randint(2, 300)]
    dtype = draw.choice(("FLOAT32", "INT32", "INT8"))
    x = g.add_tensor("x", shape, dtype)
    k = g.add_tensor("k", draw.choice(([], [1])), "INT32")
    out_shape = [*shape[:-1], 1]
    values = g.add_tensor("values", out_shape, dtype)
    indices = g.add_tensor("indices", out_shape, "INT32")
    g.add_operator("TOPK_V2", [x, k], [values, indices])
    g.set_inputs([x, k])
    g.set_outputs([values, indices])
    return model.build()
