"""LiteRT convolutions: node → temporaries and allocation types (2-D, depthwise, transpose, 3-D)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, tensor_type_name


def conv_2d(ctx: NodeContext) -> None:
    """*conv.cc — Prepare, AllocateTemporaryTensorsIfRequired* (kGenericOptimized / multithread
    kernel with one thread: im2col whenever the kernel is not a plain 1×1, stride-1 conv)."""
    filter_shape = ctx.dims(1)
    output = ctx.output()
    input_type = ctx.dtype(0)
    filter_type = ctx.dtype(1)
    if len(filter_shape) != 4 or output is None or not output.shape:
        return
    stride = (ctx.options.get("stride_h", 1), ctx.options.get("stride_w", 1))
    dilation = (ctx.options.get("dilation_hfactor", 1), ctx.options.get("dilation_wfactor", 1))
    hybrid = input_type == "FLOAT32" and filter_type in ("INT8", "UINT8", "INT4")
    per_channel = hybrid and filter_type in ("INT8", "INT4") and has_distinct_scales(ctx, 1)
    needs_im2col = dilation != (1, 1) or stride != (1, 1) or filter_shape[1:3] != (1, 1)
    slot = 0
    batches, out_height, out_width = ctx.dims(0)[0], output.shape[1], output.shape[2]
    if needs_im2col:
        index = ctx.reserve("im2col", 1)
        im2col_type = ("INT8" if filter_type == "INT4" else filter_type) if hybrid else input_type
        depth = filter_shape[1] * filter_shape[2] * filter_shape[3]
        ctx.set_temporary(
            slot,
            index,
            dtype=im2col_type,
            shape=(batches, out_height, out_width, depth),
            allocation=Allocation.ARENA_RW,
            role="im2col",
        )
        slot += 1
    if not hybrid:
        return
    input_shape = ctx.dims(0)
    channels_out = filter_shape[0]
    groups = input_shape[3] // filter_shape[3] if filter_shape[3] else 1
    input_rows = input_shape[0] * input_shape[1] * input_shape[2] * groups
    roles: list[tuple[str, str, tuple[int, ...], Allocation]] = [
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (input_rows,), Allocation.ARENA_RW),
        (
            "accumulator",
            "INT32",
            (channels_out, batches * out_height * out_width),
            Allocation.ARENA_RW,
        ),
    ]
    if per_channel:
        roles.append(("input_offsets", "INT32", (input_rows,), Allocation.ARENA_RW))
        roles.append(("row_sums", "INT32", (channels_out,), Allocation.ARENA_RW_PERSISTENT))
    for role, dtype, shape, allocation in roles:
        index = ctx.reserve(role, 1)
        ctx.set_temporary(slot, index, dtype=dtype, shape=shape, allocation=allocation, role=role)
        slot += 1


def has_distinct_scales(ctx: NodeContext, slot: int) -> bool:
    """True when the input's per-channel quantization scales are not all equal."""
    tensor = ctx.input(slot)
    if tensor is None or tensor.quantization_scales <= 1:
        return False
    scales = ctx.graph.scales(ctx.inputs[slot])
    return len(set(scales)) > 1


def depthwise_conv_2d(ctx: NodeContext) -> None:
    """*depthwise_conv.cc — Prepare*: hybrid (float input, int8 filter) adds three temporaries."""
    if not (ctx.dtype(0) == "FLOAT32" and ctx.dtype(1) == "INT8"):
        return
    input_shape = ctx.dims(0)
    batch = input_shape[0] if input_shape else 1
    roles = (
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batch,), Allocation.ARENA_RW),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        index = ctx.reserve(role, 1)
        ctx.set_temporary(slot, index, dtype=dtype, shape=shape, allocation=allocation, role=role)


def transpose_conv(ctx: NodeContext) -> None:
    """*transpose_conv.cc — Prepare, AllocateTemporaryTensorsIfRequired*: col2im, transposed
    weights and (quantized inputs) the int32/int64 scratch are all Dynamic (heap); hybrid adds
    three arena temporaries. A non-constant output shape makes the output Dynamic too."""
    input_type = ctx.dtype(2)
    weights_type = ctx.dtype(1)
    output = ctx.output()
    slot = 0
    col2im = ctx.reserve("col2im", 1)
    constant_shape = ctx.is_constant_or_persistent(0)
    input_shape = ctx.dims(2)
    weights_shape = ctx.dims(1)
    if constant_shape and len(input_shape) == 4 and len(weights_shape) == 4:
        rows = input_shape[1] * input_shape[2]
        columns = weights_shape[0] * weights_shape[1] * weights_shape[2]
        ctx.set_temporary(
            slot,
            col2im,
            dtype="FLOAT32" if input_type == "FLOAT32" else "INT32",
            shape=(rows, columns),
            allocation=Allocation.DYNAMIC,
            role="col2im",
        )
    else:
        ctx.set_temporary(
            slot, col2im, dtype="NOTYPE", shape=None, allocation=Allocation.DYNAMIC, role="col2im"
        )
    slot += 1
    transposed = ctx.reserve("transposed_weights", 1)
    if len(weights_shape) == 4:
        shape: tuple[int, ...] = (
            weights_shape[1],
            weights_shape[2],
            weights_shape[0],
            weights_shape[3],
        )
        ctx.set_temporary(
            slot,
            transposed,
            dtype=weights_type,
            shape=shape,
            allocation=Allocation.DYNAMIC,
            role="transposed_weights",
        )
    slot += 1
    if input_type in ("UINT8", "INT8", "INT16"):
        # Always Dynamic (heap), sized like the output when the output shape is constant.
        scratch = ctx.reserve("scratch", 1)
        bias_type = tensor_type_name(ctx.options.get("quantized_bias_type", 0))
        scratch_type = bias_type or ("INT64" if input_type == "INT16" else "INT32")
        shape_known = constant_shape and output is not None and output.shape
        ctx.set_temporary(
            slot,
            scratch,
            dtype=scratch_type,
            shape=output.shape if shape_known and output is not None else None,
            allocation=Allocation.DYNAMIC,
            role="scratch",
        )
        slot += 1
    if input_type == "FLOAT32" and weights_type == "INT8":
        elements = 1
        for dim in input_shape:
            elements *= dim
        rows = elements // weights_shape[3] if len(weights_shape) == 4 and weights_shape[3] else 0
        for role, dtype, shape_ in (
            ("input_quantized", "INT8", input_shape),
            ("scaling_factors", "FLOAT32", (rows,)),
            ("input_offsets", "INT32", (rows,)),
        ):
            index = ctx.reserve(role, 1)
            ctx.set_temporary(
                slot, index, dtype=dtype, shape=shape_, allocation=Allocation.ARENA_RW, role=role
            )
            slot += 1
    if not constant_shape:
        ctx.set_dynamic_output()


def conv_3d(ctx: NodeContext) -> None:
    """*conv3d.cc — Prepare*: im2col `[N, od, oh, ow, Cin·kd·kh·kw]` unless a plain 1×1×1,
    stride-1, undilated conv."""
    filter_shape = ctx.dims(1)  # [kd, kh, kw, Cin, Cout]
    output = ctx.output()
    if len(filter_shape) != 5 or output is None or not output.shape or len(output.shape) != 5:
        return
    options = ctx.options
    strides = (options.get("stride_d", 1), options.get("stride_h", 1), options.get("stride_w", 1))
    dilations = (
        options.get("dilation_dfactor", 1),
        options.get("dilation_hfactor", 1),
        options.get("dilation_wfactor", 1),
    )
    if strides == (1, 1, 1) and dilations == (1, 1, 1) and filter_shape[:3] == (1, 1, 1):
        return
    index = ctx.reserve("im2col", 1)
    depth = filter_shape[0] * filter_shape[1] * filter_shape[2] * filter_shape[3]
    shape = (*output.shape[:4], depth)
    ctx.set_temporary(
        0, index, dtype=ctx.dtype(0), shape=shape, allocation=Allocation.ARENA_RW, role="im2col"
    )
