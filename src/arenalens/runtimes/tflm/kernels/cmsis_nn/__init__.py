"""CMSIS-NN kernel rules (TFLM `kernels/cmsis_nn/`): the operators whose CMSIS-NN kernel allocates
differently from the reference kernel. Builds with `kernels == "cmsis-nn"` look here first."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import KernelRule

RULES: tuple[KernelRule, ...] = ()
