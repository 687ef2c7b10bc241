"""What LiteRT's default XNNPACK delegate keeps on the heap, from LiteRT's and XNNPACK's sources
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*; XNNPACK *src/runtime.c, src/memory-planner.c,
src/operators/convolution-nhwc.c, src/operators/fully-connected-nc.c, src/configs/gemm-config.c,
src/configs/dwconv-config.c*), for the microkernels the measuring machine selects.

* **Partition**: the delegate takes each operator its `Visit*Node` accepts; consecutive ones
  form one XNNPACK runtime. Modelled here: the operators of `_TAKES` with the input types
  listed (an operator outside the table is counted as left to the builtin kernels; a model
  with one gets the figure labelled an estimate).
* **Packed weights** (`xnn_get_pointer_to_write_weights`, one 64-aligned block per operator,
  its size rounded up to 64 B): a GEMM / IGEMM packs `round_up(channels, nr)` output channels
  (per group: a depthwise convolution with a depth multiplier over 1 is grouped),
  each with its bias (4 B), `taps × round_up(depth, kr)` weights and, for per-channel int8, a
  float scale; a depthwise convolution packs `round_up(channels, channel tile)` channels of
  bias, `primary tile` taps of weights and (int8) a scale. The tiles are the x86-64 AVX-512
  configuration's (`HOST_TILES`): f32 GEMM 7×32 (7×16 under 32 channels), qs8 per-channel
  GEMM 16×64c4 (AMX), f32
  depthwise 16 channels, qs8 depthwise 32 channels, primary tiles 3/4/9/25 (f32) and 3/9/25
  (qs8).
* **Indirection buffers** (reshape): an IGEMM convolution (not 1×1 stride 1) keeps one pointer
  per tap per output pixel, pixels rounded up to the row tile XNNPACK's heuristic picks (1 or
  the GEMM's mr, by its cost formula); a depthwise convolution (rounded up to 64 B)
  `primary_tile − taps + output_height × (taps + (output_width − 1) × step_width ×
  kernel_height)` pointers, step_width the stride (the kernel width when dilated).
* **Workspace** (`xnn_plan_memory`): every value internal to a runtime (neither a graph
  input/output nor crossing to the builtin kernels) is one usage record of
  `round_up(round_up(bytes, 16), 64)` bytes live from its first to its last node; a reshape
  whose input has one consumer reuses its input's record; records are placed largest first at
  the smallest gap that fits among those whose node ranges overlap; the workspace is the end
  of the highest record plus 2 × 16 bytes, one 64-aligned block shared by the runtimes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.planning.registry import run_planner
from arenalens.runtimes.litert import glibc, rules
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE

XNN_EXTRA_BYTES = 16  # include/xnnpack.h, x86
XNN_ALLOCATION_ALIGNMENT = 64  # src/xnnpack/common.h, x86-64 with AVX-512
POINTER_BYTES = 8


@dataclass(frozen=True, slots=True)
class GemmTile:
    """A GEMM microkernel's tile: rows (mr), output channels (nr), depth unroll (kr)."""

    mr: int
    nr: int
    kr: int


@dataclass(frozen=True, slots=True)
class DepthwiseTile:
    """A depthwise microkernel family: its channel tile and its unipass primary tiles."""

    channels: int
    primary_tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class XnnpackTiles:
    """The microkernels XNNPACK selects on one CPU, as its configs pick them."""

    name: str
    f32_gemm: GemmTile
    f32_gemm_narrow: GemmTile | None  # the "nr2" config, for fewer output channels than nr
    qs8_gemm: GemmTile
    f32_depthwise: DepthwiseTile
    qs8_depthwise: DepthwiseTile


# x86-64 with AVX-512 (skx), VNNI and AMX-INT8 (the measuring machine: tests/data/
# litert_heap.json's cpu_flags): gemm-config.c picks f32 7x32__avx512f_broadcast (7x16 for
# fewer than 32 output channels) and qs8_qc8w 16x64c4__avx512amx; dwconv-config.c f32
# {3,4,9,25}p16c__avx512f and qs8_qc8w {3,9,25}p32c__avx512skx_mul32.
HOST_TILES = XnnpackTiles(
    "x86-64 AVX-512 + AMX-INT8",
    f32_gemm=GemmTile(mr=7, nr=32, kr=1),
    f32_gemm_narrow=GemmTile(mr=7, nr=16, kr=1),
    qs8_gemm=GemmTile(mr=16, nr=64, kr=4),
    f32_depthwise=DepthwiseTile(16, (3, 4, 9, 25)),
    qs8_depthwise=DepthwiseTile(32, (3, 9, 25)),
)

_FLOAT = ("FLOAT32",)
_QUANTIZED = ("INT8", "UINT8")
_FLOAT_OR_QUANTIZED = ("FLOAT32", "INT8", "UINT8")
# Every builtin the delegate has a Visit*Node for (xnnpack_delegate.cc: VisitNode's switch);
# it never takes another one.
_VISITED = frozenset(
    [
        "ABS",
        "ADD",
        "ASSIGN_VARIABLE",
        "AVERAGE_POOL_2D",
        "BATCH_MATMUL",
        "CEIL",
        "CONCATENATION",
        "CONV_2D",
        "COS",
        "DEPTH_TO_SPACE",
        "DEPTHWISE_CONV_2D",
        "DEQUANTIZE",
        "DIV",
        "ELU",
        "EXP",
        "EXPAND_DIMS",
        "FLOOR",
        "FULLY_CONNECTED",
        "GELU",
        "HARD_SWISH",
        "LEAKY_RELU",
        "LOG",
        "LOGISTIC",
        "MAX_POOL_2D",
        "MAXIMUM",
        "MEAN",
        "MINIMUM",
        "MUL",
        "NEG",
        "PAD",
        "PRELU",
        "QUANTIZE",
        "READ_VARIABLE",
        "REDUCE_MAX",
        "REDUCE_MIN",
        "RELU",
        "RELU6",
        "RELU_N1_TO_1",
        "RESHAPE",
        "RESIZE_BILINEAR",
        "ROUND",
        "RSQRT",
        "SIN",
        "SLICE",
        "SOFTMAX",
        "SPACE_TO_DEPTH",
        "SPLIT",
        "SQRT",
        "SQUARE",
        "SQUARED_DIFFERENCE",
        "STABLEHLO_COMPOSITE",
        "STRIDED_SLICE",
        "SUB",
        "SUM",
        "TANH",
        "TRANSPOSE",
        "TRANSPOSE_CONV",
        "VAR_HANDLE",
    ]
)
# Operators taken with these data input types (VisitUnaryNode, VisitBinaryNode, ...: their
# CheckTensorFloatType / CheckTensorFloatOrQUInt8Type checks), modelled here.
_TAKES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        [
            "ABS",
            "CEIL",
            "COS",
            "EXP",
            "FLOOR",
            "GELU",
            "HARD_SWISH",
            "LOG",
            "NEG",
            "RELU_N1_TO_1",
            "RELU",
            "RELU6",
            "ROUND",
            "RSQRT",
            "SIN",
            "SQRT",
            "SQUARE",
            "DIV",
            "MAXIMUM",
            "MINIMUM",
            "SQUARED_DIFFERENCE",
            "SOFTMAX",
            "AVERAGE_POOL_2D",
        ],
        _FLOAT,
    ),
    **dict.fromkeys(
        [
            "LOGISTIC",
            "TANH",
            "ADD",
            "MUL",
            "SUB",
            "CONCATENATION",
            "PAD",
            "TRANSPOSE",
            "SLICE",
            "EXPAND_DIMS",
            "RESHAPE",
            "MAX_POOL_2D",
            "MEAN",
            "SUM",
            "REDUCE_MAX",
            "REDUCE_MIN",
            "SPLIT",
            "CONV_2D",
            "DEPTHWISE_CONV_2D",
            "FULLY_CONNECTED",
        ],
        _FLOAT_OR_QUANTIZED,
    ),
    "ELU": ("FLOAT32", "INT8"),
    "DEQUANTIZE": _QUANTIZED,
    "QUANTIZE": _FLOAT_OR_QUANTIZED,
}
# Inputs past the data that must be constant for the delegate to take the operator
# (CheckTensorStaticAllocation / quasi-static tensors): their positions.
_STATIC_INPUTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(("PAD", "TRANSPOSE", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"), (1,)),
    "SLICE": (1, 2),
    "EXPAND_DIMS": (1,),
    "SPLIT": (0,),
}
# The data input of an operator whose first input is not its data.
_DATA_INPUT = {"SPLIT": 1}
_WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


@dataclass(frozen=True, slots=True)
class XnnpackPartition:
    """Which operators of a subgraph XNNPACK takes, and which of those are not modelled."""

    delegated: tuple[int, ...]  # operator indices, in execution order
    unmodelled: tuple[str, ...]  # opcodes whose acceptance by the delegate is not modelled


def _input_type(subgraph: Subgraph, operator: Operator) -> str:
    position = _DATA_INPUT.get(operator.opcode, 0)
    data = operator.inputs[position] if len(operator.inputs) > position else -1
    return subgraph.tensors[data].dtype.name if data >= 0 else ""


def _takes(subgraph: Subgraph, operator: Operator) -> bool | None:
    """True if the delegate takes the operator, False if it leaves it, None if not modelled."""
    if operator.opcode not in _VISITED:
        return False  # no Visit*Node: the builtin kernel runs it
    types = _TAKES.get(operator.opcode)
    if types is None:
        return None
    kind = _input_type(subgraph, operator)
    if kind not in types:
        return False
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if operator.opcode == "QUANTIZE" and (output is None or output.dtype.name not in _QUANTIZED):
        return False
    if operator.opcode == "SOFTMAX" and float(operator.options.get("beta", 1.0)) != 1.0:
        return False
    for position in _STATIC_INPUTS.get(operator.opcode, ()):
        if _constant(subgraph, operator.inputs, position) is None:
            return None  # a dynamic axis, shape or padding: not modelled
    if operator.opcode in _WEIGHTED:
        weights = _constant(subgraph, operator.inputs, 1)
        if weights is None or weights.dtype.name != kind:
            return None  # dynamic or hybrid weights: the delegate's rules are not modelled
    # A RESHAPE whose new shape is not static stays on the builtin kernel.
    shape = operator.inputs[1] if len(operator.inputs) > 1 else -1
    return not (
        operator.opcode == "RESHAPE" and shape >= 0 and not subgraph.tensors[shape].has_data
    )


def partition(subgraph: Subgraph) -> XnnpackPartition:
    """The operators XNNPACK takes from a subgraph (see the module docstring)."""
    delegated: list[int] = []
    unmodelled: set[str] = set()
    for operator in subgraph.operators:
        taken = _takes(subgraph, operator)
        if taken is None:
            unmodelled.add(operator.opcode)
        elif taken:
            delegated.append(operator.index)
    return XnnpackPartition(tuple(delegated), tuple(sorted(unmodelled)))


def _constant(subgraph: Subgraph, inputs: Sequence[int], position: int) -> Tensor | None:
    if len(inputs) <= position or inputs[position] < 0:
        return None
    tensor = subgraph.tensors[inputs[position]]
    return tensor if tensor.has_data else None


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _gemm_tile(kind: str, tiles: XnnpackTiles, channels: int, *, gemm: bool) -> GemmTile:
    """The GEMM an operator packs for. Float: a convolution (igemm) takes the narrower "nr2"
    config when the default's nr exceeds its output channels (convolution-nhwc.c); a fully
    connected operator, and a 1×1 convolution XNNPACK runs as one, also when nr2 wastes fewer
    channels and the default wastes over 1% of them (microkernel-utils.c: xnn_use_nr2)."""
    narrow = tiles.f32_gemm_narrow
    if kind != "FLOAT32" or narrow is None:
        return tiles.qs8_gemm if kind != "FLOAT32" else tiles.f32_gemm
    nr, nr2 = tiles.f32_gemm.nr, narrow.nr
    waste, waste2 = (nr - channels % nr) % nr, (nr2 - channels % nr2) % nr2
    if nr > channels or (gemm and waste2 < waste and waste * 100 > channels):
        return narrow
    return tiles.f32_gemm


def _depthwise_tile(kind: str, tiles: XnnpackTiles) -> DepthwiseTile:
    return tiles.f32_depthwise if kind == "FLOAT32" else tiles.qs8_depthwise


@dataclass(frozen=True, slots=True)
class _Convolution:
    """How XNNPACK runs one convolution or fully connected operator (convolution-nhwc.c:
    select_microkernel_type): its microkernel family and its groups' shape."""

    microkernel: str  # vmulcaddc | dwconv | igemm | gemm
    groups: int
    group_input_channels: int
    group_output_channels: int
    taps: int
    kind: str  # FLOAT32 | INT8 | UINT8


def _convolution(subgraph: Subgraph, operator: Operator) -> _Convolution | None:
    weights = _constant(subgraph, operator.inputs, 1)
    if operator.opcode not in _WEIGHTED or weights is None or not weights.shape:
        return None
    kind, shape, options = weights.dtype.name, weights.shape, operator.options
    if operator.opcode == "FULLY_CONNECTED":
        depth = 1
        for dim in shape[1:]:
            depth *= dim
        return _Convolution("gemm", 1, depth, shape[0], 1, kind)
    if len(shape) != 4:
        return None
    taps = shape[1] * shape[2]
    if operator.opcode == "DEPTHWISE_CONV_2D":
        multiplier = int(options.get("depth_multiplier", 1) or 1)
        groups, group_input, group_output = shape[3] // max(multiplier, 1), 1, multiplier
    else:
        data = subgraph.tensors[operator.inputs[0]]
        channels = data.shape[-1] if data.shape else shape[3]
        groups = max(channels // max(shape[3], 1), 1)
        group_input, group_output = shape[3], shape[0] // groups
    stride_w = int(options.get("stride_w", 1) or 1)
    stride_h = int(options.get("stride_h", 1) or 1)
    dilated = any(int(options.get(key, 1) or 1) != 1 for key in _DILATIONS)
    unit_1x1 = taps == 1 and stride_w == 1 and stride_h == 1 and not dilated
    if group_input == 1 and group_output == 1:
        if unit_1x1 and kind == "FLOAT32":
            return _Convolution("vmulcaddc", groups, 1, 1, 1, kind)
        return _Convolution("dwconv", groups, 1, 1, taps, kind)
    return _Convolution(
        "gemm" if unit_1x1 else "igemm", groups, group_input, group_output, taps, kind
    )


_DILATIONS = ("dilation_w_factor", "dilation_h_factor", "dilation_wfactor", "dilation_hfactor")
VMULCADDC_CHANNEL_TILE = 4  # f32 vmulcaddc c4__sse_2x (vmulcaddc-config.c); none for int8


def _primary_tile(taps: int, tile: DepthwiseTile) -> int | None:
    fitting = [primary for primary in tile.primary_tiles if primary >= taps]
    return min(fitting) if fitting else None


def packed_weights_request(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int | None:
    """Bytes XNNPACK asks for to pack one operator's weights (None: not modelled)."""
    convolution = _convolution(subgraph, operator)
    if convolution is None:
        return None
    element = 4 if convolution.kind == "FLOAT32" else 1
    scale = 0 if convolution.kind == "FLOAT32" else 4  # qs8_qc8w: a float scale per channel
    groups = convolution.groups
    if convolution.microkernel == "vmulcaddc":
        # A scale and a bias per channel.
        return _round_up(8 * _round_up(groups, VMULCADDC_CHANNEL_TILE), 64)
    if convolution.microkernel == "dwconv":
        tile = _depthwise_tile(convolution.kind, tiles)
        primary = _primary_tile(convolution.taps, tile)
        if primary is None:
            return None  # multipass depthwise kernels are not modelled
        per_channel = 4 + primary * element + scale
        return _round_up(_round_up(groups, tile.channels) * per_channel, 64)
    gemm = _gemm_tile(
        convolution.kind,
        tiles,
        convolution.group_output_channels,
        gemm=convolution.microkernel == "gemm",
    )
    depth = _round_up(convolution.group_input_channels, gemm.kr)
    per_channel = 4 + convolution.taps * depth * element + scale
    return _round_up(
        groups * _round_up(convolution.group_output_channels, gemm.nr) * per_channel, 64
    )


def indirection_request(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int | None:
    """Bytes of one convolution's indirection buffer (0: none; None: not modelled)."""
    convolution = _convolution(subgraph, operator)
    if convolution is None:
        return None
    if convolution.microkernel in ("vmulcaddc", "gemm"):
        return 0
    weights = subgraph.tensors[operator.inputs[1]]
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if output is None or len(output.shape) != 4:
        return None
    batch, height, width = output.shape[0], output.shape[1], output.shape[2]
    kernel_height, kernel_width = weights.shape[1], weights.shape[2]
    taps = convolution.taps
    if convolution.microkernel == "dwconv":
        primary = _primary_tile(taps, _depthwise_tile(convolution.kind, tiles))
        if primary is None:
            return None
        options = operator.options
        dilated = any(int(options.get(key, 1) or 1) != 1 for key in _DILATIONS)
        step_width = kernel_width if dilated else int(options.get("stride_w", 1) or 1)
        step_height = taps + (width - 1) * step_width * kernel_height
        pointers = max(batch, 1) * (primary - taps + height * step_height)
        return _round_up(pointers * POINTER_BYTES, XNN_ALLOCATION_ALIGNMENT)
    del batch  # one image's indirection serves every image of the batch
    gemm = _gemm_tile(convolution.kind, tiles, convolution.group_output_channels, gemm=False)
    pixels = height * width
    return _round_up(pixels, heuristic_mr(pixels, gemm)) * taps * POINTER_BYTES


def heuristic_mr(rows: int, gemm: GemmTile) -> int:
    """xnn_get_heuristic_mr_igemm: the row tile for `rows` output pixels among the configured
    microkernels (1 and mr): an exact fit, else the least `ceil(rows / mr) × (3 (mr + nr) +
    mr nr)`, the larger on a tie."""
    available = (1, gemm.mr)
    if rows == 0:
        return gemm.mr
    if rows <= gemm.mr and rows in available:
        return rows
    best, best_cost = gemm.mr, None
    for mr in available:
        cost = -(-rows // mr) * (3 * (mr + gemm.nr) + mr * gemm.nr)
        if best_cost is None or cost <= best_cost:
            best, best_cost = mr, cost
    return best


def value_bytes(tensor: Tensor) -> int:
    """xnn_get_rounded_size: bytes rounded to XNN_EXTRA_BYTES, then to the alignment."""
    return _round_up(_round_up(tensor.nbytes, XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT)


def workspace_request(
    subgraph: Subgraph, delegated: Sequence[int], model: Model | None = None
) -> int:
    """Bytes of the workspace the runtimes of one subgraph ask for (0: no internal values).

    Each delegate kernel plans its own runtime over the values inside its subset (its inputs
    and outputs are LiteRT's tensors); they share the delegate's workspace, which grows to the
    largest plan (`initialize_workspace_values`). Where removing dead nodes cascades (a node
    that only fed removed nodes), the plan keeps every node: an upper bound
    (`workspace_is_exact` says which)."""
    largest = 0
    exact = workspace_is_exact(subgraph, delegated, model)
    for subset in node_subsets(subgraph, delegated):
        if not subset.delegated:
            continue
        boundary = set(subset.inputs) | set(subset.outputs)
        nodes = _nodes(subgraph, subset.operators, boundary, model, prune=exact)
        planned = _plan_nodes(subgraph, nodes, boundary)
        if planned:
            largest = max(largest, planned + 2 * XNN_EXTRA_BYTES)
    return largest


def workspace_is_exact(
    subgraph: Subgraph, delegated: Sequence[int], model: Model | None = None
) -> bool:
    """Whether the workspace is XNNPACK's plan: no dead-node removal cascades."""
    for subset in node_subsets(subgraph, delegated):
        if subset.delegated:
            boundary = set(subset.inputs) | set(subset.outputs)
            nodes = _nodes(subgraph, subset.operators, boundary, model, prune=False)
            if _drop_dead_nodes(nodes, boundary) > 1:
                return False
    return True


_CLAMPS = ("RELU", "RELU6", "RELU_N1_TO_1")  # the delegate defines them as clamp nodes
_UNARY = frozenset(
    [
        "ABS",
        "CEIL",
        "COS",
        "EXP",
        "FLOOR",
        "GELU",
        "HARD_SWISH",
        "LOG",
        "NEG",
        "ROUND",
        "RSQRT",
        "SIN",
        "SQRT",
        "SQUARE",
        "LOGISTIC",
        "TANH",
        "ELU",
        "LEAKY_RELU",
        "QUANTIZE",
        "DEQUANTIZE",
    ]
)
_BINARY = frozenset(["ADD", "MUL", "SUB", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"])
_RESHAPES = ("RESHAPE", "EXPAND_DIMS")
# Nodes a following clamp folds into (subgraph.c: has_clamp).
_CLAMPING = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D")


@dataclass(frozen=True, slots=True)
class _Node:
    kind: str  # clamp | unary | binary | copy | softmax | the opcode
    inputs: list[int]
    outputs: list[int]
    operator: int  # the model's operator it comes from


def _nodes(
    subgraph: Subgraph,
    run: Sequence[int],
    boundary: set[int],
    model: Model | None = None,
    *,
    prune: bool = True,
) -> list[_Node]:
    """The runtime's nodes for a run. The delegate defines a copy (static reshape) before each
    FULLY_CONNECTED that does not keep its input's dimensions, whose output is a new internal
    value of the input's bytes (numbered after the model's tensors); XNNPACK's optimizer folds
    a zero spatial PAD into the convolution after it, removes dead nodes, and folds a clamp
    into a clamping producer whose output only the clamp reads."""
    nodes: list[_Node] = []
    fresh = len(subgraph.tensors)
    for index in run:
        operator = subgraph.operators[index]
        inputs = [tensor for tensor in operator.inputs if tensor >= 0]
        outputs = [tensor for tensor in operator.outputs if tensor >= 0]
        if operator.opcode == "FULLY_CONNECTED" and inputs and not _keeps_dims(operator):
            nodes.append(_Node("copy", [inputs[0]], [fresh], index))
            inputs = [fresh, *inputs[1:]]
            fresh += 1
        kind = operator.opcode
        if kind in _CLAMPS:
            kind = "clamp"
        elif kind in _UNARY:
            kind = "unary"
        elif kind in _BINARY:
            kind = "binary"
        elif kind in _RESHAPES:
            kind, inputs = "copy", inputs[:1]
        elif kind == "SOFTMAX":
            kind = "softmax"
        nodes.append(_Node(kind, inputs, outputs, index))
    if model is not None:
        _fuse_pads(subgraph, nodes, boundary, model)
    if prune:
        _drop_dead_nodes(nodes, boundary)
    merged = True
    while merged:
        merged = False
        consumers = _consumers(nodes, boundary)
        producers = {tensor: node for node in nodes for tensor in node.outputs}
        for node in nodes:
            if node.kind != "clamp" or consumers.get(node.inputs[0], 0) > 1:
                continue
            producer = producers.get(node.inputs[0])
            if producer is None or producer.kind not in ("clamp", *_CLAMPING):
                continue
            producer.outputs[0] = node.outputs[0]
            nodes.remove(node)
            merged = True
            break
    return nodes


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
        values = _int_values(model, subgraph, operator.inputs[1])
        if values is None or len(values) != 8 or any(values[i] for i in (0, 1, 6, 7)):
            continue
        reader.inputs[reader.inputs.index(output)] = pad.inputs[0]
        nodes.remove(pad)


def _int_values(model: Model, subgraph: Subgraph, index: int) -> tuple[int, ...] | None:
    tensor = subgraph.tensors[index] if index >= 0 else None
    if tensor is None or not tensor.has_data or tensor.dtype.name not in ("INT32", "INT64"):
        return None
    width = 4 if tensor.dtype.name == "INT32" else 8
    raw = model.buffer_bytes(tensor.buffer)
    if len(raw) != width * tensor.element_count:
        return None
    return tuple(
        int.from_bytes(raw[i : i + width], "little", signed=True) for i in range(0, len(raw), width)
    )


def _keeps_dims(operator: Operator) -> bool:
    return bool(operator.options.get("keep_num_dims", False))


def _drop_dead_nodes(nodes: list[_Node], boundary: set[int]) -> int:
    """A node none of whose outputs is read (by a node or by the caller) is removed (XNNPACK's
    subgraph clean-up). Returns how many rounds removed nodes: after one, the nodes that
    only fed removed ones are removed too, but the wheel's order of that cascade is not
    replayed (see workspace_request)."""
    rounds = 0
    while True:
        read = {tensor for node in nodes for tensor in node.inputs} | boundary
        dead = [node for node in nodes if not any(tensor in read for tensor in node.outputs)]
        if not dead:
            return rounds
        for node in dead:
            nodes.remove(node)
        rounds += 1


def runtime_operators(
    subgraph: Subgraph, delegated: Sequence[int], model: Model | None = None
) -> list[int]:
    """The delegated operators that keep a node in XNNPACK's runtime (dead ones removed), in
    execution order: the ones whose weights are packed and indirection buffers made (every
    delegated one where the removal cascades: an upper bound)."""
    kept: list[int] = []
    prune = workspace_is_exact(subgraph, delegated, model)
    for subset in node_subsets(subgraph, delegated):
        if subset.delegated:
            boundary = set(subset.inputs) | set(subset.outputs)
            nodes = _nodes(subgraph, subset.operators, boundary, model, prune=prune)
            kept.extend(dict.fromkeys(node.operator for node in nodes))
    return kept


def _consumers(nodes: Sequence[_Node], boundary: set[int]) -> dict[int, int]:
    """Each value's consumers in the runtime, plus one for a value the caller reads."""
    counts: dict[int, int] = {}
    for node in nodes:
        for tensor in dict.fromkeys(node.inputs):
            counts[tensor] = counts.get(tensor, 0) + 1
    for tensor in boundary:
        if tensor in counts or any(tensor in node.outputs for node in nodes):
            counts[tensor] = counts.get(tensor, 0) + 1
    return counts


def _plan_nodes(subgraph: Subgraph, nodes: Sequence[_Node], boundary: set[int]) -> int:
    consumers = _consumers(nodes, boundary)
    raw: dict[int, int] = {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    first_consumer: dict[int, int] = {}
    for position, node in enumerate(nodes):
        for tensor in node.inputs:
            first_consumer.setdefault(tensor, position)
        for tensor in (*node.inputs, *node.outputs):
            if tensor < len(subgraph.tensors):
                if subgraph.tensors[tensor].has_data or tensor in boundary:
                    continue
                raw[tensor] = subgraph.tensors[tensor].nbytes
            first.setdefault(tensor, position)
            last[tensor] = position
    for node in nodes:
        for tensor in node.outputs:
            if tensor >= len(subgraph.tensors):
                source = node.inputs[0]
                raw[tensor] = raw[source] if source in raw else subgraph.tensors[source].nbytes
    reused: dict[int, int] = {}
    for node in nodes:
        # An element-wise, copy, softmax or reshape node's output takes its first input's bytes
        # when both live in the workspace, each has one consumer and their sizes are equal
        # (runtime.c: optimize_tensor_allocation_for_in_place_operations).
        if node.kind not in ("clamp", "unary", "binary", "copy", "softmax") or not node.outputs:
            continue
        output = node.outputs[0]
        source = next(
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
        if source is None or consumers.get(output) != 1:
            continue
        root = source
        while root in reused:
            root = reused[root]
        reused[output] = root
        last[root] = first_consumer.get(output, last[output])
    records = [
        (
            _round_up(_round_up(raw[tensor], XNN_EXTRA_BYTES), XNN_ALLOCATION_ALIGNMENT),
            first[tensor],
            last[tensor],
        )
        for tensor in sorted(raw)
        if tensor not in reused and raw[tensor]
    ]
    return plan_records(records)


def plan_records(records: Sequence[tuple[int, int, int]]) -> int:
    """xnn_plan_value_allocation_tracker: (bytes, first node, last node) → arena bytes.
    Largest first (ties keep their value order), each at the smallest gap that fits among the
    records already placed whose node ranges overlap it, else after the highest."""
    order = sorted(range(len(records)), key=lambda i: -records[i][0])
    offsets: dict[int, int] = {}
    arena = 0
    for position, index in enumerate(order):
        size = records[index][0]
        live = sorted(
            (offsets[other], offsets[other] + records[other][0])
            for other in order[:position]
            if _overlap(records[index], records[other])
        )
        offsets[index] = _smallest_gap(live, size)
        arena = max(arena, offsets[index] + size)
    return arena


def _overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    if a[1] < b[1]:
        return a[2] >= b[1]
    return b[2] >= a[1]


def _smallest_gap(live: Sequence[tuple[int, int]], size: int) -> int:
    if not live:
        return 0
    merged = [list(live[0])]
    for start, end in live[1:]:
        if start > merged[-1][1]:
            merged.append([start, end])
        elif end > merged[-1][1]:
            merged[-1][1] = end
    offset, best = merged[-1][1], None
    if merged[0][0] >= size:
        offset, best = 0, merged[0][0]
    for before, after in itertools.pairwise(merged):
        gap = after[0] - before[1]
        if gap >= size and (best is None or gap < best):
            offset, best = before[1], gap
    return offset


def aligned_block(request: int) -> int:
    """xnn_allocate_simd_memory(n): posix_memalign(64, n) as glibc hands it out (upper)."""
    return glibc.aligned_usable(XNN_ALLOCATION_ALIGNMENT, request) if request > 0 else 0


@dataclass(frozen=True, slots=True)
class NodeSubset:
    """One subset of LiteRT's partition: its operators, whether the delegate takes them, the
    tensors it reads from outside and those it hands on (each sorted, as Uniquefy leaves)."""

    operators: tuple[int, ...]
    delegated: bool
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def node_subsets(subgraph: Subgraph, delegated: Sequence[int]) -> list[NodeSubset]:
    """PartitionGraphIntoIndependentNodeSubsets (tflite/graph_info.cc), greedily: each subset
    takes, sweep after sweep over the execution plan, every ready operator of its kind (the
    first ready operator decides the kind); a tensor read by a later subset becomes an output
    of the subset that made it; graph outputs end their maker's outputs."""
    taken = set(delegated)
    always, not_ready = -2, -1
    epochs = [always] * len(subgraph.tensors)
    for operator in subgraph.operators:
        for tensor in operator.outputs:
            if tensor >= 0:
                epochs[tensor] = not_ready
    done = [False] * len(subgraph.operators)
    subsets: list[dict[str, list[int] | bool | None]] = []
    while True:
        subset: dict[str, list[int] | bool | None] = {
            "operators": [],
            "kind": None,
            "inputs": [],
            "outputs": [],
        }
        subsets.append(subset)
        epoch = len(subsets) - 1
        progress = True
        while progress:
            progress = False
            for operator in subgraph.operators:
                if done[operator.index] or any(
                    tensor >= 0 and epochs[tensor] == not_ready for tensor in operator.inputs
                ):
                    continue
                kind = operator.index in taken
                if subset["kind"] is None:
                    subset["kind"] = kind
                if subset["kind"] != kind:
                    continue
                done[operator.index] = True
                progress = True
                _list(subset, "operators").append(operator.index)
                for tensor in operator.outputs:
                    if tensor >= 0:
                        epochs[tensor] = epoch
                for tensor in operator.inputs:
                    if tensor >= 0 and epochs[tensor] != epoch:
                        _list(subset, "inputs").append(tensor)
                        if epochs[tensor] >= 0:
                            _list(subsets[epochs[tensor]], "outputs").append(tensor)
        if not subset["operators"]:
            subsets.pop()
            break
    for tensor in subgraph.outputs:
        if tensor >= 0 and epochs[tensor] >= 0:
            _list(subsets[epochs[tensor]], "outputs").append(tensor)
    return [
        NodeSubset(
            tuple(_list(subset, "operators")),
            bool(subset["kind"]),
            tuple(sorted(set(_list(subset, "inputs")))),
            tuple(sorted(set(_list(subset, "outputs")))),
        )
        for subset in subsets
    ]


def _list(subset: dict[str, list[int] | bool | None], key: str) -> list[int]:
    value = subset[key]
    assert isinstance(value, list)
    return value


def delegated_view(model: Model) -> Model | None:
    """The model as LiteRT's planner sees it once XNNPACK has taken its partitions
    (ReplaceNodeSubsetsWithDelegateKernels): the execution plan subset by subset, each
    delegated subset one delegate node reading its inputs (constants included) and writing
    its outputs. None when the partition is not modelled (several subgraphs, or an operator
    whose acceptance is not known)."""
    if len(model.subgraphs) != 1:
        return None
    subgraph = model.subgraphs[0]
    split = partition(subgraph)
    if split.unmodelled:
        return None
    if not split.delegated:
        return model  # the delegate takes nothing: the plan is the builtin kernels'
    operators: list[Operator] = []
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            for index in subset.operators:
                operators.append(replace(subgraph.operators[index], index=len(operators)))
            continue
        first = subgraph.operators[subset.operators[0]]
        operators.append(
            replace(
                first,
                index=len(operators),
                opcode=DELEGATE_OPCODE,
                custom_code=DELEGATE_OPCODE.removeprefix("CUSTOM:"),
                inputs=subset.inputs,
                outputs=subset.outputs,
                intermediates=(),
                options=MappingProxyType({}),
                file_index=None,
            )
        )
    return replace(model, subgraphs=(replace(subgraph, operators=tuple(operators)),))


def view_arena_sizes(view: Model) -> list[int]:
    """Each arena's high-water mark as LiteRT's planner (the replica) places the view."""
    return [
        run_planner(rules.RUNTIME_PLANNER, problem.problem).arena_size
        for problem in rules.arenas(view)
    ]


# Upper bounds of the runtime's and operators' own blocks, read off the wheel's traces
# (tests/litert_heap_trace.py): xnn_operator_data is 960 B per node; a convolution's or fully
# connected operator's object, parameters and microkernel tables are at most 1,928 B in 5-6
# blocks, each up to 32 B over its request when 64-aligned; the delegate kernel's node keeps
# about 100 B per operator; a runtime value is 60 B, and the delegate's subgraph may add one
# internal value per external one (channelwise weights, reshapes).
RUNTIME_BYTES = 1_024  # xnn_runtime, the delegate kernel's Subgraph object and its vectors
OPERATOR_DATA_BYTES = 960
OPERATOR_OBJECT_BYTES = 2_080
COPY_OBJECT_BYTES = 768  # a copy operator's object and parameters (2 blocks)
DELEGATE_NODE_BYTES = 128
VALUE_BYTES = 120


def objects_bound(subgraph: Subgraph, split: XnnpackPartition) -> int:
    """Runtime and operator objects of a subgraph's delegated partitions (an upper bound)."""
    total = 0
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            continue
        run = subset.operators
        tensors = {
            tensor
            for index in run
            for tensor in (*subgraph.operators[index].inputs, *subgraph.operators[index].outputs)
            if tensor >= 0
        }
        total += RUNTIME_BYTES + VALUE_BYTES * len(tensors)
        total += (OPERATOR_DATA_BYTES + OPERATOR_OBJECT_BYTES + DELEGATE_NODE_BYTES) * len(run)
        copies = sum(
            1
            for index in run
            if subgraph.operators[index].opcode == "FULLY_CONNECTED"
            and not _keeps_dims(subgraph.operators[index])
        )
        total += (OPERATOR_DATA_BYTES + COPY_OBJECT_BYTES) * copies
    return total


def unmodelled_only(subgraph: Subgraph, split: XnnpackPartition) -> XnnpackPartition:
    """The operators whose acceptance by the delegate is not modelled, as a partition."""
    indices = tuple(
        operator.index for operator in subgraph.operators if operator.opcode in split.unmodelled
    )
    return XnnpackPartition(indices, split.unmodelled)
