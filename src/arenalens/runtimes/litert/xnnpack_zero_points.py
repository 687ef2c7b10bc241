"""Per-channel zero points the XNNPACK delegate refuses once it holds the operator, from LiteRT's
*tflite/delegates/xnnpack/xnnpack_delegate.cc* (the 2.3.0 wheel's commit).

* **Where**: the delegate's Prepare (`Subgraph::Create`) defines an XNNPACK value for every
  tensor the partition's operators use (their inputs, less those XNNPACK reads as parameters:
  the axes, paddings, new shapes, begins and sizes, permutations, split axes, a
  TRANSPOSE_CONV's output shape; and their outputs). `DefineXNNPACKValue` asks
  `GetXNNPackDatatype` for each; an invalid type fails the Prepare, allocate_tensors() fails,
  and LiteRT does not fall back to the builtin kernels.
* **What**: an INT8 tensor with affine quantization of more than one scale (per channel)
  passes `CheckZeroPointForPerChannelQuantization` only if every zero point is 0: 'unsupported
  zero-point value (Z) in channel C of INT8 tensor T in XNNPACK delegate'. (INT4 and INT2 ones
  pass with 0, and 8 for INT4: a FULLY_CONNECTED's are refusals.packed_zero_point_refusals.)
  The Visit*Node checks before it read the tensor's legacy `params.zero_point`, which the
  interpreter leaves 0 for a per-channel tensor, so the delegate takes the operator first
  (FULLY_CONNECTED's 'unsupported zero point' check too).
* **Not taken**: a CONV_2D, DEPTHWISE_CONV_2D or TRANSPOSE_CONV filter quantized per channel
  whose *first* channel's zero point is not 0 fails the Visit*Node's
  `CheckTensorFloat32OrQCInt8Type` (XNNPACK's `xnn_validate_channelwise_quantized_tensor` checks
  that one zero point of a qcint8 tensor, *src/tensor.c* check_zero_point): the delegate leaves
  the operator to the builtin kernel, which runs it (`first_channel_refused`, read by
  heap_xnnpack's partition). FULLY_CONNECTED's Visit has no such check: taken, then refused.
* **Per tensor**: one INT8 zero point within -128..127 passes `GetXNNPackDatatype` as qint8,
  and then XNNPACK's define of the operator refuses a qint8 filter whose zero point is not 0
  ('unsupported quantization zero point Z for datatype qint8': *src/subgraph/*
  depthwise-convolution-2d.c, fully-connected.c): an int8 DEPTHWISE_CONV_2D, and a float
  FULLY_CONNECTED with an int8 filter (dynamically quantized: an int8 one's Visit leaves it to
  the builtin kernel, 'unsupported zero point (Z) for weights'). A hybrid CONV_2D with such a
  filter runs under XNNPACK (measured); an int8 CONV_2D is conv.cc's refusal.

Measured on the 2.3.0 wheel (tests/litert_refusal_cases.py XNNPACK_ZERO_POINTS, 14 cases; the
builtin kernels run each): a per-channel int8 filter with a non-zero zero point in a later
channel fails allocate_tensors() under XNNPACK in a float CONV_2D, FULLY_CONNECTED or
TRANSPOSE_CONV and an int8 DEPTHWISE_CONV_2D, FULLY_CONNECTED or TRANSPOSE_CONV; in the first
channel the CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV run under XNNPACK, the int8
FULLY_CONNECTED fails; per tensor, the depthwise and the float FULLY_CONNECTED fail, a float
CONV_2D and TRANSPOSE_CONV run. A CONV_2D of int8 or int16 input is left to conv.cc's check
(prepare_refusals: one refusal per operator, in the builtin kernel's words).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from arenalens.ir import Model, Operator, Subgraph

# Operators whose inputs but the first are XNNPACK parameters, not values (Subgraph::Create).
_FIRST_INPUT_ONLY = frozenset(
    {
        "EXPAND_DIMS",
        "MEAN",
        "PAD",
        "REDUCE_MAX",
        "REDUCE_MIN",
        "SUM",
        "RESHAPE",
        "RESIZE_BILINEAR",
        "STRIDED_SLICE",
        "SLICE",
        "TRANSPOSE",
    }
)
_CONV_CHECKED_INPUTS = frozenset({"INT8", "INT16"})  # conv.cc refuses these (prepare_refusals)


_FIRST_CHANNEL_CHECKED = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"})
_PER_TENSOR_INPUTS = {"DEPTHWISE_CONV_2D": "INT8", "FULLY_CONNECTED": "FLOAT32"}


class ZeroPointFailure(NamedTuple):
    """An operator the delegate takes and one of its tensors' refused zero point (channel -1:
    a per-tensor filter, refused by XNNPACK's define of the operator)."""

    operator: int
    tensor: int
    channel: int
    zero_point: int


def _filter(operator: Operator) -> int:
    """The filter's tensor index of a weighted operator, its second input (-1: none)."""
    return operator.inputs[1] if len(operator.inputs) > 1 else -1


def first_channel_refused(subgraph: Subgraph, operator: Operator) -> bool:
    """Whether the Visit*Node's CheckTensorFloat32OrQCInt8Type refuses the operator's int8
    per-channel filter for its first channel's zero point (see above)."""
    if operator.opcode not in _FIRST_CHANNEL_CHECKED:
        return False
    index = _filter(operator)
    if index < 0:
        return False
    weights = subgraph.tensors[index]
    quantization = weights.quantization
    return (
        weights.dtype.name == "INT8"
        and quantization is not None
        and quantization.channel_count > 1
        and bool(quantization.zero_point)
    )


def _per_tensor_failure(subgraph: Subgraph, operator: Operator) -> ZeroPointFailure | None:
    """An int8 DEPTHWISE_CONV_2D's or a float FULLY_CONNECTED's per-tensor int8 filter whose
    zero point XNNPACK's define refuses (see above)."""
    wanted = _PER_TENSOR_INPUTS.get(operator.opcode)
    index = _filter(operator)
    if wanted is None or index < 0 or operator.inputs[0] < 0:
        return None
    weights = subgraph.tensors[index]
    quantization = weights.quantization
    if subgraph.tensors[operator.inputs[0]].dtype.name != wanted or weights.dtype.name != "INT8":
        return None
    if quantization is None or quantization.channel_count > 1 or not quantization.zero_point:
        return None
    return ZeroPointFailure(operator.index, index, -1, quantization.zero_point)


def _values(operator: Operator) -> tuple[int, ...]:
    """The tensors Subgraph::Create defines as XNNPACK values for one operator."""
    inputs = operator.inputs
    if operator.opcode in _FIRST_INPUT_ONLY:
        inputs = inputs[:1]
    elif operator.opcode == "SPLIT":
        inputs = inputs[1:2]
    elif operator.opcode == "TRANSPOSE_CONV":
        inputs = inputs[1:]
    return tuple(index for index in (*inputs, *operator.outputs) if index >= 0)


def zero_point_failures(
    model: Model, subgraph: Subgraph, delegated: Sequence[int]
) -> tuple[ZeroPointFailure, ...]:
    """The first refused tensor of each operator of `delegated`, the operators the delegate
    takes (heap_xnnpack.partition), see above."""
    users: dict[int, list[int]] = {}  # tensor -> the taken operators defining it
    found: dict[int, ZeroPointFailure] = {}
    for index in delegated:
        operator = subgraph.operators[index]
        per_tensor = _per_tensor_failure(subgraph, operator)
        if per_tensor is not None:
            found[index] = per_tensor
        if _conv_checked(subgraph, operator):
            continue  # conv.cc's refusal (prepare_refusals), said once
        for tensor_index in _values(operator):
            tensor = subgraph.tensors[tensor_index]
            quantization = tensor.quantization
            if tensor.dtype.name != "INT8" or quantization is None:
                continue
            if quantization.channel_count > 1:
                users.setdefault(tensor_index, []).append(index)
    if not users:
        return tuple(found[index] for index in sorted(found))
    from arenalens.tflite.reader import read_quantization_zero_points_of  # noqa: PLC0415

    tensors = sorted(users)
    points_of = read_quantization_zero_points_of(model, subgraph.index, tensors)
    for tensor_index, points in zip(tensors, points_of, strict=True):
        refused = next(((channel, point) for channel, point in enumerate(points) if point), None)
        if refused is None:
            continue
        for index in users[tensor_index]:
            found.setdefault(index, ZeroPointFailure(index, tensor_index, *refused))
    return tuple(found[index] for index in sorted(found))


def _conv_checked(subgraph: Subgraph, operator: Operator) -> bool:
    """A CONV_2D of int8 or int16 input, whose filter's zero points conv.cc checks."""
    if operator.opcode != "CONV_2D" or not operator.inputs or operator.inputs[0] < 0:
        return False
    return subgraph.tensors[operator.inputs[0]].dtype.name in _CONV_CHECKED_INPUTS
