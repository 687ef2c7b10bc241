"""The moment the XNNPACK delegate builds a delegate kernel: what a LiteRT interpreter holds at
the end of each kernel's Init, the peak of `allocate_tensors()` with XNNPACK.

LiteRT applies the delegate at the first `AllocateTensors` (*tflite/core/interpreter.cc*:
`ApplyLazyDelegateProviders`). `DelegatePrepare` partitions the plan
(*tflite/graph_info.cc*: `PartitionGraphIntoIndependentNodeSubsets`) and
`ReplaceNodeSubsetsWithDelegateKernels` adds one node per delegated subset; each node's Init
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*: `Subgraph::Create`) defines an XNNPACK
subgraph, creates its runtime (operators and packed weights) and, until it returns, still holds:

* **the XNNPACK subgraph** (*src/subgraph.c*): its descriptor, its values array and its nodes
  array. `xnn_create_subgraph` reserves one value per external id (one per tensor the kernel
  uses); each new internal value or node past the reserve grows its array to
  max(min(2c, c + 512), c + 64) entries (`xnn_subgraph_reserve_values` / `_nodes`), realloc'd
  in place of the old one. The values array ends as long as the runtime's value array (every
  value the subgraph defined), the nodes array as long as the nodes the delegate defined (before
  the optimizer's fusions and clean-up compact them);
* **Init's own containers**: the sets of the kernel's inputs, outputs and external tensors, its
  vector of the context's tensors, and its tensor → value map (a copy stays in the kernel);
* **the partition** (`DelegatePrepare`'s node arrays, the subsets and their tensor vectors),
  **every subgraph's old dims arrays** that Prepare will replace (`held_dims`), and the Python
  call's and delegate application's small blocks: `kernel_transient`, the wheel's blocks as
  `tests/litert_heap_trace.py --build-moment` lists them.

XNNPACK also **fingerprints** each kind of packing once per process (`xnnpack_fingerprint`):
measure.py's first interpreter is the first to apply the delegate, so its Init pays them: when
what the kernel creates from that operator on is less than the dummy's, that moment is the peak.

Everything `allocate_tensors()` makes after the last Init (the planner's bookkeeping, the
builtin kernels' Prepare, the arenas, XNNPACK's reshape-time buffers, indirection buffers and
workspace) is not yet there, nor what later kernels' Inits make. The moment is the largest over
the kernels (sizes: this wheel's x86-64 build, `sizeof(struct xnn_value)` = 224,
`sizeof(struct xnn_node)` = 232, read off tests/litert_heap_trace.py)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import (
    glibc,
    heap_xnnpack,
    xnnpack_attention,
    xnnpack_blockwise,
    xnnpack_fingerprint,
    xnnpack_objects,
    xnnpack_packing,
    xnnpack_subgraphs,
    xnnpack_variables,
)
from arenalens.runtimes.litert.heap_xnnpack import NodeSubset, keeps_dims, node_subsets, partition
from arenalens.runtimes.litert.isa import IsaProfile, largest_request
from arenalens.runtimes.litert.libstdcxx import sized_bucket_count
from arenalens.runtimes.litert.prepare.driver import prepare_model
from arenalens.runtimes.litert.xnnpack_node_builds import NodeBuilds, subset_nodes
from arenalens.runtimes.litert.xnnpack_workspace import (
    BINARY_NODES,
    _Node,
    binary_activation,
    dynamically_quantized,
    hybrid_batch_matmul,
    transposes_a,
)

VALUE_BYTES = 224  # struct xnn_value
NODE_BYTES = 232  # struct xnn_node
SUBGRAPH_BYTES = 40  # struct xnn_subgraph
NODE_SUBSET_BYTES = 80  # tflite::NodeSubset (a kind and three vectors)
HASH_NODE_BYTES = 16  # an unordered_set<int> / unordered_map<int, uint32_t> node
# The Python call's argument blocks (pybind11's function_call) and Interpreter::
# ModifyGraphWithDelegateImpl's two small vectors: four blocks of at most 24 B.
CALL_BYTES = 4 * 24
# InterpreterBuilder's list of the resolver's delegate creators (one 32-byte request), freed
# once the lazy delegate is applied.
DELEGATE_CREATORS_BYTES = 40
XNN_EXTRA_BYTES = 16  # include/xnnpack.h: bytes a microkernel may read past an array
_GEMMS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")
# Operators whose XNNPACK node the optimizer reserves a value and a node for (subgraph.c).
_OPTIMIZER_RESERVES = frozenset((*BINARY_NODES, "BATCH_MATMUL"))


def grown(capacity: int, needed: int) -> int:
    """xnn_subgraph_reserve_values / _nodes: an array's capacity once `needed` entries are in."""
    while capacity < needed:
        capacity = max(min(2 * capacity, capacity + 512), capacity + 64)
    return capacity


def defined_nodes(subgraph: Subgraph, subset: NodeSubset) -> int:
    """Nodes the delegate defines for a subset before XNNPACK's optimizer: one per operator, a
    copy before a FULLY_CONNECTED that does not keep its dimensions, a convert before a hybrid
    spatial convolution, the clamp of a binary operator's fused activation."""
    count = 0
    for index in subset.operators:
        operator = subgraph.operators[index]
        count += 1
        if xnnpack_attention.replayed(subgraph, operator):
            count += 9  # its nodes (at least ten): the runtime's count is larger when so
        if operator.opcode == "FULLY_CONNECTED" and not keeps_dims(operator):
            count += 1
        if operator.opcode in ("CONV_2D", "TRANSPOSE_CONV") and dynamically_quantized(
            subgraph, operator
        ):
            count += 1
        if hybrid_batch_matmul(subgraph, operator):
            count += 1  # VisitBatchMatMulNode's convert of A
        if transposes_a(operator):
            count += 1  # VisitBatchMatMulNode's transpose of A (adj_x)
        count += 1 if binary_activation(operator) else 0
    return count


def subgraph_bytes(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None = None
) -> int:
    """The XNNPACK subgraph of a subset at the end of its kernel's Init (`builds`: the call's
    nodes, xnnpack_node_builds)."""
    external = len(xnnpack_objects.kernel_tensors(subgraph, subset))
    runtime_nodes, values = xnnpack_objects.runtime_counts(subgraph, subset, model, builds)
    # The optimizer reserves one more value and node before it looks at a node: for a
    # BATCH_MATMUL (rewrite_dequant_bmm_at) and for every binary elementwise node
    # (optimize_common_subgraphs_iter → widen_fp16_accumulators, whatever the operands): a full
    # array grows once more (held-out flow 600301:91, a lone MUL: 64 values, 14,336 B).
    reserve = int(
        any(
            subgraph.operators[index].opcode in _OPTIMIZER_RESERVES
            or xnnpack_attention.is_attention(subgraph.operators[index])
            for index in subset.operators
        )
    )
    nodes = grown(0, max(defined_nodes(subgraph, subset), runtime_nodes) + reserve)
    value_array = VALUE_BYTES * grown(external, values + reserve)
    return (
        glibc.usable(SUBGRAPH_BYTES)
        + (glibc.usable(value_array) if value_array else 0)
        + glibc.usable(NODE_BYTES * nodes)
    )


def _set_bytes(count: int) -> int:
    return count * glibc.usable(HASH_NODE_BYTES) + xnnpack_objects._buckets(count)


def _range_set_bytes(count: int) -> int:
    """An unordered_set<int> built from a range of `count` distinct ints: its nodes and the
    bucket array sized for them at once (`sized_bucket_count`), not grown by insertions."""
    buckets = sized_bucket_count(count)
    array = glibc.usable(xnnpack_objects.POINTER_BYTES * buckets) if buckets > 1 else 0
    return count * glibc.usable(HASH_NODE_BYTES) + array


def init_temporaries(subgraph: Subgraph, subset: NodeSubset) -> int:
    """Subgraph::Create's containers still live when it returns: its inputs and outputs sets
    (a resource output left out), the externals set (the outputs, the inputs without data,
    and each resource whose value it defines from a proxy), the vector of the context's
    tensors, the tensor → value map it copies."""
    tensors = xnnpack_objects.kernel_tensors(subgraph, subset)
    external_inputs, _ = xnnpack_objects._externals(subgraph, subset, tensors)
    proxied = xnnpack_variables.proxies(subgraph)
    resources = sum(1 for tensor in tensors if tensor in proxied)
    outputs = sum(
        1
        for tensor in subset.outputs
        if 0 <= tensor < len(subgraph.tensors) and subgraph.tensors[tensor].dtype.name != "RESOURCE"
    )
    return (
        _range_set_bytes(len(subset.inputs))
        + _set_bytes(outputs)
        + _set_bytes(outputs + external_inputs + resources)
        + _set_bytes(len(tensors))
        + glibc.usable(4 * len(subgraph.tensors))
    )


def partition_bytes(subgraph: Subgraph, subsets: list[NodeSubset]) -> int:
    """DelegatePrepare's arrays of the nodes it takes (two, each made for the whole execution
    plan: xnnpack_delegate.cc PrepareOpsToDelegate's `TfLiteIntArrayCreate(execution_plan->
    size)`, a 6-node plan's 28 B request in the trace of var10_341, however many it takes),
    the partition's subsets and each subset's node, input and output vectors (grown by
    push_back). The subsets' vector grows by one emplace_back more than it keeps (graph_info.cc
    Partition: BuildNodeSubset until the last one is empty, then pop_back), so its capacity
    is the power of two from len(subsets) + 1: 2 for one subset (160 B, cf11_3), 8 for four."""
    capacity = 1
    while capacity < len(subsets) + 1:
        capacity *= 2
    plan = len(subgraph.operators)
    total = 2 * xnnpack_objects._int_array(plan) + glibc.usable(NODE_SUBSET_BYTES * capacity)
    for subset, (inputs, outputs) in zip(subsets, _tensor_pushes(subgraph, subsets), strict=True):
        total += (
            xnnpack_objects._vector(len(subset.operators))
            + xnnpack_objects._vector(inputs)
            + xnnpack_objects._vector(outputs)
        )
    return total + CALL_BYTES


def _tensor_pushes(subgraph: Subgraph, subsets: list[NodeSubset]) -> list[tuple[int, int]]:
    """How many times graph_info.cc's UpdateNode pushes onto each subset's input and output
    vectors before Uniquefy (sort and erase: the capacity stays): each input reference of its
    nodes to a tensor not made in the subset, and for the subset that made it an output push,
    then one more per subgraph output it made (a PACK reading one tensor twice pushes twice)."""
    made = {
        tensor: position
        for position, subset in enumerate(subsets)
        for index in subset.operators
        for tensor in subgraph.operators[index].outputs
        if tensor >= 0
    }
    inputs = [0] * len(subsets)
    outputs = [0] * len(subsets)
    for position, subset in enumerate(subsets):
        for index in subset.operators:
            for tensor in subgraph.operators[index].inputs:
                if tensor < 0 or made.get(tensor) == position:
                    continue
                inputs[position] += 1
                if tensor in made:
                    outputs[made[tensor]] += 1
    for tensor in subgraph.outputs:
        if tensor in made:
            outputs[made[tensor]] += 1
    return list(zip(inputs, outputs, strict=True))


def replaced_dims(subgraph: Subgraph, subsets: list[NodeSubset]) -> set[int]:
    """The tensors whose dims array from Interpreter(...) Prepare replaces: each gets a new
    array (context->ResizeTensor), the old one freed. A delegate kernel's outputs but the
    resources (xnnpack_delegate.cc Prepare resizes its `outputs_`, which Create fills without
    them); the builtin kernels' outputs but those whose Prepare never resizes them
    (var_handle.cc: a persistent 4 B buffer; read_variable.cc: a rank-0 output made dynamic,
    any other left as it is)."""
    return {
        tensor
        for operator in prepared_operators(subgraph, subsets)
        for tensor in operator.outputs
        if tensor >= 0 and operator.opcode not in _UNRESIZED_OUTPUTS
    } | {
        t
        for subset in subsets
        if subset.delegated and _prepared(subgraph, subsets, subset)
        for t in subset.outputs
        if 0 <= t < len(subgraph.tensors) and subgraph.tensors[t].dtype.name != "RESOURCE"
    }


def prepared_operators(subgraph: Subgraph, subsets: list[NodeSubset]) -> list[Operator]:
    """The builtin operators allocate_tensors() prepares, in plan order: PrepareOpsStartingAt
    stops after a node with a dynamic output (a rank-0 READ_VARIABLE's, read_variable.cc), the
    rest wait for the first invoke (heap_replan)."""
    prepared: list[Operator] = []
    for subset in subsets:
        if subset.delegated:
            continue
        for index in subset.operators:
            operator = subgraph.operators[index]
            prepared.append(operator)
            if _dynamic_output(subgraph, operator):
                return prepared
    return prepared


def _dynamic_output(subgraph: Subgraph, operator: Operator) -> bool:
    return operator.opcode == "READ_VARIABLE" and any(
        0 <= t < len(subgraph.tensors) and not subgraph.tensors[t].shape for t in operator.outputs
    )


def _prepared(subgraph: Subgraph, subsets: list[NodeSubset], subset: NodeSubset) -> bool:
    """Whether a subset comes before the first builtin node with a dynamic output."""
    for earlier in subsets:
        if earlier is subset:
            return True
        if not earlier.delegated and any(
            _dynamic_output(subgraph, subgraph.operators[i]) for i in earlier.operators
        ):
            return False
    return True


# Builtin kernels whose Prepare never resizes their outputs (replaced_dims).
_UNRESIZED_OUTPUTS = frozenset({"VAR_HANDLE", "READ_VARIABLE"})


def held_dims(model: Model) -> int:
    """The old dims arrays every kernel's Init still holds: the delegate is applied to every
    subgraph (ApplyLazyDelegateProviders) before the primary subgraph's AllocateTensors
    prepares anything, so at each build moment no subgraph's dims are replaced yet. Prepare
    replaces each prepared subgraph's outputs (`replaced_dims`) and, in an IF's or WHILE's
    Prepare (*if.cc*, *while.cc*: CopyTensorsShapeAndType → Subgraph::ResizeInputTensor), each
    input of its children but those RemoveUnusedInputs drops (a WHILE condition's and a
    branch's inputs nothing reads): a child's dims array replaced once, however many nodes call
    it. Only the subgraphs allocate_tensors() prepares count (`prepared_subgraphs`): a
    signature's own subgraph or a CALL_ONCE init keeps its dims until it runs."""
    replaced: set[tuple[int, int]] = set()
    for index in prepared_subgraphs(model):
        graph = model.subgraphs[index]
        split = partition(graph, model)
        subsets = node_subsets(graph, split.delegated)
        replaced.update((graph.index, t) for t in replaced_dims(graph, subsets))
        for operator in prepared_operators(graph, subsets):
            if operator.opcode not in ("IF", "WHILE"):
                continue
            for position, child in enumerate(operator.called_subgraphs):
                if not 0 <= child < len(model.subgraphs):
                    continue
                called = model.subgraphs[child]
                body = operator.opcode == "WHILE" and position == 1
                read = {t for op in called.operators for t in op.inputs} | set(called.outputs)
                replaced.update((child, t) for t in called.inputs if t >= 0 and (body or t in read))
    return sum(
        glibc.usable(4 + 4 * len(model.subgraphs[index].tensors[tensor].shape))
        for index, tensor in replaced
        if 0 <= tensor < len(model.subgraphs[index].tensors)
    )


def replaced_temporaries(model: Model) -> int:
    """The empty temporaries arrays AddNodeWithParameters made (`TfLiteIntArrayCreate(0)`)
    that the builtin kernels allocate_tensors() prepares replace (a kernel that takes
    temporaries frees the node's array and makes its own: reduce.cc, rfft2d.cc, conv.cc ...):
    held at every build moment, freed before allocate_tensors() returns (two 24 B blocks in
    zen10_graph_881's trace, its RFFT2D's and REDUCE_PROD's). The replica's nodes with
    temporaries (prepare_model), of the operators `prepared_operators` gives."""
    replica = prepare_model(model)
    count = 0
    for index in prepared_subgraphs(model):
        graph = model.subgraphs[index]
        subsets = node_subsets(graph, partition(graph, model).delegated)
        prepared = {operator.index for operator in prepared_operators(graph, subsets)}
        count += sum(
            1 for node in replica[index].nodes if node.temporaries and node.operator in prepared
        )
    return count * glibc.usable(4)


def prepared_subgraphs(model: Model) -> list[int]:
    """The subgraphs allocate_tensors() prepares, in the order it reaches them: the primary
    one (interpreter.cc AllocateTensors: `primary_subgraph().AllocateTensors()`), then the
    children of each IF and WHILE a prepared subgraph's Prepare reaches (if.cc and while.cc
    Prepare call the branches', condition's and body's AllocateTensors). A CALL_ONCE's init
    (call_once.cc Prepare checks it only, Eval invokes it) and a signature's own subgraph are
    not prepared."""
    if not model.subgraphs:
        return []
    order = [0]
    for index in order:
        graph = model.subgraphs[index]
        subsets = node_subsets(graph, partition(graph, model).delegated)
        for operator in prepared_operators(graph, subsets):
            if operator.opcode not in ("IF", "WHILE"):
                continue
            for child in operator.called_subgraphs:
                if 0 <= child < len(model.subgraphs) and child not in order:
                    order.append(child)
    return order


def _packed(
    subgraph: Subgraph, operator: Operator, isa: IsaProfile, model: Model | None = None
) -> int:
    """The weights a kernel's Init packs for one operator (as
    heap_xnnpack_setup.xnnpack_parts counts them)."""
    if operator.opcode == "BATCH_MATMUL":
        packing = partial(xnnpack_packing.packed_weights_request, subgraph, operator)
        return xnnpack_packing.aligned_block(isa.largest_bound(packing))
    if operator.opcode not in _GEMMS or len(operator.inputs) < 2:
        return 0
    request = largest_request(xnnpack_packing.packing_of(model), subgraph, operator, isa)
    extra = isa.gemm_operator_extra_bytes
    return (xnnpack_packing.aligned_block(request) if request else 0) + extra


def kernel_init_bytes(
    subgraph: Subgraph,
    subset: NodeSubset,
    model: Model,
    isa: IsaProfile,
    builds: NodeBuilds | None = None,
) -> int:
    """What one delegate kernel's Init leaves: its node and maps, its runtime, its operators as
    created (their reshape-time buffers come with Prepare) and its packed weights."""
    made, _ = xnnpack_objects.operators_bytes(subgraph, subset, model, builds)
    return (
        xnnpack_objects.kernel_bytes(subgraph, subset, model)
        + xnnpack_objects.runtime_bytes(subgraph, subset, model, builds)
        + made
        - xnnpack_objects.reshape_bytes(subgraph, subset, model, builds)
        + _created_packing(subgraph, subset, subset.operators, model, isa, builds=builds)
    )


def _created(
    subgraph: Subgraph, subset: NodeSubset, model: Model, builds: NodeBuilds | None
) -> set[int]:
    """The operators of a subset the runtime creates: those XNNPACK's clean-up (dead nodes)
    and fusions keep."""
    return {node.operator for node in subset_nodes(subgraph, subset, model, builds)}


def _created_packing(
    subgraph: Subgraph,
    subset: NodeSubset,
    operators: tuple[int, ...] | list[int],
    model: Model,
    isa: IsaProfile,
    *,
    builds: NodeBuilds | None = None,
) -> int:
    """The weights packed for those of `operators` the runtime creates: a dead operator
    (its output read by nobody) is removed before creation and packs nothing."""
    created = _created(subgraph, subset, model, builds)
    return sum(
        _packed(subgraph, subgraph.operators[index], isa, model)
        for index in operators
        if index in created
    )


def scale_scratch(subgraph: Subgraph, operator: Operator, model: Model) -> int:
    """An 8-bit GEMM's per-channel scale scratch (fully-connected-nc.c: setup_scale_params,
    one float per output channel), held while its weights are packed and freed after."""
    blockwise_scales = xnnpack_blockwise.bf16_scales_request(model, subgraph, operator)
    if blockwise_scales:
        return glibc.usable(blockwise_scales)  # an int4 one's scales in bf16 (xnnpack_blockwise)
    convolution = xnnpack_packing._convolution(subgraph, operator)
    if convolution is None or convolution.microkernel != "gemm":
        return 0
    if convolution.kind == "FLOAT32" or dynamically_quantized(subgraph, operator):
        return 0
    return xnnpack_packing.aligned_block(4 * convolution.group_output_channels)


def _leading_node(subgraph: Subgraph, operator: Operator) -> int:
    """The objects of the node the delegate defines before an operator's own."""
    if operator.opcode == "FULLY_CONNECTED" and not keeps_dims(operator):
        return xnnpack_objects._operator_blocks("copy")
    if operator.opcode in ("CONV_2D", "TRANSPOSE_CONV") and dynamically_quantized(
        subgraph, operator
    ):
        return xnnpack_objects._operator_blocks("unary")
    return 0


def _created_from(
    subgraph: Subgraph,
    subset: NodeSubset,
    position: int,
    model: Model,
    isa: IsaProfile,
    *,
    builds: NodeBuilds | None = None,
) -> int:
    """What a kernel's runtime creates from its operator at `position` on (their objects as
    created and their packed weights), which a moment before them does not yet hold."""
    rest = NodeSubset(subset.operators[position:], True, subset.inputs, subset.outputs)
    if not rest.operators:
        return 0
    made, _ = xnnpack_objects.operators_bytes(subgraph, rest, model, builds)
    return (
        made
        - xnnpack_objects.reshape_bytes(subgraph, rest, model, builds)
        + _created_packing(subgraph, subset, rest.operators, model, isa, builds=builds)
    )


# run_subgraph_to_make_lut's runtime (subgraph.c) besides its operators: the runtime's own
# workspace handle (xnn_create_runtime_v4 with none given: struct xnn_workspace) and, while
# xnn_plan_memory runs, the allocation tracker's usage records, one per value and per
# operator (memory-planner.c: struct xnn_usage_record).
LUT_WORKSPACE_HANDLE_BYTES = 32
USAGE_RECORD_BYTES = 32
# xnn_plan_value_allocation_tracker's scratch, freed before the workspace is made: a pointer
# per id it plans and a live block per value it places.
SORTED_USAGE_BYTES = 8
MEMORY_BLOCK_BYTES = 16


def lut_runtime_bytes(subgraph: Subgraph, lut: _Node) -> int:
    """The runtime XNNPACK makes to compute a LUT (subgraph.c run_subgraph_to_make_lut:
    xnn_create_runtime_v4 over the chain's copied subgraph, reshaped to 256 entries), at its
    most, freed once the table is filled: its struct, operator data per node, a runtime value
    per value copied (the nodes dropped past the last 8-bit output keep theirs), its workspace
    handle, each node's unary operator (with its own table where init_op makes one), and while
    the memory is planned the tracker's records with the larger of the planner's scratch and
    the workspace. With every value 8-bit each node runs in place: one 256-byte value; else
    each value between two nodes as 256 floats (an upper bound)."""
    run = lut.chain[: lut.folded + 1]  # the nodes copied past the last 8-bit output are dropped
    nodes, values = len(run), len(lut.chain) + 1  # values: the input and each copied output
    operators = sum(
        xnnpack_objects._operator_blocks("unary")
        + (
            xnnpack_packing.aligned_block(xnnpack_objects.LUT_BYTES)
            if xnnpack_objects.lookup_table(subgraph, node)
            else 0
        )
        for node in run
    )
    ids = values + nodes
    if _eight_bit_chain(subgraph, run):
        between, placed = 256, 1
    else:
        between, placed = (nodes - 1) * (4 * 256 + XNN_EXTRA_BYTES), nodes - 1
    workspace = xnnpack_packing.aligned_block(between + 2 * XNN_EXTRA_BYTES)
    scratch = glibc.usable(SORTED_USAGE_BYTES * ids) + glibc.usable(MEMORY_BLOCK_BYTES * placed)
    return (
        glibc.usable(xnnpack_objects.RUNTIME_BYTES)
        + glibc.usable(xnnpack_objects.OPERATOR_DATA_BYTES * nodes)
        + glibc.usable(xnnpack_objects.RUNTIME_VALUE_BYTES * values)
        + glibc.usable(LUT_WORKSPACE_HANDLE_BYTES)
        + operators
        + glibc.usable(USAGE_RECORD_BYTES * ids)
        + max(workspace, scratch)
    )


def _eight_bit_chain(subgraph: Subgraph, run: tuple[_Node, ...]) -> bool:
    """Whether every model tensor a LUT's chain reads or writes is 8-bit."""
    tensors = {t for node in run for t in (*node.inputs, *node.outputs)}
    return all(
        subgraph.tensors[t].dtype.name in ("INT8", "UINT8")
        for t in tensors
        if 0 <= t < len(subgraph.tensors)
    )


def delegate_kernels(model: Model) -> list[tuple[Subgraph, NodeSubset, int]]:
    """Every subgraph's delegate kernels, in the order the delegate is applied
    (xnnpack_subgraphs), each with what is held meanwhile besides its own XNNPACK subgraph and
    Init's containers: its subgraph's partition (`partition_bytes`), every subgraph's old dims
    (`held_dims`), the resolver's delegate creators and the variable maps so far."""
    kernels: list[tuple[Subgraph, NodeSubset, int]] = []
    settled = sum(xnnpack_objects.variable_maps_bytes(model))
    dims = held_dims(model)
    temporaries = replaced_temporaries(model)
    for graph in model.subgraphs:
        split = partition(graph, model)
        subsets = node_subsets(graph, split.delegated)
        partitioned = partition_bytes(graph, subsets)
        partitioned += dims + temporaries + DELEGATE_CREATORS_BYTES
        # The delegate's variable maps as they stand while this subgraph's kernels are built
        # (its resources, the names so far), where setup's figure holds the last subgraph's.
        partitioned += sum(xnnpack_objects.variable_maps_bytes(model, graph.index)) - settled
        kernels.extend((graph, subset, partitioned) for subset in subsets if subset.delegated)
    return kernels


def kernel_transient(
    subgraph: Subgraph,
    subset: NodeSubset,
    shared: int,
    model: Model,
    builds: NodeBuilds | None = None,
) -> int:
    """What a kernel's build moment holds that allocate_tensors() frees before it returns: its
    XNNPACK subgraph, Init's containers and `shared` (delegate_kernels)."""
    held = subgraph_bytes(subgraph, subset, model, builds)
    return held + init_temporaries(subgraph, subset) + shared


def build_moment(
    model: Model,
    after_setup: int,
    late: int,
    isa: IsaProfile,
    builds: NodeBuilds | None = None,
    *,
    conversions: Mapping[tuple[int, int], int] | None = None,
) -> int:
    """The most an interpreter holds while the delegate builds its kernels (`replayed_moment`)."""
    return replayed_moment(model, after_setup, late, isa, builds, conversions=conversions)[0]


def replayed_moment(
    model: Model,
    after_setup: int,
    late: int,
    isa: IsaProfile,
    builds: NodeBuilds | None = None,
    *,
    conversions: Mapping[tuple[int, int], int] | None = None,
) -> tuple[int, bool]:
    """The most an interpreter holds while the delegate builds its kernels, and whether it is
    replayed (False where a bound sets it: a LUT's runtime whose chain holds values that are
    not 8-bit, `lut_runtime_bytes`, or an int4 per-channel kind's fingerprint dummy,
    xnnpack_qc4w): `after_setup` less
    `late` (what allocate_tensors makes after the last Init: arenas, planner and kernel
    setup, indirection buffers, workspace) and less what later kernels' Inits make, plus the
    kernel's XNNPACK subgraph and Init's temporaries, the largest over the kernels; and at
    each kind's first fingerprint (a convolution's, or a transposed convolution's on the
    ISA's configurations), what the kernel holds before that operator is created, plus the
    fingerprint's blocks. `conversions` (xnnpack_float16): an operator XNNPACK creates from
    float16 weights holds their float32 copies while it is created, its fingerprint too."""
    kernels = delegate_kernels(model)
    conversions = conversions or {}
    # Each subset run's nodes, built once for this call (`builds`: the caller's, for `model`).
    builds = builds if builds is not None and builds.model is model else NodeBuilds(model)
    # A CALL_ONCE init's reshape-time blocks are made at its first Eval, not in setup's figure.
    first_eval = xnnpack_subgraphs.first_eval_inits(model, heap_xnnpack.delegated_view(model))
    reshaped = sum(
        xnnpack_objects.reshape_bytes(graph, subset, model, builds)
        for graph, subset, _ in kernels
        if graph.index not in first_eval
    )
    # The empty temporaries arrays Prepare replaces are held until then: in the transient
    # (delegate_kernels' shared bytes), not in what setup keeps.
    before = after_setup - late - reshaped - replaced_temporaries(model)
    inits = [kernel_init_bytes(graph, subset, model, isa, builds) for graph, subset, _ in kernels]
    largest, bounded = 0, 0  # the largest moment; the largest one counted at a bound
    fingerprinted: set[tuple[object, ...]] = set()
    for position, (subgraph, subset, shared) in enumerate(kernels):
        later = sum(inits[position + 1 :])
        # Only operators that survive XNNPACK's clean-up and fusions are created.
        nodes = subset_nodes(subgraph, subset, model, builds)
        created = {node.operator for node in nodes}
        held = subgraph_bytes(subgraph, subset, model, builds) + init_temporaries(subgraph, subset)
        transient = kernel_transient(subgraph, subset, shared, model, builds)
        largest = max(largest, before - later + transient)
        luts = [node for node in nodes if node.kind == "lut"]
        if luts:
            # Each LUT is computed by a runtime of its own while the subgraph is optimized,
            # in order, before this kernel's runtime, operators and packing exist; the
            # tables made so far (and its own) are held meanwhile.
            pending = _created_from(subgraph, subset, 0, model, isa, builds=builds)
            pending += xnnpack_objects.runtime_bytes(subgraph, subset, model, builds)
            moment = before - later + held + shared - pending
            for made, lut in enumerate(luts, start=1):
                tables = made * glibc.usable(xnnpack_objects.LUT_BYTES)
                at_lut = moment + tables + lut_runtime_bytes(subgraph, lut)
                largest = max(largest, at_lut)
                if not _eight_bit_chain(subgraph, lut.chain[: lut.folded + 1]):
                    bounded = max(bounded, at_lut)
        for place, index in enumerate(subset.operators):
            operator = subgraph.operators[index]
            if index not in created:
                continue
            deconvolution = xnnpack_fingerprint.deconvolution_fingerprint(
                subgraph, operator, isa, fingerprinted
            )
            if deconvolution:
                pending = _created_from(subgraph, subset, place, model, isa, builds=builds)
                pending -= _leading_node(subgraph, operator)
                moment = before - later + held + shared - pending + deconvolution
                largest = max(largest, moment)
            converted = conversions.get((subgraph.index, index), 0)
            if converted:
                pending = _created_from(subgraph, subset, place + 1, model, isa, builds=builds)
                largest = max(largest, before - later + held + shared - pending + converted)
            scales = scale_scratch(subgraph, operator, model)
            if scales:
                pending = _created_from(subgraph, subset, place + 1, model, isa, builds=builds)
                largest = max(largest, before - later + held + shared - pending + scales)
            kind = xnnpack_fingerprint.fingerprint_kind(subgraph, operator, isa.replay_tiles)
            if kind is None or kind in fingerprinted:
                continue
            fingerprinted.add(kind)
            # Its own leading node (the copy before a FULLY_CONNECTED that does not keep its
            # dimensions, a hybrid convolution's convert) is created before it fingerprints.
            pending = _created_from(subgraph, subset, place, model, isa, builds=builds)
            pending -= _leading_node(subgraph, operator)
            scratch = xnnpack_fingerprint.fingerprint_bytes(subgraph, operator, isa.replay_tiles)
            moment = before - later + held + shared - pending + scratch + converted
            largest = max(largest, moment)
            if kind[1].startswith("INT4/qc4w"):  # an int4 per-channel dummy: a bound
                bounded = max(bounded, moment)
    return largest, bounded == 0 or bounded < largest


# What allocate_tensors() makes after the delegate's last kernel Init (heap parts).
LATE_PARTS = (
    "arenas",
    "planner and kernel setup",
    "XNNPACK indirection buffers",
    "XNNPACK workspace",
)
# The bound's late parts (what the bound took as made after the subgraph is freed).
_BOUND_LATE_PARTS = ("arenas", "XNNPACK indirection buffers", "XNNPACK workspace")


def build_moment_bytes(
    model: Model,
    setup: Mapping[str, int],
    replayed: xnnpack_objects.DelegateObjects | None,
    exact: bool,
    isa: IsaProfile,
    *,
    delegate_bytes: int,
    builds: NodeBuilds | None = None,
    conversions: Mapping[tuple[int, int], int] | None = None,
) -> tuple[int, bool]:
    """The heap at the delegate's build moment, from the after-setup parts (`setup`: name →
    bytes), and whether it is replayed: on a replayed ISA (the measuring machine's, a first
    Zen's) where every object and late part is (`exact`) and no LUT runtime at its bound
    sets it (`replayed_moment`); else
    the old bound (the largest subset's subgraph, the per-object bound's room over the
    replay); other ISAs pack and fingerprint to other tiles, measured under qemu-user
    against the bound: the larger of the two. A transposed convolution's fingerprint is
    replayed at the operator's creation on the host (build_moment); elsewhere, and in the
    bound, its largest excess over the operator (heap_xnnpack.fingerprint_transient) is added
    to the whole moment."""
    after_setup = sum(setup.values())
    late = sum(setup.get(name, 0) for name in LATE_PARTS)
    bound = delegate_bytes + sum(
        heap_xnnpack.objects_bound(subgraph, heap_xnnpack.partition(subgraph, model))
        for subgraph in model.subgraphs
    )
    room = max(bound - replayed.total, 0) if replayed is not None else 0
    deconvolution = heap_xnnpack.fingerprint_transient(model, isa.xnnpack)
    early = after_setup - sum(setup.get(name, 0) for name in _BOUND_LATE_PARTS)
    converted = max(conversions.values(), default=0) if conversions else 0
    bounded = early + heap_xnnpack.subgraph_bytes(model) + room + deconvolution + converted
    if not exact:
        return bounded, False
    if not isa.replayed:
        moment = build_moment(model, after_setup, late, isa, builds, conversions=conversions)
        return max(moment + deconvolution, bounded), False
    # On a replayed ISA a transposed convolution's fingerprint is replayed where it happens.
    return replayed_moment(model, after_setup, late, isa, builds, conversions=conversions)
