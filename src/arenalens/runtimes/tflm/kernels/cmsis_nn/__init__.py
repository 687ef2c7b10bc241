"""CMSIS-NN kernel rules (TFLM `kernels/cmsis_nn/`): the operators whose CMSIS-NN kernel allocates
or refuses differently from the reference kernel, on each of CMSIS-NN's code paths (`buffers`).
Builds with `kernels == "cmsis-nn"` look here first; the other CMSIS-NN kernels (MUL, PAD, PADV2,
MAXIMUM, MINIMUM, TRANSPOSE) behave like the reference ones and use their rules."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import KernelRule
from arenalens.runtimes.tflm.kernels.cmsis_nn import (
    conv,
    elementwise,
    fully_connected,
    pooling,
    recurrent,
    softmax,
)

RULES: tuple[KernelRule, ...] = (
    *conv.RULES,
    *elementwise.RULES,
    *fully_connected.RULES,
    *pooling.RULES,
    *recurrent.RULES,
    *softmax.RULES,
)
