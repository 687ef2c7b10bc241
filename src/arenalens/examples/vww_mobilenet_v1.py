"""Visual wake words: MobileNetV1 (width 0.25) on a 96×96×3 image → person / no person.

The MLPerf Tiny VWW layout: a 3×3 stride-2 convolution, 13 depthwise-separable blocks with the
standard MobileNetV1 strides, 3×3 average pooling, a flatten RESHAPE, FULLY_CONNECTED to 2 classes
and SOFTMAX. All activations use ReLU6.
"""

from __future__ import annotations

from arenalens.examples.layers import Activation, Int8Network

DESCRIPTION = "MobileNetV1-0.25 visual wake words, 96x96x3 int8 image → 2 classes"
SEED = 96
WIDTH = 0.25
# (depthwise stride, pointwise output channels at width 1.0) for the 13 separable blocks.
BLOCKS = (
    (1, 64),
    (2, 128),
    (1, 128),
    (2, 256),
    (1, 256),
    (2, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (2, 1024),
    (1, 1024),
)


def mobilenet_v1_features(net: Int8Network, image: Activation, width: float) -> Activation:
    """MobileNetV1's feature extractor at a width multiplier: the 3×3 stride-2 convolution and
    the 13 depthwise-separable blocks (ReLU6), on `image`."""
    x = net.conv2d(image, "conv_0", channels=int(32 * width), stride=2)
    for number, (stride, channels) in enumerate(BLOCKS, start=1):
        x = net.depthwise_conv2d(x, f"block_{number}/depthwise", stride=stride)
        x = net.conv2d(
            x, f"block_{number}/pointwise", channels=int(channels * width), kernel=(1, 1)
        )
    return x


def build() -> bytes:
    """Nothing → the int8 VWW MobileNetV1 model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    image = net.input("input", (1, 96, 96, 3), (0.0, 1.0))
    x = mobilenet_v1_features(net, image, WIDTH)
    _, height, width, channels = x.shape
    x = net.average_pool(x, "average_pool", pool=(height, width))
    x = net.reshape(x, "flatten", (1, channels))
    logits = net.fully_connected(x, "logits", units=2)
    return net.build([image], [net.softmax(logits, "softmax")])
