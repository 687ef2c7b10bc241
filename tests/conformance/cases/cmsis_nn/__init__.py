"""Cases for the CMSIS-NN kernels (TFLM kernels/cmsis_nn/): every kernel, the types it accepts,
and the shapes and options that change its memory on one of CMSIS-NN's three code paths (pure C,
DSP, MVE): 1x1 / 1xN / generic convolutions, the depthwise multiplier and MVE's one-channel
conversion, strides, padding, dilation, int4 / int8 / int16, per-tensor vs per-channel weights,
constant vs variable weights, LSTM and SVDF variants, transpose-conv reverse vs not, and the
operators only the CMSIS-NN kernels refuse.

Measured on cortex-m3-cmsis-nn (C), cortex-m7-cmsis-nn (DSP), cortex-m55-cmsis-nn (MVE) and
cortex-m7-reference (the reference kernels, for comparison); on the host only because every case
must be (the wheel has reference kernels only). Ids carry a `cmsis_` variant prefix so they never
collide with the reference family's cases.

The builders are in `models`; this module lists the cases.
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.tflite.builder import quantization
from tests.conformance.cases import Case
from tests.conformance.cases.cmsis_nn.models import (
    batch_matmul,
    binary,
    conv,
    convs_then_fully_connected,
    depthwise,
    fully_connected,
    lstm,
    pad,
    pool,
    softmax,
    svdf,
    transpose,
    transpose_conv,
)


def _case(
    opcode: str,
    dtype: str,
    variant: str,
    build: Callable[[], bytes],
    note: str = "",
    *,
    scan_bytes: int = 0,
) -> Case:
    return Case(
        f"{opcode}.{dtype}.cmsis_{variant}", opcode, dtype, build, note, scan_bytes=scan_bytes
    )


_CONV = (
    ("3x3_s1_same", conv()),
    ("3x3_c3", conv(channels=3)),
    ("3x3_c5_valid", conv(channels=5, padding="VALID")),
    ("3x3_s2", conv(stride=(2, 2))),
    ("3x3_c7_s2", conv(channels=7, stride=(2, 2))),
    ("3x3_per_tensor", conv(per_channel=False)),
    ("1x1_s1", conv(kernel=(1, 1))),
    ("1x1_c3", conv(channels=3, kernel=(1, 1))),
    ("1x1_s2", conv(kernel=(1, 1), stride=(2, 2))),
    ("1x1_c6_s2_valid", conv(channels=6, kernel=(1, 1), stride=(2, 2), padding="VALID")),
    ("3x3_dilation2_same", conv(10, 10, dilation=2)),
    ("3x3_dilation2_valid", conv(10, 10, dilation=2, padding="VALID")),
    ("5x5_c16", conv(channels=16, kernel=(5, 5))),
    ("2x2_s2", conv(kernel=(2, 2), stride=(2, 2))),
    ("1xn_k3_same", conv(1, 16, kernel=(1, 3))),
    ("1xn_k3_valid", conv(1, 16, kernel=(1, 3), padding="VALID")),
    ("1xn_k3_valid_s2", conv(1, 17, kernel=(1, 3), stride=(1, 2), padding="VALID")),
    ("1xn_c8_k5_s2", conv(1, 16, channels=8, kernel=(1, 5), stride=(1, 2))),
    ("1xn_w15_k4", conv(1, 15, kernel=(1, 4))),
    ("1xn_c3_not_aligned", conv(1, 16, channels=3, kernel=(1, 3))),
    ("1xn_c2_s2", conv(1, 16, channels=2, kernel=(1, 3), stride=(1, 2))),
    ("1xn_w20_k7_s3", conv(1, 20, kernel=(1, 7), stride=(1, 3))),
    ("1xn_pads_exceed", conv(1, 2, kernel=(1, 7))),
    ("1xn_w9_k4_s2_odd_pad", conv(1, 9, kernel=(1, 4), stride=(1, 2))),
    ("1xn_c1_k5_s4", conv(1, 16, channels=1, kernel=(1, 5), stride=(1, 4))),
    ("1xn_w40_c16_k9", conv(1, 40, channels=16, kernel=(1, 9))),
    ("1x1_h1_s2", conv(1, 16, kernel=(1, 1), stride=(1, 2))),
    ("h1_3x3", conv(1, 16, kernel=(3, 3))),
    ("3x3_batch2", conv(batch=2)),
    ("1xn_batch2", conv(1, 16, kernel=(1, 3), batch=2)),
    ("3x3_stride_h2", conv(stride=(2, 1))),
    ("grouped_3x3", conv(channels=8, filter_channels=4)),
    ("grouped_1x1", conv(channels=8, filter_channels=4, kernel=(1, 1))),
    ("c6_o5", conv(channels=6, outputs=5)),
    ("int4_3x3_valid", conv(6, 6, weights="INT4", padding="VALID")),
    ("int4_3x3_same", conv(6, 6, weights="INT4")),
    ("int4_1x1", conv(6, 6, weights="INT4", kernel=(1, 1))),
)
_CONV_INT16 = (
    ("3x3", conv(dtype="INT16")),
    ("3x3_c5", conv(channels=5, dtype="INT16")),
    ("1x1", conv(kernel=(1, 1), dtype="INT16")),
    ("bias_int32", conv(dtype="INT16", bias="INT32")),
    ("no_bias", conv(dtype="INT16", bias="none")),
    ("bias_int16_invoke_refused", conv(dtype="INT16", bias="INT16")),
    ("zero_point_refused", conv(dtype="INT16", zero_point=3)),
)
_DEPTHWISE = (
    ("3x3_same", depthwise()),
    ("3x3_s2", depthwise(stride=2)),
    ("3x3_c5_valid", depthwise(channels=5, padding="VALID")),
    ("3x3_per_tensor", depthwise(per_channel=False)),
    ("5x5_c6_same", depthwise(channels=6, kernel=(5, 5))),
    ("5x5_c6_valid", depthwise(10, 10, channels=6, kernel=(5, 5), padding="VALID")),
    ("3x5", depthwise(kernel=(3, 5))),
    ("multiplier2", depthwise(multiplier=2)),
    ("dilation2", depthwise(10, 10, dilation=2)),
    ("batch2", depthwise(batch=2)),
    ("c1_m8", depthwise(channels=1, multiplier=8)),
    ("c1_m1", depthwise(channels=1)),
    ("c1_m3_valid", depthwise(channels=1, multiplier=3, padding="VALID")),
    ("c1_m4_1x1", depthwise(channels=1, multiplier=4, kernel=(1, 1))),
    ("c1_m4_1x1_s2", depthwise(channels=1, multiplier=4, kernel=(1, 1), stride=2)),
    ("c1_m4_1xn_same", depthwise(1, 16, channels=1, multiplier=4, kernel=(1, 3))),
    ("c1_m4_1xn_valid", depthwise(1, 16, channels=1, multiplier=4, kernel=(1, 3), padding="VALID")),
    ("c1_m8_1xn_s2", depthwise(1, 16, channels=1, multiplier=8, kernel=(1, 5), stride=2)),
    ("c1_m4_dilation2", depthwise(10, 10, channels=1, multiplier=4, dilation=2)),
    ("c1_m4_batch2", depthwise(channels=1, multiplier=4, batch=2)),
    ("1xn_c4", depthwise(1, 16, kernel=(1, 3))),
    ("c200", depthwise(4, 4, channels=200)),
    ("int4_3x3", depthwise(weights="INT4")),
    ("int4_multiplier2", depthwise(weights="INT4", multiplier=2)),
)
_FULLY_CONNECTED = (
    ("n16", fully_connected()),
    ("n20", fully_connected(units=20)),
    ("batch4", fully_connected(batch=4)),
    ("per_channel", fully_connected(per_channel=True)),
    ("no_bias", fully_connected(bias=False)),
    ("variable_weights", fully_connected(constant_weights=False)),
    ("variable_bias", fully_connected(constant_bias=False)),
    ("rank3_k32", fully_connected(batch=3, rank=3)),
    ("rank3_per_channel", fully_connected(batch=3, rank=3, per_channel=True)),
    ("rank4_n12", fully_connected(batch=2, units=12, rank=4)),
    ("rank3_k30", fully_connected(batch=3, depth=30, rank=3)),
    ("int4", fully_connected(weights="INT4")),
    ("int4_per_channel_refused", fully_connected(weights="INT4", per_channel=True)),
)


def _cases() -> tuple[Case, ...]:
    found: list[Case] = []
    for variant, build in _CONV:
        found.append(_case("CONV_2D", "INT8", variant, build))
    for variant, build in _CONV_INT16:
        found.append(_case("CONV_2D", "INT16", variant, build))
    found += [
        _case("CONV_2D", "FLOAT32", "3x3", conv(dtype="FLOAT32")),
        _case("CONV_2D", "FLOAT32", "3x3_o5", conv(outputs=5, dtype="FLOAT32")),
        _case(
            "CONV_2D",
            "FLOAT32",
            "hybrid_refused",
            conv(dtype="FLOAT32", weights="INT8"),
        ),
        _case(
            "CONV_2D",
            "INT8",
            "channels_not_multiple_refused",
            conv(channels=6, filter_channels=4),
            "input channels not a multiple of the filter's: only CMSIS-NN refuses it",
        ),
    ]
    for variant, build in _DEPTHWISE:
        found.append(_case("DEPTHWISE_CONV_2D", "INT8", variant, build))
    found += [
        _case("DEPTHWISE_CONV_2D", "INT16", "3x3", depthwise(dtype="INT16")),
        _case(
            "DEPTHWISE_CONV_2D",
            "INT16",
            "zero_point_refused",
            depthwise(dtype="INT16", zero_point=3),
        ),
        _case("DEPTHWISE_CONV_2D", "FLOAT32", "3x3", depthwise(dtype="FLOAT32")),
    ]
    for variant, build in _FULLY_CONNECTED:
        found.append(_case("FULLY_CONNECTED", "INT8", variant, build))
    found += [
        _case("FULLY_CONNECTED", "INT8", "after_four_scratch", convs_then_fully_connected),
        _case("FULLY_CONNECTED", "INT16", "rank2", fully_connected(dtype="INT16")),
        _case("FULLY_CONNECTED", "INT16", "rank3", fully_connected(batch=3, dtype="INT16", rank=3)),
        _case(
            "FULLY_CONNECTED",
            "INT16",
            "per_channel_refused",
            fully_connected(dtype="INT16", per_channel=True),
        ),
        _case(
            "FULLY_CONNECTED",
            "INT16",
            "zero_point_refused",
            fully_connected(dtype="INT16", zero_point=3),
        ),
        _case("FULLY_CONNECTED", "FLOAT32", "n16", fully_connected(dtype="FLOAT32")),
        _case(
            "FULLY_CONNECTED",
            "FLOAT32",
            "hybrid_refused",
            fully_connected(dtype="FLOAT32", weights="INT8"),
        ),
    ]
    found += [
        _case("BATCH_MATMUL", "INT8", "n6", batch_matmul((1, 4, 8), (1, 8, 6))),
        _case("BATCH_MATMUL", "INT8", "adj_x", batch_matmul((1, 8, 4), (1, 8, 6), adj_x=True)),
        _case("BATCH_MATMUL", "INT8", "adj_y", batch_matmul((1, 4, 8), (1, 6, 8), adj_y=True)),
        _case(
            "BATCH_MATMUL",
            "INT8",
            "constant_rhs",
            batch_matmul((1, 4, 8), (1, 8, 6), constant_rhs=True),
            # The wheel fits at 1240..1255, not at 1256..1271 (the output dims copy lands on
            # the output's affine struct), then from 1272 on: walk up past the bisection.
            scan_bytes=96,
        ),
        _case("BATCH_MATMUL", "INT8", "rank2", batch_matmul((4, 8), (8, 6))),
        _case("BATCH_MATMUL", "INT8", "rank4_broadcast", batch_matmul((2, 1, 4, 8), (1, 3, 8, 6))),
        _case("BATCH_MATMUL", "INT8", "n10", batch_matmul((1, 4, 8), (1, 8, 10))),
        _case(
            "BATCH_MATMUL",
            "INT8",
            "rank5_refused",
            batch_matmul((1, 1, 1, 4, 8), (1, 1, 1, 8, 6)),
            "rank-5 operands: only CMSIS-NN refuses them",
        ),
        _case("BATCH_MATMUL", "INT16", "n6", batch_matmul((1, 4, 8), (1, 8, 6), dtype="INT16")),
        _case(
            "BATCH_MATMUL",
            "INT16",
            "zero_point_refused",
            batch_matmul((1, 4, 8), (1, 8, 6), dtype="INT16", zero_point=3),
        ),
        _case("BATCH_MATMUL", "FLOAT32", "n6", batch_matmul((1, 4, 8), (1, 8, 6), dtype="FLOAT32")),
    ]
    found += [
        _case("AVERAGE_POOL_2D", "INT8", "c4", pool("AVERAGE_POOL_2D", 4)),
        _case("AVERAGE_POOL_2D", "INT8", "c20", pool("AVERAGE_POOL_2D", 20)),
        _case("AVERAGE_POOL_2D", "INT8", "c5", pool("AVERAGE_POOL_2D", 5)),
        _case(
            "AVERAGE_POOL_2D",
            "INT8",
            "scale_mismatch_refused",
            pool("AVERAGE_POOL_2D", 4, output_q=quantization(0.2, 0)),
        ),
        _case("AVERAGE_POOL_2D", "INT16", "c20", pool("AVERAGE_POOL_2D", 20, "INT16")),
        _case("AVERAGE_POOL_2D", "FLOAT32", "c20", pool("AVERAGE_POOL_2D", 20, "FLOAT32")),
        _case("MAX_POOL_2D", "INT8", "c20", pool("MAX_POOL_2D", 20)),
        _case("MAX_POOL_2D", "INT16", "c20", pool("MAX_POOL_2D", 20, "INT16")),
        _case("MAX_POOL_2D", "FLOAT32", "c20", pool("MAX_POOL_2D", 20, "FLOAT32")),
    ]
    found += [
        _case("SOFTMAX", "INT8", "rows2", softmax()),
        _case("SOFTMAX", "INT8", "rank4", softmax((1, 2, 3, 10))),
        _case("SOFTMAX", "INT8", "to_int16", softmax(output="INT16")),
        _case("SOFTMAX", "INT8", "zero_point_refused", softmax(zero_point=0)),
        _case("SOFTMAX", "INT16", "rows2", softmax(dtype="INT16")),
        _case("SOFTMAX", "FLOAT32", "rows2", softmax(dtype="FLOAT32")),
    ]
    found += [
        _case("SVDF", "INT8", "time_int16", svdf()),
        _case("SVDF", "INT8", "time_int8", svdf(time_type="INT8")),
        _case("SVDF", "INT8", "f20_rank2_batch3", svdf(batch=3, filters=20, rank=2)),
        _case("SVDF", "INT8", "rank4", svdf(filters=20, rank=4)),
        _case(
            "SVDF",
            "INT8",
            "variable_features",
            svdf(constant_features=False),
            "variable weights_feature: only CMSIS-NN's MVE path refuses it",
        ),
        _case("SVDF", "INT8", "no_bias_refused", svdf(bias=False)),
        _case("SVDF", "FLOAT32", "rank1", svdf(dtype="FLOAT32")),
        _case(
            "SVDF",
            "FLOAT32",
            "f20_rank2_batch3",
            svdf(batch=3, filters=20, rank=2, dtype="FLOAT32"),
        ),
    ]
    lstm_opcode = "UNIDIRECTIONAL_SEQUENCE_LSTM"
    found += [
        _case(lstm_opcode, "INT8", "b2_h6", lstm()),
        _case(lstm_opcode, "INT8", "b1_h10", lstm(batch=1, hidden=10)),
        _case(lstm_opcode, "INT8", "time_major", lstm(time_major=True)),
        _case(
            lstm_opcode,
            "INT8",
            "variable_weights",
            lstm(constant_weights=False),
            "variable weights: only CMSIS-NN refuses them",
        ),
        _case(lstm_opcode, "INT8", "cell_int8_refused", lstm(cell="INT8")),
        _case(lstm_opcode, "INT16", "b2_h6", lstm(dtype="INT16")),
        _case(lstm_opcode, "FLOAT32", "b2_h6", lstm(dtype="FLOAT32")),
        _case(lstm_opcode, "FLOAT32", "time_major", lstm(dtype="FLOAT32", time_major=True)),
    ]
    found += [
        _case("TRANSPOSE_CONV", "INT8", "c4_s1", transpose_conv(stride=1)),
        _case("TRANSPOSE_CONV", "INT8", "c4_s2", transpose_conv()),
        _case("TRANSPOSE_CONV", "INT8", "c4_s3", transpose_conv(stride=3)),
        _case("TRANSPOSE_CONV", "INT8", "c4_s2_per_tensor", transpose_conv(per_channel=False)),
        _case("TRANSPOSE_CONV", "INT8", "c16_s2", transpose_conv(channels=16)),
        _case("TRANSPOSE_CONV", "INT8", "c20_s2_reverse", transpose_conv(channels=20)),
        _case("TRANSPOSE_CONV", "INT8", "c20_s3", transpose_conv(channels=20, stride=3)),
        _case(
            "TRANSPOSE_CONV",
            "INT8",
            "c20_s1_k5_reverse",
            transpose_conv(channels=20, kernel=5, stride=1),
        ),
        _case(
            "TRANSPOSE_CONV",
            "INT8",
            "c17_s2_valid_reverse",
            transpose_conv(channels=17, padding="VALID"),
        ),
        _case(
            "TRANSPOSE_CONV",
            "INT8",
            "c5_k2_s3_valid",
            transpose_conv(channels=5, kernel=2, stride=3, padding="VALID"),
        ),
        _case("TRANSPOSE_CONV", "INT8", "no_bias", transpose_conv(bias="none")),
        _case("TRANSPOSE_CONV", "INT16", "bias_int64", transpose_conv(dtype="INT16")),
        _case("TRANSPOSE_CONV", "INT16", "bias_int16", transpose_conv(dtype="INT16", bias="INT16")),
        _case("TRANSPOSE_CONV", "FLOAT32", "s2", transpose_conv(dtype="FLOAT32")),
    ]
    found += [
        _case("ADD", "INT8", "same_shape", binary("ADD", "INT8")),
        _case("ADD", "INT8", "broadcast", binary("ADD", "INT8", (1, 1, 1, 3))),
        _case("ADD", "INT16", "same_shape", binary("ADD", "INT16")),
        _case("ADD", "INT16", "zero_point_refused", binary("ADD", "INT16", zero_point=3)),
        _case("ADD", "INT32", "same_shape", binary("ADD", "INT32")),
        _case("ADD", "FLOAT32", "same_shape", binary("ADD", "FLOAT32")),
        _case(
            "ADD",
            "INT64",
            "refused",
            binary("ADD", "INT64"),
            "CMSIS-NN refuses int64 in Prepare, the reference kernel at Invoke",
        ),
        _case("ADD", "INT8", "mixed_types_refused", binary("ADD", "INT8", second_type="INT16")),
        _case("MUL", "INT8", "same_shape", binary("MUL", "INT8")),
        _case("MUL", "INT16", "same_shape", binary("MUL", "INT16")),
        _case("MUL", "FLOAT32", "same_shape", binary("MUL", "FLOAT32")),
        _case("MAXIMUM", "INT8", "same_shape", binary("MAXIMUM", "INT8")),
        _case("MINIMUM", "FLOAT32", "same_shape", binary("MINIMUM", "FLOAT32")),
        _case("PAD", "INT8", "one_pixel", pad("PAD", "INT8")),
        _case("PAD", "FLOAT32", "one_pixel", pad("PAD", "FLOAT32")),
        _case("PADV2", "INT8", "one_pixel", pad("PADV2", "INT8")),
        _case("TRANSPOSE", "INT8", "rank4", transpose("INT8")),
        _case("TRANSPOSE", "INT16", "rank4", transpose("INT16")),
        _case(
            "TRANSPOSE",
            "INT8",
            "rank5",
            transpose("INT8", (1, 2, 3, 4, 5)),
            "CMSIS-NN's int8 Eval ignores its own rank check: Invoke returns ok",
        ),
    ]
    return tuple(found)


CASES = _cases()
