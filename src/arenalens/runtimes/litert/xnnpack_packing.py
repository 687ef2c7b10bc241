"""The bytes XNNPACK packs each operator's weights into and the indirection buffers it keeps,
from XNNPACK's sources (*src/operators/convolution-nhwc.c, src/operators/fully-connected-nc.c,
src/configs/gemm-config.c, src/configs/dwconv-config.c,
src/operator-utils.c, src/microkernel-utils.c*), for the microkernels the measuring machine
selects.

* **Microkernel** (`select_microkernel_type`): a convolution with one input and one output
  channel per group runs as depthwise (a float 1×1 one too: the vmulcaddc path needs a config
  the create function never sets), a window wider than the largest unipass tile, 25 taps
  here, as a grouped IGEMM;
  a 1×1 unit-stride convolution and a fully connected operator as a GEMM; the rest as IGEMM
  (a depthwise convolution with a depth multiplier over 1 is grouped: one group per input
  channel).
* **Packed weights** (`xnn_get_pointer_to_write_weights`, one 64-aligned block per operator,
  its size rounded up to 64 B): a GEMM / IGEMM packs, per group, `round_up(channels, nr)`
  output channels, each with its bias (4 B), `taps × round_up(depth, kr)` weights and, for
  int8 (per-channel weights: qs8_qc8w), a float scale; a depthwise convolution packs
  `round_up(channels, channel tile)` channels of bias, `primary tile` taps of weights and
  (int8) a scale. The tiles are this CPU's configuration (`HOST_TILES`).
* **Indirection buffers** (reshape): an IGEMM convolution keeps one pointer per tap per output
  pixel, pixels rounded up to the row tile XNNPACK's heuristic picks (1 or the GEMM's mr, by
  its cost formula); a depthwise convolution `primary_tile − taps + output_height × (taps +
  (output_width − 1) × step_width × kernel_height)` pointers, step_width the stride but at
  most the kernel's width (the kernel width when dilated), rounded up to 64 B, one image's for
  the whole batch (convolution-nhwc.c reshape_dwconv; held17_cnn_1's 1×1 depthwise of stride 2
  and held17_cnn_4 / _5 / residual_4's batches of 2 were 2-5% over with the stride and a
  buffer per image).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import glibc, xnnpack_blockwise, xnnpack_qc4w

XNN_EXTRA_BYTES = 16  # include/xnnpack.h, x86
XNN_ALLOCATION_ALIGNMENT = 64  # src/xnnpack/common.h, x86-64 with AVX-512
POINTER_BYTES = 8


@dataclass(frozen=True, slots=True)
class GemmTile:
    """A GEMM microkernel's tile: rows (mr), output channels (nr), depth unroll (kr)."""

    mr: int
    nr: int
    kr: int
    # An int4 GEMM's nibble planes (gemm-config.c `planes`: 2 on every x86-64 one, 1 for arm64's
    # qs8_qc4w); the depth packs to kr x planes nibbles. Unused by 8-bit and float GEMMs.
    planes: int = 2


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
    # Sub-convolution rows picked by xnn_get_heuristic_mr_igemm, as the wheel measured on a
    # real CPU of this configuration (False: the whole mr taken too, see Deconvolution).
    heuristic_rows: bool = False
    # The dynamically quantized GEMM (qd8_f32_qc8w) where the configuration names it; None:
    # `hybrid_gemm`'s measured bound.
    qd8_gemm: GemmTile | None = None
    # The int4 blockwise GEMM's (gemm-config.c init_qd8_f32_qb4w_gemm_config), where traced;
    # None: its input's packing is counted with the 8-bit hybrid GEMM's rows (an estimate).
    qb4w_gemm: GemmTile | None = None
    # The int4 per-channel GEMM's (gemm-config.c: qdu8_f32_qc4w or qd8_f32_qc4w, whichever
    # convert_gemm_to_qduint8 picks; kr before its two planes); None: not named, its packing
    # keeps the bound and its input's packing the 8-bit hybrid GEMM's rows (an estimate).
    qc4w_gemm: GemmTile | None = None
    # The int4 per-channel GEMM on an int8 input (gemm-config.c init_qs8_qc4w_gemm_config: the
    # delegate's supported_srq path; kr before its planes); None: not named, its packing keeps
    # the bound.
    qs8_qc4w_gemm: GemmTile | None = None
    # Where qc4w_gemm is not named because the build decides between GEMMs (arm64 with the dot
    # product or i8mm: KleidiAI's qp8_f32_qc4w where built with it, qd8_f32_qc4w otherwise):
    # each one's packing, the largest counted (its input's packing keeps the bound).
    qc4w_packings: tuple[GemmTile, ...] = ()


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
    heuristic_rows=True,
    qc4w_gemm=GemmTile(mr=16, nr=64, kr=4),  # qd8_f32_qc4w 16x64c4__avx512amx
    qs8_qc4w_gemm=GemmTile(mr=7, nr=16, kr=8),  # see QS8_QC4W_AVX512
)
# The qs8_qc4w GEMMs gemm-config.c names with AVX-512 (init_qs8_qc4w_gemm_config): 7x16c8 with
# VNNI + GFNI (two planes), 8x16c8 with VNNI (one plane: packs less), 7x16c8 with SKX, 7x8c8
# with AVX256 VNNI or SKX (fewer channels): 16 channels of a depth unrolled to 16 pack the most.
QS8_QC4W_AVX512 = HOST_TILES.qs8_qc4w_gemm

WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")

# A hybrid fully connected operator (float input, 8-bit weights) runs on dynamically quantized
# inputs (qd8_f32_qc8w): per output channel, the weights' row to a depth multiple of 4 and 12
# bytes (its sum, bias and scale), channels to 64; measured on 12 operators of the cached
# models (tests/data/litert_xnnpack_parts.json), the wheel's request every time.
HYBRID_CHANNEL_TILE = 64
HYBRID_DEPTH_TILE = 4
HYBRID_CHANNEL_EXTRA_BYTES = 12


def constant_input(subgraph: Subgraph, inputs: Sequence[int], position: int) -> Tensor | None:
    if len(inputs) <= position or inputs[position] < 0:
        return None
    tensor = subgraph.tensors[inputs[position]]
    return tensor if tensor.has_data else None


def round_up(value: int, multiple: int) -> int:
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

    microkernel: str  # dwconv | igemm | gemm
    groups: int
    group_input_channels: int
    group_output_channels: int
    taps: int
    kind: str  # FLOAT32 | INT8 | UINT8


def _convolution(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> _Convolution | None:
    weights = constant_input(subgraph, operator.inputs, 1)
    if operator.opcode not in WEIGHTED or weights is None or not weights.shape:
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
    # subgraph/convolution-2d.c defines a fully connected operator (a GEMM) in its place only
    # for one group: a grouped 1×1 convolution stays an IGEMM, with its indirection buffer.
    unit_1x1 = taps == 1 and stride_w == 1 and stride_h == 1 and not dilated and groups == 1
    # One channel per group: select_microkernel_type picks vmulcaddc only with the context's
    # vmulcaddc config, which convolution-nhwc.c never sets (init_vmuladdc_params_f32 keeps it
    # local), so a float 1×1 depthwise convolution runs as a depthwise one too (the wheel: a
    # 3-tap packing and reshape_dwconv's indirection buffer, SAME or VALID). No unipass tile
    # holding the window (find_dwconv_ukernel finds none): a grouped IGEMM, one group per
    # channel.
    one_channel = group_input == 1 and group_output == 1
    if one_channel and _primary_tile(taps, _depthwise_tile(kind, tiles)) is not None:
        return _Convolution("dwconv", groups, 1, 1, taps, kind)
    return _Convolution(
        "gemm" if unit_1x1 else "igemm", groups, group_input, group_output, taps, kind
    )


_DILATIONS = ("dilation_w_factor", "dilation_h_factor", "dilation_wfactor", "dilation_hfactor")


def _primary_tile(taps: int, tile: DepthwiseTile) -> int | None:
    fitting = [primary for primary in tile.primary_tiles if primary >= taps]
    return min(fitting) if fitting else None


def packed_weights_request(
    subgraph: Subgraph,
    operator: Operator,
    tiles: XnnpackTiles = HOST_TILES,
    model: Model | None = None,
) -> int | None:
    """Bytes XNNPACK asks for to pack one operator's weights (None: not modelled; an int4
    blockwise one needs the `model`, whose file holds its block size)."""
    if operator.opcode == "BATCH_MATMUL":
        return batch_matmul_packed_request(subgraph, operator, tiles)
    if operator.opcode == "TRANSPOSE_CONV":
        found = deconvolution(subgraph, operator, tiles)
        return None if found is None else found.packed_request()
    convolution = _convolution(subgraph, operator, tiles)
    if convolution is None:
        return None
    data = subgraph.tensors[operator.inputs[0]] if operator.inputs[0] >= 0 else None
    if data is not None and data.dtype.name == "FLOAT32" and convolution.kind == "INT8":
        return hybrid_weights_request(operator, convolution, tiles)
    if convolution.kind == "INT4" and data is not None and data.dtype.name == "INT8":
        qs8 = tiles.qs8_qc4w_gemm
        if qs8 is None or xnnpack_qc4w.integer_int4(model, subgraph, operator) is None:
            return None  # not named for this ISA, or blockwise: the bound
        depth, channels = convolution.group_input_channels, convolution.group_output_channels
        return xnnpack_qc4w.packed_request(
            channels, depth, qs8.nr, qs8.kr, integer=True, planes=qs8.planes
        )
    if convolution.kind == "INT4":
        blocks = xnnpack_blockwise.packed_request(model, subgraph, operator)
        if blocks is not None or xnnpack_qc4w.per_channel_int4(model, subgraph, operator) is None:
            return blocks
        packings = (tiles.qc4w_gemm,) if tiles.qc4w_gemm is not None else tiles.qc4w_packings
        if not packings or model is None:
            return None
        depth, channels = convolution.group_input_channels, convolution.group_output_channels
        return max(
            xnnpack_qc4w.packed_request(channels, depth, tile.nr, tile.kr, planes=tile.planes)
            for tile in packings
        )
    element = 4 if convolution.kind == "FLOAT32" else 1
    scale = 0 if convolution.kind == "FLOAT32" else 4  # qs8_qc8w: a float scale per channel
    groups = convolution.groups
    if convolution.microkernel == "dwconv":
        tile = _depthwise_tile(convolution.kind, tiles)
        primary = _primary_tile(convolution.taps, tile)
        if primary is None:
            return None  # _convolution picked IGEMM for a window no unipass tile holds
        per_channel = 4 + primary * element + scale
        return round_up(round_up(groups, tile.channels) * per_channel, 64)
    gemm = _gemm_tile(
        convolution.kind,
        tiles,
        convolution.group_output_channels,
        gemm=convolution.microkernel == "gemm",
    )
    depth = round_up(convolution.group_input_channels, gemm.kr)
    per_channel = 4 + convolution.taps * depth * element + scale
    return round_up(groups * round_up(convolution.group_output_channels, gemm.nr) * per_channel, 64)


def packing_of(model: Model | None) -> Callable[[Subgraph, Operator, XnnpackTiles], int | None]:
    """packed_weights_request with the model's file at hand (an int4 blockwise operator's
    block size is read from it), for isa.largest_request."""
    return lambda subgraph, operator, tiles: packed_weights_request(
        subgraph, operator, tiles, model
    )


def _batch_matmul_b(subgraph: Subgraph, operator: Operator) -> tuple[int, int, int] | None:
    """A BATCH_MATMUL's B (float or int8) as (batches, K, N), or None."""
    if operator.opcode != "BATCH_MATMUL" or len(operator.inputs) < 2 or operator.inputs[1] < 0:
        return None
    b = subgraph.tensors[operator.inputs[1]]
    if b.dtype.name not in ("FLOAT32", "INT8") or len(b.shape) < 2:
        return None
    batches = 1
    for dim in b.shape[:-2]:
        batches *= dim
    rows, columns = b.shape[-2], b.shape[-1]
    adjoint = bool(operator.options.get("adj_y", False))
    return (batches, columns, rows) if adjoint else (batches, rows, columns)


def batch_matmul_kind(subgraph: Subgraph, operator: Operator) -> str:
    """f32 (float A and B), qd8 (float A, int8 B: A quantized at run time) or qs8 (int8)."""
    a, b = (subgraph.tensors[index] for index in operator.inputs[:2])
    if b.dtype.name == "FLOAT32":
        return "f32"
    return "qd8" if a.dtype.name == "FLOAT32" else "qs8"


# Bytes past the weights per packed column: a bias (f32); a bias and a scale (qs8); a bias, a
# scale and the column's sum (qd8) — the wheel's requests on the generated cases.
_COLUMN_EXTRA_BYTES = {"f32": 4, "qs8": 8, "qd8": HYBRID_CHANNEL_EXTRA_BYTES}


def hybrid_gemm(tiles: XnnpackTiles) -> GemmTile:
    """The qd8_f32_qc8w GEMM a CPU selects: the configuration's own where it names one (AVX2:
    4x8c8), else 64 output channels (the measuring machine's AMX 16x64c4) with the 8-bit
    GEMM's rows and the deeper of its unroll and 4."""
    if tiles.qd8_gemm is not None:
        return tiles.qd8_gemm
    depth = max(HYBRID_DEPTH_TILE, tiles.qs8_gemm.kr)
    return GemmTile(tiles.qs8_gemm.mr, HYBRID_CHANNEL_TILE, depth)


def _batch_matmul_gemm(kind: str, tiles: XnnpackTiles) -> GemmTile:
    if kind == "f32":
        return tiles.f32_gemm
    if kind == "qd8":
        return hybrid_gemm(tiles)
    return tiles.qs8_gemm


def batch_matmul_b_bytes(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int:
    """batch-matrix-multiply-nc.c: B packed per batch as round_up(N, nr) columns of
    round_up(K, kr) elements and their extras (the GEMM's tile; no narrower nr2)."""
    shape = _batch_matmul_b(subgraph, operator)
    if shape is None:
        return 0
    batches, depth, columns = shape
    kind = batch_matmul_kind(subgraph, operator)
    gemm = _batch_matmul_gemm(kind, tiles)
    element = 4 if kind == "f32" else 1
    per_column = round_up(depth, gemm.kr) * element + _COLUMN_EXTRA_BYTES[kind]
    return batches * round_up(columns, gemm.nr) * per_column


def batch_matmul_packed_request(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int:
    """A constant B is packed once, at creation (one 64-aligned block); 0 for a B computed at
    run time, which is packed into the runtime's workspace instead."""
    b = operator.inputs[1] if len(operator.inputs) > 1 else -1
    if b < 0 or not subgraph.tensors[b].has_data:
        return 0
    return round_up(batch_matmul_b_bytes(subgraph, operator, tiles), XNN_ALLOCATION_ALIGNMENT)


# A hybrid GEMM (a FULLY_CONNECTED, a 1×1 CONV_2D XNNPACK runs as one, a BATCH_MATMUL with a
# constant B) packs its quantized input inline: XNNPACK's optimize_packed_lhs folds the
# delegate's convert node into it, so no qdint8 value is planned; the operator's workspace
# holds packed rows, each the row's quantization parameters (8 B) and its K quantized values
# to the GEMM's depth tile (xnn_pack_lh_fx_qd8_packed_size), rows to the packing's tile (16
# here; 1 when the GEMM has a single row). One thread packs one tile of rows at a time unless
# A is broadcast over B's batches or a row of the GEMM would not stay in cache: then all of A
# is packed first. The cache is taken as 256 KiB of L2 (no x86-64 core of the last decade has
# less; a larger one only inlines more, which needs less).
HYBRID_LHS_ROWS = 16
QD8_ROW_PARAMS_BYTES = 8
LHS_CACHE_BYTES = 256 * 1024
CACHE_LINE_BYTES = 64


def hybrid_lhs_bytes(
    rows: int,
    depth: int,
    columns: int,
    *,
    batches: int = 0,
    broadcast: bool = False,
    threads: int = 1,
    tiles: XnnpackTiles = HOST_TILES,
    gemm: GemmTile | None = None,
) -> int:
    """The workspace a hybrid GEMM of `rows` × `depth` by `depth` × `columns` (over `batches`
    of A: a BATCH_MATMUL's) packs its quantized A into; `broadcast`: A is reused over B's
    batches. Inline, each of the `threads` packs its own tile of rows; all of A is packed
    first when the threads' tiles outnumber what they split (a fully connected operator's
    rows, a BATCH_MATMUL's batches)."""
    # `gemm`: a GEMM whose own tile packs the rows (an int4 blockwise one's mr × kr).
    row_tile = gemm.mr if gemm is not None else HYBRID_LHS_ROWS
    if gemm is None and tiles.qd8_gemm is not None:
        row_tile = tiles.qd8_gemm.mr
    packing = gemm if gemm is not None else _batch_matmul_gemm("qd8", tiles)
    row_bytes = QD8_ROW_PARAMS_BYTES + round_up(depth, packing.kr)
    tile = 1 if rows == 1 else row_tile
    shared = rows if batches == 0 else batches
    tile_rows = min(row_tile, rows)
    # An int4 GEMM's columns are half an int8 one's: counted as int8 (fits less, packs more).
    column_bytes = round_up(depth, packing.kr) + _COLUMN_EXTRA_BYTES["qd8"]
    lines = (
        -(-tile_rows * row_bytes // CACHE_LINE_BYTES)
        + -(-columns * column_bytes // CACHE_LINE_BYTES)
        + tile_rows * -(-columns * 4 // CACHE_LINE_BYTES)
    )
    spread = threads * tile > round_up(shared, tile)
    if not broadcast and not spread and lines * CACHE_LINE_BYTES <= LHS_CACHE_BYTES:
        return threads * tile * row_bytes
    return max(batches, 1) * round_up(rows, tile) * row_bytes


def batch_matmul_lhs_bytes(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES, threads: int = 1
) -> int:
    """The bytes a hybrid BATCH_MATMUL packs its quantized A into, inside its operator
    workspace (0 for any other BATCH_MATMUL): the delegate's convert of A is folded into the
    operator whether B is constant or computed at run time (optimize_packed_lhs)."""
    if batch_matmul_kind(subgraph, operator) != "qd8":
        return 0
    shape = _batch_matmul_b(subgraph, operator)
    a = subgraph.tensors[operator.inputs[0]]
    if shape is None or len(a.shape) < 2:
        return 0
    batches_b, depth, columns = shape
    batches_a = 1
    for dim in a.shape[:-2]:
        batches_a *= dim
    # With adj_x A is stored transposed; the GEMM's rows are its last dimension (the delegate
    # transposes it before the node).
    rows = a.shape[-1] if operator.options.get("adj_x", False) else a.shape[-2]
    return hybrid_lhs_bytes(
        rows,
        depth,
        columns,
        batches=batches_a,
        broadcast=batches_a < batches_b,
        threads=threads,
        tiles=tiles,
    )


def batch_matmul_workspace(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES, threads: int = 1
) -> int:
    """A BATCH_MATMUL's operator workspace (reshape_batch_matrix_multiply_nc's
    workspace_size): a B computed at run time is packed into it at each run, and a hybrid
    one's quantized A after it, from the next 64-aligned offset; with a constant B, only a
    hybrid one's A."""
    b = operator.inputs[1] if len(operator.inputs) > 1 else -1
    if b < 0:
        return 0
    lhs = batch_matmul_lhs_bytes(subgraph, operator, tiles, threads)
    if subgraph.tensors[b].has_data:
        return lhs
    packed = batch_matmul_b_bytes(subgraph, operator, tiles)
    return round_up(packed, XNN_ALLOCATION_ALIGNMENT) + lhs if lhs else packed


def indirection_request(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int | None:
    """Bytes of one convolution's indirection buffer (0: none; None: not modelled)."""
    if operator.opcode == "TRANSPOSE_CONV":
        found = deconvolution(subgraph, operator, tiles)
        return None if found is None else found.indirection_request()
    convolution = _convolution(subgraph, operator, tiles)
    if convolution is None:
        return None
    if convolution.microkernel == "gemm":
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
        stride = int(options.get("stride_w", 1) or 1)
        step_width = kernel_width if dilated else min(stride, kernel_width)
        step_height = taps + (width - 1) * step_width * kernel_height
        pointers = primary - taps + height * step_height
        return round_up(pointers * POINTER_BYTES, XNN_ALLOCATION_ALIGNMENT)
    del batch  # one image's indirection serves every image of the batch
    gemm = _gemm_tile(convolution.kind, tiles, convolution.group_output_channels, gemm=False)
    pixels = height * width
    return round_up(pixels, heuristic_mr(pixels, gemm)) * taps * POINTER_BYTES


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


def aligned_block(request: int) -> int:
    """xnn_allocate_simd_memory(n): posix_memalign(64, n) as glibc hands it out (upper)."""
    return glibc.aligned_usable(XNN_ALLOCATION_ALIGNMENT, request) if request > 0 else 0


# Max pooling keeps an indirection buffer; the wheel's average pooling kept none on the cached
# models (global, 2×2 and 3×3 windows), so none is counted for it.
POOLING = ("MAX_POOL_2D",)


def pooling_indirection(subgraph: Subgraph, operator: Operator) -> int:
    """Bytes of a max pooling operator's indirection buffer (max-pooling-nhwc.c: reshape):
    `pooling_size − 1 + output_height × (pooling_size +
    (output_width − 1) × step_width × pooling_height)` pointers, step_width = min(stride,
    pooling width); a 1×1 window has none (0 when the shapes are not known)."""
    if operator.opcode not in POOLING or not operator.outputs or operator.outputs[0] < 0:
        return 0
    output = subgraph.tensors[operator.outputs[0]]
    if len(output.shape) != 4:
        return 0
    options = operator.options
    height = int(options.get("filter_height", 1) or 1)
    width = int(options.get("filter_width", 1) or 1)
    pooling = height * width
    if pooling == 1:
        return 0
    step_width = min(int(options.get("stride_w", 1) or 1), width)
    step_height = pooling + (output.shape[2] - 1) * step_width * height
    return (pooling - 1 + output.shape[1] * step_height) * POINTER_BYTES


def hybrid_weights_request(
    operator: Operator, convolution: _Convolution, tiles: XnnpackTiles = HOST_TILES
) -> int | None:
    """A hybrid fully connected operator's or convolution's packed weights (qd8_f32_qc8w: per
    group, output channels to 64, each with every tap's input channels to a multiple of 4 and
    12 B; measured on the cached hybrid models: kws_ref_model_float32's 40-tap first
    convolution, its 1×1 ones and a 3×3 case); on another ISA the depth is counted to its
    8-bit GEMM's unroll where that is deeper."""
    if operator.opcode not in ("FULLY_CONNECTED", "CONV_2D"):
        return None
    gemm = hybrid_gemm(tiles)
    depth = round_up(convolution.group_input_channels, gemm.kr)
    channels = round_up(convolution.group_output_channels, gemm.nr)
    per_channel = convolution.taps * depth + HYBRID_CHANNEL_EXTRA_BYTES
    return round_up(convolution.groups * channels * per_channel, 64)


# A transposed convolution (deconvolution-nhwc.c). XNNPACK runs it as sub-convolutions when a
# stride is over 1, no stride exceeds the kernel and it is not dilated (is_subconv2d): each of
# the stride_h × stride_w sub-kernels packs its taps, with a bias (and a scale) per channel of
# its own; otherwise as one IGEMM over the whole kernel.
# Past the 4-byte bias per channel: qs8's kernel scale, qd8's two floats; qu8 (one kernel
# scale, its zero point in the parameters: setup_packing_params_qu8) none.
DECONVOLUTION_EXTRA_BYTES = {"f32": 0, "qs8": 4, "qd8": 8, "qu8": 0}
SUBCONVOLUTION_PARAMS_BYTES = 72  # struct subconvolution_params, one per sub-kernel
# The parameters XNNPACK fingerprints a deconvolution's packing with, once per process for each
# kind (generate_fingerprint_parameters): 2 groups of 23 → 48 channels, 3×3, stride 2 for the
# sub-convolution kind; a float one on the narrow GEMM with nr − 1 output channels.
FINGERPRINT_GROUPS = 2
FINGERPRINT_INPUT_CHANNELS = 23
FINGERPRINT_OUTPUT_CHANNELS = 48
FINGERPRINT_KERNEL = 3
FINGERPRINT_CONTEXT_BYTES = 24  # create_fingerprint_context's record
FINGERPRINT_PADDING_BYTES = 2 * XNN_ALLOCATION_ALIGNMENT  # its kernel buffer's alignment room


@dataclass(frozen=True, slots=True)
class Deconvolution:
    """How XNNPACK runs one TRANSPOSE_CONV: its kind (f32; qs8: int8; qd8: hybrid, float data
    quantized at run time), its GEMM tile, channels, kernel, strides, output and whether it
    runs as sub-convolutions."""

    kind: str
    gemm: GemmTile
    narrow: bool  # f32 on the "nr2" config (its fingerprint is another one)
    groups: int
    input_channels: int
    output_channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    output: tuple[int, int, int]  # batch, height, width
    # The row tile picked as on the measuring machine (xnn_get_heuristic_mr_igemm over 1 and
    # mr); False on other ISAs, whose sub-convolution rows measured rounded to the whole mr
    # (qemu-user: Nehalem and the arm64 cores, 0.93x otherwise): the larger is taken there.
    host_rows: bool = True

    @property
    def subconvolution(self) -> bool:
        (kernel_h, kernel_w), (stride_h, stride_w) = self.kernel, self.stride
        return max(stride_h, stride_w) > 1 and stride_w <= kernel_w and stride_h <= kernel_h

    @property
    def element_bytes(self) -> int:
        return 4 if self.kind == "f32" else 1

    @property
    def depth(self) -> int:
        """k_stride: input channels to the GEMM's depth unroll."""
        return round_up(self.input_channels, self.gemm.kr)

    def packed_request(self) -> int:
        """create_deconvolution2d_nhwc: per group, output channels to nr, each with every tap's
        depth and, per sub-kernel (one without sub-convolutions), a bias and its extras."""
        taps = self.kernel[0] * self.kernel[1]
        per_kernel = 4 + DECONVOLUTION_EXTRA_BYTES[self.kind]
        kernels = self.stride[0] * self.stride[1] if self.subconvolution else 1
        per_channel = taps * self.depth * self.element_bytes + per_kernel * kernels
        channels = round_up(self.output_channels, self.gemm.nr)
        return round_up(self.groups * channels * per_channel, XNN_ALLOCATION_ALIGNMENT)

    def indirection_request(self) -> int:
        """reshape_subconv2d_path: taps × output height × stride_w × the output columns of one
        sub-convolution rounded to the row tile (picked for the batch); reshape_igemm_path:
        taps × output pixels rounded to the row tile (picked for the pixels)."""
        batch, height, width = self.output
        taps = self.kernel[0] * self.kernel[1]
        if self.subconvolution:
            stride_w = self.stride[1]
            rows = heuristic_mr(batch, self.gemm) if self.host_rows else self.gemm.mr
            columns = round_up(-(-width // stride_w), rows)
            if not self.host_rows:
                columns = max(
                    columns, round_up(-(-width // stride_w), heuristic_mr(batch, self.gemm))
                )
            return taps * height * stride_w * columns * POINTER_BYTES
        pixels = height * width
        return taps * round_up(pixels, heuristic_mr(pixels, self.gemm)) * POINTER_BYTES

    def zero_request(self) -> int:
        """The zero buffer every deconvolution keeps: one padded input pixel."""
        return self.depth * self.element_bytes + XNN_EXTRA_BYTES

    def object_bytes(self) -> int:
        """The operator, its compute invocations, IGEMM microkernel, convolution state, then
        the sub-convolution table or the IGEMM context, and the zero buffer."""
        subkernels = self.stride[0] * self.stride[1]
        return (
            aligned_block(OPERATOR_OBJECT_BYTES)
            + glibc.usable(3 * COMPUTE_PARAMETERS_BYTES)
            + aligned_block(IGEMM_MICROKERNEL_BYTES)
            + glibc.usable(CONVOLUTION_STATE_BYTES)
            + (
                glibc.usable(SUBCONVOLUTION_PARAMS_BYTES * subkernels)
                if self.subconvolution
                else aligned_block(IGEMM_CONTEXT_BYTES)
            )
            + aligned_block(self.zero_request())
        )

    def fingerprint(self) -> tuple[str, bool, bool]:
        return (self.kind, self.narrow, self.subconvolution)


# The operator-object sizes a deconvolution shares with a convolution (xnnpack_objects).
OPERATOR_OBJECT_BYTES = 520
COMPUTE_PARAMETERS_BYTES = 88
IGEMM_MICROKERNEL_BYTES = 264
CONVOLUTION_STATE_BYTES = 224
IGEMM_CONTEXT_BYTES = 408


def deconvolution(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> Deconvolution | None:
    """A TRANSPOSE_CONV as XNNPACK runs it (None: a type combination not modelled)."""
    if operator.opcode != "TRANSPOSE_CONV" or len(operator.inputs) < 3 or not operator.outputs:
        return None
    weights = constant_input(subgraph, operator.inputs, 1)
    data = subgraph.tensors[operator.inputs[2]] if operator.inputs[2] >= 0 else None
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs[0] >= 0 else None
    if weights is None or data is None or output is None:
        return None
    if len(weights.shape) != 4 or len(output.shape) != 4:
        return None
    channels_out, kernel_h, kernel_w, channels_in = weights.shape
    kinds = (data.dtype.name, weights.dtype.name)
    narrow = False
    if kinds == ("FLOAT32", "FLOAT32"):
        kind, gemm = "f32", _gemm_tile("FLOAT32", tiles, channels_out, gemm=False)
        narrow = gemm != tiles.f32_gemm
    elif kinds == ("FLOAT32", "INT8"):
        kind, gemm = "qd8", hybrid_gemm(tiles)
    elif kinds == ("INT8", "INT8"):
        kind, gemm = "qs8", tiles.qs8_gemm
    elif kinds == ("UINT8", "UINT8"):
        # init_qu8_gemm_config's tile is qs8's on x86 (3x8c8 AVX2, 7x16c8 AVX512-SKX, 3x4c8
        # SSE4.1); on arm64 4x16 (armv7 4x8) with no depth unroll: the same rows and columns
        # as the qs8 tiles those profiles count, whose depth unroll is 1 or more (never fewer
        # bytes). _Convolution takes qs8's for a uint8 convolution too.
        kind, gemm = "qu8", tiles.qs8_gemm
    else:
        return None
    options = operator.options
    stride = (int(options.get("stride_h", 1) or 1), int(options.get("stride_w", 1) or 1))
    return Deconvolution(
        kind,
        gemm,
        narrow,
        1,
        channels_in,
        channels_out,
        (kernel_h, kernel_w),
        stride,
        (output.shape[0], output.shape[1], output.shape[2]),
        host_rows=tiles.heuristic_rows,
    )


def fingerprint_bytes(found: Deconvolution, tiles: XnnpackTiles = HOST_TILES) -> int:
    """What XNNPACK holds while it fingerprints a deconvolution kind, the first time a process
    creates one (xnn_fingerprint_deconvolution2d_nhwc): its record, a kernel-data buffer
    (weights, biases and, for int8, scales, with two alignments of room), int8's two scale
    vectors, and a whole deconvolution of the fingerprint's shape: objects and packed weights.
    All of it is freed before the real operator is created."""
    channels = FINGERPRINT_OUTPUT_CHANNELS
    gemm = found.gemm
    if found.narrow and tiles.f32_gemm_narrow is not None:
        channels = tiles.f32_gemm.nr - 1
        gemm = _gemm_tile("FLOAT32", tiles, channels, gemm=False)
    stride = 2 if found.subconvolution else 1
    shape = Deconvolution(
        found.kind,
        gemm,
        found.narrow,
        FINGERPRINT_GROUPS,
        FINGERPRINT_INPUT_CHANNELS,
        channels,
        (FINGERPRINT_KERNEL, FINGERPRINT_KERNEL),
        (stride, stride),
        (1, 1, 1),
    )
    all_channels = FINGERPRINT_GROUPS * channels
    taps = FINGERPRINT_KERNEL * FINGERPRINT_KERNEL
    kernel = all_channels * taps * FINGERPRINT_INPUT_CHANNELS * shape.element_bytes
    scales = 4 * all_channels if found.kind == "qs8" else 0
    data = kernel + 4 * all_channels + scales + FINGERPRINT_PADDING_BYTES
    total = glibc.usable(FINGERPRINT_CONTEXT_BYTES) + aligned_block(data)
    if scales:
        total += 2 * aligned_block(scales)  # the kernel scales and the requantization scales
    return total + shape.object_bytes() + aligned_block(shape.packed_request())
