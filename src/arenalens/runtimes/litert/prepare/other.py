"""LiteRT kernels with one-off rules: ADD_N, DEQUANTIZE, DENSIFY, RESHAPE, BROADCAST_ARGS,
RFFT2D, DILATE, VAR_HANDLE, READ_VARIABLE, TFLite_Detection_PostProcess, NumericVerify."""

from __future__ import annotations

import math

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, PrepareStatus
from arenalens.tflite.custom_options import custom_options


def add_n(ctx: NodeContext) -> None:
    """*add_n.cc — Prepare*: scratch `[threads · elements]` of the input type (one thread)."""
    first = ctx.op_data["scratch"]
    elements = 1
    for dim in ctx.dims(0):
        elements *= dim
    ctx.set_temporary(
        0,
        first,
        dtype=ctx.dtype(0),
        shape=(elements,),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )


def dequantize(ctx: NodeContext) -> None:
    """*dequantize.cc — Prepare*: a constant input is dequantized once into a persistent output."""
    output = ctx.output()
    if output is not None and ctx.is_constant(0):
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def densify(ctx: NodeContext) -> None:
    """*densify.cc — Prepare*: the output always lives in the persistent arena."""
    output = ctx.output()
    if output is not None:
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def reshape(ctx: NodeContext) -> PrepareStatus:
    """*reshape.cc — Prepare*: constant input → PersistentRo output; a non-constant shape
    tensor → kTfLiteOutputShapeNotKnown (the chunk ends; the output keeps the input's bytes)."""
    output = ctx.output()
    source = ctx.input(0)
    if output is None or source is None or output.dtype == "STRING":
        return PrepareStatus.OK
    shape_tensor = ctx.input(1)
    shape_is_vector = (
        shape_tensor is not None
        and shape_tensor.shape is not None
        and len(shape_tensor.shape) == 1
        and shape_tensor.dtype == "INT32"
    )
    if len(ctx.inputs) == 2 and shape_is_vector and not ctx.is_constant_or_persistent(1):
        if output.allocation == Allocation.ARENA_RW:
            output.nbytes_override = source.nbytes
        return PrepareStatus.OUTPUT_SHAPE_NOT_KNOWN
    if ctx.is_constant_or_persistent(0):
        ctx.set_persistent_ro_output()
    return PrepareStatus.OK


def broadcast_args(ctx: NodeContext) -> None:
    """*broadcast_args.cc — Prepare*: the output is resized to `[max(len(s1), len(s2))]`; with
    both shapes constant or folded it is computed here, in PersistentRo heap memory (never
    planned); otherwise it stays a planned ArenaRw tensor with a static shape."""
    first, second = ctx.dims(0), ctx.dims(1)
    if len(first) != 1 or len(second) != 1:
        raise ValueError("BROADCAST_ARGS needs two 1-D shapes")
    ctx.resize_output(0, (max(first[0], second[0]),))
    if ctx.is_constant_or_persistent(0) and ctx.is_constant_or_persistent(1):
        ctx.set_persistent_ro_output()


# TFLite_Detection_PostProcess: coordinates per box, and the batch its outputs are sized for.
_BOX_COORDINATES = 4
_DETECTION_BATCH = 1


def detection_postprocess(ctx: NodeContext) -> None:
    """*detection_postprocess.cc — Init, Prepare*: Init adds two tensors; Prepare makes them
    the node's temporaries, decoded boxes `[boxes, 4]` and scores `[boxes, classes + 1]`, both
    float32 in the arena, and resizes the four float32 outputs to `[1, N, 4]`, `[1, N]`,
    `[1, N]` and `[1]`, N = max_detections × max_classes_per_detection. Regular and fast NMS
    differ only at Eval (heap vectors), never in planned memory."""
    boxes, scores = ctx.dims(0), ctx.dims(1)
    if len(boxes) != 3 or len(scores) != 3 or len(ctx.dims(2)) != 2:
        raise ValueError("box encodings and class predictions must be 3-D, anchors 2-D")
    if len(ctx.outputs) != 4:
        raise ValueError("TFLite_Detection_PostProcess has four outputs")
    options = custom_options(
        ctx.graph.model, ctx.graph.subgraph.index, ctx.operator.position_in_file
    )
    found = options if isinstance(options, dict) else {}
    detections = _flex_int(found.get("max_detections")) * _flex_int(
        found.get("max_classes_per_detection")
    )
    for slot, shape in enumerate(
        (
            (_DETECTION_BATCH, detections, _BOX_COORDINATES),
            (_DETECTION_BATCH, detections),
            (_DETECTION_BATCH, detections),
            (1,),
        )
    ):
        ctx.resize_output(slot, shape, dtype="FLOAT32")
    first = ctx.op_data["scratch"]
    ctx.set_temporary(
        0,
        first,
        dtype="FLOAT32",
        shape=(boxes[1], _BOX_COORDINATES),
        allocation=Allocation.ARENA_RW,
        role="decoded_boxes",
    )
    ctx.set_temporary(
        1,
        first + 1,
        dtype="FLOAT32",
        shape=(scores[1], scores[2]),
        allocation=Allocation.ARENA_RW,
        role="scores",
    )


def _flex_int(value: object) -> int:
    """flexbuffers `AsInt32`: numbers convert (floats truncate), anything else — a missing
    key included — reads as 0."""
    return int(value) if isinstance(value, bool | int | float) else 0


def rfft2d(ctx: NodeContext) -> None:
    """*rfft2d.cc — Prepare, InitTemporaryTensors, ResizeOutputandTemporaryTensors*: four
    arena temporaries added in the first Prepare — int32 working area `[2 + ⌊√L⌋]`, int64
    working area `[L/2 + W/4]`, int64 row pointers `[H]`, int64 data `[H, W + 2]`, with
    `(H, W)` = fft_length and L = max(H, W/2) — and a complex64 output
    `[..., H, W/2 + 1]`. A non-constant fft_length makes all of them Dynamic."""
    input_shape = ctx.dims(0)
    if len(input_shape) < 2 or ctx.dims(1) != (2,):
        raise ValueError("RFFT2D needs an input of rank >= 2 and a 2-element fft_length")
    first = ctx.reserve("temporaries", 4)
    types = ("INT32", "INT64", "INT64", "INT64")
    roles = ("integer_working_area", "double_working_area", "input_output_rows", "input_output")
    output = ctx.output()
    if output is not None:
        output.dtype = "COMPLEX64"
    if not ctx.is_constant_or_persistent(1):
        _unsized_temporaries(ctx, first, types, roles, Allocation.DYNAMIC)
        ctx.set_dynamic_output()
        return
    fft_length = ctx.constant_ints(1)
    if fft_length is None:
        # Folded in Prepare (PersistentRo): its values are computed at run time, not read here.
        ctx.graph.note(
            f"node {ctx.position} RFFT2D: fft_length is computed in Prepare; its temporaries "
            f"are not sized here"
        )
        _unsized_temporaries(ctx, first, types, roles, Allocation.ARENA_RW)
        return
    height, width = fft_length
    working = max(height, width // 2)
    shapes = (
        (2 + math.isqrt(working),),
        (working // 2 + width // 4,),
        (height,),
        (height, width + 2),
    )
    for slot, (dtype, role, shape) in enumerate(zip(types, roles, shapes, strict=True)):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=Allocation.ARENA_RW, role=role
        )
    ctx.resize_output(0, (*input_shape[:-2], height, width // 2 + 1))


def _unsized_temporaries(
    ctx: NodeContext,
    first: int,
    types: tuple[str, ...],
    roles: tuple[str, ...],
    allocation: Allocation,
) -> None:
    """RFFT2D's temporaries, not sized in Prepare (shape unknown), with their allocation."""
    for slot, (dtype, role) in enumerate(zip(types, roles, strict=True)):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=None, allocation=allocation, role=role
        )


def numeric_verify(ctx: NodeContext) -> None:
    """*numeric_verify.cc — Prepare* (the NumericVerify debug op): one temporary, the
    dequantized input (float32, the input's shape) on the heap (Dynamic); the float32 output,
    the input's shape too, lives in the persistent arena."""
    index = ctx.reserve("dequantized", 1)
    shape = ctx.dims(0)
    ctx.set_temporary(
        0, index, dtype="FLOAT32", shape=shape, allocation=Allocation.DYNAMIC, role="dequantized"
    )
    output = ctx.output()
    if output is not None:
        ctx.resize_output(0, shape, dtype="FLOAT32")
        output.allocation = Allocation.ARENA_RW_PERSISTENT


# VAR_HANDLE's output holds one int32 resource id, whatever its shape says.
_RESOURCE_ID_NBYTES = 4


def var_handle(ctx: NodeContext) -> None:
    """*var_handle.cc — Prepare*: the resource handle becomes ArenaRwPersistent with 4 bytes
    (an int32 id), so each handle takes a 64-byte-aligned slot in the persistent arena."""
    output = ctx.output()
    if output is not None:
        output.allocation = Allocation.ARENA_RW_PERSISTENT
        output.nbytes_override = _RESOURCE_ID_NBYTES


def delegate_variables(ctx: NodeContext) -> None:
    """*xnnpack_delegate.cc — Subgraph::Prepare*: the XNNPACK delegate kernel runs
    PrepareVarHandle on every resource tensor among its inputs and outputs (the handles it
    took), so each is a 4-byte id in the persistent arena, as VAR_HANDLE's Prepare makes it."""
    for index in (*ctx.inputs, *ctx.outputs):
        tensor = ctx.graph.tensors[index] if index >= 0 else None
        if tensor is not None and tensor.dtype == "RESOURCE":
            tensor.allocation = Allocation.ARENA_RW_PERSISTENT
            tensor.nbytes_override = _RESOURCE_ID_NBYTES


def read_variable(ctx: NodeContext) -> None:
    """*read_variable.cc — Prepare*: an output of rank 0 (scalar or unranked: the kernel cannot
    tell) is made Dynamic and sized at Eval from the variable."""
    output = ctx.output()
    if output is not None and not output.shape:
        ctx.set_dynamic_output()


def dilate(ctx: NodeContext) -> None:
    """*dilate.cc — Prepare*: dilations that are not a model constant (IsConstantTensor: a
    folded PersistentRo one does not count) make the output Dynamic; constant ones size it,
    `(d − 1)·s + 1` per dimension."""
    if not ctx.is_constant(1):
        ctx.set_dynamic_output()
        return
    dilations = ctx.constant_ints(1)
    input_shape = ctx.dims(0)
    if dilations is not None and len(dilations) == len(input_shape):
        ctx.resize_output(
            0,
            tuple(
                (dim - 1) * step + 1 if dim else 0
                for dim, step in zip(input_shape, dilations, strict=True)
            ),
        )
