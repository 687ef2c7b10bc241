"""XNNPACK's int4 per-channel FULLY_CONNECTED on float input (runtimes/litert/xnnpack_qc4w.py)
and the builtin 4-bit kernel's call (four_bit.py) against the wheel on the AMD EPYC: the
held-out `int4pc16_*` (tests/litert_int4_cases.py) and session 15's `held15_int4_*`, cached in
tests/data/litert_heap_avx2.json (test_litert_heap_avx2.py holds every moment to it). Here:
the delegate's part is replayed (every XNNPACK part exact after setup and the first invoke,
within 1% of the wheel but for the allowances), and the packing is the wheel's request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens import load_model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking, four_bit
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.heap_xnnpack import delegated_view
from arenalens.runtimes.litert.isa import HOST, X86_64_V3_ZEN
from arenalens.runtimes.litert.xnnpack_packing import packed_weights_request
from tests.litert_heap_measure import REPO_ROOT
from tests.litert_held15_cases import held15_case
from tests.litert_int4_cases import NAMES, int4_case

CACHE: dict[str, Any] = json.loads((REPO_ROOT / "tests/data/litert_heap_avx2.json").read_text())
PER_CHANNEL_HELD15 = (1, 2, 3, 4, 6)  # held15_int4_5 is blockwise alone
CASES = [(name, n) for n, name in enumerate(NAMES, 1)] + [
    (f"held15_int4_{n}", n) for n in PER_CHANNEL_HELD15
]


@pytest.fixture(autouse=True)
def _epyc_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    epyc = eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")


def _path(name: str, n: int, folder: Path) -> Path:
    path = folder / f"{name}.tflite"
    path.write_bytes(int4_case(n) if name.startswith("int4pc16_") else held15_case("int4", n))
    return path


def test_every_case_is_measured() -> None:
    assert all(f"{name}.tflite" in CACHE["models"] for name, _ in CASES)
    assert "int4pc16_" in CACHE["command"]


@pytest.mark.parametrize(("name", "n"), CASES)
def test_xnnpack_replays_the_int4_per_channel_fully_connected(
    name: str, n: int, tmp_path: Path
) -> None:
    """The delegate's partition is modelled (it was None: a bound, 1.45-1.52x on held15), and
    after setup and after the first invoke every part is exact and within 1% of the wheel."""
    analysis = analyze(_path(name, n, tmp_path), runtime="litert")
    assert delegated_view(analysis.model) is not None
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=X86_64_V3_ZEN)
    real = CACHE["models"][f"{name}.tflite"]["xnnpack"]
    for measured, figure, phases in (
        ("after_allocate", heap.after_setup, ("setup",)),
        ("after_invoke", heap.after_first_invoke, ("setup", "first_invoke")),
    ):
        parts = [part for part in heap.parts if part.phase in phases]
        assert all(part.exact for part in parts if not part.allowance)
        allowances = sum(part.nbytes for part in parts if part.allowance)
        assert real[measured] <= figure <= real[measured] * 1.01 + allowances


def test_the_packing_is_the_wheels_request(tmp_path: Path) -> None:
    """held15_int4_6: 16 channels of depth 96 pack to 16 x (48 + 12) = 960 B on the EPYC
    (qdu8_f32_qc4w 4x8c8, traced), 64 x (48 + 12) = 3,840 B with AMX (16x64c4)."""
    model = load_model(_path("held15_int4_6", 6, tmp_path))
    subgraph = model.subgraphs[0]
    operator = subgraph.operators[0]
    zen = X86_64_V3_ZEN.xnnpack[0]
    assert packed_weights_request(subgraph, operator, zen, model) == 960
    assert packed_weights_request(subgraph, operator, HOST.xnnpack[0], model) == 3_840


def test_the_builtin_unpacked_copy_is_a_labelled_bound(tmp_path: Path) -> None:
    """int4pc16_23's second FULLY_CONNECTED (129 x 16: not the 4-bit kernel's) unpacks its
    filter for a non-zero input (2,064 B traced); its first takes the 4-bit kernel, whose call
    holds filter_scales (16 rows: 64 B) and SseRunKernel's 4 x 256 / 2 + 15 B."""
    model = load_model(_path("int4pc16_23", 23, tmp_path))
    first, second = (op for op in model.subgraphs[0].operators if op.opcode == "FULLY_CONNECTED")
    assert four_bit.eval_steps(model, 0, first.inputs) == (72, 24, -24, 536, -536, -72)
    assert four_bit.unpacked_bytes(model, 0, first.inputs) == 0
    assert four_bit.unpacked_bytes(model, 0, second.inputs) == 2_072
