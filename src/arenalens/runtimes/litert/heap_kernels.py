"""What each LiteRT kernel allocates on the heap for one node, on the ai-edge-litert 2.3.0
x86-64 wheel: its builtin-options struct (the flatbuffer parser's `malloc(sizeof(params))`), its
Init's OpData, and what its Prepare keeps beyond tensor dims and temporaries.

The sizes are the wheel's struct sizes (`sizeof(TfLiteConvParams)`, `sizeof(conv::OpData)`,
...), read from its allocations (`python -m tests.litert_heap_trace MODEL`: every block with
the function that asked for it; each node's parser and Init blocks follow its index arrays), on
every shared and generated model of tests/data/litert_heap.json. An operator not listed here
is counted with `UNKNOWN_*` upper bounds and the heap figure says it is an estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.xnnpack_custom import XNNPACK_CUSTOM_OPERATORS

# Requests of Parse<Op> (the builtin options struct), by operator.
PARSE_REQUESTS: Mapping[str, int] = MappingProxyType(
    {
        "ADD": 8,
        "AVERAGE_POOL_2D": 40,
        "MAX_POOL_2D": 40,
        "L2_POOL_2D": 40,
        "BATCH_MATMUL": 3,
        "CONCATENATION": 8,
        "CONV_2D": 28,
        "DEPTHWISE_CONV_2D": 28,
        "FULLY_CONNECTED": 32,
        "GATHER": 8,
        "MEAN": 1,
        "SUM": 1,
        "REDUCE_MAX": 1,
        "REDUCE_MIN": 1,
        "REDUCE_PROD": 1,
        "REDUCE_ANY": 1,
        "MUL": 4,
        "PACK": 8,
        "RESHAPE": 36,
        "SHAPE": 4,
        "SOFTMAX": 4,
        "SPLIT": 4,
        "STRIDED_SLICE": 24,
        "SUB": 8,
        "DIV": 4,
        "CAST": 8,
        "SVDF": 12,
        "TRANSPOSE_CONV": 20,
        "UNIDIRECTIONAL_SEQUENCE_LSTM": 16,
        "LEAKY_RELU": 4,
        "DEPTH_TO_SPACE": 4,
        "SPACE_TO_DEPTH": 4,
        "RESIZE_BILINEAR": 2,
        # TfLiteStablehloCompositeParams: name, subgraph index, attributes and their size,
        # version (flatbuffer_conversions.cc ParseStablehloComposite).
        "STABLEHLO_COMPOSITE": 40,
        "VAR_HANDLE": 16,  # TfLiteVarHandleParams: the container and shared-name pointers
        "REDUCE_ALL": 1,  # TfLiteReducerParams, as the other reducers
        "L2_NORMALIZATION": 4,  # TfLiteL2NormParams: its fused activation
        # TfLiteIfParams / TfLiteWhileParams: the two subgraph indices (traced on the
        # control-flow cases of tests/litert_control_flow_heap_cases.py).
        "IF": 8,
        "WHILE": 8,
        # TfLiteCallOnceParams: the init subgraph's index (ParseCallOnce, traced).
        "CALL_ONCE": 4,
        # flatbuffer_conversions.cc ParseUnpack (TfLiteUnpackParams: num, axis), ParseSplitV
        # (TfLiteSplitVParams: num_splits), GELU's TfLiteGeluParams (approximate); held-out
        # held15_gru_*, held15_slices_*, held15_transformer_4.
        "UNPACK": 8,
        "SPLIT_V": 4,
        "GELU": 1,
        # TfLiteConv3DParams: padding, three strides, three dilations, activation (session
        # 18, held-out held18_conv3d_*).
        "CONV_3D": 32,
        # TfLiteArgMaxParams / TfLiteArgMinParams: the output type (ParseArgMax/ParseArgMin);
        # TfLiteResizeNearestNeighborParams: align_corners, half_pixel_centers.
        "ARG_MAX": 4,
        "ARG_MIN": 4,
        "RESIZE_NEAREST_NEIGHBOR": 2,
    }
)
# Operators whose parser allocates nothing (no builtin options struct).
# The XNNPACK delegate's kernel node (runtimes/litert/heap_xnnpack.py's view): its blocks are
# counted there, none through a parser, Init or Prepare of its own here.
DELEGATE_OPCODE = "CUSTOM:TfLiteXNNPackDelegate"
NO_PARSE = frozenset(
    {
        DELEGATE_OPCODE,
        "ABS", "COMPLEX_ABS", "EXP", "LOGISTIC", "TANH", "RELU", "RELU6", "RELU_N1_TO_1",
        "MAXIMUM", "MINIMUM", "NEG", "POW", "RFFT2D", "RSQRT", "SQRT", "SQUARE",
        "SQUARED_DIFFERENCE", "TRANSPOSE", "LOG", "SIN", "COS", "FLOOR", "CEIL",
        "QUANTIZE", "PAD", "ADD_N", "DEQUANTIZE", "PRELU", "READ_VARIABLE", "ASSIGN_VARIABLE",
        "ELU",
        # Traced on held-out facts8_* (tests/litert_kernel_facts_cases.py): the parser keeps no
        # params struct for these (their schema options are empty or absent).
        "ATAN2", "ROUND", "SIGN", "SLICE", "SCATTER_ND", "TOPK_V2", "RELU_0_TO_1", "LOG_SOFTMAX",
        "LOGICAL_OR", "GREATER", "LESS",
        "GATHER_ND",  # ParseGatherNd keeps nothing
        "HARD_SWISH",  # ParseHardSwish keeps nothing (flatbuffer_conversions.cc)
        "EMBEDDING_LOOKUP",  # ParseEmbeddingLookup keeps nothing
    }
)  # fmt: skip
# Requests of the kernel's Init (its OpData), by operator; absent: Init allocates nothing.
INIT_REQUESTS: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {
        "ABS": (32,),
        "RSQRT": (32,),
        "SQRT": (32,),
        "BATCH_MATMUL": (24,),
        "CONV_2D": (160,),
        "DEPTHWISE_CONV_2D": (104,),
        "FULLY_CONNECTED": (88,),
        "LOGISTIC": (1044,),
        "TANH": (1044,),
        "ELU": (1044,),  # activations.cc Init: the OpData with its 8-bit lookup table
        "MEAN": (16,),
        "SUM": (16,),
        "REDUCE_MAX": (16,),
        "REDUCE_MIN": (16,),
        "REDUCE_PROD": (16,),
        "REDUCE_ANY": (16,),
        "POW": (1,),
        "RELU": (1052,),
        "RELU6": (1052,),
        "RELU_N1_TO_1": (1052,),
        "RESHAPE": (16,),
        "RFFT2D": (4,),
        "SOFTMAX": (104,),
        "SQUARED_DIFFERENCE": (112,),
        "SUB": (56,),
        "ADD": (52,),
        "AVERAGE_POOL_2D": (16,),
        "MAX_POOL_2D": (16,),
        "L2_POOL_2D": (16,),
        "CAST": (1,),
        "DIV": (20,),
        "EXP": (1026,),
        "GATHER": (1,),
        "MUL": (20,),
        "QUANTIZE": (8,),
        "STRIDED_SLICE": (1,),
        "SVDF": (28,),
        "TRANSPOSE_CONV": (136,),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": (368,),
        "ADD_N": (4,),
        "DEQUANTIZE": (1,),
        "LEAKY_RELU": (1052,),  # activations.cc LeakyReluInit / PreluInit: the Relu OpData
        "PRELU": (1052,),
        "STABLEHLO_COMPOSITE": (8,),  # stablehlo_composite.cc State: subgraph index, a flag
        # var_handle.cc Init: `new VarParams` (its resource id); the interpreter-wide
        # resource-id map's node is counted once per name (heap_interpreter).
        "VAR_HANDLE": (4,),
        "REDUCE_ALL": (16,),  # reduce.cc Init: the reducers' OpData
        "RELU_0_TO_1": (1052,),  # activations.cc ReluInit, as RELU
        # activations.cc LogSoftmaxInit: LogSoftmaxOpData (the softmax params and a float
        # exp table); traced on held-out facts8_*.
        "LOG_SOFTMAX": (2160,),
        "LOGICAL_OR": (1,),  # logical.cc Init: `new OpData` (requires_broadcast)
        # if.cc / while.cc Init: `new OpData` (the subgraph indices and the dynamic-output
        # flags); their Prepare keeps only output dims (runtimes/litert/heap_control_flow.py).
        "IF": (12,),
        "WHILE": (12,),
        # call_once.cc Init: `new OpData` (the init subgraph's index); its Prepare's status
        # map entry is heap_call_once's.
        "CALL_ONCE": (4,),
        # activations.cc Register_GELU: activations::Init, the OpData with its lookup table
        # (as LOGISTIC's); GeluPrepare fills it, keeping nothing else.
        "GELU": (1044,),
        # conv3d.cc Init: `new OpData` (Padding3DValues' six int16, the im2col tensor id, two
        # flags, the im2col index); its Prepare keeps the temporaries array and the im2col
        # tensor's dims only.
        "CONV_3D": (24,),
        # activations.cc HardSwishInit: `new HardSwishData` (HardSwishParams: three int16
        # and two int exponents, 20 B); ParseHardSwish keeps nothing, nor does its Prepare.
        "HARD_SWISH": (20,),
    }
)
# Operators seen allocating nothing in Init.
NO_INIT = frozenset(
    {
        DELEGATE_OPCODE,
        "CONCATENATION", "MAXIMUM", "MINIMUM", "NEG", "PACK", "SHAPE", "SPLIT", "TRANSPOSE",
        "COMPLEX_ABS", "PAD", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "RESIZE_BILINEAR",
        "READ_VARIABLE", "ASSIGN_VARIABLE",
        # Registered without an Init (traced on held-out facts8_*).
        "ATAN2", "ROUND", "SIGN", "CEIL", "FLOOR", "SIN", "COS", "SLICE", "SCATTER_ND",
        "TOPK_V2", "L2_NORMALIZATION", "GREATER", "LESS",
        "SQUARE",  # elementwise.cc Register_SQUARE: init nullptr (held-out xnn9_square_*)
        # unpack.cc, split_v.cc, gather_nd.cc: registered without an Init (session 15).
        "UNPACK", "SPLIT_V", "GATHER_ND",
        # arg_min_max.cc, embedding_lookup.cc, resize_nearest_neighbor.cc: no Init (session 18).
        "ARG_MAX", "ARG_MIN", "EMBEDDING_LOOKUP", "RESIZE_NEAREST_NEIGHBOR",
    }
)  # fmt: skip
# ADD_N's Prepare asks for the CPU back-end context (add_n.cc), so the first one creates it
# during allocate_tensors: CpuBackendContext (56 B), its thread count (8 B), its ruy context
# (208 B) and gemmlowp context (224 B).
CPU_BACKEND_CONTEXT_REQUESTS = (56, 8, 208, 224)
PREPARE_CREATES_CPU_BACKEND = frozenset({"ADD_N"})
# The first CONV_2D's Init takes a reference on the interpreter's Eigen context, created then.
EIGEN_CONTEXT_REQUESTS = (32, 24)
# Upper bounds for operators not measured: the largest struct and OpData above.
UNKNOWN_PARSE_REQUEST = 64
UNKNOWN_INIT_REQUEST = 1052

# Blocks of an Interpreter(...) whatever the model, in usable bytes: BuiltinOpResolver's
# registration tables (441 AddBuiltin nodes of 112 B, their hash table, the custom ops), the
# FlatBufferModel and its verifier, the InterpreterWrapper and its pybind11 instance, the
# Interpreter's own members, the builder's per-call vectors. Each subgraph's inputs, outputs and
# variables vectors are the model's (heap_interpreter._subgraph_io_blocks).
FIXED_CREATE_BYTES = 57_128 + 952 + 40 + 408 + 40 + 24 + 256 + 24 + 24 + 24 + 600

_QUANTIZED = frozenset({"INT8", "UINT8", "INT16"})
# Kernels whose Prepare keeps buffers not modelled here (row sums of quantized recurrent
# weights, hybrid scaling factors, state copies): an upper bound of four bytes per byte of
# constant input plus a page, said to be an estimate.
UNMODELLED_PREPARE = frozenset(
    {
        "LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "RNN",
        "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN",
    }
)  # fmt: skip
UNMODELLED_PREPARE_PAGE_BYTES = 4096


def prepare_bound(subgraph: Subgraph, operator: Operator) -> int:
    """Upper bound of what an unmodelled kernel's Prepare keeps (0 when it is modelled)."""
    if _prepare_modelled(subgraph, operator):
        return 0
    constant_bytes = sum(
        subgraph.tensors[index].nbytes
        for index in operator.inputs
        if index >= 0 and subgraph.tensors[index].has_data
    )
    return 4 * constant_bytes + UNMODELLED_PREPARE_PAGE_BYTES


def _prepare_modelled(subgraph: Subgraph, operator: Operator) -> bool:
    """Whether prepare_requests gives every block the kernel's Prepare keeps: any kernel with
    measured parser and Init blocks, and the float and int8 sequence LSTM (its hybrid form,
    float activations with 8-bit weights, keeps row sums and scales not modelled here). SVDF's
    Prepare keeps only its temporaries array and the dims of the tensors it resizes (svdf.cc:
    scratch, and the hybrid and integer paths' quantized input, scaling factors, float
    time weights, zero points, row sums, scratch output), which the replica's temporaries
    give; the six tensors its Init adds come at creation (heap_interpreter.capacity_after_init)."""
    opcode = operator.opcode
    if opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM":
        # Its hybrid form too (float activations, 8-bit weights): its Prepare keeps only the
        # temporaries array and its temporaries' dims (quantized input and state, scaling
        # factors, zero points, row sums, all arena tensors; traced on held15_lstm_1-4: 368 B
        # in 14 blocks on held15_lstm_3), which the replica's temporaries give.
        return _dtype(subgraph, operator.inputs, 0) in ("FLOAT32", "INT8")
    if opcode in UNMODELLED_PREPARE:
        return False
    parsed = opcode in PARSE_REQUESTS or opcode in NO_PARSE
    initialized = opcode in INIT_REQUESTS or opcode in NO_INIT
    return parsed or initialized


# UNIDIRECTIONAL_SEQUENCE_LSTM's gate weights whose zero point times weights plus bias an
# integer (8x8→16) LSTM precomputes into `new int32_t[rows]` each
# (PopulatePrecomputedZPTimesWeightsWithBias): input-to and recurrent-to forget, cell,
# output and input gates, and the projection.
_LSTM_PRECOMPUTED_WEIGHTS = (2, 6, 3, 7, 4, 8, 1, 5, 16)


@dataclass(frozen=True, slots=True)
class KernelFacts:
    """One node's kernel blocks at creation."""

    parse_requests: tuple[int, ...]
    init_requests: tuple[int, ...]
    eigen_context: bool
    known: bool


def kernel_facts(model: Model, subgraph: Subgraph, operator: Operator) -> KernelFacts:
    """Node → its parser and Init requests (upper bounds, `known=False`, when not measured)."""
    del model, subgraph
    if operator.custom_code in XNNPACK_CUSTOM_OPERATORS:
        # LiteRT registers none of them: the builder gives the node the unresolved-op
        # placeholder, which has no Init, and a custom node has no parser (its options stay
        # in the file); traced on the wheel: no block of their own at creation.
        return KernelFacts((), (), False, True)
    opcode = operator.opcode
    known = True
    if opcode in PARSE_REQUESTS:
        parse: tuple[int, ...] = (PARSE_REQUESTS[opcode],)
    elif opcode in NO_PARSE:
        parse = ()
    else:
        parse = (UNKNOWN_PARSE_REQUEST,)
        known = False
    if opcode in INIT_REQUESTS:
        init = INIT_REQUESTS[opcode]
    elif opcode in NO_INIT:
        init = ()
    else:
        init = (UNKNOWN_INIT_REQUEST,)
        known = False
    return KernelFacts(parse, init, opcode == "CONV_2D", known)


def prepare_requests(subgraph: Subgraph, operator: Operator) -> tuple[int, ...]:
    """What a kernel's Prepare keeps besides output dims and temporaries: per-channel
    requantization vectors of quantized convolutions and matmuls (a multiplier and a shift per
    output channel, `std::vector<int32_t>`), a quantized softmax's lookup table."""
    opcode = operator.opcode
    data = _dtype(subgraph, operator.inputs, 0)
    if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D") and data in _QUANTIZED:
        channels = _output_channels(subgraph, operator)
        return (4 * channels, 4 * channels)
    if opcode == "TRANSPOSE_CONV" and _dtype(subgraph, operator.inputs, 2) in _QUANTIZED:
        # transpose_conv.cc Prepare: per_channel_output_multiplier / _shift resized to the
        # filter's output channels, one scale or one per channel (tconvu8_*: 32-160 B under
        # after setup without them).
        weights = _tensor(subgraph, operator.inputs, 1)
        channels = weights.shape[0] if weights is not None and weights.shape else 1
        return (4 * channels, 4 * channels)
    if opcode == "FULLY_CONNECTED" and data in _QUANTIZED:
        weights = _tensor(subgraph, operator.inputs, 1)
        if weights is not None and weights.quantization and weights.quantization.channel_count > 1:
            channels = weights.shape[0] if weights.shape else 1
            return (4 * channels, 4 * channels)
    if opcode == "FULLY_CONNECTED" and data == "FLOAT32" and _four_bit_kernel(subgraph, operator):
        # PrepareImpl: std::make_unique<optimized_4bit::OpData4Bit>() before PrepareImpl4Bit
        # (48 B traced on xnn9_blockwise_104, whose after-setup figure was 8 B under then).
        return (OP_DATA_4BIT_BYTES,)
    if opcode == "SOFTMAX" and data in ("INT8", "UINT8"):
        return (1024,)
    if opcode == "SOFTMAX" and data == "INT16":
        # activations.cc SoftmaxPrepare: an int16 input keeps two 513-entry int16 lookup
        # tables (exp_lut, one_over_one_plus_x_lut: kInt16LUTArraySize), held out on
        # held15_int16_1/_3/_5 (1.7-1.9 KB under without them).
        return (2 * 513, 2 * 513)
    if opcode in ("RSQRT", "LOG") and _tensor(subgraph, operator.inputs, 0) is not None:
        # elementwise.cc Prepare: a quantized int16 RSQRT or LOG keeps a 513-entry int16
        # lookup table, an int8 LOG a 256-entry one (LUTSize; upstream
        # single_rsqrt_default_a16w8_recipe_quantized.tflite was 0.99x without it).
        quantized = _tensor(subgraph, operator.inputs, 0).quantization is not None
        if data == "INT16" and quantized:
            return (2 * 513,)
        if data == "INT8" and opcode == "LOG":
            return (256,)
    if opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM" and data == "INT8":
        requests = []
        for slot in _LSTM_PRECOMPUTED_WEIGHTS:
            weights = _tensor(subgraph, operator.inputs, slot)
            if weights is not None and weights.shape:
                requests.append(4 * weights.shape[0])
        return tuple(requests)
    return ()


def _tensor(subgraph: Subgraph, inputs: tuple[int, ...], slot: int):  # type: ignore[no-untyped-def]
    if slot < len(inputs) and inputs[slot] >= 0:
        return subgraph.tensors[inputs[slot]]
    return None


def _dtype(subgraph: Subgraph, inputs: tuple[int, ...], slot: int) -> str:
    tensor = _tensor(subgraph, inputs, slot)
    return tensor.dtype.name if tensor is not None else ""


def _output_channels(subgraph: Subgraph, operator: Operator) -> int:
    if operator.outputs and operator.outputs[0] >= 0:
        shape = subgraph.tensors[operator.outputs[0]].shape
        if shape:
            return shape[-1]
    return 1


# strided_slice.cc EvalImpl's blocks, all freed before it returns: BuildStridedSliceParams'
# start, stop and stride vectors (one int32 per effective dimension: the input's rank plus the
# new axes new_axis_mask adds outside the ellipsis), then reference_ops::StridedSlice's starts
# and stops (int) and input_strides (int64) of that rank and its recursive std::function, whose
# by-reference closure (eight pointers) is heap-allocated. RuntimeShape keeps up to 6 dims
# inline: a larger effective input or output shape adds its array. Traced on the 2.3.0 wheel
# (zen10_graph_883, a rank-2 int32 input: 8, 8, 8, then 8, 8, 16, 64).
STRIDED_SLICE_CLOSURE_BYTES = 64
_RUNTIME_SHAPE_INLINE_DIMS = 6


def strided_slice_eval_bytes(
    operator: Operator, input_rank: int, begin_count: int, output_rank: int
) -> int:
    """Usable bytes a non-folded STRIDED_SLICE's Eval holds at once (see above)."""
    ellipsis = int(operator.options.get("ellipsis_mask", 0) or 0)
    new_axis = int(operator.options.get("new_axis_mask", 0) or 0)
    added = sum(1 for i in range(begin_count) if not ellipsis >> i & 1 and new_axis >> i & 1)
    dims = input_rank + added
    if dims <= 0:
        return 0  # the vectors are empty and StridedSlice writes one value before the closure
    total = 5 * glibc.usable(4 * dims) + glibc.usable(8 * dims)
    total += glibc.usable(STRIDED_SLICE_CLOSURE_BYTES)
    for rank in (dims, output_rank):
        if rank > _RUNTIME_SHAPE_INLINE_DIMS:
            total += glibc.usable(4 * rank)
    return total


def rfft2d_eval_bytes(fft_height: int, fft_width: int) -> int:
    """RFFT2D's Eval (rfft2d.cc Rfft2dImpl) calls fft2d's rdft2d without a work array: it
    mallocs `8 * n1` doubles (n1 the FFT's height; half that for a width of 4, a quarter below
    4) and frees it before returning. Traced on the 2.3.0 wheel: 256 B for 4 x 8 (isa6_graph_701),
    64 B for 2 x 4 (heldout_graph_3)."""
    if fft_height <= 0 or fft_width <= 0:
        return 0
    doubles = 8 * fft_height
    if fft_width == 4:
        doubles >>= 1
    elif fft_width < 4:
        doubles >>= 2
    return glibc.usable(8 * doubles)


OP_DATA_4BIT_BYTES = 48  # sizeof(optimized_4bit::OpData4Bit) on the 2.3.0 wheel (traced)


def _four_bit_kernel(subgraph: Subgraph, operator: Operator) -> bool:
    """fully_connected.cc PrepareImpl's optimized 4-bit path (prepare/matmul.py
    _takes_four_bit_kernel): constant int4 weights [units, columns], columns even and at least
    32, at least 4 units, a batch of rows."""
    weights = _tensor(subgraph, operator.inputs, 1)
    data = _tensor(subgraph, operator.inputs, 0)
    if weights is None or data is None or weights.dtype.name != "INT4" or not weights.has_data:
        return False
    if len(weights.shape) != 2 or weights.shape[1] <= 0:
        return False
    units, columns = weights.shape
    elements = 1
    for dim in data.shape:
        elements *= dim
    return bool(columns % 2 == 0 and columns >= 32 and units >= 4 and elements // columns > 0)
