"""Image classification at 224×224: MobileNetV1 (width 0.25) on a 224×224×3 image → 10 classes.

The standard MobileNetV1 layout at the resolution most pretrained image models use: a 3×3 stride-2
convolution, 13 depthwise-separable blocks with the standard strides, a global average (MEAN over
height and width, as a converter writes Keras' GlobalAveragePooling2D, so the network takes any
input size), a flatten RESHAPE, FULLY_CONNECTED to 10 classes and SOFTMAX. ReLU6 throughout.

At 224×224 its busiest step alone (the first pointwise convolution: 112×112×8 in, 112×112×16 out)
is close to 300 KB: the example for "a 224×224 model on a 320 KB board: which input size fits?"
(`arenalens check example:mobilenet_v1_224 --target stm32f746 --max-input`).
"""

from __future__ import annotations

from arenalens.examples.layers import Int8Network
from arenalens.examples.vww_mobilenet_v1 import mobilenet_v1_features

DESCRIPTION = "MobileNetV1-0.25 image classifier, 224x224x3 int8 image → 10 classes"
SEED = 224
WIDTH = 0.25
CLASSES = 10


def build() -> bytes:
    """Nothing → the int8 224×224 MobileNetV1 model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    image = net.input("input", (1, 224, 224, 3), (0.0, 1.0))
    x = mobilenet_v1_features(net, image, WIDTH)
    channels = x.shape[3]
    pooled = net.global_average(x, "global_average")
    flat = net.reshape(pooled, "flatten", (1, channels))
    logits = net.fully_connected(flat, "logits", units=CLASSES)
    return net.build([image], [net.softmax(logits, "softmax")])
