"""Pooling kernels: AVERAGE_POOL_2D, MAX_POOL_2D → their setup allocations (pooling.cc)."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import Fixed, KernelRule
from arenalens.runtimes.tflm.kernels.common import op_data

RULES = (
    KernelRule(
        "AVERAGE_POOL_2D", "pooling.cc, pooling_common.cc", Fixed(40, 4), op_data(32), derived=False
    ),
    KernelRule(
        "MAX_POOL_2D", "pooling.cc, pooling_common.cc", Fixed(40, 4), op_data(32), derived=False
    ),
)
