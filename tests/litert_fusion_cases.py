"""Held-out models for XNNPACK's fusions of 8-bit unary chains into a LUT and of copies
(runtimes/litert/xnnpack_workspace.py: fuse_unary_chains, fuse_copies), drawn after those rules
were committed; measured by `python -m tests.litert_heap_measure --only lut7_` into
tests/data/litert_heap.json.

Each seed draws one int8 (sometimes uint8-free, always one scale) graph: an input, an ADD or a
FULLY_CONNECTED, then one to four runs of 1-12 element-wise unary operators (TANH, LOGISTIC,
RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, ELU, a requantizing QUANTIZE), sometimes a value read by
two operators (which ends a chain), sometimes a DEQUANTIZE to float ending a run (a chain backs
off to its last 8-bit value), sometimes a variable read and assigned around a run (copies).
"""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_cases import _single

# Output quantization the builtin kernels need for each 8-bit activation (TANH and LOGISTIC
# tables are built for these; the others keep any scale).
_FIXED = {"TANH": (1 / 128, 0), "LOGISTIC": (1 / 256, -128)}
_UNARY = ("TANH", "LOGISTIC", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "ELU", "QUANTIZE")


def unary_chain_model(seed: int) -> bytes:
    """One drawn model (see the module docstring); the same bytes for the same seed."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        width = rng.choice([8, 16, 32, 64])
        shape = [rng.choice([1, 2]), width]
        count = [0]

        def tensor(scale: float = 0.05, zero: int = 0) -> int:
            count[0] += 1
            return g.add_tensor(
                f"t{count[0]}", shape, "INT8", quantization=quantization(scale, zero)
            )

        x = tensor()
        current = tensor(0.1)
        if rng.random() < 0.5:
            y = tensor()
            g.add_operator("ADD", [x, y], [current])
            inputs = [x, y]
        else:
            weights = g.add_constant(
                "w",
                weights_rng.integers(-127, 128, (width, width)).astype(np.int8),
                quantization=quantization(0.01, 0),
            )
            g.add_operator("FULLY_CONNECTED", [x, weights, -1], [current])
            inputs = [x]
        outputs: list[int] = []
        handle = None
        if rng.random() < 0.3:
            handle = g.add_tensor("state/handle", [1], "RESOURCE")
            g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "state"})
            g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
        for run in range(rng.randint(1, 4)):
            for _step in range(rng.randint(1, 12)):
                opcode = rng.choice(_UNARY)
                scale, zero = _FIXED.get(opcode, (rng.choice([0.02, 0.05, 0.1]), 0))
                following = tensor(scale, zero)
                options = {"alpha": 0.2} if opcode == "LEAKY_RELU" else {}
                g.add_operator(opcode, [current], [following], options=options)
                current = following
            draw = rng.random()
            if draw < 0.25:
                outputs.append(current)  # read by the caller and by the next run
            elif draw < 0.4 and handle is not None:
                read = tensor(0.1)
                g.add_operator("READ_VARIABLE", [handle], [read])
                total = tensor(0.1)
                g.add_operator("ADD", [current, read], [total])
                current = total
            elif draw < 0.5 and run > 0:
                floats = g.add_tensor(f"f{run}", shape)
                g.add_operator("DEQUANTIZE", [current], [floats])
                outputs.append(floats)
        outputs.append(current)
        return inputs, outputs

    return _single(build)
