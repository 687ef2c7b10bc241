"""Reshaping kernels: RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE, TRANSPOSE, REVERSE_V2,
BROADCAST_ARGS, BROADCAST_TO → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): reshape.cc, reshape_common.cc, squeeze.cc,
expand_dims.cc, shape.cc, transpose.cc, transpose_common.cc, reverse.cc, broadcast_args.cc,
broadcast_to.cc; options parsers in tensorflow/lite/core/api/flatbuffer_conversions.cc (only
RESHAPE, SQUEEZE and SHAPE allocate builtin data). None has an Init; their Prepare takes temp
tensors only, except RESHAPE with a -1 dim, which copies the output's dims to the tail and plans
the output with the resolved dim.
"""

from __future__ import annotations

from math import prod

from arenalens.analysis.inplace import InPlace, NotInPlace
from arenalens.builds.tflm import REVERSE_V2
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.access_order import checked, int_constants, too_large, transpose_trace
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    UNARY,
    constant_ints,
    elements,
    int32_values,
    rank,
    rewritten_dims,
    setup_refused,
    shape,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    arity_refusals,
    arity_then_temps,
    not_equal,
    not_true,
    numbered,
    only_currently_supports,
)

_RESHAPE_PARAMS = struct(
    "TfLiteReshapeParams", Field("shape", "int32", 8), ("num_dimensions", "int")
)
_SQUEEZE_PARAMS = struct(
    "TfLiteSqueezeParams", Field("squeeze_dims", "int32", 8), ("num_squeeze_dims", "int")
)
_SHAPE_PARAMS = struct("TfLiteShapeParams", ("out_type", "enum"))  # TfLiteType

# TfLiteReshapeParams / TfLiteSqueezeParams hold at most 8 dims; the parsers refuse more.
_MAX_PARSED_DIMS = 8


def _too_many_dims(context: base.KernelContext, option: str, operation: str) -> list[base.Event]:
    """ParseReshape / ParseSqueeze: a dims vector longer than the params' array fails parsing."""
    values = context.operator.options.get(option) or ()
    if len(values) > _MAX_PARSED_DIMS:
        return [
            base.Refusal(
                f"Found too many dimensions in the input array of operation '{operation}'."
            )
        ]
    return []


def _reshape(context: base.KernelContext) -> base.Events:
    # PrepareReshapeReference → ReshapeOutput: input and output only (the shape input, when
    # there is one, is never read: the output's flatbuffer shape is the truth).
    file = "reshape_common.cc"
    refused = _too_many_dims(context, "new_shape", "reshape")
    if len(context.operator.inputs) not in (1, 2):
        refused.append(not_true(file, "NumInputs(node) == 1 || NumInputs(node) == 2"))
    if len(context.operator.outputs) != 1:
        refused.append(not_equal(file, "NumOutputs(node)", "1", len(context.operator.outputs), 1))
    if refused:
        return refused
    found = base.temps(context, ("in", 0), ("out", 0))
    source, result = context.input(0), context.output(0)
    dims = shape(result)
    if len(context.operator.inputs) == 1 and dims == (0,):
        # The kernel sets the dims' size to 0 in place, inside the flatbuffer (TFLM keeps eval
        # dims there), which can corrupt other vectors sharing those bytes.
        return [
            *found,
            base.Refusal(
                "legacy scalar RESHAPE (one input, output shape [0]): TFLM rewrites the "
                "model's own shape vector in place; arenalens does not support it"
            ),
        ]
    stretched = [i for i, dim in enumerate(dims) if dim == -1]
    if len(stretched) > 1:
        return [*found, not_equal(file, "stretch_dim", "-1", stretched[0], -1)]
    wanted = elements(source)
    known = prod(dim for dim in dims if dim != -1)
    if stretched:
        if known == 0:
            return [*found, base.Refusal(f"{file}: integer division by zero (crash)")]
        resolved = tuple(wanted // known if dim == -1 else dim for dim in dims)
        found += rewritten_dims(context, 0, resolved)
        known *= wanted // known
    if context.input_type(0) != context.output_type(0):
        found.append(
            not_equal(
                file, "input->type", "output->type", context.input_type(0), context.output_type(0)
            )
        )
    elif wanted != known:
        found.append(not_equal(file, "num_input_elements", "num_output_elements", wanted, known))
    return found


def _squeeze(context: base.KernelContext) -> base.Events:
    # SqueezeContext fetches input and output; a listed dim must exist and be 1.
    file = "squeeze.cc"
    refused = _too_many_dims(context, "squeeze_dims", "squeeze") + arity_refusals(
        context, file, 1, 1
    )
    if refused:
        return refused
    found = base.temps(context, ("in", 0), ("out", 0))
    source = shape(context.input(0))
    if len(source) > _MAX_PARSED_DIMS:
        return [*found, not_true(file, "input_num_dims <= max_squeeze_dims")]
    listed = tuple(context.operator.options.get("squeeze_dims") or ())
    squeezed: set[int] = set()
    if not listed:
        squeezed = {axis for axis, dim in enumerate(source) if dim == 1}
    for axis in listed:
        current = axis + len(source) if axis < 0 else axis
        if not (0 <= current < len(source) and source[current] == 1):
            condition = "current >= 0 && current < input_num_dims && input_dims->data[current] == 1"
            return [*found, not_true(file, condition)]
        squeezed.add(current)
    kept = [dim for axis, dim in enumerate(source) if axis not in squeezed]
    result = shape(context.output(0))
    for position, dim in enumerate(kept):
        if position < len(result) and result[position] < dim:
            return [
                *found,
                base.Refusal(f"{file}: TFLITE_CHECK_GE(output dim, input dim) fails: TFLM aborts"),
            ]
    in_bytes = _bytes(context, "in")
    out_bytes = _bytes(context, "out")
    if in_bytes != out_bytes:
        found.append(
            not_equal(
                file, "input_byte_size", "output_byte_size", in_bytes, out_bytes, phase=base.INVOKE
            )
        )
    return found


def _bytes(context: base.KernelContext, role: str) -> int:
    tensor = context.input(0) if role == "in" else context.output(0)
    size = None if tensor is None else tensor.dtype.element_bytes
    return 0 if tensor is None or size is None else tensor.element_count * size


def _expand_dims(context: base.KernelContext) -> base.Events:
    # Input, axis, output; the axis must be a constant int32 scalar or 1-element vector.
    file = "expand_dims.cc"
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    axis_tensor = context.input(1)
    if axis_tensor is None or not axis_tensor.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >axis< tensor is not supported")]
    if rank(axis_tensor) > 1:
        return [*found, base.Refusal("Axis has only one element for Expand_Dims.")]
    if axis_tensor.dtype.name != "INT32":
        return [
            *found,
            base.Refusal(
                f"Axis type {numbered(axis_tensor.dtype.name)} not supported by Expand_Dims."
            ),
        ]
    values = constant_ints(context, axis_tensor) or (0,)
    source, result = shape(context.input(0)), shape(context.output(0))
    axis = values[0] + len(source) + 1 if values[0] < 0 else values[0]
    if axis > len(source):
        return [*found, not_true(file, "axis_value <= input_shape.DimensionsCount()")]
    expected = (*source[:axis], 1, *source[axis:])
    if len(result) != len(expected) or result != expected:
        return [*found, not_true(file, "output_shape matches input_shape with axis inserted")]
    dtype = context.input_type(0)
    if dtype not in ("FLOAT32", "INT16", "INT8"):
        found.append(only_currently_supports("Expand_Dims", "int8, int16 and float32", dtype))
    return found


def _shape(context: base.KernelContext) -> base.Events:
    # No tensor is fetched; the out_type option is ignored, only an int32 output runs.
    found: list[base.Event] = arity_refusals(context, "shape.cc", 1, 1)
    dtype = context.output_type(0)
    if not found and dtype != "INT32":
        found.append(base.Refusal(f"Output type {numbered(dtype)} not supported.", base.INVOKE))
    return found


def _transpose(context: base.KernelContext) -> base.Events:
    # TransposeContext: input, perm, output.
    file = "transpose_common.cc"
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    source, permutation = context.input(0), context.input(1)
    dims = rank(source)
    if dims > 5:
        return [*found, base.Refusal(f"{file}: Transpose op only supports 1D-5D input arrays.")]
    if context.input_type(0) != context.output_type(0):
        return [
            *found,
            not_equal(
                file,
                "op_context.input->type",
                "op_context.output->type",
                context.input_type(0),
                context.output_type(0),
            ),
        ]
    if permutation is None or not permutation.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >perm< tensor is not supported")]
    if rank(permutation) != 1:
        return [
            *found,
            not_equal(file, "NumDimensions(op_context.perm)", "1", rank(permutation), 1),
        ]
    if permutation.shape[0] != dims:
        return [
            *found,
            not_equal(file, "op_context.perm->dims->data[0]", "dims", permutation.shape[0], dims),
        ]
    # The permutation is read as int32 whatever its type.
    values = int32_values(context, permutation)
    if any(not 0 <= value < dims for value in values):
        return [*found, base.Refusal(f"{file}: Transpose op permutations array is out of bounds.")]
    dtype = context.input_type(0)
    if dtype not in ("FLOAT32", "INT8", "INT16"):
        found.append(
            base.Refusal(
                f"Type {dtype} is currently not supported by Transpose. "
                "Only float32, int8 and int16 are supported",
                base.INVOKE,
            )
        )
    return found


_REVERSE_TYPES = ("INT32", "FLOAT32", "UINT8", "INT8", "INT16", "INT64", "BOOL")


def _reverse(context: base.KernelContext) -> base.Events:
    # Input, axis, output; the axis may be a runtime tensor (read at Eval).
    file = "reverse.cc"
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    source, axis = context.input(0), context.input(1)
    if rank(axis) != 1:
        return [*found, not_equal(file, "NumDimensions(axis)", "1", rank(axis), 1)]
    if rank(source) > 6:
        return [*found, not_true(file, "NumDimensions(input) <= kMaxDimensions")]
    if rank(source) < elements(axis):
        return [*found, not_true(file, "NumDimensions(input) >= NumElements(axis)")]
    dtype = context.input_type(0)
    if dtype not in _REVERSE_TYPES:
        return [*found, base.Refusal(f"Type '{dtype}' is not supported by reverse.")]
    if context.input_type(1) != "INT32":
        return [
            *found,
            base.Refusal(f"Axis Type '{context.input_type(1)}' is not supported by reverse."),
        ]
    if dtype != context.output_type(0):
        return [
            *found,
            not_equal(file, "input->type", "output->type", dtype, context.output_type(0)),
        ]
    axes = constant_ints(context, axis)
    if axes is not None:
        if any(not 0 <= value < rank(source) for value in axes):
            found.append(not_true(file, "axes_data[i] >= 0 && axes_data[i] < rank", base.INVOKE))
        elif sorted(axes) != list(range(min(axes, default=0), min(axes, default=0) + len(axes))):
            found.append(base.Refusal("Non-contiguous `axes` not supported", base.INVOKE))
    return found


def _broadcast_args(context: base.KernelContext) -> base.Events:
    # Both shapes and the output, constant or not: TFLM computes the output at Eval.
    file = "broadcast_args.cc"
    if len(context.operator.inputs) != 2:
        return [not_true(file, "NumInputs(node) == 2")]
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    first, second, result = context.input_type(0), context.input_type(1), context.output_type(0)
    if first not in ("INT32", "INT64"):
        return [
            *found,
            not_true(file, "shape1->type == kTfLiteInt32 || shape1->type == kTfLiteInt64"),
        ]
    for name, other in (("shape2->type", second), ("output->type", result)):
        if other != first:
            return [*found, not_equal(file, "shape1->type", name, numbered(first), numbered(other))]
    for name, tensor in (
        ("NumDimensions(shape1)", context.input(0)),
        ("NumDimensions(shape2)", context.input(1)),
        ("NumDimensions(output)", context.output(0)),
    ):
        if rank(tensor) != 1:
            return [*found, not_equal(file, name, "1", rank(tensor), 1)]
    return found


def _broadcast_to(context: base.KernelContext) -> base.Events:
    # Input, shape, output; the shape must be constant and match the output.
    file = "broadcast_to.cc"
    if len(context.operator.inputs) != 2:
        return [not_true(file, "NumInputs(node) == 2")]
    found = arity_then_temps(context, file, 2, 1)
    if setup_refused(found):
        return found
    source, target, result = context.input(0), context.input(1), context.output(0)
    if rank(source) > 5:
        return [*found, base.Refusal(f"{file}: BroadcastTo only supports 1-5D tensor.")]
    if context.input_type(1) not in ("INT32", "INT64"):
        return [
            *found,
            not_true(file, "shape->type == kTfLiteInt32 || shape->type == kTfLiteInt64"),
        ]
    if context.input_type(0) != context.output_type(0):
        return [
            *found,
            not_equal(
                file,
                "input->type",
                "output->type",
                numbered(context.input_type(0)),
                numbered(context.output_type(0)),
            ),
        ]
    if target is None or not target.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >shape< tensor is not supported")]
    if rank(target) != 1:
        return [*found, not_equal(file, "NumDimensions(shape)", "1", rank(target), 1)]
    wanted = constant_ints(context, target) or ()
    source_dims, result_dims = shape(source), shape(result)
    if len(result_dims) != target.shape[0]:
        return [
            *found,
            base.Refusal(f"{file}: Output must match with the expected shape dimension."),
        ]
    if len(source_dims) > len(result_dims):
        return [
            *found,
            base.Refusal(f"{file}: Output shape must be broadcastable from input shape."),
        ]
    if len(result_dims) > 5:
        return [*found, base.Refusal(f"{file}: BroadcastTo only supports 1-5D tensor.")]
    extra = len(result_dims) - len(source_dims)
    for axis, dim in enumerate(source_dims):
        if dim != 1 and extra + axis < len(wanted) and dim != wanted[extra + axis]:
            return [
                *found,
                base.Refusal(f"{file}: Output shape must be broadcastable from input shape."),
            ]
    if tuple(result_dims) != tuple(wanted[: len(result_dims)]):
        return [*found, not_true(file, "output_shape.Dims(idx) == get_shape_data(idx)")]
    return found


def _transpose_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    perm = int_constants(view, 1)
    if source is None or target is None or perm is None or too_large(source, target):
        return None
    return checked(transpose_trace(source, target, perm), source.nbytes)


# TransposeImpl: output elements in order, each copying the input element it comes from.
TRANSPOSE_ACCESS = base.AccessOrder(
    "copy in output order",
    "transpose.cc, reference/transpose.h TransposeImpl",
    (0,),
    _transpose_distance,
)
_SHAPE_COMPUTATION = base.NoOverlap("shape computation")

RULES = (
    base.KernelRule(
        "RESHAPE",
        "reshape.cc, reshape_common.cc",
        _RESHAPE_PARAMS,
        base.no_events,
        _reshape,
        access=base.NoOverlap("one memcpy of the whole tensor (use --inplace to alias it)"),
        operands=base.operands("input", "shape?"),
        inplace=InPlace("skips its memcpy when input and output share an address"),
        absolute_shape=True,
    ),
    base.KernelRule(
        "SQUEEZE",
        "squeeze.cc",
        _SQUEEZE_PARAMS,
        base.no_events,
        _squeeze,
        access=base.NoOverlap("one memcpy of the whole tensor"),
        operands=UNARY,
        inplace=NotInPlace(
            "memcpy(output, input) with equal addresses is undefined behaviour in C"
        ),
    ),
    base.stateless(
        "EXPAND_DIMS",
        "expand_dims.cc",
        _expand_dims,
        base.NoOverlap("copies the whole tensor (use --inplace to alias it)"),
        base.operands("input", "axis"),
        inplace=InPlace("copies element by element from index 0 up: output[i] = input[i]"),
    ),
    base.KernelRule(
        "SHAPE",
        "shape.cc",
        _SHAPE_PARAMS,
        base.no_events,
        _shape,
        access=_SHAPE_COMPUTATION,
        operands=UNARY,
    ),
    base.stateless(
        "TRANSPOSE",
        "transpose.cc, transpose_common.cc",
        _transpose,
        TRANSPOSE_ACCESS,
        base.operands("input", "perm"),
    ),
    base.stateless(
        "REVERSE_V2",
        "reverse.cc",
        _reverse,
        base.NoOverlap("reads the input backwards"),
        base.operands("input", "axis"),
        registered_from=REVERSE_V2,
        resolver="AddReverseV2",
    ),
    base.stateless(
        "BROADCAST_ARGS",
        "broadcast_args.cc",
        _broadcast_args,
        _SHAPE_COMPUTATION,
        base.operands("shape1", "shape2"),
    ),
    base.stateless(
        "BROADCAST_TO",
        "broadcast_to.cc",
        _broadcast_to,
        base.NoOverlap("not analysed"),
        base.operands("input", "shape"),
    ),
)
