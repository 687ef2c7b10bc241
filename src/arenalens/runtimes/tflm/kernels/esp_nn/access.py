"""ESP-NN kernels' access order: esp-tflite-micro's kernels/esp_nn/ call esp-nn for int8 only.

Read from espressif/esp-tflite-micro v1.3.8 kernels/esp_nn/*.cc `Eval`: float, int16 and int32
(and int8 with int4 weights or broadcast operands) run TFLM's reference loops, the int8 paths
esp-nn's functions (`esp_nn_conv_s8`, `esp_nn_add_elementwise_s8`, ...), which differ per chip
(S3 and P4 assembly, the generic C) and were not traced: no overlap for an int8 input under this
library. Elsewhere the reference kernel's order holds (`overlap.overlap_distance` takes the
larger of the reference and the library distance, so an ESP-NN plan is safe on both).
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import AccessByPath, AccessOrder, KernelContext, NoOverlap

ESP_NN_SOURCES = "espressif/esp-tflite-micro v1.3.8 kernels/esp_nn/, espressif/esp-nn"


def _choose(view: KernelContext) -> AccessOrder | NoOverlap | None:
    if view.input_type(0) == "INT8":
        return NoOverlap(f"ESP-NN: esp-nn's int8 loops not analysed ({ESP_NN_SOURCES})")
    return None  # the reference kernel's loops


# Every ESP-NN kernel: the int8 path untraced, the others the reference kernel's.
INT8_NOT_TRACED = AccessByPath(_choose)
