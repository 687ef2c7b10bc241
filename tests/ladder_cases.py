"""Issue 27's models, remade with the examples' layer builder: MobileNetV2 (width 0.35) at
96x96 and 160x160, the models a user brings to a NUCLEO-F429ZI or an ESP32-S3 and that fit at
full size only after a rewrite (`--overlap`, `--split`).

    python -m tests.ladder_cases   # prints what `check --target` leads with for each case
"""

from __future__ import annotations

import sys

from arenalens.examples.layers import Int8Network

# MobileNetV2's inverted residual blocks: (expansion, channels, repeats, first stride).
MOBILENET_V2_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _width(channels: float) -> int:
    """Channels at a width multiplier, rounded to a multiple of 8 as Keras' MobileNetV2 does."""
    rounded = max(8, int(channels + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * channels else rounded


def mobilenet_v2(side: int, width: float = 0.35, classes: int = 10) -> bytes:
    """MobileNetV2 at `width` on a side x side x 3 int8 image → `classes` scores."""
    net = Int8Network(seed=side, description=f"MobileNetV2-{width} {side}x{side} int8")
    image = net.input("input", (1, side, side, 3), (0.0, 1.0))
    x = net.conv2d(image, "conv_0", channels=_width(32 * width), stride=2)
    for number, (expansion, channels, repeats, first_stride) in enumerate(MOBILENET_V2_BLOCKS):
        for repeat in range(repeats):
            stride = first_stride if repeat == 0 else 1
            name = f"block_{number}_{repeat}"
            inner = x
            if expansion != 1:
                inner = net.conv2d(
                    x, f"{name}/expand", channels=x.shape[3] * expansion, kernel=(1, 1)
                )
            inner = net.depthwise_conv2d(inner, f"{name}/depthwise", stride=stride)
            out = net.conv2d(
                inner,
                f"{name}/project",
                channels=_width(channels * width),
                kernel=(1, 1),
                activation="NONE",
                output_range=(-4.0, 4.0),
            )
            if stride == 1 and out.shape == x.shape:
                out = net.add(x, out, f"{name}/add", activation="NONE", output_range=(-6.0, 6.0))
            x = out
    x = net.conv2d(x, "conv_last", channels=1280, kernel=(1, 1))
    pooled = net.global_average(x, "global_average")
    flat = net.reshape(pooled, "flatten", (1, x.shape[3]))
    logits = net.fully_connected(flat, "logits", units=classes)
    return net.build([image], [net.softmax(logits, "softmax")])


# (case, model side, board): the reports.
CASES = (
    ("mobilenet_v2_035_96", 96, "nucleo-f429zi"),
    ("mobilenet_v2_035_160", 160, "esp32-s3-devkitc-1"),
)


def main() -> int:
    import arenalens

    for name, side, board in CASES:
        verdict = arenalens.check(mobilenet_v2(side), target=board)
        print(f"{name} on {board}: {verdict.answer} needs {verdict.required_bytes:,}")
        for step in verdict.steps[:2]:
            print("  ", step.line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
