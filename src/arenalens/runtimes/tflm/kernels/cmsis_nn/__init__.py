"""CMSIS-NN kernel rules (TFLM `kernels/cmsis_nn/`), on each of CMSIS-NN's code paths
(`buffers`): every rule a variant of the reference kernel's (`base.variant`) that replaces what
CMSIS-NN's kernel does differently (OpData, Prepare, scratch, refusals, access order, `access`).
Builds with `kernels == "cmsis-nn"` take their rules from `KERNELS` (`registry.LIBRARIES`)."""

from __future__ import annotations

from arenalens.builds.build import CMSIS_NN
from arenalens.runtimes.tflm.kernels.base import library_kernels

# Every generic Register_* of TFLM's kernels/cmsis_nn/ (add.cc, conv.cc, ...); a CMSIS-NN build
# keeps the reference kernel for every other operator.
_REPLACES = (
    "ADD", "AVERAGE_POOL_2D", "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
    "MAXIMUM", "MAX_POOL_2D", "MINIMUM", "MUL", "PAD", "PADV2", "SOFTMAX", "SVDF", "TRANSPOSE",
    "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM",
)  # fmt: skip

# Each module of this package and the operators its `RULES` has a variant for (`families`).
KERNELS = library_kernels(
    CMSIS_NN,
    "CMSIS-NN",
    _REPLACES,
    __name__,
    {
        "conv": ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"),
        "elementwise": ("ADD", "MUL", "PAD", "PADV2", "MAXIMUM", "MINIMUM", "TRANSPOSE"),
        "fully_connected": ("FULLY_CONNECTED", "BATCH_MATMUL"),
        "pooling": ("AVERAGE_POOL_2D", "MAX_POOL_2D"),
        "recurrent": ("SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"),
        "softmax": ("SOFTMAX",),
    },
)

__all__ = ["KERNELS"]
