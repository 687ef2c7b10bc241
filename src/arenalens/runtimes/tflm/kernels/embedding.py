"""EMBEDDING_LOOKUP → its setup allocations and refusals.

Source (tflite-micro tensorflow/lite/micro/kernels/): embedding_lookup.cc (`OpData`,
`CalculateOpData`, `EmbeddingLookUpPrepare`); kernel_util.cc (`CreateWritableTensorDimsWithCopy`).

Prepare allocates, with its three temps live, a writable copy of the output's dims (rewritten to
[lookups, value dims 1...]) and its OpData. The dims copy is read again (the size check, the
planner), and `NumElements(output) * TfLiteTypeGetSize(output->type) <= output->bytes` reads the
output's type after the copy was written: a dims word landing on it only fails setup when, read
as a type, it is wider than the real one (`TempField.breaks_on`).
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.refusals import (
    TFLITE_TYPE_BYTES,
    TFLITE_TYPES,
    not_equal,
    not_true,
)

OP_DATA_EMBEDDING_LOOKUP = struct("OpData", ("scale", "float"), ("num_columns", "size_t"))
_FILE = "embedding_lookup.cc"


def _prepare(context: base.KernelContext) -> base.Events:
    # EmbeddingLookUpPrepare: lookup (int32, rank 1), value (rank >= 2, float or int8), output;
    # the dims copy; the size check; CalculateOpData (OpData in the tail).
    found: list[base.Event] = base.temps(context, ("in", 0))
    lookup, value, output = context.input(0), context.input(1), context.output(0)
    lookup_rank = 0 if lookup is None else len(lookup.shape)
    if lookup_rank != 1:
        return [*found, not_equal(_FILE, "NumDimensions(lookup)", "1", lookup_rank, 1)]
    lookup_type = context.input_type(0)
    if lookup_type != "INT32":
        number = TFLITE_TYPES.get(lookup_type, 0)
        return [*found, not_equal(_FILE, "lookup->type", "kTfLiteInt32", number, 2)]
    found += base.temps(context, ("in", 1))
    if value is None or len(value.shape) < 2:
        return [*found, not_true(_FILE, "NumDimensions(value) >= 2")]
    kind, out = context.input_type(1), context.output_type(0)
    if kind not in ("FLOAT32", "INT8"):
        return [
            *found,
            not_true(_FILE, "value->type == kTfLiteFloat32 || value->type == kTfLiteInt8"),
        ]
    found += base.temps(context, ("out", 0))
    if kind == "FLOAT32" and out != "FLOAT32":
        return [*found, not_true(_FILE, "output->type == kTfLiteFloat32")]
    if out not in ("FLOAT32", "INT8"):
        return [
            *found,
            not_true(_FILE, "output->type == kTfLiteFloat32 || output->type == kTfLiteInt8"),
        ]
    if output is None or len(output.shape) < len(value.shape):
        return [*found, not_true(_FILE, "output->dims->size >= NumDimensions(value)")]
    lookups = lookup.shape[0] if lookup is not None else 0
    found.append(_dims_copy(context, lookups, value.shape, output.shape))
    hybrid = kind == "INT8" and out == "FLOAT32"
    if hybrid and value.quantization is not None and (value.quantization.zero_point or 0):
        zero_point = value.quantization.zero_point
        return [*found, not_equal(_FILE, "tensor_1->params.zero_point", "0", zero_point, 0)]
    found.append(_op_data(context, hybrid=hybrid))
    return found


def _dims_copy(
    context: base.KernelContext,
    lookups: int,
    value_shape: tuple[int, ...],
    output_shape: tuple[int, ...],
) -> base.Persistent:
    """The output's dims copy: [rank, lookups, value dims 1..] then the output's own dims beyond
    the value's rank, written while lookup (0), value (1) and output (2) are live."""
    rank = len(output_shape)
    words = [rank, lookups, *value_shape[1:], *output_shape[len(value_shape) :]]
    content = b"".join(word.to_bytes(4, "little", signed=True) for word in words)
    output = context.output(0)
    element = 0 if output is None else output.dtype.element_bytes or 0
    wider = frozenset(code for code, size in TFLITE_TYPE_BYTES.items() if size > element)
    keep = (
        base.TempField("dims", 0),
        base.TempField("dims", 1),
        base.TempField("type", 1),
        base.TempField("params", 1),
        base.TempField("dims", 2),
        base.TempField("bytes", 2),
        base.TempField("type", 2, breaks_on=wider),
    )
    copy = base.OverTemps(keep=keep, read_later=True, content=content)
    return base.Persistent(4 + 4 * rank, "output dims copy", written=copy)


def _op_data(context: base.KernelContext, *, hybrid: bool) -> base.Persistent:
    """CalculateOpData's struct: the value's scale (int8 value, float output), then the
    column count, computed from the value's dims after the scale was written."""
    abi, features = context.build.abi, context.build.features
    columns = OP_DATA_EMBEDDING_LOOKUP.member("num_columns", abi, features)
    written = [(columns[0], columns[0] + columns[1])]
    keep: tuple[base.TempField, ...] = ()
    if hybrid:
        scale = OP_DATA_EMBEDDING_LOOKUP.member("scale", abi, features)
        written.insert(0, (scale[0], scale[0] + scale[1]))
        keep = (base.TempField("dims", 1),)
    over = base.OverTemps(ranges=tuple(written), keep=keep)
    return base.Persistent(context.sizeof(OP_DATA_EMBEDDING_LOOKUP), "OpData", written=over)


RULES = (
    base.stateless(
        "EMBEDDING_LOOKUP",
        "embedding_lookup.cc",
        _prepare,
        base.NoOverlap("reads rows in index order, which is data"),
        base.operands("ids", "params"),
    ),
)
