"""A uint8 TRANSPOSE_CONV under XNNPACK (issue 32): the delegate takes it (deconvolution-nhwc.c's
qu8 variant) and the wheel runs it; arenalens replays it (heap_xnnpack._takes_transpose_conv,
xnnpack_packing.deconvolution's "qu8") instead of stopping with a usage error. Held out:
tests/litert_tconvu8_cases.py, measured on the AMD EPYC into tests/data/litert_heap_avx2.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens import check
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap, xnnpack_unsized
from arenalens.runtimes.litert.isa import X86_64_V3_ZEN
from tests.litert_heap_measure import REPO_ROOT
from tests.litert_held15 import MOMENTS
from tests.litert_tconvu8_cases import TCONVU8_NAMES, tconvu8_case

CACHE: dict[str, Any] = json.loads((REPO_ROOT / "tests/data/litert_heap_avx2.json").read_text())


def _heap(n: int, folder: Path, delegate: str) -> Any:
    path = folder / f"tconvu8_{n}.tflite"
    path.write_bytes(tconvu8_case(n))
    analysis = analyze(path, runtime="litert")
    assert xnnpack_unsized(analysis.model) == ()
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    return interpreter_heap(analysis.model, sizes, delegate=delegate, isa=X86_64_V3_ZEN)


def test_every_tconvu8_model_is_measured() -> None:
    assert all(f"{name}.tflite" in CACHE["models"] for name, _, _ in TCONVU8_NAMES)
    assert "tconvu8_" in CACHE["command"].split(" --only ", 1)[1].split(",")


@pytest.mark.parametrize("n", [n for _, _, n in TCONVU8_NAMES])
def test_xnnpack_never_under_and_within_one_percent(n: int, tmp_path: Path) -> None:
    """Every moment: at or over the wheel, within 1% (measured 1.001-1.005x)."""
    real = CACHE["models"][f"tconvu8_{n}.tflite"]["xnnpack"]
    heap = _heap(n, tmp_path, "xnnpack")
    for key, attribute, _ in MOMENTS:
        figure = getattr(heap, attribute)
        assert real[key] <= figure <= real[key] * 1.01, (key, figure, real[key])


@pytest.mark.parametrize("n", [n for _, _, n in TCONVU8_NAMES])
def test_builtin_never_under(n: int, tmp_path: Path) -> None:
    """transpose_conv.cc's per-channel multiplier and shift vectors included (32-160 B under
    after setup without them on 5 of 16)."""
    real = CACHE["models"][f"tconvu8_{n}.tflite"]["builtin"]
    heap = _heap(n, tmp_path, "none")
    for key, attribute, _ in MOMENTS:
        assert real[key] <= getattr(heap, attribute), key


def test_check_gives_a_figure(tmp_path: Path) -> None:
    """check --runtime litert (XNNPACK, the default) used to stop with a usage error."""
    path = tmp_path / "tconvu8_1.tflite"
    path.write_bytes(tconvu8_case(1))
    verdict = check(str(path), runtime="litert", budget=1 << 20)
    assert verdict.fits
