"""Eigen's float blocking (runtimes/litert/eigen_blocking.py) against the heap blocks the wheel's
Eigen allocated under the tracer (tests/litert_heap_trace.py, builtin kernels, first invoke)."""

from __future__ import annotations

from arenalens.runtimes.litert import eigen_blocking
from arenalens.runtimes.litert.eigen_blocking import MEASURING_MACHINE, CacheSizes

# Each model's float GEMMs (rows = output channels, depth, columns = output pixels, in
# execution order) and the heap blocks the wheel's Eigen asked for during its first invoke,
# read off the tracer (python -m tests.litert_heap_trace MODEL builtin) on the measuring machine.
TRACED = {
    "mlperf_tiny__pretrainedResnet": (
        [(16, 27, 1024), (16, 144, 1024), (16, 144, 1024), (32, 144, 256), (32, 288, 256),
         (32, 16, 256), (64, 288, 64), (64, 576, 64), (64, 32, 64)],
        [147_520, 147_520],
    ),
    "mlperf_tiny__pretrainedResnet_large_float": (
        [(40, 27, 1024), (40, 360, 1024), (40, 360, 1024), (80, 360, 256), (80, 720, 256),
         (80, 40, 256), (160, 720, 64), (160, 1440, 64), (160, 80, 64)],
        [184_384, 186_432, 230_464, 368_704, 460_864, 465_984, 737_344, 1_474_624, 1_474_624],
    ),
    "mlperf_tiny__vww_96_float": (
        [(8, 27, 2304), (16, 8, 2304), (32, 16, 576), (32, 32, 576), (64, 32, 144),
         (64, 64, 144), (128, 64, 36), (128, 128, 36), (256, 128, 9), (256, 256, 9)],
        [262_208],
    ),
    "heldout_float_cnn_1": ([(4, 9, 1024), (4, 36, 1024)], []),
}  # fmt: skip


def test_blocks_are_the_wheels_on_the_measuring_machine() -> None:
    for name, (gemms, traced) in TRACED.items():
        requests = [
            request
            for rows, depth, columns in gemms
            for request in eigen_blocking.heap_requests(rows, depth, columns, MEASURING_MACHINE)
        ]
        assert sorted(requests) == traced, name


def test_vectors_and_tiny_products_pack_nothing() -> None:
    assert eigen_blocking.heap_requests(256, 4096, 1, MEASURING_MACHINE) == []
    assert eigen_blocking.heap_requests(1, 4096, 4096, MEASURING_MACHINE) == []


def test_larger_caches_take_larger_blocks() -> None:
    small = CacheSizes(32 * 1024, 256 * 1024, 0, "small")
    assert sum(eigen_blocking.heap_requests(40, 360, 1024, small)) < 1_474_624
