"""What TFLM allocates outside kernels on Cortex-M, against the probes: generated models that vary
one runtime allocation each (tests/device_core.py) predicted on three probe builds, every figure
and recorded category equal to the measurement cached in tests/data/device_core.json; and the
struct sizes behind them, by hand from the C headers."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from arenalens.builds.abi import ILP32, LP64
from arenalens.builds.build import HOST, device_build
from arenalens.runtimes.tflm import structs
from arenalens.runtimes.tflm.setup_layout import HOST_64, layout_for
from tests.conformance.predict import predict
from tests.conformance.targets import TARGETS
from tests.device_core import FIELDS, MODELS, cached


def _params() -> list[Any]:
    return [
        pytest.param(target, name, id=f"{target}:{name}")
        for target, models in sorted(cached().items())
        for name in sorted(models)
    ]


def test_every_model_is_measured_on_every_target() -> None:
    from tests.device_core import TARGETS as MEASURED

    assert {target: sorted(models) for target, models in cached().items()} == {
        target: sorted(MODELS) for target in MEASURED
    }, "python -m tests.device_core"


@pytest.mark.parametrize(("target", "name"), _params())
def test_prediction_equals_the_probe(target: str, name: str) -> None:
    measured = cached()[target][name]
    data = MODELS[name]()
    assert hashlib.sha256(data).hexdigest() == measured["sha256"], (
        f"{name} changed since it was measured: python -m tests.device_core"
    )
    predicted = predict(data, TARGETS[target])
    assert {f: predicted[f] for f in FIELDS} == {f: measured[f] for f in FIELDS}
    assert predicted["categories"] == measured["categories"]


def test_plain_allocator_saves_104_bytes_on_cortex_m() -> None:
    """RecordingSingleArenaBufferAllocator 52 + GreedyMemoryPlanner 44 + RecordingMicroAllocator
    124 against 36 + 44 + 36: the probes' min_arena - min_arena_plain on every model."""
    for target in ("cortex-m7", "cortex-m55"):
        recording = layout_for(device_build(target, recording=True))
        plain = layout_for(device_build(target))
        assert (recording.allocator_objects, plain.allocator_objects) == (220, 116)
    for models in cached().values():
        for figures in models.values():
            assert figures["min_arena"] - figures["min_arena_plain"] == 104


# sizeof / alignof from the headers (tensorflow/lite/core/c/common.h with TF_LITE_STATIC_MEMORY,
# micro_allocator.h, ...), as compiled by g++ for x86-64 (with USE_TFLM_COMPRESSION) and by
# arm-none-eabi-g++ for Cortex-M (short enums, no compression).
STRUCT_SIZES = {
    "TfLiteTensor": ((64, 8), (32, 4)),
    "TfLiteAffineQuantization": ((24, 8), (12, 4)),
    "TfLiteEvalTensor": ((24, 8), (12, 4)),
    "TfLiteNode": ((56, 8), (28, 4)),
    "NodeAndRegistration": ((64, 8), (32, 4)),
    "internal::ScratchBufferRequest": ((16, 8), (12, 4)),
    "ScratchBufferHandle": ((8, 8), (4, 4)),
    "SubgraphAllocations": ((24, 8), (8, 4)),
    "AllocationInfo": ((32, 8), (24, 4)),
    "SingleArenaBufferAllocator": ((72, 8), (36, 4)),
    "RecordingSingleArenaBufferAllocator": ((104, 8), (52, 4)),
    "GreedyMemoryPlanner": ((72, 8), (44, 4)),
    "LinearMemoryPlanner": ((8216, 8), (4108, 4)),
    "GreedyMemoryPlanner per buffer": ((40, 4), (40, 4)),
    "MicroAllocator": ((72, 8), (36, 4)),
    "RecordingMicroAllocator": ((272, 8), (124, 4)),
    "MicroBuiltinDataAllocator": ((16, 8), (8, 4)),
    "MicroResourceVariables": ((16, 8), (12, 4)),
    "MicroResourceVariables::MicroResourceVariable": ((40, 8), (20, 4)),
}


@pytest.mark.parametrize("layout", structs.RUNTIME_STRUCTS, ids=lambda s: s.name)
def test_struct_layout(layout: structs.Struct) -> None:
    wheel, cortex_m = STRUCT_SIZES[layout.name]
    assert layout.layout(LP64, HOST.features) == wheel
    assert layout.layout(ILP32, frozenset()) == cortex_m


def test_compression_adds_fields_on_32_bit_too() -> None:
    compression = frozenset({"compression"})
    assert structs.SUBGRAPH_ALLOCATIONS.size(ILP32, compression) == 12
    assert structs.RECORDING_MICRO_ALLOCATOR.size(ILP32, compression) == 136


def test_host_layout_is_the_wheel_measured_one() -> None:
    """The derived host layout keeps the numbers measured on the wheel (golden outputs)."""
    assert layout_for(HOST) is HOST_64
    assert (
        HOST_64.allocator_objects,
        HOST_64.preserve_all_allocator_objects,
        HOST_64.tflite_tensor,
        HOST_64.node_and_registration,
        HOST_64.eval_tensor,
        HOST_64.struct_alignment,
    ) == (448, 8360, 64, 64, 24, 8)
    plain_host = layout_for(HOST.with_recording(False))
    assert HOST_64.allocator_objects - plain_host.allocator_objects == 232


def test_every_allocated_struct_has_the_layout_alignment() -> None:
    for build in (HOST, device_build("cortex-m7")):
        layout = layout_for(build)
        for item in structs.RUNTIME_STRUCTS:
            if item is structs.GREEDY_PLANNER_PER_BUFFER:
                continue  # int arrays inside the planner's buffer, never allocated alone
            assert item.layout(build.abi, build.features)[1] == layout.struct_alignment
