"""Issue 27's paths as flows: a model that fits its board at full size only after a rewrite,
walked as its user would: `check --target BOARD` → the first step's `optimize`, run as printed
→ `check` of the written model, as printed → the real runtime.

    python -m flows --ladder --json benchmarks/results/flows_ladder.json

Each path is a `Flow` of the campaign (`walk.Walk` walks it, `steps.follow` runs the steps) with
the device sample on, so every claim is judged: the as-given number sets the model up on the
board's probe; optimize writes exactly the number the step promised (`step-promise`), and the
model it writes computes the original's outputs on the wheel at its host number; the check of
the written model answers FITS with what the step said it leaves (`step-promise`); the probe of
the board's build sets the written model up at that number (`device-sets-up-at-n`) and, where an
output probe exists, computes the original's outputs there (`device-outputs-at-n`).

The paths: mobilenet_v1_224 and MobileNetV3-small 224 on an STM32F746 (Cortex-M7 CMSIS-NN
probe), MobileNetV2-0.35 96x96 on a NUCLEO-F429ZI (its Cortex-M4 CMSIS-NN build measured on the
Cortex-M7 CMSIS-NN probe: the same DSP code path, ABI and commits; `oracle.CORTEX_M_TARGETS`;
the Cortex-M4 probe itself gives the same figures: `python -m tests.ladder_cases --device`),
MobileNetV2-0.35 160x160 on an ESP32-S3 with `--max-input` (the ESP32-S3 ESP-NN probe; set-up
only, its kernels' bodies are stubs). The models are tests/ladder_cases.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from flows.flow import Flow
from flows.models import Subject

# One path: the model's name, the board, the check's own options, and how the model is made
# (None: the example of that name).
Path = tuple[str, str, tuple[str, ...], Callable[[], bytes] | None]


def _paths() -> tuple[Path, ...]:
    from tests.ladder_cases import mobilenet_v2, mobilenet_v3_small

    return (
        ("mobilenet_v1_224", "stm32f746", (), None),
        ("mobilenet_v3_small_224", "stm32f746", (), mobilenet_v3_small),
        ("mobilenet_v2_035_96", "nucleo-f429zi", (), lambda: mobilenet_v2(96)),
        ("mobilenet_v2_035_160", "esp32-s3-devkitc-1", ("--max-input",), lambda: mobilenet_v2(160)),
    )


def ladder_flows(seed: int = 27) -> tuple[Flow, ...]:
    """The four paths as flows (index = position), the device sample on for each."""
    flows = []
    for index, (name, board, options, make) in enumerate(_paths()):
        if make is None:
            from arenalens.examples import example_bytes

            data, argument = example_bytes(name), f"example:{name}"
        else:
            data, argument = make(), ""
        subject = Subject("ladder", f"ladder {name}", data, argument=argument)
        flows.append(
            Flow(
                seed=seed,
                index=index,
                subject=subject,
                build=("--target", board),
                shape=(),
                optimize=None,
                command="check",
                later_shape=(),
                budget_ratio=None,
                options=options,
                follow_steps=True,
            )
        )
    return tuple(flows)
