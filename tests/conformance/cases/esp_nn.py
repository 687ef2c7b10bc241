"""Cases for esp-tflite-micro's ESP-NN kernels (tensorflow/lite/micro/kernels/esp_nn/): the
shapes that pick each branch of esp-nn's scratch-size functions, on every chip path and release
the ESP probes run.

esp-tflite-micro v1.3.8 requests one scratch buffer per int8 CONV_2D, DEPTHWISE_CONV_2D and
int8→int8 SOFTMAX, sized by esp-nn (`esp_nn_get_conv_scratch_size`,
`esp_nn_get_depthwise_conv_scratch_size`, `esp_nn_get_softmax_scratch_size`). What those return
depends on the chip path (ESP32-S3, ESP32-P4, the generic optimised C of ESP32/S2/C3/C6, ANSI C)
and the esp-nn release; each case below names the branch it is for:

* S3 convolution (1.2.3): 1x1 stride 1 unpadded (input channels a multiple of 8 or not, fewer
  than 8 pixels), the im2col path (filter row under 16 bytes, window 16 or more), the general
  path (unpadded or padded, with or without right/bottom edge padding); 1.2.0 and 1.1.2: 1x1
  or not, padded or not.
* S3 depthwise (1.2.1 on; 1.2.0; 1.1.2 with the under-allocation esp-nn PR #37 fixed):
  multiplier 1 with channels a multiple of 16 (3x3, padded or not, edge padding, over 40 KiB
  tiled), 8 < channels ≡ 8 mod 16, 8 channels, other filters (under or over 48 KiB of int16
  copies), other channel counts above 3; multipliers a multiple of 4; the 32-byte fallback.
* P4 convolution (1.2.3): 1x1 under 16 channels, 1x1 with a transpose buffer, direct unpadded,
  im2col, tiny unpadded windows, padded tiny windows under or over the 32 KiB L1 budget.
* An int8 output without quantization (scale 0): QuantizeMultiplier gets +inf or NaN, whose int64
  conversion saturates on the ESP toolchains (its check aborts) and passes on x86-64 and Arm;
  DIV, CONV_2D, FULLY_CONNECTED and BATCH_MATMUL reach it by different paths (MUL: the
  quantization family's case).
* SOFTMAX: the width esp-tflite-micro passes is `dims->data[1]` whatever the rank; for a 1-D input
  that is the word after the shape vector in the file (0 in one case, 917,504 in the other: a
  3.5 MiB row).

Every case is also measured on the host (the wheel has reference kernels: no ESP-NN scratch),
as every conformance case is. Ids carry an `esp_` variant prefix.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import ModelBuilder, quantization
from tests.conformance.cases import Case
from tests.conformance.cases.cmsis_nn import conv, depthwise, softmax
from tests.conformance.models import Const, In, Op, Out, single_op


def _case(opcode: str, dtype: str, variant: str, build: Callable[[], bytes], note: str) -> Case:
    return Case(f"{opcode}.{dtype}.esp_{variant}", opcode, dtype, build, note)


_CONV = (
    # S3 1x1 stride 1 unpadded: filter copy at channels rounded to 8, a transpose buffer of
    # 16 x channels8 from 8 pixels on, an input copy when channels are not a multiple of 8.
    ("1x1_c8", conv(channels=8, outputs=12, kernel=(1, 1)), "S3 1x1, channels % 8 == 0"),
    ("1x1_c5", conv(channels=5, outputs=12, kernel=(1, 1)), "S3 1x1, channels % 8 != 0"),
    ("1x1_c16_2x3", conv(2, 3, channels=16, kernel=(1, 1)), "S3 1x1, fewer than 8 pixels"),
    ("1x1_c20", conv(channels=20, kernel=(1, 1)), "P4 1x1 transpose path, channels % 8 != 0"),
    ("1x1_c4_s2", conv(kernel=(1, 1), stride=(2, 2)), "1x1 stride 2: not the 1x1 path"),
    (
        "1x1_c16_9x9_s2_valid",
        conv(9, 9, channels=16, kernel=(1, 1), stride=(2, 2), padding="VALID"),
        "S3 general path with right/bottom edge padding",
    ),
    # S3 im2col: filter row (width x channels) under 16, window 16 or more.
    ("3x3_c2", conv(channels=2), "S3 im2col (row 6, window 18)"),
    ("5x1_c3_valid", conv(kernel=(5, 1), channels=3, padding="VALID"), "S3 im2col, row 3"),
    # S3 general path.
    ("3x3_c16_same", conv(channels=16), "S3 general, padded, with edge padding"),
    ("3x3_c16_valid", conv(channels=16, padding="VALID"), "S3 general, unpadded, no edge"),
    (
        "3x3_c16_9x9_s2_valid",
        conv(9, 9, channels=16, stride=(2, 2), padding="VALID"),
        "S3 general, unpadded, edge padding",
    ),
    (
        "3x3_c16_s2_same",
        conv(channels=16, stride=(2, 2)),
        "SAME stride 2: TFLM pads 0 (offset 1), S3 adds edge padding",
    ),
    ("3x3_c24_o10", conv(channels=24, outputs=10), "channels rounded to 16 (S3), odd outputs"),
    ("1x3_c2_valid", conv(1, 16, channels=2, kernel=(1, 3), padding="VALID"), "window < 16"),
    ("1x3_c2_same", conv(1, 16, channels=2, kernel=(1, 3)), "window < 16, padded"),
    (
        "1x3_c2_same_wide",
        conv(1, 17000, channels=2, outputs=4, kernel=(1, 3)),
        "P4 padded tiny window over the 32 KiB L1 budget: tiled",
    ),
    (
        "3x3_c16_48x48_same",
        conv(48, 48, channels=16, outputs=4),
        "P4 im2col; S3 general with a 36 KiB padded copy",
    ),
    ("3x3_c16_dilation2", conv(10, 10, channels=16, dilation=2), "dilation: S3 uses the 3x3"),
    ("3x3_c16_batch2", conv(channels=16, batch=2), "batch 2: one scratch for every batch"),
    ("grouped_c16_g8", conv(channels=16, filter_channels=8), "grouped: input channels count"),
    ("int4_c16", conv(channels=16, weights="INT4"), "int4 filter: unpack scratch, then ESP-NN's"),
    ("per_tensor_c16", conv(channels=16, per_channel=False), "per-tensor weights"),
    ("int16_c16", conv(channels=16, dtype="INT16"), "int16: no ESP-NN scratch"),
    ("float_c16", conv(channels=16, dtype="FLOAT32"), "float: no ESP-NN scratch"),
)

_DEPTHWISE = (
    # Multiplier 1, channels a multiple of 16, 3x3.
    ("3x3_c16_same", depthwise(channels=16), "S3 3x3 c%16, padded copy"),
    ("3x3_c16_valid", depthwise(channels=16, padding="VALID"), "S3 3x3 c%16, no padding"),
    (
        "3x3_c16_9x9_s2_valid",
        depthwise(9, 9, channels=16, stride=2, padding="VALID"),
        "S3 3x3 c%16, edge padding",
    ),
    ("3x3_c16_s2_same", depthwise(channels=16, stride=2), "SAME stride 2 (TFLM pads 0)"),
    (
        "3x3_c16_52x52_same",
        depthwise(52, 52, channels=16),
        "S3 3x3 c%16 padded copy over 40 KiB: strip (1.2.1 on)",
    ),
    ("3x3_c32_valid", depthwise(channels=32, padding="VALID"), "S3 3x3 c32, no padding"),
    # Multiplier 1, channels % 8 == 0 but not % 16.
    ("3x3_c24_same", depthwise(channels=24), "S3 3x3 c24: channels padded to 32 (1.2.1 on)"),
    ("3x3_c8_same", depthwise(channels=8), "S3 3x3 c8: int16 path"),
    ("5x5_c8_same", depthwise(channels=8, kernel=(5, 5)), "S3 c8 5x5: int16 copies (1.2.1 on)"),
    (
        "5x5_c8_60x60",
        depthwise(60, 60, channels=8, kernel=(5, 5)),
        "S3 c8 5x5: int16 copies over 48 KiB, tiled (1.2.1 on)",
    ),
    ("3x3_c16_dilation2", depthwise(10, 10, channels=16, dilation=2), "dilation: S3 uses the 3x3"),
    ("3x3_c16_batch2", depthwise(channels=16, batch=2), "batch 2"),
    # Multiplier 1, other channel counts.
    ("3x3_c5", depthwise(channels=5), "S3 c5: channels padded to 8, aligned layout (1.2.1 on)"),
    ("3x3_c12_s2", depthwise(channels=12, stride=2), "S3 c12 (% 8 != 0), stride 2"),
    ("3x3_c3", depthwise(channels=3), "S3 c3: the 32-byte fallback"),
    # Multipliers.
    ("3x3_c2_m4", depthwise(channels=2, multiplier=4), "S3 multiplier % 4 == 0: int16 copies"),
    ("3x3_c4_m8_valid", depthwise(channels=4, multiplier=8, padding="VALID"), "multiplier 8"),
    ("3x3_c8_m2", depthwise(channels=8, multiplier=2), "S3 multiplier 2: the 32-byte fallback"),
    ("int4_c16", depthwise(channels=16, weights="INT4"), "int4 filter: unpack scratch first"),
    ("int16_c16", depthwise(channels=16, dtype="INT16"), "int16: no ESP-NN scratch"),
    ("float_c16", depthwise(channels=16, dtype="FLOAT32"), "float: no ESP-NN scratch"),
)

_SOFTMAX = (
    ("rank2_w100", softmax((1, 100)), "width dims[1] = 100"),
    ("rank3", softmax((1, 6, 10)), "rank 3: width dims[1] = 6, not the last axis"),
    ("rank4", softmax((1, 7, 3, 10)), "rank 4: width dims[1] = 7"),
    ("rows3_w33", softmax((3, 33)), "three rows of 33"),
    ("to_int16_w100", softmax((1, 100), output="INT16"), "int8 → int16: no scratch"),
    ("rank1", softmax((100,)), "1-D: dims->data[1] is the file's next word, 0 here"),
    (
        "rank1_reads_past",
        lambda: _softmax_after_another_tensor(100),
        "1-D, an unused tensor written first: the file's next word is 917,504",
    ),
)


def _softmax_after_another_tensor(width: int) -> bytes:
    """A 1-D int8 SOFTMAX whose input tensor comes after an unused one in the file, so the word
    after its shape vector is a table field, not zero."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    graph.add_tensor("unused", [2, 3], "INT8", quantization=quantization(0.1, 0))
    source = graph.add_tensor("input", [width], "INT8", quantization=quantization(0.1, 0))
    result = graph.add_tensor("output", [width], "INT8", quantization=quantization(1 / 256, -128))
    graph.add_operator("SOFTMAX", [source], [result], options={"beta": 1.0})
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


_Q = quantization(0.1, 0)
_WEIGHTS = Const(np.ones((2, 1, 1, 2), np.int8), "INT8", _Q)
# An int8 output with no quantization: its scale is 0, the output multiplier +inf (MUL's case is
# the quantization family's MUL.INT8.output_unquantized).
_UNQUANTIZED = (
    (
        "DIV",
        Op("DIV", [In((1, 8), "INT8", _Q), In((1, 8), "INT8", _Q)], [Out((1, 8), "INT8", None)]),
    ),
    (
        "CONV_2D",
        Op(
            "CONV_2D",
            [In((1, 4, 4, 2), "INT8", _Q), _WEIGHTS],
            [Out((1, 4, 4, 2), "INT8", None)],
            options={"padding": "VALID"},
        ),
    ),
    (
        "FULLY_CONNECTED",
        Op(
            "FULLY_CONNECTED",
            [In((1, 4), "INT8", _Q), Const(np.ones((3, 4), np.int8), "INT8", _Q)],
            [Out((1, 3), "INT8", None)],
        ),
    ),
    (
        "BATCH_MATMUL",
        Op(
            "BATCH_MATMUL",
            [In((1, 2, 4), "INT8", _Q), In((1, 4, 3), "INT8", _Q)],
            [Out((1, 2, 3), "INT8", None)],
        ),
    ),
)


def _unquantized_output(op: Op) -> Callable[[], bytes]:
    return lambda: single_op(op)


def _cases() -> tuple[Case, ...]:
    found = [_case("CONV_2D", _dtype(v), v, build, note) for v, build, note in _CONV]
    found += [_case("DEPTHWISE_CONV_2D", _dtype(v), v, build, n) for v, build, n in _DEPTHWISE]
    found += [_case("SOFTMAX", "INT8", v, build, note) for v, build, note in _SOFTMAX]
    found += [
        _case(
            opcode,
            "INT8",
            "output_unquantized",
            _unquantized_output(op),
            "output scale 0: an infinite multiplier, an abort on ESP, set up on x86-64 and Arm",
        )
        for opcode, op in _UNQUANTIZED
    ]
    return tuple(found)


def _dtype(variant: str) -> str:
    if variant.startswith("int16"):
        return "INT16"
    if variant.startswith("float"):
        return "FLOAT32"
    return "INT8"


CASES = _cases()
