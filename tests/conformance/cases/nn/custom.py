"""nn cases: the custom operators (TFLite_Detection_PostProcess, CIRCULAR_BUFFER, ethos-u) and
TFLM_DECODE (compressed weights decoded before their consumer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, quantization
from tests.conformance.cases import Case
from tests.conformance.cases.nn.common import Q8, SCAN, activation_quantization, scale_list
from tests.conformance.models import Const, In, Op, Out, single_op

# ---------------------------------------------------------------------------------------------
# Custom operators: TFLite_Detection_PostProcess, CIRCULAR_BUFFER, ethos-u


def detection(
    boxes: int = 20,
    classes: int = 3,
    detections: int = 5,
    *,
    regular: bool = False,
    background: bool = True,
    per_class: int | None = None,
    dtype: str = "FLOAT32",
) -> Callable[[], bytes]:
    def build() -> bytes:
        options: dict[str, Any] = {
            "max_detections": detections,
            "max_classes_per_detection": 1,
            "use_regular_nms": regular,
            "nms_score_threshold": 0.3,
            "nms_iou_threshold": 0.6,
            "num_classes": classes,
            "y_scale": 10.0,
            "x_scale": 10.0,
            "h_scale": 5.0,
            "w_scale": 5.0,
        }
        if per_class is not None:
            options["detections_per_class"] = per_class
        q = activation_quantization(dtype)
        anchors = np.tile(np.array([0.5, 0.5, 0.2, 0.2], np.float32), (boxes, 1))
        operands = [
            In((1, boxes, 4), dtype, q),
            In((1, boxes, classes + (1 if background else 0)), dtype, q),
            Const(anchors, "FLOAT32"),
        ]
        outputs = [
            Out((1, detections, 4), "FLOAT32"),
            Out((1, detections), "FLOAT32"),
            Out((1, detections), "FLOAT32"),
            Out((1,), "FLOAT32"),
        ]
        return single_op(
            Op("CUSTOM:TFLite_Detection_PostProcess", operands, outputs, custom=options)
        )

    return build


def circular_buffer(
    slots: int = 5, depth: int = 8, *, cycles: int | None = None, dtype: str = "INT8"
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = activation_quantization(dtype)
        custom = None if cycles is None else {"cycles_max": cycles}
        operand = In((1, 1, 1, depth), dtype, q)
        out = Out((1, slots, 1, depth), dtype, q)
        return single_op(Op("CUSTOM:CIRCULAR_BUFFER", [operand], [out], custom=custom))

    return build


def ethos_u() -> bytes:
    """A Vela-style model: one ethos-u custom operator over a command stream and the weights."""
    stream = Const(np.zeros(64, np.uint8), "UINT8")
    weights = Const(np.zeros(128, np.uint8), "UINT8")
    source = In((1, 8, 8, 4), "INT8", Q8)
    op = Op("CUSTOM:ethos-u", [stream, weights, source], [Out((1, 8, 8, 4), "INT8", Q8)], custom={})
    return single_op(op)


def custom_cases() -> list[Case]:
    dp, cb = "CUSTOM:TFLite_Detection_PostProcess", "CUSTOM:CIRCULAR_BUFFER"
    cases = [
        Case(f"{dp}.FLOAT32.fast_b20_c3_d5", dp, "FLOAT32", detection()),
        Case(
            f"{dp}.FLOAT32.regular_b20_c3_d5", dp, "FLOAT32", detection(regular=True, per_class=4)
        ),
        Case(f"{dp}.FLOAT32.fast_b100_c12_d4", dp, "FLOAT32", detection(100, 12, 4)),
        Case(
            f"{dp}.FLOAT32.regular_b100_c3_d20", dp, "FLOAT32", detection(100, 3, 20, regular=True)
        ),
        Case(
            f"{dp}.FLOAT32.no_background_b20_c12_d20",
            dp,
            "FLOAT32",
            detection(20, 12, 20, background=False),
        ),
        Case(f"{dp}.UINT8.invoke_refused", dp, "UINT8", detection(dtype="UINT8")),
    ]
    cases += [
        Case(f"{cb}.INT8.slots5", cb, "INT8", circular_buffer()),
        Case(f"{cb}.INT8.slots13_depth96", cb, "INT8", circular_buffer(13, 96)),
        Case(f"{cb}.INT8.cycles2", cb, "INT8", circular_buffer(cycles=2)),
        Case(f"{cb}.FLOAT32.refused", cb, "FLOAT32", circular_buffer(dtype="FLOAT32")),
    ]
    cases.append(Case("CUSTOM:ethos-u.INT8.not_registered", "CUSTOM:ethos-u", "INT8", ethos_u))
    return cases


# ---------------------------------------------------------------------------------------------
# TFLM_DECODE: compressed weights (tensorflow/lite/micro/compression) decoded before their consumer


def _decode_header(kind: int, *, version: int = 1, user: bytes = b"") -> bytes:
    """The 16-byte DECODE common metadata: type, DCM version, then type-specific bytes 4-15."""
    header = bytearray(16)
    header[0] = kind
    header[1] = version
    header[4 : 4 + len(user)] = user
    return bytes(header)


def _encoded(
    graph: Any,
    name: str,
    kind: int,
    original: np.ndarray,
    q: QuantizationSpec | None,
    *,
    version: int = 1,
) -> tuple[int, int]:
    """(encoded tensor, ancillary tensor) standing for `original` under one decode type: only
    the sizes and the header matter to setup (Prepare reads the header, Invoke the data)."""
    count = int(original.size)
    channels = len(q.scales) if q is not None else 1
    if kind == 0:  # LUT: 2-bit indices; byte 4 LUT version, 5 axis and bit width, 6 stride
        data = bytes((count * 2 + 7) // 8)
        axis = 0 if channels > 1 else 0xF
        user = bytes([1, (axis << 4) | 2, 4])
        tables = np.zeros(4 * channels, original.dtype).tobytes()
    elif kind == 2:  # pruning: a bitmap, then the kept values; byte 4 version
        data = bytes((count + 7) // 8)
        user, tables = bytes([1]), np.zeros(4, original.dtype).tobytes()
    elif kind == 1:  # Huffman: 32-bit codewords; byte 4 version, 5 table size (32-bit table)
        data = bytes(4 * ((count + 31) // 32))
        user, tables = bytes([1, 0x11]), bytes(8)
    else:
        data, user, tables = bytes(4), b"", b""
    ancillary = _decode_header(kind, version=version, user=user) + tables
    encoded = graph.add_tensor(f"{name}_encoded", [len(data)], "UINT8", data=data, quantization=q)
    side = graph.add_tensor(f"{name}_ancillary", [len(ancillary)], "UINT8", data=ancillary)
    return encoded, side


def decoded_fully_connected(
    kind: int = 0,
    *,
    units: int = 8,
    depth: int = 32,
    per_channel: bool = False,
    bias_too: bool = False,
    consumers: int = 1,
    version: int = 1,
) -> Callable[[], bytes]:
    """FULLY_CONNECTED layers whose weights (and bias) come out of DECODE operators, one DECODE
    before each consumer (as tensorflow/lite/micro/compression inserts them)."""

    def build() -> bytes:
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        scales = scale_list(units) if per_channel else [0.1]
        wq = quantization(scales, 0, axis=0)
        weights = np.ones((units, depth), np.int8)
        x = graph.add_tensor("x", [1, depth], "INT8", quantization=Q8)
        current = x
        # One compressed tensor, decoded again before each consumer.
        encoded, side = _encoded(graph, "w", kind, weights, wq, version=version)
        for layer in range(consumers):
            decoded = graph.add_tensor(f"w{layer}_decoded", [units, depth], "INT8", quantization=wq)
            decode_inputs = [encoded, side]
            decode_outputs = [decoded]
            bq = quantization([0.1 * s for s in scales], 0)
            bias_values = np.zeros(units, np.int32)
            if bias_too:
                b_encoded, b_side = _encoded(graph, f"b{layer}", 0, bias_values, None)
                bias = graph.add_tensor(f"b{layer}_decoded", [units], "INT32", quantization=bq)
                decode_inputs += [b_encoded, b_side]
                decode_outputs.append(bias)
            else:
                bias = graph.add_constant(f"b{layer}", bias_values, "INT32", quantization=bq)
            graph.add_operator("CUSTOM:TFLM_DECODE", decode_inputs, decode_outputs)
            y = graph.add_tensor(f"y{layer}", [1, units], "INT8", quantization=Q8)
            graph.add_operator("FULLY_CONNECTED", [current, decoded, bias], [y])
            current = y
        graph.set_inputs([x])
        graph.set_outputs([current])
        return builder.build()

    return build


def decoded_output(kind: int = 2, *, channels: int = 8, zero_point: int = 1) -> Callable[[], bytes]:
    """A DECODE whose output is the model's output: per-channel int8 weights with non-zero zero
    points (DecodeStatePrune copies them into the tail; FULLY_CONNECTED would refuse them)."""

    def build() -> bytes:
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        wq = quantization(scale_list(channels), zero_point, axis=0)
        encoded, side = _encoded(graph, "w", kind, np.ones((channels, 16), np.int8), wq)
        decoded = graph.add_tensor("w_decoded", [channels, 16], "INT8", quantization=wq)
        graph.add_operator("CUSTOM:TFLM_DECODE", [encoded, side], [decoded])
        graph.set_inputs([])
        graph.set_outputs([decoded])
        return builder.build()

    return build


def decode_cases() -> list[Case]:
    dc = "CUSTOM:TFLM_DECODE"
    return [
        Case(f"{dc}.INT8.lut_per_tensor", dc, "INT8", decoded_fully_connected(), scan_bytes=SCAN),
        Case(
            f"{dc}.INT8.lut_per_channel16",
            dc,
            "INT8",
            decoded_fully_connected(units=16, per_channel=True),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_weights_and_bias",
            dc,
            "INT8",
            decoded_fully_connected(bias_too=True),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_two_consumers",
            dc,
            "INT8",
            decoded_fully_connected(units=32, consumers=2),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.prune_per_tensor", dc, "INT8", decoded_fully_connected(2), scan_bytes=SCAN
        ),
        Case(
            f"{dc}.INT8.prune_per_channel_zero_points",
            dc,
            "INT8",
            decoded_output(2),
            scan_bytes=SCAN,
        ),
        Case(f"{dc}.INT8.huffman", dc, "INT8", decoded_fully_connected(1), scan_bytes=SCAN),
        Case(
            f"{dc}.INT8.prune_per_channel_output",
            dc,
            "INT8",
            decoded_output(2, zero_point=0),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_per_channel_output",
            dc,
            "INT8",
            decoded_output(0, zero_point=1),
            scan_bytes=SCAN,
        ),
        Case(f"{dc}.INT8.custom_type_refused", dc, "INT8", decoded_fully_connected(127)),
        Case(f"{dc}.INT8.version_refused", dc, "INT8", decoded_fully_connected(0, version=2)),
    ]
