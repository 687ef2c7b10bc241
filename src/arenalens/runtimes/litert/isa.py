"""The instruction set a LiteRT app runs on, as far as the interpreter's heap depends on it.

Three things in the heap follow the ISA (the rest is the same code on every 64-bit Linux):

* **XNNPACK's microkernels** (*src/configs/gemm-config.c, dwconv-config.c*): each CPU selects
  one GEMM configuration per datatype (rows mr, output-channel tile nr, depth unroll kr, and
  the shuffle sr, packed as a depth multiple of kr × sr) and one depthwise channel tile, from
  its features and, on Arm, its core (cpuinfo's microarchitecture). The packed weights pad
  output channels to nr and depth to kr × sr; indirection buffers pad rows to mr. Where the
  core is not known (an ISA, not a CPU), every configuration its cores may select is counted
  and the largest taken per operator.
* **XNNPACK's operator objects**: on arm64 XNNPACK keeps a microkernel table per core type
  (`XNN_MAX_UARCH_TYPES`, heterogeneous big.LITTLE cores) in each GEMM-based operator;
  the aarch64 wheel's trace (`tests/litert_heap_trace.py` under qemu) shows those operators'
  objects 1,249-1,275 B larger than on x86-64.
* **ruy's kernel layouts** (*ruy/kernel_arm.h, kernel_x86.h*) for the builtin kernels' 8-bit
  GEMMs: AVX-512 packs 16 columns × 4 of depth, AVX2 8 × 4, arm64 NEON 4 columns × 16 of depth,
  arm64 with the dot product 8 × 4, armv7 NEON 4 (weights) and 2 (activations) × 16. Arm
  builds also run float GEMMs through ruy (8 columns, depth unpadded), whose main buffer is
  kept, where x86-64 runs them through Eigen, whose blocks are freed.

`HOST` is the machine the wheel's heap was measured on (x86-64 with AVX-512 and AMX-INT8):
its figures are the replay's; `X86_64_V4` (AVX-512 without AMX-INT8) is an estimate over its
tiles and the 8-bit GEMM tiles XNNPACK selects without AMX. `X86_64_V3_ZEN` is a replay too,
with the tiles a first-generation AMD Zen selects, checked on the wheel on such a CPU (an AMD
EPYC 7001: tests/data/litert_heap_upstream_avx2.json, within 0.7% after setup, never under). The
others were measured with the same wheel under qemu-user (`tests/litert_heap_isa.py`: the
aarch64 wheel in a Debian arm64 tree on emulated Cortex-A53, Cortex-A76 and an i8mm core; the
x86-64 wheel on emulated Haswell and Nehalem), except armv7, which has no wheel: its figure is an
estimate, the largest of arm64's configurations and armv7's with 64-bit pointers and
structures, which are wider than armv7's.

Which profile a figure is for when no --isa and no device names one: `default_isa`, the
machine arenalens runs on as cpuinfo and XNNPACK would classify its CPU (`running_isa`), or
the profile `ARENALENS_ISA` names (the test suite pins x86-64-avx512).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from arenalens.ir import Operator, Subgraph
from arenalens.runtimes.litert.xnnpack_packing import (
    HOST_TILES,
    QS8_QC4W_AVX512,
    DepthwiseTile,
    GemmTile,
    XnnpackTiles,
)
from arenalens.units import format_bytes_exact


@dataclass(frozen=True, slots=True)
class RuyLayout:
    """ruy's 8-bit kernel layout: packed depth multiple, and the columns each side pads to;
    and, where float GEMMs go through ruy too (Arm builds define TFLITE_WITH_RUY:
    cpu_backend_gemm.h), the float kernel's columns (0: Eigen's, as on x86-64)."""

    depth: int
    lhs_columns: int
    rhs_columns: int
    float_columns: int = 0

    @property
    def ruy_float_columns(self) -> int:
        """The float kernel's columns when a GEMM takes ruy anyway (cpu_backend_gemm.h's
        must_use_ruy): Arm's float_columns; on x86-64 ruy's float kernel is as wide as its
        8-bit one (kernel_x86.h: AVX2 8x8, AVX-512 16x16)."""
        return self.float_columns or self.lhs_columns


@dataclass(frozen=True, slots=True)
class IsaProfile:
    """What the interpreter's heap depends on for one instruction set."""

    name: str  # the --isa value
    title: str
    family: str  # x86-64 | arm64 | armv7
    xnnpack: tuple[XnnpackTiles, ...]  # every configuration its CPUs may select
    ruy: tuple[RuyLayout, ...]
    gemm_operator_extra_bytes: int  # XNNPACK's GEMM-based operator objects above x86-64's
    measured: str  # how its figures were checked against the real wheel ('' for none)
    # cpuinfo's and XNNPACK's CPU tables follow the CPU: on arm64 (one record per processor,
    # cache and cluster parsed from /proc/cpuinfo and sysfs) they came 0-900 B above this
    # machine's, on qemu's Haswell and Nehalem up to 224 B (tests/data/litert_heap_isa.json).
    structures_extra_bytes: int = 0
    replayed: bool = False
    # Why an estimate with no `measured` was not checked on the wheel.
    unmeasured: str = (
        "not measured (there is no wheel for it): arm64's configurations counted too, "
        "with 64-bit pointers"
    )

    @property
    def is_host(self) -> bool:
        return self is HOST

    @property
    def machine(self) -> str:
        """The wheel and the ISA a figure is for, and whether it is that ISA's own (a replay
        checked on a real CPU of it) or an estimate."""
        if self.replayed:
            return f"ai-edge-litert 2.3.0, Linux {self.name} (glibc 2.36), Python 3.11: replayed"
        return f"ai-edge-litert 2.3.0, Linux {self.name}, estimated (errs high)"

    @property
    def replay_tiles(self) -> XnnpackTiles:
        """The configuration a replayed profile's CPUs select; the measuring machine's for the
        others, whose build moment is bounded beside the replay (heap_build)."""
        return self.xnnpack[0] if self.replayed else HOST_TILES

    @property
    def bounding_tiles(self) -> tuple[XnnpackTiles, ...]:
        """The configurations a request the replay sizes with one configuration (a constant
        batch-matmul B, the workspace) takes the largest of: the replay's own, and for an
        estimate every configuration its CPUs may select too, so that it never falls under
        the measuring machine's nor the real CPU's."""
        if self.replayed:
            return (self.replay_tiles,)
        return (HOST_TILES, *(tiles for tiles in self.xnnpack if tiles is not HOST_TILES))

    def largest_bound(self, request: Callable[[XnnpackTiles], int | None]) -> int:
        """The largest of a request sized with one configuration over `bounding_tiles`."""
        return max(request(tiles) or 0 for tiles in self.bounding_tiles)

    @property
    def tiles_name(self) -> str:
        if len(self.xnnpack) == 1:
            return self.xnnpack[0].name
        return f"{self.name}: the largest of {len(self.xnnpack)} configurations its cores select"

    @property
    def estimate(self) -> str:
        """What a figure for this ISA is (not the measuring machine's): what it assumes where the
        measuring machine's replay does not hold, and how it was checked."""
        checked = (
            f"never under {self.measured} (tests/data/litert_heap_isa.json)"
            if self.measured
            else self.unmeasured
        )
        return f"errs high on {self.name}: assumes {'; '.join(self.assumptions)}; {checked}"

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What this ISA's figure takes where it cannot know the CPU: every XNNPACK
        configuration its cores may select (the larger per operator), ruy's layouts, the float
        GEMM's library, the operator objects and CPU tables measured above x86-64's."""
        names = [tiles.name for tiles in self.xnnpack]
        tiles = (
            f"XNNPACK's {names[0]} tiles"
            if len(names) == 1
            else f"XNNPACK's tiles of {', '.join(names[:-1])} or {names[-1]}, the larger per "
            "operator"
        )
        ruy = " or ".join(
            f"{layout.lhs_columns} columns x {layout.depth} of depth" for layout in self.ruy
        )
        found = [tiles, f"ruy's 8-bit layout {ruy}"]
        if any(layout.float_columns for layout in self.ruy):
            found.append("float GEMMs through ruy, its packed buffer kept after the first invoke")
        else:
            found.append("Eigen's float blocks at their bound (the whole packed operand)")
        if self.gemm_operator_extra_bytes:
            found.append(
                "XNNPACK's GEMM operator objects "
                f"{format_bytes_exact(self.gemm_operator_extra_bytes)} larger each (a microkernel "
                "table per core type)"
            )
        if self.structures_extra_bytes:
            found.append(f"CPU tables {format_bytes_exact(self.structures_extra_bytes)} larger")
        if self.family == "arm64":
            found.append("no SME core (KleidiAI's SME kernels are not modelled)")
        return tuple(found)


def largest_request(
    request: Callable[[Subgraph, Operator, XnnpackTiles], int | None],
    subgraph: Subgraph,
    operator: Operator,
    isa: IsaProfile,
) -> int | None:
    """The largest of `request` over the ISA's XNNPACK configurations (None if any is not
    modelled)."""
    sizes = [request(subgraph, operator, tiles) for tiles in isa.xnnpack]
    return None if any(size is None for size in sizes) else max(size or 0 for size in sizes)


_F32_DW_SSE = DepthwiseTile(8, (3, 4, 9, 25))
_F32_DW_AVX = DepthwiseTile(16, (3, 4, 9, 25))
_F32_DW_NEON = DepthwiseTile(8, (3, 4, 9, 25))
_QS8_DW_NEON = DepthwiseTile(16, (3, 9, 25))

HOST = IsaProfile(
    "x86-64-avx512",
    "x86-64 with AVX-512 and AMX-INT8 (the machine the heap was measured on)",
    "x86-64",
    (HOST_TILES,),
    (RuyLayout(4, 16, 16),),
    0,
    "the wheel on this machine (tests/data/litert_heap.json)",
    replayed=True,
)
# x86-64 with AVX2 and FMA3 (gemm-config.c, dwconv-config.c): 8-bit GEMMs 3x8c8__avx2, depthwise
# channel tiles 16; the float GEMM follows the core (cpuinfo's microarchitecture): AMD Zen
# (first generation) and Hygon Dhyana take 4x16s4__fma3_broadcast, whose shuffle packs the
# depth to kr × sr = 4, with 4x8 as the "nr2" config; the other cores 5x16__fma3_broadcast and
# 10x8. The wheel's trace on a Zen EPYC packs a 1-input, 16-output float FULLY_CONNECTED in
# 320 B (16 × (4 × 4 + 4)) and fingerprints float GEMMs with 8-output dummies.
# The int4 blockwise GEMM with AVX2 (gemm-config.c init_qd8_f32_qb4w_gemm_config: 3x8c8__avx2,
# two planes): the wheel's workspace on the Zen EPYC packs 3 input rows of 8 + round_up(k, 8) B.
_QB4W_AVX2 = GemmTile(mr=3, nr=8, kr=8)
# The int4 per-channel GEMM with AVX2: qdu8_f32_qc4w 4x8c8__avx2_madd (its arch ranks above
# qd8_f32_qc4w's SSE2 one: subgraph.c convert_gemm_to_qduint8; the wheel's trace on the EPYC);
# with AVX-VNNI (Alder Lake and later) 5x8c8__avxvnni.
_QC4W_AVX2 = GemmTile(mr=4, nr=8, kr=8)
# On an int8 input (gemm-config.c init_qs8_qc4w_gemm_config): 7x8c8__avx2_madd, two planes (the
# wheel's requests on the EPYC: xnnpack_qc4w); AVX-VNNI's 5x8c8 packs alike.
_QS8_QC4W_AVX2 = GemmTile(mr=7, nr=8, kr=8)
_AVX2_ZEN_TILES = XnnpackTiles(
    "x86-64 AVX2 + FMA3, AMD Zen",
    f32_gemm=GemmTile(mr=4, nr=16, kr=4),
    f32_gemm_narrow=GemmTile(mr=4, nr=8, kr=1),
    qs8_gemm=GemmTile(mr=3, nr=8, kr=8),
    f32_depthwise=_F32_DW_AVX,
    qs8_depthwise=DepthwiseTile(16, (3, 9, 25)),
    heuristic_rows=True,  # the EPYC's deconvolutions (xnn7_deconvolution_*)
    qd8_gemm=GemmTile(mr=4, nr=8, kr=8),  # qd8_f32_qc8w 4x8c8__avx2
    qb4w_gemm=_QB4W_AVX2,
    qc4w_gemm=_QC4W_AVX2,
    qs8_qc4w_gemm=_QS8_QC4W_AVX2,
)
_AVX2_TILES = XnnpackTiles(
    "x86-64 AVX2 + FMA3",
    f32_gemm=GemmTile(mr=5, nr=16, kr=1),
    f32_gemm_narrow=GemmTile(mr=10, nr=8, kr=1),
    qs8_gemm=GemmTile(mr=3, nr=8, kr=8),
    f32_depthwise=_F32_DW_AVX,
    qs8_depthwise=DepthwiseTile(16, (3, 9, 25)),
    qb4w_gemm=_QB4W_AVX2,
    qc4w_gemm=GemmTile(mr=5, nr=8, kr=8),  # AVX-VNNI's rows (5x8c8), AVX2's packing
    qs8_qc4w_gemm=_QS8_QC4W_AVX2,
)
X86_64_V3 = IsaProfile(
    "x86-64-v3",
    "x86-64 with AVX2 and FMA, without AVX-512 (Haswell and later)",
    "x86-64",
    (_AVX2_TILES, _AVX2_ZEN_TILES),
    (RuyLayout(4, 8, 8),),
    0,
    "the x86-64 wheel under qemu-x86_64 -cpu Haswell and on an AMD EPYC (Zen)",
    structures_extra_bytes=256,
)
X86_64_V3_ZEN = IsaProfile(
    "x86-64-v3-zen",
    "x86-64 with AVX2 and FMA on AMD Zen (first generation: EPYC 7001, Ryzen 1000 and 2000) "
    "or Hygon Dhyana",
    "x86-64",
    (_AVX2_ZEN_TILES,),
    (RuyLayout(4, 8, 8),),
    0,
    "the wheel on an AMD EPYC 7001 (Zen, AVX2 and FMA: tests/data/litert_heap_upstream_avx2.json)",
    replayed=True,
)
# x86-64 with AVX-512 (F, CD, BW, DQ, VL) without AMX-INT8: Skylake-SP to Ice Lake and
# Cascade Lake Xeons, AMD Zen 4 and 5 (common cloud and CI machines). gemm-config.c keeps the
# measuring machine's float GEMMs (7x32__avx512f_broadcast, 7x16 as "nr2": avx512f alone
# selects them) and dwconv-config.c its depthwise tiles (f32 p16c__avx512f, qs8 p32c__avx512skx),
# but the 8-bit GEMMs leave AMX's 16x64c4 for 7x16c8 (avx512vnni and avx512skx alike), whose
# depth unroll of 8 pads small depths more than AMX's 4. The dynamically quantized GEMMs
# follow the features and the XNNPACK release: qd8_f32_qc8w 8x16c8__avx512skx, qdu8 with VNNI
# 10x16c8 or the assembly 5x64c4; int4 blockwise qdu8 14x16c8 (VNNI + GFNI, not Zen 4/5) or
# 8x16c8 (VNNI), else qd8's 3x8c8__avx2. Never measured on such a CPU: every configuration
# is counted with the measuring machine's, the largest per operator.
_QS8_AVX512 = GemmTile(mr=7, nr=16, kr=8)


def _avx512_tiles(name: str, qd8: GemmTile, qb4w: GemmTile, qc4w: GemmTile) -> XnnpackTiles:
    return XnnpackTiles(
        f"x86-64 AVX-512 {name}",
        f32_gemm=HOST_TILES.f32_gemm,
        f32_gemm_narrow=HOST_TILES.f32_gemm_narrow,
        qs8_gemm=_QS8_AVX512,
        f32_depthwise=HOST_TILES.f32_depthwise,
        qs8_depthwise=HOST_TILES.qs8_depthwise,
        qd8_gemm=qd8,
        qb4w_gemm=qb4w,
        qc4w_gemm=qc4w,
        qs8_qc4w_gemm=QS8_QC4W_AVX512,
    )


X86_64_V4 = IsaProfile(
    "x86-64-v4",
    "x86-64 with AVX-512 without AMX-INT8 (Skylake-SP to Ice Lake Xeons, AMD Zen 4 and 5)",
    "x86-64",
    (
        HOST_TILES,
        _avx512_tiles(
            "SKX (7x16c8 int8, qd8 8x16c8)", GemmTile(8, 16, 8), _QB4W_AVX2, GemmTile(8, 16, 8)
        ),
        _avx512_tiles(
            "VNNI (7x16c8 int8, qd8 10x16c8)",
            GemmTile(10, 16, 8),
            GemmTile(8, 16, 8),
            GemmTile(8, 16, 8),
        ),
        _avx512_tiles(
            "VNNI (7x16c8 int8, qd8 5x64c4, int4 14x16c8)",
            GemmTile(5, 64, 4),
            GemmTile(14, 16, 8),
            GemmTile(14, 16, 8),
        ),
    ),
    (RuyLayout(4, 16, 16),),  # ruy's AVX-512 path needs F, CD, BW, DQ, VL only
    0,
    "",
    structures_extra_bytes=256,  # CPU tables: up to 224 B above the measuring machine's (qemu)
    unmeasured="not measured on such a CPU: the measuring machine's tiles counted too",
)
X86_64_V2 = IsaProfile(
    "x86-64-v2",
    "x86-64 with SSE4.2, without AVX (Nehalem and later)",
    "x86-64",
    (
        XnnpackTiles(
            "x86-64 SSE4.1",
            f32_gemm=GemmTile(mr=4, nr=8, kr=1),  # 4x8__sse_load1
            f32_gemm_narrow=GemmTile(mr=4, nr=2, kr=4),  # 4x2c4__sse
            qs8_gemm=GemmTile(mr=3, nr=4, kr=8),  # 3x4c8__sse41_ld64
            f32_depthwise=_F32_DW_SSE,
            qs8_depthwise=DepthwiseTile(8, (3, 9, 25)),
            qc4w_gemm=GemmTile(mr=5, nr=4, kr=8),  # qdu8_f32_qc4w 5x4c8__ssse3_madd
            qs8_qc4w_gemm=GemmTile(mr=5, nr=4, kr=8),  # qs8_qc4w 5x4c8__ssse3_madd
        ),
    ),
    # Without AVX2 ruy runs its portable path (1 × 1 layout): AVX2's counts err high.
    (RuyLayout(4, 8, 8),),
    0,
    "the x86-64 wheel under qemu-x86_64 -cpu Nehalem",
    structures_extra_bytes=256,
)


def _arm64(
    name: str,
    qs8: tuple[GemmTile, ...],
    f32_nr: tuple[int, ...],
    qs8_qc4w: GemmTile,
    qc4w: GemmTile | tuple[GemmTile, ...],
) -> tuple[XnnpackTiles, ...]:
    """arm64 configurations: one per 8-bit GEMM and float GEMM tile its cores select (Linux),
    with the int4 GEMMs on an int8 input (`qs8_qc4w`) and a float one (`qc4w`: the GEMMs
    whose packing the build decides between where KleidiAI's qp8 may take it, not named)."""
    return tuple(
        XnnpackTiles(
            f"{name} ({gemm.mr}x{gemm.nr}c{gemm.kr} int8, {mr}x{nr} float)",
            f32_gemm=GemmTile(mr=mr, nr=nr, kr=1),
            f32_gemm_narrow=GemmTile(mr=4, nr=2, kr=1),  # 4x2__aarch64_neonfma_lane_ld64
            qs8_gemm=gemm,
            f32_depthwise=_F32_DW_NEON,
            qs8_depthwise=_QS8_DW_NEON,
            qc4w_gemm=qc4w if isinstance(qc4w, GemmTile) else None,
            qs8_qc4w_gemm=qs8_qc4w,
            qc4w_packings=() if isinstance(qc4w, GemmTile) else qc4w,
        )
        for gemm in qs8
        for nr in f32_nr
        for mr in (8 if nr == 8 else 4,)  # the largest row tile a core takes with that nr
    )


# 8-bit GEMMs on arm64 Linux: Cortex-A53/A55/A35/Kryo 4x16 (no depth unroll), the others
# 2x8c8; with the dot product 4x16c4; with i8mm 4x16c8. Float: 8 output channels (rows 4 to
# 8 by core), 16 on Cortex-X4 and Oryon (which have the dot product and i8mm).
# int4 per-channel GEMMs (gemm-config.c): on an int8 input (init_qs8_qc4w_gemm_config) the dot
# product's 5x16c4__asm_aarch64_neondot, one plane (i8mm cores take it too: no i8mm variant),
# else the portable 3x4__scalar_fmagic (kr 1, one plane); on a float input
# (init_qd8_f32_qc4w_gemm_config) 6x16__neon_mlal_lane without the dot product, two planes;
# with it subgraph.c takes KleidiAI's qp8_f32_qc4w where the build has KleidiAI (XNNPACK's
# default on aarch64: 16x4c8s2 / 8x8c16s2, its weights packed by kai_rhs_pack_kxn_qsi4cxp_
# qs4cxs1s0: channels to nr, each its depth to 32 nibbles and 12 B, as a 32-deep tile) and
# qd8's 4x16c4 / 4x16c8 otherwise: the larger packing counted, its input's packing a bound.
_QS8_QC4W_NEON = GemmTile(3, 4, 1, planes=1)  # qs8_qc4w 3x4__scalar_fmagic
_QS8_QC4W_DOT = GemmTile(5, 16, 4, planes=1)  # qs8_qc4w 5x16c4__asm_aarch64_neondot_ld128_2
ARM64 = IsaProfile(
    "arm64",
    "arm64 (Armv8-A NEON) without the dot product: Cortex-A53, A72 (Raspberry Pi 3, 4)",
    "arm64",
    _arm64(
        "arm64 NEON",
        (GemmTile(4, 16, 1), GemmTile(2, 8, 8)),
        (8,),
        _QS8_QC4W_NEON,
        GemmTile(6, 16, 1),  # qd8_f32_qc4w 6x16__neon_mlal_lane (no qp8 without the dot product)
    ),
    (RuyLayout(16, 4, 4, float_columns=8),),
    1_280,
    "the aarch64 wheel under qemu-aarch64 -cpu cortex-a53",
    structures_extra_bytes=1_024,
)
ARM64_DOTPROD = IsaProfile(
    "arm64-dotprod",
    "arm64 with the dot product, without i8mm: Cortex-A55, A76, X1 (Raspberry Pi 5, phones)",
    "arm64",
    _arm64(
        "arm64 NEON dot product",
        (GemmTile(4, 16, 4),),
        (8, 16),
        _QS8_QC4W_DOT,
        (GemmTile(16, 4, 16), GemmTile(4, 16, 4)),  # qp8 16x4c8s2, qd8 4x16c4
    ),
    (RuyLayout(4, 8, 8, float_columns=8),),
    1_280,
    "the aarch64 wheel under qemu-aarch64 -cpu cortex-a76",
    structures_extra_bytes=1_024,
)
ARM64_I8MM = IsaProfile(
    "arm64-i8mm",
    "arm64 with the dot product and i8mm: Cortex-A510, A710, X2 and later, Neoverse N2/V1",
    "arm64",
    _arm64(
        "arm64 NEON i8mm",
        (GemmTile(4, 16, 8),),
        (8, 16),
        _QS8_QC4W_DOT,
        (GemmTile(8, 8, 16), GemmTile(4, 16, 8)),  # qp8 8x8c16s2, qd8 4x16c8
    ),
    (RuyLayout(4, 8, 8, float_columns=8),),
    1_280,
    "the aarch64 wheel under qemu-aarch64 -cpu max (dot product, i8mm)",
    structures_extra_bytes=1_024,
)
# armv7 (32-bit, NEON): 8-bit GEMMs 4x8 (Cortex-A7/A53/A55 class), 2x8c2s4 (packed as depth
# multiples of 8), 4x8c4 with the dot product; float 4x8; depthwise 8-bit channel tiles 16
# (3 and 9 taps) and 8 (25 taps). No armv7 wheel exists to measure: every arm64 configuration
# is counted too, and 64-bit pointers and structures, which armv7's are not.
_ARMV7_TILES = tuple(
    XnnpackTiles(
        f"armv7 NEON ({gemm.mr}x{gemm.nr}c{gemm.kr} int8)",
        f32_gemm=GemmTile(mr=4, nr=8, kr=1),
        f32_gemm_narrow=GemmTile(mr=4, nr=2, kr=1),
        qs8_gemm=gemm,
        f32_depthwise=_F32_DW_NEON,
        qs8_depthwise=DepthwiseTile(16, (3, 9, 25)),
        qs8_qc4w_gemm=_QS8_QC4W_NEON,  # init_qs8_qc4w_gemm_config has no 32-bit Arm kernel
        qc4w_gemm=qc4w,  # qd8_f32_qc4w on 32-bit Arm: A53/A55 4x8, others 6x16, dot 4x16c4
    )
    for gemm, qc4w in (
        (GemmTile(4, 8, 1), GemmTile(4, 8, 1)),
        (GemmTile(2, 8, 8), GemmTile(6, 16, 1)),
        (GemmTile(4, 8, 4), GemmTile(4, 16, 4)),
    )
)
ARMV7 = IsaProfile(
    "armv7",
    "armv7 (32-bit Arm with NEON): Cortex-A7, A9, A53 in 32-bit mode (Raspberry Pi OS 32-bit)",
    "armv7",
    _ARMV7_TILES + ARM64.xnnpack + ARM64_DOTPROD.xnnpack + ARM64_I8MM.xnnpack,
    (RuyLayout(16, 4, 4, float_columns=8), RuyLayout(4, 8, 8, float_columns=8)),
    1_280,
    "",
    structures_extra_bytes=1_024,
)

PROFILES: dict[str, IsaProfile] = {
    profile.name: profile
    for profile in (
        HOST,
        X86_64_V4,
        X86_64_V3_ZEN,
        X86_64_V3,
        X86_64_V2,
        ARM64,
        ARM64_DOTPROD,
        ARM64_I8MM,
        ARMV7,
    )
}
# A Linux device's ISA in targets.json, refined by its core where the core has the dot
# product (Cortex-A55, A76, A78, X1) — the cores without stay plain arm64.
_DOTPROD_CORES = frozenset({"cortex-a55", "cortex-a65", "cortex-a75", "cortex-a76", "cortex-a77",
                            "cortex-a78", "cortex-x1", "neoverse-n1"})  # fmt: skip
_I8MM_CORES = frozenset({"cortex-a510", "cortex-a710", "cortex-a715", "cortex-x2", "cortex-x3",
                         "neoverse-n2", "neoverse-v1"})  # fmt: skip


# The ISA the figures are for when neither --isa nor a device names one: this variable's
# profile name, else the running machine's (`running_isa`). The test suite pins it so that its
# figures do not follow the CPU that runs it.
ISA_VARIABLE = "ARENALENS_ISA"
_CPUINFO = "/proc/cpuinfo"
# cpuinfo (pytorch/cpuinfo src/x86/uarch.c) names AMD family 17h models 01h, 08h, 11h, 18h and
# 20h Zen (the later ones Zen 2 and on), and Hygon's family 18h Dhyana: XNNPACK's
# xnn_uarch_zen / xnn_uarch_dhyana (hardware-config.c), which select 4x16s4 float GEMMs.
_ZEN_MODELS = frozenset({0x01, 0x08, 0x11, 0x18, 0x20})
# XNNPACK's avx512skx kernels need F, CD, BW, DQ and VL; the measuring machine's 8-bit GEMMs
# AMX-INT8 (gemm-config.c: qs8_qc8w 16x64c4__avx512amx).
_AVX512_SKX = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
_AMX_INT8 = frozenset({"amx_tile", "amx_int8"})  # Linux's names (cpuinfo: XNNPACK's avx512amx)


def running_isa(cpuinfo: str, machine: str) -> str:
    """The profile a CPU runs as, from /proc/cpuinfo's text and the machine name (uname -m),
    as cpuinfo and XNNPACK decide it: x86-64 by its feature flags (AVX-512 with and without
    AMX-INT8, AVX2 with FMA, SSE4.1) and, for AVX2, whether its core is a first Zen; arm64 by
    its features (i8mm, the dot product: asimddp). A CPU below every profile takes the nearest
    above it, whose figure errs high."""
    fields = _first_processor(cpuinfo)
    flags = set(fields.get("flags", fields.get("Features", "")).split())
    if machine in ("aarch64", "arm64"):
        if "i8mm" in flags:
            return ARM64_I8MM.name
        return ARM64_DOTPROD.name if "asimddp" in flags else ARM64.name
    if machine.startswith("arm"):
        return ARMV7.name
    if flags >= _AVX512_SKX:
        # Without AMX-INT8 XNNPACK's 8-bit GEMMs take other tiles than the measuring machine's.
        return HOST.name if flags >= _AMX_INT8 else X86_64_V4.name
    if {"avx2", "fma"} <= flags:
        return X86_64_V3_ZEN.name if _first_zen(fields) else X86_64_V3.name
    return X86_64_V2.name


def _first_processor(cpuinfo: str) -> dict[str, str]:
    """The first processor's 'key : value' lines of /proc/cpuinfo."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def _first_zen(fields: dict[str, str]) -> bool:
    vendor, family = fields.get("vendor_id", ""), fields.get("cpu family", "")
    if vendor == "HygonGenuine":
        return family == "24"
    try:
        model = int(fields.get("model", ""))
    except ValueError:
        return False
    return vendor == "AuthenticAMD" and family == "23" and model in _ZEN_MODELS


@cache
def _this_machine() -> str:
    try:
        with open(_CPUINFO, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        text = ""
    return running_isa(text, platform.machine())


def default_isa() -> str:
    """The ISA the figures are for by default: ARENALENS_ISA, else this machine's."""
    return os.environ.get(ISA_VARIABLE, "") or _this_machine()


def profile(name: str) -> IsaProfile:
    """The profile named `name` ('' for the default: `default_isa`); ValueError naming the
    choices otherwise."""
    chosen = name or default_isa()
    if chosen == "x86-64":
        return HOST
    try:
        return PROFILES[chosen]
    except KeyError:
        source = "" if name else f" (from {ISA_VARIABLE})"
        raise ValueError(
            f"unknown ISA {chosen!r}{source}; choose one of {', '.join(PROFILES)}"
        ) from None


def device_isa(isa: str, cpu: str) -> str:
    """A Linux device's ISA (targets.json's `isa`, its `cpu`) → the --isa it runs as."""
    if isa == "arm64":
        if cpu in _I8MM_CORES:
            return ARM64_I8MM.name
        if cpu in _DOTPROD_CORES:
            return ARM64_DOTPROD.name
        return ARM64.name
    return isa if isa in PROFILES else HOST.name
