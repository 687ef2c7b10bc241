"""TFLite Micro's rules: the head arena it plans, the `kTensorArenaSize` it needs, and verify.

Every rule takes the build (`build.Build`: the x86-64 wheel or a Cortex-M firmware build).
Verify runs the real interpreter, the wheel, in a child process (`probe`, `verify`).
"""

from typing import Any

from arenalens.runtimes import RuntimeRules, VerifyResult
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import arenas, tflm_timeline_with_scratch
from arenalens.runtimes.tflm.budget import budget


def _verify(path: str, analysis: Any, **options: Any) -> VerifyResult:
    from arenalens.runtimes.tflm.verify import verify  # noqa: PLC0415 - needs the runtime extra

    return verify(path, analysis, **options)


RUNTIME = RuntimeRules(
    name="tflm",
    title="TensorFlow Lite Micro",
    timeline=tflm_timeline_with_scratch,
    arenas=arenas,
    budget=budget,
    verify=_verify,
    default_alignment=1,
    has_builds=True,
    data_alignment=ARENA_ALIGNMENT,
)
