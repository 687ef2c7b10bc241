"""XNNPACK's own heap after setup, the parts heap.py adds under the delegate: the weights it
repacks per output-channel tile (xnnpack_packing), the indirection buffers of spatial
convolutions and pooling windows, its workspace (xnnpack_workspace) and its runtime and
operator objects (xnnpack_objects), each exact where every delegated operator is modelled and
an upper bound (labelled) where not (*src/operators/convolution-nhwc.c, src/packing.c,
src/runtime.c, src/memory-planner.c*; *tflite/delegates/xnnpack/xnnpack_delegate.cc*)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import (
    glibc,
    heap_xnnpack,
    xnnpack_attention,
    xnnpack_objects,
    xnnpack_packing,
    xnnpack_subgraphs,
    xnnpack_workspace,
)
from arenalens.runtimes.litert.heap_part import MMAPPED_NOTE, HeapPart
from arenalens.runtimes.litert.isa import HOST, IsaProfile, largest_request

# XNNPACK's first run: its threadpool and per-call scratch (an upper bound).
XNNPACK_FIXED_BYTES = 40_000
# The delegate object, its workspace handle, the CPU back end's context it asks for and
# cpuinfo's tables (tflite/delegates/xnnpack/xnnpack_delegate.cc: Delegate::Delegate): 3,760 B
# on the wheel's trace, counted with room.
XNNPACK_DELEGATE_BYTES = 4_096
# The widest output-channel tile an x86-64 microkernel packs to (AVX-512: 64 for qs8
# depthwise; GEMMs 16 or 32), and the row tile of its GEMMs (indirection rows padded to it).
XNNPACK_CHANNEL_TILE = 64
XNNPACK_ROW_TILE = 16
XNNPACK_DWCONV_PRIMARY_TILE = 25  # the widest unipass depthwise tile (5×5)
POINTER_BYTES = 8
ALIGNMENT = 64  # xnn_allocate_simd_memory's (XNN_ALLOCATION_ALIGNMENT)

GEMM_OPERATORS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")


ALIGNED_TAIL_BYTES = glibc.MINIMUM_CHUNK_BYTES


def xnnpack_parts(
    model: Model,
    arenas: int,
    isa: IsaProfile = HOST,
    threads: int = 1,
    *,
    first_workspace: int | None = None,
) -> tuple[HeapPart, ...]:
    """XNNPACK's own heap after setup (heap_xnnpack): packed weights, indirection buffers,
    workspace and runtime objects, exact where every delegated operator is modelled. On
    `isa`, packing is counted for each configuration its CPUs may select, the largest taken.
    `first_workspace`: subgraph 0's plans' request where the first invoke prepares some of its
    kernels (heap_xnnpack_reshape.setup_workspace; None: all of them)."""
    view = heap_xnnpack.delegated_view(model)
    modelled, prepared = view is not None, xnnpack_subgraphs.prepared(view)
    packed = indirection = workspace = 0
    packed_exact = indirection_exact = modelled
    # Parts holding a block glibc's mmap threshold decides (glibc.threshold_decides).
    decided: set[str] = set()
    replayed = xnnpack_objects.delegate_objects(model)
    objects = XNNPACK_DELEGATE_BYTES if replayed is None else replayed.total
    # The operators' aligned blocks' tails (glibc.aligned_usable's 32 B): an allowance.
    tails = 0 if replayed is None else ALIGNED_TAIL_BYTES * replayed.aligned
    for subgraph in model.subgraphs:
        split = heap_xnnpack.partition(subgraph, model)
        if replayed is None:
            objects += heap_xnnpack.objects_bound(subgraph, split)
        if split.unmodelled:
            # Operators the delegate may take, not modelled: taken, with the old bound's room.
            objects += XNNPACK_FIXED_BYTES + heap_xnnpack.objects_bound(
                subgraph, heap_xnnpack.unmodelled_only(subgraph, split)
            )
        modelled = modelled and not split.unmodelled
        taken = set(xnnpack_workspace.runtime_operators(subgraph, split.delegated, model))
        reshaped = taken if subgraph.index in prepared or view is None else set()  # at Prepare
        for operator in subgraph.operators:
            if operator.opcode in xnnpack_packing.POOLING and operator.index in taken:
                # A pooling window's indirection buffer (malloc'd, as glibc hands it out).
                window = xnnpack_packing.pooling_indirection(subgraph, operator)
                if operator.index in reshaped:
                    indirection += glibc.usable(window)
                    _note_decided(decided, "indirection", window)
                continue
            if operator.opcode == "BATCH_MATMUL" and operator.index in taken:
                packing = partial(xnnpack_packing.packed_weights_request, subgraph, operator)
                constant_b = isa.largest_bound(packing)  # a constant B packed to the GEMM's tiles
                packed += xnnpack_packing.aligned_block(constant_b)
                _note_decided(decided, "packed", constant_b, ALIGNMENT)
                objects += isa.gemm_operator_extra_bytes  # a GEMM-based operator's tables
                continue
            if operator.index in taken and xnnpack_attention.replayed(subgraph, operator):
                objects += 2 * isa.gemm_operator_extra_bytes  # its products' GEMM operators
            if operator.opcode not in GEMM_OPERATORS or len(operator.inputs) < 2:
                continue
            if operator.index not in taken and not (
                operator.opcode in split.unmodelled and _delegable(subgraph, operator.inputs)
            ):
                continue
            # Packing follows the operator whether or not the partition around it is modelled.
            request = largest_request(xnnpack_packing.packing_of(model), subgraph, operator, isa)
            weights, weights_exact = _request_or_bound(
                request, _bounded_weights, subgraph, operator
            )
            weights_exact = weights_exact and operator.index in taken
            _note_decided(decided, "packed", request or 0, ALIGNMENT)
            if operator.index in taken:
                objects += isa.gemm_operator_extra_bytes
            request = largest_request(xnnpack_packing.indirection_request, subgraph, operator, isa)
            if operator.opcode == "TRANSPOSE_CONV" and operator.index in taken and request:
                # Its indirection buffer is malloc'd (xnn_reallocate_memory), not aligned.
                if operator.index in reshaped:
                    indirection += glibc.usable(request)
                    _note_decided(decided, "indirection", request)
                packed += weights
                packed_exact = packed_exact and weights_exact
                continue
            buffer, buffer_exact = _request_or_bound(
                request if operator.index in taken else None,
                _bounded_indirection,
                subgraph,
                operator,
            )
            packed += weights
            if operator.index not in taken - reshaped:
                indirection += buffer
                _note_decided(decided, "indirection", request or 0, ALIGNMENT)
            packed_exact = packed_exact and weights_exact
            indirection_exact = indirection_exact and buffer_exact
        if subgraph.index in prepared or not modelled:  # else never reshaped: no workspace
            request = _workspace_of(model, subgraph, split.delegated, isa, threads)
            if subgraph.index == 0 and first_workspace is not None:
                request = first_workspace  # its later kernels plan theirs at the first invoke
            workspace = max(workspace, request)
    packed_exact = packed_exact and modelled
    indirection_exact = indirection_exact and modelled
    workspace_exact = modelled and not xnnpack_workspace.rows_estimate(model, isa)
    _note_decided(decided, "workspace", workspace if modelled else 0, ALIGNMENT)
    return (
        _part(
            "XNNPACK packed weights",
            packed,
            packed_exact,
            "weights and biases repacked per output-channel tile of the selected "
            f"microkernel ({isa.tiles_name}; the model's own copy stays in the file)",
            "packed" in decided,
        ),
        _part(
            "XNNPACK indirection buffers",
            indirection,
            indirection_exact,
            "one pointer per output pixel per kernel tap for spatial convolutions (rows rounded to "
            "the GEMM's tile), a depthwise one's window: made at reshape, in prepared subgraphs",
            "indirection" in decided,
        ),
        _part(
            "XNNPACK workspace",
            xnnpack_packing.aligned_block(workspace) if modelled else arenas,
            workspace_exact,
            "XNNPACK's memory planner packs the values internal to each delegated partition "
            "and its operators' own workspaces (a hybrid GEMM's packed input, a run-time "
            "matrix packed for a BATCH_MATMUL) into one workspace (the largest partition's "
            "plan plus 32 B)"
            + ("" if modelled else "; counted at the builtin arena's size, which it never exceeds")
            + xnnpack_workspace.rows_estimate(model, isa),
            "workspace" in decided,
        ),
        HeapPart(
            "XNNPACK runtime and operator objects",
            objects - tails,
            "setup",
            replayed is not None and replayed.exact,
            (
                "the delegate and its contexts, each delegate kernel's node, maps and "
                "vectors, each XNNPACK runtime's operator data and values, each operator's "
                "object, context and zero or indirection buffers: replayed block by block "
                "from the delegate's and XNNPACK's sources (xnnpack_objects)"
                if replayed is not None and replayed.exact
                else "the delegate, its runtimes' value and operator arrays, each operator's "
                "object and parameters, the delegate kernels' nodes: an upper bound per "
                "runtime, operator and value (an operator kind or a node clean-up that is "
                "not replayed; a variable of 8-bit unsigned values: which of its operators "
                "the delegate takes is not modelled)"
            ),
        ),
        HeapPart(
            "SIMD-aligned blocks' placement",
            tails,
            "setup",
            False,
            "XNNPACK's operator objects and their aligned state are 64-aligned blocks "
            "(posix_memalign): glibc gives a block's spare tail back only when it exceeds 32 "
            "bytes, so each holds 0, 16 or 32 bytes more than its chunk as the heap's layout "
            "decides; 32 per block keeps the figure from falling under",
            allowance=True,
        ),
    )


def _workspace_of(
    model: Model, subgraph: Subgraph, delegated: Sequence[int], isa: IsaProfile, threads: int
) -> int:
    """One subgraph's plans' largest workspace request over the ISA's configurations."""
    workspace_of = partial(xnnpack_workspace.workspace_request, subgraph, delegated)
    return isa.largest_bound(partial(workspace_of, model, threads))


def workspace_request(
    model: Model, isa: IsaProfile = HOST, threads: int = 1, first_workspace: int | None = None
) -> int:
    """The delegate's shared workspace request after setup (`xnnpack_parts`' workspace, where
    the partition is modelled): the largest plan of the subgraphs allocate_tensors() prepares
    (`first_workspace`: subgraph 0's, where the first invoke prepares some of its kernels)."""
    prepared = xnnpack_subgraphs.prepared(heap_xnnpack.delegated_view(model))
    requests = [
        first_workspace
        if index == 0 and first_workspace is not None
        else _workspace_of(
            model, subgraph, heap_xnnpack.partition(subgraph, model).delegated, isa, threads
        )
        for index, subgraph in enumerate(model.subgraphs)
        if index in prepared
    ]
    return max(requests, default=0)


def _note_decided(decided: set[str], part: str, request: int, alignment: int = 0) -> None:
    """Mark `part` as holding a block glibc's mmap threshold decides (glibc.threshold_decides:
    counted mmapped, as glibc.usable / aligned_usable count it)."""
    if glibc.threshold_decides(request, alignment):
        decided.add(part)


def _part(name: str, nbytes: int, exact: bool, meaning: str, decided: bool) -> HeapPart:
    """A setup part, a bound that says why where a block of it is one glibc's mmap threshold
    decides (its bytes replayed: HeapPart.mmapped)."""
    return HeapPart(
        name,
        nbytes,
        "setup",
        exact and not decided,
        meaning + (MMAPPED_NOTE if decided and exact else ""),
        mmapped=exact and decided,
    )


def _request_or_bound(
    request: int | None,
    bound: Callable[[Subgraph, Operator], int],
    subgraph: Subgraph,
    operator: Operator,
) -> tuple[int, bool]:
    """A modelled request as the 64-aligned block glibc gives (exact), else the bound."""
    if request is None:
        return bound(subgraph, operator), False
    return xnnpack_packing.aligned_block(request), True


def _bounded_weights(subgraph: Subgraph, operator: Operator) -> int:
    """An operator whose packing is not modelled (a hybrid convolution's weights): every
    channel padded to the widest tile, with a bias and a scale per channel."""
    weights = subgraph.tensors[operator.inputs[1]]
    return glibc.aligned_usable(64, _padded_weights(weights) + 64)


def _bounded_indirection(subgraph: Subgraph, operator: Operator) -> int:
    if operator.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D") or not operator.outputs:
        return 0
    weights = subgraph.tensors[operator.inputs[1]]
    output = subgraph.tensors[operator.outputs[0]]
    if len(output.shape) != 4 or len(weights.shape) != 4:
        return 0
    size = _indirection_bytes(operator, weights.shape, output.shape)
    return glibc.aligned_usable(64, size) if size else 0


def _output_channels(weights: Tensor) -> int:
    """Output channels: the last dim of a depthwise filter [1, kh, kw, C], else the first."""
    if len(weights.shape) == 4 and weights.shape[0] == 1:
        return weights.shape[-1]
    return weights.shape[0] if weights.shape else 1


def _depth(weights: Tensor) -> int:
    return _elements(weights.shape) // max(_output_channels(weights), 1)


def _padded_weights(weights: Tensor, *, tile: int = XNNPACK_CHANNEL_TILE) -> int:
    """Weights with output channels padded to a tile, 4 B per float element and 1 B per 8-bit
    one, plus an int32 bias and a float scale per channel."""
    if not weights.shape:
        return 0
    channels = _output_channels(weights)
    depth = _depth(weights)
    tiled = -(-channels // tile) * tile
    element = 4 if weights.dtype.name == "FLOAT32" else 1
    return tiled * (depth * element + 8)


def _indirection_bytes(
    operator: Operator, weights_shape: Sequence[int], output_shape: Sequence[int]
) -> int:
    """XNNPACK's indirection buffer for one convolution (*src/operators/convolution-nhwc.c*,
    reshape): IGEMM takes one pointer per kernel tap per output pixel, pixels rounded up to
    the microkernel's rows (at most 16 on x86-64: counted as 15 more); a 1×1 convolution of
    stride 1 runs as a GEMM, with none. A depthwise convolution takes
    `primary_tile − taps + output_height × step_height` pointers, step_height = taps +
    (output_width − 1) × step_width × kernel_height, step_width = the stride (the kernel
    width when dilated); the primary tile is counted as max(taps, 25), the widest unipass
    tile. Per image, counted for every image of the batch (errs high). A depthwise
    convolution with a depth multiplier over 1 is a grouped convolution there: IGEMM."""
    batch, height, width = output_shape[0], output_shape[1], output_shape[2]
    kernel_height, kernel_width = weights_shape[1], weights_shape[2]
    taps = kernel_height * kernel_width
    options = operator.options
    stride_w, stride_h = int(options.get("stride_w", 1) or 1), int(options.get("stride_h", 1) or 1)
    dilated = any(
        int(options.get(key, 1) or 1) != 1
        for key in (
            "dilation_wfactor",
            "dilation_hfactor",
            "dilation_w_factor",
            "dilation_h_factor",
        )
    )
    # XNNPACK runs a depthwise convolution as one only with one output channel per group
    # (depth multiplier 1); otherwise it is a grouped convolution through IGEMM.
    multiplier = int(options.get("depth_multiplier", 1) or 1)
    if operator.opcode == "DEPTHWISE_CONV_2D" and multiplier == 1:
        step_width = kernel_width if dilated else stride_w
        step_height = taps + (width - 1) * step_width * kernel_height
        pointers = max(taps, XNNPACK_DWCONV_PRIMARY_TILE) - taps + height * step_height
        return max(batch, 1) * pointers * POINTER_BYTES
    if taps == 1 and stride_w == 1 and stride_h == 1:
        return 0
    pixels = max(batch, 1) * height * width
    return (pixels + XNNPACK_ROW_TILE - 1) * taps * POINTER_BYTES


def _delegable(subgraph: Subgraph, inputs: Sequence[int]) -> bool:
    """XNNPACK takes float32 and 8-bit operators with constant weights (hybrid ones aside)."""
    live = [subgraph.tensors[i] for i in inputs if i >= 0]
    if not live:
        return False
    data = live[0].dtype.name
    return data in ("FLOAT32", "INT8", "UINT8")


def _elements(shape: Sequence[int]) -> int:
    count = 1
    for dim in shape:
        count *= max(dim, 0)
    return count
