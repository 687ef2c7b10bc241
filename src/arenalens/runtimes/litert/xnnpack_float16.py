"""Float16 weights under XNNPACK: the DEQUANTIZEs the delegate skips, and what XNNPACK then does.

The converter's float16 quantization writes each weight and bias as a float16 constant and a
DEQUANTIZE to float32 in front of its reader. LiteRT's XNNPACK delegate
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*, `Delegate::PrepareOpsToDelegate`) takes such a
DEQUANTIZE (one input, one output, a read-only float16 input without sparsity, a float32
output) as a static-unpack node, and **skips** it when every reader of its output is a
FULLY_CONNECTED, CONV_2D or DEPTHWISE_CONV_2D that does not read it as its data (input 0):
`f16_input_tensor_for_dequant_f32_tensor_`. A skipped one unpacks nothing (the unpacking loop
`continue`s over it: no `static_unpacked_data_` buffer); `Subgraph::Create` gives the float16
constant an XNNPACK value of its own and rewires the float32 tensor to it, and the reader's
filter and bias types become float16 (`GetTensorType`). XNNPACK then creates the float operator
through its f32_f16 variant (*src/operators/convolution-nhwc.c*
`xnn_create_convolution2d_nhwc_f32_f16`, *fully-connected-nc.c*
`xnn_create_fully_connected_nc_f32_f16`): it converts the float16 kernel, and a float16 bias,
to float32 in temporary buffers (`xnn_allocate_memory`, freed once the operator exists) and
creates the float32 operator from them: the same packing, objects and fingerprint as a float32
model's.

`as_float32_weights` gives the model XNNPACK's heap is replayed on: each skipped DEQUANTIZE
dropped, its reader reading the constant as a float32 one. The Interpreter still holds the
DEQUANTIZE nodes and float16 tensors (the caller keeps the model it read for those).
`conversions`: the temporary float32 buffers each reader's creation holds, which the
delegate's build moment adds at that operator's creation (heap_build.replayed_moment).

Not replayed here: a DEQUANTIZE that is not skipped (another reader: an ADD, a reader's data);
the delegate then keeps a float32 copy (`static_unpacked_data_`, `Buffer(bytes +
XNN_EXTRA_BYTES)`) for its life, which `heap._build_transient` counts as a bound."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from arenalens.ir import DTYPES_BY_NAME, Model, Operator, Subgraph
from arenalens.runtimes.litert import glibc

# The readers whose filter and bias may be a skipped DEQUANTIZE's output (PrepareOpsToDelegate).
GEMM_READERS = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D")


def _unpacked(subgraph: Subgraph, operator: Operator, readers: Sequence[tuple[int, int]]) -> bool:
    """A DEQUANTIZE the delegate unpacks ahead (PrepareOpsToDelegate): a read-only float16
    input without sparsity, a float32 output; here also read (not a graph output) and by no
    GEMM as its data (a static GEMM input is not replayed)."""
    if operator.opcode != "DEQUANTIZE" or len(operator.inputs) != 1 or len(operator.outputs) != 1:
        return False
    source, output = operator.inputs[0], operator.outputs[0]
    if source < 0 or output < 0:
        return False
    half, real = subgraph.tensors[source], subgraph.tensors[output]
    if half.dtype.name != "FLOAT16" or not half.has_data or half.has_sparsity:
        return False
    if real.dtype.name != "FLOAT32" or real.is_output or not readers:
        return False
    return not any(
        subgraph.operators[reader].opcode in GEMM_READERS and position == 0
        for reader, position in readers
    )


def _skipped(subgraph: Subgraph, readers: Sequence[tuple[int, int]]) -> bool:
    """An unpacked DEQUANTIZE the delegate skips: every reader a GEMM reading it past its data."""
    return all(
        subgraph.operators[reader].opcode in GEMM_READERS and position > 0
        for reader, position in readers
    )


def _readers(subgraph: Subgraph) -> dict[int, list[tuple[int, int]]]:
    found: dict[int, list[tuple[int, int]]] = {}
    for operator in subgraph.operators:
        for position, tensor in enumerate(operator.inputs):
            if tensor >= 0:
                found.setdefault(tensor, []).append((operator.index, position))
    return found


def static_dequantizes(subgraph: Subgraph) -> dict[int, tuple[int, bool]]:
    """Each unpacked DEQUANTIZE's float32 output → (its float16 constant, whether skipped)."""
    readers = _readers(subgraph)
    found = {}
    for operator in subgraph.operators:
        read = readers.get(operator.outputs[0] if operator.outputs else -1, [])
        if _unpacked(subgraph, operator, read):
            found[operator.outputs[0]] = (operator.inputs[0], _skipped(subgraph, read))
    return found


def skipped_dequantizes(subgraph: Subgraph) -> dict[int, int]:
    """Each skipped DEQUANTIZE's float32 output → its float16 constant."""
    return {out: half for out, (half, skipped) in static_dequantizes(subgraph).items() if skipped}


def rewired(model: Model, replayed: Model) -> list[dict[int, tuple[int, bool]]]:
    """Per subgraph, the unpacked DEQUANTIZEs `replayed` (as_float32_weights) dropped."""
    return [
        {
            out: (half, skipped)
            for out, (half, skipped) in static_dequantizes(before).items()
            if after.tensors[half].dtype.name == "FLOAT32"
        }
        for before, after in zip(model.subgraphs, replayed.subgraphs, strict=True)
    ]


def _rewired(subgraph: Subgraph, taken: set[int] | None = None) -> Subgraph:
    """The subgraph with each skipped DEQUANTIZE dropped and its readers reading the constant
    as float32; `taken`: the float32 outputs to rewire (all skipped ones when None)."""
    skipped = {out: half for out, (half, _) in static_dequantizes(subgraph).items()}
    if taken is not None:
        skipped = {out: half for out, half in skipped.items() if out in taken}
    if not skipped:
        return subgraph
    float32 = DTYPES_BY_NAME["FLOAT32"]
    tensors = list(subgraph.tensors)
    for half in skipped.values():
        tensors[half] = tensors[half]._replace(dtype=float32)
    operators: list[Operator] = []
    for operator in subgraph.operators:
        if operator.opcode == "DEQUANTIZE" and operator.outputs and operator.outputs[0] in skipped:
            continue
        inputs = tuple(skipped.get(tensor, tensor) for tensor in operator.inputs)
        operators.append(operator._replace(index=len(operators), inputs=inputs))
    return replace(subgraph, tensors=tuple(tensors), operators=tuple(operators))


def as_float32_weights(model: Model) -> Model:
    """The model XNNPACK's heap is replayed on (see above): each skipped DEQUANTIZE whose
    readers the delegate all takes dropped, the readers reading its constant as float32. A
    reader the delegate leaves makes PrepareOpsToDelegate drop the DEQUANTIZE from its nodes
    (the builtin kernel runs both): that one is kept as it is."""
    from arenalens.runtimes.litert import heap_xnnpack  # noqa: PLC0415 (imports this module)

    subgraphs = list(model.subgraphs)
    changed = False
    for subgraph in model.subgraphs:
        skipped = static_dequantizes(subgraph)
        if not skipped:
            continue
        trial = _rewired(subgraph)
        subgraphs[subgraph.index] = trial
        delegated = set(
            heap_xnnpack.partition(trial, replace(model, subgraphs=tuple(subgraphs))).delegated
        )
        kept = [
            operator.index
            for operator in subgraph.operators
            if not (
                operator.opcode == "DEQUANTIZE"
                and operator.outputs[:1]
                and operator.outputs[0] in skipped
            )
        ]
        new_index = {old: new for new, old in enumerate(kept)}
        readers = _readers(subgraph)
        taken = {
            out
            for out in skipped
            if all(new_index[reader] in delegated for reader, _ in readers[out])
        }
        subgraphs[subgraph.index] = _rewired(subgraph, taken)
        changed = changed or bool(taken)
    return replace(model, subgraphs=tuple(subgraphs)) if changed else model


def conversions(model: Model, replayed: Model) -> dict[tuple[int, int], int]:
    """(subgraph, operator of `replayed`) → the temporary float32 buffers its f32_f16 creation
    holds (xnn_create_*_f32_f16: the kernel's, and the bias's when float16), each an
    xnn_allocate_memory block (the default allocator's malloc), for each reader of a skipped
    DEQUANTIZE of `model` (as read) that `replayed` (as_float32_weights) reads as float32."""
    found: dict[tuple[int, int], int] = {}
    for before, after in zip(model.subgraphs, replayed.subgraphs, strict=True):
        dropped = rewired(model, replayed)[before.index]
        if not dropped:
            continue
        skipped = {out: half for out, (half, was) in dropped.items() if was}
        kept = [
            operator
            for operator in before.operators
            if not (
                operator.opcode == "DEQUANTIZE"
                and operator.outputs[:1]
                and operator.outputs[0] in dropped
            )
        ]
        for new, operator in enumerate(kept):
            if operator.opcode not in GEMM_READERS or len(operator.inputs) < 2:
                continue
            half = skipped.get(operator.inputs[1])
            if half is None or after.operators[new].inputs[1] != half:
                continue
            total = glibc.usable(2 * before.tensors[half].nbytes)
            bias = operator.inputs[2] if len(operator.inputs) > 2 else -1
            if bias >= 0 and (bias_half := skipped.get(bias)) is not None:
                total += glibc.usable(2 * before.tensors[bias_half].nbytes)
            found[(after.index, new)] = total
    return found


# A libstdc++ hash node of two ints or one (next pointer + payload: 16 B).
_HASH_NODE_BYTES = 16
# static_unpacked_data_'s node: next pointer, the int key and the Buffer (a std::vector<char>).
_UNPACKED_NODE_BYTES = 40
XNN_EXTRA_BYTES = 16  # include/xnnpack.h, but on Hexagon


def _rewired_maps(model: Model, replayed: Model) -> list[int]:
    """Per delegate kernel of `replayed` reading a rewired constant: the bytes a tensor → value
    map of its Subgraph::Create grows by for its float32 tensors (a node each, and the bucket
    array those nodes grow): `tflite_tensor_to_xnnpack`, which the kernel keeps, and
    `execution_map`, freed when Create returns."""
    from arenalens.runtimes.litert import xnnpack_objects  # noqa: PLC0415
    from arenalens.runtimes.litert.heap_xnnpack import (  # noqa: PLC0415
        node_subsets,
        partition,
    )

    node = glibc.usable(_HASH_NODE_BYTES)
    grown = []
    dropped = rewired(model, replayed)
    for before, after in zip(model.subgraphs, replayed.subgraphs, strict=True):
        constants = {half for half, was in dropped[before.index].values() if was}
        if not constants:
            continue
        split = partition(after, replayed)
        for subset in node_subsets(after, split.delegated):
            count = sum(1 for tensor in subset.inputs if tensor in constants)
            if not subset.delegated or not count:
                continue
            tensors = len(xnnpack_objects.kernel_tensors(after, subset))
            buckets = xnnpack_objects._buckets(tensors + count)
            grown.append(count * node + buckets - xnnpack_objects._buckets(tensors))
    return grown


def execution_map_bytes(model: Model, replayed: Model) -> int:
    """The most one kernel's `execution_map` grows by (see `_rewired_maps`), held while the
    delegate builds that kernel: added to the build moment."""
    return max(_rewired_maps(model, replayed), default=0)


def delegate_bytes(model: Model, replayed: Model) -> int:
    """What the delegate holds for the skipped DEQUANTIZEs of `model` (as read) that
    `replayed` (as_float32_weights) dropped, past the float32 model's objects: the Delegate's
    `static_unpack_nodes_` (a node index each) and `f16_input_tensor_for_dequant_f32_tensor_`
    (float32 tensor → float16 one), each a node per DEQUANTIZE and a bucket array kept until the
    next PrepareOpsToDelegate; each kernel's `TfLiteDelegateParams` naming the DEQUANTIZE nodes
    it replaced (4 B each; its one block at most 16 B more usable); and its
    `tflite_tensor_to_xnnpack_` map's growth (`_rewired_maps`)."""
    from arenalens.runtimes.litert import xnnpack_objects  # noqa: PLC0415

    dropped = rewired(model, replayed)
    count = sum(len(found) for found in dropped)
    if count <= 0:
        return 0
    maps = _rewired_maps(model, replayed)
    params = 4 * count + 16 * len(maps)
    node = glibc.usable(_HASH_NODE_BYTES)
    total = sum(maps) + params + count * node + xnnpack_objects._buckets(count)
    skipped = sum(was for found in dropped for _, was in found.values())
    if skipped:
        total += skipped * node + xnnpack_objects._buckets(skipped)
    # Not skipped: a float32 copy each (Buffer: vector<char> of bytes + XNN_EXTRA_BYTES) in
    # `static_unpacked_data_` (unordered_map<int, Buffer>: a 40 B node each, a bucket array).
    unpacked = [
        2 * before.tensors[half].nbytes
        for before, found in zip(model.subgraphs, dropped, strict=True)
        for half, was in found.values()
        if not was
    ]
    if unpacked:
        total += sum(glibc.usable(nbytes + XNN_EXTRA_BYTES) for nbytes in unpacked)
        total += len(unpacked) * glibc.usable(_UNPACKED_NODE_BYTES)
        total += xnnpack_objects._buckets(len(unpacked))
    return total


def partition_bytes(model: Model, replayed: Model) -> int:
    """What LiteRT's partition of `model` (as read) holds more than that of `replayed` while
    the delegate's kernels are built (heap_build.partition_bytes: the delegate's arrays of the
    whole plan, each subset's node and tensor vectors): the dropped DEQUANTIZEs are nodes of
    the plan and of their readers' subsets (PrepareOpsToDelegate adds them to the nodes it
    takes), their float16 constants the subsets' inputs."""
    from arenalens.runtimes.litert import heap_build  # noqa: PLC0415
    from arenalens.runtimes.litert.heap_xnnpack import (  # noqa: PLC0415
        node_subsets,
        partition,
    )

    largest = 0
    for before, after, dropped in zip(
        model.subgraphs, replayed.subgraphs, rewired(model, replayed), strict=True
    ):
        if not dropped:
            continue
        kept = [
            operator.index
            for operator in before.operators
            if not (
                operator.opcode == "DEQUANTIZE"
                and operator.outputs[:1]
                and operator.outputs[0] in dropped
            )
        ]
        taken = {kept[index] for index in partition(after, replayed).delegated}
        taken |= {
            operator.index for operator in before.operators if operator.index not in set(kept)
        }
        read = heap_build.partition_bytes(before, node_subsets(before, sorted(taken)))
        view = heap_build.partition_bytes(
            after, node_subsets(after, partition(after, replayed).delegated)
        )
        largest = max(largest, read - view)
    return largest
