"""An Inception-style network whose operator order is valid but memory-unfriendly.

Layout: 32×32×3 image → 3×3 stem convolution (16 channels) → 2×2 max pool → inception module A
(16×16) → 2×2 max pool → inception module B (8×8) → average pool → flatten RESHAPE →
FULLY_CONNECTED to 10 classes → SOFTMAX. Each module has four branches of different widths,
concatenated on the channel axis:

  1. a 1×1 convolution;
  2. a wide 1×1 "reduce" convolution, then a narrower 3×3;
  3. a 1×1 reduce, then two 3×3 convolutions (a factorised 5×5);
  4. a 3×3 stride-1 max pool, then a 1×1 convolution.

Why the order is bad: the operators are emitted breadth-first, level by level across branches
(every branch's first operator, then every branch's second, ...), the way a graph traversal that
visits parallel nodes together emits them. So the wide reduce outputs of branches 2 and 3 and the
full-width pool output of branch 4 are all live at once, next to the module input. Running each
branch to completion before starting the next frees each wide intermediate as soon as its 3×3
convolution has read it. In module A the activation bytes live at the busiest step drop from
30,720 (emitted order) to 22,528 (branch by branch, the branches in emitted order) and to 20,480
with the best branch order, which is the stem's own peak and so the whole model's lower bound.
Any reordering tool should find that gain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arenalens.examples.layers import Activation, Int8Network

DESCRIPTION = "Inception-style int8 CNN, 32x32x3 → 10 classes; emitted in a memory-unfriendly order"
SEED = 1414


@dataclass(frozen=True, slots=True)
class Step:
    """One operator of a branch: a convolution (channels, square kernel) or a 3×3 max pool."""

    kind: str  # "conv" or "max_pool"
    channels: int = 0
    kernel: int = 1


def _conv(channels: int, kernel: int = 1) -> Step:
    return Step("conv", channels, kernel)


_POOL = Step("max_pool")

# Branches per module: output widths stay narrow, the first convolutions of branches 2 and 3 are
# wide, which is what makes keeping them all alive expensive.
MODULE_A = (
    (_conv(8),),
    (_conv(48), _conv(16, 3)),
    (_conv(32), _conv(16, 3), _conv(8, 3)),
    (_POOL, _conv(8)),
)
MODULE_B = (
    (_conv(16),),
    (_conv(96), _conv(32, 3)),
    (_conv(64), _conv(32, 3), _conv(16, 3)),
    (_POOL, _conv(16)),
)


def _apply(net: Int8Network, x: Activation, step: Step, name: str) -> Activation:
    if step.kind == "max_pool":
        return net.max_pool(x, name, pool=(3, 3), stride=1, padding="SAME")
    return net.conv2d(x, name, channels=step.channels, kernel=(step.kernel, step.kernel))


def _inception_module(
    net: Int8Network, x: Activation, name: str, branches: Sequence[Sequence[Step]]
) -> Activation:
    """Emit the branches breadth-first (the memory-unfriendly order), then concatenate."""
    heads = [x] * len(branches)
    for level in range(max(len(branch) for branch in branches)):
        for number, branch in enumerate(branches):
            if level < len(branch):
                label = f"{name}/branch_{number + 1}/{level + 1}"
                heads[number] = _apply(net, heads[number], branch[level], label)
    return net.concatenation(heads, f"{name}/concat")


def build() -> bytes:
    """Nothing → the int8 branchy Inception-style model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    image = net.input("input", (1, 32, 32, 3), (-1.0, 1.0))
    x = net.conv2d(image, "stem", channels=16)
    x = net.max_pool(x, "stem_pool", pool=(2, 2))
    x = _inception_module(net, x, "module_a", MODULE_A)
    x = net.max_pool(x, "module_a_pool", pool=(2, 2))
    x = _inception_module(net, x, "module_b", MODULE_B)
    _, height, width, channels = x.shape
    x = net.average_pool(x, "average_pool", pool=(height, width))
    x = net.reshape(x, "flatten", (1, channels))
    logits = net.fully_connected(x, "logits", units=10)
    return net.build([image], [net.softmax(logits, "softmax")])
