"""XNNPACK's fingerprints: the dummy operator XNNPACK packs once per process for each kind of
packing, held at the delegate's build moment (heap_build) and freed before the operator is
created.

XNNPACK **fingerprints** each kind of packing once per process (*src/operators/
fingerprint_cache.c*, `fully-connected-nc.c` / `convolution-nhwc.c`:
`xnn_fingerprint_*`): before it creates the first operator of a kind (a fully connected or
convolution operator's data type and microkernel), it packs generated weights for a dummy
operator of that kind, hashes them and frees them all. A fully connected one's are
`max(kr, 32)` input channels by the microkernel's `nr` outputs (the weights, a bias, scales and
zero points per output, and 64 B of alignment for each of four buffers), their packed copy and
the dummy operator's objects; a convolution's are a padded 1×1 kernel of one channel, run as
a depthwise convolution (its data, the operator's objects, packing and zero buffer), or for a
dynamically quantized kind, which has no depthwise microkernel, as an IGEMM. Only the
operators the runtime creates pack weights: a dead node (its output read by nobody) is
removed by XNNPACK's clean-up first. measure.py's first interpreter is the first to
apply the delegate, so its Init pays them: when what the kernel creates from that operator on
is less than the dummy's, that moment is the peak.

The blocks are the wheel's requests (traced on the AVX-512 + AMX machine and the AMD EPYC:
`tests/litert_heap_trace.py`), each 64-aligned one (xnn_allocate_simd_memory) counted at the
most glibc hands out for it (`xnnpack_packing.aligned_block`: up to 32 B of tail).
"""

from __future__ import annotations

from arenalens.ir import Operator, Subgraph
from arenalens.runtimes.litert import glibc, xnnpack_objects, xnnpack_packing, xnnpack_qc4w
from arenalens.runtimes.litert.isa import IsaProfile
from arenalens.runtimes.litert.xnnpack_packing import HOST_TILES, XNN_EXTRA_BYTES, XnnpackTiles
from arenalens.runtimes.litert.xnnpack_workspace import dynamically_quantized


def fingerprint_kind(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> tuple[str, str, int] | None:
    """(operator family, data type and microkernel, nr) that names a fingerprint, or None: a
    1×1 convolution run as a GEMM and a fully connected operator of one data type share one
    (the wheel fingerprints the second no more); GEMMs of two tiles are counted apart."""
    if operator.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        return None
    convolution = xnnpack_packing._convolution(subgraph, operator)
    if convolution is None:
        return None
    # A 1×1 convolution XNNPACK runs as a GEMM is created as a fully connected operator.
    family = "fc" if convolution.microkernel == "gemm" else "conv"
    tile = xnnpack_packing._gemm_tile(
        convolution.kind,
        tiles,
        convolution.group_output_channels,
        gemm=convolution.microkernel == "gemm",
    )
    return family, f"{gemm_data_type(subgraph, operator)}/{convolution.microkernel}", tile.nr


def gemm_data_type(subgraph: Subgraph, operator: Operator) -> str:
    """The XNNPACK data type a GEMM is fingerprinted by: an 8-bit 1×1 convolution with one
    filter scale is qs8 (its own fingerprint, generated without scales); a FULLY_CONNECTED
    and a per-channel convolution are qc8w (xnn6_fingerprint_7 on the wheel: a one-scale
    FULLY_CONNECTED fingerprinted with 3,072 B of data and its scale parameters, the one-scale
    1×1 convolutions after it again, with 2,816 B and none)."""
    convolution = xnnpack_packing._convolution(subgraph, operator)
    kind = convolution.kind if convolution is not None else ""
    int4 = xnnpack_qc4w.fingerprint_type(subgraph, operator, kind)
    if int4 != kind:
        return int4  # an int4 per-channel one's own (xnnpack_qc4w: its dummy a bound)
    if dynamically_quantized(subgraph, operator):
        return f"{kind}/qd8"  # qd8_f32_qc8w: its own fingerprint id, apart from qs8's and qc8w's
    if kind != "INT8" or operator.opcode == "FULLY_CONNECTED":
        return kind
    weights = xnnpack_packing.constant_input(subgraph, operator.inputs, 1)
    scales = weights.quantization.channel_count if weights and weights.quantization else 1
    return kind if scales > 1 else "INT8/qs8"


def fingerprint_bytes(
    subgraph: Subgraph, operator: Operator, tiles: XnnpackTiles = HOST_TILES
) -> int:
    """The blocks live while XNNPACK fingerprints an operator's kind (see the module's text)
    on a CPU that selects `tiles`."""
    kind = fingerprint_kind(subgraph, operator, tiles)
    convolution = xnnpack_packing._convolution(subgraph, operator)
    if kind is None or convolution is None:
        return 0
    family, _, nr = kind

    # Each 64-aligned block at the most glibc's _int_memalign hands out (its chunk and up
    # to 32 B of trailing room it keeps): xnnpack_packing.aligned_block.
    aligned = xnnpack_packing.aligned_block
    element = 4 if convolution.kind == "FLOAT32" else 1
    scales = 0 if convolution.kind == "FLOAT32" else 4
    context = glibc.usable(24)  # the fingerprint cache's context
    if family == "fc":
        # The dummy's tile: the float GEMM's narrow one (its "nr2" config, 16 on the host: the
        # tracer's float fingerprints all pack 16 outputs; 8 on AVX2, as a Zen CPU's trace
        # shows), the 8-bit GEMM's own.
        hybrid = dynamically_quantized(subgraph, operator)
        if convolution.kind == "FLOAT32" and tiles.f32_gemm_narrow is not None:
            tile = tiles.f32_gemm_narrow
        elif hybrid:
            tile = xnnpack_packing.hybrid_gemm(tiles)
        else:
            tile = xnnpack_packing._gemm_tile(convolution.kind, tiles, nr, gemm=True)
        nr = tile.nr
        depth = max(tile.kr, 32)
        # A qs8 dummy is generated without scales and sets no scale parameters; its packing
        # keeps a float per output as the qc8w one does (2,560 B both on the wheel).
        generated = 0 if gemm_data_type(subgraph, operator) == "INT8/qs8" else scales
        data = depth * nr * element + nr * (4 + generated + 4) + 4 * 64
        # Each column's extras: a float bias (f32); a bias and a scale (qs8, qc8w); a qd8
        # one's sum, scale and bias (12 B: a hybrid dummy's 384 B for 8 columns of 32 on the
        # EPYC), which sets no scale parameters. fully-connected-nc.c reserves the packing
        # rounded up to XNN_ALLOCATION_ALIGNMENT (aligned_total_weights_size).
        extra = xnnpack_packing.HYBRID_CHANNEL_EXTRA_BYTES if hybrid else 4 + scales
        column = xnnpack_packing.round_up(depth, tile.kr) * element + extra
        packed = xnnpack_packing.round_up(nr * column, 64)
        scale_parameters = aligned(4 * nr) if generated and not hybrid else 0
        return (
            context
            + aligned(data)
            + aligned(packed)
            + scale_parameters
            + xnnpack_objects._operator_blocks("gemm")
        )
    if dynamically_quantized(subgraph, operator):
        return context + hybrid_convolution_dummy_bytes(tiles)
    return context + convolution_dummy_bytes(convolution, element, scales, tiles)


def hybrid_convolution_dummy_bytes(tiles: XnnpackTiles = HOST_TILES) -> int:
    """convolution-nhwc.c xnn_fingerprint_convolution2d_nhwc for a dynamically quantized
    (qd8_f32_qc8w) kind: qd8 has no depthwise microkernel, so the dummy is the 1×1
    convolution of one input and one output channel padded by 2, an IGEMM. Its generated
    data is one 8-bit weight, a 4-byte bias and a 4-byte scale with 64 B of alignment after
    each (201 B); its packing one output channel padded to the hybrid GEMM's nr, each of
    round_up(1, kr) weights and 12 B (its sum, scale and bias), to 64 B (fingerprint_cache's
    reserve_space); its zero buffer XNN_EXTRA_BYTES and a depth of 8-bit inputs; and an
    IGEMM operator's blocks. Traced on the AMD EPYC (4x8c8: 201, 192 and 24 B requested)."""
    aligned = xnnpack_packing.aligned_block
    gemm = xnnpack_packing.hybrid_gemm(tiles)
    depth = xnnpack_packing.round_up(1, gemm.kr)
    data = aligned(1 + 4 + 4 + 3 * 64)
    column = depth + xnnpack_packing.HYBRID_CHANNEL_EXTRA_BYTES
    packed = aligned(xnnpack_packing.round_up(gemm.nr * column, 64))
    zero = aligned(XNN_EXTRA_BYTES + depth)
    return data + packed + zero + xnnpack_objects._operator_blocks("igemm")


def convolution_dummy_bytes(
    convolution: xnnpack_packing._Convolution,
    element: int,
    scales: int,
    tiles: XnnpackTiles = HOST_TILES,
) -> int:
    """convolution-nhwc.c xnn_fingerprint_convolution2d_nhwc: a 1×1 convolution of one group
    of one input and one output channel. Its generated data is one weight, a 4-byte bias and
    a 4-byte scale with 64 B of alignment after each. The one-channel dummy runs as a
    depthwise convolution (select_microkernel_type; never vmulcaddc, see xnnpack_packing) with
    the smallest unipass tile: its packing is a channel tile of (taps × weight + bias + an
    8-bit kind's per-channel scale), to 64 B, and its zero buffer a channel tile of input
    elements and XNN_EXTRA_BYTES. An 8-bit kind's requantization scale (one float) is held
    while it is created. Its operator's blocks are a depthwise convolution's."""
    aligned = xnnpack_packing.aligned_block
    data = aligned(element + 4 + 4 + 3 * 64)
    blocks = xnnpack_objects._operator_blocks("dwconv")
    tile = xnnpack_packing._depthwise_tile(convolution.kind, tiles)
    primary = min(tile.primary_tiles)
    packed = xnnpack_packing.round_up(tile.channels * (primary * element + 4 + scales), 64)
    zero = XNN_EXTRA_BYTES + tile.channels * element
    requantization = aligned(4) if scales else 0
    return data + blocks + aligned(packed) + aligned(zero) + requantization


def deconvolution_fingerprint(
    subgraph: Subgraph, operator: Operator, isa: IsaProfile, fingerprinted: set[tuple[object, ...]]
) -> int:
    """A TRANSPOSE_CONV the first of its kind (deconvolution-nhwc.c fingerprints each kind
    once per process, before it creates the operator, and frees it all): the fingerprint's
    blocks, the largest over the ISA's configurations (xnnpack_packing.fingerprint_bytes);
    0 for a kind already fingerprinted or another operator."""
    if operator.opcode != "TRANSPOSE_CONV":
        return 0
    largest = 0
    for tiles in isa.xnnpack:
        found = xnnpack_packing.deconvolution(subgraph, operator, tiles)
        if found is None:
            continue
        kind, narrow, subconvolution = found.fingerprint()
        key = ("deconvolution", kind, str(narrow), str(subconvolution), tiles.name)
        if key in fingerprinted:
            continue
        fingerprinted.add(key)
        largest = max(largest, xnnpack_packing.fingerprint_bytes(found, tiles))
    return largest
