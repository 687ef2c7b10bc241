"""Which operators may run on a part of their tensors, and how: an operator → its split rule or
the reason it may not be split.

A part must compute bit-identical bytes, so a rule holds only where the kernel's arithmetic for
one output element does not depend on how much of the tensor is present:

* **Rows (spatial bands).** A convolution, depthwise convolution or max pooling reads a window of
  input rows per output row; a band of output rows needs a band of input rows with its halo.
  Where the window hangs over the image's border TFLM skips the missing points (reference
  `conv.h`, `depthwise_conv.h`, `pooling.h`; CMSIS-NN pads its im2col buffer with the input's
  zero point or skips the points). An explicit PAD with the input's zero point, then the same
  kernel with VALID padding, computes exactly that: a padded element contributes
  `w * (zero_point + input_offset) = 0`, since `input_offset = -zero_point`. Max pooling pads
  with the smallest int8 (PADV2), which never wins a maximum. Average pooling divides by the
  number of points inside the image, so it may run on a band only where the band needs no
  padding. PAD maps rows one to one; elementwise operators (ADD, MUL, activations, ...) read
  the same rows they write.
* **Output channels (channel groups).** A CONV_2D's output channel `c` reads every input channel
  but only filter row `c`, its bias and its per-channel scale: a group of output channels is a
  convolution with those filter rows. Per-channel operators after it (depthwise convolution,
  pooling, activations, PAD without channel padding) run on the group's channels alone.
* **Never** a reduction split: a part of a convolution's input channels or of a
  FULLY_CONNECTED's inputs would requantize a partial sum.

Only int8 activations are split. Float explicit padding adds `0.0 * w` terms, which turn a
`-0.0` sum into `+0.0` and an infinite weight's product into NaN; int16 paths were not proven on
the devices.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import StrEnum

from arenalens.ir import Model, Operator, Subgraph, Tensor

# tflite Padding enum values.
SAME, VALID = 0, 1
# The int8 value explicit max-pooling padding uses: never larger than a real element.
INT8_MIN = -128

# Operators whose output channel c reads only input channel c (the unary ones of ELEMENTWISE).
PER_CHANNEL_UNARY = frozenset(
    {
        "RELU",
        "RELU6",
        "RELU_N1_TO_1",
        "RELU_0_TO_1",
        "LEAKY_RELU",
        "LOGISTIC",
        "TANH",
        "HARD_SWISH",
        "QUANTIZE",
    }
)
# Operators that write each element from the same element of each input (same shapes).
ELEMENTWISE = PER_CHANNEL_UNARY | {"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "PRELU"}
WINDOWED = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"})
# Why an operator that reduces over its input may not be split (the refusal users read).
REDUCTIONS = {
    "FULLY_CONNECTED": "FULLY_CONNECTED sums every input element into each output: a part of its "
    "input would requantize a partial sum",
    "MEAN": "MEAN averages over an axis: a part would requantize a partial sum",
    "SUM": "SUM reduces over an axis: a part would requantize a partial sum",
    "SOFTMAX": "SOFTMAX normalizes over the whole axis: a part would see another sum",
    "BATCH_MATMUL": "BATCH_MATMUL sums over the inner dimension: a part would requantize a "
    "partial sum",
}


class PadFill(StrEnum):
    """What explicit padding must hold for the kernel to compute what its own padding does."""

    ZERO_POINT = "zero point"  # convolutions: a padded element contributes 0
    INT8_MIN = "int8 minimum"  # max pooling: a padded element never wins
    NONE = "none"  # average pooling: its divisor counts only the points inside the image


@dataclass(frozen=True, slots=True)
class Window:
    """A sliding window along one spatial axis, with TFLM's padding before the first element."""

    size: int
    stride: int
    dilation: int
    before: int  # ComputePaddingHeightWidth's padding (top or left); 0 for VALID

    @property
    def effective(self) -> int:
        """The filter's extent with dilation."""
        return (self.size - 1) * self.dilation + 1

    def reads(self, start: int, stop: int) -> tuple[int, int]:
        """Output elements [start, stop) → the input elements they read, before clipping to the
        image (negative or past the end: padding)."""
        first = start * self.stride - self.before
        return first, (stop - 1) * self.stride - self.before + self.effective


@dataclass(frozen=True, slots=True)
class RowRule:
    """How one operator computes a band of output rows."""

    operator: int
    opcode: str
    activations: tuple[int, ...]  # its activation inputs (tensor indices), in input order
    rows: Window | None  # windowed operators: along height
    cols: Window | None  # and along width (its full width is always computed)
    fill: PadFill = PadFill.NONE
    pad_rows: tuple[int, int] = (0, 0)  # a PAD operator's own padding of the height axis
    paddings: tuple[tuple[int, int], ...] = ()  # a PAD operator's paddings, every axis

    def reads(self, start: int, stop: int) -> tuple[int, int]:
        """Output rows [start, stop) → input rows needed (unclipped)."""
        if self.rows is not None:
            return self.rows.reads(start, stop)
        top = self.pad_rows[0]
        return start - top, stop - top


@dataclass(frozen=True, slots=True)
class ChannelRule:
    """How one operator computes a group of channels."""

    operator: int
    opcode: str
    head: bool  # CONV_2D: splits its output channels and reads every input channel
    multiplier: int = 1  # output channels per input channel (depthwise depth_multiplier)


def activation_inputs(subgraph: Subgraph, operator: Operator) -> tuple[int, ...]:
    """The tensors an operator reads that are not constants (nor omitted)."""
    return tuple(t for t in operator.inputs if t >= 0 and not subgraph.tensors[t].is_constant)


def _int8_4d(tensor: Tensor) -> str | None:
    if tensor.dtype.name != "INT8":
        return (
            f"tensor {tensor.name} is {tensor.dtype.name}: only int8 activations are split "
            "(float explicit padding can flip a zero's sign or make NaN from an infinite weight)"
        )
    if len(tensor.shape) != 4 or min(tensor.shape) <= 0:
        return f"tensor {tensor.name} is not a 4-D NHWC tensor with known dims"
    return None


def _window(
    size: int, stride: int, dilation: int, padding: int, *, sizes: tuple[int, int]
) -> Window | str:
    """One axis of a windowed operator (input and output `sizes`) → its Window, checked
    against the output size TFLM computes."""
    in_size, out_size = sizes
    if size <= 0 or stride <= 0 or dilation <= 0 or padding not in (SAME, VALID):
        return "window options out of range"
    effective = (size - 1) * dilation + 1
    expected = (
        (in_size + stride - 1) // stride
        if padding == SAME
        else (in_size + stride - effective) // stride
    )
    if expected != out_size:
        return f"output size {out_size} is not the {expected} TFLM computes"
    total = max(0, (out_size - 1) * stride + effective - in_size)
    return Window(size, stride, dilation, total // 2)


def row_rule(model: Model, subgraph: Subgraph, operator: Operator) -> RowRule | str:
    """An operator → how it computes a band of rows, or why it may not."""
    opcode = operator.opcode
    if opcode in REDUCTIONS:
        return REDUCTIONS[opcode]
    if opcode not in WINDOWED and opcode not in ELEMENTWISE and opcode != "PAD":
        return f"{opcode} has no band rule"
    if len(operator.outputs) != 1 or operator.outputs[0] < 0:
        return f"{opcode} does not write exactly one tensor"
    output = subgraph.tensors[operator.outputs[0]]
    activations = activation_inputs(subgraph, operator)
    for tensor in (output, *(subgraph.tensors[t] for t in activations)):
        problem = _int8_4d(tensor)
        if problem is not None:
            return f"{opcode}: {problem}"
    if not activations:
        return f"{opcode} reads no activation"
    if opcode in ELEMENTWISE:
        return _elementwise_rule(subgraph, operator, activations)
    if opcode == "PAD":
        return _pad_rule(model, subgraph, operator, activations)
    return _windowed_rule(subgraph, operator, activations)


def _elementwise_rule(
    subgraph: Subgraph, operator: Operator, activations: tuple[int, ...]
) -> RowRule | str:
    output = subgraph.tensors[operator.outputs[0]]
    if len(activations) != len([t for t in operator.inputs if t >= 0]):
        return f"{operator.opcode} reads a constant (a broadcast operand is not split)"
    for tensor in activations:
        if subgraph.tensors[tensor].shape != output.shape:
            return f"{operator.opcode} broadcasts an input (shapes differ)"
    return RowRule(operator.index, operator.opcode, activations, None, None)


def _pad_rule(
    model: Model, subgraph: Subgraph, operator: Operator, activations: tuple[int, ...]
) -> RowRule | str:
    if len(operator.inputs) != 2 or len(activations) != 1 or activations[0] != operator.inputs[0]:
        return "PAD with a constant value input or non-constant paddings is not split"
    paddings_tensor = subgraph.tensors[operator.inputs[1]]
    values = constant_ints(model, paddings_tensor)
    if values is None or len(values) != 8:
        return "PAD paddings are not a constant 4x2 int32 tensor"
    pairs = tuple((values[2 * i], values[2 * i + 1]) for i in range(4))
    if any(a < 0 or b < 0 for a, b in pairs):
        return "PAD with negative paddings is not split"
    return RowRule(
        operator.index, "PAD", activations, None, None, pad_rows=pairs[1], paddings=pairs
    )


def _windowed_rule(
    subgraph: Subgraph, operator: Operator, activations: tuple[int, ...]
) -> RowRule | str:
    opcode, options = operator.opcode, operator.options
    source = subgraph.tensors[operator.inputs[0]]
    if activations != (operator.inputs[0],):
        return f"{opcode} reads an activation as weights"
    output = subgraph.tensors[operator.outputs[0]]
    if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        weights = subgraph.tensors[operator.inputs[1]]
        if len(weights.shape) != 4:
            return f"{opcode} weights are not 4-D"
        size_h, size_w = weights.shape[1], weights.shape[2]
        dilation_h = int(options.get("dilation_hfactor", 1))
        dilation_w = int(options.get("dilation_wfactor", 1))
        fill = PadFill.ZERO_POINT
    else:
        size_h, size_w = int(options.get("filter_height", 0)), int(options.get("filter_width", 0))
        dilation_h = dilation_w = 1
        fill = PadFill.INT8_MIN if opcode == "MAX_POOL_2D" else PadFill.NONE
    padding = int(options.get("padding", -1))
    windows = []
    for axis, name, size, stride, dilation in (
        (1, "height", size_h, int(options.get("stride_h", 0)), dilation_h),
        (2, "width", size_w, int(options.get("stride_w", 0)), dilation_w),
    ):
        window = _window(
            size, stride, dilation, padding, sizes=(source.shape[axis], output.shape[axis])
        )
        if isinstance(window, str):
            return f"{opcode} {name}: {window}"
        windows.append(window)
    rows, cols = windows
    return RowRule(operator.index, opcode, activations, rows, cols, fill)


def channel_rule(
    model: Model, subgraph: Subgraph, operator: Operator, *, head: bool
) -> ChannelRule | str:
    """An operator → how it computes a group of channels (as the group's first operator, `head`,
    or after it), or why it may not."""
    opcode = operator.opcode
    if opcode in REDUCTIONS:
        return REDUCTIONS[opcode]
    activations = activation_inputs(subgraph, operator)
    if len(operator.outputs) != 1 or len(activations) != 1:
        return f"{opcode} does not read one activation and write one tensor"
    for tensor in (subgraph.tensors[operator.outputs[0]], subgraph.tensors[activations[0]]):
        problem = _int8_4d(tensor)
        if problem is not None:
            return f"{opcode}: {problem}"
    if head:
        if opcode != "CONV_2D":
            return f"{opcode} cannot start a channel group (only CONV_2D splits its outputs)"
        if len(operator.inputs) > 2 and operator.inputs[2] >= 0:
            bias = subgraph.tensors[operator.inputs[2]]
            if not bias.is_constant:
                return "CONV_2D with a non-constant bias is not split"
        if not subgraph.tensors[operator.inputs[1]].is_constant:
            return "CONV_2D with non-constant weights is not split"
        return ChannelRule(operator.index, opcode, head=True)
    if opcode == "CONV_2D":
        return (
            "CONV_2D sums over every input channel: a channel group of its input would "
            "requantize a partial sum"
        )
    if opcode == "DEPTHWISE_CONV_2D":
        if not subgraph.tensors[operator.inputs[1]].is_constant:
            return "DEPTHWISE_CONV_2D with non-constant weights is not split"
        multiplier = int(operator.options.get("depth_multiplier", 1)) or 1
        source = subgraph.tensors[operator.inputs[0]]
        output = subgraph.tensors[operator.outputs[0]]
        if output.shape[3] != source.shape[3] * multiplier:
            return "DEPTHWISE_CONV_2D channels are not input channels x depth_multiplier"
        return ChannelRule(operator.index, opcode, head=False, multiplier=multiplier)
    if opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D") or opcode in PER_CHANNEL_UNARY:
        return ChannelRule(operator.index, opcode, head=False)
    if opcode == "PAD":
        rule = row_rule(model, subgraph, operator)
        if isinstance(rule, str):
            return rule
        if rule.paddings[3] != (0, 0):
            return "PAD pads the channel axis"
        return ChannelRule(operator.index, opcode, head=False)
    return f"{opcode} has no channel-group rule"


def constant_ints(model: Model, tensor: Tensor) -> tuple[int, ...] | None:
    """A constant int32 tensor's values (None for anything else)."""
    if not tensor.is_constant or tensor.dtype.name != "INT32":
        return None
    raw = model.buffer_bytes(tensor.buffer)
    if len(raw) != 4 * tensor.element_count:
        return None
    return struct.unpack(f"<{tensor.element_count}i", raw)
