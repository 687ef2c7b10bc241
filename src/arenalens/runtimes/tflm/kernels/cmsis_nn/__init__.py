"""CMSIS-NN kernel rules (TFLM `kernels/cmsis_nn/`), on each of CMSIS-NN's code paths
(`buffers`): `RULES` for the kernels whose memory CMSIS-NN decides, `rules_from_reference` for
those that reuse the reference kernels' Init and Prepare (ADD adds its own checks). Builds with
`kernels == "cmsis-nn"` look here first (`registry`)."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import KernelRule
from arenalens.runtimes.tflm.kernels.cmsis_nn import (
    conv,
    fully_connected,
    pooling,
    recurrent,
    softmax,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn.elementwise import rules_from_reference

RULES: tuple[KernelRule, ...] = (
    *conv.RULES,
    *fully_connected.RULES,
    *pooling.RULES,
    *recurrent.RULES,
    *softmax.RULES,
)

__all__ = ["RULES", "rules_from_reference"]
