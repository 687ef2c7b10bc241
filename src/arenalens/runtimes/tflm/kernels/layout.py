"""Layout kernels: PAD, PADV2, MIRROR_PAD, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): pad.cc, pad_common.cc (PAD and PADV2 are
one kernel), mirror_pad.cc, batch_to_space_nd.cc, space_to_batch_nd.cc, depth_to_space.cc,
space_to_depth.cc, resize_bilinear.cc, resize_nearest_neighbor.cc. DEPTH_TO_SPACE and
SPACE_TO_DEPTH write their output's dims in Prepare (a persistent copy of the dims; TFLM plans the
output with the dims they computed).
"""

from __future__ import annotations

from typing import Any

from arenalens.analysis.inplace import NotInPlace
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import Field, Struct, struct
from arenalens.runtimes.tflm.access_order import checked, int_constants, pad_trace, too_large
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    UNARY,
    elements,
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
    TFLITE_TYPES,
    arity_refusals,
    arity_then_temps,
    not_equal,
    not_true,
    numbered,
)

# pad.cc — OpData { PadParams params; int32_t output_zero_point }.
_PAD_OP_DATA = struct(
    "OpData",
    (
        "params",
        struct(
            "PadParams",
            ("left_padding_count", "int8"),
            Field("left_padding", "int32", 5),
            ("right_padding_count", "int8"),
            Field("right_padding", "int32", 5),
            ("resizing_category", "uint8"),  # enum class ResizingCategory : uint8_t
        ),
    ),
    ("output_zero_point", "int32"),
)
_MIRROR_PAD_PARAMS = struct("TfLiteMirrorPaddingParams", ("mode", "enum"))
_MIRROR_PAD_OP_DATA = struct(
    "OpDataMirrorPad",
    ("input_dims", "int"),
    ("output_size", "int"),
    ("offset", "int"),
    ("output_dims_num_elements_buffer_index", "int"),
    ("input_dims_num_elements_buffer_index", "int"),
)
_SPACE_TO_BATCH_OP_DATA = struct("SpaceToBatchParams", ("output_offset", "int32"))
_BLOCK_PARAMS = struct("TfLiteDepthToSpaceParams", ("block_size", "int"))  # SpaceToDepth alike
_RESIZE_PARAMS = struct(
    "TfLiteResizeBilinearParams", ("align_corners", "bool"), ("half_pixel_centers", "bool")
)  # TfLiteResizeNearestNeighborParams has the same two fields

_PAD_MAX_DIMS = 5  # reference_ops::PadKernelMaxDimensionCount()


def _pad(context: base.KernelContext) -> base.Events:
    # Input, paddings, the constant value when the node has three inputs (an omitted one
    # allocates nothing), output. PADV2 with two inputs is PAD. (Every PAD of a model comes
    # here: the helpers `type_of`, `rank`, `shape` and `elements` are read inline.)
    file = "pad_common.cc"
    operator = context.operator
    inputs, outputs = operator.inputs, operator.outputs
    count = len(inputs)
    if count not in (2, 3):
        return [not_true(file, "NumInputs(node) == 2 || NumInputs(node) == 3")]
    if len(outputs) != 1:  # (the inputs' count is `count`: only the outputs' may fail)
        return arity_refusals(context, file, count, 1)
    # `KernelContext.input` / `output` inlined (the arity checks passed: two or three inputs,
    # one output).
    tensors = context.subgraph.tensors
    output_index = outputs[0]
    source, paddings, constant, result = (
        tensors[inputs[0]] if inputs[0] >= 0 else None,
        tensors[inputs[1]] if inputs[1] >= 0 else None,
        tensors[inputs[2]] if count == 3 and inputs[2] >= 0 else None,
        tensors[output_index] if output_index >= 0 else None,
    )
    found = (  # in that order (a PAD's constant is absent: the run of the other three)
        base.temp_tensors(source, paddings, result)
        if constant is None
        else base.temp_tensors(source, paddings, constant, result)
    )
    dtype = "" if source is None else source.dtype.name
    output_dtype = "" if result is None else result.dtype.name
    if dtype != output_dtype:
        return [
            *found,
            not_equal(
                file,
                "input->type",
                "output->type",
                TFLITE_TYPES.get(dtype),
                TFLITE_TYPES.get(output_dtype),
            ),
        ]
    source_dims = () if source is None else source.shape
    if len(source_dims) > _PAD_MAX_DIMS:
        condition = "NumDimensions(input) <= reference_ops::PadKernelMaxDimensionCount()"
        return [*found, not_true(file, condition)]
    if constant is not None:
        if constant.dtype.name != dtype:
            return [
                *found,
                not_equal(
                    file,
                    "input->type",
                    "constant_values->type",
                    TFLITE_TYPES.get(dtype),
                    TFLITE_TYPES.get(constant.dtype.name),
                ),
            ]
        if elements(constant) != 1:
            return [
                *found,
                not_equal(file, "NumElements(constant_values)", "1", elements(constant), 1),
            ]
    result_dims = () if result is None else result.shape
    padding_count = 0 if paddings is None else paddings.element_count
    if padding_count != 2 * len(result_dims):
        return [
            *found,
            not_equal(
                file,
                "GetTensorShape(paddings).FlatSize()",
                "output->dims->size * 2",
                padding_count,
                2 * len(result_dims),
            ),
        ]
    if paddings is None or not paddings.has_data:
        return [*found, base.Refusal(f"{file}: Non-constant >paddings< tensor is not supported")]
    # Read as int32 whatever the type.
    amounts = int32_values(context, paddings, elements=padding_count)
    for axis, dim in enumerate(result_dims):
        if 2 * axis + 1 >= len(amounts) or axis >= len(source_dims):
            break  # reads past the data: undefined, not modelled
        expected = source_dims[axis] + amounts[2 * axis] + amounts[2 * axis + 1]
        if dim != expected:
            return [*found, not_equal(file, "output_dim", "expected_dim", dim, expected)]
    if dtype == "INT8":
        refusal = _int8_pad_refusal(file, result, constant)
        if refusal is not None:
            return [*found, refusal]
    if dtype not in ("FLOAT32", "INT8", "INT16", "INT32"):
        found.append(base.Refusal(f"Type {dtype} not currently supported by Pad.", base.INVOKE))
    return found


def _int8_pad_refusal(
    file: str, output: Tensor | None, value: Tensor | None
) -> base.Refusal | None:
    """int8: zero must be representable, or the constant must share the output's quantization."""
    if value is None:
        if not -128 <= zero_point_of(output) <= 127:
            return not_true(file, "output->params.zero_point within the int8 range")
        return None
    if zero_point_of(output) != zero_point_of(value):
        return not_equal(
            file,
            "output->params.zero_point",
            "constant_values->params.zero_point",
            zero_point_of(output),
            zero_point_of(value),
        )
    if scale_of(output) != scale_of(value):
        return not_equal(
            file,
            "static_cast<double>(output->params.scale)",
            "static_cast<double>(constant_values->params.scale)",
            scale_of(output),
            scale_of(value),
        )
    return None


def _mirror_pad(context: base.KernelContext) -> base.Events:
    # Input, paddings, output, then two int arrays of the input's rank in the head; the mode
    # (REFLECT or SYMMETRIC) changes nothing in memory. Paddings may be runtime int32/int64.
    file = "mirror_pad.cc"
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1), ("out", 0))
    paddings = shape(context.input(1))
    dims = rank(context.input(0))
    if len(paddings) != 2:
        return [*found, not_equal(file, "NumDimensions(padding_matrix)", "2", len(paddings), 2)]
    if paddings[0] != dims:
        return [
            *found,
            not_equal(
                file,
                "SizeOfDimension(padding_matrix, 0)",
                "NumDimensions(input_tensor)",
                paddings[0],
                dims,
            ),
        ]
    found += [
        base.Scratch(4 * dims, "mirror_pad output dims"),
        base.Scratch(4 * dims, "mirror_pad input dims"),
    ]
    if context.output_type(0) not in ("FLOAT32", "INT8"):
        found.append(
            base.Refusal(
                f"MIRROR_PAD fails at Invoke, without a message, on {context.output_type(0)}",
                base.INVOKE,
            )
        )
    return found


def _batch_space(file: str) -> base.RuleFunction:
    """BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND Prepare: input and output, ranks 3 to 4, one type
    (block shape, crops and paddings are only read at Eval)."""

    def prepare(context: base.KernelContext) -> base.Events:
        refused = arity_refusals(context, file, 3, 1)
        if refused:
            return refused
        found = base.temps(context, ("in", 0), ("out", 0))
        for condition, holds in (
            ("NumDimensions(input) >= kInputOutputMinDimensionNum", rank(context.input(0)) >= 3),
            ("NumDimensions(output) >= kInputOutputMinDimensionNum", rank(context.output(0)) >= 3),
            ("NumDimensions(input) <= kInputOutputMaxDimensionNum", rank(context.input(0)) <= 4),
            ("NumDimensions(output) <= kInputOutputMaxDimensionNum", rank(context.output(0)) <= 4),
        ):
            if not holds:
                return [*found, not_true(file, condition)]
        dtype = context.input_type(0)
        if dtype != context.output_type(0):
            return [
                *found,
                not_equal(file, "input->type", "output->type", dtype, context.output_type(0)),
            ]
        if dtype not in ("FLOAT32", "INT8"):
            found.append(base.Refusal(f"Type {numbered(dtype)} not supported.", base.INVOKE))
        return found

    return prepare


def _depth_to_space(context: base.KernelContext) -> base.Events:
    # Input, output, then the output's dims copied to the tail and set to
    # (N, H·block, W·block, C / block²).
    file = "depth_to_space.cc"
    found, refused = _space_depth_setup(context, file)
    if refused:
        return found
    block = context.option("block_size")
    if block <= 0:
        return [*found, not_true(file, "block_size > 0")]
    batch, height, width, depth = shape(context.input(0))
    if depth != depth // block // block * block * block:
        return [
            *found,
            not_equal(
                file,
                "input_channels",
                "output_channels * block_size * block_size",
                depth,
                depth // block // block * block * block,
            ),
        ]
    dims = (batch, height * block, width * block, depth // block // block)
    return found + rewritten_dims(context, 0, _over_flatbuffer_dims(context, dims))


def _space_to_depth(context: base.KernelContext) -> base.Events:
    # As DEPTH_TO_SPACE, dims (N, H / block, W / block, C · block²); block 0 is not checked.
    file = "space_to_depth.cc"
    found, refused = _space_depth_setup(context, file)
    if refused:
        return found
    block = context.option("block_size")
    if block == 0:
        return [*found, base.Refusal(f"{file}: block_size 0: integer division by zero (crash)")]
    batch, height, width, depth = shape(context.input(0))
    for name, dim in (("input_height", height), ("input_width", width)):
        if dim != dim // block * block:
            return [
                *found,
                not_equal(file, name, f"output_{name[6:]} * block_size", dim, dim // block * block),
            ]
    dims = (batch, height // block, width // block, depth * block * block)
    return found + rewritten_dims(context, 0, _over_flatbuffer_dims(context, dims))


def _space_depth_setup(context: base.KernelContext, file: str) -> tuple[list[base.Event], bool]:
    """What DEPTH_TO_SPACE and SPACE_TO_DEPTH's Prepare share up to the block size: the arity,
    the input and output, `_space_depth_checks`. (events, whether setup already failed)."""
    refused = arity_refusals(context, file, 1, 1)
    if refused:
        return refused, True
    found = base.temps(context, ("in", 0), ("out", 0))
    refusal = _space_depth_checks(context, file)
    if refusal is not None:
        return [*found, refusal], True
    return found, False


def _space_depth_checks(context: base.KernelContext, file: str) -> base.Refusal | None:
    """Rank 4, float32 or int8 output, one type."""
    if rank(context.input(0)) != 4:
        return not_equal(file, "NumDimensions(input)", "4", rank(context.input(0)), 4)
    dtype = context.output_type(0)
    if dtype not in ("FLOAT32", "INT8"):
        return not_true(file, "data_type == kTfLiteFloat32 || data_type == kTfLiteInt8")
    if context.input_type(0) != dtype:
        return not_equal(file, "input->type", "output->type", context.input_type(0), dtype)
    return None


def _over_flatbuffer_dims(context: base.KernelContext, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The four dims written over a copy of the output's flatbuffer dims: its rank is kept."""
    current = list(shape(context.output(0)))
    for axis, dim in enumerate(dims[: len(current)]):
        current[axis] = dim
    return tuple(current)


def _resize(file: str, *, bilinear: bool) -> base.RuleFunction:
    """RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR Prepare: input, size, output; a constant int32
    size; the options change no memory."""

    def prepare(context: base.KernelContext) -> base.Events:
        found = arity_then_temps(context, file, 2, 1)
        if setup_refused(found):
            return found
        size = context.input(1)
        if rank(context.input(0)) != 4:
            return [*found, not_equal(file, "NumDimensions(input)", "4", rank(context.input(0)), 4)]
        if rank(size) != 1:
            return [*found, not_equal(file, "NumDimensions(size)", "1", rank(size), 1)]
        if context.input_type(1) != "INT32":
            number = TFLITE_TYPES.get(context.input_type(1))
            return [*found, not_equal(file, "size->type", "kTfLiteInt32", number, 2)]
        if not bilinear and shape(size)[0] != 2:
            return [*found, not_equal(file, "size->dims->data[0]", "2", shape(size)[0], 2)]
        if size is None or not size.has_data:
            return [*found, base.Refusal(f"{file}: Non-constant >size< tensor is not supported")]
        dtype = context.output_type(0)
        if bilinear:
            if context.option("align_corners") and context.option("half_pixel_centers"):
                return [
                    *found,
                    base.Refusal("If half_pixel_centers is True, align_corners must be False."),
                ]
            if dtype not in ("FLOAT32", "INT8"):
                number = TFLITE_TYPES.get(dtype)
                found.append(
                    base.Refusal(f"Output type is {number}, requires float or int8.", base.INVOKE)
                )
        elif dtype not in ("FLOAT32", "INT8", "INT16"):
            found.append(
                base.Refusal(f"Output tensor type {numbered(dtype)} not supported.", base.INVOKE)
            )
        return found

    return prepare


def _pad_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    paddings = int_constants(view, 1)
    if source is None or target is None or paddings is None or too_large(source, target):
        return None
    rank = len(source.shape)
    if len(paddings) != 2 * rank:
        return None
    return checked(pad_trace(source, target, paddings[0::2]), source.nbytes)


# Output elements in order (PadImpl, one element at a time): interior ones copy the next input
# element, the others write the pad value and read nothing.
PAD_ACCESS = base.AccessOrder(
    "copy in output order", "pad.cc, reference/pad.h PadImpl", (0,), _pad_distance
)
_NOT_ANALYSED = base.NoOverlap("not analysed")
# PadPrepare (PAD and PADV2 alike): NumInputs 2 or 3, the constant value optional.
_PAD_OPERANDS = base.operands("input", "paddings", "constant_values?")
_RESIZE_OPERANDS = base.operands("input", "size")


def _pad_rule(opcode: str, **facts: Any) -> base.KernelRule:
    """PAD and PADV2 are one kernel (pad.cc, `PadInit` and `PadPrepare` for both): one rule but
    for the opcode and `facts`."""
    return base.KernelRule(
        opcode,
        "pad.cc, pad_common.cc",
        None,
        op_data(_PAD_OP_DATA),
        _pad,
        access=PAD_ACCESS,
        operands=_PAD_OPERANDS,
        **facts,
    )


def _unanalysed(
    opcode: str,
    file: str,
    params: Struct,
    prepare: base.RuleFunction,
    takes: base.Operands,
) -> base.KernelRule:
    """A kernel of this module with builtin options, no Init, and loops not analysed for
    overlap (`_NOT_ANALYSED`)."""
    return base.KernelRule(
        opcode, file, params, base.no_events, prepare, access=_NOT_ANALYSED, operands=takes
    )


RULES = (
    _pad_rule("PAD", inplace=NotInPlace("output elements move relative to the input")),
    _pad_rule("PADV2", resolver="AddPadV2"),
    base.KernelRule(
        "MIRROR_PAD",
        "mirror_pad.cc",
        _MIRROR_PAD_PARAMS,
        op_data(_MIRROR_PAD_OP_DATA),
        _mirror_pad,
        access=base.NoOverlap("reads mirrored positions (not analysed)"),
        operands=base.operands("input", "paddings"),
    ),
    base.stateless(
        "BATCH_TO_SPACE_ND",
        "batch_to_space_nd.cc",
        _batch_space("batch_to_space_nd.cc"),
        _NOT_ANALYSED,
        base.operands("input", "block_shape", "crops"),
        resolver="AddBatchToSpaceNd",
    ),
    base.KernelRule(
        "SPACE_TO_BATCH_ND",
        "space_to_batch_nd.cc",
        None,
        op_data(_SPACE_TO_BATCH_OP_DATA, "SpaceToBatchParams"),
        _batch_space("space_to_batch_nd.cc"),
        access=_NOT_ANALYSED,
        operands=base.operands("input", "block_shape", "paddings"),
        resolver="AddSpaceToBatchNd",
    ),
    _unanalysed("DEPTH_TO_SPACE", "depth_to_space.cc", _BLOCK_PARAMS, _depth_to_space, UNARY),
    _unanalysed("SPACE_TO_DEPTH", "space_to_depth.cc", _BLOCK_PARAMS, _space_to_depth, UNARY),
    _unanalysed(
        "RESIZE_BILINEAR",
        "resize_bilinear.cc",
        _RESIZE_PARAMS,
        _resize("resize_bilinear.cc", bilinear=True),
        _RESIZE_OPERANDS,
    ),
    _unanalysed(
        "RESIZE_NEAREST_NEIGHBOR",
        "resize_nearest_neighbor.cc",
        _RESIZE_PARAMS,
        _resize("resize_nearest_neighbor.cc", bilinear=False),
        _RESIZE_OPERANDS,
    ),
)
