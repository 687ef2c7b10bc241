"""Joining, splitting and selecting kernels: PACK, UNPACK, SPLIT, SPLIT_V, CONCATENATION, SLICE,
STRIDED_SLICE, GATHER, GATHER_ND, DYNAMIC_UPDATE_SLICE → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): pack.cc, unpack.cc, split.cc, split_v.cc,
concatenation.cc, slice.cc, strided_slice.cc, strided_slice_common.cc, gather.cc, gather_nd.cc,
dynamic_update_slice.cc; strided_slice_logic.h for the output-shape check. Temp memory is a bump
allocator rewound only after each Prepare, so a tensor fetched twice (CONCATENATION's first
input) costs two temp copies. GATHER and GATHER_ND write their output's dims in Prepare: a
persistent dims copy, and TFLM plans the output with the dims they computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import ceil

from arenalens.analysis.inplace import NotInPlace
from arenalens.builds.build import COMPRESSION
from arenalens.builds.tflm import DYNAMIC_UPDATE_SLICE
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.access_order import (
    MAX_TRACE_EVENTS,
    Copy,
    checked,
    copies_trace,
    element_bytes,
    int_constants,
    options_of,
    too_large,
)
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    constant_ints,
    int32_values,
    op_data,
    rank,
    rewritten_dims,
    scale_of,
    setup_refused,
    shape,
    zero_point_of,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    arity_then_temps,
    not_equal,
    not_true,
    numbered,
)

_PACK_PARAMS = struct("TfLitePackParams", ("values_count", "int"), ("axis", "int"))
_UNPACK_PARAMS = struct("TfLiteUnpackParams", ("num", "int"), ("axis", "int"))
_SPLIT_PARAMS = struct("TfLiteSplitParams", ("num_splits", "int"))
_SPLIT_V_PARAMS = struct("TfLiteSplitVParams", ("num_splits", "int"))
_CONCATENATION_PARAMS = struct("TfLiteConcatenationParams", ("axis", "int"), ("activation", "enum"))
_GATHER_PARAMS = struct("TfLiteGatherParams", ("axis", "int"), ("batch_dims", "int"))
_STRIDED_SLICE_PARAMS = struct(
    "TfLiteStridedSliceParams",
    ("begin_mask", "int"),
    ("end_mask", "int"),
    ("ellipsis_mask", "int"),
    ("new_axis_mask", "int"),
    ("shrink_axis_mask", "int"),
    ("offset", "bool"),
)

# concatenation.cc — OpData { ConcatenationParams params; [compression] scratch_indices[10] }.
_CONCATENATION_MAX_INPUTS = 10
_CONCATENATION_OP_DATA = struct(
    "OpData",
    (
        "params",
        struct(
            "ConcatenationParams",
            ("axis", "int32"),
            ("input_zeropoint", "pointer"),
            ("input_scale", "pointer"),
            ("inputs_count", "int32"),
            ("output_zeropoint", "int32"),
            ("output_scale", "float"),
        ),
    ),
    Field("scratch_indices", "int", _CONCATENATION_MAX_INPUTS, only_with=COMPRESSION),
)
# strided_slice.cc — Init allocates the StridedSliceParams it fills in Prepare.
_STRIDED_SLICE_OP_DATA = struct(
    "StridedSliceParams",
    ("start_indices_count", "int8"),
    Field("start_indices", "int32", 5),
    ("stop_indices_count", "int8"),
    Field("stop_indices", "int32", 5),
    ("strides_count", "int8"),
    Field("strides", "int32", 5),
    ("begin_mask", "uint16"),
    ("ellipsis_mask", "uint16"),
    ("end_mask", "uint16"),
    ("new_axis_mask", "uint16"),
    ("shrink_axis_mask", "uint16"),
    ("offset", "bool"),
)


def _type_refusal(
    context: base.KernelContext, dtype: str, accepted: tuple[str, ...], message: str
) -> list[base.Event]:
    """An Eval that switches on the type and refuses the others (setup succeeds)."""
    return [] if dtype in accepted else [base.Refusal(message, base.INVOKE)]


def _pack(context: base.KernelContext) -> base.Events:
    # No Prepare: nothing is fetched or checked before Eval, which switches on the output type.
    dtype = context.output_type(0)
    accepted = ("FLOAT32", "INT8", "INT16", "INT32", "INT64")
    return _type_refusal(context, dtype, accepted, f"Type '{dtype}' is not supported by pack.")


def _unpack(context: base.KernelContext) -> base.Events:
    # No Prepare; Eval switches on the input type.
    dtype = context.input_type(0)
    accepted = ("FLOAT32", "INT32", "INT16", "INT8")
    return _type_refusal(context, dtype, accepted, f"Type '{dtype}' is not supported by unpack.")


def _split_eval(
    context: base.KernelContext, file: str, source: int, axis_slot: int
) -> list[base.Event]:
    """SPLIT / SPLIT_V Eval: the constant axis must index the input, whose type is switched."""
    values = constant_ints(context, context.input(axis_slot)) or (0,)
    dims = rank(context.input(source))
    axis = values[0] + dims if values[0] < 0 else values[0]
    if axis < 0:
        return [not_true(file, "axis_value >= 0", base.INVOKE)]
    if axis >= dims:
        return [not_true(file, "axis_value < input->dims->size", base.INVOKE)]
    dtype = context.input_type(source)
    accepted = ("FLOAT32", "INT8", "INT16", "INT32")
    return _type_refusal(context, dtype, accepted, f"Type {dtype} currently not supported.")


def _split(context: base.KernelContext) -> base.Events:
    # Only the axis (input 0) is fetched; it must be constant.
    file = "split.cc"
    found = base.temps(context, ("in", 0))
    axis = context.input(0)
    if axis is None or not axis.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >axis< tensor is not supported")]
    return found + _split_eval(context, file, 1, 0)


def _split_v(context: base.KernelContext) -> base.Events:
    # Three inputs; only the axis (input 2) is fetched (size_splits is read at Eval).
    file = "split_v.cc"
    if len(context.operator.inputs) != 3:
        return [not_equal(file, "NumInputs(node)", "3", len(context.operator.inputs), 3)]
    found = base.temps(context, ("in", 2))
    axis = context.input(2)
    if axis is None or not axis.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >axis< tensor is not supported")]
    return found + _split_eval(context, file, 0, 2)


_CONCATENATION_TYPES = ("FLOAT32", "INT8", "INT16", "INT32", "INT64", "BOOL")


def _concatenation(context: base.KernelContext) -> base.Events:
    # Input 0 and the output, then every input again, input 0 included: n + 2 temp tensors
    # (temp memory is only rewound after Prepare, so the second copy of input 0 costs again).
    file = "concatenation.cc"
    found = base.temps(context, ("in", 0), ("out", 0))
    input_type, output_type = context.input_type(0), context.output_type(0)
    activation = context.operator.options.get("fused_activation_function", "NONE")
    if activation not in ("NONE", 0):
        number = activation if isinstance(activation, int) else _activation_number(activation)
        return [*found, not_equal(file, "params->activation", "kTfLiteActNone", number, 0)]
    if input_type not in _CONCATENATION_TYPES:
        return [
            *found,
            not_true(
                file,
                "input_type == kTfLiteFloat32 || input_type == kTfLiteInt8 || "
                "input_type == kTfLiteInt16 || input_type == kTfLiteInt32 || "
                "input_type == kTfLiteInt64 || input_type == kTfLiteBool",
            ),
        ]
    if output_type != input_type:
        return [*found, not_equal(file, "output_type", "input_type", output_type, input_type)]
    count = len(context.operator.inputs)
    if count > _CONCATENATION_MAX_INPUTS:
        return [*found, not_true(file, "num_inputs <= kMaxInputNum")]
    result = context.output(0)
    for position in range(count):
        tensor = context.input(position)
        found += base.temps(context, ("in", position))
        if tensor is None:
            return [*found, not_true(file, "input != nullptr")]
        if tensor.dtype.name != input_type:
            return [
                *found,
                not_equal(file, "input->type", "input_type", tensor.dtype.name, input_type),
            ]
        if rank(tensor) > 6:
            return [
                *found,
                base.Refusal(
                    "Op Concatenation does not currently support num dimensions > 6 "
                    f"Tensor has {rank(tensor)} dimensions."
                ),
            ]
        if input_type == "INT8" and scale_of(tensor) != scale_of(result):
            return [
                *found,
                not_equal(
                    file,
                    "static_cast<double>(input->params.scale)",
                    "static_cast<double>(output_tensor->params.scale)",
                    scale_of(tensor),
                    scale_of(result),
                ),
            ]
        if input_type == "INT8" and zero_point_of(tensor) != zero_point_of(result):
            return [
                *found,
                not_equal(
                    file,
                    "input->params.zero_point",
                    "output_tensor->params.zero_point",
                    zero_point_of(tensor),
                    zero_point_of(result),
                ),
            ]
        if input_type == "INT16" and zero_point_of(tensor) != 0:
            return [
                *found,
                not_equal(file, "input->params.zero_point", "0", zero_point_of(tensor), 0),
            ]
    if input_type == "INT16" and zero_point_of(result) != 0:
        return [
            *found,
            not_equal(file, "output_tensor->params.zero_point", "0", zero_point_of(result), 0),
        ]
    return found


def _activation_number(name: object) -> int:
    """TfLiteFusedActivation's number for a schema activation name."""
    names = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT", "SIGMOID")
    return names.index(name) if name in names else -1


def _slice(context: base.KernelContext) -> base.Events:
    # Input, begin, size, output; every other check is a DCHECK (compiled out).
    file = "slice.cc"
    found = arity_then_temps(context, file, 3, 1)
    if setup_refused(found):
        return found
    begin_type = context.input_type(1)
    if begin_type not in ("INT32", "INT64"):
        return [
            *found,
            base.Refusal(f"Begin tensor type {numbered(begin_type)} not supported.", base.INVOKE),
        ]
    dtype = context.input_type(0)
    accepted = ("FLOAT32", "INT32", "INT8", "INT16", "BOOL")
    message = f"Input tensor type {numbered(dtype)} not supported."
    return found + _type_refusal(context, dtype, accepted, message)


def _strided_slice(context: base.KernelContext) -> base.Events:
    # StridedSliceContext fetches input, begin, end, strides and output (its destructor frees
    # them on every path). ellipsis_mask, new_axis_mask and offset are ignored (forced 0).
    file = "strided_slice_common.cc"
    found = arity_then_temps(context, file, 4, 1)
    if setup_refused(found):
        return found
    source = context.input(0)
    if rank(source) > 4:
        return [*found, base.Refusal(f"{file}: input dim should not exceed 4")]
    for slot, name in ((1, "begin"), (2, "end"), (3, "strides")):
        tensor = context.input(slot)
        if tensor is None or not tensor.has_data:
            return [*found, base.Refusal(f"{file}: Non-constant >{name}< tensor is not supported")]
    refusal = _strided_slice_shape(context, file)
    if refusal is not None:
        return [*found, refusal]
    dtype = context.input_type(0)
    accepted = ("FLOAT32", "INT8", "INT16", "INT32", "BOOL")
    return found + _type_refusal(context, dtype, accepted, f"Type {numbered(dtype)} not supported.")


def _strided_slice_shape(context: base.KernelContext, file: str) -> base.Refusal | None:
    """CheckOutputSize: the output's dims must be those StartForAxis / StopForAxis give (begin,
    end and strides read as int32 whatever their type)."""
    dims = shape(context.input(0))
    begin = int32_values(context, context.input(1))
    end = int32_values(context, context.input(2))
    strides = int32_values(context, context.input(3))
    if min(len(begin), len(end), len(strides)) < len(dims):
        return None  # reads past the constants' data: undefined, not modelled
    begin_mask = context.option("begin_mask")
    end_mask = context.option("end_mask")
    shrink_mask = context.option("shrink_axis_mask")
    result = shape(context.output(0))
    kept = 0
    for axis, size in enumerate(dims):
        stride = strides[axis]
        if stride == 0:
            return base.Refusal(f"{file}: stride value has to be non-zero")
        shrink = shrink_mask >> axis & 1
        start = _start_for_axis(begin[axis], size, stride, begin_mask >> axis & 1)
        stop = (
            start + 1 if shrink else _stop_for_axis(end[axis], size, stride, end_mask >> axis & 1)
        )
        length = max(ceil((stop - start) / stride), 0)
        if not shrink:
            have = result[kept] if kept < len(result) else None
            if have != length:
                return not_equal(file, "output_shape->data[shape_size]", "dim_shape", have, length)
            kept += 1
    if len(result) != kept:
        return not_equal(file, "output_shape->size", "shape_size", len(result), kept)
    return None


def _start_for_axis(start: int, size: int, stride: int, masked: int) -> int:
    """strided_slice_logic.h StartForAxis."""
    if size == 0:
        return 0
    if masked:
        start = -(1 << 31) if stride > 0 else (1 << 31) - 1
    if start < 0:
        start += size
    return min(max(start, 0), size) if stride > 0 else min(max(start, -1), size - 1)


def _stop_for_axis(stop: int, size: int, stride: int, masked: int) -> int:
    """strided_slice_logic.h StopForAxis (a shrunk axis stops one past its start instead)."""
    if size == 0:
        return 0
    if masked:
        stop = (1 << 31) - 1 if stride > 0 else -(1 << 31)
    if stop < 0:
        stop += size
    return min(max(stop, 0), size) if stride > 0 else min(max(stop, -1), size - 1)


def _gather(context: base.KernelContext) -> base.Events:
    # Input, positions, output; then the output dims are copied to the tail and rewritten to
    # input[:axis] + positions[batch_dims:] + input[axis + 1:] (more entries than the flatbuffer
    # rank overflow the copy: TFLM does not check).
    file = "gather.cc"
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    positions_type = context.input_type(1)
    if positions_type != "INT32":
        return [
            *found,
            base.Refusal(f"Positions of type '{positions_type}' are not supported by gather."),
        ]
    dtype = context.input_type(0)
    if dtype not in ("FLOAT32", "INT8"):
        return [*found, base.Refusal(f"Type '{dtype}' is not supported by gather.")]
    source, positions = shape(context.input(0)), shape(context.input(1))
    axis = context.option("axis")
    axis += len(source) if axis < 0 else 0
    if not 0 <= axis < len(source):
        return [*found, not_true(file, "0 <= axis && axis < NumDimensions(input)")]
    batch_dims = context.option("batch_dims")
    batch_dims += len(positions) if batch_dims < 0 else 0
    for condition, holds in (
        ("batch_dims <= axis", batch_dims <= axis),
        ("0 <= batch_dims && batch_dims < NumDimensions(input)", 0 <= batch_dims < len(source)),
        ("batch_dims <= NumDimensions(coords)", batch_dims <= len(positions)),
    ):
        if not holds:
            return [*found, not_true(file, condition)]
    for axis_index in range(batch_dims):
        if source[axis_index] != positions[axis_index]:
            return [
                *found,
                not_equal(
                    file,
                    "input->dims->data[i]",
                    "coords->dims->data[i]",
                    source[axis_index],
                    positions[axis_index],
                ),
            ]
    dims = (*source[:axis], *positions[batch_dims:], *source[axis + 1 :])
    return found + rewritten_dims(context, 0, dims)


def _gather_nd(context: base.KernelContext) -> base.Events:
    # Params, indices, output; output dims := indices[:-1] + params[indices[-1]:], written into
    # a tail copy of the output's dims.
    file = "gather_nd.cc"
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    dtype, indices_type = context.input_type(0), context.input_type(1)
    if dtype not in ("FLOAT32", "INT8"):
        return [*found, base.Refusal(f"Params of type '{dtype}' are not supported by gather_nd.")]
    if indices_type != "INT32":
        return [
            *found,
            base.Refusal(f"Indices of type '{indices_type}' are not supported by gather_nd."),
        ]
    params, indices = shape(context.input(0)), shape(context.input(1))
    depth = indices[-1] if indices else 0
    if not params:
        return [*found, base.Refusal("Params must be at least a vector.")]
    if not indices:
        return [*found, base.Refusal("Indices must be at least a vector.")]
    if depth > len(params):
        return [*found, base.Refusal("Index innermost dimension length must be <= params rank.")]
    if depth > 5:
        return [*found, base.Refusal("Index innermost dimension length must not exceed 5.")]
    dims = (*indices[:-1], *params[depth:])
    return found + rewritten_dims(context, 0, dims)


def _dynamic_update_slice(context: base.KernelContext) -> base.Events:
    # Operand, update, start indices, output.
    file = "dynamic_update_slice.cc"
    found = arity_then_temps(context, file, 3, 1)
    if setup_refused(found):
        return found
    operand, update, start = context.input(0), context.input(1), context.input(2)
    if context.input_type(0) != context.input_type(1):
        return [
            *found,
            not_equal(
                file, "operand->type", "update->type", context.input_type(0), context.input_type(1)
            ),
        ]
    if context.input_type(2) not in ("INT32", "INT64"):
        return [
            *found,
            not_true(
                file,
                "start_indices->type == kTfLiteInt32 || start_indices->type == kTfLiteInt64",
            ),
        ]
    if rank(start) != 1:
        return [*found, not_equal(file, "NumDimensions(start_indices)", "1", rank(start), 1)]
    if shape(start)[0] != rank(operand):
        return [
            *found,
            not_equal(
                file,
                "SizeOfDimension(start_indices, 0)",
                "NumDimensions(operand)",
                shape(start)[0],
                rank(operand),
            ),
        ]
    if rank(update) != rank(operand):
        return [
            *found,
            not_equal(
                file, "NumDimensions(update)", "NumDimensions(operand)", rank(update), rank(operand)
            ),
        ]
    if any(u > o for u, o in zip(shape(update), shape(operand), strict=True)):
        return [*found, not_true(file, "SizeOfDimension(update, i) <= SizeOfDimension(operand, i)")]
    dtype = context.input_type(0)
    accepted = ("FLOAT32", "INT8", "INT16", "INT32")
    message = f"DYNAMIC_UPDATE_SLICE: Operand type {dtype} not supported."
    return found + _type_refusal(context, dtype, accepted, message)


def _concatenation_distance(
    view: base.KernelContext, slots: frozenset[int], output: int
) -> int | None:
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or any(p is None for p in parts) or too_large(target):
        return None
    rank = len(target.shape)
    axis = int(options_of(view).get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank or any(p is not None and len(p.shape) != rank for p in parts):
        return None
    outer = math.prod(target.shape[:axis])
    inner = math.prod(target.shape[axis + 1 :])
    copies: list[Copy] = []
    cursor = 0
    for k in range(outer):
        for slot, part in enumerate(parts):
            assert part is not None
            size = part.shape[axis] * inner
            copies.append(Copy(0, cursor, slot, k * size, size))
            cursor += size
    if len(copies) > MAX_TRACE_EVENTS:
        return None
    first = parts[min(slots)]
    assert first is not None
    trace = copies_trace(
        copies, output=0, input_slots=slots, element_bytes=element_bytes(target), chunked=True
    )
    return checked(trace, first.nbytes)


def _split_copies(
    source: Tensor, sizes: Sequence[int], axis: int, data_slot: int
) -> list[Copy] | None:
    """SPLIT / SPLIT_V: for each outer index, each output copies its slice in turn."""
    rank = len(source.shape)
    if not 0 <= axis < rank or sum(sizes) != source.shape[axis]:
        return None
    outer = math.prod(source.shape[:axis])
    inner = math.prod(source.shape[axis + 1 :])
    copies: list[Copy] = []
    cursor = 0
    for k in range(outer):
        for position, size in enumerate(sizes):
            count = size * inner
            copies.append(Copy(position, k * count, data_slot, cursor, count))
            cursor += count
    return copies


def _split_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    opcode = view.operator.opcode
    data_slot = 1 if opcode == "SPLIT" else 0
    source = view.input(data_slot)
    target = view.output(output)
    if source is None or target is None or too_large(source) or slots != {data_slot}:
        return None
    rank = len(source.shape)
    if opcode == "UNPACK":
        axis = int(options_of(view).get("axis", 0))
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            return None
        copies: list[Copy] | None = _unpack_copies(source, axis, data_slot)
    else:
        axis_values = int_constants(view, 0 if opcode == "SPLIT" else 2)
        if not axis_values:
            return None
        axis = axis_values[0] + rank if axis_values[0] < 0 else axis_values[0]
        sizes = [
            view.output(p).shape[axis] if view.output(p) is not None else -1  # type: ignore[union-attr]
            for p in range(len(view.operator.outputs))
        ]
        if any(size < 0 for size in sizes) or not 0 <= axis < rank:
            return None
        copies = _split_copies(source, sizes, axis, data_slot)
    if copies is None:
        return None
    trace = copies_trace(
        copies,
        output=output,
        input_slots=slots,
        element_bytes=element_bytes(source),
        chunked=False,
    )
    return checked(trace, source.nbytes)


def _unpack_copies(source: Tensor, axis: int, data_slot: int) -> list[Copy]:
    """UNPACK (*unpack.cc*): for each output i, for each outer index, copy its slice."""
    outer = math.prod(source.shape[:axis])
    inner = math.prod(source.shape[axis + 1 :])
    count = source.shape[axis]
    return [
        Copy(i, k * inner, data_slot, (k * count + i) * inner, inner)
        for i in range(count)
        for k in range(outer)
    ]


def _pack_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    """PACK (*pack.cc*): for each input i, for each outer index, copy its slice into place."""
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or not parts or any(p is None for p in parts) or too_large(target):
        return None
    first = parts[0]
    assert first is not None
    rank = len(target.shape)
    axis = int(options_of(view).get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        return None
    outer = math.prod(target.shape[:axis])
    inner = math.prod(target.shape[axis + 1 :])
    count = len(parts)
    copies = [
        Copy(0, (k * count + i) * inner, i, k * inner, inner)
        for i in range(count)
        for k in range(outer)
    ]
    trace = copies_trace(
        copies, output=0, input_slots=slots, element_bytes=element_bytes(target), chunked=False
    )
    return checked(trace, first.nbytes)


def _strided_slice_distance(
    view: base.KernelContext, slots: frozenset[int], output: int
) -> int | None:
    """A bound: with every stride positive, output element k comes from input element >= k; a
    memcpy (unit inner stride) covers at most one input row, so D <= row bytes (else D <= 0)."""
    source, target = view.input(0), view.output(output)
    strides = int_constants(view, 3)
    options = options_of(view)
    if source is None or target is None or strides is None or not source.shape:
        return None
    if any(s <= 0 for s in strides) or options.get("ellipsis_mask") or options.get("new_axis_mask"):
        return None
    if source.dtype.name != target.dtype.name or len(strides) > len(source.shape):
        return None
    element = element_bytes(source)
    if strides[-1] == 1 and len(strides) == len(source.shape):
        return min(source.shape[-1] * element, target.nbytes)
    if strides[-1] == 1:
        return None  # the last axis is not sliced by the strides given: stay out
    return 0


# Element copy loops in output order (pack.cc, unpack.cc, split.cc, split_v.cc): one event per
# element; CONCATENATION copies each input slice with memcpy (one event per call, its own reads
# may follow its writes); STRIDED_SLICE is a bound.
_COPY_LOOPS = "element copy loops"
_DATA_IN_INDEX_ORDER = "reads in index order, which is data"

RULES = (
    base.KernelRule(
        "PACK",
        "pack.cc",
        _PACK_PARAMS,
        base.no_events,
        _pack,
        access=base.AccessOrder(_COPY_LOOPS, "pack.cc", None, _pack_distance),
        operands=base.operands("input+"),
    ),
    base.KernelRule(
        "UNPACK",
        "unpack.cc",
        _UNPACK_PARAMS,
        base.no_events,
        _unpack,
        access=base.AccessOrder(_COPY_LOOPS, "unpack.cc", (0,), _split_distance),
        operands=base.operands("input", outputs=(1, None)),
    ),
    base.KernelRule(
        "SPLIT",
        "split.cc",
        _SPLIT_PARAMS,
        base.no_events,
        _split,
        access=base.AccessOrder(_COPY_LOOPS, "split.cc", (1,), _split_distance),
        operands=base.operands("axis", "input", outputs=(1, None)),
    ),
    base.KernelRule(
        "SPLIT_V",
        "split_v.cc",
        _SPLIT_V_PARAMS,
        base.no_events,
        _split_v,
        access=base.AccessOrder(_COPY_LOOPS, "split_v.cc", (0,), _split_distance),
        operands=base.operands("input", "size_splits", "axis", outputs=(1, None)),
    ),
    base.KernelRule(
        "CONCATENATION",
        "concatenation.cc",
        _CONCATENATION_PARAMS,
        op_data(_CONCATENATION_OP_DATA),
        _concatenation,
        access=base.AccessOrder(
            "memcpy per input slice",
            "concatenation.cc, reference/concatenation.h",
            None,
            _concatenation_distance,
        ),
        operands=base.operands("input+"),
        inplace=NotInPlace("inputs and output differ in size"),
    ),
    base.stateless(
        "SLICE",
        "slice.cc",
        _slice,
        base.NoOverlap("not analysed"),
        base.operands("input", "begin", "size"),
    ),
    base.KernelRule(
        "STRIDED_SLICE",
        "strided_slice.cc, strided_slice_common.cc",
        _STRIDED_SLICE_PARAMS,
        op_data(_STRIDED_SLICE_OP_DATA, "StridedSliceParams"),
        _strided_slice,
        access=base.AccessOrder(
            "forward copy (bound)",
            "strided_slice.cc, reference/strided_slice.h, portable_tensor.h SequentialTensorWriter",
            (0,),
            _strided_slice_distance,
        ),
        operands=base.operands("input", "begin", "end", "strides"),
    ),
    base.KernelRule(
        "GATHER",
        "gather.cc",
        _GATHER_PARAMS,
        base.no_events,
        _gather,
        access=base.NoOverlap("reads rows in index order, which is data"),
        operands=base.operands("params", "indices"),
    ),
    base.stateless(
        "GATHER_ND",
        "gather_nd.cc",
        _gather_nd,
        base.NoOverlap(_DATA_IN_INDEX_ORDER),
        base.operands("params", "indices"),
        resolver="AddGatherNd",
    ),
    base.stateless(
        "DYNAMIC_UPDATE_SLICE",
        "dynamic_update_slice.cc",
        _dynamic_update_slice,
        base.NoOverlap("copies the input into the output first"),
        base.operands("operand", "update", "start_indices"),
        registered_from=DYNAMIC_UPDATE_SLICE,
    ),
)
