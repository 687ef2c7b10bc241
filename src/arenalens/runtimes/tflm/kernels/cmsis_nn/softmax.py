"""CMSIS-NN softmax: SOFTMAX → its setup allocations and refusals (the same on every path).

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/softmax.cc with softmax_common.cc
`CalculateSoftmaxParams` / `InitializeLutForInt16`. Against the reference kernel: only the OpData
(`CMSISNNSoftmaxParams` adds two int32 to SoftmaxParams); no scratch on any path.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import softmax as reference_softmax
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import int8_paths, reads_no_later
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import scale_of, type_of, zero_point_of
from arenalens.runtimes.tflm.kernels.refusals import UNSUPPORTED_INPUT, not_equal, not_true
from arenalens.runtimes.tflm.kernels.softmax import SOFTMAX_OP_DATA

CMSIS_SOFTMAX_OP_DATA = struct(
    "CMSISNNSoftmaxParams",
    ("softmax_params", SOFTMAX_OP_DATA),
    ("num_rows", "int32"),
    ("row_size", "int32"),
)
# softmax_common.cc: kInt16LUTArraySize int16 entries per lookup table.
LUT_ENTRIES = 513

_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/softmax.cc"
_COMMON_FILE = "tensorflow/lite/micro/kernels/softmax_common.cc"


def _near(value: float, target: float, tolerance: float) -> bool:
    return abs(value - target) <= tolerance


def _softmax(context: base.KernelContext) -> base.Events:
    # Prepare: one input and output; int16 input: two lookup tables; the parameter checks of
    # CalculateSoftmaxParams (its failure is returned at the end of Prepare).
    inputs, outputs = len(context.operator.inputs), len(context.operator.outputs)
    if inputs != 1:
        return [not_equal(_FILE, "NumInputs(node)", "1", inputs, 1)]
    if outputs != 1:
        return [not_equal(_FILE, "NumOutputs(node)", "1", outputs, 1)]
    source, output = context.input(0), context.output(0)
    found: list[base.Event] = base.temps(context, ("in", 0))
    if source is None or not source.shape:
        return [*found, not_true(_FILE, "NumDimensions(input) >= 1")]
    found += base.temps(context, ("out", 0))
    kinds = (type_of(source), type_of(output))
    if kinds[0] != kinds[1] and kinds != ("INT8", "INT16"):
        return [*found, base.Refusal("Input and output data types are not supported together.")]
    if kinds[0] not in ("FLOAT32", "INT16", "INT8"):
        return [*found, base.Refusal(UNSUPPORTED_INPUT)]
    if kinds[0] == "INT16":
        found += [
            base.Persistent(2 * LUT_ENTRIES, "softmax exp lookup table", written=base.OverTemps()),
            base.Persistent(
                2 * LUT_ENTRIES, "softmax 1/(1+x) lookup table", written=base.OverTemps()
            ),
        ]
    return found + _parameter_checks(context)


def _parameter_checks(context: base.KernelContext) -> list[base.Event]:
    """CalculateSoftmaxParams: the output quantization each int type pair demands, then the int8
    input multiplier (PreprocessSoftmaxScaling, as the reference kernel)."""
    source, output = context.input(0), context.output(0)
    kinds = (type_of(source), type_of(output))
    out_zero, out_scale = zero_point_of(output), scale_of(output)
    if kinds == ("INT16", "INT16"):
        for name, tensor in (("input", source), ("output", output)):
            if zero_point_of(tensor) != 0:
                return [
                    not_equal(
                        _COMMON_FILE, f"{name}->params.zero_point", "0", zero_point_of(tensor), 0
                    )
                ]
        if not _near(out_scale, 1 / 32768, 0.001 / 32768):
            return [base.Refusal(f"{_COMMON_FILE} output->params.scale not near 1.f / 32768")]
    elif kinds == ("INT8", "INT16"):
        if out_zero != -32768:
            return [
                not_equal(_COMMON_FILE, "output->params.zero_point", "-32768", out_zero, -32768)
            ]
        if not _near(out_scale, 1 / 65536, 0.001 / 65536):
            return [base.Refusal(f"{_COMMON_FILE} output->params.scale not near 1.f / 65536")]
    elif kinds == ("INT8", "INT8"):
        if out_zero != -128:
            return [not_equal(_COMMON_FILE, "output->params.zero_point", "-128", out_zero, -128)]
        if out_scale != 1 / 256:
            return [not_true(_COMMON_FILE, "output->params.scale == 1.f / 256")]
    if kinds[0] == "INT8":
        refused = reference_softmax.int8_input_multiplier(
            context, reference_softmax.SOFTMAX_DIFF_INTEGER_BITS
        )
        return [refused] if refused else []
    return []


# arm_softmax_s8 (arm_nn_softmax_common_s8) reads a row whole before it writes it: the
# reference distance holds.
_SOFTMAX_INT8 = reads_no_later(
    reference_softmax.SOFTMAX_ACCESS, "arm_softmax_s8.c, arm_nn_softmax_common_s8.c"
)

RULES = (
    cmsis_nn_kernel(
        base.rule_table(*reference_softmax.RULES)["SOFTMAX"],
        "cmsis_nn/softmax.cc, softmax_common.cc",
        int8_paths(lambda view: _SOFTMAX_INT8),
        CMSIS_SOFTMAX_OP_DATA,
        _softmax,
    ),
)
