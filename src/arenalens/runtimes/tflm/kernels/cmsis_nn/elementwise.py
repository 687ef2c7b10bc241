"""CMSIS-NN elementwise kernels: ADD, MUL, PAD, PADV2, MAXIMUM, MINIMUM, TRANSPOSE → variants of the
reference kernels' rules: the same setup (ADD with CMSIS-NN's own Prepare checks), CMSIS-NN's
access order.

Sources (tflite-micro tensorflow/lite/micro/kernels/cmsis_nn/): add.cc (its own Init and Prepare:
the reference `OpDataAdd` layout, the same three temp tensors), mul.cc, pad.cc,
maximum_minimum.cc, transpose.cc. CMSIS-NN's MUL, PAD, PADV2 and TRANSPOSE register the reference
kernels' Init and Prepare (`MulInit`/`MulPrepare`, `PadInit`/`PadPrepare`, `TransposePrepare`) and
MAXIMUM / MINIMUM have none: on every code path they allocate and refuse exactly as the reference
kernels do. ADD refuses in Prepare what the reference kernel refuses only at Invoke (int64) or
not at all (mixed input types, int16 zero points).
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.kernels import arithmetic as reference_arithmetic
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import elementwise as reference_elementwise
from arenalens.runtimes.tflm.kernels import layout as reference_layout
from arenalens.runtimes.tflm.kernels import shape as reference_shape
from arenalens.runtimes.tflm.kernels.cmsis_nn import traces
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import (
    NOT_ANALYSED,
    int8_only,
    int8_paths,
    reads_no_later,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import type_of
from arenalens.runtimes.tflm.kernels.refusals import (
    HYBRID,
    UNSUPPORTED_INPUT,
    int16_zero_points,
    not_equal,
    type_number,
)

_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/add.cc"


def _add_refusals(
    first: Tensor | None, second: Tensor | None, output: Tensor | None
) -> list[base.Event]:
    """PrepareAdd's checks before CalculateOpData: types, then int16 zero points."""
    kind = type_of(first)
    if kind != type_of(output):
        return [
            not_equal(
                _FILE, "input1->type", "output->type", type_number(first), type_number(output)
            )
        ]
    if kind not in ("FLOAT32", "INT32", "INT16", "INT8"):
        return [base.Refusal(UNSUPPORTED_INPUT)]
    if kind != type_of(second):
        return [base.Refusal(HYBRID)]
    if kind == "INT16":
        return list(
            int16_zero_points(_FILE, ("input1", first), ("input2", second), ("output", output))
        )
    return []


def _add(context: base.KernelContext) -> base.Events:
    # PrepareAdd: input1, input2, output; CMSIS-NN's checks; then what the reference
    # AddPrepare does (CalculateOpData fills OpData only), with the operands fetched once.
    tensors = (context.input(0), context.input(1), context.output(0))
    refused = _add_refusals(*tensors)
    if refused:
        return base.temp_tensors(*tensors) + refused
    return reference_arithmetic.add_prepare(context, tensors)


_REFERENCE = base.rule_table(
    *reference_arithmetic.RULES,
    *reference_elementwise.RULES,
    *reference_layout.RULES,
    *reference_shape.RULES,
)
# arm_elementwise_add_s8 and arm_elementwise_mul_s8 read 4 (or 16) elements before they write
# them: the reference distance holds. With broadcast TFLM calls the reference kernels.
_ADD_MUL_SOURCES = "arm_elementwise_add_s8.c, arm_elementwise_mul_s8.c (broadcast: reference)"
_ADD_INT8 = reads_no_later(_REFERENCE["ADD"].access, _ADD_MUL_SOURCES)
_MUL_INT8 = reads_no_later(_REFERENCE["MUL"].access, _ADD_MUL_SOURCES)

# arm_pad_s8 (int8; TFLM passes shape and paddings as 4-D): in output order, pad values by memset,
# input rows (a pixel's channels when the channels are padded) by memcpy. Other types run the
# reference Pad.
_PAD_INT8 = base.AccessOrder(
    "CMSIS-NN: output order, rows copied whole", "arm_pad_s8.c", (0,), traces.pad_distance
)
# arm_transpose_s8 (int8, at most 4 axes): in input order, each element to its place (MVE
# gathers 8 of a column, then stores them). Other types run the reference Transpose.
_TRANSPOSE_INT8 = base.AccessOrder(
    "CMSIS-NN: input order, each element to its place",
    "arm_transpose_s8.c",
    (0,),
    traces.transpose_distance,
)

# CMSIS-NN's MUL, PAD, PADV2 and TRANSPOSE register the reference kernels' Init and Prepare
# (`MulInit`/`MulPrepare`, `PadInit`/`PadPrepare`, `TransposePrepare`), MAXIMUM / MINIMUM have
# none: their setup is the reference kernels'; their Eval is CMSIS-NN's.
_PAD_SOURCE = "cmsis_nn/pad.cc, pad_common.cc"
_MAXIMUM_MINIMUM_SOURCE = "cmsis_nn/maximum_minimum.cc"

RULES = (
    cmsis_nn_kernel(
        _REFERENCE["ADD"],
        "cmsis_nn/add.cc, add_common.cc",
        int8_paths(lambda view: _ADD_INT8),
        prepare=_add,
    ),
    cmsis_nn_kernel(
        _REFERENCE["MUL"], "cmsis_nn/mul.cc, mul_common.cc", int8_paths(lambda view: _MUL_INT8)
    ),
    cmsis_nn_kernel(_REFERENCE["PAD"], _PAD_SOURCE, int8_only(lambda view: _PAD_INT8)),
    # Register_PADV2 runs PadEval, which sends int8 to arm_pad_s8 as PAD does.
    cmsis_nn_kernel(_REFERENCE["PADV2"], _PAD_SOURCE, int8_only(lambda view: _PAD_INT8)),
    cmsis_nn_kernel(_REFERENCE["MAXIMUM"], _MAXIMUM_MINIMUM_SOURCE, NOT_ANALYSED),
    cmsis_nn_kernel(_REFERENCE["MINIMUM"], _MAXIMUM_MINIMUM_SOURCE, NOT_ANALYSED),
    cmsis_nn_kernel(
        _REFERENCE["TRANSPOSE"],
        "cmsis_nn/transpose.cc, transpose_common.cc",
        int8_only(lambda view: _TRANSPOSE_INT8),
    ),
)
