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
* With t threads (the path eigen_cost replays from Eigen's cost model) it shards by columns
  unless `shardByCol` says rows, blocks with the multi-threaded heuristic (kc at most 320, nc
  from L2 − L1 and the columns per thread, mc from each thread's share of L3), and allocates
  in one block (64-aligned block sizes, 64 B of alignment over) the packed LHS and RHS blocks
  of min(k slices, P − 1 = 2) slices: min(nk, 2) × (nm0 × bm·bk + nn0 × bn·bk) × 4 B, each
  slice's vectors of block pointers, and its tasks' state arrays (P × nm pointers, P × nm
  arrays of nn bytes, after the grains' coarsening).
* When its tasks in the sharding dimension are at least 8 per pool thread (4 above 4
  threads) it also pre-allocates each pool thread's grain of packed blocks (N × gn of them);
  only pool threads pack then, so none allocates another.
* Sharded by the inner dimension (`EvalShardedByInnerDimContext`, over `blockSize`'s depth
  blocks: the split rounded up to 8, at least 12 packets) it adds an m × n buffer per block
  after the first, and each block's `evalGemmPartial` packs its own LHS and RHS (blocked as
  with as many threads as blocks). How many of those run at once is timing: the caller runs
  the first block while the pool's workers wake for the others (on the AMD EPYC the wheel
  held one at a time for small depths, 2 of 2 and 3 of 4 for a 9,216-deep one): all are
  counted (an upper bound).
* With one thread (`evalProductSequential`) one block holds a kc × mc LHS and kc × nc RHS
  (the single-threaded heuristic: eigen_blocking), and one column (n = 1) packs nothing.

The cache sizes are those Eigen reads (eigen_blocking.replayed_caches)."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Path:
    """The path `evalProductImpl` takes (eigen_cost replays its choice): "sequential" (one
    thread), "parallel" (EvalParallelContext with `threads`, its blocking, grains and task
    counts) or "inner" (EvalShardedByInnerDimContext over `threads` blocks of the depth)."""

    kind: str
    threads: int
    by_columns: bool = True
    bm: int = 0
    bn: int = 0
    bk: int = 0
    gm: int = 1
    gn: int = 1
    sharding_only: bool = False


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


def oversharding(pool_threads: int) -> float:
    """evalProductImpl's oversharding_factor."""
    return 8.0 if pool_threads <= 4 else 4.0 if pool_threads <= 8 else 2.0


def sharded_blocking(
    m: int, k: int, n: int, threads: int, caches: CacheSizes, *, by_columns: bool
) -> tuple[int, int, int]:
    """(bm, bn, bk): TensorContractionBlocking with `threads`, sharded by columns or rows."""
    if by_columns:
        bk, bm, bn = threaded_blocking(k, m, n, threads, caches)
    else:
        bk, bn, bm = threaded_blocking(k, n, m, threads, caches)
    return bm, bn, bk


def sequential_blocks(m: int, k: int, n: int, caches: CacheSizes) -> list[int]:
    """evalProductSequential: one block of the kc × mc LHS and kc × nc RHS (none for n = 1)."""
    if n == 1:
        return []
    kc, mc, nc = blocking(m, k, n, caches)
    sizes = _aligned(kc * min(m, mc) * FLOAT_BYTES) + _aligned(kc * min(n, nc) * FLOAT_BYTES)
    return [sizes + ALIGNMENT_BYTES]


def _slices(count: int, slices: int, size: int) -> list[int]:
    """allocateSlices: one block of `slices` × `count` blocks of `size` (64-aligned) bytes,
    and each slice's vector of block pointers."""
    if count == 0:
        return []
    return [slices * count * size + ALIGNMENT_BYTES] + [8 * count] * slices


def path_blocks(
    path: Path, m: int, k: int, n: int, *, pool: int, caches: CacheSizes
) -> tuple[list[int], bool]:
    """The blocks (usable bytes) the contraction takes on `path` (eigen_cost), and whether
    they are the wheel's (not the inner-dimension blocks' timing bound)."""
    if path.kind == "sequential":
        return [glibc.usable(size) for size in sequential_blocks(m, k, n, caches)], True
    if path.kind == "inner":
        return _inner_blocks(m, k, n, path.threads, pool=pool, caches=caches), False
    lhs = _aligned(path.bm * path.bk * FLOAT_BYTES)
    rhs = _aligned(path.bn * path.bk * FLOAT_BYTES)
    nm0, nn0 = _ceil(m, path.bm), _ceil(n, path.bn)
    nm, nn = _ceil(nm0, path.gm), _ceil(nn0, path.gn)
    slices = min(_ceil(k, path.bk), SLICES)
    requests = [slices * (nm0 * lhs + nn0 * rhs) + ALIGNMENT_BYTES]
    requests += [8 * nm0] * slices + [8 * nn0] * slices
    requests += [8 * nm] * PHASES + [nn] * (PHASES * nm)
    if path.sharding_only:
        # Each pool thread's pre-allocated grain of sharding-dimension blocks: only pool
        # threads pack then (enqueue_packing_helper sends even the first packing task to the
        # pool), so none allocates its own.
        grain, size, tasks = (path.gn, rhs, nn) if path.by_columns else (path.gm, lhs, nm)
        requests += [tasks, *_slices(pool * grain, 1, size)]
    return [glibc.usable(request) for request in requests], True


def _inner_blocks(
    m: int, k: int, n: int, split: int, *, pool: int, caches: CacheSizes
) -> list[int]:
    """EvalShardedByInnerDimContext over `split`: blockSize's depth blocks, an m × n buffer
    for each after the first, each running block's packed operands (evalGemmPartial with
    as many threads as blocks)."""
    least = max(_ceil(_ceil(k, split), 8) * 8, L0_MIN_PACKETS * PACKET_FLOATS)
    size = min(k, least)
    blocks = _ceil(k, size)
    if blocks > 1:
        kc, mc, nc = threaded_blocking(size, m, n, blocks, caches)
    else:
        kc, mc, nc = blocking(m, size, n, caches)
    each = glibc.usable(
        _aligned(kc * min(m, mc) * FLOAT_BYTES)
        + _aligned(kc * min(n, nc) * FLOAT_BYTES)
        + ALIGNMENT_BYTES
    )
    buffer = glibc.usable(m * n * FLOAT_BYTES + ALIGNMENT_BYTES)
    return [buffer] * (blocks - 1) + [each] * min(blocks, pool + 1)


def any_caches_blocks(m: int, k: int, n: int, pool: int, kinds: frozenset[str]) -> list[int]:
    """The contraction's blocks (usable bytes) whatever caches Eigen reads, so whatever path
    its cost model takes: the largest of the paths' bounds. A block's depth is at most k
    (with more than one thread, two slices of at most 320); its row (column) blocks number at
    most m (n) and cover under twice m (n), each 64-aligned; each pool thread's grain exists
    only where the sharding dimension has `oversharding` tasks a thread, so all of them
    cover under twice that dimension over the factor; the state arrays are 3 × m × n bytes
    at most, with their small blocks' overheads; sharded by depth, a buffer of m × n floats
    a thread after the first and blocks whose depths sum to under 2k; any block may be
    mmapped (a page over). Of the paths in `kinds` (eigen_cost.possible_kinds)."""
    if n == 1:
        return []
    page = 4096 + 4 * ALIGNMENT_BYTES  # a block's alignment and mmapped rounding, at most
    sequential = [FLOAT_BYTES * k * (m + n) + page]
    if pool < 2 or kinds == {"sequential"}:
        return sequential
    depth = min(2 * k, SLICES * MAX_DEPTH_BLOCK)
    packed = FLOAT_BYTES * depth * 2 * (m + n) + 2 * ALIGNMENT_BYTES * (m + n) + page
    side = 2 * max(m, n) + ROW_TILE
    count = int(2 * side / oversharding(pool)) + 1  # the grains' blocks, at most
    grains = (FLOAT_BYTES * min(k, MAX_DEPTH_BLOCK) + ALIGNMENT_BYTES) * count + page
    states = PHASES * m * n + 192 * (m + n) + 1024
    buffers = (pool - 1) * glibc.usable(FLOAT_BYTES * m * n + ALIGNMENT_BYTES)
    inner = [buffers, FLOAT_BYTES * 2 * k * (m + n) + pool * page]
    paths = {"sequential": sequential, "parallel": [packed, grains, states], "inner": inner}
    return max((paths[kind] for kind in kinds), key=sum)
