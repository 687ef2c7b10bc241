"""Signal kernels that keep streaming state: SignalDelay, SignalFramer, SignalOverlapAdd,
SignalStacker → their setup allocations and refusals.

Sources: tflite-micro signal/micro/kernels/delay.cc, framer.cc, overlap_add.cc, stacker.cc and
signal/src/circular_buffer.cc. Delay and Framer allocate, in Prepare, two pointer arrays and a
circular buffer per outer row of their input; OverlapAdd a pointer array and a state row per
outer row; Stacker one circular buffer in Init (unchecked: on a tail too small for it, setup
still succeeds without it). Shared helpers: `signal`.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import elements, rank, shape
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true
from arenalens.runtimes.tflm.kernels.signal_library import (
    SIGNAL_SOURCES,
    Slot,
    fft_type,
    params_init,
    signal_rule,
    signal_temps,
)

_CIRCULAR_BUFFER = struct(
    "CircularBuffer",
    ("capacity", "size_t"),
    ("read", "size_t"),
    ("write", "size_t"),
    ("empty", "int32"),
    ("buffer_size", "int32"),
    ("buffer", "pointer"),
)
_DELAY_PARAMS = struct(
    "TFLMSignalFrontendDelayParams",
    ("frame_size", "int32"),
    ("delay_length", "int32"),
    ("outer_dims", "int32"),
    ("state_buffers", "pointer"),
    ("circular_buffers", "pointer"),
)
_FRAMER_PARAMS = struct(
    "TFLMSignalFramerParams",
    ("frame_size", "int32"),
    ("frame_step", "int32"),
    ("outer_dims", "int32"),
    ("n_frames", "int32"),
    ("prefill", "bool"),
    ("state_buffers", "pointer"),
    ("circular_buffers", "pointer"),
)
_OVERLAP_ADD_PARAMS = struct(
    "TFLMSignalOverlapAddParams",
    ("frame_size", "int32"),
    ("frame_step", "int32"),
    ("outer_dims", "int32"),
    ("n_frames", "int32"),
    ("type", "enum"),  # TfLiteType
    ("state_buffers", "pointer"),
)
_STACKER_PARAMS = struct(
    "TFLMSignalStackerParams",
    ("num_channels", "int32"),
    ("stacker_left_context", "int32"),
    ("stacker_right_context", "int32"),
    ("stacker_step", "int32"),
    ("buffer_size", "size_t"),
    ("step_size", "size_t"),
    ("stacker_has_first_frame", "bool"),
    ("state", "pointer"),
    ("circular_buffer", "pointer"),
)


def circular_buffer_bytes(context: base.KernelContext, capacity: int) -> int:
    """CircularBufferGetNeededMemory: the CircularBuffer struct and 2·capacity int16 slots."""
    return context.sizeof(_CIRCULAR_BUFFER) + 2 * 2 * capacity


def _outer_rows(context: base.KernelContext, file: str, inner: int) -> int | base.Refusal:
    """Elements of input 0 / its `inner` innermost elements: the rows a kernel keeps state for."""
    if inner <= 0:
        return base.Refusal(f"{file}: integer division by zero (crash)")
    return elements(context.input(0)) // inner


# -- circular-buffer states ------------------------------


def _row_buffers(
    context: base.KernelContext, rows: int, capacity: int, what: str
) -> list[base.Event]:
    """The state DELAY and FRAMER keep per outer row, as their Prepares allocate it: an array of
    state-buffer pointers, one of circular-buffer pointers, then each row's circular buffer of
    `capacity` samples."""
    pointer = context.build.pointer_bytes
    return [
        base.Persistent(rows * pointer, "state buffer pointers"),
        base.Persistent(rows * pointer, "circular buffer pointers"),
        *(base.Persistent(circular_buffer_bytes(context, capacity), what) for _ in range(rows)),
    ]


def _delay(context: base.KernelContext) -> base.Events:
    # Input and output (int16); then per outer row a circular buffer of frame + delay samples.
    file = SIGNAL_SOURCES + "delay.cc"
    found, refused = signal_temps(
        context, file, (1, 1), Slot("in", 0, "INT16"), Slot("out", 0, "INT16", name="output")
    )
    if refused:
        return [*found, *refused]
    frame = (shape(context.input(0)) or (0,))[-1]
    rows = _outer_rows(context, file, frame)
    if isinstance(rows, base.Refusal):
        return [*found, rows]
    capacity = frame + context.custom_int("delay_length")
    return [*found, *_row_buffers(context, rows, capacity, "delay state")]


def _framer(context: base.KernelContext) -> base.Events:
    # Input, frames, valid flag; then per outer row a circular buffer of frame_size rounded up
    # to a multiple of frame_step. prefill has no memory effect.
    file = SIGNAL_SOURCES + "framer.cc"
    found, refused = signal_temps(
        context,
        file,
        (1, 2),
        Slot("in", 0, None),
        Slot("out", 0, None, name="output"),
        Slot("out", 1, None, rank=0, name="output_valid"),
    )
    if refused:
        return [*found, *refused]
    source, frames = context.input(0), context.output(0)
    checks: list[tuple[bool, base.Refusal]] = [
        (
            rank(source) + 1 != rank(frames),
            not_equal(
                file,
                "NumDimensions(input) + 1",
                "NumDimensions(output)",
                rank(source) + 1,
                rank(frames),
            ),
        ),
        (
            context.input_type(0) != "INT16",
            not_equal(file, "input->type", "kTfLiteInt16", context.input_type(0), "INT16"),
        ),
        (
            context.output_type(0) != "INT16",
            not_equal(file, "output->type", "kTfLiteInt16", context.output_type(0), "INT16"),
        ),
        (
            context.output_type(1) != "BOOL",
            not_equal(file, "output_valid->type", "kTfLiteBool", context.output_type(1), "BOOL"),
        ),
    ]
    for failed, refusal in checks:
        if failed:
            return [*found, refusal]
    step = context.custom_int("frame_step")
    innermost = (shape(source) or (0,))[-1]
    if step <= 0:
        return [
            *found,
            base.Refusal(f"{file}: frame_step {step}: integer division by zero (crash)"),
        ]
    if innermost < step:
        return [*found, not_true(file, "innermost_dim >= params->frame_step")]
    if innermost % step:
        return [
            *found,
            not_equal(file, "innermost_dim % params->frame_step", "0", innermost % step, 0),
        ]
    rows = _outer_rows(context, file, innermost)
    if isinstance(rows, base.Refusal):
        return [*found, rows]
    size = context.custom_int("frame_size")
    capacity = (size + step - 1) // step * step
    return [*found, *_row_buffers(context, rows, capacity, "framer state")]


def _overlap_add_init(context: base.KernelContext) -> base.Events:
    file = SIGNAL_SOURCES + "overlap_add.cc"
    variant = fft_type(context, file, (7, 0))
    if isinstance(variant, base.Refusal):
        return [variant]
    return [base.Persistent(context.sizeof(_OVERLAP_ADD_PARAMS), "params")]


def _overlap_add(context: base.KernelContext) -> base.Events:
    # Input frames, output; then one state row of frame_size samples per outer row.
    file = SIGNAL_SOURCES + "overlap_add.cc"
    variant = fft_type(context, file, (7, 0))
    if isinstance(variant, base.Refusal):
        return []  # the Init refusal already says why
    dtype, element_bytes, _ = variant
    found, refused = signal_temps(
        context, file, (1, 1), Slot("in", 0, None), Slot("out", 0, None, name="output")
    )
    if refused:
        return [*found, *refused]
    source = shape(context.input(0))
    if len(source) != rank(context.output(0)) + 1:
        return [
            *found,
            not_equal(
                file,
                "NumDimensions(input)",
                "NumDimensions(output) + 1",
                len(source),
                rank(context.output(0)) + 1,
            ),
        ]
    for name, have in (("input", context.input_type(0)), ("output", context.output_type(0))):
        if have != dtype:
            return [*found, not_equal(file, f"{name}->type", "TfLiteTypeEnum", have, dtype)]
    if len(source) < 2:
        return [*found, not_true(file, "input_shape.DimensionsCount() >= 2")]
    frame, frames = source[-1], source[-2]
    rows = _outer_rows(context, file, frame * frames)
    if isinstance(rows, base.Refusal):
        return [*found, rows]
    return [
        *found,
        base.Persistent(rows * context.build.pointer_bytes, "state buffer pointers"),
        *(base.Persistent(frame * element_bytes, "overlap-add state") for _ in range(rows)),
    ]


def _stacker_init(context: base.KernelContext) -> base.Events:
    # The params, then a circular buffer of num_channels · (left + right + 1) samples.
    context_frames = (
        context.custom_int("stacker_left_context") + context.custom_int("stacker_right_context") + 1
    )
    capacity = context.custom_int("num_channels") * context_frames
    return [
        base.Persistent(context.sizeof(_STACKER_PARAMS), "params"),
        base.Persistent(circular_buffer_bytes(context, capacity), "stacker state"),
    ]


def _stacker(context: base.KernelContext) -> base.Events:
    file = SIGNAL_SOURCES + "stacker.cc"
    found, refused = signal_temps(
        context,
        file,
        (1, 2),
        Slot("in", 0, "INT16", 1),
        Slot("out", 0, "INT16", 1, name="output"),
        Slot("out", 1, "BOOL", 0, name="output_valid"),
    )
    return [*found, *refused]


RULES = (
    signal_rule("SignalDelay", "delay.cc", params_init(_DELAY_PARAMS), _delay),
    signal_rule(
        "SignalFramer",
        "framer.cc",
        params_init(_FRAMER_PARAMS),
        _framer,
        base.operands("input", outputs=(2, 2)),
    ),
    signal_rule("SignalOverlapAdd", "overlap_add.cc", _overlap_add_init, _overlap_add),
    signal_rule(
        "SignalStacker",
        "stacker.cc",
        _stacker_init,
        _stacker,
        base.operands("input", outputs=(2, 2)),
    ),
)
