"""x86-64-v4 (AVX-512 without AMX-INT8: Skylake-SP to Ice Lake Xeons, Zen 4 and 5) was never
measured: its figure is the largest, per operator, of the measuring machine's XNNPACK tiles and
those XNNPACK selects there (gemm-config.c: 8-bit GEMMs 7x16c8, not AMX's 16x64c4), so it
cannot be under such a CPU's if it is never under the measuring machine's own figure. Checked
on every model of both caches measured on the measuring machine (the upstream repositories'
models and the generated ones): never under `x86-64-avx512`'s figure, nor the wheel's, in any
phase; and above it where the depth unroll of 8 pads more than AMX's 4."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import InterpreterHeap, interpreter_heap, xnnpack_unsized
from arenalens.runtimes.litert.isa import HOST, X86_64_V4
from tests.litert_upstream_measure import absence, mirror, model_bytes
from tests.litert_xnnpack_cases import _batch_matmul
from tests.runtimes.litert import test_litert_heap as generated
from tests.runtimes.litert import test_litert_upstream as upstream

PHASES = upstream.PHASES
UPSTREAM = upstream.MEASURED
GENERATED = [name for name in generated.MEASURED if generated.measured_isa(name) is HOST]


def _heaps(path: Path) -> dict[str, tuple[InterpreterHeap, InterpreterHeap]]:
    """Per delegate mode: (the measuring machine's heap, x86-64-v4's)."""
    analysis = analyze(str(path), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heaps: dict[str, tuple[InterpreterHeap, InterpreterHeap]] = {}
    for mode, delegate in upstream.DELEGATES:
        if delegate == "xnnpack" and xnnpack_unsized(analysis.model):
            continue
        host, v4 = (
            interpreter_heap(analysis.model, sizes, delegate=delegate, isa=isa)
            for isa in (HOST, X86_64_V4)
        )
        heaps[mode] = (host, v4)
    return heaps


def _never_under(
    heaps: dict[str, tuple[InterpreterHeap, InterpreterHeap]], entry: dict[str, Any]
) -> None:
    for mode, (host, v4) in heaps.items():
        real = entry[mode]
        if "error" in real:
            continue
        assert not v4.exact and v4.estimate and X86_64_V4.name in v4.estimate
        for measured, predicted in PHASES:
            figure = getattr(v4, predicted)
            assert figure >= getattr(host, predicted), (mode, predicted)
            assert figure >= real[measured], (mode, measured)


@pytest.mark.parametrize(
    "name", [pytest.param(n, id=n.split(":", 1)[1].removesuffix(".tflite")) for n in UPSTREAM]
)
def test_never_under_the_measuring_machine_on_upstream_models(name: str, tmp_path: Path) -> None:
    repository, path = name.split(":", 1)
    data = model_bytes(repository, path) if mirror(repository).is_dir() else None
    if data is None or absence(data):
        pytest.skip(f"{path}: the mirror or the model's blob is absent")
    model = tmp_path / "model.tflite"
    model.write_bytes(data)
    _never_under(_heaps(model), upstream.CACHE["models"][name])


@pytest.mark.parametrize("name", GENERATED)
def test_never_under_the_measuring_machine_on_generated_models(name: str, tmp_path: Path) -> None:
    path = generated.model_path(name, tmp_path)
    if path is None:
        pytest.skip("the shared models are not here")
    _never_under(_heaps(path), generated.CACHE["models"][name])


def test_a_constant_int8_b_is_packed_to_the_deeper_tile(tmp_path: Path) -> None:
    """A BATCH_MATMUL's constant int8 B of depth 4: AMX's 16x64c4 packs it unpadded, AVX-512
    without AMX's 7x16c8 pads each of its 64 columns to a depth of 8 (a request the replay sizes
    with one configuration: the estimate takes the larger)."""
    path = tmp_path / "batch_matmul.tflite"
    path.write_bytes(_batch_matmul(a=[1, 4, 4], b=[4, 64], kind="int8"))
    host, v4 = _heaps(path)["xnnpack"]
    packed = "XNNPACK packed weights"
    host_part, v4_part = (
        next(part.nbytes for part in heap.parts if part.name == packed) for heap in (host, v4)
    )
    assert v4_part >= host_part + 64 * 4
