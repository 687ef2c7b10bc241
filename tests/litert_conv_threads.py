"""Float convolutions with 1, 2 and 4 threads under the builtin kernels (conv.cc's
multi-threaded Eigen kernel: its Prepare in prepare.conv.conv_2d, its thread pool and
contraction in runtimes/litert/heap_threads), measured with ../shared/tools/litert-heap's
heap_tracer.so on this machine into tests/data/litert_heap_conv_threads.json:

    python -m tests.litert_conv_threads               # every case
    python -m tests.litert_conv_threads --only mt17_  # those whose name starts so

`mt16_<n>`: tests/litert_peak_cases.float_conv_chain(1600 + n). n 1-12 were measured while the
session 16 bound was written from conv.cc, eigen_support.cc and Eigen's thread pool (its thread
pool's bytes were read off them); n 13-24 were drawn and measured after it, held out.
`mt17_<n>`: `conv_case(1700 + n)`, drawn and measured after session 17's N-thread Prepare and
thread pool rules were written from mt16_*, held out: batches, odd and non-square sizes,
strides 1-3, dilation, SAME and VALID, 1×1, 3×3, 5×5 and whole-input filters.
`mt17h_<n>`: `conv_case(1750 + n)`, drawn and measured after the contraction's replay
(eigen_parallel) and every session 17 rule, held out from all of them.
`mt18_<n>`: `wide_conv_case(1800 + n)`, drawn and measured after session 18's replay of Eigen's
cost model (eigen_cost: the path each contraction takes), held out from it: larger images and
channels (to 64 × 64 pixels, 256 channels), batches to 4, 1×1, 3×3, 5×5, 1×3 and whole-input
filters, strides 1-3, deep filters that shard the depth and wide outputs that pre-allocate
per-thread blocks; `mt18d_<n>` (`conv_case(1830 + n, DEEP)`) and `mt18w_<n>`
(`conv_case(1850 + n, MANY_PIXELS)`), drawn and measured with them, more of those two."""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.litert_heap_measure import REPO_ROOT, cache_document, tracer

DATA = REPO_ROOT / "tests/data/litert_heap_conv_threads.json"
COMMAND = "python -m tests.litert_conv_threads"
THREADS = (1, 2, 4)
NAMES = (
    *((f"mt16_{n}", 1600 + n) for n in range(1, 25)),
    *((f"mt17_{n}", 1700 + n) for n in range(1, 25)),
    *((f"mt17h_{n}", 1750 + n) for n in range(1, 25)),
    *((f"mt18_{n}", 1800 + n) for n in range(1, 30)),
    *((f"mt18d_{n}", 1830 + n) for n in range(1, 13)),
    *((f"mt18w_{n}", 1850 + n) for n in range(1, 9)),
)


def case(seed: int) -> bytes:
    if seed > 1850:
        return conv_case(seed, MANY_PIXELS)
    if seed > 1830:
        return conv_case(seed, DEEP)
    if seed >= 1800:
        return wide_conv_case(seed)
    if seed >= 1700:
        return conv_case(seed)
    from tests.litert_peak_cases import float_conv_chain

    return float_conv_chain(seed)


WIDE = {
    "batches": (1, 1, 1, 2, 4),
    "sizes": (3, 64),
    "channels": (1, 3, 4, 16, 32, 64, 128, 256),
    "out_channels": (1, 4, 8, 16, 32, 64, 128),
    "dilations": (1,),
}


# Deep filters over few output channels (Eigen shards the depth) and many output pixels (each
# pool thread's grain pre-allocated): `mt18d_*`, `mt18w_*`.
DEEP = {
    "batches": (1, 1, 2),
    "sizes": (3, 24),
    "channels": (64, 128, 256),
    "out_channels": (1, 2, 4, 8, 16),
    "dilations": (1,),
}
MANY_PIXELS = {
    "batches": (2, 4),
    "sizes": (40, 64),
    "channels": (3, 8, 16),
    "out_channels": (8, 16, 32),
    "dilations": (1,),
}


def wide_conv_case(seed: int) -> bytes:
    """`conv_case`'s drawing over `WIDE`'s ranges (1-3 convolutions, undilated)."""
    return conv_case(seed, WIDE)


def conv_case(seed: int, ranges: dict[str, tuple[int, ...]] | None = None) -> bytes:
    """1-3 float CONV_2Ds drawn from `seed`: a batch of 1-3 images of 5-40 × 5-40 pixels and
    1-32 channels; each convolution 1×1, 3×3, 5×5, 1×3 or the whole input (VALID), stride 1-3,
    sometimes dilated (2), SAME or VALID, RELU or none (or over `ranges`: `WIDE`)."""
    from arenalens.tflite.builder import ModelBuilder

    draw = random.Random(seed)
    weights = np.random.default_rng(seed)
    ranges = ranges or {}
    batch = draw.choice(ranges.get("batches", (1, 1, 2, 3)))
    low, high = ranges.get("sizes", (5, 40))
    height, width = draw.randint(low, high), draw.randint(low, high)
    channels = draw.choice(ranges.get("channels", (1, 3, 8, 16, 32)))
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [batch, height, width, channels])
    data = x
    for layer in range(draw.randint(1, 3)):
        kernel = draw.choice(((1, 1), (3, 3), (3, 3), (5, 5), (1, 3), "whole"))
        stride = draw.choice((1, 1, 2, 3))
        dilation = draw.choice(ranges.get("dilations", (1, 1, 1, 2)))
        same = draw.random() < 0.6
        if kernel == "whole":
            kernel, stride, dilation, same = (height, width), 1, 1, False
        reach = [(k - 1) * dilation + 1 for k in kernel]
        if not same and (reach[0] > height or reach[1] > width):
            same = True
        if same:
            out = (-(-height // stride), -(-width // stride))
        else:
            out = ((height - reach[0]) // stride + 1, (width - reach[1]) // stride + 1)
        out_channels = draw.choice(ranges.get("out_channels", (4, 16, 24, 32, 48, 64)))
        filters = graph.add_constant(
            f"w{layer}",
            (weights.standard_normal((out_channels, *kernel, channels)) * 0.1).astype(np.float32),
        )
        bias = graph.add_constant(
            f"b{layer}", weights.standard_normal(out_channels).astype(np.float32)
        )
        output = graph.add_tensor(f"c{layer}", [batch, *out, out_channels])
        graph.add_operator(
            "CONV_2D",
            [data, filters, bias],
            [output],
            options={
                "padding": "SAME" if same else "VALID",
                "stride_w": stride,
                "stride_h": stride,
                "dilation_wfactor": dilation,
                "dilation_hfactor": dilation,
                "fused_activation_function": draw.choice(("RELU", "NONE")),
            },
        )
        data, channels, (height, width) = output, out_channels, out
    graph.set_inputs([x])
    graph.set_outputs([data])
    return model.build()


def main(argv: list[str] | None = None) -> int:
    from tests.litert_heap_threads import measure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="cases whose name starts with this")
    arguments = parser.parse_args(argv)
    document = cache_document(DATA, COMMAND)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, seed in NAMES:
            if not name.startswith(arguments.only):
                continue
            path = folder / f"{name}.tflite"
            path.write_bytes(case(seed))
            entry = {str(t): measure(library, path, "builtin", t) for t in THREADS}
            document["models"][path.name] = {"builtin": entry}
            print(path.name, json.dumps(entry), flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
