"""The XNNPACK delegate's own objects in a LiteRT interpreter, block by block, from LiteRT's and
XNNPACK's sources (*tflite/delegates/xnnpack/xnnpack_delegate.cc*: `Subgraph::Create`, the
`Subgraph` constructor, `VisitFullyConnectedNode`; *tflite/core/subgraph.cc*:
`ReplaceNodeSubsetsWithDelegateKernels`; XNNPACK *src/runtime.c*: `xnn_create_runtime_v4`,
*src/subgraph.c*: `xnn_subgraph_optimize`, *src/operators/\\*.c*: each operator's create and
reshape).

* **The delegate**: its object, its workspace handle and the CPU back end's context it asks
  for; cpuinfo's tables when nothing initialised cpuinfo before (the builtin FULLY_CONNECTED
  kernel's Init does, so a model with one has them already).
* **Per delegate kernel** (one per delegated subset): LiteRT's `TfLiteDelegateParams` (one
  block: the struct and three index arrays), the node's input, output, intermediate and
  temporary arrays; the kernel's `Subgraph` object, its tensor → value map (one node per
  tensor the kernel defines), its map of external tensors and its external input and output
  vectors (grown by push_back); the per-channel scales it gives a FULLY_CONNECTED with 8-bit
  weights of one scale, in place of the one-scale array. The last kernel leaves the context's
  execution-plan copy as long as the plan then was.
* **Per XNNPACK runtime**: `struct xnn_runtime`, one `xnn_operator_data` per node left after
  dead-node removal (a folded PAD keeps its slot, a folded clamp does not) and one
  `xnn_runtime_value` per value the subgraph defined: each tensor the kernel uses, once more
  for each that is not external (defined with a fresh id), the 2-D input of a FULLY_CONNECTED
  that does not keep its dimensions, the channel-wise weights of an int8 one, and the output
  of the clamp `xnn_define_binary` adds for a fused activation.
* **Per XNNPACK operator**: the operator object and its compute parameters, plus per kind its
  context, microkernel and extra parameters; a convolution's zero buffer when it pads;
  reshape-time buffers of average pooling (zero buffer, indirection) and of reductions over
  outer axes (zero buffer).

Struct sizes are this wheel's x86-64 build (`ai-edge-litert` 2.3.0), read off the tracer
(tests/litert_heap_trace.py) on single-operator and cached models: `sizeof(struct
xnn_operator)` = 520, `compute_parameters` = 88, `xnn_convolution_operator` = 224,
`xnn_ukernel_igemm` = 264, `igemm_op_context` = 408, `dwconv_op_context` = 336, a fully
connected operator's gemm context 688 and microkernel 288 (+ its 224-byte state),
`reduce_context` = 272, `xnn_operator_data` = 240, `xnn_runtime_value` = 160, `xnn_runtime`
= 96, the delegate kernel's `Subgraph` = 280. An operator kind not listed here is counted with
`_UNKNOWN_OPERATOR`, an upper bound, and makes the figure a bound (`objects_are_exact`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import (
    glibc,
    xnnpack_attention,
    xnnpack_subgraphs,
    xnnpack_variables,
)
from arenalens.runtimes.litert.heap_interpreter import handle_key
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.heap_xnnpack import (
    NodeSubset,
    delegated_view,
    keeps_dims,
    node_subsets,
    partition,
)
from arenalens.runtimes.litert.libstdcxx import BUCKET_COUNT_CHAIN
from arenalens.runtimes.litert.xnnpack_node_builds import NodeBuilds, subset_nodes
from arenalens.runtimes.litert.xnnpack_packing import (
    HOST_TILES,
    XNN_EXTRA_BYTES,
    _batch_matmul_b,
    _convolution,
    _depthwise_tile,
    _gemm_tile,
    aligned_block,
    deconvolution,
    round_up,
)
from arenalens.runtimes.litert.xnnpack_reshape_blocks import (
    argmax_pooling_reshape,
    average_pooling_reshape,
    reduce_reshape,
    resize_reshape,
)
from arenalens.runtimes.litert.xnnpack_slots import operator_slots
from arenalens.runtimes.litert.xnnpack_workspace import (
    _Node,
    binary_activation,
    data_and_weights,
    dynamically_quantized,
    hybrid_batch_matmul,
    resource_rewrites,
    transposes_a,
)

# The delegate (TfLiteXNNPackDelegateCreateWithThreadpool): its tensor-map vector (56), the
# Delegate object (536) and its options (600); CpuBackendContext (56), its thread count (8),
# gemmlowp (224) and ruy (208) contexts; xnn_create_workspace (32).
DELEGATE_REQUESTS = (56, 536, 600, 56, 8, 224, 208, 32)
# cpuinfo_initialize's tables (12 blocks on the measuring machine's CPU topology).
CPUINFO_BYTES = 736
CPUINFO_BLOCKS = 12
CPUINFO_INITIALISED_BY = "FULLY_CONNECTED"  # fully_connected.cc Init calls cpuinfo_initialize

LAZY_PROVIDERS_BYTES = 32  # ApplyLazyDelegateProviders: the delegates it made
DELEGATE_PARAMS_BYTES = 32  # sizeof(TfLiteDelegateParams), before its three index arrays
SUBGRAPH_OBJECT_BYTES = 280  # the delegate kernel's Subgraph
TENSOR_MAP_NODE_BYTES = 16  # unordered_map<int, uint32_t> node
EXTERNALS_NODE_BYTES = 24  # unordered_map<int, void*> node
RUNTIME_BYTES = 96  # struct xnn_runtime
OPERATOR_DATA_BYTES = 240  # struct xnn_operator_data
RUNTIME_VALUE_BYTES = 160  # struct xnn_runtime_value
POINTER_BYTES = 8

OPERATOR_BYTES = 520  # struct xnn_operator (SIMD-aligned)
COMPUTE_BYTES = 88  # struct compute_parameters
EXTRA_PARAMS_BYTES = 40  # xnn_allocate_extra_params(op, 1)
CONVOLUTION_OPERATOR_BYTES = 224  # struct xnn_convolution_operator
IGEMM_UKERNEL_BYTES = 264  # struct xnn_ukernel_igemm (SIMD-aligned)
IGEMM_CONTEXT_BYTES = 408  # struct igemm_op_context (SIMD-aligned)
DWCONV_CONTEXT_BYTES = 336  # struct dwconv_op_context (SIMD-aligned)
REDUCE_CONTEXT_BYTES = 272  # struct reduce_context (SIMD-aligned)
LUT_BYTES = 256  # an 8-bit unary operator's lookup table (SIMD-aligned)
QD8_RESHAPE_BYTES = 8  # a dynamically quantized convolution's reshape keeps 8 B
PAD_CONTEXT_BYTES = 232  # struct pad_context (SIMD-aligned): constant-pad-nd.c

# (aligned requests, malloc requests) per operator kind, after the operator object.
_KINDS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    # create_fully_connected_nc: 2 compute invocations, its gemm state, microkernel, context.
    "gemm": ((288, 688), (2 * COMPUTE_BYTES, 224)),
    "igemm": ((IGEMM_UKERNEL_BYTES, IGEMM_CONTEXT_BYTES), (3 * COMPUTE_BYTES, 224)),
    "dwconv": ((IGEMM_UKERNEL_BYTES, DWCONV_CONTEXT_BYTES), (3 * COMPUTE_BYTES, 224)),
    "copy": ((), (2 * COMPUTE_BYTES,)),
    "unary": ((), (2 * COMPUTE_BYTES,)),
    "clamp": ((), (2 * COMPUTE_BYTES,)),
    "binary": ((), (COMPUTE_BYTES, EXTRA_PARAMS_BYTES)),
    "softmax": ((), (COMPUTE_BYTES,)),
    "pooling": ((), (COMPUTE_BYTES, CONVOLUTION_OPERATOR_BYTES)),
    "reduce": ((REDUCE_CONTEXT_BYTES,), (COMPUTE_BYTES, EXTRA_PARAMS_BYTES)),
    "slice": ((), (COMPUTE_BYTES,)),
    # create_constant_pad_nd: its compute invocation and its pad_context (session 15: traced
    # on held15_slices_2, a PAD no convolution folds: 520 + 88 + 232 B).
    "pad": ((PAD_CONTEXT_BYTES,), (COMPUTE_BYTES,)),
    # create_batch_matrix_multiply_nc: 3 compute invocations, gemm_types, gemm_op_context.
    "BATCH_MATMUL": ((288, 688), (3 * COMPUTE_BYTES,)),
    # create_dynamic_fully_connected_nc (an attention's, run-time weights): as a batch
    # matrix multiply's and its extra parameters (the nr2 configuration's).
    "dynamic_fc": ((288, 688), (3 * COMPUTE_BYTES, EXTRA_PARAMS_BYTES)),
    # create_depth_to_space_nhwc / create_space_to_depth_nhwc: one compute invocation.
    "shuffle": ((), (COMPUTE_BYTES,)),
    # xnn_create_resize_bilinear2d_nhwc: 2 compute invocations and its convolution state.
    "resize": ((), (2 * COMPUTE_BYTES, CONVOLUTION_OPERATOR_BYTES)),
}
_KIND_OF = {
    "MAX_POOL_2D": "pooling",
    "AVERAGE_POOL_2D": "pooling",
    "MEAN": "reduce",
    "SUM": "reduce",
    "REDUCE_MAX": "reduce",
    "REDUCE_MIN": "reduce",
    "SLICE": "slice",
    "STRIDED_SLICE": "slice",
    "PAD": "pad",
    "TRANSPOSE": "slice",
    "convert": "unary",  # create_convert_nc_qx8: a hybrid convolution's input quantizer
    "lut": "unary",  # a chain of 8-bit unary nodes fused into one table (_node_bytes)
    "DEPTH_TO_SPACE": "shuffle",
    "SPACE_TO_DEPTH": "shuffle",
    "RESIZE_BILINEAR": "resize",
    # xnn_create_argmax_pooling2d_nhwc_f32 / xnn_create_unpooling2d_nhwc_x32: one compute
    # invocation and the convolution state, as a pooling.
    "CUSTOM:MaxPoolingWithArgmax2D": "pooling",
    "CUSTOM:MaxUnpooling2D": "pooling",
}
_ARGMAX_POOLINGS = ("CUSTOM:MaxPoolingWithArgmax2D", "CUSTOM:MaxUnpooling2D")
# Other kinds (concatenation, split, variables, composites...): the largest operator's blocks
# for each of their inputs and outputs, an upper bound.
_UNKNOWN_OPERATOR = (
    aligned_block(OPERATOR_BYTES)
    + aligned_block(IGEMM_UKERNEL_BYTES)
    + aligned_block(IGEMM_CONTEXT_BYTES)
    + glibc.usable(3 * COMPUTE_BYTES)
    + glibc.usable(CONVOLUTION_OPERATOR_BYTES)
)
_COPIES = ("CONCATENATION", "SPLIT")
_QUANTIZED = ("INT8", "UINT8")
# 8-bit unary operators with a kernel of their own (unary-elementwise-nc.c get_config: the
# qs8 / qu8 lrelu and cvt configurations); a clamp has one only where it keeps its quantization.
_OWN_8BIT_KERNEL = ("LEAKY_RELU", "QUANTIZE")
# Operators whose first input is their only value (delegate: Subgraph::Create).
_FIRST_INPUT_ONLY = frozenset(
    {
        "EXPAND_DIMS", "MEAN", "PAD", "REDUCE_MAX", "REDUCE_MIN", "SUM", "RESHAPE",
        "RESIZE_BILINEAR", "STRIDED_SLICE", "SLICE", "TRANSPOSE",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class DelegateObjects:
    """The delegate's objects for a model, in bytes as glibc hands them out."""

    delegate: int  # the delegate and its contexts
    kernels: int  # LiteRT's delegate nodes and the delegate kernels' maps
    runtimes: int  # xnn_runtime, operator data and runtime values
    operators: int  # XNNPACK operators (create and reshape)
    exact: bool  # False: an operator kind is counted with the upper bound
    blocks: int  # how many heap blocks (at most), for glibc's placement allowance
    # How many of the operators' blocks are SIMD-aligned (posix_memalign(64)), each counted
    # with the 32 B tail glibc keeps or gives back depending on where it lands (glibc.py).
    aligned: int = 0

    @property
    def total(self) -> int:
        return self.delegate + self.kernels + self.runtimes + self.operators


def delegate_bytes(model: Model) -> int:
    """The delegate object and its contexts, with cpuinfo's tables unless a builtin kernel's
    Init initialised cpuinfo first; the interpreter's side of applying it
    (Interpreter::ApplyLazyDelegateProviders' delegate list, Subgraph::ModifyGraphWithDelegate's
    copy of the execution plan before delegation and its list of applied delegates)."""
    total = sum(glibc.usable(request) for request in DELEGATE_REQUESTS)
    total += glibc.usable(LAZY_PROVIDERS_BYTES)
    for subgraph in model.subgraphs:  # each subgraph's ModifyGraphWithDelegate
        operators = len(subgraph.operators)
        total += glibc.usable(POINTER_BYTES) + (glibc.usable(4 * operators) if operators else 0)
    initialised = any(
        operator.opcode == CPUINFO_INITIALISED_BY
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    )
    return total + (0 if initialised else CPUINFO_BYTES)


def _buckets(count: int) -> int:
    """Bytes of an unordered container's bucket array after `count` single insertions."""
    if count <= 0:
        return 0
    buckets = next((b for b in BUCKET_COUNT_CHAIN if b >= count), BUCKET_COUNT_CHAIN[-1])
    return glibc.usable(POINTER_BYTES * buckets)


def _vector(count: int) -> int:
    """A vector<int> grown by push_back to `count` elements."""
    if count <= 0:
        return 0
    capacity = 1
    while capacity < count:
        capacity *= 2
    return glibc.usable(4 * capacity)


def _int_array(count: int) -> int:
    return glibc.usable(4 + 4 * count)


def kernel_tensors(subgraph: Subgraph, subset: NodeSubset) -> list[int]:
    """The tensors the delegate kernel defines values for (Subgraph::Create): every input and
    output of its operators, but only the data input of those whose other inputs are
    parameters."""
    tensors: set[int] = set()
    for index in subset.operators:
        operator = subgraph.operators[index]
        inputs: Sequence[int] = operator.inputs
        if operator.opcode in _FIRST_INPUT_ONLY:
            inputs = operator.inputs[:1]
        elif operator.opcode == "SPLIT":
            inputs = operator.inputs[1:2]
        elif operator.opcode == "TRANSPOSE_CONV":
            inputs = operator.inputs[1:]  # its output shape is a parameter
        tensors.update(tensor for tensor in (*inputs, *operator.outputs) if tensor >= 0)
    return sorted(tensors)


def _externals(subgraph: Subgraph, subset: NodeSubset, tensors: Sequence[int]) -> tuple[int, int]:
    """(external inputs, external outputs): inputs without data, and the outputs."""
    inputs, outputs = set(subset.inputs), set(subset.outputs)
    # A resource's value is defined from its proxy tensor, whose type is not a resource, so
    # the delegate gives it no external id (Subgraph::Create's is_external): an internal value.
    resources = {tensor for tensor in tensors if subgraph.tensors[tensor].dtype.name == "RESOURCE"}
    external_inputs = sum(
        1
        for tensor in tensors
        if tensor in inputs and not subgraph.tensors[tensor].has_data and tensor not in resources
    )
    external_outputs = sum(1 for tensor in tensors if tensor in outputs and tensor not in resources)
    return external_inputs, external_outputs


def external_tensors(subgraph: Subgraph, subset: NodeSubset, tensors: Sequence[int]) -> set[int]:
    """The kernel's tensors with an external id (`_externals`' inputs and outputs)."""
    inputs, outputs = set(subset.inputs), set(subset.outputs)
    return {
        tensor
        for tensor in tensors
        if subgraph.tensors[tensor].dtype.name != "RESOURCE"
        and (tensor in outputs or (tensor in inputs and not subgraph.tensors[tensor].has_data))
    }


def int8_fully_connected(subgraph: Subgraph, operator: Operator) -> bool:
    """VisitFullyConnectedNode's channel-wise int8 weights: the static-range int8 path
    (supported_srq, int8 or int4 weights: xnnpack_qc4w) and the dynamically quantized (hybrid)
    one, a convolution's too."""
    if dynamically_quantized(subgraph, operator) or hybrid_batch_matmul(subgraph, operator):
        return True
    pair = data_and_weights(subgraph, operator)
    return (
        operator.opcode == "FULLY_CONNECTED"
        and pair is not None
        and pair[0].dtype.name == "INT8"
        and pair[1].dtype.name in ("INT8", "INT4")
    )


def _expanded_scale_bytes(subgraph: Subgraph, operator: Operator) -> int:
    """An int8 (or int4, qint4) FULLY_CONNECTED's one-scale weights get one scale per output
    channel (a new TfLiteFloatArray; the one-element array it replaces is freed)."""
    if not int8_fully_connected(subgraph, operator):
        return 0
    weights = subgraph.tensors[operator.inputs[1]]
    if weights.dtype.name == "INT4" and weights.quantization is None:
        return 0  # blockwise (qbint4): its scales stay the model's (xnnpack_blockwise)
    if operator.opcode == "BATCH_MATMUL":
        # VisitBatchMatMulNode: B's scales expanded to one per column of every batch (a
        # vector<float> the delegate kernel keeps) unless there is one each already.
        shape = _batch_matmul_b(subgraph, operator)
        scales = weights.quantization.channel_count if weights.quantization is not None else 1
        required = shape[0] * shape[2] if shape is not None else 0
        return glibc.usable(4 * required) if required and required != scales else 0
    if weights.quantization is not None and weights.quantization.channel_count > 1:
        return 0
    channels = weights.shape[0] if weights.shape else 1
    if operator.opcode in ("CONV_2D", "TRANSPOSE_CONV"):
        # VisitConv2DNode, VisitTransposeConvNode: a scale array not one per output channel
        # is replaced by one.
        return glibc.usable(4 + 4 * channels) - glibc.usable(4 + 4)
    if channels <= 1:
        return 0
    return glibc.usable(4 + 4 * channels) - glibc.usable(4 + 4)


def kernel_bytes(subgraph: Subgraph, subset: NodeSubset, model: Model) -> int:
    """LiteRT's delegate node and the delegate kernel's Subgraph object and maps."""
    count = len(subset.operators) + len(subset.inputs) + len(subset.outputs)
    total = glibc.usable(DELEGATE_PARAMS_BYTES + 12 + 4 * count)
    total += _int_array(len(subset.inputs)) + _int_array(len(subset.outputs))
    total += 2 * _int_array(0)  # intermediates and temporaries
    tensors = kernel_tensors(subgraph, subset)
    external_inputs, external_outputs = _externals(subgraph, subset, tensors)
    # The resources whose value the kernel defines are in its externals_ map too (Invoke
    # binds each to its variable's buffer), not in its input and output vectors.
    proxied = xnnpack_variables.proxies(subgraph)
    externals = external_inputs + external_outputs + sum(1 for t in tensors if t in proxied)
    total += glibc.usable(SUBGRAPH_OBJECT_BYTES) + resource_copy_bytes(model, subgraph.index)
    total += len(tensors) * glibc.usable(TENSOR_MAP_NODE_BYTES) + _buckets(len(tensors))
    total += externals * glibc.usable(EXTERNALS_NODE_BYTES) + _buckets(externals)
    total += _vector(external_inputs) + _vector(external_outputs)
    total += sum(
        _expanded_scale_bytes(subgraph, subgraph.operators[index]) for index in subset.operators
    )
    return total


def runtime_counts(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> tuple[int, int]:
    """(nodes, values) of the XNNPACK runtime a delegate kernel creates: its operator-data
    and value arrays hold one entry each (`builds`: the call's nodes, xnnpack_node_builds)."""
    unfused = subset_nodes(subgraph, subset, model, builds, fuse=False)
    fused = subset_nodes(subgraph, subset, model, builds)
    # A node the fusions cleared (a PAD folded into its convolution, a fused variable copy, a
    # LUT chain's nodes) keeps its slot unless a later pass's clean-up compacts the array
    # (xnnpack_slots: MobileNetV2's 18 folded PADs counted, a merged float RELU not).
    slots = operator_slots(subgraph, unfused, fused)
    tables = sum(1 for node in fused if node.kind == "lut")  # each LUT: one value more
    operators = [subgraph.operators[index] for index in subset.operators]
    activations = sum(1 for operator in operators if binary_activation(operator))
    tensors = kernel_tensors(subgraph, subset)
    external_inputs, external_outputs = _externals(subgraph, subset, tensors)
    internal = len(tensors) - external_inputs - external_outputs
    reshaped = sum(
        1
        for operator in operators
        if operator.opcode == "FULLY_CONNECTED" and not keeps_dims(operator)
    )
    int8_weights = sum(1 for operator in operators if int8_fully_connected(subgraph, operator))
    # A hybrid one's dynamically quantized input is one value more.
    quantized = sum(
        1
        for operator in operators
        if dynamically_quantized(subgraph, operator) or hybrid_batch_matmul(subgraph, operator)
    )
    transposed = sum(1 for operator in operators if transposes_a(operator))
    values = len(tensors) + internal + reshaped + int8_weights + quantized + activations
    values += transposed + resource_rewrites(subgraph, subset.operators) + tables
    values += sum(
        xnnpack_attention.value_count(model, subgraph, operator)
        for operator in operators
        if xnnpack_attention.replayed(subgraph, operator)
    )
    # A fused activation's clamp node is among the nodes (xnnpack_workspace._nodes).
    return slots, values


def runtime_bytes(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> int:
    """xnn_runtime, its operator data and its values."""
    nodes, values = runtime_counts(subgraph, subset, model, builds)
    return (
        glibc.usable(RUNTIME_BYTES)
        + glibc.usable(OPERATOR_DATA_BYTES * nodes)
        + glibc.usable(RUNTIME_VALUE_BYTES * values)
    )


def runtime_array_requests(model: Model) -> list[tuple[int, int]] | None:
    """Each runtime's operator-data and value array requests (xnn_create_runtime_v4), in the
    order the delegate kernels are created; None where the partition is not modelled."""
    if delegated_view(model) is None:
        return None
    subgraph = model.subgraphs[0]
    split = partition(subgraph, model)
    requests = []
    for subset in node_subsets(subgraph, split.delegated):
        if subset.delegated:
            nodes, values = runtime_counts(subgraph, subset, model)
            requests.append((OPERATOR_DATA_BYTES * nodes, RUNTIME_VALUE_BYTES * values))
    return requests


def _zero_buffer(subgraph: Subgraph, operator: Operator, microkernel: str) -> int:
    """convolution-nhwc.c: a zero buffer when the convolution pads (TF SAME over a kernel of
    more than one tap, or a PAD folded into it): XNN_EXTRA_BYTES + the padded depth."""
    convolution = _convolution(subgraph, operator)
    if convolution is None:
        return 0
    element = 4 if convolution.kind == "FLOAT32" else 1
    if microkernel == "dwconv":
        tile = _depthwise_tile(convolution.kind, HOST_TILES).channels
        return aligned_block(XNN_EXTRA_BYTES + round_up(convolution.groups, tile) * element)
    gemm = _gemm_tile(convolution.kind, HOST_TILES, convolution.group_output_channels, gemm=False)
    depth = round_up(convolution.group_input_channels, gemm.kr)
    return aligned_block(XNN_EXTRA_BYTES + depth * element)


def _pads(subgraph: Subgraph, operator: Operator) -> bool:
    """Whether a convolution pads: TF SAME with more than one tap (a folded PAD is counted by
    the caller)."""
    convolution = _convolution(subgraph, operator)
    return (
        convolution is not None
        and convolution.taps > 1
        and operator.options.get("padding") in (0, "SAME")
    )


def _operator_blocks(kind: str) -> int:
    aligned, plain = _KINDS[kind]
    return (
        aligned_block(OPERATOR_BYTES)
        + sum(aligned_block(request) for request in aligned)
        + sum(glibc.usable(request) for request in plain)
    )


def operators_bytes(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> tuple[int, bool]:
    """Every XNNPACK operator the runtime creates for a subset (fused nodes create none), and
    whether each kind is modelled."""
    boundary = set(subset.inputs) | set(subset.outputs)
    fused = subset_nodes(subgraph, subset, model, builds)
    unfused = subset_nodes(subgraph, subset, model, builds, fuse=False)
    folded_pads = {node.operator for node in unfused if node.kind == "PAD"} - {
        node.operator for node in fused if node.kind == "PAD"
    }
    padded_by_fold = {
        node.operator
        for node in fused
        if node.kind in ("CONV_2D", "DEPTHWISE_CONV_2D")
        and any(
            pad.outputs and pad.outputs[0] in subgraph.operators[node.operator].inputs
            for pad in unfused
            if pad.operator in folded_pads
        )
    }
    read = {tensor for node in fused for tensor in node.inputs} | boundary
    total, exact = 0, True
    for node in fused:
        operator = subgraph.operators[node.operator]
        folded = node.operator in padded_by_fold
        total += _node_bytes(model, subgraph, node, operator, folded=folded, read=read)
        if (
            node.kind not in (*_KINDS, *_COPIES)
            and _KIND_OF.get(node.kind) is None
            and _microkernel(subgraph, operator) is None
            and deconvolution(subgraph, operator) is None
        ):
            exact = False
    return total, exact


def reshape_bytes(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> int:
    """The part of operators_bytes that xnn_reshape_runtime makes (in the kernel's Prepare,
    after every kernel's Init): average pooling's zero and indirection buffers, a reduction's
    zero buffer, a dynamically quantized convolution's reshape block."""
    total = 0
    for node in subset_nodes(subgraph, subset, model, builds):
        operator = subgraph.operators[node.operator]
        if node.kind == operator.opcode and _microkernel(subgraph, operator) == "igemm":
            if dynamically_quantized(subgraph, operator):
                total += glibc.usable(QD8_RESHAPE_BYTES)
        elif operator.opcode == "AVERAGE_POOL_2D" and node.kind == operator.opcode:
            total += average_pooling_reshape(subgraph, operator)
        elif _KIND_OF.get(node.kind, node.kind) == "reduce":
            total += reduce_reshape(model, subgraph, operator)
        elif node.kind == "RESIZE_BILINEAR":
            total += resize_reshape(subgraph, operator)
        elif node.kind == "TRANSPOSE_CONV" and dynamically_quantized(subgraph, operator):
            total += glibc.usable(QD8_RESHAPE_BYTES)
        elif node.kind in _ARGMAX_POOLINGS:
            total += argmax_pooling_reshape(subgraph, operator)
    return total


def _microkernel(subgraph: Subgraph, operator: Operator) -> str | None:
    if operator.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        return None
    convolution = _convolution(subgraph, operator)
    if convolution is None:
        return None
    return convolution.microkernel


def lookup_table(subgraph: Subgraph, node: _Node) -> bool:
    """Whether an 8-bit unary or clamp node's operator computes a 256-byte table when it is
    created (unary-elementwise-nc.c init_op: with no kernel for its data type it runs the
    reference kernel over the 256 inputs into a table). Kernels exist for a clamp whose input
    and output share their scale and zero point, a LEAKY_RELU and a conversion within one
    type; every other 8-bit unary operator (and a conversion between int8 and uint8) has one.
    A value the delegate made (a binary operator's clamped output) has the output's
    quantization."""
    if node.kind not in ("unary", "clamp") or not node.inputs or not node.outputs:
        return False
    source = _tensor_of(subgraph, node.inputs[0])
    target = _tensor_of(subgraph, node.outputs[0])
    source, target = source or target, target or source
    if source is None or target is None:
        return False
    if source.dtype.name not in _QUANTIZED or target.dtype.name not in _QUANTIZED:
        return False
    if source.dtype != target.dtype:
        return True
    if node.kind == "clamp":
        return _scale_and_zero(source) != _scale_and_zero(target)
    return subgraph.operators[node.operator].opcode not in _OWN_8BIT_KERNEL


def _tensor_of(subgraph: Subgraph, value: int) -> Tensor | None:
    return subgraph.tensors[value] if 0 <= value < len(subgraph.tensors) else None


def _scale_and_zero(tensor: Tensor) -> tuple[float | None, int | None]:
    quantization = tensor.quantization
    return (quantization.scale, quantization.zero_point) if quantization else (None, None)


def _node_bytes(
    model: Model,
    subgraph: Subgraph,
    node: _Node,
    operator: Operator,
    *,
    folded: bool,
    read: set[int],
) -> int:
    microkernel = _microkernel(subgraph, operator) if node.kind == operator.opcode else None
    if microkernel is not None:
        total = _operator_blocks(microkernel)
        if microkernel != "gemm" and (folded or _pads(subgraph, operator)):
            total += _zero_buffer(subgraph, operator, microkernel)
        if microkernel == "igemm" and dynamically_quantized(subgraph, operator):
            total += glibc.usable(QD8_RESHAPE_BYTES)  # reshape_convolution2d_nhwc_qx8
        return total
    found = deconvolution(subgraph, operator) if node.kind == "TRANSPOSE_CONV" else None
    if found is not None:
        total = found.object_bytes()
        if found.kind == "qd8":
            total += glibc.usable(QD8_RESHAPE_BYTES)  # reshape_deconvolution2d_nhwc_qx8_f32_qc8w
        return total
    if node.kind == "lut":
        # The fusion's table (xnn_allocate_memory, kept by the runtime's static value) and the
        # LUT operator: an 8-bit unary operator with its own table (init_op).
        return glibc.usable(LUT_BYTES) + _operator_blocks("unary") + aligned_block(LUT_BYTES)
    if node.kind == "CONCATENATION":
        # xnn_define_concatenate: one copy operator per input.
        return _operator_blocks("copy") * max(len(node.inputs), 1)
    if node.kind == "SPLIT":
        # even_split: one copy operator per output still read (the clean-up cleared the rest).
        return _operator_blocks("copy") * sum(1 for tensor in node.outputs if tensor in read)
    kind = _KIND_OF.get(node.kind, node.kind)
    if kind not in _KINDS:
        return _UNKNOWN_OPERATOR * max(len(node.inputs) + len(node.outputs), 1)
    total = _operator_blocks(kind)
    if lookup_table(subgraph, node):
        total += aligned_block(LUT_BYTES)
    if operator.opcode == "AVERAGE_POOL_2D":
        total += average_pooling_reshape(subgraph, operator)
    if node.kind in _ARGMAX_POOLINGS:
        total += argmax_pooling_reshape(subgraph, operator)
    if kind == "reduce":
        total += reduce_reshape(model, subgraph, operator)
    if kind == "resize":
        total += resize_reshape(subgraph, operator)
    return total


def delegate_objects(model: Model, builds: NodeBuilds | None = None) -> DelegateObjects | None:
    """The delegate's objects for a model whose partition is modelled (None otherwise);
    `builds`: the call's nodes (xnnpack_node_builds), else made here."""
    view = delegated_view(model)
    if view is None:
        return None
    builds = builds if builds is not None and builds.model is model else NodeBuilds(model)
    kernels = runtimes = operators = aligned = 0
    blocks = len(DELEGATE_REQUESTS) + CPUINFO_BLOCKS + 4
    exact = True
    # A CALL_ONCE init's reshape-time blocks are made at its first Eval (heap_call_once).
    inits = xnnpack_subgraphs.first_eval_inits(model, view)
    for subgraph, delegated in zip(model.subgraphs, view.subgraphs, strict=True):
        split = partition(subgraph, model)
        for subset in node_subsets(subgraph, split.delegated):
            if not subset.delegated:
                continue
            kernels += kernel_bytes(subgraph, subset, model)
            runtimes += runtime_bytes(subgraph, subset, model, builds)
            made, known = operators_bytes(subgraph, subset, model, builds)
            if subgraph.index in inits:
                made -= reshape_bytes(subgraph, subset, model, builds)
            operators += made
            aligned += aligned_blocks(subgraph, subset, model, builds)
            exact = exact and known
            tensors = kernel_tensors(subgraph, subset)
            blocks += 12 + 2 * len(tensors) + 3 + 8 * len(subset.operators)
        plan = delegated.operators
        delegate_nodes = [
            position for position, operator in enumerate(plan) if operator.opcode == DELEGATE_OPCODE
        ]
        # Each subgraph's context keeps its execution-plan copy (Subgraph::GetExecutionPlan,
        # remade at each call): the last delegate kernel's Init reads the plan rebuilt up to
        # it; with no kernel, the delegate's partitioning read the whole plan.
        kernels += _int_array(delegate_nodes[-1] if delegate_nodes else len(plan))
    resources, names = variable_maps_bytes(model)
    kernels += resources + names
    return DelegateObjects(
        delegate_bytes(model), kernels, runtimes, operators, exact, blocks, aligned
    )


def aligned_blocks(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> int:
    """How many SIMD-aligned blocks (xnn_allocate_simd_memory: posix_memalign(64, n)) the
    subset's created operators hold, of the kinds `_node_bytes` counts from `_KINDS` (each
    operator object, its aligned state; an 8-bit lookup table): each counted at the chunk's
    usable size and the 32 B tail _int_memalign keeps when the block lands where splitting it
    would leave 32 B or less (glibc.aligned_usable). Other kinds count none here (their tails
    stay in the part: never under)."""
    nodes = subset_nodes(subgraph, subset, model, builds)
    read = {tensor for node in nodes for tensor in node.inputs} | set(subset.inputs)
    read |= set(subset.outputs)
    count = 0
    for node in nodes:
        operator = subgraph.operators[node.operator]
        microkernel = _microkernel(subgraph, operator) if node.kind == operator.opcode else None
        if microkernel is not None:
            count += 1 + len(_KINDS[microkernel][0])
        elif node.kind == "TRANSPOSE_CONV" and deconvolution(subgraph, operator) is not None:
            continue
        elif node.kind == "lut":
            count += 2 + len(_KINDS["unary"][0])
        elif node.kind == "CONCATENATION":
            count += max(len(node.inputs), 1) * (1 + len(_KINDS["copy"][0]))
        elif node.kind == "SPLIT":
            count += sum(1 for tensor in node.outputs if tensor in read) * (
                1 + len(_KINDS["copy"][0])
            )
        else:
            kind = _KIND_OF.get(node.kind, node.kind)
            if kind in _KINDS:
                count += 1 + len(_KINDS[kind][0]) + (1 if lookup_table(subgraph, node) else 0)
    return count


# The delegate's variable bookkeeping (xnnpack_delegate.cc): `local_id_to_resources_`, an
# unordered_map<int, ResourceInfo> with a node per resource tensor a VAR_HANDLE names (each
# handle is visited, taken or not), cleared by each subgraph's PrepareOpsToDelegate (the
# delegate is applied to every subgraph in index order: clear() frees the nodes and keeps the
# bucket array, so the array is the one the most resources of any subgraph so far grew), and
# copied into every delegate kernel's `resources_` (a copy takes the source's bucket count,
# and allocates that array even when empty); and `var_handles_`, an unordered_map keyed by the
# (container, shared name) strings with a hash-caching node per distinct pair over all
# subgraphs (GetGlobalId), never cleared.
RESOURCE_INFO_NODE_BYTES = 32  # next pointer, the tensor id, ResourceInfo's four ints
VAR_HANDLE_NODE_BYTES = 88  # next pointer, the two strings and the id, the cached hash


def _resource_tensors(subgraph: Subgraph) -> set[int]:
    return {
        operator.outputs[0]
        for operator in subgraph.operators
        if operator.opcode == "VAR_HANDLE" and operator.outputs and operator.outputs[0] >= 0
    }


def resource_copy_bytes(model: Model, index: int) -> int:
    """The delegate's resource map as a kernel of subgraph `index` copies it: that subgraph's
    nodes, and the bucket array the map holds by then (subgraphs 0 to `index`)."""
    count = len(_resource_tensors(model.subgraphs[index]))
    most = max(len(_resource_tensors(graph)) for graph in model.subgraphs[: index + 1])
    return count * glibc.usable(RESOURCE_INFO_NODE_BYTES) + _buckets(most)


def variable_maps_bytes(model: Model, index: int | None = None) -> tuple[int, int]:
    """(the delegate's resource map, its var-handle name map) in bytes once subgraph `index`
    is partitioned (None: the last, as setup leaves them): that subgraph's resources, the
    distinct names of subgraphs 0 to `index`."""
    last = len(model.subgraphs) - 1 if index is None else index
    keys = {
        handle_key(operator.options)
        for subgraph in model.subgraphs[: last + 1]
        for operator in subgraph.operators
        if operator.opcode == "VAR_HANDLE"
    }
    names = sum(
        glibc.usable(VAR_HANDLE_NODE_BYTES)
        + sum(glibc.usable(len(text.encode()) + 1) for text in key if len(text.encode()) > 15)
        for key in keys
    )
    return resource_copy_bytes(model, last), names + _buckets(len(keys))
