"""Type conversions: QUANTIZE, DEQUANTIZE, CAST → their setup allocations."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import Fixed, KernelRule
from arenalens.runtimes.tflm.kernels.common import op_data

RULES = (
    KernelRule("CAST", "cast.cc", Fixed(8, 4), derived=False),
    KernelRule(
        "DEQUANTIZE", "dequantize.cc, dequantize_common.cc", None, op_data(32), derived=False
    ),
    KernelRule("QUANTIZE", "quantize.cc, quantize_common.cc", None, op_data(32), derived=False),
)
