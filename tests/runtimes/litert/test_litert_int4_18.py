"""Session 18's int4 leftovers against the 2.3.0 wheel (tests/litert_int4_18_cases.py):

* a blockwise filter under a quantized input (`bwq18_*`: refusals.blockwise_integer_refusals,
  xnnpack_blockwise.takes_integer) and a FULLY_CONNECTED's fused activation outside the
  clipping ones (`act18_*`: refusals.dense_activation_refusals): arenalens' verdict under each
  delegate is the wheel's, and its first reason quotes what LiteRT says
  (tests/data/litert_int4_18.json, `python -m tests.litert_int4_18_cases`);
* arm64's int4 GEMMs (isa.py, from gemm-config.c): the tile XNNPACK selects on an int8 input
  (qs8_qc4w) and a float one (qd8_f32_qc4w; with the dot product or i8mm KleidiAI's qp8 or
  qd8, the build decides: the larger packing), packed as fully-connected-nc.c packs them;
* the builtin int4 FULLY_CONNECTED on int8 input (`ruy18_*`, measured on the AMD EPYC into
  tests/data/litert_heap_avx2.json): ruy's blocks are the wheel's requests; the figure is over
  only by glibc's mmap threshold (blocks of 128 KiB and more counted mmapped, labelled), and
  exact at the threshold the wheel's Python process had raised it to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.litert_memory import delegate_verdict
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking, glibc
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import ARM64, ARM64_DOTPROD, ARM64_I8MM, ARMV7, X86_64_V3_ZEN
from arenalens.runtimes.litert.ruy_heap import Gemm, ruy_requests
from arenalens.runtimes.litert.xnnpack_packing import GemmTile
from arenalens.runtimes.litert.xnnpack_qc4w import packed_request
from tests.litert_heap_measure import REPO_ROOT
from tests.litert_held15 import MOMENTS
from tests.litert_int4_18_cases import (
    ACT18,
    BWQ18_NAMES,
    BWQ18_RUNS,
    OUTCOMES,
    RUY18_NAMES,
    act18_case,
    bwq18_case,
    ruy18_case,
)

WHEEL: dict[str, Any] = json.loads(OUTCOMES.read_text())
CACHE: dict[str, Any] = json.loads((REPO_ROOT / "tests/data/litert_heap_avx2.json").read_text())
# What LiteRT says (the first words of its error) -> what arenalens' reason quotes.
WORDS = {
    "tflite/kernels/fully_connected.cc:518": "!= kTfLiteAffineQuantization'",
    "tflite/kernels/fully_connected.cc:752": "params->activation == kTfLiteActNone",
    "failed to delegate FULLY_CONNECTED node #1": "failed to delegate FULLY_CONNECTED node #1",
    "unsupported tensor type 9 for blockwise": "unsupported tensor type 9 for blockwise",
    "unsupported scale value": "fp16",
}
# glibc's mmap threshold in the wheel's Python process: its imports had raised it to about
# 260-320 KiB (glibc.py); every ruy18 block is under 256 KiB.
WHEEL_PROCESS_THRESHOLD = 224 * 1024


def _model(name: str) -> bytes:
    if name in ACT18:
        return act18_case(name)
    return bwq18_case(BWQ18_NAMES.index(name) + 1)


def test_every_case_is_measured() -> None:
    assert set(WHEEL["cases"]) == {*BWQ18_NAMES, *ACT18}
    assert WHEEL["command"] == "python -m tests.litert_int4_18_cases"


@pytest.mark.parametrize("name", [*BWQ18_NAMES, *ACT18])
def test_the_verdict_and_its_words_are_the_wheels(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(_model(name))
    analysis = analyze(str(path), runtime="litert")
    for delegate in ("none", "xnnpack"):
        outcome, says = WHEEL["cases"][name][delegate]
        verdict = delegate_verdict(analysis, delegate)
        assert verdict.runs is (outcome == "runs"), (delegate, says)
        if outcome == "runs":
            continue
        assert outcome == "setup"
        reasons = [o.reason for o in verdict.obstacles] + [r.reason for r in verdict.refusals]
        (quoted,) = (words for start, words in WORDS.items() if says.startswith(start))
        assert quoted in reasons[0], (delegate, says, reasons[0])


def test_the_runners_are_measured_through_the_heap_tracer() -> None:
    """The bwq18 models the builtin kernels run are the heap-measured ones (litert_heap_avx2.json:
    test_litert_heap_avx2.py holds them within 1%, never under; XNNPACK's refusal cached as
    its error)."""
    runs = {name for name in BWQ18_NAMES if WHEEL["cases"][name]["none"][0] == "runs"}
    assert runs == {name for name, _, _ in BWQ18_RUNS}
    for name in runs:
        entry = CACHE["models"][f"{name}.tflite"]
        assert "error" not in entry["builtin"]
        assert ("error" in entry["xnnpack"]) is (WHEEL["cases"][name]["xnnpack"][0] != "runs")


def test_the_refusal_says_what_xnnpack_does(tmp_path: Path) -> None:
    """bwq18_13: an int8 input, a blockwise int4 filter of fp16 scales, block 32: the
    delegate takes it, and its define fails; bwq18_1 (int16 input): left to the kernel."""
    texts = {}
    for name in ("bwq18_13", "bwq18_1"):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(_model(name))
        (obstacle,) = analyze(str(path), runtime="litert").budget.obstacles
        texts[name] = obstacle.reason
    assert "the XNNPACK delegate takes it and fails to prepare" in texts["bwq18_13"]
    assert "the XNNPACK delegate leaves it to this kernel" in texts["bwq18_1"]


def test_ruys_blocks_are_the_wheels_requests() -> None:
    """qs8qc4w17_1's 513 x 250 int4 filter on 3 int8 rows (traced on the EPYC,
    tests/litert_heap_trace.py): bias, multipliers and exponents padded to 520 channels, the
    packed filter and its sums, the packed input and its sums; FreeAll's one block their sum."""
    layout = X86_64_V3_ZEN.ruy[0]
    requests = ruy_requests(Gemm(513, 250, 3, True, True, True), layout)
    assert requests == [2_112, 2_112, 2_112, 132_096, 2_112, 3_072, 64]
    assert sum(requests) == 143_680


@pytest.fixture
def _epyc_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    epyc = eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")


def _heap(n: int, folder: Path) -> Any:
    path = folder / f"ruy18_{n}.tflite"
    path.write_bytes(ruy18_case(n))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    return interpreter_heap(analysis.model, sizes, delegate="none", isa=X86_64_V3_ZEN)


def test_every_ruy18_model_is_measured() -> None:
    assert all(f"{name}.tflite" in CACHE["models"] for name, _, _ in RUY18_NAMES)
    assert "ruy18_" in CACHE["command"].split(" --only ", 1)[1].split(",")


@pytest.mark.usefixtures("_epyc_caches")
@pytest.mark.parametrize("n", [n for _, _, n in RUY18_NAMES])
def test_ruy18_never_under_and_exact_but_for_glibcs_threshold(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builtin: never under the wheel; every part exact but those holding a block glibc's mmap
    threshold decides (labelled); at the wheel process's threshold every part exact and each
    moment within 1% of the wheel but for the allowances."""
    real = CACHE["models"][f"ruy18_{n}.tflite"]["builtin"]
    heap = _heap(n, tmp_path)
    for key, attribute, phases in MOMENTS:
        assert real[key] <= getattr(heap, attribute), key
        for part in heap.parts:
            if part.phase in phases and not part.allowance and not part.exact:
                assert part.mmapped, part.name
    monkeypatch.setattr(glibc, "MMAP_THRESHOLD_BYTES", WHEEL_PROCESS_THRESHOLD)
    heap = _heap(n, tmp_path)
    for key, attribute, phases in MOMENTS:
        parts = [part for part in heap.parts if part.phase in phases]
        allowances = sum(part.nbytes for part in parts if part.allowance)
        figure = getattr(heap, attribute)
        assert all(part.exact or part.mmapped for part in parts if not part.allowance), key
        assert real[key] <= figure <= real[key] * 1.01 + allowances, (key, figure, real[key])


def test_arm64s_int4_tiles_are_xnnpacks() -> None:
    """gemm-config.c init_qs8_qc4w_gemm_config on aarch64: 5x16c4__asm_aarch64_neondot, one
    plane, with the dot product (i8mm cores too), else the portable 3x4 (kr 1, one plane);
    init_qd8_f32_qc4w_gemm_config: 6x16__neon_mlal_lane without the dot product (no qp8 kernel
    there); with it KleidiAI's qp8 (16x4c8s2, i8mm 8x8c16s2: depth to 32) or qd8 (4x16c4,
    4x16c8)."""
    for tiles in ARM64.xnnpack:
        assert tiles.qs8_qc4w_gemm == GemmTile(3, 4, 1, planes=1)
        assert tiles.qc4w_gemm == GemmTile(6, 16, 1)
    for profile, qp8, qd8 in (
        (ARM64_DOTPROD, GemmTile(16, 4, 16), GemmTile(4, 16, 4)),
        (ARM64_I8MM, GemmTile(8, 8, 16), GemmTile(4, 16, 8)),
    ):
        for tiles in profile.xnnpack:
            assert tiles.qs8_qc4w_gemm == GemmTile(5, 16, 4, planes=1)
            assert tiles.qc4w_gemm is None  # its input's packing: the bound
            assert tiles.qc4w_packings == (qp8, qd8)
    assert all(tiles.qs8_qc4w_gemm is not None for tiles in ARMV7.xnnpack)


def test_arm64s_int4_packing_by_hand() -> None:
    """37 channels of depth 250 (qs8qc4w17's shape): fully-connected-nc.c packs each channel's
    depth to kr x sr x planes nibbles (and whole bytes), a 4 B bias and the variant's extras
    (qs8_qc4w: one float; qd8: two), channels to nr, the whole to 64 (16 on arm64: errs high);
    KleidiAI's kai_rhs_pack_kxn_qsi4cxp_qs4cxs1s0 the depth to 32 and 12 B."""
    assert packed_request(37, 250, 4, 1, integer=True, planes=1) == 5_376  # 40 x 133
    assert packed_request(37, 250, 16, 4, integer=True, planes=1) == 6_464  # 48 x 134
    assert packed_request(37, 250, 16, 1) == 6_592  # 48 x 137: qd8 6x16
    assert packed_request(37, 250, 4, 16) == 5_632  # 40 x 140: qp8 16x4c8s2
    assert packed_request(37, 250, 16, 4) == 6_720  # 48 x 140: qd8 4x16c4, the larger


@pytest.mark.parametrize("profile", [ARM64, ARM64_DOTPROD, ARM64_I8MM, ARMV7])
def test_arm64_int4_models_are_packed_not_bounded(profile: Any, tmp_path: Path) -> None:
    """A held-out int8-input int4 model (qs8qc4w17_2, even depths) under XNNPACK on arm64: its
    packed weights are a figure, no longer the bound; still an estimate (no arm64 host)."""
    from tests.litert_qs8qc4w17_cases import qs8qc4w17_case

    path = tmp_path / "qs8qc4w17_2.tflite"
    path.write_bytes(qs8qc4w17_case(2))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=profile)
    (packed,) = [part for part in heap.parts if part.name == "XNNPACK packed weights"]
    assert packed.exact
    assert "estimated" in profile.machine
