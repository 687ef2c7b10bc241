"""ESP-NN kernel rules (esp-tflite-micro's `kernels/esp_nn/`), on each of esp-nn's chip paths
and releases (`buffers`): every rule a variant of the reference kernel's (`base.variant`).
Builds with `kernels == "esp-nn"` take their rules from `KERNELS` (`registry.LIBRARIES`)."""

from __future__ import annotations

from types import MappingProxyType

from arenalens.runtimes.tflm.kernels.base import OptimizedKernels, rule_table
from arenalens.runtimes.tflm.kernels.esp_nn import kernels

# esp-tflite-micro's CMakeLists.txt removes these kernels' files and compiles kernels/esp_nn/.
_REPLACES = (
    "ADD", "AVERAGE_POOL_2D", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D",
    "MUL", "SOFTMAX",
)  # fmt: skip

KERNELS = OptimizedKernels(
    name=kernels.ESP_NN,
    title="ESP-NN",
    replaces=frozenset(_REPLACES),
    rules=MappingProxyType(rule_table(*kernels.RULES)),
)

__all__ = ["KERNELS"]
