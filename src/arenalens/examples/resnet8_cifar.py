"""Image classification: ResNet-8 on a 32×32×3 CIFAR-10 image → 10 classes (MLPerf Tiny IC).

A 3×3 convolution with 16 channels, then three residual stages of 16, 32 and 64 channels. Each
stage is two 3×3 convolutions (the first strided in stages 2 and 3) added to the shortcut by ADD
with a fused ReLU; stages 2 and 3 project the shortcut with a strided 1×1 convolution. Then 8×8
average pooling, a flatten RESHAPE, FULLY_CONNECTED to 10 classes and SOFTMAX.
"""

from __future__ import annotations

from arenalens.examples.layers import Activation, Int8Network

DESCRIPTION = "ResNet-8 CIFAR-10, 32x32x3 int8 image → 10 classes, 3 residual stages with ADD"
SEED = 3232
# (channels, stride) per residual stage.
STAGES = ((16, 1), (32, 2), (64, 2))


def _residual_stage(
    net: Int8Network, x: Activation, name: str, channels: int, stride: int
) -> Activation:
    """An activation → conv, conv, shortcut (projected when the shape changes), ADD + ReLU."""
    y = net.conv2d(x, f"{name}/conv_a", channels=channels, stride=stride, activation="RELU")
    y = net.conv2d(y, f"{name}/conv_b", channels=channels, activation="NONE")
    shortcut = x
    if stride != 1 or x.shape[-1] != channels:
        shortcut = net.conv2d(
            x,
            f"{name}/projection",
            channels=channels,
            kernel=(1, 1),
            stride=stride,
            activation="NONE",
        )
    return net.add(shortcut, y, f"{name}/add", activation="RELU")


def build() -> bytes:
    """Nothing → the int8 ResNet-8 CIFAR-10 model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    image = net.input("input", (1, 32, 32, 3), (-1.0, 1.0))
    x = net.conv2d(image, "conv_0", channels=16, activation="RELU")
    for number, (channels, stride) in enumerate(STAGES, start=1):
        x = _residual_stage(net, x, f"stage_{number}", channels, stride)
    _, height, width, channels = x.shape
    x = net.average_pool(x, "average_pool", pool=(height, width))
    x = net.reshape(x, "flatten", (1, channels))
    logits = net.fully_connected(x, "logits", units=10)
    return net.build([image], [net.softmax(logits, "softmax")])
