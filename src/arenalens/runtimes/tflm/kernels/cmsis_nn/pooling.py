"""CMSIS-NN pooling kernels: AVERAGE_POOL_2D, MAX_POOL_2D → their setup allocations and refusals
on each CMSIS-NN code path.

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/pooling.cc with pooling_common.cc
`PoolingPrepare`. Against the reference kernels: OpData is 4 bytes larger (a scratch index), the
average pool fetches its input and output twice (four temp tensors) and, on the DSP path only,
requests an int32 accumulator per channel.
"""

from __future__ import annotations

import numpy as np

from arenalens.builds.build import CMSIS_NN
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import Trace, checked, too_large, window_lowest_reads
from arenalens.runtimes.tflm.kernels import pooling as reference_pooling
from arenalens.runtimes.tflm.kernels.base import (
    AccessOrder,
    Event,
    Events,
    KernelContext,
    Refusal,
    Scratch,
    rule_table,
    temps,
    variant,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import int8_paths, reads_no_later
from arenalens.runtimes.tflm.kernels.common import op_data, scale_of, type_of, zero_point_of
from arenalens.runtimes.tflm.kernels.pooling import pool_window
from arenalens.runtimes.tflm.kernels.refusals import not_true, type_number

# cmsis_nn/pooling.cc: OpData, around the reference kernels' (pooling.h).
CMSIS_OP_DATA_POOLING = struct(
    "OpData", ("reference_op_data", reference_pooling.OP_DATA_POOLING), ("buffer_idx", "int")
)

_COMMON_FILE = "tensorflow/lite/micro/kernels/pooling_common.cc"


def _pooling_prepare(context: KernelContext) -> list[Event]:
    """PoolingPrepare: input and output; int8/int16 need equal scales and zero points."""
    source, output = context.input(0), context.output(0)
    found: list[Event] = temps(context, ("in", 0), ("out", 0))
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
        return [*found, Refusal(f"Type {dtype} ({type_number(source)}) not supported.")]
    return found


def _max_pool(context: KernelContext) -> Events:
    return _pooling_prepare(context)


def _average_pool(context: KernelContext) -> Events:
    # AveragePrepare: PoolingPrepare, then input and output again; int8/int16: the CMSIS-NN
    # buffer (DSP: 4·channels).
    found = _pooling_prepare(context)
    if any(isinstance(event, Refusal) for event in found):
        return found
    found += temps(context, ("in", 0), ("out", 0))
    source = context.input(0)
    if type_of(source) in ("INT8", "INT16"):
        channels = source.shape[3] if source is not None and len(source.shape) == 4 else 0
        nbytes = buffers.avgpool(context.build.isa, channels)
        if nbytes > 0:
            found.append(Scratch(nbytes, "CMSIS-NN average pool accumulators"))
    return found


def _max_pool_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_max_pool_s8: per output pixel a chunk (written, then its window compared into it)."""
    source, target = view.input(0), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    if len(source.shape) != 4 or len(target.shape) != 4:
        return None
    pixels = window_lowest_reads(source.shape, target.shape, pool_window(view), 1)
    channels = target.shape[3]
    writes = (np.arange(len(pixels), dtype=np.int64) + 1) * channels - 1
    return checked(Trace(writes, pixels, reads_may_follow_write=True), source.nbytes)


# arm_max_pool_s8 copies the window's first pixel into the output, then compares the rest: the
# output pixel is written before its window is read (a chunk).
_MAX_POOL_INT8 = AccessOrder(
    "CMSIS-NN: pixel written, then its window compared in",
    "arm_max_pool_s8.c",
    (0,),
    _max_pool_distance,
)
# arm_avgpool_s8 reads a pixel's window before it writes the pixel: the reference distance holds.
_AVERAGE_POOL_INT8 = reads_no_later(reference_pooling.POOL_ACCESS, "arm_avgpool_s8.c")
_REFERENCE = rule_table(*reference_pooling.RULES)

RULES = (
    variant(
        _REFERENCE["AVERAGE_POOL_2D"],
        library=CMSIS_NN,
        source="cmsis_nn/pooling.cc, pooling_common.cc",
        init=op_data(CMSIS_OP_DATA_POOLING),
        prepare=_average_pool,
        access=int8_paths(lambda view: _AVERAGE_POOL_INT8),
    ),
    variant(
        _REFERENCE["MAX_POOL_2D"],
        library=CMSIS_NN,
        source="cmsis_nn/pooling.cc, pooling_common.cc",
        init=op_data(CMSIS_OP_DATA_POOLING),
        prepare=_max_pool,
        access=int8_paths(lambda view: _MAX_POOL_INT8),
    ),
)
