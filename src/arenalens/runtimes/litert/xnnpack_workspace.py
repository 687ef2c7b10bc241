"""XNNPACK's workspace: its memory planner over the values inside each delegated subset, from
XNNPACK's sources (*src/memory-planner.c, src/runtime.c: xnn_plan_memory and
optimize_tensor_allocation_for_in_place_operations, src/subgraph.c: xnn_subgraph_fusion and
the clamp merge*).

The runtime's nodes are the subset's operators, with a static reshape (a copy) before each
fully connected operator that does not keep its input's dimensions; a zero spatial PAD whose
output only a VALID convolution reads is folded into it; dead nodes are removed (a value
nothing reads clears, and its producer goes when that is its only output, recursively); a clamp
(RELU, RELU6, RELU_N1_TO_1) is folded into a clamping producer whose output only it reads.
Every value internal to the subset is one usage record of `round_up(round_up(bytes, 16), 64)`
bytes live from its first to its last node; an element-wise, copy or softmax node's output
takes its first input's record when both are internal, each has one consumer and their sizes
are equal. Records are placed largest first at the smallest gap that fits among those whose
node ranges overlap (xnnpack_planner); the workspace is the end of the highest record plus
2 × 16 bytes, one 64-aligned block shared by the delegate's runtimes (the largest plan).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import xnnpack_attention, xnnpack_blockwise, xnnpack_qc4w
from arenalens.runtimes.litert.heap_xnnpack import (
    BINARY_FLOAT,
    BINARY_QUANTIZED,
    UNARY_FLOAT,
    UNARY_QUANTIZED,
    NodeSubset,
    int_values,
    keeps_dims,
    node_subsets,
)
from arenalens.runtimes.litert.isa import IsaProfile
from arenalens.runtimes.litert.xnnpack_blockwise import WORKSPACE_ESTIMATE
from arenalens.runtimes.litert.xnnpack_packing import (
    HOST_TILES,
    QD8_ROW_PARAMS_BYTES,
    XNN_ALLOCATION_ALIGNMENT,
    XNN_EXTRA_BYTES,
    XnnpackTiles,
    batch_matmul_workspace,
    hybrid_lhs_bytes,
    round_up,
)
from arenalens.runtimes.litert.xnnpack_planner import MemoryPlan, plan_records

XNN_EXTRA_QUANTIZATION_PARAMS = 15  # include/xnnpack.h: qparams read past the last row
QUANTIZATION_PARAMS_BYTES = 8  # struct xnn_quantization_params: zero point and scale


def data_and_weights(subgraph: Subgraph, operator: Operator) -> tuple[Tensor, Tensor] | None:
    """An operator's data and weights tensors (its first two inputs; a TRANSPOSE_CONV's third
    and second), if it has both."""
    data = 2 if operator.opcode == "TRANSPOSE_CONV" else 0
    if len(operator.inputs) <= max(data, 1) or min(operator.inputs[data], operator.inputs[1]) < 0:
        return None
    return subgraph.tensors[operator.inputs[data]], subgraph.tensors[operator.inputs[1]]


# Operators the delegate runs on dynamically quantized inputs when their data is float and
# their weights int8; a convolution's and a transposed convolution's rows are whole images.
HYBRID_OPERATORS = ("FULLY_CONNECTED", "CONV_2D", "TRANSPOSE_CONV")


def dynamically_quantized(subgraph: Subgraph, operator: Operator) -> bool:
    """A FULLY_CONNECTED, CONV_2D or TRANSPOSE_CONV with a float input and constant int8
    weights: the delegate runs it on dynamically quantized inputs (Visit*Node:
    dynamically_quantized)."""
    pair = data_and_weights(subgraph, operator)
    if pair is not None and pair[1].dtype.name == "INT4":
        # An int4 FULLY_CONNECTED's too (xnnpack_blockwise: the partition takes only those).
        return xnnpack_qc4w.int4_weights(subgraph, operator) is not None
    return (
        operator.opcode in HYBRID_OPERATORS
        and pair is not None
        and pair[0].dtype.name == "FLOAT32"
        and pair[1].dtype.name == "INT8"
        and pair[1].has_data
    )


def hybrid_batch_matmul(subgraph: Subgraph, operator: Operator) -> bool:
    """A BATCH_MATMUL with a float A and an int8 B (constant or not): the delegate quantizes A
    at run time (a qdint8 value) and gives B per-column scales (a channel-wise value)."""
    pair = data_and_weights(subgraph, operator)
    return (
        operator.opcode == "BATCH_MATMUL"
        and pair is not None
        and pair[0].dtype.name == "FLOAT32"
        and pair[1].dtype.name == "INT8"
    )


def hybrid_gemm(subgraph: Subgraph, operator: Operator) -> bool:
    """A hybrid FULLY_CONNECTED, or a hybrid 1×1 CONV_2D XNNPACK runs as a GEMM: its
    quantized input is packed inline (xnnpack_packing.hybrid_lhs_bytes)."""
    return dynamically_quantized(subgraph, operator) and (
        operator.opcode == "FULLY_CONNECTED"
        or (operator.opcode == "CONV_2D" and _pointwise(operator, subgraph))
    )


def hybrid_gemm_workspace(
    subgraph: Subgraph,
    operator: Operator,
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
    model: Model | None = None,
) -> int:
    """The operator workspace of a hybrid GEMM: its rows (the input's pixels or batch rows) by
    its depth (the weights' last dimension), packed inline. An int4 blockwise one packs them
    to its own GEMM's tile where `tiles` name it (fully-connected-nc.c: the per-thread
    workspace is xnn_pack_lh_fx_qd8_packed_size(mr, k, mr, kr, sr) of the qb4w configuration,
    traced on AVX2: 3 rows of 8 + round_up(k, 8) bytes)."""
    data, weights = subgraph.tensors[operator.inputs[0]], subgraph.tensors[operator.inputs[1]]
    depth = weights.shape[-1] if weights.shape else 1
    rows = data.element_count // max(depth, 1)
    columns = weights.shape[0] if weights.shape else 1
    gemm = None
    if xnnpack_qc4w.int4_weights(subgraph, operator) is not None:
        per_channel = xnnpack_qc4w.per_channel_int4(model, subgraph, operator) is not None
        if per_channel and tiles.qc4w_gemm is None:
            # Its GEMM not named on this CPU (arm64: KleidiAI's qp8 one packs its own rows):
            # at least 16 rows a thread of the depth to 32 and 8 B (xnnpack_qc4w).
            row = QD8_ROW_PARAMS_BYTES + round_up(depth, xnnpack_qc4w.UNNAMED_DEPTH)
            packed = max(threads, 1) * max(xnnpack_qc4w.UNNAMED_ROWS, round_up(rows, 16)) * row
            return max(packed, hybrid_lhs_bytes(rows, depth, columns, threads=threads, tiles=tiles))
        gemm = tiles.qc4w_gemm if per_channel else tiles.qb4w_gemm
    return hybrid_lhs_bytes(rows, depth, columns, threads=threads, tiles=tiles, gemm=gemm)


def _pointwise(operator: Operator, subgraph: Subgraph) -> bool:
    """A 1×1 unit-stride convolution of one group without padding, which XNNPACK runs as a
    GEMM (subgraph/convolution-2d.c: groups == 1)."""
    weights = subgraph.tensors[operator.inputs[1]]
    data = subgraph.tensors[operator.inputs[0]]
    options = operator.options
    strides = (int(options.get("stride_w", 1) or 1), int(options.get("stride_h", 1) or 1))
    one_group = not data.shape or not weights.shape or data.shape[-1] == weights.shape[-1]
    return (
        len(weights.shape) == 4 and weights.shape[1:3] == (1, 1) and strides == (1, 1) and one_group
    )


def _rounded(nbytes: int) -> int:
    return round_up(round_up(nbytes, XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT)


def dynamic_quantized_bytes(tensor: Tensor, non_batch_dims: int = 1) -> int:
    """xnn_plan_memory for a qdint8 value: its int8 data, then its per-row quantization
    parameters and row sums, each with XNN_EXTRA_QUANTIZATION_PARAMS more, each rounded. A
    row spans the last `non_batch_dims` dimensions (a fully connected operator's input: 1; a
    convolution's: 3, one row per image)."""
    rows = 1
    for dim in tensor.shape[: max(len(tensor.shape) - non_batch_dims, 0)]:
        rows *= dim
    return (
        _rounded(tensor.element_count)
        + _rounded((rows + XNN_EXTRA_QUANTIZATION_PARAMS) * QUANTIZATION_PARAMS_BYTES)
        + _rounded((rows + XNN_EXTRA_QUANTIZATION_PARAMS) * 4)
    )


def value_bytes(tensor: Tensor) -> int:
    """xnn_get_rounded_size: bytes rounded to XNN_EXTRA_BYTES, then to the alignment."""
    return round_up(round_up(tensor.nbytes, XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT)


def workspace_request(
    subgraph: Subgraph,
    delegated: Sequence[int],
    model: Model | None = None,
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
) -> int:
    """Bytes of the workspace the runtimes of one subgraph ask for (0: no internal values) on
    a CPU that selects `tiles` (operands packed at run time pad to its GEMM tiles).

    Each delegate kernel plans its own runtime over the values inside its subset (its inputs
    and outputs are LiteRT's tensors); they share the delegate's workspace, which grows to the
    largest plan (`initialize_workspace_values`)."""
    subsets = [subset for subset in node_subsets(subgraph, delegated) if subset.delegated]
    return max((subset_workspace(subgraph, s, model, threads, tiles) for s in subsets), default=0)


def subset_workspace(
    subgraph: Subgraph,
    subset: NodeSubset,
    model: Model | None = None,
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
) -> int:
    """The workspace one delegate kernel's plan asks for (0: nothing to plan): its memory
    plan's end plus 2 × XNN_EXTRA_BYTES (`initialize_workspace_values`)."""
    boundary = set(subset.inputs) | set(subset.outputs)
    nodes = _nodes(subgraph, subset.operators, boundary, model, tiles=tiles)
    planned = _plan_nodes(subgraph, nodes, boundary, threads, tiles, model=model).arena
    return planned + 2 * XNN_EXTRA_BYTES if planned else 0


def subset_plan(
    subgraph: Subgraph,
    subset: NodeSubset,
    model: Model | None = None,
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
) -> MemoryPlan:
    """One delegate kernel's memory plan (xnn_plan_memory), for its planner's scratch."""
    boundary = set(subset.inputs) | set(subset.outputs)
    nodes = _nodes(subgraph, subset.operators, boundary, model, tiles=tiles)
    return _plan_nodes(subgraph, nodes, boundary, threads, tiles, model=model)


def rows_estimate(model: Model, isa: IsaProfile) -> str:
    """The workspace's label when an int4 blockwise GEMM packs several rows of input and the
    tiles the ISA's figures are replayed with do not name its own (they are then packed as an
    8-bit hybrid GEMM's: an estimate); empty otherwise."""
    named = isa.replay_tiles.qb4w_gemm is not None
    blockwise = "" if named or not xnnpack_blockwise.packs_rows(model) else WORKSPACE_ESTIMATE
    unnamed = any(tiles.qc4w_gemm is None for tiles in isa.bounding_tiles)
    return blockwise + (xnnpack_qc4w.WORKSPACE_ESTIMATE if unnamed and _per_channel(model) else "")


def _per_channel(model: Model) -> bool:
    return any(
        xnnpack_qc4w.per_channel_int4(model, subgraph, operator) is not None
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    )


_CLAMPS = ("RELU", "RELU6", "RELU_N1_TO_1")  # the delegate defines them as clamp nodes
_UNARY = frozenset(
    (*UNARY_FLOAT, *UNARY_QUANTIZED, "ELU", "LEAKY_RELU", "QUANTIZE", "DEQUANTIZE")
) - set(_CLAMPS)
# Operators the delegate defines as binary elementwise nodes (PRELU: xnn_binary_prelu).
BINARY_NODES = frozenset((*BINARY_FLOAT, *BINARY_QUANTIZED, "PRELU"))
_BINARY = BINARY_NODES
_RESHAPES = ("RESHAPE", "EXPAND_DIMS")
# Nodes a following clamp folds into (subgraph.c: has_clamp).
_CLAMPING = (
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Node:
    kind: str  # clamp | unary | binary | copy | softmax | the opcode
    inputs: list[int]
    outputs: list[int]
    operator: int  # the model's operator it comes from
    sizes: dict[int, int] = field(default_factory=dict)  # planned bytes of values it adds
    folded: int = 0  # nodes fused into it that keep their operator-data slots (a LUT's chain)
    workspace: int = 0  # its operator workspace, where not its operator's (an attention's)
    chain: tuple[_Node, ...] = ()  # a LUT's: the nodes XNNPACK copied for it (`folded` + 1 run)


_BINARY_WITH_ACTIVATION = ("ADD", "SUB", "MUL", "DIV")  # the delegate passes their range


def binary_activation(operator: Operator) -> bool:
    """A binary operator with a fused activation, which XNNPACK applies as a clamp node."""
    if operator.opcode not in _BINARY_WITH_ACTIVATION:
        return False
    return operator.options.get("fused_activation_function", 0) not in (0, None, "NONE")


def transposes_a(operator: Operator) -> bool:
    """A BATCH_MATMUL with adj_x, whose A the delegate transposes in a node before it."""
    return operator.opcode == "BATCH_MATMUL" and bool(operator.options.get("adj_x", False))


def _nodes(
    subgraph: Subgraph,
    run: Sequence[int],
    boundary: set[int],
    model: Model | None = None,
    *,
    fuse: bool = True,
    tiles: XnnpackTiles = HOST_TILES,
) -> list[_Node]:
    """The runtime's nodes for a run. The delegate defines a copy (static reshape) before each
    FULLY_CONNECTED that does not keep its input's dimensions, whose output is a new internal
    value of the input's bytes (numbered after the model's tensors); XNNPACK's optimizer folds
    a zero spatial PAD into the convolution after it, removes dead nodes, and folds a clamp
    into a clamping producer whose output only the clamp reads (`fuse=False`: the nodes before
    the fusions)."""
    nodes: list[_Node] = []
    fresh = len(subgraph.tensors)
    for index in run:
        operator = subgraph.operators[index]
        inputs = [tensor for tensor in operator.inputs if tensor >= 0]
        outputs = [tensor for tensor in operator.outputs if tensor >= 0]
        if operator.opcode == "VAR_HANDLE":
            continue  # it materialises nothing (VisitVarHandleNode)
        if model is not None and xnnpack_attention.replayed(subgraph, operator):
            steps, fresh = xnnpack_attention.attention_nodes(
                model, subgraph, operator, fresh, tiles
            )
            nodes.extend(
                _Node(step.kind, step.inputs, step.outputs, index, step.sizes, 0, step.workspace)
                for step in steps
            )
            continue
        if operator.opcode == "ASSIGN_VARIABLE":
            # A copy of the value into the resource's value (VisitAssignVariableNode).
            nodes.append(_Node("copy", inputs[1:2], inputs[:1], index))
            continue
        if operator.opcode == "TRANSPOSE_CONV" and len(operator.inputs) > 2:
            # Its data is its third input: first here, as every other operator's.
            inputs = [operator.inputs[2], *(t for t in inputs if t != operator.inputs[2])]
        if operator.opcode == "FULLY_CONNECTED" and inputs and not keeps_dims(operator):
            nodes.append(_Node("copy", [inputs[0]], [fresh], index))
            inputs = [fresh, *inputs[1:]]
            fresh += 1
        if transposes_a(operator) and inputs:
            # XNNPACK has no transposed A: the delegate defines a value of A's dimensions and
            # bytes and a static transpose into it (VisitBatchMatMulNode), read by the node.
            nodes.append(_Node("TRANSPOSE", [inputs[0]], [fresh], index))
            inputs = [fresh, *inputs[1:]]
            fresh += 1
        sizes: dict[int, int] = {}
        if dynamically_quantized(subgraph, operator) and not hybrid_gemm(subgraph, operator):
            # The delegate's dynamically quantized input (qdint8, its per-row parameters and
            # row sums) of a spatial or transposed convolution comes from a convert node
            # before it; a GEMM's is packed inline, in its operator workspace (_plan_nodes).
            data = operator.inputs[2 if operator.opcode == "TRANSPOSE_CONV" else 0]
            quantized = dynamic_quantized_bytes(subgraph.tensors[data], 3)
            nodes.append(_Node("convert", inputs[:1], [fresh], index, {fresh: quantized}))
            inputs = [fresh, *inputs[1:]]
            fresh += 1
        if hybrid_batch_matmul(subgraph, operator) and not subgraph.tensors[inputs[1]].has_data:
            # With a B computed at run time, the delegate defines B's channel-wise value with
            # no external id (VisitBatchMatMulNode: xnn_define_channelwise_quantized_tensor_value_v2
            # with XNN_INVALID_VALUE_ID), so it is a value internal to the runtime, B's int8
            # bytes, live at the node. A's convert is folded into the operator as with a
            # constant B (optimize_packed_lhs): A is packed into the operator's workspace
            # after the packed B (xnnpack_packing.batch_matmul_workspace), no qdint8 value.
            sizes[fresh] = subgraph.tensors[inputs[1]].nbytes
            inputs = [*inputs[:1], fresh, *inputs[2:]]
            fresh += 1
        kind = operator.opcode
        if kind in _CLAMPS:
            kind = "clamp"
        elif kind in _UNARY:
            kind = "unary"
        elif kind in _BINARY:
            kind = "binary"
            if binary_activation(operator) and outputs:
                # xnn_define_binary with an output range (xnn_insert_clamp_node): the node
                # writes a new internal value of its output's size and a clamp node copies it
                # into the output, clamped (not fused: a binary node has no clamp of its own).
                output_bytes = subgraph.tensors[outputs[0]].nbytes
                nodes.append(_Node(kind, inputs, [fresh], index, {fresh: output_bytes}))
                nodes.append(_Node("clamp", [fresh], outputs, index))
                fresh += 1
                continue
        elif kind in _RESHAPES or kind == "READ_VARIABLE":
            kind, inputs = "copy", inputs[:1]
        elif kind == "SOFTMAX":
            kind = "softmax"
        nodes.append(_Node(kind, inputs, outputs, index, sizes))
    if model is not None and fuse:
        _fuse_pads(subgraph, nodes, boundary, model)
    resources = resource_values(subgraph, nodes)
    _rename_resource_writes(nodes, resources, fresh)
    # A resource's value carries its accesses' external flags: never cleared as unread.
    _drop_dead_nodes(nodes, boundary | resources)
    if fuse:
        fuse_copies(subgraph, nodes, boundary | resources)
        fuse_unary_chains(subgraph, nodes, boundary | resources)
        _fuse_clamps(nodes, boundary)
        if _sum_squares(subgraph, nodes):
            _drop_dead_nodes(nodes, boundary | resources)
    return nodes


_SQUARE_REDUCTIONS = ("SUM", "MEAN")  # static_sum, static_mean


def _square(subgraph: Subgraph, node: _Node) -> bool:
    """A square node after optimize_common_subgraphs_mul_to_sqr: SQUARE, or a MUL of a value
    by itself (one value id twice) without a fused activation (which would put a clamp node
    between it and its reader)."""
    operator = subgraph.operators[node.operator]
    if node.kind == "unary" and operator.opcode == "SQUARE":
        return True
    return (
        node.kind == "binary"
        and operator.opcode == "MUL"
        and len(node.inputs) == 2
        and node.inputs[0] == node.inputs[1]
        and operator.options.get("fused_activation_function", 0) in (0, "NONE", None)
    )


def _sum_squares(subgraph: Subgraph, nodes: list[_Node]) -> bool:
    """optimize_common_subgraphs_reduce_sum_to_square (subgraph.c, after the fusions): a float
    SUM or MEAN whose input a square node makes reads the square's input instead (a
    reduce_sum_squared / reduce_mean_squared node), whatever else reads the square; the square
    then goes with the dead nodes when nothing else reads it, and its value leaves the
    workspace. Returns whether anything changed."""
    producers = {node.outputs[0]: node for node in nodes if len(node.outputs) == 1}
    changed = False
    for node in nodes:
        if node.kind not in _SQUARE_REDUCTIONS or not node.inputs:
            continue
        source = node.inputs[0]
        producer = producers.get(source)
        if producer is None or not _square(subgraph, producer):
            continue
        if source >= len(subgraph.tensors) or subgraph.tensors[source].dtype.name != "FLOAT32":
            continue
        node.inputs[0] = producer.inputs[0]
        changed = True
    return changed


_VARIABLE_COPIES = ("READ_VARIABLE", "ASSIGN_VARIABLE")  # xnn_define_copy (not a reshape)


def variable_copy(subgraph: Subgraph, node: _Node) -> bool:
    """A copy node of XNNPACK's copy type: a variable's read or assignment."""
    return node.kind == "copy" and subgraph.operators[node.operator].opcode in _VARIABLE_COPIES


LUT_CHAIN_LIMIT = 10  # XNN_MAX_UNARY_FUSION_NODES
_IN_PLACE = ("clamp", "unary", "lut", "binary", "copy", "softmax")  # element-wise kinds


def _eight_bit(subgraph: Subgraph, tensor: int) -> bool:
    return tensor < len(subgraph.tensors) and subgraph.tensors[tensor].dtype.name in (
        "INT8",
        "UINT8",
    )


def fuse_unary_chains(subgraph: Subgraph, nodes: list[_Node], external: set[int]) -> None:
    """xnn_subgraph_fuse_unary_quantized_into_lut: a chain of two or more pure unary
    element-wise nodes (clamps, the unary operators, conversions) from an 8-bit input, each
    value along it read by the next node only, is computed once into a 256-entry table and
    replaced by one LUT node writing the last 8-bit output of the chain (at most ten nodes;
    nodes past the last 8-bit output stay). The nodes before it keep their operator-data slots,
    their values leave the workspace; the table is one value more and a 256-byte block
    (xnnpack_objects). A binary node with a broadcast constant operand, which XNNPACK also
    counts as unary, is not fused here: the figure then errs high (one operator more)."""
    consumers = _consumers(nodes, external)
    readers: dict[int, _Node] = {}
    for node in nodes:
        for tensor in node.inputs:
            readers[tensor] = node
    position = 0
    while position < len(nodes):
        node = nodes[position]
        position += 1
        if not _pure_unary(node) or not _eight_bit(subgraph, node.inputs[0]):
            continue
        chain = [node]
        while len(chain) < LUT_CHAIN_LIMIT:
            output = chain[-1].outputs[0]
            if consumers.get(output) != 1 or output in external:
                break
            following = readers.get(output)
            if following is None or not _pure_unary(following):
                break
            chain.append(following)
        copied = tuple(chain)  # before the nodes past the last 8-bit output are dropped
        while len(chain) > 1 and not _eight_bit(subgraph, chain[-1].outputs[0]):
            chain.pop()
        if len(chain) < 2:
            continue
        last = chain[-1]
        lut = [node.inputs[0]], list(last.outputs), last.operator
        fused = _Node("lut", *lut, folded=len(chain) - 1, chain=copied)
        nodes[nodes.index(last)] = fused
        for tensor in fused.inputs:
            readers[tensor] = fused
        for gone in chain[:-1]:
            nodes.remove(gone)
        position = nodes.index(fused) + 1


def _pure_unary(node: _Node) -> bool:
    return node.kind in ("unary", "clamp") and len(node.inputs) == 1 and len(node.outputs) == 1


def fuse_copies(subgraph: Subgraph, nodes: list[_Node], external: set[int]) -> None:
    """xnn_subgraph_fusion's copy fusions, value by value: where a value with one consumer is
    internal (no external flag: not the kernel's input or output, not a resource), a copy
    reading it is fused upstream (its producer writes the copy's output) and a copy writing it
    downstream (its consumer reads the copy's input), when no node between the two touches the
    value that then moves (can_reorder_use). The fused copy keeps its operator-data slot
    (runtime_counts) but creates no operator and its value leaves the workspace.

    Only values a variable copy reads or writes can fuse, and each value's readers and writers
    are kept in maps updated as nodes change: a scan of every node per value was quadratic
    (a hostile model's thousands of operators hung here)."""
    copies = [node for node in nodes if variable_copy(subgraph, node)]
    if not copies:
        return
    position = {id(node): index for index, node in enumerate(nodes)}
    readers: dict[int, dict[int, _Node]] = {}
    writers: dict[int, dict[int, _Node]] = {}

    def index(node: _Node, add: bool) -> None:
        for table, tensors in ((readers, node.inputs), (writers, node.outputs)):
            for tensor in tensors:
                entries = table.setdefault(tensor, {})
                if add:
                    entries[id(node)] = node
                else:
                    entries.pop(id(node), None)

    def touched_between(tensor: int, start: int, end: int) -> bool:
        return any(
            start < position[key] < end
            for table in (readers, writers)
            for key in table.get(tensor, {})
        )

    for node in nodes:
        index(node, True)
    removed: set[int] = set()

    def fold(kept: _Node, ports: list[int], copy: _Node, value: int, moved: int) -> None:
        """`kept` reads or writes `moved` where it had `value` (`ports`: its inputs or its
        outputs); the copy leaves."""
        index(kept, False)
        index(copy, False)
        ports[ports.index(value)] = moved
        index(kept, True)
        removed.add(id(copy))

    for value in sorted({tensor for node in copies for tensor in (*node.inputs, *node.outputs)}):
        if value in external:
            continue
        value_readers, value_writers = readers.get(value, {}), writers.get(value, {})
        if len(value_readers) != 1 or len(value_writers) != 1:
            continue
        (consumer,), (producer,) = value_readers.values(), value_writers.values()
        start, end = position[id(producer)], position[id(consumer)]
        if start >= end:
            continue
        if variable_copy(subgraph, consumer) and len(consumer.outputs) == 1:
            moved = consumer.outputs[0]
            if not touched_between(moved, start, end):
                fold(producer, producer.outputs, consumer, value, moved)  # fused upstream
                continue
        if variable_copy(subgraph, producer) and len(producer.inputs) == 1:
            moved = producer.inputs[0]
            if not touched_between(moved, start, end):
                fold(consumer, consumer.inputs, producer, value, moved)  # fused downstream
    if removed:
        nodes[:] = [node for node in nodes if id(node) not in removed]


def _fuse_clamps(nodes: list[_Node], boundary: set[int]) -> None:
    """A clamp whose input only it reads folds into a clamping producer (subgraph.c's fusion):
    the producer writes the clamp's output. One forward pass: nodes are in execution order, so
    a fusion changes nothing an earlier clamp looked at, and a later clamp sees the producer
    that now writes its input (a chain of clamps folds into one producer)."""
    consumers = _consumers(nodes, boundary)
    producers = {tensor: node for node in nodes for tensor in node.outputs}
    fused: set[int] = set()  # id() of the clamps folded away
    for node in nodes:
        # XNNPACK's delegate checks a clamp's arity (one input, one output) before it
        # defines the node; a hostile model's clamp of any other arity never reaches fusion.
        if node.kind != "clamp" or len(node.inputs) != 1 or len(node.outputs) != 1:
            continue
        if consumers.get(node.inputs[0], 0) > 1:
            continue
        producer = producers.get(node.inputs[0])
        if producer is None or producer.kind not in ("clamp", *_CLAMPING):
            continue
        producer.outputs[0] = node.outputs[0]
        producers[node.outputs[0]] = producer
        fused.add(id(node))
    if fused:
        nodes[:] = [node for node in nodes if id(node) not in fused]


def _fuse_pads(subgraph: Subgraph, nodes: list[_Node], boundary: set[int], model: Model) -> None:
    """A zero PAD of the spatial axes whose output only a VALID-padded convolution or depthwise
    convolution reads is folded into that convolution's padding (subgraph.c:
    xnn_subgraph_fusion); its output leaves the workspace."""
    consumers = _consumers(nodes, boundary)
    for pad in [node for node in nodes if node.kind == "PAD"]:
        output = pad.outputs[0] if pad.outputs else -1
        if consumers.get(output) != 1:
            continue
        reader = next((node for node in nodes if output in node.inputs), None)
        if reader is None or reader.kind not in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            continue
        convolution = subgraph.operators[reader.operator]
        if convolution.options.get("padding") not in (1, "VALID"):
            continue  # SAME padding: XNN_FLAG_TENSORFLOW_SAME_PADDING blocks the fusion
        operator = subgraph.operators[pad.operator]
        values = int_values(model, subgraph, operator.inputs[1])
        if values is None or len(values) != 8 or any(values[i] for i in (0, 1, 6, 7)):
            continue
        reader.inputs[reader.inputs.index(output)] = pad.inputs[0]
        nodes.remove(pad)


def resource_values(subgraph: Subgraph, nodes: Sequence[_Node]) -> set[int]:
    """The resource tensors the nodes read or write (the variables' values)."""
    count = len(subgraph.tensors)
    return {
        tensor
        for node in nodes
        for tensor in (*node.inputs, *node.outputs)
        if tensor < count and subgraph.tensors[tensor].dtype.name == "RESOURCE"
    }


def _rename_resource_writes(nodes: list[_Node], resources: set[int], fresh: int) -> int:
    """XNNPACK keeps an external output's last write (subgraph.c, the pass that makes
    external outputs single-assignment): when a resource is written again, a new internal
    value replaces it in the earlier write and the reads after it, so an earlier write nothing
    reads goes with the dead nodes. Returns the next fresh value id."""
    written: set[int] = set()
    for position, node in enumerate(nodes):
        for resource in [tensor for tensor in node.outputs if tensor in resources]:
            if resource in written:
                start = next(k for k in range(position) if resource in nodes[k].outputs)
                for earlier in nodes[start:position]:
                    for tensors in (earlier.inputs, earlier.outputs):
                        tensors[:] = [fresh if t == resource else t for t in tensors]
                fresh += 1
            written.add(resource)
    return fresh


def resource_rewrites(subgraph: Subgraph, run: Sequence[int]) -> int:
    """The values `_rename_resource_writes` adds: each write of a resource after its first."""
    writes: dict[int, int] = {}
    for index in run:
        operator = subgraph.operators[index]
        if operator.opcode == "ASSIGN_VARIABLE" and operator.inputs:
            writes[operator.inputs[0]] = writes.get(operator.inputs[0], 0) + 1
    return sum(count - 1 for count in writes.values())


def _drop_dead_nodes(nodes: list[_Node], boundary: set[int]) -> None:
    """XNNPACK's clean-up (subgraph.c: xnn_subgraph_clean_up, recursive_remove_node): a value
    nothing reads (the caller's outputs count as read) is cleared, and its producer removed
    when that is its only output; removing a node may leave its inputs unread in turn. A node
    with several outputs is never removed (its unread outputs are cleared: `_plan_nodes`
    plans no record for them)."""
    while True:
        read = {tensor for node in nodes for tensor in node.inputs} | boundary
        dead = [node for node in nodes if len(node.outputs) == 1 and node.outputs[0] not in read]
        if not dead:
            return
        for node in dead:
            nodes.remove(node)


def runtime_operators(
    subgraph: Subgraph, delegated: Sequence[int], model: Model | None = None
) -> list[int]:
    """The delegated operators that keep a node in XNNPACK's runtime (dead ones removed), in
    execution order: the ones whose weights are packed and indirection buffers made."""
    kept: list[int] = []
    for subset in node_subsets(subgraph, delegated):
        if subset.delegated:
            boundary = set(subset.inputs) | set(subset.outputs)
            nodes = _nodes(subgraph, subset.operators, boundary, model)
            kept.extend(dict.fromkeys(node.operator for node in nodes))
    return kept


def _consumers(nodes: Sequence[_Node], boundary: set[int]) -> dict[int, int]:
    """Each value's consumers in the runtime, plus one for a value the caller reads."""
    counts: dict[int, int] = {}
    for node in nodes:
        for tensor in dict.fromkeys(node.inputs):
            counts[tensor] = counts.get(tensor, 0) + 1
    written = {tensor for node in nodes for tensor in node.outputs}
    for tensor in boundary:
        if tensor in counts or tensor in written:
            counts[tensor] = counts.get(tensor, 0) + 1
    return counts


def _plan_nodes(
    subgraph: Subgraph,
    nodes: Sequence[_Node],
    boundary: set[int],
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
    *,
    model: Model | None = None,
) -> MemoryPlan:
    consumers = _consumers(nodes, boundary)
    raw: dict[int, int] = {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    first_consumer: dict[int, int] = {}
    for position, node in enumerate(nodes):
        for tensor in node.inputs:
            first_consumer.setdefault(tensor, position)
        for tensor in (*node.inputs, *node.outputs):
            if tensor not in consumers:
                continue  # an output nothing reads: the clean-up cleared its value
            if tensor in node.sizes:
                raw[tensor] = node.sizes[tensor]
            if tensor < len(subgraph.tensors):
                if subgraph.tensors[tensor].has_data or tensor in boundary:
                    continue
                raw[tensor] = subgraph.tensors[tensor].nbytes
            first.setdefault(tensor, position)
            last[tensor] = position
    for node in nodes:
        for tensor in node.outputs:
            if tensor >= len(subgraph.tensors) and tensor not in node.sizes:
                source = node.inputs[0]
                raw[tensor] = raw[source] if source in raw else subgraph.tensors[source].nbytes
    reused: dict[int, int] = {}
    for node in nodes:
        # An element-wise, copy, softmax or reshape node's output takes its first input's bytes
        # when both live in the workspace, each has one consumer and their sizes are equal
        # (runtime.c: optimize_tensor_allocation_for_in_place_operations).
        if (
            node.kind not in ("clamp", "unary", "lut", "binary", "copy", "softmax")
            or not node.outputs
        ):
            continue
        output = node.outputs[0]
        found = next(
            (
                tensor
                for tensor in node.inputs
                if tensor in raw
                and output in raw
                and consumers.get(tensor) == 1
                and raw[tensor] == raw[output]
            ),
            None,
        )
        if found is None or consumers.get(output) != 1:
            continue
        root = found
        while root in reused:
            root = reused[root]
        reused[output] = root
        last[root] = first_consumer.get(output, last[output])
    records = [
        (
            round_up(round_up(raw[tensor], XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT),
            first[tensor],
            last[tensor],
        )
        for tensor in sorted(raw)
        if tensor not in reused and raw[tensor]
    ]
    # Operators' own workspaces (xnn_add_operator_workspace_allocation_tracker), live at their
    # node only, numbered after every value: a BATCH_MATMUL packs a B computed at run time,
    # a hybrid GEMM (and a hybrid BATCH_MATMUL with a constant B) its quantized input.
    for position, node in enumerate(nodes):
        operator = subgraph.operators[node.operator]
        size = 0
        if node.kind == operator.opcode and hybrid_gemm(subgraph, operator):
            size = hybrid_gemm_workspace(subgraph, operator, threads, tiles, model)
        if size or node.workspace:
            records.append((_rounded(size or node.workspace), position, position))
        if node.kind == "BATCH_MATMUL" and operator.opcode == "BATCH_MATMUL":
            size = batch_matmul_workspace(subgraph, operator, tiles, threads=threads)
            if size:
                rounded = round_up(round_up(size, XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT)
                records.append((rounded, position, position))
    count = len(subgraph.tensors)
    internal = [
        tensor
        for tensor in raw
        if tensor >= count
        or not (
            subgraph.tensors[tensor].has_data
            or tensor in boundary
            or subgraph.tensors[tensor].dtype.name == "RESOURCE"
        )
    ]
    return MemoryPlan(
        plan_records(records),
        len(records),
        min((tensor for tensor in internal if tensor < count), default=None),
        sum(1 for tensor in internal if tensor >= count),
        min((tensor - count for tensor in internal if tensor >= count), default=None),
    )
