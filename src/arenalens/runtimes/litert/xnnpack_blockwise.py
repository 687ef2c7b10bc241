"""A FULLY_CONNECTED with int4 weights in blockwise quantization and a float input under XNNPACK,
from LiteRT's and XNNPACK's sources (*tflite/delegates/xnnpack/xnnpack_delegate.cc*:
VisitFullyConnectedNode, GetXNNPackDatatype, CheckFp16Scale; XNNPACK
*src/operators/fully-connected-nc.c*: create_fully_connected_nc, the qb4w variants).

* **Taken** as a dynamically quantized operator (its input quantized at run time, as a hybrid
  int8 one): int4 weights of rank 2 with an even depth, fp16 scales (one per block of each
  output channel: elements / scales = the block size), defined as a qbint4 value.
* **Scales** converted from fp16 to bf16 while the weights are packed
  (`xnn_create_fully_connected_nc_qd8_f32_qb4w_f16_scales`: one malloc'd block of two bytes per
  scale, freed once the operator exists): part of the build moment (heap_build).
* **Packed** (qd8_f32_qb4w on AVX2, qdu8_f32_qb4w with AVX-512 VNNI: one 64-aligned block):
  per output channel, to the GEMM's nr (16 with AVX-512 VNNI, 8 with AVX2: counted to 16), the
  depth to kr × sr × planes (16: whole blocks of 32 always are) in nibbles, half a byte each, a
  float bias, a float of extra bytes and one bf16 scale per block.

* **Workspace**: its input quantized and packed inline (xnnpack_workspace.hybrid_gemm_workspace),
  exact for one row; several rows are packed to the qb4w GEMM's own tile
  (xnn_pack_lh_fx_qd8_packed_size(mr, k, mr, kr, sr): with AVX2 3 rows of 8 + round_up(k, 8) B,
  traced on an AMD EPYC), exact where the ISA's configurations name that tile; elsewhere
  (the measuring machine's AVX-512 VNNI kernels are not traced) as an 8-bit hybrid GEMM's 16
  rows, labelled an estimate (on AVX2 that figure was 1.0-5.3x the int4 one).

* **Refused after it is taken**: scales that are not fp16, or not one per block, fail
  GetXNNPackDatatype once the delegate holds the operator (`datatype_failures`): the 2.3.0
  wheel's allocate_tensors() fails under XNNPACK (tests/litert_refusal_cases.py int4_blockwise_*).

* **On a quantized input** (int8: the delegate's static-quantized path, `supported_srq`) the
  partition takes an int4 or int8 blockwise filter of even depth whose block is a multiple of
  32 (CheckTensorFilterType) under an int8 output, and its define then fails: XNNPACK's fully
  connected has no int8-input kind for qbint4 weights (subgraph/fully-connected.c
  validate_datatypes: qbint4 only under qdint8 / qpint8 inputs), so 'failed to delegate
  FULLY_CONNECTED node #N'; scales GetXNNPackDatatype refuses, or an int8 blockwise filter,
  fail the filter's value first. Left to the builtin kernel otherwise, whose Prepare refuses
  every blockwise filter under a quantized input: setup fails either way
  (refusals.blockwise_integer_refusals, `takes_integer`, `integer_words`).

Modelled for blocks XNNPACK accepts (multiples of 32, XNN_MIN_BLOCKSIZE, dividing the depth):
another block size fails in XNNPACK's create (not modelled: the partition stays a bound). Int4
weights of one scale per channel (qcint4): xnnpack_qc4w.
"""

from __future__ import annotations

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import blockwise, xnnpack_qc4w

MINIMUM_BLOCK = 32  # XNN_MIN_BLOCKSIZE
# gemm-config.c: qdu8_f32_qb4w's nr with AVX-512 VNNI (the wheel's measuring machine), 16;
# qd8_f32_qb4w's with AVX2, 8 (counted to 16: errs high by at most 8 channels there).
CHANNEL_TILE = 16
_BIAS_BYTES = 4  # a float bias per output channel
_EXTRA_BYTES = 4  # the qx8_f32_qb4w variant's extra_weights_bytes: sizeof(float)
_SCALE_BYTES = 2  # one bf16 scale per block
_QUANTIZED_INPUTS = frozenset({"UINT8", "INT8", "INT16"})
_TYPE_CODES = {"INT8": 9, "INT2": 20}  # TfLiteType, as the delegate's log prints it


def takes_int4(model: Model, subgraph: Subgraph, operator: Operator) -> bool | None:
    """Whether the delegate takes an int4 FULLY_CONNECTED of float input: True where it does
    and the packing is modelled, None where it may and is not (see the module docstring),
    False where it refuses (an odd depth, scales that are not fp16 or do not divide the
    weights into blocks)."""
    weights = xnnpack_qc4w.int4_weights(subgraph, operator)
    if weights is None:
        return None
    details = blockwise.blockwise(model, subgraph.index, weights.index)
    if details is None:
        return xnnpack_qc4w.takes(weights)  # one scale per channel, or one (qcint4)
    if len(weights.shape) != 2:
        return None
    if not 0 <= details.scales < len(subgraph.tensors):
        return False
    scales = subgraph.tensors[details.scales]
    depth = weights.shape[1]
    if depth % 2 or scales.dtype.name != "FLOAT16" or not scales.element_count:
        return False
    if weights.element_count // scales.element_count != details.block_size:
        return False
    if details.block_size % MINIMUM_BLOCK or depth % details.block_size:
        return None  # refused by XNNPACK's create (check_block_size): not modelled
    return True


def integer_blockwise(
    model: Model, subgraph: Subgraph, operator: Operator, *, float_input: bool = False
) -> Tensor | None:
    """The blockwise-quantized filter of a FULLY_CONNECTED with a quantized input (uint8,
    int8 or int16; `float_input`: a float one), else None."""
    if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
        return None
    if min(operator.inputs[:2]) < 0:
        return None
    data, weights = (subgraph.tensors[index] for index in operator.inputs[:2])
    if float_input != (data.dtype.name == "FLOAT32"):
        return None
    if not float_input and data.dtype.name not in _QUANTIZED_INPUTS:
        return None
    if blockwise.blockwise(model, subgraph.index, weights.index) is None:
        return None
    return weights


def takes_integer(model: Model, subgraph: Subgraph, operator: Operator) -> bool | None:
    """Whether the delegate's partition takes a FULLY_CONNECTED of a blockwise filter the float
    int4 path (`takes_int4`) does not cover: under a quantized input, or an int8 or int2 one
    under a float input (None: not such an operator). Its input and output of one type (int8
    under `supported_srq`, float dynamically quantized; others are 'unsupported mixed types'),
    a constant int4 or int8 filter of rank 2 (int2: a depth a multiple of 4), an even depth for
    int4, a scales tensor and a block a multiple of 32 (CheckTensorFilterType). Its filter's
    value or its define then fails (`integer_words`, `datatype_failures`)."""
    weights = integer_blockwise(model, subgraph, operator)
    wanted = "INT8"
    if weights is None:
        weights = integer_blockwise(model, subgraph, operator, float_input=True)
        if weights is None or weights.dtype.name == "INT4":
            return None
        wanted = "FLOAT32"
    details = blockwise.blockwise(model, subgraph.index, weights.index)
    data = subgraph.tensors[operator.inputs[0]]
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if details is None or output is None or not weights.has_data or len(weights.shape) != 2:
        return False
    if data.dtype.name != wanted or output.dtype.name != wanted:
        return False
    depth = weights.shape[1]
    kind = weights.dtype.name
    if kind not in ("INT4", "INT8", "INT2") or (kind == "INT4" and depth % 2):
        return False
    if kind == "INT2" and depth % 4:
        return False
    return details.scales >= 0 and details.block_size % MINIMUM_BLOCK == 0


def integer_words(model: Model, subgraph: Subgraph, operator: Operator) -> str:
    """How the delegate fails an operator `takes_integer` takes, in its log's words."""
    failures = dict(datatype_failures(model, subgraph, integer=True))
    if operator.index in failures:
        return f"GetXNNPackDatatype refuses its filter: {failures[operator.index]}"
    return (
        f"'failed to delegate FULLY_CONNECTED node #{operator.index}': XNNPACK's fully "
        "connected has no int8-input kind for blockwise int4 weights"
    )


def datatype_failures(
    model: Model, subgraph: Subgraph, *, integer: bool = False
) -> tuple[tuple[int, str], ...]:
    """(operator index, what is wrong, in the delegate's words) of every blockwise
    FULLY_CONNECTED of float input (`integer`: of int8 input, which the builtin kernel refuses
    anyway) the delegate takes whose filter value GetXNNPackDatatype then refuses: int4 scales
    not fp16 (CheckFp16Scale) or not one per block (elements / scales != the block size), or an
    int8 or int2 filter (blockwise int4 only), its block a multiple of 32 (CheckTensorFilterType
    leaves the others to the builtin kernel). The delegate's Prepare and allocate_tensors() fail
    then (the 2.3.0 wheel; the builtin kernel runs such a model of float input: bwq18_9)."""
    found: list[tuple[int, str]] = []
    for operator in subgraph.operators:
        weights = integer_blockwise(model, subgraph, operator, float_input=not integer)
        if weights is None or len(weights.shape) != 2:
            continue
        details = blockwise.blockwise(model, subgraph.index, weights.index)
        if details is None or not 0 <= details.scales < len(subgraph.tensors):
            continue
        kind = weights.dtype.name
        if kind != "INT4":
            if kind in ("INT8", "INT2") and details.block_size % MINIMUM_BLOCK == 0:
                found.append((operator.index, _other_kind(weights)))
            continue
        if weights.shape[1] % 2:
            continue
        scales = subgraph.tensors[details.scales]
        if scales.dtype.name != "FLOAT16":
            what = f"its block scales are {scales.dtype.name}, not fp16"
        elif (
            not scales.element_count
            or weights.element_count // scales.element_count != details.block_size
        ):
            what = (
                f"its {scales.element_count:,} scales do not give one per block of "
                f"{details.block_size} of its {weights.element_count:,} weights"
            )
        else:
            continue
        found.append(
            (
                operator.index,
                f"{what}, which its weights' value type refuses ('Unsupported combination of "
                "filter elements ...' or the fp16 scale check)",
            )
        )
    return tuple(found)


def _other_kind(weights: Tensor) -> str:
    return (
        f"its {weights.dtype.name.lower()} filter is blockwise-quantized, which XNNPACK's value "
        f"types take for int4 only ('unsupported tensor type {_TYPE_CODES[weights.dtype.name]} "
        f"for blockwise quantized tensor {weights.index} in XNNPACK delegate')"
    )


def _blocks(model: Model | None, subgraph: Subgraph, operator: Operator) -> int:
    """The blocks of each output channel of an int4 blockwise FULLY_CONNECTED (0: none)."""
    weights = xnnpack_qc4w.int4_weights(subgraph, operator)
    if model is None or weights is None or len(weights.shape) != 2:
        return 0
    details = blockwise.blockwise(model, subgraph.index, weights.index)
    if details is None or details.block_size <= 0:
        return 0
    return int(weights.shape[1]) // details.block_size


def packed_request(model: Model | None, subgraph: Subgraph, operator: Operator) -> int | None:
    """Bytes XNNPACK asks for to pack an int4 blockwise FULLY_CONNECTED's weights (None: not
    an int4 blockwise one)."""
    blocks = _blocks(model, subgraph, operator)
    if not blocks:
        return None
    output_channels, depth = subgraph.tensors[operator.inputs[1]].shape
    per_channel = depth // 2 + _BIAS_BYTES + _EXTRA_BYTES + blocks * _SCALE_BYTES
    columns = -(-output_channels // CHANNEL_TILE) * CHANNEL_TILE
    return -(-columns * per_channel // 64) * 64


def bf16_scales_request(model: Model | None, subgraph: Subgraph, operator: Operator) -> int:
    """The bf16 copy of the scales made while the weights are packed (0: not an int4 one)."""
    blocks = _blocks(model, subgraph, operator)
    return _SCALE_BYTES * subgraph.tensors[operator.inputs[1]].shape[0] * blocks if blocks else 0


WORKSPACE_ESTIMATE = (
    "; an int4 blockwise GEMM's input of several rows counted as an int8 one's (an estimate)"
)


def packs_rows(model: Model) -> bool:
    """Whether an int4 blockwise FULLY_CONNECTED the delegate may take has more than one row of
    input (its workspace is then an estimate)."""
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            weights = xnnpack_qc4w.int4_weights(subgraph, operator)
            if weights is None or len(weights.shape) != 2 or not weights.shape[1]:
                continue
            if blockwise.blockwise(model, subgraph.index, weights.index) is None:
                continue  # one scale per channel: xnnpack_qc4w
            data = subgraph.tensors[operator.inputs[0]]
            if data.element_count // weights.shape[1] > 1:
                return True
    return False
