"""The README's input-size scenario on real TFLM for the Cortex-M7 with CMSIS-NN (the
../shared/tools/cortex-m probe under QEMU): the model `check` leads with, the 224x224 model
`optimize --overlap --split` writes (the remedy ladder's first rung that fits the STM32F746 after
its firmware's reserve), and the example checked at 190x190 (the largest input that fits as
given), each measured (head, tail, minimal arena with the recording and the plain allocator).
The 224x224 example itself is in tests/data/device_examples.json.

    python -m tests.device_scenario   # re-measure (QEMU, about 3 minutes), rewrite the cache

The cache (tests/data/device_scenario.json) records each model's sha256, so a change to the
example, to `--input-shape`'s rewrite or to what `optimize` writes is caught by the test
(tests/test_readme.py) instead of comparing against figures of other bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / "data" / "device_scenario.json"
TARGET = "cortex-m7-cmsis-nn"  # the STM32F746's core and kernels (`--target stm32f746`)
BOARD = "stm32f746"
CHECKED_SIDE = 190  # `check --input-shape input=1x190x190x3`, the largest that fits as given
SPLIT_STEP = "optimize --target stm32f746 --overlap --split"  # at the model's own 224x224


def scenario_models() -> dict[str, bytes]:
    """The scenario's derived models by the step that makes them → their bytes."""
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model
    from arenalens.runtimes.litert.shapes import resize_model_inputs
    from arenalens.target_build import rewrite_rules, target_build
    from arenalens.targets import get_target
    from arenalens.tflite.reader import parse_model
    from arenalens.tflite.rewriter import model_bytes

    example = parse_model(example_bytes("mobilenet_v1_224"), "example:mobilenet_v1_224")

    def at(side: int) -> Any:
        return resize_model_inputs(example, {"input": (1, side, side, 3)})

    board = get_target(BOARD)
    build = target_build(board)
    split = optimize_model(
        example, build=build, overlap=rewrite_rules(build, target=board), split=True, target=board
    )
    assert split.chosen is not None, "optimize --overlap --split wrote nothing"
    return {
        SPLIT_STEP: split.data,
        f"check --input-shape input=1x{CHECKED_SIDE}x{CHECKED_SIDE}x3": model_bytes(
            at(CHECKED_SIDE)
        ),
    }


def cached() -> dict[str, dict[str, Any]]:
    """{step: figures with the model's sha256} as measured."""
    models: dict[str, dict[str, Any]] = json.loads(CACHE.read_text())["models"]
    return models


def main() -> int:
    """Measure both models on the probe and rewrite the cache."""
    from tests.device_core import measure

    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for step, data in scenario_models().items():
            path = Path(folder) / "model.tflite"
            path.write_bytes(data)
            figures = measure(path, TARGET)
            found[step] = {"sha256": hashlib.sha256(data).hexdigest(), **figures}
            print(f"{step}: {figures['min_arena_plain']}", flush=True)
    document = {
        "about": f"The README's input-size scenario on the {TARGET} probe "
        "(../shared/tools/cortex-m). Remade by `python -m tests.device_scenario`.",
        "target": TARGET,
        "models": found,
    }
    CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
