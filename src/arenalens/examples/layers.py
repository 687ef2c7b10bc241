"""Int8 layers for the example models: Keras-like calls → a fully int8 TFLite subgraph.

Every layer follows the TFLite int8 quantization spec, so both runtimes' kernels Prepare it:
activations are int8 with a per-tensor scale and zero point; convolution weights are int8,
symmetric, with one scale per output channel (axis 0 for CONV_2D, axis 3 for DEPTHWISE_CONV_2D);
FULLY_CONNECTED weights are int8 with one per-tensor scale; biases are int32 with scale
input_scale × weight_scale and zero point 0; SOFTMAX outputs have scale 1/256 and zero point -128;
pooling, RESHAPE, PAD and CONCATENATION outputs keep their input's quantization (LiteRT's int8
CONCATENATION refuses inputs that would need rescaling). Constants an elementwise operator
broadcasts (hard sigmoid's 3 and 1/6) are int8 scalars quantized exactly.

MobileNetV3's blocks are written as the TFLite converter writes Keras' layers: hard-swish
(x·ReLU6(x+3)/6) as one HARD_SWISH operator (the converter fuses the pattern); hard sigmoid,
which it does not fuse, as ADD of the constant 3 with a fused RELU6 and MUL by 1/6;
squeeze-and-excite as a global average (MEAN with keep_dims, or AVERAGE_POOL_2D over the whole
image as older graphs write it), two 1x1 CONV_2D (or FULLY_CONNECTED between RESHAPEs), the hard
sigmoid, and MUL broadcasting the 1x1xC gate over the image; a stride-2 depthwise convolution
after an explicit PAD (Keras' ZeroPadding2D with `correct_pad`) with VALID padding.

Weights are pseudo-random and seeded: He-normal (std √(2 / fan_in)), which keeps ReLU activations
roughly the same size from layer to layer, so a fixed activation range per layer (instead of a
calibration run) saturates few values. Operator versions are the ones the converter writes for
int8 kernels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arenalens.errors import UsageError
from arenalens.tflite.builder import ModelBuilder, quantization

# Float ranges that activations are quantized to; wide enough that He-initialized layers rarely
# saturate, narrow enough to keep resolution.
RELU6_RANGE = (0.0, 6.0)
RELU_RANGE = (0.0, 8.0)
LINEAR_RANGE = (-8.0, 8.0)
# The int8 SOFTMAX output encoding both runtimes insist on.
SOFTMAX_SCALE = 1.0 / 256.0
SOFTMAX_ZERO_POINT = -128
# Versions the converter writes for the int8 variants of these operators.
INT8_VERSIONS = {
    "CONV_2D": 3,
    "DEPTHWISE_CONV_2D": 3,
    "FULLY_CONNECTED": 4,
    "ADD": 2,
    "AVERAGE_POOL_2D": 2,
    "MAX_POOL_2D": 2,
    "CONCATENATION": 2,
    "SOFTMAX": 2,
    "RESHAPE": 1,
    "MEAN": 2,
    "MUL": 2,
    "HARD_SWISH": 1,
    "PAD": 2,
}
_BIAS_STD = 0.1  # float bias spread: small next to He-initialized sums


@dataclass(frozen=True, slots=True)
class Activation:
    """An int8 activation tensor of the network being built: index, shape, quantization."""

    tensor: int
    shape: tuple[int, ...]
    scale: float
    zero_point: int

    @property
    def nbytes(self) -> int:
        """Bytes the tensor occupies (one per element)."""
        return math.prod(self.shape)


def range_quantization(low: float, high: float) -> tuple[float, int]:
    """A float range containing 0 → int8 (scale, zero point) that covers it."""
    scale = (high - low) / 255.0
    zero_point = round(-128 - low / scale)
    return float(np.float32(scale)), max(-128, min(127, zero_point))


def _default_range(activation: str) -> tuple[float, float]:
    return {"RELU6": RELU6_RANGE, "RELU": RELU_RANGE, "NONE": LINEAR_RANGE}[activation]


def _spatial_size(size: int, kernel: int, stride: int, padding: str) -> int:
    if padding == "SAME":
        return -(-size // stride)
    return -(-(size - kernel + 1) // stride)


def _window_output_shape(
    x: Activation, kernel: tuple[int, int], strides: tuple[int, int], padding: str, channels: int
) -> tuple[int, int, int, int]:
    """NHWC shape after a sliding window (convolution, pooling) over x."""
    _, height, width, _ = x.shape
    return (
        1,
        _spatial_size(height, kernel[0], strides[0], padding),
        _spatial_size(width, kernel[1], strides[1], padding),
        channels,
    )


def _broadcast_shape(left: Activation, right: Activation, name: str) -> tuple[int, ...]:
    """The shape of an elementwise operator's output: left's, when right broadcasts over it."""
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(left.shape, right.shape))
    except ValueError:
        shape = ()
    if shape != left.shape:
        raise UsageError(f"{name}: shape {right.shape} does not broadcast over {left.shape}")
    return shape


class Int8Network:
    """Builds one int8 subgraph layer by layer; weights come from one seeded generator."""

    def __init__(self, *, seed: int, description: str) -> None:
        self.rng = np.random.default_rng(seed)
        self.model = ModelBuilder(description=description)
        self.graph = self.model.add_subgraph("main")

    # -- tensors -------------------------------------------------------------------------------
    def input(
        self,
        name: str,
        shape: Sequence[int],
        value_range: tuple[float, float],
        *,
        shape_signature: Sequence[int] | None = None,
    ) -> Activation:
        """Name, shape and float range → a new int8 input activation; `shape_signature` with
        -1 marks dimensions left unknown, as a converter does for a variable input size."""
        return self._activation(
            name, tuple(shape), range_quantization(*value_range), shape_signature
        )

    def _activation(
        self,
        name: str,
        shape: tuple[int, ...],
        scale_and_zero: tuple[float, int],
        shape_signature: Sequence[int] | None = None,
    ) -> Activation:
        scale, zero_point = scale_and_zero
        tensor = self.graph.add_tensor(
            name,
            shape,
            "INT8",
            quantization=quantization(scale, zero_point),
            shape_signature=shape_signature,
        )
        return Activation(tensor, shape, scale, zero_point)

    def _weights(
        self, name: str, shape: tuple[int, ...], fan_in: int, axis: int | None
    ) -> tuple[int, np.ndarray]:
        """He-normal float weights → int8 constant; returns it and its per-channel scales."""
        weights = self.rng.normal(0.0, math.sqrt(2.0 / fan_in), size=shape)
        reduce_axes = tuple(a for a in range(len(shape)) if a != axis)
        largest = np.max(np.abs(weights), axis=reduce_axes if axis is not None else None)
        scales = (np.maximum(largest, 1e-6) / 127.0).astype(np.float32)
        broadcast = scales.reshape([-1 if a == axis else 1 for a in range(len(shape))])
        quantized = np.clip(np.round(weights / broadcast), -127, 127).astype(np.int8)
        tensor = self.graph.add_constant(
            name,
            quantized,
            quantization=quantization(np.atleast_1d(scales), 0, axis=axis or 0),
        )
        return tensor, np.atleast_1d(scales)

    def _bias(self, name: str, input_scale: float, weight_scales: np.ndarray, count: int) -> int:
        """Float biases → int32 constant with scale input_scale × weight_scale per channel."""
        scales = (np.float64(np.float32(input_scale)) * weight_scales.astype(np.float64)).astype(
            np.float32
        )
        scales = np.broadcast_to(scales, (count,))
        values = self.rng.normal(0.0, _BIAS_STD, size=count)
        quantized = np.round(values / scales.astype(np.float64)).astype(np.int32)
        axis_scales = scales if weight_scales.size > 1 else scales[:1]
        return self.graph.add_constant(name, quantized, quantization=quantization(axis_scales, 0))

    def _output(
        self,
        name: str,
        shape: tuple[int, ...],
        activation: str,
        output_range: tuple[float, float] | None,
    ) -> Activation:
        value_range = output_range if output_range is not None else _default_range(activation)
        return self._activation(f"{name}/output", shape, range_quantization(*value_range))

    # -- layers --------------------------------------------------------------------------------
    def conv2d(
        self,
        x: Activation,
        name: str,
        *,
        channels: int,
        kernel: tuple[int, int] = (3, 3),
        stride: int = 1,
        padding: str = "SAME",
        activation: str = "RELU6",
        output_range: tuple[float, float] | None = None,
    ) -> Activation:
        """CONV_2D with per-channel int8 weights [out, kh, kw, in] and int32 bias."""
        in_channels = x.shape[3]
        kernel_h, kernel_w = kernel
        weights, scales = self._weights(
            f"{name}/weights",
            (channels, kernel_h, kernel_w, in_channels),
            kernel_h * kernel_w * in_channels,
            axis=0,
        )
        bias = self._bias(f"{name}/bias", x.scale, scales, channels)
        out_shape = _window_output_shape(x, kernel, (stride, stride), padding, channels)
        out = self._output(name, out_shape, activation, output_range)
        self._operator(
            "CONV_2D",
            [x.tensor, weights, bias],
            out,
            padding=padding,
            stride_w=stride,
            stride_h=stride,
            fused_activation_function=activation,
        )
        return out

    def depthwise_conv2d(
        self,
        x: Activation,
        name: str,
        *,
        kernel: tuple[int, int] = (3, 3),
        stride: int = 1,
        padding: str = "SAME",
        activation: str = "RELU6",
        output_range: tuple[float, float] | None = None,
        multiplier: int = 1,
    ) -> Activation:
        """DEPTHWISE_CONV_2D with weights [1, kh, kw, C·multiplier] scaled per channel."""
        channels = x.shape[3] * multiplier
        kernel_h, kernel_w = kernel
        weights, scales = self._weights(
            f"{name}/weights", (1, kernel_h, kernel_w, channels), kernel_h * kernel_w, axis=3
        )
        bias = self._bias(f"{name}/bias", x.scale, scales, channels)
        out_shape = _window_output_shape(x, kernel, (stride, stride), padding, channels)
        out = self._output(name, out_shape, activation, output_range)
        self._operator(
            "DEPTHWISE_CONV_2D",
            [x.tensor, weights, bias],
            out,
            padding=padding,
            stride_w=stride,
            stride_h=stride,
            depth_multiplier=multiplier,
            fused_activation_function=activation,
        )
        return out

    def fully_connected(
        self,
        x: Activation,
        name: str,
        *,
        units: int,
        activation: str = "NONE",
        output_range: tuple[float, float] | None = None,
    ) -> Activation:
        """FULLY_CONNECTED on [1, n] with per-tensor int8 weights [units, n] and int32 bias."""
        in_features = x.shape[-1]
        weights, scales = self._weights(
            f"{name}/weights", (units, in_features), in_features, axis=None
        )
        bias = self._bias(f"{name}/bias", x.scale, scales, units)
        out = self._output(name, (1, units), activation, output_range)
        self._operator(
            "FULLY_CONNECTED", [x.tensor, weights, bias], out, fused_activation_function=activation
        )
        return out

    def average_pool(
        self,
        x: Activation,
        name: str,
        *,
        pool: tuple[int, int],
        stride: int | None = None,
        padding: str = "VALID",
    ) -> Activation:
        """AVERAGE_POOL_2D; the output keeps the input's quantization."""
        return self._pool("AVERAGE_POOL_2D", x, name, pool=pool, stride=stride, padding=padding)

    def max_pool(
        self,
        x: Activation,
        name: str,
        *,
        pool: tuple[int, int],
        stride: int | None = None,
        padding: str = "VALID",
    ) -> Activation:
        """MAX_POOL_2D; the output keeps the input's quantization."""
        return self._pool("MAX_POOL_2D", x, name, pool=pool, stride=stride, padding=padding)

    def _pool(
        self,
        opcode: str,
        x: Activation,
        name: str,
        *,
        pool: tuple[int, int],
        stride: int | None,
        padding: str,
    ) -> Activation:
        pool_h, pool_w = pool
        stride_h, stride_w = (pool_h, pool_w) if stride is None else (stride, stride)
        channels = x.shape[3]
        out_shape = _window_output_shape(x, pool, (stride_h, stride_w), padding, channels)
        out = self._activation(f"{name}/output", out_shape, (x.scale, x.zero_point))
        self._operator(
            opcode,
            [x.tensor],
            out,
            padding=padding,
            stride_w=stride_w,
            stride_h=stride_h,
            filter_width=pool_w,
            filter_height=pool_h,
        )
        return out

    def global_average(self, x: Activation, name: str) -> Activation:
        """MEAN over height and width, keeping them as 1 (what a converter writes for Keras'
        GlobalAveragePooling2D): any input size gives a 1x1xC output."""
        axes = self.graph.add_constant(f"{name}/axes", np.asarray((1, 2), np.int32))
        out = self._activation(f"{name}/output", (1, 1, 1, x.shape[3]), (x.scale, x.zero_point))
        self._operator("MEAN", [x.tensor, axes], out, keep_dims=True)
        return out

    def hard_swish(
        self, x: Activation, name: str, *, output_range: tuple[float, float] | None = None
    ) -> Activation:
        """HARD_SWISH: x·ReLU6(x+3)/6, whose values lie in [-0.375, max(x)]."""
        if output_range is None:
            high = (127 - x.zero_point) * x.scale
            output_range = (-0.375, max(high, 0.375))
        out = self._activation(f"{name}/output", x.shape, range_quantization(*output_range))
        self._operator("HARD_SWISH", [x.tensor], out)
        return out

    def scalar(self, name: str, value: float) -> Activation:
        """An int8 constant of shape [1] holding `value` exactly (scale |value| / 127)."""
        scale = float(np.float32(max(abs(value), 1e-6) / 127.0))
        stored = np.asarray([round(value / scale)], np.int8)
        tensor = self.graph.add_constant(name, stored, quantization=quantization(scale, 0))
        return Activation(tensor, (1,), scale, 0)

    def mul(
        self,
        left: Activation,
        right: Activation,
        name: str,
        *,
        activation: str = "NONE",
        output_range: tuple[float, float] | None = None,
    ) -> Activation:
        """MUL; `right` may broadcast over `left` (a 1x1xC gate, a scalar)."""
        shape = _broadcast_shape(left, right, name)
        out = self._output(name, shape, activation, output_range)
        self._operator(
            "MUL", [left.tensor, right.tensor], out, fused_activation_function=activation
        )
        return out

    def hard_sigmoid(self, x: Activation, name: str) -> Activation:
        """ReLU6(x + 3) / 6 as the converter writes Keras' hard sigmoid: ADD of the constant 3
        with a fused RELU6, then MUL by the constant 1/6 (values in [0, 1])."""
        shifted = self.add(x, self.scalar(f"{name}/three", 3.0), f"{name}/add", activation="RELU6")
        return self.mul(
            shifted, self.scalar(f"{name}/sixth", 1.0 / 6.0), f"{name}/mul", output_range=(0, 1)
        )

    def squeeze_excite(
        self,
        x: Activation,
        name: str,
        *,
        squeeze: int,
        pool: str = "mean",
        dense: str = "conv",
        output_range: tuple[float, float] | None = None,
    ) -> Activation:
        """Squeeze-and-excite: the channels' global average → `squeeze` units (ReLU) → one gate
        per channel (hard sigmoid) → x times its gate. `pool`: "mean" (MEAN, keep_dims) or
        "average_pool" (AVERAGE_POOL_2D over the whole image); `dense`: "conv" (1x1 CONV_2D on
        the 1x1xC average, as Keras writes it) or "fully_connected" (between RESHAPEs)."""
        channels = x.shape[3]
        if pool == "mean":
            pooled = self.global_average(x, f"{name}/squeeze")
        else:
            pooled = self.average_pool(x, f"{name}/squeeze", pool=(x.shape[1], x.shape[2]))
        if dense == "conv":
            reduced = self.conv2d(
                pooled, f"{name}/reduce", channels=squeeze, kernel=(1, 1), activation="RELU"
            )
            expanded = self.conv2d(
                reduced, f"{name}/expand", channels=channels, kernel=(1, 1), activation="NONE"
            )
        else:
            flat = self.reshape(pooled, f"{name}/flatten", (1, channels))
            reduced = self.fully_connected(flat, f"{name}/reduce", units=squeeze, activation="RELU")
            dense_out = self.fully_connected(reduced, f"{name}/expand", units=channels)
            expanded = self.reshape(dense_out, f"{name}/unflatten", (1, 1, 1, channels))
        gate = self.hard_sigmoid(expanded, f"{name}/gate")
        if output_range is None:  # a gate in [0, 1] keeps x within its own range
            output_range = ((-128 - x.zero_point) * x.scale, (127 - x.zero_point) * x.scale)
        return self.mul(x, gate, f"{name}/excite", output_range=output_range)

    def pad(
        self, x: Activation, name: str, *, rows: tuple[int, int], cols: tuple[int, int]
    ) -> Activation:
        """PAD of the height and width axes with the zero point (Keras' ZeroPadding2D)."""
        paddings = np.asarray(((0, 0), rows, cols, (0, 0)), np.int32)
        paddings_tensor = self.graph.add_constant(f"{name}/paddings", paddings)
        _, height, width, channels = x.shape
        shape = (1, height + sum(rows), width + sum(cols), channels)
        out = self._activation(f"{name}/output", shape, (x.scale, x.zero_point))
        self._operator("PAD", [x.tensor, paddings_tensor], out)
        return out

    def add(
        self,
        left: Activation,
        right: Activation,
        name: str,
        *,
        activation: str = "RELU",
        output_range: tuple[float, float] | None = None,
    ) -> Activation:
        """ADD of two activations (any quantization; `right` may broadcast over `left`) with a
        fused activation."""
        shape = _broadcast_shape(left, right, name)
        out = self._output(name, shape, activation, output_range)
        self._operator(
            "ADD", [left.tensor, right.tensor], out, fused_activation_function=activation
        )
        return out

    def concatenation(self, parts: Sequence[Activation], name: str) -> Activation:
        """CONCATENATION on the channel axis; all parts must share one quantization."""
        first = parts[0]
        for part in parts[1:]:
            if (part.scale, part.zero_point) != (first.scale, first.zero_point):
                raise UsageError(f"{name}: int8 CONCATENATION inputs must share quantization")
        channels = sum(part.shape[-1] for part in parts)
        out = self._activation(
            f"{name}/output", (*first.shape[:-1], channels), (first.scale, first.zero_point)
        )
        self._operator(
            "CONCATENATION", [part.tensor for part in parts], out, axis=len(first.shape) - 1
        )
        return out

    def reshape(self, x: Activation, name: str, shape: Sequence[int]) -> Activation:
        """RESHAPE with a constant int32 shape tensor; the output keeps the quantization."""
        new_shape = tuple(shape)
        if math.prod(new_shape) != x.nbytes:
            raise UsageError(f"{name}: cannot reshape {x.shape} to {new_shape}")
        shape_tensor = self.graph.add_constant(f"{name}/shape", np.asarray(new_shape, np.int32))
        out = self._activation(f"{name}/output", new_shape, (x.scale, x.zero_point))
        self._operator("RESHAPE", [x.tensor, shape_tensor], out, new_shape=new_shape)
        return out

    def softmax(self, x: Activation, name: str) -> Activation:
        """SOFTMAX (beta 1) with the int8 output encoding scale 1/256, zero point -128."""
        out = self._activation(f"{name}/output", x.shape, (SOFTMAX_SCALE, SOFTMAX_ZERO_POINT))
        self._operator("SOFTMAX", [x.tensor], out, beta=1.0)
        return out

    def _operator(self, opcode: str, inputs: list[int], out: Activation, **options: object) -> None:
        self.graph.add_operator(
            opcode, inputs, [out.tensor], options=options, version=INT8_VERSIONS[opcode]
        )

    # -- finishing -------------------------------------------------------------------------
    def build(self, inputs: Sequence[Activation], outputs: Sequence[Activation]) -> bytes:
        """Model inputs and outputs → .tflite bytes with a 'serving_default' signature."""
        self.graph.set_inputs([x.tensor for x in inputs])
        self.graph.set_outputs([x.tensor for x in outputs])
        self.model.add_signature("serving_default", self.graph)
        return self.model.build()
