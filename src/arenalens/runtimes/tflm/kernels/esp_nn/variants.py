"""What every ESP-NN rule states the same way: `esp_nn_kernel` makes one."""

from __future__ import annotations

from typing import Any

from arenalens.builds.build import ESP_NN
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.esp_nn.access import INT8_NOT_TRACED


def esp_nn_kernel(
    reference: base.KernelRule,
    file: str,
    node_data: Struct | None = None,
    prepare: base.RuleFunction | None = None,
) -> base.KernelRule:
    """ESP-NN's kernel for `reference`'s operator, from esp-tflite-micro's kernels/esp_nn/`file`:
    a variant of the reference rule whose int8 path is esp-nn's (`INT8_NOT_TRACED`, every one of
    them). A kernel with its own state allocates it in Init as one persistent `NodeData`
    (`node_data`: the reference OpData plus esp-nn's fields, e.g. esp_nn/conv.cc `Init` →
    `AllocatePersistentBuffer(context, sizeof(NodeData))`); one without keeps the reference Init,
    and Prepare unless `prepare`."""
    changes: dict[str, Any] = {}
    if node_data is not None:
        changes["init"] = op_data(node_data, "NodeData")
    if prepare is not None:
        changes["prepare"] = prepare
    return base.variant(
        reference, library=ESP_NN, source=f"esp_nn/{file}", access=INT8_NOT_TRACED, **changes
    )
