"""ESP-NN kernel rules (Espressif's esp-tflite-micro `kernels/esp_nn/`), on each of esp-nn's chip
paths and releases (`buffers`): every rule a variant of the reference kernel's (`base.variant`)
that replaces what the ESP-NN kernel does differently (OpData, Prepare's checks, esp-nn's scratch,
access order). Builds with `kernels == "esp-nn"` take their rules from `KERNELS`
(`registry.LIBRARIES`). docs/esp-nn.md has the sources.
"""

from __future__ import annotations

from arenalens.builds.build import ESP_NN
from arenalens.runtimes.tflm.kernels.base import library_kernels

# esp-tflite-micro's CMakeLists.txt removes these kernels' files from TFLM's and compiles
# kernels/esp_nn/ (pooling.cc registers both pools); every other operator keeps TFLM's kernel.
_REPLACES = (
    "ADD", "AVERAGE_POOL_2D", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D",
    "MUL", "SOFTMAX",
)  # fmt: skip

# Each module of this package and the operators its `RULES` has a variant for (`families`).
KERNELS = library_kernels(
    ESP_NN,
    "ESP-NN",
    _REPLACES,
    __name__,
    {
        "conv": ("CONV_2D", "DEPTHWISE_CONV_2D"),
        "eval_only": ("ADD", "MUL", "AVERAGE_POOL_2D", "MAX_POOL_2D", "FULLY_CONNECTED"),
        "softmax": ("SOFTMAX",),
    },
)

__all__ = ["KERNELS"]
