"""Generated int8 models for the split tests: conv chains whose result is the model's output,
so comparing outputs compares the split tensors themselves byte for byte."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from arenalens.examples.layers import Activation, Int8Network, range_quantization
from arenalens.tflite.builder import quantization

SAME, VALID = "SAME", "VALID"


class SplitNetwork(Int8Network):
    """Int8Network plus the layer variants splitting must handle: dilation, unequal strides,
    depth multipliers, per-tensor weights, explicit PAD."""

    def conv(
        self,
        x: Activation,
        name: str,
        *,
        channels: int,
        kernel: tuple[int, int] = (3, 3),
        strides: tuple[int, int] = (1, 1),
        dilation: tuple[int, int] = (1, 1),
        padding: str = SAME,
        per_tensor: bool = False,
        activation: str = "RELU6",
    ) -> Activation:
        """CONV_2D with every option."""
        kh, kw = kernel
        weights, scales = self._weights(
            f"{name}/weights",
            (channels, kh, kw, x.shape[3]),
            kh * kw * x.shape[3],
            axis=None if per_tensor else 0,
        )
        bias = self._bias(f"{name}/bias", x.scale, scales, channels)
        shape = _output_shape(
            x.shape, kernel, strides, dilation, padding=padding, channels=channels
        )
        out = self._output(name, shape, activation, None)
        self._operator(
            "CONV_2D",
            [x.tensor, weights, bias],
            out,
            padding=padding,
            stride_h=strides[0],
            stride_w=strides[1],
            dilation_hfactor=dilation[0],
            dilation_wfactor=dilation[1],
            fused_activation_function=activation,
        )
        return out

    def depthwise(
        self,
        x: Activation,
        name: str,
        *,
        kernel: tuple[int, int] = (3, 3),
        strides: tuple[int, int] = (1, 1),
        dilation: tuple[int, int] = (1, 1),
        padding: str = SAME,
        multiplier: int = 1,
        activation: str = "RELU6",
    ) -> Activation:
        """DEPTHWISE_CONV_2D with every option."""
        kh, kw = kernel
        channels = x.shape[3] * multiplier
        weights, scales = self._weights(f"{name}/weights", (1, kh, kw, channels), kh * kw, axis=3)
        bias = self._bias(f"{name}/bias", x.scale, scales, channels)
        shape = _output_shape(
            x.shape, kernel, strides, dilation, padding=padding, channels=channels
        )
        out = self._output(name, shape, activation, None)
        self._operator(
            "DEPTHWISE_CONV_2D",
            [x.tensor, weights, bias],
            out,
            padding=padding,
            stride_h=strides[0],
            stride_w=strides[1],
            dilation_hfactor=dilation[0],
            dilation_wfactor=dilation[1],
            depth_multiplier=multiplier,
            fused_activation_function=activation,
        )
        return out

    def pad(self, x: Activation, name: str, paddings: Sequence[tuple[int, int]]) -> Activation:
        """PAD with constant paddings (int8: the output's zero point)."""
        table = self.graph.add_constant(
            f"{name}/paddings", np.asarray(paddings, dtype=np.int32).reshape(4, 2)
        )
        shape = tuple(d + a + b for d, (a, b) in zip(x.shape, paddings, strict=True))
        out = self._activation(f"{name}/output", shape, (x.scale, x.zero_point))
        self.graph.add_operator("PAD", [x.tensor, table], [out.tensor], version=2)
        return out

    def relu(self, x: Activation, name: str) -> Activation:
        """RELU, quantization kept."""
        out = self._activation(f"{name}/output", x.shape, (x.scale, x.zero_point))
        self.graph.add_operator("RELU", [x.tensor], [out.tensor], version=2)
        return out


def _output_shape(
    shape: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilation: tuple[int, int],
    *,
    padding: str,
    channels: int,
) -> tuple[int, ...]:
    sizes = []
    for size, k, s, d in zip(shape[1:3], kernel, strides, dilation, strict=True):
        effective = (k - 1) * d + 1
        sizes.append(math.ceil(size / s) if padding == SAME else (size - effective) // s + 1)
    return (shape[0], *sizes, channels)


def network(seed: int = 0) -> SplitNetwork:
    """A fresh network."""
    return SplitNetwork(seed=seed, description="split test")


def image_input(net: SplitNetwork, shape: Sequence[int]) -> Activation:
    """An int8 image input with a zero point away from 0 (padding must use it)."""
    return net._activation("image", tuple(shape), range_quantization(-1.0, 3.0))


def stem_model(seed: int = 0, *, size: tuple[int, int] = (24, 20)) -> bytes:
    """An image stem: conv s2 → depthwise → 1x1 conv (widening) → depthwise s2 (person_detect's
    first layers, smaller). Operators 0-3; the last is the output."""
    net = network(seed)
    x = image_input(net, (1, *size, 3))
    a = net.conv(x, "conv0", channels=8, strides=(2, 2))
    b = net.depthwise(a, "dw1")
    c = net.conv(b, "pw2", channels=24, kernel=(1, 1))
    d = net.depthwise(c, "dw3", strides=(2, 2))
    return net.build([x], [d])


def residual_model(seed: int = 0) -> bytes:
    """A MobileNetV2 block with its residual ADD: expand 1x1 → PAD → depthwise VALID → project
    1x1 → ADD with the block input. Operators 0-4."""
    net = network(seed)
    x = image_input(net, (1, 16, 12, 8))
    e = net.conv(x, "expand", channels=32, kernel=(1, 1))
    p = net.pad(e, "pad", ((0, 0), (1, 1), (1, 1), (0, 0)))
    d = net.depthwise(p, "dw", padding=VALID)
    j = net.conv(d, "project", channels=8, kernel=(1, 1), activation="NONE")
    y = net.add(x, j, "add", activation="NONE")
    return net.build([x], [y])


def channel_model(seed: int = 0, *, per_tensor: bool = False, multiplier: int = 1) -> bytes:
    """conv 1x1 (widening) → depthwise s2 → RELU: a channel-group chain. Operators 0-2."""
    net = network(seed)
    x = image_input(net, (1, 12, 12, 6))
    e = net.conv(x, "expand", channels=24, kernel=(1, 1), per_tensor=per_tensor)
    d = net.depthwise(e, "dw", strides=(2, 2), multiplier=multiplier)
    r = net.relu(d, "relu")
    return net.build([x], [r])


def pooling_model(seed: int = 0, *, average_padding: str = VALID) -> bytes:
    """conv → MAX_POOL 3x3 s2 SAME (padded with the int8 minimum) → conv → AVERAGE_POOL 2x2.
    Operators 0-3."""
    net = network(seed)
    x = image_input(net, (1, 18, 14, 4))
    a = net.conv(x, "conv0", channels=8, activation="NONE")
    b = net.max_pool(a, "max", pool=(3, 3), stride=2, padding=SAME)
    c = net.conv(b, "conv1", channels=8)
    d = net.average_pool(c, "avg", pool=(3, 3), stride=1, padding=average_padding)
    return net.build([x], [d])


def quantized_zero_point_input() -> tuple[float, int]:
    """The stem's input quantization (zero point -64)."""
    return range_quantization(-1.0, 3.0)


def fully_connected_model(seed: int = 0) -> bytes:
    """conv → FULLY_CONNECTED over the flattened activation. Operators 0-2."""
    net = network(seed)
    x = image_input(net, (1, 8, 8, 2))
    a = net.conv(x, "conv", channels=4)
    flat = net.reshape(a, "flat", (1, 256))
    y = net.fully_connected(flat, "fc", units=10)
    return net.build([x], [y])


def float_model() -> bytes:
    """A float32 convolution chain (never split)."""
    net = network(0)
    graph = net.graph
    x = graph.add_tensor("image", (1, 8, 8, 2), "FLOAT32")
    weights = graph.add_constant("w", np.ones((4, 3, 3, 2), dtype=np.float32))
    y = graph.add_tensor("y", (1, 8, 8, 4), "FLOAT32")
    graph.add_operator("CONV_2D", [x, weights, -1], [y], options={"padding": SAME})
    graph.set_inputs([x])
    graph.set_outputs([y])
    return net.model.build()


def two_input_model(seed: int = 0) -> bytes:
    """ADD of two model inputs, then a conv: the ADD reads two activations from outside."""
    net = network(seed)
    x = image_input(net, (1, 8, 8, 4))
    z = net._activation("other", (1, 8, 8, 4), range_quantization(-1.0, 3.0))
    s = net.add(x, z, "sum")
    y = net.conv(s, "conv", channels=4)
    return net.build([x, z], [y])


def branch_model(seed: int = 0) -> bytes:
    """conv0 → conv1, and conv0's output also feeds a later ADD: conv0..conv1 is no region."""
    net = network(seed)
    x = image_input(net, (1, 8, 8, 4))
    a = net.conv(x, "conv0", channels=4, activation="NONE")
    b = net.conv(a, "conv1", channels=4, activation="NONE")
    c = net.conv(b, "conv2", channels=4, activation="NONE")
    y = net.add(a, c, "add", activation="NONE")
    return net.build([x], [y])


__all__ = ["quantization"]
