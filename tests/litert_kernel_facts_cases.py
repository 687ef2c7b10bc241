"""Held-out models for LiteRT kernels whose creation and Prepare blocks were first counted with
the unknown-kernel bounds (heap_kernels.UNKNOWN_*): element-wise ATAN2, ROUND, SIGN, CEIL, FLOOR,
SIN, COS, RELU_0_TO_1, LOGICAL_OR, L2_NORMALIZATION, LOG_SOFTMAX, REDUCE_ALL, SLICE, SCATTER_ND
and TOPK_V2. Each seed draws a chain of a few of them on shapes of its own; measured on the wheel
by `nice -n 10 python -m tests.litert_heap_measure --only facts8_` (tests/data/litert_heap.json)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

# Float element-wise operators of one input (the shape is kept).
UNARY = ("ROUND", "SIGN", "CEIL", "FLOOR", "SIN", "COS", "RELU_0_TO_1", "LOG_SOFTMAX")
# Operators with an input or output of their own kind (a second input, a bool, a k).
OTHERS = ("ATAN2", "LOGICAL_OR", "L2_NORMALIZATION", "REDUCE_ALL", "SLICE", "SCATTER_ND", "TOPK_V2")


def _shape(draw: random.Random) -> list[int]:
    rank = draw.randint(1, 4)
    return [draw.choice((1, 2, 3, 5, 8, 16, 33)) for _ in range(rank - 1)] + [draw.randint(2, 40)]


def _operator(
    g: SubgraphBuilder, draw: random.Random, opcode: str, x: int, shape: list[int], *, step: int
) -> tuple[int, list[int]]:
    """Adds `opcode` reading float `x` of `shape`; returns a float output and its shape."""
    name = f"{opcode.lower()}{step}"
    if opcode in UNARY:
        y = g.add_tensor(name, shape)
        g.add_operator(opcode, [x], [y], options_type=_options_type(opcode))
        return y, shape
    if opcode == "ATAN2":
        other = g.add_constant(f"{name}_b", np.full(shape, 0.5 + step, dtype=np.float32))
        y = g.add_tensor(name, shape)
        g.add_operator("ATAN2", [x, other], [y])
        return y, shape
    if opcode == "L2_NORMALIZATION":
        y = g.add_tensor(name, shape)
        g.add_operator("L2_NORMALIZATION", [x], [y])
        return y, shape
    if opcode in ("LOGICAL_OR", "REDUCE_ALL"):
        zero = g.add_constant(f"{name}_zero", np.zeros(shape, dtype=np.float32))
        positive = g.add_tensor(f"{name}_positive", shape, "BOOL")
        g.add_operator("GREATER", [x, zero], [positive])
        if opcode == "LOGICAL_OR":
            negative = g.add_tensor(f"{name}_negative", shape, "BOOL")
            g.add_operator("LESS", [x, zero], [negative])
            either = g.add_tensor(name, shape, "BOOL")
            g.add_operator(
                "LOGICAL_OR", [positive, negative], [either], options_type="LogicalOrOptions"
            )
            out_shape = shape
        else:
            axis = g.add_constant(f"{name}_axis", np.array([len(shape) - 1], dtype=np.int32))
            out_shape = [*shape[:-1], 1]
            either = g.add_tensor(name, out_shape, "BOOL")
            g.add_operator("REDUCE_ALL", [positive, axis], [either],
                           options={"keep_dims": True}, options_type="ReducerOptions")  # fmt: skip
        y = g.add_tensor(f"{name}_float", out_shape)
        g.add_operator("CAST", [either], [y])
        return y, out_shape
    if opcode == "SLICE":
        size = [max(1, d - draw.randint(0, d - 1)) for d in shape]
        begin = [draw.randint(0, d - s) for d, s in zip(shape, size, strict=True)]
        begins = g.add_constant(f"{name}_begin", np.array(begin, dtype=np.int32))
        sizes = g.add_constant(f"{name}_size", np.array(size, dtype=np.int32))
        y = g.add_tensor(name, size)
        g.add_operator("SLICE", [x, begins, sizes], [y], options_type="SliceOptions")
        return y, size
    if opcode == "SCATTER_ND":
        # Scatters x's rows (its first axis) into a tensor with two more rows.
        rows = shape[0]
        rows_at = np.arange(rows, dtype=np.int32).reshape(rows, 1)
        indices = g.add_constant(f"{name}_indices", rows_at)
        out_shape = [rows + 2, *shape[1:]]
        target = g.add_constant(f"{name}_shape", np.array(out_shape, dtype=np.int32))
        y = g.add_tensor(name, out_shape)
        g.add_operator("SCATTER_ND", [indices, x, target], [y], options_type="ScatterNdOptions")
        return y, out_shape
    if opcode == "TOPK_V2":
        k = draw.randint(1, shape[-1])
        ks = g.add_constant(f"{name}_k", np.array(k, dtype=np.int32))
        out_shape = [*shape[:-1], k]
        y = g.add_tensor(name, out_shape)
        where = g.add_tensor(f"{name}_indices", out_shape, "INT32")
        g.add_operator("TOPK_V2", [x, ks], [y, where], options_type="TopKV2Options")
        return y, out_shape
    raise ValueError(opcode)


def _options_type(opcode: str) -> str | None:
    return {"LOG_SOFTMAX": "LogSoftmaxOptions"}.get(opcode)


def kernel_facts_case(seed: int) -> bytes:
    """A chain of two to four of the operators above on a drawn shape; the same bytes per seed."""
    draw = random.Random(8_000 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    shape = _shape(draw)
    x = g.add_tensor("x", shape)
    y, current = x, shape
    kinds = UNARY + OTHERS
    chosen = [kinds[(seed - 1) % len(kinds)], *draw.sample(kinds, draw.randint(1, 3))]
    for step, opcode in enumerate(chosen):
        y, current = _operator(g, draw, opcode, y, current, step=step)
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()
