"""Random float graphs for LiteRT's arena: MLPs, layer norms, shape arithmetic the converters
leave (SHAPE → GATHER / STRIDED_SLICE → REDUCE_PROD → CONCATENATION → RESHAPE), RFFT2D with a
constant or folded fft_length, reductions, splits, packs, transposes, batch matmuls. Each seed
is one model; none is fitted to a corpus model.

    python -m tests.litert_random_graphs 0 300     # seeds [0, 300): predicted vs the wheel

prints one line per seed (`ok`, or the disagreeing rows) and exits 1 on any disagreement. A
seed the wheel itself refuses (an invalid random reshape) is reported and skipped.
tests/runtimes/litert/test_litert_random_graphs.py runs a sample on the wheel.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

Shape = tuple[int, ...]
Tensor = tuple[int, Shape]


class _Graph:
    """One random graph under construction: a pool of float tensors and their shapes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.weights = np.random.default_rng(seed)
        self.builder = ModelBuilder(description="arenalens: random LiteRT graph")
        self.graph: SubgraphBuilder = self.builder.add_subgraph("main")
        self.pool: list[Tensor] = []
        self.consumed: set[int] = set()
        self.count = 0

    def constant(self, name: str, values: object, dtype: type = np.int32) -> int:
        return self.graph.add_constant(name, np.array(values, dtype=dtype))

    def floats(self, name: str, *shape: int) -> int:
        return self.graph.add_constant(name, self.weights.standard_normal(shape).astype(np.float32))

    def tensor(self, name: str, shape: Shape, dtype: str = "FLOAT32") -> int:
        return self.graph.add_tensor(name, shape, dtype)

    def op(self, opcode: str, inputs: list[int], outputs: list[int], **options: object) -> None:
        self.graph.add_operator(opcode, inputs, outputs, options=options or None)


def _fully_connected(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    units = g.rng.choice((4, 8, 16, 32))
    weights = g.floats("w" + name, units, shape[-1])
    bias = g.floats("b" + name, units) if g.rng.random() < 0.7 else -1
    keep = len(shape) > 2 and g.rng.random() < 0.7
    out: Shape = (*shape[:-1], units) if keep else (int(np.prod(shape[:-1])), units)
    y = g.tensor(name, out)
    activation = g.rng.choice(["NONE", "RELU"])
    g.op("FULLY_CONNECTED", [x, weights, bias], [y], keep_num_dims=keep,
         fused_activation_function=activation)  # fmt: skip
    return y, out


def _layer_norm(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    axis = g.constant("ax" + name, [len(shape) - 1])
    reduced = (*shape[:-1], 1)
    mean = g.tensor(name + "m", reduced)
    g.op("MEAN", [x, axis], [mean], keep_dims=True)
    centred = g.tensor(name + "d", shape)
    g.op(g.rng.choice(["SQUARED_DIFFERENCE", "SUB"]), [x, mean], [centred])
    variance = g.tensor(name + "v", reduced)
    g.op("MEAN", [centred, axis], [variance], keep_dims=True)
    shifted = g.tensor(name + "v2", reduced)
    g.op("ADD", [variance, g.constant("e" + name, [1e-5], np.float32)], [shifted])
    scale = g.tensor(name + "r", reduced)
    g.op(g.rng.choice(["RSQRT", "SQRT"]), [shifted], [scale])
    y = g.tensor(name, shape)
    g.op(g.rng.choice(["MUL", "DIV"]), [centred, scale], [y])
    return y, shape


def _unary(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    y = g.tensor(name, shape)
    g.op(g.rng.choice(["RELU", "LOGISTIC", "TANH", "EXP", "ABS", "NEG"]), [x], [y])
    return y, shape


def _binary(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    others = [t for t, s in g.pool if s == shape and t != x]
    if not others:
        return None
    other = g.rng.choice(others)
    g.consumed.add(other)
    y = g.tensor(name, shape)
    g.op(g.rng.choice(["ADD", "MUL", "SUB", "MAXIMUM"]), [x, other], [y])
    return y, shape


def _with_constant(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    constant = g.floats("c" + name, shape[-1])
    y = g.tensor(name, shape)
    inputs = [x, constant] if g.rng.random() < 0.5 else [constant, x]
    g.op(g.rng.choice(["ADD", "MUL", "SUB", "DIV"]), inputs, [y])
    return y, shape


def _power(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    y = g.tensor(name, shape)
    two = g.constant("p" + name, [2.0], np.float32)
    g.op(g.rng.choice(["POW", "SQUARED_DIFFERENCE"]), [x, two], [y])
    return y, shape


def _reshape(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    out: Shape = (1, int(np.prod(shape)))
    if len(shape) == 2 and shape[1] % 4 == 0:
        out = (1, 4, shape[1] // 4)
    y = g.tensor(name, out)
    g.op("RESHAPE", [x, g.constant("s" + name, list(out))], [y], new_shape=list(out))
    return y, out


def _converter_flatten(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    """RESHAPE whose target is shape arithmetic LiteRT folds in Prepare."""
    dims = g.tensor(name + "sh", (len(shape),), "INT32")
    g.op("SHAPE", [x], [dims], out_type=2)
    batch = g.tensor(name + "p0", (1,), "INT32")
    if g.rng.random() < 0.5:
        g.op("GATHER", [dims, g.constant("gi" + name, [0])], [batch], axis=0)
    else:
        ends = [g.constant(f"{n}{name}", [v]) for n, v in (("b", 0), ("e", 1), ("st", 1))]
        g.op("STRIDED_SLICE", [dims, *ends], [batch])
    rest = g.tensor(name + "p1", (len(shape) - 1,), "INT32")
    ends = [g.constant(f"{n}{name}", [v]) for n, v in (("b2", 1), ("e2", 0), ("st2", 1))]
    g.op("STRIDED_SLICE", [dims, *ends], [rest], end_mask=1)
    out = shape
    if len(shape) == 3 and g.rng.random() < 0.5:
        product = g.tensor(name + "pr", (1,), "INT32")
        g.op("REDUCE_PROD", [rest, g.constant("ax" + name, [0])], [product], keep_dims=True)
        out, rest = (shape[0], shape[1] * shape[2]), product
    target = g.tensor(name + "shp", (len(out),), "INT32")
    g.op("CONCATENATION", [batch, rest], [target], axis=0)
    y = g.tensor(name, out)
    g.op("RESHAPE", [x, target], [y])
    return y, out


def _transpose(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    if len(shape) != 3:
        return None
    out = (shape[0], shape[2], shape[1])
    y = g.tensor(name, out)
    g.op("TRANSPOSE", [x, g.constant("p" + name, [0, 2, 1])], [y])
    return y, out


def _concatenation(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    other, other_shape = g.rng.choice([(t, s) for t, s in g.pool if s[:-1] == shape[:-1]])
    out = (*shape[:-1], shape[-1] + other_shape[-1])
    y = g.tensor(name, out)
    g.op("CONCATENATION", [x, other], [y], axis=len(shape) - 1)
    return y, out


def _softmax(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    y = g.tensor(name, shape)
    g.op("SOFTMAX", [x], [y], beta=1.0)
    return y, shape


def _reduce(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    keep = g.rng.random() < 0.5
    out = (shape[0], 1, *shape[2:]) if keep else (shape[0], *shape[2:])
    y = g.tensor(name, out)
    g.op(g.rng.choice(["MEAN", "SUM", "REDUCE_MAX"]), [x, g.constant("ax" + name, [1])], [y],
         keep_dims=keep)  # fmt: skip
    return y, out


def _batch_matmul(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    if len(shape) != 3:
        return None
    out = (*shape[:2], 8)
    y = g.tensor(name, out)
    g.op("BATCH_MATMUL", [x, g.floats("w" + name, shape[2], 8)], [y])
    return y, out


def _strided_slice(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    if shape[1] < 2:
        return None
    end = [*shape]
    end[1] = shape[1] // 2
    bounds = [g.constant(f"{n}{name}", v) for n, v in
              (("b", [0] * len(shape)), ("e", end), ("st", [1] * len(shape)))]  # fmt: skip
    y = g.tensor(name, tuple(end))
    g.op("STRIDED_SLICE", [x, *bounds], [y])
    return y, tuple(end)


def _split(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    if shape[1] % 2:
        return None
    out = (shape[0], shape[1] // 2, *shape[2:])
    halves = [g.tensor(f"{name}_{i}", out) for i in range(2)]
    g.op("SPLIT", [g.constant("a" + name, 1), x], halves, num_splits=2)
    g.pool.append((halves[0], out))
    return halves[1], out


def _pack(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    other = g.rng.choice([t for t, s in g.pool if s == shape])
    out = (shape[0], 2, *shape[1:])
    y = g.tensor(name, out)
    g.op("PACK", [x, other], [y], values_count=2, axis=1)
    return y, out


def _spectrum(g: _Graph, x: int, shape: Shape, name: str) -> Tensor | None:
    """RFFT2D → COMPLEX_ABS, fft_length constant or folded from a CONCATENATION."""
    if len(shape) != 3 or shape[2] & (shape[2] - 1) or shape[1] & (shape[1] - 1):
        return None
    if g.rng.random() < 0.5:
        length = g.constant("L" + name, [shape[1], shape[2]])
    else:
        length = g.tensor(name + "L", (2,), "INT32")
        parts = [g.constant("la" + name, [shape[1]]), g.constant("lb" + name, [shape[2]])]
        g.op("CONCATENATION", parts, [length], axis=0)
    out = (shape[0], shape[1], shape[2] // 2 + 1)
    spectrum = g.tensor(name + "c", out, "COMPLEX64")
    g.op("RFFT2D", [x, length], [spectrum])
    y = g.tensor(name, out)
    g.op("COMPLEX_ABS", [spectrum], [y])
    return y, out


_LAYERS: tuple[Callable[[_Graph, int, Shape, str], Tensor | None], ...] = (
    _fully_connected, _layer_norm, _unary, _binary, _with_constant, _power, _reshape,
    _converter_flatten, _converter_flatten, _transpose, _concatenation, _softmax, _reduce,
    _batch_matmul, _strided_slice, _split, _pack, _spectrum,
)  # fmt: skip


def random_graph(seed: int) -> bytes:
    """Seed → one random float model (the same bytes for the same seed)."""
    g = _Graph(seed)
    rank = g.rng.choice((2, 3))
    shape = [1, g.rng.choice((4, 8, 16))]
    if rank == 3:
        shape.append(g.rng.choice((8, 12, 16, 32, 96)))
    signature = [-1, *shape[1:]] if g.rng.random() < 0.5 else None
    inputs = [g.graph.add_tensor("x", shape, shape_signature=signature)]
    g.pool.append((inputs[0], tuple(shape)))
    if g.rng.random() < 0.3:
        inputs.append(g.tensor("x2", tuple(shape)))
        g.pool.append((inputs[1], tuple(shape)))
    for _ in range(g.rng.randrange(3, 14)):
        x, x_shape = g.rng.choice(g.pool[-3:])
        if len(x_shape) < 2:
            continue  # a reduction left a vector: every layer here wants a batch and features
        layer = g.rng.choice(_LAYERS)
        made = layer(g, x, x_shape, f"t{g.count}")
        g.count += 1
        if made is not None:
            g.consumed.add(x)
            g.pool.append(made)
    outputs = [t for t, _ in g.pool if t not in g.consumed and t not in inputs]
    g.graph.set_inputs(inputs)
    g.graph.set_outputs(outputs or [g.pool[-1][0]])
    return g.builder.build()


def disagreements(seed: int, folder: Path) -> list[str] | None:
    """Seed → the rows where arenalens and the wheel disagree ([] when all agree), or None when
    the wheel refuses the model."""
    path = folder / f"random_{seed}.tflite"
    path.write_bytes(random_graph(seed))
    return disagreements_of(path)


def disagreements_of(path: Path) -> list[str] | None:
    """A model file → the rows where arenalens and the wheel disagree ([] when all agree), or
    None when the wheel refuses the model."""
    from arenalens.errors import ModelError
    from arenalens.pipeline import analyze
    from arenalens.runtimes.litert.rules import compare_with_real, probe_model

    try:
        real = probe_model(path)
    except ModelError:
        return None
    analysis = analyze(path, runtime="litert")
    result = compare_with_real(
        analysis.model,
        [arena.arena for arena in analysis.arenas],
        [arena.runtime_plan for arena in analysis.arenas],
        real,
    )
    return [f"{row.label}: {row.predicted} vs {row.real}" for row in result.rows if not row.agrees]


def main(argv: list[str]) -> int:
    first, last = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (0, 100)
    failed = agreed = 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(first, last):
            rows = disagreements(seed, Path(folder))
            if rows is None:
                print(f"{seed}: the wheel refuses this graph (skipped)")
            elif rows:
                failed += 1
                print(f"{seed}: {len(rows)} disagreements: {rows[:4]}")
            else:
                agreed += 1
                print(f"{seed}: ok")
    refused = last - first - failed - agreed
    print(f"{agreed} agree, {failed} disagree, {refused} refused by the wheel")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
