"""Held-out models for the first invoke's re-plan under XNNPACK (runtimes/litert/
heap_xnnpack_reshape.py: a delegate kernel after a rank-0 READ_VARIABLE is prepared at the first
invoke), drawn after it was written; measured by `python -m tests.litert_heap_measure --cache
tests/data/litert_heap_avx2.json --only var12_` on this machine's CPU.

Each seed draws one float or int8 streaming chain: 1-3 variables assigned the input, a few
steps, then one or more READ_VARIABLEs into a rank-0 tensor (graph outputs nothing reads: each
ends a chunk), and after them longer delegated runs whose values are internal to XNNPACK's
runtime (its workspace grows at the first invoke): reads of a variable added or multiplied in,
activations, fully connected layers, some through a wider hidden layer (a larger value inside
the kernel), a float SOFTMAX, and assignments of the running value.
"""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_cases import _single

SCALE = 0.05


def xnnpack_replan_model(seed: int) -> bytes:
    """One drawn model (see the module docstring); the same bytes for the same seed."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        int8 = rng.random() < 0.35
        width = rng.choice([8, 16, 32, 64, 128])
        batch = rng.choice([1, 1, 2, 4])

        def tensor(name: str, columns: int | None, scale: float = SCALE) -> int:
            shape = [batch, columns] if columns is not None else []  # None: rank 0
            if int8:
                return g.add_tensor(name, shape, "INT8", quantization=quantization(scale, 0))
            return g.add_tensor(name, shape)

        def dense(name: str, source: int, inputs: int, outputs: int) -> int:
            made = tensor(name, outputs)
            if int8:
                weights = g.add_constant(
                    f"{name}/w",
                    weights_rng.integers(-127, 128, (outputs, inputs), dtype=np.int8),
                    "INT8",
                    quantization=quantization(np.linspace(0.01, 0.03, outputs), 0),
                )
            else:
                values = weights_rng.standard_normal((outputs, inputs)).astype(np.float32)
                weights = g.add_constant(f"{name}/w", values)
            g.add_operator("FULLY_CONNECTED", [source, weights, -1], [made])
            return made

        current = first = tensor("x", width)
        extra_outputs: list[int] = []
        handles = []
        for number in range(rng.randint(1, 3)):
            handle = g.add_tensor(f"h{number}/handle", [1], "RESOURCE")
            g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": f"s{number}"})
            g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
            handles.append(handle)
        before, after = rng.randint(0, 3), rng.randint(4, 12)
        reads = {before} | {before + step for step in range(1, after - 1) if rng.random() < 0.15}
        for step in range(before + after):
            handle = rng.choice(handles)
            draw = rng.random()
            if step in reads:
                scalar = tensor(f"scalar{step}", None)
                g.add_operator("READ_VARIABLE", [handle], [scalar])
                extra_outputs.append(scalar)
            if draw < 0.3:
                read = tensor(f"read{step}", width)
                g.add_operator("READ_VARIABLE", [handle], [read])
                combined = tensor(f"sum{step}", width)
                opcode = "ADD" if int8 or rng.random() < 0.5 else rng.choice(["MUL", "SUB"])
                g.add_operator(opcode, [current, read], [combined])
                current = combined
            elif draw < 0.5:
                activated = tensor(f"act{step}", width, 1 / 128)
                opcodes = ["TANH", "RELU"] if int8 else ["RELU", "TANH", "LOGISTIC", "RELU6"]
                g.add_operator(rng.choice(opcodes), [current], [activated])
                current = activated
            elif draw < 0.75:
                if rng.random() < 0.5:
                    hidden = width * rng.choice([2, 4, 8])
                    inner = dense(f"up{step}", current, width, hidden)
                    current = dense(f"down{step}", inner, hidden, width)
                else:
                    current = dense(f"dense{step}", current, width, width)
            elif draw < 0.85 and not int8:
                soft = tensor(f"softmax{step}", width)
                g.add_operator("SOFTMAX", [current], [soft], options={"beta": 1.0})
                current = soft
            else:
                g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
        return [first], [current, *extra_outputs]

    return _single(build)
