"""The packed blocks of Eigen's multi-threaded tensor contraction, as conv.cc's multi-threaded
float kernel runs it (*multithreaded_conv.h*: `EigenTensorConvFunctor`, a 1×1 or whole-input
filter as a matrix contraction, else `Eigen::SpatialConvolution`) on eigen_support.cc's
ThreadPoolDevice of N threads, from Eigen's sources
(*unsupported/Eigen/CXX11/src/Tensor/TensorContractionThreadPool.h*: `evalProductImpl`,
`shardByCol`, `shardByInnerDim`, `EvalParallelContext`, `EvalShardedByInnerDimContext`;
*TensorContractionBlocking.h*; *GeneralBlockPanelKernel.h*:
`evaluateProductBlockingSizesHeuristic`'s num_threads > 1 branch; *TensorContractionMapper.h*:
`TensorContractionBlockMemAllocator::allocateSlices`).

* The contraction is m × k times k × n with m the output channels, n the output pixels of
  every image and k the filter's taps × input channels (the tensors are row-major: Eigen
  swaps the operands).
* With t threads it shards by columns unless `shardByCol` says rows, blocks with the
  multi-threaded heuristic (kc at most 320, nc from L2 − L1 and the columns per thread, mc
  from each thread's share of L3), and allocates in one block (64-aligned block sizes,
  64 B of alignment over) the packed LHS and RHS blocks of min(k slices, P − 1 = 2) slices:
  min(nk, 2) × (nm0 × bm·bk + nn0 × bn·bk) × 4 B; and its tasks' state arrays.
* When its tasks in the sharding dimension are at least 8 per pool thread (4 above 4
  threads) it also pre-allocates each pool thread's packed blocks (N × gn of them).
* Sharded by the inner dimension it adds an m × n buffer per k block after the first, and
  each block's own packed LHS and RHS.
* With one thread (`evalProductSequential`) one block holds a kc × mc LHS and kc × nc RHS
  (the single-threaded heuristic: eigen_blocking), and one column (n = 1) packs nothing.

Which of these runs follows Eigen's cost model (`TensorCostModel::numThreads`,
`numThreadsInnerDim`, `coarsenM/N`), which is not replayed: the largest of every thread count
from 1 to N, every inner-dimension split Eigen may take and the largest task grain is
counted (an upper bound; the wheel's blocks are one of them). The cache sizes are those
Eigen reads (eigen_blocking.replayed_caches)."""

from __future__ import annotations

from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.eigen_blocking import (
    ALIGNMENT_BYTES,
    COLUMN_TILE,
    DEPTH_PEELING,
    FLOAT_BYTES,
    ROW_TILE,
    CacheSizes,
    blocking,
)

PHASES = 3  # EvalParallelContext's P
SLICES = PHASES - 1  # its k-slices in flight
MAX_DEPTH_BLOCK = 320  # the multi-threaded heuristic's cap on kc
PACKET_FLOATS = 4  # the wheel's float packet (SSE): EvalShardedByInnerDimContext's blocks
L0_MIN_PACKETS = 12  # EvalShardedByInnerDimContext::blockSize's desired minimum, in packets
# TensorCostModel: cycles to start a parallel loop and per thread; the cheapest compute cost of
# one output coefficient per unit of depth (peak FMA bandwidth 0.5 over an 8-float packet).
STARTUP_CYCLES = 100_000
PER_THREAD_CYCLES = 100_000
CHEAPEST_CYCLES_PER_DEPTH = 0.5 / 8


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _aligned(nbytes: int) -> int:
    return _ceil(nbytes, ALIGNMENT_BYTES) * ALIGNMENT_BYTES


def threaded_blocking(
    depth: int, rows: int, columns: int, threads: int, caches: CacheSizes
) -> tuple[int, int, int]:
    """(kc, mc, nc) of the heuristic's num_threads > 1 branch for an m × k × n product."""
    k, m, n = depth, rows, columns
    k_div = ROW_TILE * FLOAT_BYTES + COLUMN_TILE * FLOAT_BYTES
    k_sub = ROW_TILE * COLUMN_TILE * FLOAT_BYTES
    k_cache = max(DEPTH_PEELING, min((caches.l1 - k_sub) // k_div, MAX_DEPTH_BLOCK))
    if k_cache < k:
        k = k_cache - k_cache % DEPTH_PEELING
    n_cache = (caches.l2 - caches.l1) // (COLUMN_TILE * FLOAT_BYTES * k)
    per_thread = _ceil(n, threads)
    if n_cache <= per_thread:
        n = n_cache - n_cache % COLUMN_TILE
    else:
        n = min(n, per_thread + COLUMN_TILE - 1 - (per_thread + COLUMN_TILE - 1) % COLUMN_TILE)
    if caches.l3 > caches.l2:
        m_cache = (caches.l3 - caches.l2) // (FLOAT_BYTES * k * threads)
        per_thread = _ceil(m, threads)
        if ROW_TILE <= m_cache < per_thread:
            m = m_cache - m_cache % ROW_TILE
        else:
            m = min(m, per_thread + ROW_TILE - 1 - (per_thread + ROW_TILE - 1) % ROW_TILE)
    return k, m, n


def shard_by_columns(m: int, n: int, threads: int) -> bool:
    """TensorContractionThreadPool.h `shardByCol`."""
    nr = COLUMN_TILE
    if m // threads >= nr and (
        n // threads < nr
        or (
            n // threads < 4 * nr
            and n % (threads * nr) != 0
            and (m % (threads * nr) == 0 or m // n >= 6)
        )
    ):
        return False
    return not (n // threads < 16 * nr and m > n * 32)


def _oversharding(pool_threads: int) -> float:
    return 8.0 if pool_threads <= 4 else 4.0 if pool_threads <= 8 else 2.0


def parallel_blocks(
    m: int, k: int, n: int, *, threads: int, pool: int, caches: CacheSizes
) -> list[int]:
    """EvalParallelContext's block requests with `threads` of a `pool`-thread pool."""
    by_columns = shard_by_columns(m, n, threads)
    if by_columns:
        bk, bm, bn = threaded_blocking(k, m, n, threads, caches)
    else:
        bk, bn, bm = threaded_blocking(k, n, m, threads, caches)
    lhs, rhs = _aligned(bm * bk * FLOAT_BYTES), _aligned(bn * bk * FLOAT_BYTES)
    blocks_m, blocks_n = _ceil(m, bm), _ceil(n, bn)
    packed = [min(_ceil(k, bk), SLICES) * (blocks_m * lhs + blocks_n * rhs) + ALIGNMENT_BYTES]
    # parallelize_by_sharding_dim_only: each pool thread's grain of sharding-dimension
    # blocks, at the largest grain that still leaves enough tasks.
    blocks, size = (blocks_n, rhs) if by_columns else (blocks_m, lhs)
    enough = _oversharding(pool) * pool
    grains = [grain for grain in range(1, blocks + 1) if _ceil(blocks, grain) >= enough]
    local = [pool * max(grains) * size + ALIGNMENT_BYTES] if grains else []
    # The context's state: P arrays of the m tasks' kernel states (one byte per n task) and
    # the P - 1 slices' vectors of block pointers, at one block a task (no coarsening: the
    # most tasks).
    states = [8 * blocks_m] * PHASES + [blocks_n] * (PHASES * blocks_m)
    vectors = [8 * blocks_m] * SLICES + [8 * blocks_n] * SLICES
    return packed + local + states + vectors


def sequential_blocks(m: int, k: int, n: int, caches: CacheSizes) -> list[int]:
    """evalProductSequential: one block of the kc × mc LHS and kc × nc RHS (none for n = 1)."""
    if n == 1:
        return []
    kc, mc, nc = blocking(m, k, n, caches)
    sizes = _aligned(kc * min(m, mc) * FLOAT_BYTES) + _aligned(kc * min(n, nc) * FLOAT_BYTES)
    return [sizes + ALIGNMENT_BYTES]


def inner_sharded_blocks(
    m: int, k: int, n: int, pool: int, caches: CacheSizes, *, threads: int = 1
) -> list[int]:
    """EvalShardedByInnerDimContext at the most blocks Eigen may split k into (an even count
    up to the pool's threads, when `shardByInnerDim` can hold with at least `threads` threads
    by the cost model): an m × n buffer per block after the first, and each running block's
    packed operands (usable bytes; none: it never shards so)."""
    if n == 1 or pool < 2:
        return []
    largest: list[int] = []
    for split in range(max(2, threads), pool + 1, 2):
        if k // split < 2 * COLUMN_TILE or m * n * FLOAT_BYTES > caches.l3 // split:
            continue
        tiny = max(m, n) // threads < COLUMN_TILE
        narrow = k // split > 8 * COLUMN_TILE and min(m, n) < 2 * COLUMN_TILE
        if not tiny and not narrow and split <= threads:
            continue
        least = max(_ceil(_ceil(k, split), 8) * 8, L0_MIN_PACKETS * PACKET_FLOATS)
        size = min(k, least)
        blocks = _ceil(k, size)
        if blocks < 2:
            continue
        kc, mc, nc = threaded_blocking(size, m, n, blocks, caches)
        each = glibc.usable(
            _aligned(kc * min(m, mc) * FLOAT_BYTES)
            + _aligned(kc * min(n, nc) * FLOAT_BYTES)
            + ALIGNMENT_BYTES
        )
        buffer = glibc.usable(m * n * FLOAT_BYTES + ALIGNMENT_BYTES)
        found = [buffer] * (blocks - 1) + [each] * min(blocks, pool + 1)
        if sum(found) > sum(largest):
            largest = found
    return largest


def surely_all_threads(m: int, k: int, n: int, pool: int, caches: CacheSizes) -> bool:
    """Eigen's cost model gives the contraction every thread of the pool however its
    constants fall: `TensorCostModel::numThreads` on the m × n output at no less than the
    cheapest compute cost per coefficient (bk × 0.5 cycles over an 8-float packet), with
    100,000 cycles to start and per thread, reaches `pool`."""
    by_columns = shard_by_columns(m, n, 2)
    bk = (
        threaded_blocking(k, m, n, 2, caches)[0]
        if by_columns
        else threaded_blocking(k, n, m, 2, caches)[0]
    )
    cycles = m * n * bk * CHEAPEST_CYCLES_PER_DEPTH
    return (cycles - STARTUP_CYCLES) / PER_THREAD_CYCLES + 0.9 >= pool


def contraction_blocks(m: int, k: int, n: int, pool: int, caches: CacheSizes) -> list[int]:
    """The blocks (usable bytes) one contraction takes with a `pool`-thread device: those of
    the path Eigen takes where its cost model surely gives every thread, else of the largest
    path it may pick; none for one column (a matrix × vector product)."""
    if n == 1:
        return []
    every = surely_all_threads(m, k, n, pool, caches)
    counts = (pool,) if every else tuple(range(2, pool + 1))
    paths = [] if every else [sequential_blocks(m, k, n, caches)]
    paths.extend(parallel_blocks(m, k, n, threads=t, pool=pool, caches=caches) for t in counts)
    found = [[glibc.usable(request) for request in path] for path in paths]
    found.append(inner_sharded_blocks(m, k, n, pool, caches, threads=pool if every else 1))
    return max(found, key=sum)
