"""ESP-NN softmax: SOFTMAX → its setup allocations and refusals on each esp-nn chip path.

Sources: espressif/esp-tflite-micro v1.3.8 tensorflow/lite/micro/kernels/esp_nn/softmax.cc.
Against the reference kernel (softmax_common.cc `SoftmaxPrepare`, whose steps it copies): OpData
is `NodeData { SoftmaxParams op_data; int buffer_idx; }`, and after `CalculateSoftmaxParams`
(whatever it returned) an int8 input with an int8 output requests esp-nn's scratch for one row
of `input->dims->data[1]` elements: the input's second axis, whatever its rank
(`esp_nn_get_softmax_scratch_size(width = dims[1], height = dims[2])`).

For a 1-D input `dims->data[1]` lies past the shape: TFLM points dims at the shape vector in the
model file, so the kernel reads the four bytes the file holds after it, and so does this rule
(`reader.read_dims_entry`). That holds while the dims are the file's: a graph input's, or an
output whose kernel did not rewrite them in Prepare (RESHAPE and the like copy them into the tail,
where the next bytes are whatever memory held); for a produced tensor the figure is therefore
marked an estimate. Converters write softmax inputs of rank 2 or more.
"""

from __future__ import annotations

from arenalens.ir import TensorKind
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import softmax as reference_softmax
from arenalens.runtimes.tflm.kernels.esp_nn import buffers
from arenalens.runtimes.tflm.kernels.esp_nn.scratch import with_scratch
from arenalens.runtimes.tflm.kernels.esp_nn.variants import esp_nn_kernel
from arenalens.tflite.reader import read_dims_entry

NODE_DATA_SOFTMAX = struct(
    "NodeData", ("op_data", reference_softmax.SOFTMAX_OP_DATA), ("buffer_idx", "int")
)
_REFERENCE = base.rule_table(*reference_softmax.RULES)


def _softmax(context: base.KernelContext) -> base.Events:
    # SoftmaxPrepare's steps; then, for int8 in and out, esp-nn's scratch for a row of
    # `input->dims->data[1]` elements.
    steps = _REFERENCE["SOFTMAX"].prepare(context)
    if context.input_type(0) != "INT8" or context.output_type(0) != "INT8":
        return steps
    library = buffers.esp_nn_of(context.build)
    source = context.input(0)
    if source is None or len(source.shape) >= 2:
        width = 0 if source is None else source.shape[1]
        return with_scratch(
            steps, lambda: buffers.softmax_scratch_bytes(library, width), "esp-nn softmax row"
        )
    # A 1-D input (a 0-D one failed NumDimensions >= 1): dims->data[1] is the file's next word.
    past = read_dims_entry(context.model, context.subgraph.index, source.index, 1)
    found = with_scratch(
        steps,
        lambda: buffers.softmax_scratch_bytes(library, past or 0),
        "esp-nn softmax row (width read past the shape)",
    )
    if past is not None and source.kind in (TensorKind.INPUT, TensorKind.CONSTANT):
        return found
    return [
        *found,
        base.Estimate(
            "ESP-NN SOFTMAX on a 1-D input sizes its scratch from dims->data[1], past the "
            "shape: read from the model file, but an earlier kernel that rewrote the tensor's "
            "dims in Prepare would have left other bytes there",
            0,
        ),
    ]


RULES = (esp_nn_kernel(_REFERENCE["SOFTMAX"], "softmax.cc", NODE_DATA_SOFTMAX, _softmax),)
