"""Eigen's cost model replayed (runtimes/litert/eigen_cost.py): the path each multi-threaded
float convolution's contraction takes, and its blocks (eigen_parallel), against the blocks the
2.3.0 wheel allocated in its invoke on the AMD EPYC (tests/litert_heap_trace.py's tracer with
num_threads; the measured cases are tests/data/litert_heap_conv_threads.json's, checked in
test_litert_threads)."""

from __future__ import annotations

import pytest

from arenalens.runtimes.litert import eigen_cost, eigen_parallel
from arenalens.runtimes.litert.eigen_blocking import ZEN_EPYC
from arenalens.runtimes.litert.glibc import usable


def test_image_patches_cost_three_index_divisions_per_packet() -> None:
    """TensorImagePatchOp's costPerCoeff: 3 divisions of a 64-bit index (24 cycles each,
    XprHelper.h) and 14 products over a 4-float SSE packet; a mapped tensor computes nothing."""
    assert eigen_cost.PATCH_COMPUTE_CYCLES == 21.5
    filters, patches = eigen_cost._operands(patches=True)
    assert (filters.compute, patches.compute, patches.loaded) == (0, 21.5, 4)


@pytest.mark.parametrize(
    ("mkn", "threads", "patches", "kind", "used"),
    [
        # mt17_9 at 4 threads: its 4 × 400 × 96 shards the depth in 4 (the wheel: three
        # 1,608 B buffers, 11,720 B blocks), its 16 × 36 × 96 runs on one thread (16,200 B)
        ((4, 400, 96), 4, True, "inner", 4),
        ((16, 36, 96), 4, True, "sequential", 1),
        ((4, 400, 96), 2, True, "inner", 2),
        # mt16_3 at 2: parallel, by columns, each pool thread's grain pre-allocated
        ((24, 864, 2304), 2, True, "parallel", 2),
        # a 1×1 stride-1 filter is a plain matrix product: no patch cost, one thread
        ((64, 24, 576), 4, False, "parallel", 2),
        # traced by hand: 3 of a 3-thread pool (4,189,096 B at the peak)
        ((4, 9216, 1600), 3, True, "parallel", 3),
    ],
)
def test_the_path_is_the_wheels(
    mkn: tuple[int, int, int], threads: int, patches: bool, kind: str, used: int
) -> None:
    m, k, n = mkn
    path = eigen_cost.contraction_path(m, k, n, threads, ZEN_EPYC, patches=patches)
    assert (path.kind, path.threads) == (kind, used)


def test_the_blocks_are_the_wheels() -> None:
    """The wheel's invoke of mt16_3's 24 × 864 × 2304 at 2 threads: 5,980,224 B of packed
    slices, two slices' vectors of 24 RHS pointers, each pool thread's grain (245,824 B); of
    mt17_9's 4 × 400 × 96 at 4: three 1,600 B partial sums, 11,712 B blocks."""
    path = eigen_cost.contraction_path(24, 864, 2304, 2, ZEN_EPYC, patches=True)
    assert (path.by_columns, path.bm, path.bn, path.bk, path.sharding_only) == (
        True, 16, 96, 320, True,
    )  # fmt: skip
    blocks, exact = eigen_parallel.path_blocks(path, 24, 864, 2304, pool=2, caches=ZEN_EPYC)
    assert exact
    assert blocks[0] == usable(5_980_224)
    assert blocks.count(usable(192)) == 2
    assert usable(245_824) in blocks  # counted mmapped, as glibc.py says
    path = eigen_cost.contraction_path(4, 400, 96, 4, ZEN_EPYC, patches=True)
    blocks, exact = eigen_parallel.path_blocks(path, 4, 400, 96, pool=4, caches=ZEN_EPYC)
    assert not exact  # how many blocks run at once is timing: all counted
    assert blocks == [usable(1_600)] * 3 + [usable(11_712)] * 4


def test_without_the_caches_the_bound_holds_for_any_caches() -> None:
    """Where the caches Eigen reads are not known (eigen_blocking.replayed_caches is None), the
    contraction counts the largest blocks any caches may give (eigen_parallel.any_caches_blocks
    over eigen_cost.possible_kinds): at or above the replay on every path, for shapes and
    pools drawn over caches from 8 KiB / 64 KiB / 512 KiB to 128 KiB / 4 MiB / 256 MiB."""
    import random

    from arenalens.runtimes.litert.eigen_blocking import MEASURING_MACHINE, CacheSizes

    caches = (
        ZEN_EPYC,
        MEASURING_MACHINE,
        CacheSizes(8 << 10, 64 << 10, 512 << 10, "small"),
        CacheSizes(16 << 10, 1 << 20, 0, "no L3"),
        CacheSizes(32 << 10, 256 << 10, 8 << 20, "client"),
        CacheSizes(128 << 10, 4 << 20, 256 << 20, "large"),
    )
    draw = random.Random(18)
    for _ in range(400):
        m = draw.choice((1, 2, 4, 8, 16, 24, 64, 100, 256))
        k = draw.choice((1, 3, 9, 27, 64, draw.randint(1, 400), draw.randint(1, 20_000)))
        n = draw.choice((2, 3, 9, 16, 50, draw.randint(1, 500), draw.randint(1, 20_000)))
        pool = draw.choice((2, 3, 4, 8))
        for patches in (True, False):
            kinds = eigen_cost.possible_kinds(m, k, n, pool, patches=patches)
            bound = sum(eigen_parallel.any_caches_blocks(m, k, n, pool, kinds))
            for cache in caches:
                path = eigen_cost.contraction_path(m, k, n, pool, cache, patches=patches)
                assert n == 1 or path.kind in kinds
                blocks, _ = eigen_parallel.path_blocks(path, m, k, n, pool=pool, caches=cache)
                assert sum(blocks) <= bound
