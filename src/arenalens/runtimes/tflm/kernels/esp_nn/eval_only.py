"""ESP-NN kernels that change only Eval: ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, FULLY_CONNECTED.

Sources: espressif/esp-tflite-micro v1.3.8 tensorflow/lite/micro/kernels/esp_nn/add.cc, mul.cc,
pooling.cc, fully_connected.cc: their Init allocates the reference kernel's OpData and their
Prepare is the reference kernel's (`AddPrepare`, `MulPrepare`, `PoolingPrepare`; the copy of
`FullyConnectedPrepare` in fully_connected.cc leaves out only the `USE_TFLM_COMPRESSION` scratch,
which esp-tflite-micro does not build). Only Eval calls esp-nn, for int8.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels import arithmetic as reference_arithmetic
from arenalens.runtimes.tflm.kernels import fully_connected as reference_fully_connected
from arenalens.runtimes.tflm.kernels import pooling as reference_pooling
from arenalens.runtimes.tflm.kernels.base import KernelRule, rule_table
from arenalens.runtimes.tflm.kernels.esp_nn.variants import esp_nn_kernel

_REFERENCE = rule_table(
    *reference_arithmetic.RULES, *reference_fully_connected.RULES, *reference_pooling.RULES
)


def _eval_only(opcode: str, file: str) -> KernelRule:
    return esp_nn_kernel(_REFERENCE[opcode], file)


RULES = (
    _eval_only("ADD", "add.cc"),
    _eval_only("MUL", "mul.cc"),
    _eval_only("AVERAGE_POOL_2D", "pooling.cc"),
    _eval_only("MAX_POOL_2D", "pooling.cc"),
    _eval_only("FULLY_CONNECTED", "fully_connected.cc"),
)
