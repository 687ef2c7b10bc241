"""Eigen's blocking of a float GEMM, as LiteRT's builtin kernels run it on x86-64
(*tflite/kernels/cpu_backend_gemm_eigen.cc*: `dst.noalias() = lhs * rhs` on mapped matrices):
the packed blocks a single-threaded general matrix product allocates, from Eigen's sources
(*Eigen/src/Core/products/GeneralBlockPanelKernel.h*: `manage_caching_sizes`,
`evaluateProductBlockingSizesHeuristic`; *GeneralMatrixMatrix.h*: `gemm_blocking_space`,
`general_matrix_matrix_product::run`; *util/Memory.h*:
`ei_declare_aligned_stack_constructed_variable`).

* The product is m × k times k × n (m: the LHS rows, the output channels; n: the columns, the
  output pixels; k: the depth). One column (n = 1) or one row (m = 1) is a matrix × vector
  product, and m + n + k < 20 a coefficient-wise one: neither packs anything.
* Blocking, single thread: Eigen reads the CPU's data cache sizes once (cpuid, leaf 4 on
  Intel; the wheel's Eigen is not built for AVX-512, so L1 is taken as it is). With the
  float kernel's register tile (mr = 8 rows, nr = 4 columns: the wheel's build, read off the
  tracer's block sizes), kc = the depth cut to max_kc = ((l1 − mr·nr·4) / (mr·4 + nr·4))
  rounded down to 8, so that the last block is as large as possible; the "actual L2" is
  1.5 × L2; nc from what is left of L1 beside the packed LHS, or, when the LHS does not fit
  there, 3·L2' / (4·kc·4), bounded by L2' / (2·kc·4), rounded down to nr and balanced over
  the columns; mc from the rows when neither k nor n was cut (L1 below 1 KiB of problem,
  L2 below 32 KiB, L2' above).
* Blocks: the packed LHS is kc × mc floats, the packed RHS kc × nc; each goes on the stack up
  to 128 KiB (`EIGEN_STACK_ALLOCATION_LIMIT`), above that on the heap through
  handmade_aligned_malloc (64 B more), freed after the product.

The cache sizes are the machine's: `MEASURING_MACHINE` records those of the machine that
measured tests/data/litert_heap.json (read from /sys/devices/system/cpu/cpu0/cache, the
numbers cpuid gives), where the replay is checked block for block. Another machine's caches
give other blocks, and not always smaller ones (a smaller L1 cuts the depth and can leave a
larger row block on the heap: 1.5% of random shapes on 32 KiB / 1 MiB caches need more than
on the measuring machine's), so `replayed_caches` gives the replay only on a machine whose
caches are the measured ones; elsewhere heap_invoke keeps the bound (the whole packed
operand), which holds for any caches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

from arenalens.units import format_bytes_short

FLOAT_BYTES = 4
ROW_TILE = 8  # gebp_traits<float, float>::mr in the wheel's build
COLUMN_TILE = 4  # nr
DEPTH_PEELING = 8  # k_peeling
STACK_LIMIT_BYTES = 128 * 1024  # EIGEN_STACK_ALLOCATION_LIMIT
ALIGNMENT_BYTES = 64  # handmade_aligned_malloc's over-allocation (EIGEN_MAX_ALIGN_BYTES)
SMALL_PROBLEM = 48  # no blocking when max(k, m, n) < 48
COEFFICIENT_BASED_BELOW = 20  # EIGEN_GEMM_TO_COEFFBASED_THRESHOLD


@dataclass(frozen=True, slots=True)
class CacheSizes:
    """A CPU's data cache sizes as Eigen reads them (bytes; 0 when it has none)."""

    l1: int
    l2: int
    l3: int
    source: str

    @property
    def label(self) -> str:
        sizes = ", ".join(
            f"{name} {format_bytes_short(size)}"
            for name, size in (("L1d", self.l1), ("L2", self.l2), ("L3", self.l3))
        )
        return f"{sizes} ({self.source})"


# The machine that measured tests/data/litert_heap.json (x86-64, AVX-512, AMX).
MEASURING_MACHINE = CacheSizes(48 * 1024, 2048 * 1024, 307_200 * 1024, "the measuring machine")

# An AMD EPYC 7001 (Zen, AVX2) as Eigen reads it (cpuid 0x80000005/6: L3 64 MiB; sysfs says
# 8 MiB per complex): the replay is within 0.04% of the wheel there, never under (ff,
# torchaudio_conformer in tests/data/litert_heap_upstream_avx2.json).
ZEN_EPYC = CacheSizes(32 * 1024, 512 * 1024, 65_536 * 1024, "an AMD EPYC 7001")
CHECKED = (MEASURING_MACHINE, ZEN_EPYC)

# "L1d,L2,L3" in bytes: the caches of the machine the figure is for, in place of the running
# machine's (the test suite pins the measuring machine's, so its figures do not follow CI's CPU).
CACHES_VARIABLE = "ARENALENS_CPU_CACHES"
_CACHE_FOLDER = "/sys/devices/system/cpu/cpu0/cache"


def replayed_caches() -> CacheSizes | None:
    """The caches Eigen's blocks are replayed with: those of the machine the figure is for
    when they are caches the replay was checked on (`CHECKED`), else None (the bound)."""
    caches = _machine_caches(os.environ.get(CACHES_VARIABLE, ""))
    if caches is None:
        return None
    for checked in CHECKED:
        # Eigen reads the L3 only to know there is one (blocking): its size is not compared.
        if (caches.l1, caches.l2, bool(caches.l3)) == (checked.l1, checked.l2, bool(checked.l3)):
            return checked
    return None


@cache
def _machine_caches(pinned: str) -> CacheSizes | None:
    """The data caches `pinned` names ("L1d,L2,L3"), else this machine's from sysfs (None
    where it cannot be read: not Linux, a container hiding it)."""
    if pinned:
        try:
            l1, l2, l3 = (int(part) for part in pinned.split(","))
        except ValueError:
            return None
        return CacheSizes(l1, l2, l3, CACHES_VARIABLE)
    sizes = {1: 0, 2: 0, 3: 0}
    try:
        for entry in sorted(os.listdir(_CACHE_FOLDER)):
            folder = os.path.join(_CACHE_FOLDER, entry)
            if not entry.startswith("index"):
                continue
            level = int(_read(folder, "level"))
            if _read(folder, "type") in ("Data", "Unified") and level in sizes:
                sizes[level] = _kibibytes(_read(folder, "size"))
    except (OSError, ValueError):
        return None
    return CacheSizes(sizes[1], sizes[2], sizes[3], "this machine") if sizes[1] else None


def _read(folder: str, name: str) -> str:
    with open(os.path.join(folder, name), encoding="ascii") as file:
        return file.read().strip()


def _kibibytes(text: str) -> int:
    """sysfs's '48K' / '2048K' / '1M' → bytes."""
    units = {"K": 1024, "M": 1024 * 1024}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def blocking(rows: int, depth: int, columns: int, caches: CacheSizes) -> tuple[int, int, int]:
    """(kc, mc, nc) of a single-threaded m × k × n float product."""
    k, m, n = depth, rows, columns
    if max(k, m, n) < SMALL_PROBLEM:
        return k, m, n
    l1 = caches.l1
    actual_l2 = caches.l2 * 3 // 2
    k_div = ROW_TILE * FLOAT_BYTES + COLUMN_TILE * FLOAT_BYTES
    k_sub = ROW_TILE * COLUMN_TILE * FLOAT_BYTES
    max_kc = max(((l1 - k_sub) // k_div) & ~(DEPTH_PEELING - 1), 1)
    old_k = k
    if k > max_kc:
        k = (
            max_kc
            if k % max_kc == 0
            else max_kc
            - DEPTH_PEELING * ((max_kc - 1 - k % max_kc) // (DEPTH_PEELING * (k // max_kc + 1)))
        )
    lhs_bytes = m * k * FLOAT_BYTES
    remaining_l1 = l1 - k_sub - lhs_bytes
    if remaining_l1 >= COLUMN_TILE * FLOAT_BYTES * k:
        max_nc = remaining_l1 // (k * FLOAT_BYTES)
    else:
        max_nc = (3 * actual_l2) // (2 * 2 * k * FLOAT_BYTES)
    nc = min(actual_l2 // (2 * k * FLOAT_BYTES), max_nc) & ~(COLUMN_TILE - 1)
    if n > nc:
        n = (
            nc
            if n % nc == 0
            else nc - COLUMN_TILE * ((nc - n % nc) // (COLUMN_TILE * (n // nc + 1)))
        )
    elif old_k == k:
        problem = k * n * FLOAT_BYTES
        lm, max_mc = actual_l2, m
        if problem <= 1024:
            lm = l1
        elif caches.l3 and problem <= 32768:
            lm, max_mc = caches.l2, min(576, max_mc)
        mc = min(lm // (3 * k * FLOAT_BYTES), max_mc)
        if mc > ROW_TILE:
            mc -= mc % ROW_TILE
        elif mc == 0:
            return k, m, n
        m = mc if m % mc == 0 else mc - ROW_TILE * ((mc - m % mc) // (ROW_TILE * (m // mc + 1)))
    return k, m, n


def heap_requests(rows: int, depth: int, columns: int, caches: CacheSizes) -> list[int]:
    """The heap requests (bytes) of one product's packed blocks: LHS then RHS, those over
    the stack limit."""
    if columns == 1 or rows == 1 or rows + columns + depth < COEFFICIENT_BASED_BELOW:
        return []
    kc, mc, nc = blocking(rows, depth, columns, caches)
    sizes = (kc * min(rows, mc) * FLOAT_BYTES, kc * min(columns, nc) * FLOAT_BYTES)
    return [size + ALIGNMENT_BYTES for size in sizes if size > STACK_LIMIT_BYTES]
