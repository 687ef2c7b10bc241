"""CMSIS-NN pooling kernels: AVERAGE_POOL_2D, MAX_POOL_2D → their setup allocations and refusals
on each CMSIS-NN code path.

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/pooling.cc with pooling_common.cc
`PoolingPrepare`. Against the reference kernels: OpData is 4 bytes larger (a scratch index), the
average pool fetches its input and output twice (four temp tensors) and, on the DSP path only,
requests an int32 accumulator per channel.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import pooling as reference_pooling
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers, traces
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import int8_paths
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import scale_of, type_of, zero_point_of
from arenalens.runtimes.tflm.kernels.refusals import not_true, type_number

# cmsis_nn/pooling.cc: OpData, around the reference kernels' (pooling.h).
CMSIS_OP_DATA_POOLING = struct(
    "OpData", ("reference_op_data", reference_pooling.OP_DATA_POOLING), ("buffer_idx", "int")
)

_COMMON_FILE = "tensorflow/lite/micro/kernels/pooling_common.cc"


def _pooling_prepare(context: base.KernelContext) -> list[base.Event]:
    """PoolingPrepare: input and output; int8/int16 need equal scales and zero points."""
    source, output = context.input(0), context.output(0)
    found: list[base.Event] = base.temps(context, ("in", 0), ("out", 0))
    dtype = type_of(source)
    if dtype in ("INT8", "INT16"):
        if abs(scale_of(source) - scale_of(output)) > 1.0e-6:
            return [*found, not_true(_COMMON_FILE, "scale_diff <= 1.0e-6")]
        if zero_point_of(source) != zero_point_of(output):
            return [
                *found,
                not_true(_COMMON_FILE, "input->params.zero_point == output->params.zero_point"),
            ]
    elif dtype != "FLOAT32":
        return [*found, base.Refusal(f"Type {dtype} ({type_number(source)}) not supported.")]
    return found


def _max_pool(context: base.KernelContext) -> base.Events:
    return _pooling_prepare(context)


def _average_pool(context: base.KernelContext) -> base.Events:
    # AveragePrepare: PoolingPrepare, then input and output again; int8/int16: the CMSIS-NN
    # buffer (DSP: 4·channels).
    found = _pooling_prepare(context)
    if any(isinstance(event, base.Refusal) for event in found):
        return found
    found += base.temps(context, ("in", 0), ("out", 0))
    source = context.input(0)
    if type_of(source) in ("INT8", "INT16"):
        channels = source.shape[3] if source is not None and len(source.shape) == 4 else 0
        nbytes = buffers.avgpool(context.build.isa, channels)
        if nbytes > 0:
            found.append(base.Scratch(nbytes, "CMSIS-NN average pool accumulators"))
    return found


# arm_max_pool_s8 copies the window's first pixel into the output pixel, then compares the rest
# of the window into it: the output pixel is written before most of its window is read.
_MAX_POOL_INT8 = base.AccessOrder(
    "CMSIS-NN: first window pixel copied, the rest compared in",
    "arm_max_pool_s8.c",
    (0,),
    traces.maxpool_distance,
)
# arm_avgpool_s8 reads a pixel's window for 16 channels (MVE), all of them (DSP: an int32
# accumulator per channel) or one (pure C) before it writes them.
_AVERAGE_POOL_INT8 = base.AccessOrder(
    "CMSIS-NN: per code path (window for 16, all or 1 channel, then written)",
    "arm_avgpool_s8.c",
    (0,),
    traces.avgpool_distance,
)
_REFERENCE = base.rule_table(*reference_pooling.RULES)

_SOURCE = "cmsis_nn/pooling.cc, pooling_common.cc"

RULES = (
    cmsis_nn_kernel(
        _REFERENCE["AVERAGE_POOL_2D"],
        _SOURCE,
        int8_paths(lambda view: _AVERAGE_POOL_INT8),
        CMSIS_OP_DATA_POOLING,
        _average_pool,
    ),
    cmsis_nn_kernel(
        _REFERENCE["MAX_POOL_2D"],
        _SOURCE,
        int8_paths(lambda view: _MAX_POOL_INT8),
        CMSIS_OP_DATA_POOLING,
        _max_pool,
    ),
)
