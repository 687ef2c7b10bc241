"""ESP-NN softmax: SOFTMAX → its setup allocations and refusals on each esp-nn chip path.

Sources: espressif/esp-tflite-micro v1.3.8 tensorflow/lite/micro/kernels/esp_nn/softmax.cc.
Against the reference kernel (softmax_common.cc `SoftmaxPrepare`, whose steps it copies): OpData
is `NodeData { SoftmaxParams op_data; int buffer_idx; }`, and after `CalculateSoftmaxParams`
(whatever it returned) an int8 input with an int8 output requests esp-nn's scratch for one row
of `input->dims->data[1]` elements: the input's second axis, whatever its rank
(`esp_nn_get_softmax_scratch_size(width = dims[1], height = dims[2])`).

For a 1-D input `dims->data[1]` lies past the shape: the kernel reads whatever the model file
holds after the shape vector. arenalens does not read those bytes, so its figure there is an
estimate (the rule says so); every model a converter writes has a rank of 2 or more here.
"""

from __future__ import annotations

from arenalens.builds.build import ESP_NN
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import softmax as reference_softmax
from arenalens.runtimes.tflm.kernels.base import (
    Estimate,
    Events,
    KernelContext,
    rule_table,
    variant,
)
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.esp_nn import buffers
from arenalens.runtimes.tflm.kernels.esp_nn.access import INT8_NOT_TRACED
from arenalens.runtimes.tflm.kernels.esp_nn.scratch import with_scratch

NODE_DATA_SOFTMAX = struct(
    "NodeData", ("op_data", reference_softmax.SOFTMAX_OP_DATA), ("buffer_idx", "int")
)
_REFERENCE = rule_table(*reference_softmax.RULES)


def _softmax(context: KernelContext) -> Events:
    # SoftmaxPrepare's steps; then, for int8 in and out, esp-nn's scratch for a row of
    # `input->dims->data[1]` elements.
    steps = _REFERENCE["SOFTMAX"].prepare(context)
    if context.input_type(0) != "INT8" or context.output_type(0) != "INT8":
        return steps
    library = buffers.esp_nn_of(context.build)
    source = context.input(0)
    shape = () if source is None else source.shape
    if len(shape) < 2:
        return [
            *steps,
            Estimate(
                "ESP-NN SOFTMAX on a 1-D input sizes its scratch from the 4 bytes after the "
                "shape in the model file (input->dims->data[1]): not read, counted as none",
                0,
            ),
        ]
    width = shape[1]
    return with_scratch(
        steps, lambda: buffers.softmax_scratch_bytes(library, width), "esp-nn softmax row"
    )


RULES = (
    variant(
        _REFERENCE["SOFTMAX"],
        library=ESP_NN,
        source="esp_nn/softmax.cc",
        init=op_data(NODE_DATA_SOFTMAX, "NodeData"),
        prepare=_softmax,
        access=INT8_NOT_TRACED,
    ),
)
