"""The blocks a LiteRT interpreter allocates for a model's own structures: model + prepared
subgraphs + planner decisions → one `Block` per heap allocation still held after
`Interpreter(...)` and after `allocate_tensors()`, with its request size.

Each rule names the LiteRT code that makes the allocation (*tflite/core/interpreter_builder.cc,
subgraph.cc, interpreter.cc, arena_planner.cc, simple_memory_arena.cc, core/c/common.cc*), and
uses libstdc++'s container growth (vector: capacity doubles from the size, `reserve` is exact;
`unordered_set` / `unordered_map`: one node per element, a bucket array from the prime chain of
`libstdcxx.BUCKET_COUNT_CHAIN`; `map`: one 32-byte-header node per element). Struct sizes are
those of the LP64 x86-64 wheel: `TfLiteTensor` 112 B, a node with its registration 168 B,
`Subgraph` 888 B, `ArenaAllocWithUsageInterval` 32 B.

What each kernel's builtin-options parser and Init allocate is per operator and comes from
`heap_kernels`; allocations the wheel makes whatever the model (the op resolver's tables, the
Python wrapper) are `heap_kernels.FIXED_*`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Model, Subgraph, Tensor
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.blockwise import blockwise
from arenalens.runtimes.litert.heap_kernels import (
    CPU_BACKEND_CONTEXT_REQUESTS,
    EIGEN_CONTEXT_REQUESTS,
    FIXED_CREATE_BYTES,
    INIT_REQUESTS,
    PARSE_REQUESTS,
    PREPARE_CREATES_CPU_BACKEND,
    KernelFacts,
    kernel_facts,
    prepare_bound,
    prepare_requests,
)
from arenalens.runtimes.litert.libstdcxx import BUCKET_COUNT_CHAIN
from arenalens.runtimes.litert.prepare.state import Allocation, PreparedSubgraph, RuntimeNode

TENSOR_STRUCT_BYTES = 112  # sizeof(TfLiteTensor)
NODE_AND_REGISTRATION_BYTES = 168  # sizeof(std::pair<TfLiteNode, TfLiteRegistration>)
SUBGRAPH_BYTES = 888  # sizeof(tflite::Subgraph)
RESERVED_CAPACITY = 128  # Subgraph::kTensorsReservedCapacity (tensors and nodes)
TENSORS_CAPACITY_HEADROOM = 16  # kTensorsCapacityHeadroom
TENSOR_CAPACITY_INCREASE = 1.1  # kTensorCapacityInc (a float)
EXTRA_NODE_CAPACITY = 10  # kExtraNodeCapacity: nodes grow by 10 past the reserve
ALLOC_INTERVAL_BYTES = 32  # sizeof(ArenaAllocWithUsageInterval)
UNORDERED_SET_BYTES = 56  # sizeof(std::unordered_set<int>)
HASH_NODE_INT_BYTES = 16  # _Hash_node<int>: next pointer + int, padded
HASH_NODE_SIZE_T_PAIR_BYTES = 24  # _Hash_node<pair<size_t, size_t>>
MAP_NODE_HEADER_BYTES = 32  # _Rb_tree_node_base
STRING_BYTES = 32  # std::string (SSO: up to 15 characters inline)
SSO_CAPACITY = 15
RESOURCE_ID_NODE_BYTES = MAP_NODE_HEADER_BYTES + 2 * STRING_BYTES + 8  # the pair and its id
SIGNATURE_DEF_BYTES = 136  # sizeof(tflite::internal::SignatureDef)
ARENA_PLANNER_BYTES = 400  # new ArenaPlanner
GRAPH_INFO_BYTES = 16  # new InterpreterInfo (the planner's GraphInfo)
ARENA_ALIGNMENT = 64  # kDefaultTensorAlignment / ResizableAlignedBuffer
XNN_EXTRA_BYTES = 16  # TfLiteTensorResizeMaybeCopy pads every dynamic block by this


@dataclass(frozen=True, slots=True)
class Block:
    """One heap allocation the interpreter holds: what it is and the bytes it asked for."""

    part: str
    site: str  # the LiteRT function that allocates it
    request: int
    alignment: int = 0  # aligned_alloc's alignment, 0 for malloc / operator new
    exact: bool = True
    counted: int | None = None  # usable bytes given as such (blocks of the wheel itself)

    @property
    def mmapped(self) -> bool:
        """Counted mmapped as in a process that never freed a larger block, which one that did
        serves from its heap (glibc.threshold_decides): a bound, up to a page over."""
        return self.counted is None and glibc.threshold_decides(self.request, self.alignment)

    @property
    def usable(self) -> int:
        """malloc_usable_size of the block glibc hands out for the request (negative for a
        block a later one replaces)."""
        if self.counted is not None:
            return self.counted
        if self.request < 0:
            return -Block(self.part, self.site, -self.request, self.alignment).usable
        if self.alignment:
            return glibc.aligned_usable(self.alignment, self.request)
        return glibc.usable(self.request)


def arena_request(high_water_mark: int) -> int:
    """ResizableAlignedBuffer::Resize: aligned_alloc(64, round_up(hwm + 63, 64))."""
    return (high_water_mark + 63 + 63) // 64 * 64


def int_array_bytes(size: int) -> int:
    """TfLiteIntArrayCreate / TfLiteFloatArrayCreate(size): a 4-byte count and `size` items."""
    return 4 + 4 * size


def string_heap_bytes(text_length: int) -> int:
    """A std::string's heap block (0 when it fits the 15-character inline buffer)."""
    return 0 if text_length <= SSO_CAPACITY else text_length + 1


def vector_capacity_after_push_backs(count: int) -> int:
    """A vector filled by `count` push_backs from empty: capacities 1, 2, 4, ..."""
    capacity = 0
    for size in range(count):
        if size == capacity:
            capacity = max(1, 2 * capacity)
    return capacity


def bucket_count(elements: int) -> int:
    """Buckets of an unordered container after `elements` single insertions (1: no array)."""
    if elements == 0:
        return 1
    for count in BUCKET_COUNT_CHAIN:
        if elements <= count:
            return count
    return BUCKET_COUNT_CHAIN[-1]


def hash_container_blocks(part: str, site: str, elements: int, node_bytes: int) -> Iterator[Block]:
    """An unordered_set / unordered_map: its bucket array (none for one bucket) and nodes."""
    buckets = bucket_count(elements)
    if buckets > 1:
        yield Block(part, site, 8 * buckets)
    for _ in range(elements):
        yield Block(part, site, node_bytes)


# ---------------------------------------------------------------------------------------------
# Interpreter(...): InterpreterBuilder


def creation_blocks(model: Model) -> list[Block]:
    """Every block `Interpreter(model_content=...)` leaves allocated."""
    blocks = [
        Block(
            "interpreter (fixed)",
            "BuiltinOpResolver, InterpreterWrapper",
            0,
            counted=FIXED_CREATE_BYTES,
        )
    ]
    blocks.extend(_subgraph_objects(len(model.subgraphs)))
    blocks.extend(_metadata_blocks(model))
    blocks.extend(
        Block("kernel state", "var_handle::Init (resource ids)", request)
        for request in resource_id_requests(model)
    )
    blocks.extend(_signature_blocks(model))
    eigen_context = False
    for subgraph in model.subgraphs:
        blocks.extend(_subgraph_vectors(subgraph))
        blocks.extend(_subgraph_io_blocks(subgraph))
        for tensor in subgraph.tensors:
            blocks.extend(_tensor_blocks(tensor))
            if tensor.dtype.name == "INT4" and blockwise(model, subgraph.index, tensor.index):
                # ParseQuantization: a TfLiteBlockwiseQuantization (measured: 40 usable bytes).
                blocks.append(Block("quantization", "ParseQuantization (blockwise)", 32))
        blocks.extend(_buffer_identifier_blocks(subgraph))
        for index, operator in enumerate(subgraph.operators):
            facts = kernel_facts(model, subgraph, operator)
            blocks.extend(_node_blocks(operator.inputs, operator.outputs, operator.intermediates))
            blocks.extend(_kernel_blocks(facts))
            if facts.eigen_context and not eigen_context:
                eigen_context = True
                blocks.extend(
                    Block("kernel state", "eigen_support::IncrementUsageCounter", request)
                    for request in EIGEN_CONTEXT_REQUESTS
                )
            del index
        blocks.append(
            Block(
                "nodes",
                "Subgraph::AddNodeWithParameters (execution plan)",
                4 * vector_capacity_after_push_backs(len(subgraph.operators)),
            )
        )
    return [block for block in blocks if block.request or block.counted]


def _subgraph_objects(count: int) -> Iterator[Block]:
    """Interpreter::AddSubgraphs: the vector of subgraph pointers (1 from the constructor,
    then resized to `count` when the model has more) and one Subgraph per subgraph; each
    Subgraph's constructor reserves 128 tensors and 128 nodes and two small members."""
    yield Block("subgraphs", "Interpreter::AddSubgraphs", 8 * count)
    for _ in range(count):
        yield Block("subgraphs", "Interpreter::AddSubgraphs", SUBGRAPH_BYTES)
        yield Block("subgraphs", "Subgraph::Subgraph", 56)
        yield Block("subgraphs", "Subgraph::Subgraph", 24)


def _subgraph_vectors(subgraph: Subgraph) -> Iterator[Block]:
    """tensors_ reserved for 128 (AddTensors resizes to exactly the model's count past that,
    then the kernels' Init AddTensors grow it as `resize` does); nodes_and_registration_
    reserved for 128, grown by 10 at a time past it."""
    from arenalens.runtimes.litert.prepare.registry import KERNEL_RULES  # noqa: PLC0415

    init_added = []
    for operator in subgraph.operators:
        rule = KERNEL_RULES.get(operator.opcode)
        init_added.append(rule.init_tensors if rule is not None else 0)
    tensors, _ = capacity_after_init(len(subgraph.tensors), init_added)
    yield Block("tensors", "Subgraph::Subgraph (tensors_)", TENSOR_STRUCT_BYTES * tensors)
    nodes = RESERVED_CAPACITY
    while nodes < len(subgraph.operators):
        nodes += EXTRA_NODE_CAPACITY
    yield Block("nodes", "Subgraph::Subgraph (nodes)", NODE_AND_REGISTRATION_BYTES * nodes)


def _subgraph_io_blocks(subgraph: Subgraph) -> Iterator[Block]:
    """InterpreterBuilder::operator(), per subgraph (interpreter_builder.cc): SetInputs and
    SetOutputs keep the vectors FlatBufferIntArrayToVector made (one int per input / output,
    none when empty), SetVariables the vector of its `is_variable` tensors, filled by push_back
    (the smaller capacities freed on the way). Traced on the 2.3.0 wheel: two blocks per
    subgraph of a WHILE model (cf11_6, turns13_22: 10 where a one-subgraph model has 2), a third
    for an SVDF's state (4 B) and an LSTM's two (8 B)."""
    site = "InterpreterBuilder (subgraph inputs, outputs, variables)"
    for count in (len(subgraph.inputs), len(subgraph.outputs)):
        if count:
            yield Block("subgraphs", site, 4 * count)
    variables = sum(1 for tensor in subgraph.tensors if tensor.is_variable)
    if variables:
        yield Block("subgraphs", site, 4 * vector_capacity_after_push_backs(variables))


def _tensor_blocks(tensor: Tensor) -> Iterator[Block]:
    """ParseTensors: dims (and dims_signature for non-constant tensors), and for a quantized
    tensor TfLiteAffineQuantization with one scale and one zero point per channel."""
    yield Block("tensors", "SetTensorParameters (dims)", int_array_bytes(len(tensor.shape)))
    if not tensor.has_data:
        yield Block(
            "tensors",
            "SetTensorParametersReadWrite (dims_signature)",
            int_array_bytes(len(tensor.shape_signature)),
        )
    quantization = tensor.quantization
    if quantization is not None and quantization.scale is not None:
        channels = max(quantization.channel_count, 1)
        yield Block("quantization", "ParseQuantization", 24)
        yield Block("quantization", "ParseQuantization (scales)", int_array_bytes(channels))
        yield Block("quantization", "ParseQuantization (zero points)", int_array_bytes(channels))


def _buffer_identifier_blocks(subgraph: Subgraph) -> Iterator[Block]:
    """SetTensorParametersReadOnly records each constant's buffer index in an unordered_map."""
    constants = sum(1 for tensor in subgraph.tensors if tensor.has_data)
    yield from hash_container_blocks(
        "tensors", "Subgraph::tensor_buffer_identifiers_", constants, HASH_NODE_SIZE_T_PAIR_BYTES
    )


def _node_blocks(
    inputs: Sequence[int], outputs: Sequence[int], intermediates: Sequence[int]
) -> Iterator[Block]:
    """AddNodeWithParameters: inputs, outputs, intermediates and (empty) temporaries arrays."""
    for indices in (inputs, outputs, intermediates, ()):
        yield Block("nodes", "AddNodeWithParameters (index arrays)", int_array_bytes(len(indices)))


def _kernel_blocks(facts: KernelFacts) -> Iterator[Block]:
    for request in facts.parse_requests:
        yield Block("kernel state", "Parse (builtin options)", request, exact=facts.known)
    for request in facts.init_requests:
        yield Block("kernel state", "Init (OpData)", request, exact=facts.known)


def _metadata_blocks(model: Model) -> Iterator[Block]:
    """Interpreter::SetMetadata: a map<string, string> of every metadata entry (name → the
    buffer's bytes as a string)."""
    for entry in model.metadata:
        value_length = 0
        if 0 <= entry.buffer < len(model.buffers):
            value_length = model.buffers[entry.buffer].nbytes
        yield Block(
            "metadata", "Interpreter::SetMetadata", MAP_NODE_HEADER_BYTES + 2 * STRING_BYTES
        )
        yield Block("metadata", "Interpreter::SetMetadata", string_heap_bytes(len(entry.name)))
        yield Block("metadata", "Interpreter::SetMetadata", string_heap_bytes(value_length))


def _signature_blocks(model: Model) -> Iterator[Block]:
    """ParseSignatureDefs: a vector of SignatureDef reserved to their count, and per signature
    its key and a map<string, uint32_t> of input and of output names."""
    if not model.signature_defs:
        return
    yield Block("signatures", "ParseSignatureDefs", SIGNATURE_DEF_BYTES * len(model.signature_defs))
    for signature in model.signature_defs:
        yield Block("signatures", "ParseSignatureDefs", string_heap_bytes(len(signature.key)))
        for name, _ in (*signature.inputs, *signature.outputs):
            yield Block(
                "signatures", "ParseSignatureDefs", MAP_NODE_HEADER_BYTES + STRING_BYTES + 8
            )
            yield Block("signatures", "ParseSignatureDefs", string_heap_bytes(len(name)))


# ---------------------------------------------------------------------------------------------
# allocate_tensors(): Prepare and ArenaPlanner


def allocation_blocks(
    model: Model,
    prepared: Sequence[PreparedSubgraph],
    aliases: Sequence[int],
    arena_requests: Iterable[tuple[str, int]],
    placements: Sequence[tuple[int, int]],
    *,
    left_to_invoke: Mapping[int, int] = MappingProxyType({}),
) -> list[Block]:
    """Every block `allocate_tensors()` adds (and keeps): each prepared subgraph's kernel
    Prepare buffers, the tensors it added, ArenaPlanner's bookkeeping and the arenas.

    `aliases`: in-place aliases per subgraph; `arena_requests`: (name, request) of each arena
    block; `placements`: per subgraph, how many tensors each of its two arenas placed by then;
    `left_to_invoke`: per subgraph whose later chunks the first invoke prepares (heap_replan),
    the first node it prepares."""
    blocks: list[Block] = []
    backend = False  # the CPU back-end context, created by the first kernel that asks
    for state, alias_count, (arena_count, persistent_count) in zip(
        prepared, aliases, placements, strict=True
    ):
        if not state.allocated_by_allocate_tensors:
            continue
        subgraph = model.subgraphs[state.index]
        last = left_to_invoke.get(state.index, len(state.nodes))
        blocks.extend(_prepare_blocks(subgraph, state, state.nodes[:last]))
        if not backend and any(node.opcode in PREPARE_CREATES_CPU_BACKEND for node in state.nodes):
            backend = True
            blocks.extend(
                Block("kernel state", "CpuBackendContext::GetFromContext (Prepare)", request)
                for request in CPU_BACKEND_CONTEXT_REQUESTS
            )
        # PlanAllocations sizes its vectors for the tensors there after the first chunk.
        later = sum(prepare_added(state, node) for node in state.nodes[last:])
        planned = len(state.tensors) - later
        blocks.extend(_planner_blocks(state, planned, alias_count, arena_count, persistent_count))
    for name, request in arena_requests:
        blocks.append(Block("arenas", name, request, alignment=ARENA_ALIGNMENT))
    return [block for block in blocks if block.request or block.counted]


def _prepare_blocks(
    subgraph: Subgraph, state: PreparedSubgraph, nodes: Sequence[RuntimeNode]
) -> Iterator[Block]:
    """The tensors' vector grown, the dims of tensors Prepare added and what `nodes`' Prepare
    keeps."""
    model_tensors = state.model_tensor_count
    created, _ = capacity_after_init(model_tensors, state.init_added)
    before = TENSOR_STRUCT_BYTES * created
    after = TENSOR_STRUCT_BYTES * tensor_capacity_after_prepare(state, nodes)
    if after != before:
        # The grown vector replaces the one counted at creation.
        yield Block("tensors", "Subgraph::EnsureTensorsVectorCapacity (tensors_)", after)
        yield Block("tensors", "Subgraph::EnsureTensorsVectorCapacity (tensors_)", -before)
    for tensor in state.tensors[model_tensors:]:
        if tensor.shape is not None:
            yield Block("tensors", "ResizeTensor (dims)", int_array_bytes(len(tensor.shape)))
    for node in nodes:
        yield from node_prepare_blocks(subgraph, node)


def node_prepare_blocks(subgraph: Subgraph, node: RuntimeNode) -> Iterator[Block]:
    """What one node's Prepare keeps: its temporaries' index array (replacing an empty one)
    and its kernel's own blocks (heap_kernels)."""
    if node.temporaries:
        yield Block("nodes", "node temporaries", int_array_bytes(len(node.temporaries)))
        yield Block("nodes", "node temporaries", -int_array_bytes(0))
    operator = subgraph.operators[node.operator]
    for request in prepare_requests(subgraph, operator):
        yield Block("kernel state", "Prepare", request)
    bound = prepare_bound(subgraph, operator)
    if bound:
        yield Block("kernel state", "Prepare (not modelled: upper bound)", bound, exact=False)


def capacity_after_init(model_tensors: int, init_added: Sequence[int]) -> tuple[int, int]:
    """(capacity, size) of tensors_ after Interpreter(...): reserved for 128, resized to the
    model's tensors, then each node's Init AddTensors (SVDF, LSTMs, RNNs ...: in operator
    order, at creation) resizes it; a resize past the capacity grows it to size + max(size, k)
    (libstdc++'s _M_default_append)."""
    capacity = max(RESERVED_CAPACITY, model_tensors)
    size = model_tensors
    for count in init_added:
        if size + count > capacity:
            capacity = size + max(size, count)
        size += count
    return capacity, size


def tensor_capacity_after_prepare(
    state: PreparedSubgraph, nodes: Sequence[RuntimeNode] | None = None
) -> int:
    """tensors_'s capacity once every node (or `nodes`, the first ones) is prepared: the Init
    tensors are there from creation (`capacity_after_init`), then `tensors_growth`."""
    capacity, size = capacity_after_init(state.model_tensor_count, state.init_added)
    _, capacity, _ = tensors_growth(state, state.nodes if nodes is None else nodes, capacity, size)
    return capacity


def tensors_growth(
    state: PreparedSubgraph, nodes: Sequence[RuntimeNode], capacity: int, size: int
) -> tuple[tuple[tuple[int, int], ...], int, int]:
    """tensors_ (of `capacity` and `size`) while `nodes` are prepared: before each node's
    Prepare, EnsureTensorsVectorCapacity reserves max(size + 16, capacity × 1.1f) when fewer
    than 16 slots are free, then the node's own AddTensors past the capacity grow it to size +
    max(size, k) → each reallocation's (old, new) capacity, and the capacity and size after."""
    grown: list[tuple[int, int]] = []
    for node in nodes:
        if size + TENSORS_CAPACITY_HEADROOM > capacity:
            reserved = max(size + TENSORS_CAPACITY_HEADROOM, times_growth_factor(capacity))
            grown.append((capacity, reserved))
            capacity = reserved
        count = prepare_added(state, node)
        if size + count > capacity:
            grown.append((capacity, size + max(size, count)))
            capacity = size + max(size, count)
        size += count
    return tuple(grown), capacity, size


def prepare_added(state: PreparedSubgraph, node: RuntimeNode) -> int:
    """The tensors a node's Prepare added (AddTensors)."""
    added = state.prepare_added
    return added[node.position] if node.position < len(added) else 0


def times_growth_factor(capacity: int) -> int:
    """(size_t)(capacity * kTensorCapacityInc), the product in single precision."""
    factor = struct.unpack("f", struct.pack("f", TENSOR_CAPACITY_INCREASE))[0]
    product = struct.unpack("f", struct.pack("f", capacity * factor))[0]
    return int(product)


def _planner_blocks(
    state: PreparedSubgraph, tensors: int, alias_count: int, arena_count: int, persistent_count: int
) -> Iterator[Block]:
    """ArenaPlanner (arena_planner.cc) and its two SimpleMemoryArenas, planned for `tensors`."""
    nodes = len(state.nodes)
    yield Block("planner", "PrepareOpsAndTensors (ArenaPlanner)", ARENA_PLANNER_BYTES)
    yield Block("planner", "PrepareOpsAndTensors (GraphInfo)", GRAPH_INFO_BYTES)
    yield Block("planner", "ArenaPlanner::allocs_", ALLOC_INTERVAL_BYTES * tensors)
    for _ in range(3):  # alloc_node_, dealloc_node_, refcounts_
        yield Block("planner", "ArenaPlanner::PlanAllocations", 4 * tensors)
    yield Block("planner", "ArenaPlanner::nodes_to_tensors_", UNORDERED_SET_BYTES * max(nodes, 1))
    for members in _nodes_to_tensors(state):
        yield from hash_container_blocks(
            "planner", "ArenaPlanner::nodes_to_tensors_", members, HASH_NODE_INT_BYTES
        )
    yield from hash_container_blocks(
        "planner", "ArenaPlanner::actual_tensor_id_", alias_count, HASH_NODE_INT_BYTES
    )
    for count in (arena_count, persistent_count):
        if count:
            yield Block(
                "planner",
                "SimpleMemoryArena::ordered_allocs_",
                ALLOC_INTERVAL_BYTES * vector_capacity_after_push_backs(count),
            )
    # Subgraph::InitializeTensorReleaseMap: a map<int, int> node per tensor a node reads or
    # writes.
    touched = {
        index for node in state.nodes for index in (*node.inputs, *node.outputs) if index >= 0
    }
    for _ in touched:
        yield Block("planner", "Subgraph::InitializeTensorReleaseMap", MAP_NODE_HEADER_BYTES + 8)


def _nodes_to_tensors(state: PreparedSubgraph) -> Iterator[int]:
    """Members of each node's set: node 0 also holds the variables and graph inputs; each node
    its outputs and temporaries."""
    for position, node in enumerate(state.nodes):
        members = {index for index in (*node.outputs, *node.temporaries) if index >= 0}
        if position == 0:
            members.update(index for index in state.variables if index >= 0)
            members.update(index for index in state.inputs if index >= 0)
        yield len(members)
    if not state.nodes:
        yield len({index for index in (*state.variables, *state.inputs) if index >= 0})


def persistent_ro_blocks(state: PreparedSubgraph) -> Iterator[Block]:
    """Tensors Prepare computes into the heap (kTfLitePersistentRo) keep a malloc'd buffer;
    dynamic tensors Prepare sizes (a transposed convolution's col2im and transposed weights,
    its scratch when the output shape is constant) get theirs from ResizeTensor, which asks
    TfLiteTensorResizeMaybeCopy for the bytes plus XNNPACK's read-past-the-end margin."""
    for tensor in state.tensors:
        if tensor.allocation is Allocation.PERSISTENT_RO and tensor.nbytes:
            yield Block("tensors", "TfLiteTensorRealloc (persistent)", tensor.nbytes)
        elif tensor.allocation is Allocation.DYNAMIC and tensor.shape and tensor.nbytes:
            yield Block(
                "tensors",
                "TfLiteTensorResizeMaybeCopy (dynamic, sized in Prepare)",
                tensor.nbytes + XNN_EXTRA_BYTES,
            )


# A VAR_HANDLE's (container, shared name): the interpreter's key for its resource.
Key = tuple[str, str]


def handle_key(options: Mapping[str, object]) -> Key:
    """A VAR_HANDLE's (container, shared name), null read as empty (var_handle.cc Init)."""
    container = options.get("container") or ""
    shared = options.get("shared_name") or ""
    return (str(container), str(shared))


def resource_id_requests(model: Model) -> list[int]:
    """The resource-id map's requests after Interpreter(...): every subgraph's VAR_HANDLEs
    share the interpreter's map; a name longer than 15 characters has a block of its own."""
    keys = {
        handle_key(operator.options)
        for subgraph in model.subgraphs
        for operator in subgraph.operators
        if operator.opcode == "VAR_HANDLE"
    }
    requests = []
    for key in sorted(keys):
        requests.append(RESOURCE_ID_NODE_BYTES)
        requests.extend(
            len(text.encode("utf-8")) + 1
            for text in key
            if len(text.encode("utf-8")) > SSO_CAPACITY
        )
    return requests


__all__ = [
    "INIT_REQUESTS",
    "PARSE_REQUESTS",
    "Block",
    "allocation_blocks",
    "creation_blocks",
    "persistent_ro_blocks",
]
