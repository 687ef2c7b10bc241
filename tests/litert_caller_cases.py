"""Held-out small models for the caller's blocks (runtimes/litert/heap_caller.py: numpy's caches
over the inputs' details and zeros arrays) and the XNNPACK first Invoke's vector of external
values (heap_invoke): one to twelve inputs of ranks 0 to 6, float32, int32 or per-tensor int8,
most under numpy's 1 KiB data cache and some over it, some with names over 15 characters (a
std::string block) or over 512 B (a malloc'd str), each added to itself or to a neighbour of its
shape, so that the heap is mostly the interpreter's fixed part and the caller's blocks weigh
most. Drawn after heap_caller.py replayed numpy's caches; measured on the wheel by
`nice -n 10 python -m tests.litert_heap_measure --only caller10_` (tests/data/litert_heap.json)."""

from __future__ import annotations

import random

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization

_DTYPES = ("FLOAT32", "FLOAT32", "INT32", "INT8")


def _shape(draw: random.Random) -> list[int]:
    rank = draw.choice((0, 1, 1, 2, 2, 3, 4, 4, 5, 6))
    limit = 700 if draw.random() < 0.8 else 3000  # bytes: mostly under numpy's data cache
    shape: list[int] = []
    for _ in range(rank):
        shape.append(draw.randint(1, max(1, int((limit / 4) ** (1 / rank)))))
    return shape


def _name(draw: random.Random, index: int) -> str:
    length = draw.choice((1, 8, 15, 16, 40, 300, 600))
    stem = f"in{index}_"
    return (stem + "x" * length)[: max(length, len(stem))]


def _input(g: SubgraphBuilder, draw: random.Random, index: int) -> tuple[int, list[int], str]:
    dtype = draw.choice(_DTYPES)
    shape = _shape(draw)
    quantized = quantization(draw.choice((0.02, 0.5)), draw.randint(-8, 8))
    spec = quantized if dtype == "INT8" else None
    tensor = g.add_tensor(_name(draw, index), shape, dtype, quantization=spec)
    return tensor, shape, dtype


def caller_case(seed: int) -> bytes:
    """The same bytes per seed."""
    draw = random.Random(10_000 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    inputs = [_input(g, draw, index) for index in range(draw.randint(1, 12))]
    outputs = []
    for position, (tensor, shape, dtype) in enumerate(inputs):
        partner = tensor
        for other, other_shape, other_dtype in inputs[position + 1 :]:
            if other_shape == shape and other_dtype == dtype:
                partner = other
                break
        spec = quantization(0.5, 0) if dtype == "INT8" else None
        output = g.add_tensor(f"out{position}", shape, dtype, quantization=spec)
        g.add_operator("ADD", [tensor, partner], [output])
        outputs.append(output)
    g.set_inputs([tensor for tensor, _, _ in inputs])
    g.set_outputs(outputs)
    return model.build()
