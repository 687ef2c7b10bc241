"""Activation kernels: RELU, RELU6, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import Fixed, KernelRule
from arenalens.runtimes.tflm.kernels.common import op_data

RULES = (
    KernelRule(
        "HARD_SWISH", "hard_swish.cc, hard_swish_common.cc", None, op_data(20), derived=False
    ),
    KernelRule(
        "LEAKY_RELU",
        "leaky_relu.cc, leaky_relu_common.cc",
        Fixed(4, 4),
        op_data(24),
        derived=False,
    ),
    KernelRule("LOGISTIC", "logistic.cc, logistic_common.cc", None, op_data(16), derived=False),
    KernelRule("RELU", "activations.cc, activations_common.cc", None, op_data(28), derived=False),
    KernelRule("RELU6", "activations.cc, activations_common.cc", None, op_data(8), derived=False),
    KernelRule("TANH", "tanh.cc", None, op_data(16), derived=False),
)
