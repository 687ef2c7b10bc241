"""Held-out resource-variable models and the delegate kernels the real wheel makes of them,
cached in tests/data/litert_variable_partitions.json:

    python -m tests.litert_variable_partitions

Each seed draws one float or int8 model: 1-4 VAR_HANDLEs, then 2-6 steps that assign the
running value to a variable, read one (mostly of the value's shape, sometimes rank 0 or of
another shape, which the delegate refuses) and add it, or apply an element-wise operator.
They were drawn and measured after runtimes/litert/xnnpack_variables.py was committed
(75c4606). Per seed, the wheel's DELEGATE nodes' inputs and outputs with LiteRT's default
resolver (OpResolverType.AUTO: XNNPACK), as `Interpreter._get_ops_details()` lists them.
Needs the `runtime` extra.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_cases import _single

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = REPO_ROOT / "tests/data/litert_variable_partitions.json"
COMMAND = "python -m tests.litert_variable_partitions"
SEEDS = range(1000, 1040)


def variable_model(seed: int) -> bytes:
    """One drawn resource-variable model (see the module docstring)."""
    rng = random.Random(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        int8 = rng.random() < 0.35
        kind = "INT8" if int8 else "FLOAT32"
        width = rng.choice([4, 8, 16])

        def tensor(name: str, shape: list[int]) -> int:
            if int8:
                return g.add_tensor(name, shape, kind, quantization=quantization(0.05, 0))
            return g.add_tensor(name, shape)

        current = tensor("x", [1, width])
        inputs, extra_outputs, handles = [current], [], []
        for number in range(rng.randint(1, 4)):
            handles.append(g.add_tensor(f"v{number}/handle", [1], "RESOURCE"))
            g.add_operator("VAR_HANDLE", [], [handles[-1]], options={"shared_name": f"v{number}"})
        for step in range(rng.randint(2, 6)):
            handle = rng.choice(handles)
            draw = rng.random()
            if draw < 0.35:
                g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
            elif draw < 0.75:
                shape = [1, width] if rng.random() < 0.8 else rng.choice([[], [width]])
                read = tensor(f"read{step}", shape)
                g.add_operator("READ_VARIABLE", [handle], [read])
                if shape == [1, width]:
                    total = tensor(f"add{step}", [1, width])
                    g.add_operator("ADD", [current, read], [total])
                    current = total
                else:
                    extra_outputs.append(read)
            else:
                activated = tensor(f"act{step}", [1, width])
                g.add_operator("TANH" if int8 else "RELU", [current], [activated])
                current = activated
        return inputs, [current, *extra_outputs]

    return _single(build)


def wheel_kernels(path: Path) -> list[dict[str, list[int]]]:
    """The real interpreter's delegate nodes: each one's inputs and outputs."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_path=str(path), experimental_op_resolver_type=OpResolverType.AUTO
    )
    interpreter.allocate_tensors()
    return [
        {"inputs": [int(i) for i in node["inputs"]], "outputs": [int(i) for i in node["outputs"]]}
        for node in interpreter._get_ops_details()
        if node["op_name"] == "DELEGATE"
    ]


def main() -> int:
    import ai_edge_litert

    document: dict[str, Any] = {
        "command": COMMAND,
        "ai_edge_litert": getattr(ai_edge_litert, "__version__", "unknown"),
        "models": {},
    }
    with tempfile.TemporaryDirectory() as scratch:
        for seed in SEEDS:
            path = Path(scratch) / f"variables_{seed}.tflite"
            path.write_bytes(variable_model(seed))
            document["models"][str(seed)] = wheel_kernels(path)
    DATA.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
