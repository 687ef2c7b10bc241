"""What LiteRT's builtin kernels allocate on the heap during the first `invoke()` (no delegate),
on the ai-edge-litert x86-64 wheel: the blocks they keep, and the most held at any moment.

The wheel runs 8-bit GEMMs through ruy and float GEMMs through Eigen
(*tflite/kernels/cpu_backend_gemm.h, cpu_backend_gemm_x86.h*); a matrix × vector product
(one output column) with at least 4 rows and 8 columns goes to the custom GEMV, which
allocates nothing (*cpu_backend_gemm_custom_gemv.h*). What follows is replayed operator by
operator in execution order:

* **CPU back end**: the first kernel that asks `CpuBackendContext::GetFromContext` creates the
  context, its ruy context and its gemmlowp context (kept).
* **ruy** (ruy_heap.py; *ruy/allocator.cc, prepare_packed_matrices.cc,
  create_trmul_params.h*): each 8-bit GEMM asks its main allocator, in order, for the
  per-channel buffers padded to the kernel's columns (bias, then fixed-point multipliers and
  exponents, only when the channel count is not a multiple of the kernel's), the packed LHS
  (weights: rows padded to the kernel's 16 columns, depth to 4, plus 1 KiB to avoid cache
  aliasing) and its int32 sums, the packed RHS (activations, the same) and its sums, each
  rounded to 64 B. What fits in the main buffer is bumped from it; what does not is a fallback
  block (`posix_memalign(64)`), its pointer pushed on a vector. After the call, `FreeAll`
  frees the main buffer, allocates one of the old size plus every fallback's, then frees the
  fallbacks: the buffer grows to the largest call's need and stays. The first call also
  creates the allocator and the thread tuning.
* **Eigen** (float GEMMs): its packed blocks go on the stack up to 128 KiB
  (`EIGEN_STACK_ALLOCATION_LIMIT`), on the heap above, freed after the call; their size
  follows Eigen's cache-size blocking heuristic (eigen_blocking: exact for given cache
  sizes; without them, bounded by the whole packed operand).
* **kernels' own transients**: the int8 depthwise convolution's unpacked-filter buffer
  (`make_unique<int8_t[]>(2 × filter bytes)`, even when the filter is not 4-bit), freed
  at the end of the call.
* **dynamic tensors** (sized at Eval): their dims and data blocks, kept.
* **the caller**: `measure.py` sets every input from a numpy array of zeros, allocated and
  freed around each `set_tensor`, what numpy's caches keep of it and of the inputs' details
  (heap_caller), and pybind11's blocks held through the invoke call.
* **the XNNPACK delegate's nodes** (with the delegate): each one's first Invoke builds the
  vector of its externals' pointers for `xnn_setup_runtime` and frees it (`_delegate_invoke`).

The ISA decides ruy's tiles: 16 columns × 4 depth on AVX-512 (this wheel on an AVX-512
machine); other ISAs' layouts are `isa.py`'s (arm64 NEON pads depth to 16, so an x86-64
figure can fall under an arm64 one).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

from arenalens.ir import Model
from arenalens.runtimes.litert import blockwise, eigen_blocking, four_bit, glibc, heap_caller
from arenalens.runtimes.litert.batch_matmul_rhs import rhs_copy_blocks
from arenalens.runtimes.litert.eigen_blocking import CacheSizes
from arenalens.runtimes.litert.heap_call_once import CALL_ONCE, InitSubgraph, call_once_eval
from arenalens.runtimes.litert.heap_control_flow import (
    CONTROL_FLOW_REPLAYED,
    NO_WAYS,
    Decomposition,
    Ways,
    composite_eval,
    control_flow_eval,
)
from arenalens.runtimes.litert.heap_interpreter import (
    TENSOR_STRUCT_BYTES,
    TENSORS_CAPACITY_HEADROOM,
    XNN_EXTRA_BYTES,
    int_array_bytes,
    tensor_capacity_after_prepare,
    times_growth_factor,
)
from arenalens.runtimes.litert.heap_invoke_state import BackendState, FirstInvoke, LiveHeap
from arenalens.runtimes.litert.heap_kernels import (
    CPU_BACKEND_CONTEXT_REQUESTS,
    DELEGATE_OPCODE,
    PREPARE_CREATES_CPU_BACKEND,
    rfft2d_eval_bytes,
    strided_slice_eval_bytes,
)
from arenalens.runtimes.litert.heap_resources import VariablePlan, VariableReplay
from arenalens.runtimes.litert.heap_threads import eigen_conv_eval, multithreaded_conv
from arenalens.runtimes.litert.isa import HOST, RuyLayout
from arenalens.runtimes.litert.kernel_gemm import (
    dims_product,
    hybrid_gemm,
    node_gemm,
    tensor_at,
)
from arenalens.runtimes.litert.prepare.state import (
    Allocation,
    PreparedSubgraph,
    RuntimeNode,
)
from arenalens.runtimes.litert.ruy_heap import (
    Gemm,
    Ruy,
    ruy_float_requests,
    ruy_requests,
)

# Kernels whose Eval asks for the CPU back-end context (the first one creates it).
_ASKS_CPU_BACKEND = frozenset(
    {
        "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "CONV_3D",
        "CONV_3D_TRANSPOSE", "LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "BIDIRECTIONAL_SEQUENCE_LSTM", "MIRROR_PAD", "ADD_N",
    }
)  # fmt: skip
# Eigen: blocks above EIGEN_STACK_ALLOCATION_LIMIT go to the heap, 64 B more for alignment
# (handmade_aligned_malloc); gebp's float tiles on AVX-512 (mr = 48 rows, nr = 4 columns).
EIGEN_STACK_LIMIT_BYTES = 128 * 1024
EIGEN_ALIGNMENT_BYTES = 64
EIGEN_ROW_TILE = 48
EIGEN_COLUMN_TILE = 4
EIGEN_DEPTH_TILE = 8

_EIGHT_BIT = frozenset({"INT8", "UINT8"})
# DEQUANTIZE's unpacked copy per input byte (dequantize.h bytes_unpacked).
_DEQUANTIZE_UNPACKED = MappingProxyType({"INT4": 2, "UINT4": 2, "INT2": 4})
_REDUCTIONS = frozenset(
    {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY", "REDUCE_ALL"}
)

# Operators whose first-invoke heap is not replayed (recurrent and hybrid kernels, control
# flow, 16-bit GEMMs): an upper bound stands for them and the figure says so.
_RECURRENT = frozenset(
    {
        "LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "RNN",
        "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN",
    }
)  # fmt: skip
# SVDF's Eval (float, hybrid and integer: tensor_utils' matrix-batch-vector products into its
# arena temporaries) allocates nothing on the heap: replayed as such.
_CONTROL_FLOW = frozenset({"WHILE", "IF", "CALL_ONCE"})
# A page per operator not replayed, with 4 B per byte of its constants (row sums, hybrid
# scaling, dequantized weights): the estimate errs high.
UNMODELLED_BYTES_PER_CONSTANT_BYTE = 4
UNMODELLED_PAGE_BYTES = 4096
# struct xnn_external_value (xnnpack.h): a uint32 id and a data pointer, padded to 16 B.
EXTERNAL_VALUE_BYTES = 16


def eigen_heap_bytes(gemm: Gemm, caches: CacheSizes | None = None) -> int:
    """Usable bytes of the heap blocks Eigen packs a float GEMM into: with the CPU's cache
    sizes, Eigen's own blocking (eigen_blocking, exact); without, an upper bound (the whole
    operand, tiles padded, where Eigen's blocking may take a slice of it)."""
    if caches is not None:
        return sum(
            glibc.usable(request)
            for request in eigen_blocking.heap_requests(gemm.rows, gemm.depth, gemm.columns, caches)
        )
    depth = _round_up(gemm.depth, EIGEN_DEPTH_TILE)
    total = 0
    for block in (
        4 * depth * _round_up(gemm.rows, EIGEN_ROW_TILE),
        4 * depth * _round_up(gemm.columns, EIGEN_COLUMN_TILE),
    ):
        if block > EIGEN_STACK_LIMIT_BYTES:
            total += glibc.usable(block + EIGEN_ALIGNMENT_BYTES)
    return total


def first_invoke(
    model: Model,
    prepared: PreparedSubgraph,
    *,
    delegated: bool = False,
    ruy_layouts: Sequence[RuyLayout] = HOST.ruy,
    eigen_caches: CacheSizes | None = None,
    decompositions: Mapping[int, Decomposition] = MappingProxyType({}),
    variables: VariablePlan | None = None,
    arena_block: int = 0,
    inits: Mapping[int, InitSubgraph] = MappingProxyType({}),
    workspace: int = 0,
    ways: Ways = NO_WAYS,
) -> FirstInvoke:
    """Replay subgraph 0's first invoke (builtin kernels) → what it keeps and its peak.
    `delegated`: the model is the plan once the XNNPACK delegate took its subsets, whose
    creation already made the CPU back end and initialized cpuinfo (its nodes keep
    nothing from their invoke). `ruy_layouts`: the ISA's ruy kernel layouts (the largest replay is
    taken where its cores may run several). `eigen_caches`: the CPU's cache sizes, which
    decide Eigen's float blocks (None: their upper bound). `decompositions`: the subgraphs
    allocate_tensors() prepared besides subgraph 0, by index (composites' decompositions,
    control flow's children: heap_control_flow). `variables`: heap_resources' plan.
    `arena_block`: the usable bytes of subgraph 0's arena block (a re-plan's bound).
    `inits`: the subgraphs CALL_ONCEs allocate at their first Eval (heap_call_once).
    `workspace`: the XNNPACK delegate's shared workspace request after setup. `ways`: the
    IFs' and WHILEs' ways given (heap_control_flow.Ways; the others both replayed), and
    whether a FULLY_CONNECTED's EvalHybridDense reads an input that is not all zeros."""
    replay = functools.partial(
        _first_invoke, decompositions=decompositions, variables=variables,
        arena_block=arena_block, inits=inits, workspace=workspace, ways=ways,
    )  # fmt: skip
    return max(
        (replay(model, prepared, delegated, layout, eigen_caches) for layout in ruy_layouts),
        key=lambda replayed: (replayed.peak, replayed.kept),
    )


def _first_invoke(
    model: Model,
    prepared: PreparedSubgraph,
    delegated: bool,
    layout: RuyLayout,
    eigen_caches: CacheSizes | None,
    *,
    decompositions: Mapping[int, Decomposition],
    caller: bool = True,
    variables: VariablePlan | None = None,
    arena_block: int = 0,
    backend_state: BackendState | None = None,
    inits: Mapping[int, InitSubgraph] = MappingProxyType({}),
    workspace: int = 0,
    ways: Ways = NO_WAYS,
) -> FirstInvoke:
    heap = LiveHeap()
    if caller:
        for step in heap_caller.set_inputs(prepared, model.subgraphs[prepared.index]):
            heap.step(step)
        heap.step(heap_caller.invoke_call())
    ruy = Ruy(heap)
    # FULLY_CONNECTED's Init initialized cpuinfo when the interpreter was created.
    cpuinfo = not delegated and not any(
        operator.opcode == "FULLY_CONNECTED"
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    )
    # A kernel whose Prepare asks for the CPU back end (ADD_N) created it in allocate_tensors.
    backend = delegated or any(
        node.opcode in PREPARE_CREATES_CPU_BACKEND for node in prepared.nodes
    )
    initialized = backend_state.initialized if backend_state is not None else frozenset()
    workspace = backend_state.workspace if backend_state is not None else workspace
    if backend_state is not None:  # a control flow's child: the parent's back end
        backend, cpuinfo = backend_state.backend, backend_state.cpuinfo
        ruy.created, ruy.size, ruy.vector_capacity = backend_state.ruy
    estimated: list[str] = []
    released = 0  # decomposition arenas composites free
    released_subgraphs: set[int] = set()
    bounded = False  # an Eigen block counted at its bound
    _grow_tensors_vector(heap, prepared)
    made = dict(backend_state.variables) if backend_state is not None else None
    variable_replay = VariableReplay(
        model.subgraphs[prepared.index], prepared, variables, estimated, arena_block, created=made
    )
    # A delegate kernel the re-plan prepares holds its memory planner's scratch, counted at a
    # bound where a node-added value is the first it plans (heap_xnnpack_reshape): the peak is
    # then an upper bound.
    later = variable_replay.replan.later_kernels if variable_replay.replan is not None else ()
    reshaped = any(not variable_replay.plan.reshapes[k].scratch_exact for k in later)
    bounded, pooled = reshaped, False
    for node in prepared.nodes:
        opcode = node.opcode
        variable_replay.run(node, heap.take, heap.give)
        if opcode == DELEGATE_OPCODE:
            _delegate_invoke(heap, prepared, node)
            continue
        for count in _strings_written(prepared, node):
            for step in heap_caller.written_strings(count):
                heap.step(step)
        # conv.cc's Eigen kernel: no back end, no single-threaded GEMM (eigen_conv_eval).
        threaded = multithreaded_conv(prepared, node)
        if threaded:
            pooled, replayed = eigen_conv_eval(
                heap, model, prepared, node, caches=eigen_caches, estimated=estimated, pooled=pooled
            )
            bounded = bounded or not replayed
        gemm = None if threaded else node_gemm(model, prepared, node)
        if not backend and (
            (opcode in _ASKS_CPU_BACKEND and not threaded)
            or _softmax_float(prepared, node)
            or _mean_optimized(model, prepared, node)
        ):
            for request in CPU_BACKEND_CONTEXT_REQUESTS:
                heap.take(glibc.usable(request))
            backend = True
        if _hybrid(prepared, node) and opcode == "DEPTHWISE_CONV_2D":
            continue  # DepthwiseConvHybridPerChannel: quantizes into arena temporaries only
        for kept in rhs_copy_blocks(model, prepared.index, node.operator, opcode):
            heap.take(kept)  # GetTempRhs's copy of the RHS's quantization
        if _hybrid(prepared, node) and opcode == "BATCH_MATMUL":
            continue
        if _hybrid(prepared, node) and opcode in ("CONV_2D", "FULLY_CONNECTED"):
            # Hybrid fully connected: SSE dot products over row sums, nothing allocated.
            # Hybrid convolution: int8 × int8 → int32 accumulators through ruy (the raw
            # accumulator Gemm always takes ruy), with neither bias nor multipliers; a
            # filter with one scale (HybridConv) takes ruy only for rows % 4 == 0.
            if opcode == "CONV_2D":
                hybrid, known = hybrid_gemm(model, prepared, node)
                if hybrid is not None:
                    ruy.multiply(ruy_requests(hybrid, layout), cpuinfo=cpuinfo)
                if not known:
                    estimated.append(opcode)
            # An int4 blockwise filter's four vectors (blockwise.py), each a block of its own,
            # so that one glibc's mmap threshold decides is counted as such.
            blocks = blockwise.eval_blocks(model, prepared.index, node.inputs)
            for block in blocks:
                heap.take(block)
            for block in blocks:
                heap.give(block)
            # The 4-bit kernel's vectors, or EvalHybridDense's int8 copy as heap_ways gives it.
            read = ways.get((prepared.index, node.position))
            changes, unknown = four_bit.call_steps(model, prepared.index, node.inputs, read)
            for change in changes:
                heap.take(max(change, 0))
                heap.give(max(-change, 0))
            bounded = bounded or unknown
            continue
        if opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM" and _plain_sequence_lstm(prepared, node):
            # Float gates run tensor_utils' float products, int8 ones (8x8->16) the portable
            # integer products: neither allocates; the CPU back end was asked for above.
            continue
        if opcode in CONTROL_FLOW_REPLAYED or opcode == CALL_ONCE:
            state = BackendState(
                backend,
                cpuinfo,
                (ruy.created, ruy.size, ruy.vector_capacity),
                tuple(variable_replay.variables.created.items()),
                initialized,
                workspace,
            )
            child_replay = lambda child, state: _first_invoke(  # noqa: E731
                model, child, delegated, layout, eigen_caches,
                decompositions=decompositions, caller=False, inits=inits, ways=ways,
                variables=variables.of(child.index) if variables is not None else None,
                arena_block=(decompositions[child.index].arena_block
                             if child.index in decompositions else inits[child.index].arena_block),
                backend_state=_backend_state(state),
            )  # fmt: skip
            flow = (
                call_once_eval(heap, model, prepared, node, inits=inits, state=state,
                               replay=child_replay)
                if opcode == CALL_ONCE
                else control_flow_eval(heap, model, prepared, node, allocated=decompositions,
                                       released=released_subgraphs, state=state,
                                       replay=child_replay, ways=ways)
            )  # fmt: skip
            if flow is not None:
                after = _backend_state(flow.state)
                backend, cpuinfo = after.backend, after.cpuinfo
                ruy.created, ruy.size, ruy.vector_capacity = after.ruy
                variable_replay.variables.created = dict(after.variables)
                initialized, workspace = after.initialized, after.workspace
                estimated.extend(flow.estimated)
                bounded = bounded or not flow.peak_exact
                released += flow.released
                continue
        if opcode == "STABLEHLO_COMPOSITE":
            inner = composite_eval(
                heap,
                model,
                prepared,
                node,
                allocated=decompositions,
                replay=lambda child: _first_invoke(
                    model, child, delegated, layout, eigen_caches,
                    decompositions=decompositions, caller=False,
                    arena_block=decompositions[child.index].arena_block,
                ),
                released=released_subgraphs,
            )  # fmt: skip
            if inner is not None:
                estimated.extend(inner.estimated)
                bounded = bounded or not inner.peak_exact
                released += inner.released
                continue
        if (
            opcode in _RECURRENT
            or opcode in _CONTROL_FLOW
            or opcode == "STABLEHLO_COMPOSITE"
            or _hybrid(prepared, node)
        ):
            estimated.append(opcode)
            heap.take(_unmodelled_bytes(model, prepared, node.operator))
            continue
        # An int4 filter under an integer input: unpacked to int8 around its GEMM.
        heap.take(unpacked := four_bit.integer_unpacked_bytes(model, prepared.index, node.inputs))
        if gemm is not None and not gemm.custom_gemv:
            if gemm.quantized:
                ruy.multiply(ruy_requests(gemm, layout), cpuinfo=cpuinfo)
            elif layout.float_columns or gemm.must_use_ruy:
                ruy.multiply(ruy_float_requests(gemm, layout), cpuinfo=cpuinfo)
            else:
                transient = eigen_heap_bytes(gemm, eigen_caches)
                bounded = bounded or (transient > 0 and eigen_caches is None)
                heap.take(transient)
                heap.give(transient)
        heap.give(unpacked)
        for transient in _kernel_transients(model, prepared, node):
            heap.take(transient)
            heap.give(transient)
        if opcode == "TOPK_V2" and node.dynamic_output:
            # k read at Eval (topk_v2.cc ResizeOutput): counted at the largest k its Eval
            # takes, the input's last dimension (the caller's zeros give k = 0).
            estimated.append(opcode)
            _topk_at_eval(heap, prepared, node)
            continue
        if _axis_from_data(prepared, node):
            # A reduction over axes read at Eval: its output's shape follows the axis values
            # (the caller's zeros among them), so its block is bounded by the input's bytes.
            estimated.append(opcode)
            for kept in _dynamic_axis_blocks(prepared, node):
                heap.take(kept)
            for kept in _eval_resized_blocks(prepared, opcode, node.inputs, node.temporaries):
                heap.take(kept)
            continue
        for kept in _eval_resized_blocks(
            prepared,
            node.opcode,
            node.inputs,
            node.temporaries,
            node_outputs_folded=_folded(prepared, node),
        ):
            heap.take(kept)
    if caller:
        heap.step(heap_caller.invoke_call(free=True))
    return FirstInvoke(
        heap.live - heap.caller_live,
        heap.peak,
        not estimated,
        tuple(estimated),
        not estimated and not bounded,
        released,
        heap.caller_at_peak,
        heap.caller_live,
        BackendState(
            backend,
            cpuinfo,
            (ruy.created, ruy.size, ruy.vector_capacity),
            tuple(variable_replay.variables.created.items()),
            initialized,
            workspace,
        ),
        heap.decided > 0,
        heap.decided_at_peak,
        reshaped,
    )


def _backend_state(state: object) -> BackendState:
    """heap_control_flow hands the back end's state through as it got it."""
    assert isinstance(state, BackendState)
    return state


def _delegate_invoke(heap: LiveHeap, prepared: PreparedSubgraph, node: RuntimeNode) -> None:
    """The XNNPACK delegate kernel's first Invoke (xnnpack_delegate.cc Subgraph::Invoke): its
    externals are its non-constant inputs and its outputs (`external_values_steps`)."""
    externals = sum(
        1
        for index in node.inputs
        if (tensor := tensor_at(prepared, index)) is not None
        and tensor.allocation is not Allocation.MMAP_RO
    ) + sum(1 for index in node.outputs if tensor_at(prepared, index) is not None)
    for usable in external_values_steps(externals):
        if usable > 0:
            heap.take(usable)
        else:
            heap.give(-usable)


def external_values_steps(externals: int) -> Iterator[int]:
    """Subgraph::Invoke on the first call (every external's pointer changed): one
    xnn_external_value (16 B) pushed per external into a std::vector, which doubles from 1
    (the new block taken before the old is freed), handed to xnn_setup_runtime and freed
    after; xnn_invoke_runtime allocates nothing. Usable bytes taken (> 0) or freed (< 0)."""
    capacity = 0
    for count in range(1, externals + 1):
        if count > capacity:
            grown = max(2 * capacity, 1)
            yield glibc.usable(EXTERNAL_VALUE_BYTES * grown)
            if capacity:
                yield -glibc.usable(EXTERNAL_VALUE_BYTES * capacity)
            capacity = grown
    if capacity:
        yield -glibc.usable(EXTERNAL_VALUE_BYTES * capacity)


def _strings_written(prepared: PreparedSubgraph, node: RuntimeNode) -> Iterator[int]:
    """How many strings a kernel writes into each string output at Eval: GatherStrings one per
    index (it reads positions in the flat string list, whatever the ranks), others one per
    output element."""
    for output in node.outputs:
        written = tensor_at(prepared, output)
        if written is None or written.dtype != "STRING":
            continue
        indices = tensor_at(prepared, node.inputs[1]) if node.opcode == "GATHER" else None
        yield dims_product((indices if indices is not None else written).shape or ())


def _kernel_transients(
    model: Model, prepared: PreparedSubgraph, node: RuntimeNode
) -> Iterator[int]:
    """Blocks a kernel allocates and frees within its Eval (usable bytes)."""
    opcode, inputs = node.opcode, node.inputs
    if opcode == "STRIDED_SLICE" and len(inputs) > 1 and not _folded(prepared, node):
        data, begin = tensor_at(prepared, inputs[0]), tensor_at(prepared, inputs[1])
        written = tensor_at(prepared, node.outputs[0]) if node.outputs else None
        if data is not None and data.shape is not None and begin is not None:
            operator = model.subgraphs[prepared.index].operators[node.operator]
            begins = begin.shape[0] if begin.shape else 0
            output_rank = len(written.shape) if written is not None and written.shape else 0
            yield strided_slice_eval_bytes(operator, len(data.shape), begins, output_rank)
    if opcode == "RFFT2D" and node.outputs:
        # The output is [..., fft_height, fft_width / 2 + 1] (fft_length: powers of two).
        spectrum = tensor_at(prepared, node.outputs[0])
        if spectrum is not None and spectrum.shape is not None and len(spectrum.shape) >= 2:
            yield rfft2d_eval_bytes(spectrum.shape[-2], 2 * (spectrum.shape[-1] - 1))
    if opcode == "DEPTHWISE_CONV_2D" and len(inputs) > 1:
        data, weights = tensor_at(prepared, inputs[0]), tensor_at(prepared, inputs[1])
        if data is not None and weights is not None and data.dtype == "INT8":
            yield glibc.usable(2 * weights.nbytes)
    softmax = tensor_at(prepared, inputs[0]) if opcode == "SOFTMAX" and inputs else None
    if softmax is not None and softmax.dtype == "FLOAT32" and softmax.shape:
        # optimized_ops::SoftmaxImpl (one thread): Eigen's colwise max, then the colwise
        # sum's inverse, one float per row each, one after the other (aligned_malloc: 64 B
        # more, EIGEN_ALIGNMENT_BYTES).
        for _ in range(2):
            yield glibc.usable(4 * dims_product(softmax.shape[:-1]) + EIGEN_ALIGNMENT_BYTES)
    if opcode == "DEQUANTIZE" and inputs and (data := tensor_at(prepared, inputs[0])) is not None:
        # dequantize.h DequantizeImpl / PerChannelDequantizeImpl: `make_unique<int8_t[]>` of
        # the input's bytes (twice for int4, four times for int2) whatever its type, float16
        # included, used only to unpack sub-byte inputs (operator new[] takes 1 B for 0).
        unpacked = data.nbytes * _DEQUANTIZE_UNPACKED.get(data.dtype, 1)
        yield glibc.usable(max(unpacked, 1))


def _grow_tensors_vector(heap: LiveHeap, prepared: PreparedSubgraph) -> None:
    """Subgraph::InvokeImpl calls EnsureTensorsVectorCapacity before each kernel: when
    Prepare's last additions left fewer than 16 free slots, the first invoke grows tensors_
    once (the new block is allocated before the old one is freed)."""
    capacity = tensor_capacity_after_prepare(prepared)
    size = len(prepared.tensors)
    if not prepared.nodes or size + TENSORS_CAPACITY_HEADROOM <= capacity:
        return
    grown = max(size + TENSORS_CAPACITY_HEADROOM, times_growth_factor(capacity))
    heap.take(glibc.usable(TENSOR_STRUCT_BYTES * grown))
    heap.give(glibc.usable(TENSOR_STRUCT_BYTES * capacity))


def _axis_from_data(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """A reduction whose resolved-axis temporary is sized at Eval (the axis is not constant)."""
    if node.opcode not in _REDUCTIONS or len(node.temporaries) < 2 or _folded(prepared, node):
        return False
    resolved = tensor_at(prepared, node.temporaries[1])
    return resolved is not None and resolved.allocation is Allocation.DYNAMIC


def _folded(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """A kernel whose output Prepare computed (kTfLitePersistentRo): its Eval does nothing."""
    output = tensor_at(prepared, node.outputs[0]) if node.outputs else None
    return output is not None and output.allocation is Allocation.PERSISTENT_RO


def _dynamic_axis_blocks(prepared: PreparedSubgraph, node: RuntimeNode) -> Iterator[int]:
    """ResizeTempAxis (a one-entry dims array and the axis values), ResizeOutputTensor
    (the output's dims and data) and, where Eval resizes it, the accumulator (one per output
    element). GetOutputShape drops (or sets to 1) each resolved axis's dimension, and an axis
    tensor with a value reduces at least one: whatever the values, the output has at most the
    input's elements over its smallest dimension."""
    axis = tensor_at(prepared, node.inputs[1]) if len(node.inputs) > 1 else None
    data = tensor_at(prepared, node.inputs[0]) if node.inputs else None
    axis_count = dims_product(axis.shape or ()) if axis is not None else 0
    shape = (data.shape or ()) if data is not None else ()
    inputs = dims_product(shape)
    outputs = inputs // max(min(shape), 1) if axis_count and shape else inputs
    element = data.nbytes // inputs if data is not None and inputs else 0
    yield glibc.usable(int_array_bytes(1))
    yield glibc.usable(4 * axis_count + XNN_EXTRA_BYTES)
    yield glibc.usable(int_array_bytes(len(shape)))
    yield glibc.usable(element * outputs + XNN_EXTRA_BYTES)
    if data is not None and _accumulates(node.opcode, data.dtype):
        accumulator = _ACCUMULATOR_BYTES.get(data.dtype, 4)
        yield glibc.usable(int_array_bytes(1))
        yield glibc.usable(accumulator * outputs + XNN_EXTRA_BYTES)


# reduce.cc InitializeTemporaries: the accumulator's type by the input's (int32 and int64
# sum into int64; float into float; 8- and 16-bit into int32; bool stays bool).
_ACCUMULATOR_BYTES = {"INT32": 8, "INT64": 8, "BOOL": 1}
_QUANTIZED_REDUCTION = frozenset({"INT8", "UINT8", "INT16"})


def _accumulates(opcode: str, dtype: str) -> bool:
    """Whose Eval resizes the accumulator temporary with the output (reduce.cc): EvalMean
    for every type, EvalSum and EvalQuantizedProd for 8- and 16-bit inputs."""
    return opcode == "MEAN" or (opcode in ("SUM", "REDUCE_PROD") and dtype in _QUANTIZED_REDUCTION)


_TOPK_INDEX_BYTES = {"INT32": 4, "INT16": 2}


def _topk_at_eval(heap: LiveHeap, prepared: PreparedSubgraph, node: RuntimeNode) -> None:
    """TOPK_V2 with a k read at Eval, k at its bound (the input's last dimension): both
    outputs' new dims (the old ones freed after), their data blocks (ResizeTensor: bytes plus
    XNN_EXTRA_BYTES, kept) and TopContainer's index vector (min(k, row) + 1 entries, freed)."""
    data = tensor_at(prepared, node.inputs[0]) if node.inputs else None
    if data is None or not data.shape or len(node.outputs) < 2:
        return
    row = max(data.shape[-1], 0)
    rows = dims_product(data.shape[:-1])
    element = data.nbytes // max(dims_product(data.shape), 1)
    indices = tensor_at(prepared, node.outputs[1])
    index_bytes = _TOPK_INDEX_BYTES.get(indices.dtype if indices is not None else "", 4)
    dims = glibc.usable(int_array_bytes(len(data.shape)))
    heap.take(2 * dims)
    for size in (rows * row * index_bytes, rows * row * element):
        heap.take(glibc.usable(size + XNN_EXTRA_BYTES))
    heap.give(2 * dims)
    container = glibc.usable(index_bytes * (row + 1)) if row else 0
    heap.take(container)
    heap.give(container)


def _eval_resized_blocks(
    prepared: PreparedSubgraph,
    opcode: str,
    inputs: Sequence[int],
    temporaries: Sequence[int],
    *,
    node_outputs_folded: bool = False,
) -> Iterator[int]:
    """Dynamic tensors a kernel sizes in its Eval, kept (usable bytes): a reduction's
    normalized-dims temporary (ResizeTempDims: a one-entry dims array, then the data block,
    rank int32 values plus XNN_EXTRA_BYTES as TfLiteTensorResizeMaybeCopy asks)."""
    if opcode not in _REDUCTIONS or len(temporaries) < 4 or not inputs:
        return
    if node_outputs_folded:
        return
    normalized = tensor_at(prepared, temporaries[3])
    data = tensor_at(prepared, inputs[0])
    if normalized is None or data is None or normalized.allocation is not Allocation.DYNAMIC:
        return
    rank = len(data.shape or ())
    yield glibc.usable(int_array_bytes(1))
    yield glibc.usable(4 * rank + XNN_EXTRA_BYTES)


def _softmax_float(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    if node.opcode != "SOFTMAX" or not node.inputs:
        return False
    data = tensor_at(prepared, node.inputs[0])
    return data is not None and data.dtype == "FLOAT32"


def _mean_optimized(model: Model, prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """EvalMean's optimized 8-bit path (keep_dims, a 4-D input, two axes: its spatial mean),
    which asks for the CPU back end (reduce.cc). The axes' values are taken to be 1 and 2
    (global average pooling); other pairs run the generic path, which does not ask: counting
    the context then errs high."""
    if node.opcode != "MEAN" or len(node.inputs) < 2:
        return False
    data, axis = tensor_at(prepared, node.inputs[0]), tensor_at(prepared, node.inputs[1])
    if data is None or axis is None or data.dtype not in _EIGHT_BIT:
        return False
    if len(data.shape or ()) != 4 or dims_product(axis.shape or ()) != 2:
        return False
    subgraph = model.subgraphs[prepared.index]
    if not 0 <= node.operator < len(subgraph.operators):
        return False
    return bool(subgraph.operators[node.operator].options.get("keep_dims"))


def _plain_sequence_lstm(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """A float or int8 sequence LSTM, or a hybrid one (float activations, int8 weights:
    lstm_eval.cc EvalHybrid quantizes into its arena temporaries; its products allocate
    nothing, traced on held15_lstm_1-4)."""
    if len(node.inputs) < 3:
        return False
    data, weights = tensor_at(prepared, node.inputs[0]), tensor_at(prepared, node.inputs[2])
    if data is None or weights is None:
        return False
    return (data.dtype, weights.dtype) in (
        ("FLOAT32", "FLOAT32"),
        ("INT8", "INT8"),
        ("FLOAT32", "INT8"),
    )


def _hybrid(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """Float activations with 8-bit weights: the hybrid kernels quantize on the fly."""
    if node.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL"):
        return False
    if len(node.inputs) < 2:
        return False
    data, weights = tensor_at(prepared, node.inputs[0]), tensor_at(prepared, node.inputs[1])
    return (
        data is not None
        and weights is not None
        and data.dtype == "FLOAT32"
        and weights.dtype in ("INT8", "UINT8", "INT4")
    )


def _unmodelled_bytes(model: Model, prepared: PreparedSubgraph, operator: int) -> int:
    subgraph = model.subgraphs[prepared.index]
    if not 0 <= operator < len(subgraph.operators):
        return UNMODELLED_PAGE_BYTES
    constants = sum(
        subgraph.tensors[index].nbytes
        for index in subgraph.operators[operator].inputs
        if index >= 0 and subgraph.tensors[index].has_data
    )
    return UNMODELLED_BYTES_PER_CONSTANT_BYTE * constants + UNMODELLED_PAGE_BYTES


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
