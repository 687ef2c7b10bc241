"""TFLM_DECODE (custom; TFLM's compression) → its setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): decode.cc (`Prepare`,
`SetOutputTensorData`), decode_state.{h,cc} (the 16-byte DCM header, `CreateDecodeState*`),
decode_state_lut.{h,cc}, decode_state_prune.{h,cc}, decode_state_huffman.{h,cc}.

tensorflow/lite/micro/compression rewrites each compressed constant into an encoded UINT8 tensor
and an "ancillary" UINT8 tensor (DCM header + tables), and inserts one DECODE before each of its
consumers, whose outputs are ordinary planned tensors (the head grows by the decoded size, the
model file shrinks). Prepare allocates the state pointers, then, output by output, takes temp
views of (encoded, ancillary, output), allocates that output's decode state (written at once:
placement new, then Setup) and releases the three views before the next output.

Alternate decompression memory (`MicroInterpreter::SetDecompressionMemory`, the wheel's
`alt_decompression_memory_size`) would add P(sizeof(size_t) per region) before setup and take
the decoded outputs that fit out of the plan; nobody sets it by default (neither the wheel nor
firmware), so the rule models TFLM without it.
"""

from __future__ import annotations

from arenalens.builds.tflm import DECODE
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true
from arenalens.tflite.reader import read_quantization_zero_points

# DecodeState: a vtable, then `context_` and `micro_profiler_`.
_DECODE_STATE = (("vtable", "pointer"), ("context_", "pointer"), ("micro_profiler_", "pointer"))
DECODE_STATE_LUT = struct(
    "DecodeStateLut",
    *_DECODE_STATE,
    ("compressed_indices_", "pointer"),
    ("count_indices_", "size_t"),
    ("num_channels_", "size_t"),
    ("elements_per_channel_", "size_t"),
    ("value_table_", "pointer"),
    ("value_table_channel_stride_", "uint8"),
    ("compressed_bit_width_", "uint8"),
    ("use_alternate_axis_", "bool"),
)
DECODE_STATE_HUFFMAN = struct(
    "DecodeStateHuffman",
    *_DECODE_STATE,
    ("compressed_codewords_", "pointer"),
    ("count_codewords_", "size_t"),
    ("huffman_tables_", "pointer"),
    ("use_32bit_table_", "bool"),
    ("initial_table_size_", "uint8"),
)
DECODE_STATE_PRUNE = struct(
    "DecodeStatePrune",
    *_DECODE_STATE,
    ("compressed_indices_", "pointer"),
    ("count_indices_", "size_t"),
    ("num_channels_", "size_t"),
    ("elements_per_channel_", "size_t"),
    ("value_table_", "pointer"),
    ("zero_points_", "pointer"),
    ("single_zero_point_", "int8"),
    ("use_alternate_axis_", "bool"),
)
# DecodeState::kDcmType*: the first byte of the ancillary data; the DCM version is the second.
_STATES = {0: DECODE_STATE_LUT, 1: DECODE_STATE_HUFFMAN, 2: DECODE_STATE_PRUNE}
_CUSTOM = 127
_FILE = "decode.cc"


def _prepare(context: base.KernelContext) -> base.Events:
    outputs = len(context.operator.outputs)
    inputs = len(context.operator.inputs)
    if outputs <= 0:
        return [not_true(_FILE, "num_outputs > 0")]
    if inputs != 2 * outputs:
        return [not_equal(_FILE, "num_inputs", "num_outputs * 2", inputs, 2 * outputs)]
    found: list[base.Event] = [
        base.Persistent(outputs * context.build.pointer_bytes, "decode state pointers")
    ]
    for output in range(outputs):
        found += _decode_output(context, output)
        if any(isinstance(event, base.Refusal) for event in found):
            break
    return found


def _decode_output(context: base.KernelContext, output: int) -> list[base.Event]:
    """One output: its three temp views, its state (over them), Setup's checks and buffers."""
    encoded, ancillary = context.input(2 * output), context.input(2 * output + 1)
    found = base.temps(context, ("in", 2 * output), ("in", 2 * output + 1), ("out", output))
    first = 3 * output
    if encoded is None or ancillary is None or not (encoded.has_data and ancillary.has_data):
        return [*found, not_true(_FILE, "IsConstantTensor(input)")]
    header = context.model.buffer_bytes(ancillary.buffer)[:16]
    version = header[1] if len(header) > 1 else 0
    if version != 1:
        return [*found, base.Refusal(f"unsupported version {version}")]
    kind = header[0] if header else 0
    state = _STATES.get(kind)
    if state is None:
        message = (
            "Custom decode type not yet supported"
            if kind == _CUSTOM
            else f"unsupported decode type {kind}"
        )
        return [*found, base.Refusal(f"{message}; failed to allocate DecodeState[{output}]")]
    # Placement new and Setup write the whole object but its tail padding; Setup then reads the
    # views' data, the output's dims and type, and its affine scale and quantized dimension.
    last = state.fields[-1].name
    offset, size = state.member(last, context.build.abi, context.build.features)
    keep = [
        base.TempField("data", first),
        base.TempField("data", first + 1),
        *(
            base.TempField(name, first + 2)
            for name in ("data", "bytes", "dims", "type", "affine.scale")
        ),
        base.TempField("affine.quantized_dimension", first + 2),
    ]
    if kind == 2 and _zero_points_matter(context, output):
        keep.append(base.TempField("zero_points", first + 2))
    over = base.OverTemps(ranges=((0, offset + size),), keep=tuple(keep), live_from=first)
    found.append(base.Persistent(context.sizeof(state), f"decode state {output}", written=over))
    return found + _setup(context, output, header, first)


def _zero_points_matter(context: base.KernelContext, output: int) -> bool:
    """DecodeStatePrune::Setup reads the output's zero points after the state was written: any
    non-zero one (a state byte landing on an all-zero array) makes it refuse a non-int8 output,
    or allocate and copy them (one more tail buffer, 16 bytes lower). Counted as a failure: the
    replay's sequence cannot grow at some sizes only (at most a16(channels) too high)."""
    tensor = context.output(output)
    if tensor is None or tensor.quantization is None:
        return False
    zero_points = read_quantization_zero_points(context.model, context.subgraph.index, tensor.index)
    return not (any(zero_points) and tensor.dtype.name == "INT8")


def _setup(context: base.KernelContext, output: int, header: bytes, first: int) -> list[base.Event]:
    """DecodeState*::Setup: the quantization axis, Huffman's table width, and (pruning) the
    per-channel zero points."""
    tensor = context.output(output)
    if tensor is None:
        return []
    kind = header[0]
    if kind == 1:
        # Byte 5 bit 0: 32-bit tables; 16-bit tables decode int8 only.
        wide = len(header) > 5 and header[5] & 1
        if not wide and tensor.dtype.name != "INT8":
            return [
                not_equal(
                    "decode_state_huffman.cc",
                    "output.type",
                    "kTfLiteInt8",
                    tensor.dtype.name,
                    "INT8",
                )
            ]
        return []
    quantization = tensor.quantization
    if quantization is None:
        return []
    axis, channels = quantization.axis, quantization.channel_count
    if axis != 0 and not (axis == len(tensor.shape) - 1 and channels > 1):
        return [base.Refusal(f"unsupported quantization axis {axis}")]
    if kind != 2:
        return []
    zero_points = read_quantization_zero_points(context.model, context.subgraph.index, tensor.index)
    non_zero = any(zero_points)
    if non_zero and tensor.dtype.name != "INT8":
        return [base.Refusal("All zero-points must be zero")]
    if channels > 1 and non_zero:
        # One int8 per channel, copied from the output's (temp) zero-point array; Setup then
        # reads the encoded view's data and the output's dims.
        keep = (base.TempField("data", first), base.TempField("dims", first + 2))
        over = base.OverTemps(keep=keep, live_from=first)
        return [base.Persistent(channels, f"decode {output} zero points", written=over)]
    return []


RULES = (
    base.stateless(
        "CUSTOM:TFLM_DECODE",
        "decode.cc, decode_state.cc, decode_state_lut.cc, decode_state_prune.cc, "
        "decode_state_huffman.cc",
        _prepare,
        base.NoOverlap("not analysed"),
        base.operands("encoded", "ancillary", "encoded_or_ancillary*", outputs=(1, None)),
        registered_from=DECODE,
    ),
)
