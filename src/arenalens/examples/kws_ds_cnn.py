"""Keyword spotting: DS-CNN on 49×10 MFCC features → 12 classes (MLPerf Tiny KWS layout).

A 10×4 stride-2 convolution with 64 channels, four depthwise-separable blocks (3×3 depthwise,
1×1 pointwise, 64 channels), average pooling over the whole 25×5 map, a flatten RESHAPE,
FULLY_CONNECTED to 12 classes and SOFTMAX. All activations use ReLU.
"""

from __future__ import annotations

from arenalens.examples.layers import Int8Network

DESCRIPTION = "DS-CNN keyword spotting, 49x10x1 int8 MFCC features → 12 classes"
SEED = 4910
CHANNELS = 64
BLOCK_COUNT = 4


def build() -> bytes:
    """Nothing → the int8 DS-CNN keyword-spotting model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    features = net.input("input", (1, 49, 10, 1), (-4.0, 4.0))
    x = net.conv2d(
        features, "conv_0", channels=CHANNELS, kernel=(10, 4), stride=2, activation="RELU"
    )
    for number in range(1, BLOCK_COUNT + 1):
        x = net.depthwise_conv2d(x, f"block_{number}/depthwise", activation="RELU")
        x = net.conv2d(
            x, f"block_{number}/pointwise", channels=CHANNELS, kernel=(1, 1), activation="RELU"
        )
    _, height, width, channels = x.shape
    x = net.average_pool(x, "average_pool", pool=(height, width))
    x = net.reshape(x, "flatten", (1, channels))
    logits = net.fully_connected(x, "logits", units=12)
    return net.build([features], [net.softmax(logits, "softmax")])
