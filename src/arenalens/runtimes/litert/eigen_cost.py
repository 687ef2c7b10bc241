"""Which path Eigen's multi-threaded tensor contraction takes, as its cost model decides
(*unsupported/Eigen/CXX11/src/Tensor/TensorContractionThreadPool.h*: `evalProductImpl`,
`contractionCost`, `computeBandwidth`, `numThreadsInnerDim`, `contractionCostPerInnerDim`,
`shardByInnerDim`, `coarsenM`, `coarsenN`, `checkGrain`; *TensorCostModel.h*: `numThreads`,
`taskSize`, `totalCost`), for the float convolutions conv.cc runs on eigen_support.cc's
ThreadPoolDevice (eigen_parallel gives the blocks of the path).

* The build: the wheel's Eigen is built for SSE without FMA (the float kernel's register tile,
  mr = 8 = 2 SSE packets, not 3: eigen_blocking), so a packet holds 4 floats and
  `computeBandwidth`'s peak 0.5 cycles is 1.0 (MULPS then ADDPS).
* The operands' cost per coefficient (`costPerCoeff(true)`): a mapped tensor (the filter, or
  the input of a 1×1 stride-1 or whole-input filter: `MatMulConvFunctor`) loads 4 bytes; the
  image patches of `Eigen::SpatialConvolution` (a reshape of `TensorImagePatchOp` over the
  mapped input) add 3 index divisions (24 cycles each for a 64-bit `long`, XprHelper.h
  `scalar_div_cost`) and 14 index products (1 each) over a 4-float packet: 21.5 cycles.
* Memory is 11/64 of a cycle a byte loaded or stored; a parallel loop costs 100,000 cycles to
  start and 100,000 a thread; a task 40,000 cycles is the ideal grain.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.runtimes.litert.eigen_blocking import COLUMN_TILE, ROW_TILE, CacheSizes
from arenalens.runtimes.litert.eigen_parallel import (
    MAX_DEPTH_BLOCK,
    Path,
    oversharding,
    shard_by_columns,
    sharded_blocking,
)

PACKET_FLOATS = 4  # SSE
FLOAT_BYTES = 4
MEMORY_CYCLES_PER_BYTE = 11 / 64  # totalCost: an L2 line of 64 B in 11 cycles
STARTUP_CYCLES = 100_000  # TensorCostModel::kStartupCycles
PER_THREAD_CYCLES = 100_000  # kPerThreadCycles
TASK_CYCLES = 40_000  # kTaskSize
INNER_FIXED_CYCLES = 100_000  # numThreadsInnerDim's kFixedOverHead
INNER_PER_THREAD_CYCLES = 3_000  # and kPerThreadOverHead
INDEX_DIVISION_CYCLES = 24  # scalar_div_cost<signed long>
PATCH_COMPUTE_CYCLES = (3 * INDEX_DIVISION_CYCLES + 6 + 8) / PACKET_FLOATS
BANDWIDTH_SINGLE_DEPTH = 4.0
BANDWIDTH_NARROW = 2.0
BANDWIDTH_PEAK = 1.0  # 0.5 with FMA; the wheel's SSE build has none


@dataclass(frozen=True, slots=True)
class Cost:
    """A TensorOpCost: bytes loaded and stored, compute cycles (per coefficient)."""

    loaded: float
    stored: float
    compute: float

    def total(self, coefficients: float) -> float:
        """TensorCostModel::totalCost."""
        memory = MEMORY_CYCLES_PER_BYTE * (self.loaded + self.stored)
        return coefficients * (memory + self.compute)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _bandwidth(by_columns: bool, bm: int, bn: int, bk: int) -> float:
    """computeBandwidth (no FMA)."""
    if bk == 1:
        return BANDWIDTH_SINGLE_DEPTH
    if (bn if by_columns else bm) < COLUMN_TILE or (bm if by_columns else bn) < ROW_TILE:
        return BANDWIDTH_NARROW
    return BANDWIDTH_PEAK


def _operands(patches: bool) -> tuple[Cost, Cost]:
    """(filter, data) costPerCoeff(true): the data are image patches or a mapped matrix."""
    mapped = Cost(FLOAT_BYTES, 0, 0)
    return mapped, Cost(FLOAT_BYTES, 0, PATCH_COMPUTE_CYCLES if patches else 0)


def contraction_cost(
    m: int, n: int, bm: int, bn: int, bk: int, *, by_columns: bool, prepacked: bool, patches: bool
) -> Cost:
    """contractionCost (its computeBandwidth is always asked with shard_by_col false)."""
    depth = float(bk)
    compute = depth * _bandwidth(False, bm, bn, bk) / PACKET_FLOATS
    if prepacked:
        return Cost(0, FLOAT_BYTES, compute)
    lhs, rhs = _operands(patches)
    lhs_loaded, rhs_loaded = lhs.loaded * depth / n, rhs.loaded * depth / m
    if by_columns:
        lhs_loaded = 0.0
    else:
        rhs_loaded = 0.0
    compute += lhs.compute * depth / n + rhs.compute * depth / m
    return Cost(lhs_loaded + rhs_loaded, FLOAT_BYTES, compute)


def num_threads(cost: Cost, coefficients: float, limit: int) -> int:
    """TensorCostModel::numThreads (the C++ int conversion truncates toward zero)."""
    threads = int((cost.total(coefficients) - STARTUP_CYCLES) / PER_THREAD_CYCLES + 0.9)
    return min(limit, max(1, threads))


def threads_inner_dim(m: int, n: int, k: int, pool: int, *, patches: bool) -> int:
    """numThreadsInnerDim: the even split of the depth whose modelled time is least."""
    lhs, rhs = _operands(patches)
    compute = _bandwidth(True, m, n, k) * m * n / PACKET_FLOATS
    cost = Cost(rhs.loaded * n, FLOAT_BYTES, compute + lhs.compute * m + rhs.compute * n)
    parallel = cost.total(k)
    reduction = Cost(2, 1, 1 / PACKET_FLOATS).total(m * n)
    threads, least = 1, parallel
    for split in range(2, pool + 1, 2):
        modelled = (
            parallel / split + INNER_FIXED_CYCLES + split * (reduction + INNER_PER_THREAD_CYCLES)
        )
        if modelled < least:
            threads, least = split, modelled
    return threads


def shard_by_inner_dim(
    m: int, n: int, k: int, *, threads: int, by_k: int, caches: CacheSizes
) -> bool:
    """shardByInnerDim."""
    if (
        n == 1
        or by_k < 2
        or by_k < threads
        or m * n * FLOAT_BYTES > caches.l3 // by_k
        or k // by_k < 2 * COLUMN_TILE
    ):
        return False
    return max(m, n) // threads < COLUMN_TILE or (
        k // by_k > 8 * COLUMN_TILE and (min(m, n) < 2 * COLUMN_TILE or by_k > threads)
    )


def _grain_check(
    m: int,
    n: int,
    block: tuple[int, int, int],
    grain: tuple[int, int],
    old: tuple[int, int],
    *,
    threads: int,
    by_columns: bool,
) -> int:
    """checkGrain: 1 take, 0 skip, -1 stop."""
    bm, bn, bk = block
    gm, gn = grain
    cost = contraction_cost(
        bm * gm, bn * gn, bm, bn, bk, by_columns=by_columns, prepacked=True, patches=False
    )
    size = cost.total(bm * gm * bn * gn) / TASK_CYCLES
    if size < 1:
        return 1
    if size > 2:
        return -1
    nm0, nn0 = _ceil(m, bm), _ceil(n, bn)

    def parallelism(g_m: int, g_n: int) -> float:
        tasks = _ceil(nm0, g_m) * _ceil(nn0, g_n)
        return tasks / (_ceil(tasks, threads) * threads)

    new = parallelism(gm, gn)
    return 1 if new > parallelism(*old) or new == 1 else 0


def _coarsen(
    m: int,
    n: int,
    block: tuple[int, int, int],
    other: int,
    *,
    threads: int,
    by_columns: bool,
    rows: bool,
) -> int:
    """coarsenM (`rows`) or coarsenN: the grain along one dimension, the other's fixed."""
    bm, bn, _ = block
    blocks = _ceil(m, bm) if rows else _ceil(n, bn)
    grain = candidate = 1
    tasks = blocks
    while True:
        while candidate <= blocks and tasks == _ceil(blocks, candidate):
            candidate += 1
        if candidate > blocks:
            return grain
        if rows:
            new, old = (candidate, other), (grain, other)
        else:
            new, old = (other, candidate), (other, grain)
        verdict = _grain_check(m, n, block, new, old, threads=threads, by_columns=by_columns)
        if verdict < 0:
            return grain
        tasks = _ceil(blocks, candidate)
        if verdict:
            grain = candidate


def contraction_path(
    m: int, k: int, n: int, pool: int, caches: CacheSizes, *, patches: bool
) -> Path:
    """evalProductImpl's choice for an m × k × n contraction on a `pool`-thread device."""
    by_columns = shard_by_columns(m, n, 2)
    bm, bn, bk = sharded_blocking(m, k, n, 2, caches, by_columns=by_columns)
    cost = contraction_cost(
        m, n, bm, bn, bk, by_columns=by_columns, prepacked=False, patches=patches
    )
    threads = num_threads(cost, float(n) * m, pool)
    by_k = threads_inner_dim(m, n, k, pool, patches=patches)
    if shard_by_inner_dim(m, n, k, threads=threads, by_k=by_k, caches=caches):
        return Path("inner", by_k)
    if n == 1 or threads == 1:
        return Path("sequential", 1)
    by_columns = shard_by_columns(m, n, threads)
    block = sharded_blocking(m, k, n, threads, caches, by_columns=by_columns)
    if by_columns:
        gm = _coarsen(m, n, block, 1, threads=threads, by_columns=by_columns, rows=True)
        gn = _coarsen(m, n, block, gm, threads=threads, by_columns=by_columns, rows=False)
    else:
        gn = _coarsen(m, n, block, 1, threads=threads, by_columns=by_columns, rows=False)
        gm = _coarsen(m, n, block, gn, threads=threads, by_columns=by_columns, rows=True)
    bm, bn, bk = block
    tasks = _ceil(_ceil(n, bn), gn) if by_columns else _ceil(_ceil(m, bm), gm)
    only = tasks >= oversharding(pool) * pool
    return Path("parallel", threads, by_columns, bm, bn, bk, gm, gn, only)


def possible_kinds(m: int, k: int, n: int, pool: int, *, patches: bool) -> frozenset[str]:
    """The paths `contraction_path` may give whatever caches Eigen reads: its first blocking
    gives a depth block between min(k, 8) and min(k, 320) and a bandwidth of 1.0 or 2.0
    (4.0 for one unit of depth), so the cost model's thread count lies between the cheapest's
    and the dearest's; the depth split (numThreadsInnerDim) does not depend on the caches, and
    of shardByInnerDim only the L3 test does (taken as passing)."""
    if n == 1 or pool < 2:
        return frozenset({"sequential"})
    by_columns = shard_by_columns(m, n, 2)
    least, most = (
        num_threads(
            contraction_cost(
                m, n, rows, rows, min(k, depth), by_columns=by_columns, prepacked=False,
                patches=patches,
            ),
            float(n) * m,
            pool,
        )
        for rows, depth in ((ROW_TILE, 8), (1, MAX_DEPTH_BLOCK))
    )  # fmt: skip
    by_k = threads_inner_dim(m, n, k, pool, patches=patches)
    kinds = {"sequential"} if least == 1 else set()
    if most > 1:
        kinds.add("parallel")
    for threads in range(least, most + 1):
        if by_k < 2 or by_k < threads or k // by_k < 2 * COLUMN_TILE:
            continue
        if max(m, n) // threads < COLUMN_TILE or (
            k // by_k > 8 * COLUMN_TILE and (min(m, n) < 2 * COLUMN_TILE or by_k > threads)
        ):
            kinds.add("inner")
    return frozenset(kinds)
