"""LiteRT convolutions: node → temporaries and allocation types (2-D, depthwise, transpose, 3-D,
3-D transpose)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, tensor_type_name

# An operator option the planner never reads from a file: the interpreter's thread count, set
# by heap_threads.threaded_view where conv.cc's kernel is kMultithreadOptimized (x86-64, armv7).
THREADS_OPTION = "_interpreter_threads"


def conv_2d(ctx: NodeContext) -> None:
    """*conv.cc — Prepare, AllocateTemporaryTensorsIfRequired* (kGenericOptimized / multithread
    kernel with one thread: im2col whenever the kernel is not a plain 1×1, stride-1 conv).

    With more than one thread (`THREADS_OPTION`) kMultithreadOptimized's
    `supports_multithreaded_kernel` holds for a float filter that is not hybrid, undilated and
    not ArenaRw or Dynamic (a constant, or a DEQUANTIZE's persistent output): a float input
    then needs `hwcn_weights` (the filter transposed to [taps × input channels, output
    channels], kTfLiteArenaRwPersistent) and no im2col (IsIm2ColRequired)."""
    filter_shape = ctx.dims(1)
    output = ctx.output()
    input_type = ctx.dtype(0)
    filter_type = ctx.dtype(1)
    if len(filter_shape) != 4 or output is None or not output.shape:
        return
    stride = (ctx.options.get("stride_h", 1), ctx.options.get("stride_w", 1))
    dilation = (ctx.options.get("dilation_hfactor", 1), ctx.options.get("dilation_wfactor", 1))
    hybrid = input_type == "FLOAT32" and filter_type in ("INT8", "UINT8", "INT4")
    input_shape = ctx.dims(0)
    groups = input_shape[3] // filter_shape[3] if len(input_shape) == 4 and filter_shape[3] else 1
    # The per-channel hybrid path (input offsets, persistent row sums): distinct scales, or,
    # on the 2.3.0 wheel, any grouped filter, equal scales included (measured: its grouped
    # equal-scale filters get both temporaries, its ungrouped ones do not; a grouped filter
    # with one scale fails the per-channel scale-count check, see rules.py).
    per_channel = (
        hybrid and filter_type in ("INT8", "INT4") and (groups > 1 or has_distinct_scales(ctx, 1))
    )
    needs_im2col = dilation != (1, 1) or stride != (1, 1) or filter_shape[1:3] != (1, 1)
    weights = ctx.input(1)
    hwcn = (
        ctx.options.get(THREADS_OPTION, 1) != 1
        and input_type == "FLOAT32"
        and not hybrid
        and dilation == (1, 1)
        and weights is not None
        and weights.allocation not in (Allocation.ARENA_RW, Allocation.DYNAMIC)
    )
    needs_im2col = needs_im2col and not hwcn
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
    if hwcn:
        index = ctx.reserve("hwcn_weights", 1)
        ctx.set_temporary(
            slot,
            index,
            dtype=input_type,
            shape=(filter_shape[1] * filter_shape[2] * filter_shape[3], filter_shape[0]),
            allocation=Allocation.ARENA_RW_PERSISTENT,
            role="hwcn_weights",
        )
        slot += 1
    if not hybrid:
        return
    channels_out = filter_shape[0]
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
    """*transpose_conv.cc — Prepare, AllocateTemporaryTensorsIfRequired* (kGenericOptimized).

    Temporaries, in this order: col2im and transposed weights (always), scratch (uint8 / int8 /
    int16 inputs), then input_quantized, scaling_factors and input_offsets (float input, int8
    weights: the only ones in the arena). col2im, transposed weights and scratch are Dynamic:
    heap memory, sized in Prepare when what they depend on is a constant of the model.
    """
    input_type, weights_type = ctx.dtype(2), ctx.dtype(1)
    if len(ctx.dims(2)) != 4 or len(ctx.dims(1)) != 4:
        raise ValueError("TRANSPOSE_CONV needs a 4-D input and 4-D weights")
    # IsConstantTensor: MmapRo only. An output shape folded in Prepare (PersistentRo) still
    # defers the resize to Eval, unlike the kernels that accept IsConstantOrPersistentTensor.
    output_shape = ctx.constant_ints(0) if ctx.is_constant(0) else None
    if output_shape is not None and len(output_shape) != 4:
        raise ValueError("TRANSPOSE_CONV's output shape must have 4 elements")
    if output_shape is None:
        ctx.set_dynamic_output()
    else:
        ctx.resize_output(0, output_shape)
    _transpose_conv_col2im(ctx, slot=0, constant_shape=output_shape is not None)
    _transpose_conv_weights(ctx, slot=1)
    slot = 2
    if input_type in ("UINT8", "INT8", "INT16"):
        scratch = ctx.reserve("scratch", 1)
        ctx.set_temporary(
            slot,
            scratch,
            dtype=_transpose_conv_scratch_type(ctx, input_type),
            shape=output_shape,  # ResizeTensor(output_shape) only when it is a constant
            allocation=Allocation.DYNAMIC,
            role="scratch",
        )
        slot += 1
    if input_type == "FLOAT32" and weights_type == "INT8":
        input_shape = ctx.dims(2)
        elements = 1
        for dim in input_shape:
            elements *= dim
        rows = elements // ctx.dims(1)[3]  # one scaling factor per input row of Cin values
        for role, dtype, shape in (
            ("input_quantized", "INT8", input_shape),
            ("scaling_factors", "FLOAT32", (rows,)),
            ("input_offsets", "INT32", (rows,)),
        ):
            index = ctx.reserve(role, 1)
            ctx.set_temporary(
                slot, index, dtype=dtype, shape=shape, allocation=Allocation.ARENA_RW, role=role
            )
            slot += 1


def _transpose_conv_col2im(ctx: NodeContext, *, slot: int, constant_shape: bool) -> None:
    """*ResizeCol2ImTensor*: `[H·W of the input, Cout·kh·kw]`, float for float inputs, else
    int32; left untyped and unsized (SetTensorToDynamic) when the output shape is not constant."""
    index = ctx.reserve("col2im", 1)
    if not constant_shape:
        ctx.set_temporary(
            slot, index, dtype="NOTYPE", shape=None, allocation=Allocation.DYNAMIC, role="col2im"
        )
        return
    input_shape, weights_shape = ctx.dims(2), ctx.dims(1)
    ctx.set_temporary(
        slot,
        index,
        dtype="FLOAT32" if ctx.dtype(2) == "FLOAT32" else "INT32",
        shape=(
            input_shape[1] * input_shape[2],
            weights_shape[0] * weights_shape[1] * weights_shape[2],
        ),
        allocation=Allocation.DYNAMIC,
        role="col2im",
    )


def _transpose_conv_weights(ctx: NodeContext, *, slot: int) -> None:
    """*ResizeAndTransposeWeights*: OHWI → HWOI copy of constant weights; weights that are not
    MmapRo (a graph input, a DEQUANTIZE output) leave it untyped and unsized until Eval."""
    index = ctx.reserve("transposed_weights", 1)
    if not ctx.is_constant(1):
        ctx.set_temporary(
            slot,
            index,
            dtype="NOTYPE",
            shape=None,
            allocation=Allocation.DYNAMIC,
            role="transposed_weights",
        )
        return
    out_channels, height, width, in_channels = ctx.dims(1)
    ctx.set_temporary(
        slot,
        index,
        dtype=ctx.dtype(1),
        shape=(height, width, out_channels, in_channels),
        allocation=Allocation.DYNAMIC,
        role="transposed_weights",
    )


def _transpose_conv_scratch_type(ctx: NodeContext, input_type: str) -> str:
    """The accumulator type: int16 inputs take `quantized_bias_type` when the options set it
    (Prepare accepts only INT32 / INT64 there), else int64; uint8 / int8 always int32."""
    if input_type != "INT16":
        return "INT32"
    return tensor_type_name(ctx.options.get("quantized_bias_type", 0)) or "INT64"


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


def conv_3d_transpose(ctx: NodeContext) -> None:
    """*conv3d_transpose.cc — Prepare* (float only): the optimized kernel's one temporary,
    col2im `[D·H·W of the input, kd·kh·kw·Cout]` float32, Dynamic (heap); a dilated conv falls
    back to the reference kernel and has none. The output takes the output_shape values; one
    that is neither constant nor folded makes it (and col2im, left untyped) Dynamic."""
    input_shape, filter_shape = ctx.dims(2), ctx.dims(1)
    if len(input_shape) != 5 or len(filter_shape) != 5:
        raise ValueError("CONV_3D_TRANSPOSE needs a 5-D input and a 5-D filter")
    options = ctx.options
    dilated = any(
        options.get(name, 1) > 1
        for name in ("dilation_dfactor", "dilation_hfactor", "dilation_wfactor")
    )
    col2im = None if dilated else ctx.reserve("col2im", 1)
    if not ctx.is_constant_or_persistent(0):
        ctx.set_dynamic_output()
        if col2im is not None:
            ctx.set_temporary(
                0, col2im, dtype="NOTYPE", shape=None, allocation=Allocation.DYNAMIC, role="col2im"
            )
        return
    output_shape = ctx.constant_ints(0)
    if output_shape is not None:
        ctx.resize_output(0, output_shape)
    if col2im is not None:
        rows = input_shape[1] * input_shape[2] * input_shape[3]
        columns = filter_shape[0] * filter_shape[1] * filter_shape[2] * filter_shape[3]
        ctx.set_temporary(
            0,
            col2im,
            dtype="FLOAT32",
            shape=(rows, columns),
            allocation=Allocation.DYNAMIC,
            role="col2im",
        )
