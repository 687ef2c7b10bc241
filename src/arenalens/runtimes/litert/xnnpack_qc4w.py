"""A FULLY_CONNECTED with int4 weights of one scale per output channel (or one for all) and a
float input under XNNPACK, from LiteRT's and XNNPACK's sources (*tflite/delegates/xnnpack/
xnnpack_delegate.cc*: VisitFullyConnectedNode, CheckTensorFilterType, GetXNNPackDatatype;
XNNPACK *src/subgraph.c* convert_gemm_to_qduint8, *src/configs/gemm-config.c*
init_qd8_f32_qc4w_gemm_config / init_qdu8_f32_qc4w_gemm_config, *src/operators/
fully-connected-nc.c* create_fully_connected_nc and the qx8_f32_qc4w variant).

* **Taken** as a dynamically quantized operator, as a hybrid int8 one (`dynamically_quantized`
  in the delegate): int4 weights of rank 2 with an even depth ('unsupported odd number of
  inputs channels' otherwise), scales along dimension 0 when there are several
  (CheckTensorFilterType: expected_quantized_dimension 0); one scale becomes qint4 and is
  expanded to one per output channel (a new TfLiteFloatArray, as an int8 one's), several a
  qcint4 value. Taken whatever its zero points: per channel 0 or 8 run (qcint4 with the first
  one; packed as with 0, measured), any other fails the delegate's Prepare
  (refusals.packed_zero_point_refusals).
* **Which GEMM**: XNNPACK's subgraph takes the unsigned (qdu8) configuration where its
  architecture ranks above the signed (qd8) one's: on AVX2 qdu8_f32_qc4w 4x8c8__avx2_madd
  (the wheel's trace on an AMD EPYC: `xnn_create_fully_connected_nc_qdu8_f32_qc4w`), on an
  AMX machine qd8_f32_qc4w 16x64c4__avx512amx (AMX ranks above VNNI, as for the int8 hybrid
  GEMM the measuring machine ran: 64 channels, depth 4).
* **Packed** (fully-connected-nc.c create_fully_connected_nc, nibble filter): per output
  channel padded to nr, the depth to kr × sr × planes (2 planes: 16 on AVX2, 8 with AMX) in
  nibbles, half a byte each, a float bias and the variant's `extra_weights_bytes` (two floats:
  the kernel scale and the row sum), in one 64-aligned block: 16 channels of depth 96 on the
  EPYC are 16 × (48 + 12) = 960 B, the wheel's request.
* **Workspace**: its input quantized and packed inline as a hybrid GEMM's
  (xnnpack_workspace.hybrid_gemm_workspace), to this GEMM's own row tile and depth unroll.

The ISAs whose qc4w configuration is not named here (arm64 with the dot product or i8mm:
subgraph.c takes KleidiAI's qp8_f32_qc4w GEMM there when the build has KleidiAI, packed its own
way) keep the bound for the packing; plain arm64 NEON has no qp8 kernel and packs to qd8's
6x16 (kr 1, two planes: isa.py).

**On an int8 input** (the delegate's `supported_srq`: int8 input and output, int4 filter) the
same checks take it (rank 2, even depth, scales along dimension 0, one scale expanded to one
per channel), and XNNPACK runs a static-quantized GEMM (fully-connected-nc.c
xnn_create_fully_connected_nc_qs8_qc4w, gemm-config.c init_qs8_qc4w_gemm_config: AVX2 7x8c8,
two planes; arm64 5x16c4 with the dot product, else 3x4, one plane): no input is quantized at
run time (no workspace), and each output channel packs its depth to kr × planes nibbles, an
int32 bias and one float scale (qs8_qc4w_variant's `extra_weights_bytes`: sizeof(float)): 256
channels of depth 256 on the EPYC are 256 × (128 + 8) = 34,816 B, the wheel's request
(held17b_int4_6). Blockwise int4 weights on an int8 input fail setup
(refusals.blockwise_integer_refusals).
"""

from __future__ import annotations

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import blockwise

PLANES = 2  # gemm-config.c: every qc4w configuration on x86-64 packs two planes of nibbles
# Where the ISA's qc4w GEMM is not named (arm64), its input's packing is counted to at least
# this many rows a thread, each its depth to this many bytes and 8 B of parameters: KleidiAI's
# qp8 packing rounds rows to its mr (16 at most without SME) and depth to kr × sr (32).
UNNAMED_ROWS = 16
UNNAMED_DEPTH = 32
WORKSPACE_ESTIMATE = (
    "; an int4 per-channel GEMM's input counted to 16 rows and its depth to 32 (that GEMM is "
    "not named for this ISA: an estimate)"
)
_BIAS_BYTES = 4  # a float bias per output channel
_EXTRA_BYTES = 8  # qx8_f32_qc4w_variant.extra_weights_bytes: sizeof(float) * 2
_INTEGER_EXTRA_BYTES = 4  # qs8_qc4w_variant.extra_weights_bytes: sizeof(float), the scale


def int4_weights(subgraph: Subgraph, operator: Operator) -> Tensor | None:
    """The constant int4 weights of a FULLY_CONNECTED with a float input, else None (both
    int4 paths start here: per channel below, blockwise in xnnpack_blockwise)."""
    if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
        return None
    if min(operator.inputs[:2]) < 0:
        return None
    data, weights = (subgraph.tensors[index] for index in operator.inputs[:2])
    if data.dtype.name != "FLOAT32" or weights.dtype.name != "INT4" or not weights.has_data:
        return None
    return weights


def integer_int4(model: Model | None, subgraph: Subgraph, operator: Operator) -> Tensor | None:
    """The constant int4 weights of a FULLY_CONNECTED with an int8 input whose quantization is
    affine (one scale, or one per channel), not blockwise; else None."""
    if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
        return None
    if min(operator.inputs[:2]) < 0:
        return None
    data, weights = (subgraph.tensors[index] for index in operator.inputs[:2])
    if data.dtype.name != "INT8" or weights.dtype.name != "INT4" or not weights.has_data:
        return None
    if weights.quantization is None:
        return None
    if model is not None and blockwise.blockwise(model, subgraph.index, weights.index):
        return None
    return weights


def takes_integer(model: Model, subgraph: Subgraph, operator: Operator) -> bool | None:
    """Whether the delegate takes an int4 FULLY_CONNECTED of int8 input (supported_srq): an
    int8 output (input and output types alike), then the float path's filter checks; None
    (not modelled) for blockwise weights."""
    weights = integer_int4(model, subgraph, operator)
    if weights is None:
        return None
    if not operator.outputs or operator.outputs[0] < 0:
        return False
    if subgraph.tensors[operator.outputs[0]].dtype.name != "INT8":
        return False  # 'unsupported mixed types in FULLY_CONNECTED operator'
    return takes(weights)


def per_channel_int4(model: Model | None, subgraph: Subgraph, operator: Operator) -> Tensor | None:
    """The constant int4 weights of a FULLY_CONNECTED with a float input whose quantization is
    affine (one scale, or one per channel), not blockwise; else None."""
    weights = int4_weights(subgraph, operator)
    if weights is None or weights.quantization is None:
        return None  # no affine scales: blockwise (its scales are a tensor) or none
    if model is not None and blockwise.blockwise(model, subgraph.index, weights.index):
        return None
    return weights


def takes(weights: Tensor) -> bool | None:
    """Whether the delegate takes a per-channel (or one-scale) int4 FULLY_CONNECTED of float
    input: False for weights not of rank 2, an odd depth or scales along another dimension;
    None (not modelled) without affine scales or with a count GetXNNPackDatatype refuses."""
    if len(weights.shape) != 2 or weights.shape[1] % 2:
        return False
    quantization = weights.quantization
    if quantization is None or not quantization.channel_count:
        return None  # no affine scales: GetXNNPackDatatype's failure is not modelled
    if quantization.channel_count > 1 and quantization.axis != 0:
        return False
    if quantization.channel_count not in (1, weights.shape[0]):
        return None  # GetXNNPackDatatype refuses it after the delegate took it
    # Taken whatever its zero points (VisitFullyConnectedNode reads none): those other than 0
    # or 8 per channel then fail the delegate's Prepare (refusals.packed_zero_point_refusals).
    return True


def channel_bytes(depth: int, kr: int, *, integer: bool = False, planes: int = PLANES) -> int:
    """One output channel's packed bytes: its depth to kr × planes nibbles (and to whole bytes:
    fully-connected-nc.c rounds k_stride to 2), a bias (float, or int32 on an int8 input: 4 B
    either way) and the variant's extras (two floats; one scale on an int8 input)."""
    unroll = max(kr * planes, 2)
    extra = _INTEGER_EXTRA_BYTES if integer else _EXTRA_BYTES
    return -(-depth // unroll) * unroll // 2 + _BIAS_BYTES + extra


def packed_request(
    output_channels: int,
    depth: int,
    nr: int,
    kr: int,
    *,
    integer: bool = False,
    planes: int = PLANES,
) -> int:
    """Bytes XNNPACK asks for to pack a qc4w GEMM's weights with output-channel tile `nr` and
    depth unroll `kr` (sr 1): channels to nr, each its depth to kr × planes nibbles, a bias
    and the variant's extras, the whole rounded to 64 (`integer`: the qs8_qc4w GEMM's)."""
    columns = -(-output_channels // nr) * nr
    per_channel = channel_bytes(depth, kr, integer=integer, planes=planes)
    return -(-columns * per_channel // 64) * 64


def fingerprint_type(subgraph: Subgraph, operator: Operator, kind: str) -> str:
    """The weights' kind a GEMM's fingerprint is named by (heap_build._gemm_data_type): an int4
    per-channel one's is its own (fingerprint id qdu8_f32_qc4w or qd8_f32_qc4w), apart from a
    blockwise one's. Its dummy is counted as the 8-bit GEMM's packing, a byte per weight where
    the qc4w GEMM packs half: errs high (12 B a channel of its tile)."""
    if kind == "INT4" and per_channel_int4(None, subgraph, operator) is not None:
        return "INT4/qc4w"
    return kind
