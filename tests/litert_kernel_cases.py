"""Small models for LiteRT kernels whose Prepare adds temporaries or moves tensors (TRANSPOSE_CONV,
TFLite_Detection_PostProcess, BROADCAST_ARGS, RFFT2D, CONV_3D_TRANSPOSE, DILATE, random ops,
resource variables, NumericVerify, 4-bit FULLY_CONNECTED, STABLEHLO_REDUCE_WINDOW; the recurrent
kernels in tests/litert_recurrent_cases.py): one case per memory path, built with
arenalens.tflite.builder and checked against the real interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from flatbuffers import flexbuffers
from tflite.TensorType import TensorType

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_cases import _floats, _int8, _single
from tests.litert_recurrent_cases import RECURRENT_CASES

Build = Callable[[ModelBuilder, SubgraphBuilder], tuple[list[int], list[int]]]

# ---------------------------------------------------------------------------------------------
# TRANSPOSE_CONV: input [1, 4, 4, 4], weights OHWI [3, 3, 3, 4], stride 2 SAME → [1, 8, 8, 3].

_INPUT = [1, 4, 4, 4]
_WEIGHTS = (3, 3, 3, 4)
_OUTPUT = [1, 8, 8, 3]
_STRIDE_2 = {"stride_w": 2, "stride_h": 2, "padding": "SAME"}
# A one-input operator LiteRT runs on each activation type, around the TRANSPOSE_CONV.
_ELEMENTWISE = {"FLOAT32": "ABS", "INT8": "ABS", "INT16": "ABS", "UINT8": "RELU"}


def _transpose_conv(
    *,
    input_type: str = "FLOAT32",
    weights: str = "constant",  # constant | input | dequantized
    shape: str = "constant",  # constant | input | folded
    bias_type: str | None = None,
    stored_output: list[int] | None = None,
    options: dict[str, Any] | None = None,
) -> bytes:
    """One TRANSPOSE_CONV between a RELU-like producer and consumer, so that its output,
    temporaries and chunk boundary sit among other arena tensors."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        activation_type = "FLOAT32" if input_type == "HYBRID" else input_type
        spec = _activation_quantization(activation_type)
        x = g.add_tensor("x", _INPUT, activation_type, quantization=spec)
        a = g.add_tensor("a", _INPUT, activation_type, quantization=spec)
        g.add_operator(_ELEMENTWISE[activation_type], [x], [a])
        graph_inputs = [x]
        output_shape, extra = _output_shape_tensor(g, shape)
        graph_inputs += extra
        w, extra = _weights_tensor(g, input_type, weights)
        graph_inputs += extra
        inputs = [output_shape, w, a]
        if bias_type is not None:
            inputs.append(_bias(g, bias_type))
        y = g.add_tensor("y", stored_output or _OUTPUT, activation_type, quantization=spec)
        g.add_operator("TRANSPOSE_CONV", inputs, [y], options={**_STRIDE_2, **(options or {})})
        if stored_output is not None:
            return graph_inputs, [y]  # the output alone: its resized bytes are what is checked
        z = g.add_tensor("z", _OUTPUT, activation_type, quantization=spec)
        g.add_operator(_ELEMENTWISE[activation_type], [y], [z])
        return graph_inputs, [z]

    return _single(build)


def _activation_quantization(dtype: str) -> Any:
    if dtype == "UINT8":
        return quantization(0.05, 128)
    if dtype in ("INT8", "INT16"):
        return quantization(0.05, 0)
    return None


def _output_shape_tensor(g: SubgraphBuilder, kind: str) -> tuple[int, list[int]]:
    """The output_shape input: a constant, a graph input, or SHAPE of a graph input (folded
    to PersistentRo in Prepare, which TRANSPOSE_CONV still treats as not constant)."""
    if kind == "constant":
        return g.add_constant("output_shape", np.array(_OUTPUT, dtype=np.int32)), []
    if kind == "input":
        shape = g.add_tensor("output_shape", [4], "INT32")
        return shape, [shape]
    like = g.add_tensor("like", _OUTPUT)
    shape = g.add_tensor("output_shape", [4], "INT32")
    g.add_operator("SHAPE", [like], [shape], options={"out_type": TensorType.INT32})
    return shape, [like]


def _weights_tensor(g: SubgraphBuilder, input_type: str, kind: str) -> tuple[int, list[int]]:
    """OHWI weights of the type the input needs: constant, a graph input, or a DEQUANTIZE of
    float16 constants (ArenaRwPersistent, so not MmapRo either)."""
    if input_type == "FLOAT32":
        if kind == "input":
            w = g.add_tensor("w", list(_WEIGHTS))
            return w, [w]
        if kind == "dequantized":
            half = g.add_constant("w_fp16", _floats(*_WEIGHTS).astype(np.float16), "FLOAT16")
            w = g.add_tensor("w", list(_WEIGHTS))
            g.add_operator("DEQUANTIZE", [half], [w])
            return w, []
        return g.add_constant("w", _floats(*_WEIGHTS)), []
    if input_type == "UINT8":
        data = np.random.default_rng(1).integers(0, 256, size=_WEIGHTS).astype(np.uint8)
        return g.add_constant("w", data, "UINT8", quantization=quantization(0.02, 128)), []
    per_channel = quantization([0.01, 0.02, 0.03], 0, axis=0)
    return g.add_constant("w", _int8(*_WEIGHTS), "INT8", quantization=per_channel), []


def _bias(g: SubgraphBuilder, dtype: str) -> int:
    if dtype == "FLOAT32":
        return g.add_constant("bias", _floats(_WEIGHTS[0]))
    numpy_type = np.int64 if dtype == "INT64" else np.int32
    scales = quantization([1e-4, 2e-4, 3e-4], 0, axis=0)
    return g.add_constant(
        "bias", np.zeros(_WEIGHTS[0], dtype=numpy_type), dtype, quantization=scales
    )


def transpose_conv_hybrid_decoder() -> bytes:
    """Two hybrid TRANSPOSE_CONVs in a row (float activations, per-channel int8 weights): each
    node reserves its own five temporaries; three per node live in the arena."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 3, 3, 8])
        previous, channels, size = x, 8, 3
        for stage in range(2):
            out_channels, out_size = channels // 2, size * 2
            shape = g.add_constant(
                f"shape{stage}", np.array([1, out_size, out_size, out_channels], dtype=np.int32)
            )
            weights = g.add_constant(
                f"w{stage}",
                _int8(out_channels, 3, 3, channels),
                "INT8",
                quantization=quantization(list(np.linspace(0.01, 0.02, out_channels)), 0),
            )
            y = g.add_tensor(f"y{stage}", [1, out_size, out_size, out_channels])
            g.add_operator("TRANSPOSE_CONV", [shape, weights, previous], [y], options=_STRIDE_2)
            previous, channels, size = y, out_channels, out_size
        z = g.add_tensor("z", [1, size, size, channels])
        g.add_operator("RELU", [previous], [z])
        return [x], [z]

    return _single(build)


# ---------------------------------------------------------------------------------------------
# TFLite_Detection_PostProcess.


def _detection(
    *,
    boxes: int,
    classes: int,
    max_detections: int,
    classes_per_detection: int = 1,
    regular_nms: bool | None = None,
    detections_per_class: int | None = None,
    quantized: bool = False,
    stored_outputs: list[list[int]] | None = None,
) -> bytes:
    """Box encodings and score logits as graph inputs; the scores go through LOGISTIC first
    (an arena tensor that dies at the detection node, next to its two temporaries)."""
    detected = max_detections * classes_per_detection
    outputs_shapes = stored_outputs or [[1, detected, 4], [1, detected], [1, detected], [1]]

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        if quantized:
            spec = quantization(0.05, 128)
            encodings = g.add_tensor("boxes", [1, boxes, 4], "UINT8", quantization=spec)
            logits = g.add_tensor("logits", [1, boxes, classes + 1], "UINT8", quantization=spec)
            scores = g.add_tensor(
                "scores", [1, boxes, classes + 1], "UINT8", quantization=quantization(1 / 256, 0)
            )
            anchor_data = np.full((boxes, 4), 128, dtype=np.uint8)
            anchors = g.add_constant("anchors", anchor_data, "UINT8", quantization=spec)
        else:
            encodings = g.add_tensor("boxes", [1, boxes, 4])
            logits = g.add_tensor("logits", [1, boxes, classes + 1])
            scores = g.add_tensor("scores", [1, boxes, classes + 1])
            anchors = g.add_constant("anchors", np.full((boxes, 4), 0.5, dtype=np.float32))
        g.add_operator("LOGISTIC", [logits], [scores])
        names = ("detection_boxes", "detection_classes", "detection_scores", "num_detections")
        results = [g.add_tensor(n, s) for n, s in zip(names, outputs_shapes, strict=True)]
        options: dict[str, Any] = {
            "max_detections": max_detections,
            "max_classes_per_detection": classes_per_detection,
            "num_classes": classes,
            "nms_score_threshold": 0.3,
            "nms_iou_threshold": 0.6,
            "y_scale": 10.0,
            "x_scale": 10.0,
            "h_scale": 5.0,
            "w_scale": 5.0,
        }
        if regular_nms is not None:
            options["use_regular_nms"] = regular_nms
        if detections_per_class is not None:
            options["detections_per_class"] = detections_per_class
        g.add_operator(
            "CUSTOM:TFLite_Detection_PostProcess",
            [encodings, scores, anchors],
            results,
            custom_options=bytes(flexbuffers.Dumps(options)),
        )
        return [encodings, logits], results

    return _single(build)


# ---------------------------------------------------------------------------------------------
# BROADCAST_ARGS feeding BROADCAST_TO, the way converters write a broadcast of two shapes.


def _broadcast(kind: str, dtype: str = "INT32") -> bytes:
    """kind: `constant` (two constant shapes: folded in Prepare, PersistentRo), `folded` (SHAPE
    of a graph input and a constant: folded too), `input` (one shape is a graph input: a
    planned output, and BROADCAST_TO's output becomes Dynamic, ending the first chunk)."""
    numpy_type = np.int64 if dtype == "INT64" else np.int32

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4])
        graph_inputs = [x]
        if kind == "constant":
            first = g.add_constant("s1", np.array([1, 1, 4], dtype=numpy_type), dtype)
        elif kind == "folded":
            first = g.add_tensor("s1", [2], dtype)
            g.add_operator("SHAPE", [x], [first], options={"out_type": getattr(TensorType, dtype)})
        else:
            first = g.add_tensor("s1", [3], dtype)
            graph_inputs.append(first)
        second = g.add_constant("s2", np.array([2, 1, 1], dtype=numpy_type), dtype)
        target = g.add_tensor("target", [3], dtype)
        g.add_operator("BROADCAST_ARGS", [first, second], [target])
        a = g.add_tensor("a", [1, 4])
        g.add_operator("ABS", [x], [a])
        wide = g.add_tensor("wide", [2, 1, 4])  # [1, 4] or [1, 1, 4] broadcast with [2, 1, 1]
        g.add_operator("BROADCAST_TO", [a, target], [wide], version=2)
        out = g.add_tensor("out", g.shape(wide))
        g.add_operator("RELU", [wide], [out])
        return graph_inputs, [out]

    return _single(build)


# ---------------------------------------------------------------------------------------------
# RFFT2D: four arena temporaries sized by fft_length, or Dynamic when it is not constant.


def _rfft2d(input_shape: list[int], fft_length: tuple[int, int], *, constant: bool) -> bytes:
    """RELU → RFFT2D → COMPLEX_ABS, so the complex64 output and the temporaries sit among
    other arena tensors."""
    height, width = fft_length
    output_shape = [*input_shape[:-2], height, width // 2 + 1]

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", input_shape)
        a = g.add_tensor("a", input_shape)
        g.add_operator("RELU", [x], [a])
        graph_inputs = [x]
        if constant:
            length = g.add_constant("fft_length", np.array(fft_length, dtype=np.int32))
        else:
            length = g.add_tensor("fft_length", [2], "INT32")
            graph_inputs.append(length)
        spectrum = g.add_tensor("spectrum", output_shape, "COMPLEX64")
        g.add_operator("RFFT2D", [a, length], [spectrum])
        magnitude = g.add_tensor("magnitude", output_shape)
        g.add_operator("COMPLEX_ABS", [spectrum], [magnitude])
        return graph_inputs, [magnitude]

    return _single(build)


def _rfft2d_folded_length(fold: str) -> bytes:
    """RFFT2D whose fft_length [8, 32] LiteRT computes in Prepare (constant folding into
    PersistentRo): `concat` joins two constants, `reshape` reshapes a [1, 2] constant,
    `shape` slices it out of a SHAPE. Its four temporaries and the output are sized from the
    folded values."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 8, 32])
        a = g.add_tensor("a", [1, 8, 32])
        g.add_operator("RELU", [x], [a])
        length = g.add_tensor("fft_length", [2], "INT32")
        if fold == "concat":
            rows = g.add_constant("rows", np.array([8], dtype=np.int32))
            columns = g.add_constant("columns", np.array([32], dtype=np.int32))
            g.add_operator("CONCATENATION", [rows, columns], [length], options={"axis": 0})
        elif fold == "reshape":
            pair = g.add_constant("pair", np.array([[8, 32]], dtype=np.int32))
            target = g.add_constant("target", np.array([2], dtype=np.int32))
            g.add_operator("RESHAPE", [pair, target], [length])
        else:
            dims = g.add_tensor("dims", [3], "INT32")
            g.add_operator("SHAPE", [a], [dims], options={"out_type": 2})
            begin = g.add_constant("begin", np.array([1], dtype=np.int32))
            end = g.add_constant("end", np.array([0], dtype=np.int32))
            strides = g.add_constant("strides", np.array([1], dtype=np.int32))
            g.add_operator(
                "STRIDED_SLICE", [dims, begin, end, strides], [length], options={"end_mask": 1}
            )
        spectrum = g.add_tensor("spectrum", [1, 8, 17], "COMPLEX64")
        g.add_operator("RFFT2D", [a, length], [spectrum])
        magnitude = g.add_tensor("magnitude", [1, 8, 17])
        g.add_operator("COMPLEX_ABS", [spectrum], [magnitude])
        return [x], [magnitude]

    return _single(build)


def shape_arithmetic_folded() -> bytes:
    """A converter's flatten: SHAPE → GATHER / STRIDED_SLICE → REDUCE_PROD → CONCATENATION →
    RESHAPE. All of it folds in Prepare; REDUCE_PROD's noop path makes its resolved axes,
    accumulator and normalized dims Dynamic (heap), so none of them is planned."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4, 6], shape_signature=[-1, 4, 6])
        a = g.add_tensor("a", [1, 4, 6])
        g.add_operator("RELU", [x], [a])
        dims = g.add_tensor("dims", [3], "INT32")
        g.add_operator("SHAPE", [a], [dims], options={"out_type": 2})
        batch = g.add_tensor("batch", [1], "INT32")
        zero = g.add_constant("zero", np.array([0], dtype=np.int32))
        g.add_operator("GATHER", [dims, zero], [batch], options={"axis": 0})
        rest = g.add_tensor("rest", [2], "INT32")
        begin = g.add_constant("begin", np.array([1], dtype=np.int32))
        end = g.add_constant("end", np.array([0], dtype=np.int32))
        strides = g.add_constant("strides", np.array([1], dtype=np.int32))
        g.add_operator(
            "STRIDED_SLICE", [dims, begin, end, strides], [rest], options={"end_mask": 1}
        )
        features = g.add_tensor("features", [1], "INT32")
        axis = g.add_constant("axis", np.array([0], dtype=np.int32))
        g.add_operator("REDUCE_PROD", [rest, axis], [features], options={"keep_dims": True})
        target = g.add_tensor("target", [2], "INT32")
        g.add_operator("CONCATENATION", [batch, features], [target], options={"axis": 0})
        flat = g.add_tensor("flat", [1, 24])
        g.add_operator("RESHAPE", [a, target], [flat])
        out = g.add_tensor("out", [1, 24])
        g.add_operator("RELU", [flat], [out])
        return [x], [out]

    return _single(build)


# ---------------------------------------------------------------------------------------------
# CONV_3D_TRANSPOSE: input [1, 2, 3, 3, 4], filter [kd, kh, kw, Cout, Cin] = [2, 3, 3, 2, 4].


def _conv_3d_transpose(*, shape: str = "constant", dilated: bool = False) -> bytes:
    """stride 2 (1 when dilated) SAME; shape: `constant`, `folded` (SHAPE of a graph input:
    unlike TRANSPOSE_CONV this kernel accepts it) or `input`."""
    stride = 1 if dilated else 2
    output = [1, 2 * stride, 3 * stride, 3 * stride, 2]

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 2, 3, 3, 4])
        a = g.add_tensor("a", [1, 2, 3, 3, 4])
        g.add_operator("RELU", [x], [a])
        graph_inputs = [x]
        if shape == "constant":
            output_shape = g.add_constant("output_shape", np.array(output, dtype=np.int32))
        elif shape == "input":
            output_shape = g.add_tensor("output_shape", [5], "INT32")
            graph_inputs.append(output_shape)
        else:
            like = g.add_tensor("like", output)
            graph_inputs.append(like)
            output_shape = g.add_tensor("output_shape", [5], "INT32")
            g.add_operator("SHAPE", [like], [output_shape], options={"out_type": TensorType.INT32})
        weights = g.add_constant("w", _floats(2, 3, 3, 2, 4))
        y = g.add_tensor("y", output)
        factor = 2 if dilated else 1
        g.add_operator(
            "CONV_3D_TRANSPOSE",
            [output_shape, weights, a],
            [y],
            options={
                "padding": "SAME",
                "stride_d": stride,
                "stride_h": stride,
                "stride_w": stride,
                "dilation_dfactor": factor,
                "dilation_hfactor": factor,
                "dilation_wfactor": factor,
            },
        )
        z = g.add_tensor("z", output)
        g.add_operator("RELU", [y], [z])
        return graph_inputs, [z]

    return _single(build)


def numeric_verify() -> bytes:
    """NumericVerify (a debug custom op LiteRT registers): a quantized tensor checked against
    its float reference; its output is persistent, its dequantized copy on the heap."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [2, 16])
        q = quantization(0.05, 0)
        quantized = g.add_tensor("quantized", [2, 16], "INT8", quantization=q)
        g.add_operator("QUANTIZE", [x], [quantized])
        reference = g.add_tensor("reference", [2, 16])
        g.add_operator("RELU", [x], [reference])
        difference = g.add_tensor("difference", [2, 16])
        g.add_operator(
            "CUSTOM:NumericVerify",
            [quantized, reference],
            [difference],
            custom_options=bytes(flexbuffers.Dumps({"tolerance": 5.0, "log_if_failed": False})),
        )
        out = g.add_tensor("out", [2, 16], "INT8", quantization=q)
        g.add_operator("ABS", [quantized], [out])
        return [x], [out, difference]

    return _single(build)


def resource_variables() -> bytes:
    """Three VAR_HANDLEs (4-byte ids in the persistent arena, 64 B apart; shaped [1] because
    Python cannot read a 0-d resource tensor's address), two assigned from
    the input, read back once with a known shape (ArenaRw) and once with a rank-0 output
    (Dynamic: the first chunk ends there)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4])
        handles = []
        for name in ("state", "other", "unused"):
            handles.append(g.add_tensor(f"{name}/handle", [1], "RESOURCE"))
            g.add_operator("VAR_HANDLE", [], [handles[-1]], options={"shared_name": name})
        g.add_operator("ASSIGN_VARIABLE", [handles[0], x], [])
        g.add_operator("ASSIGN_VARIABLE", [handles[1], x], [])
        known = g.add_tensor("known", [1, 4])
        g.add_operator("READ_VARIABLE", [handles[0]], [known])
        unranked = g.add_tensor("unranked", [])
        g.add_operator("READ_VARIABLE", [handles[1]], [unranked])
        out = g.add_tensor("out", [1, 4])
        g.add_operator("ADD", [known, unranked], [out])
        return [x], [out]

    return _single(build)


def _dilate(kind: str) -> bytes:
    """DILATE of a [3, 4] tensor by (2, 3) → [5, 10]; dilations `constant`, `input`, or
    `folded` (SHAPE of a [2, 3] graph input: PersistentRo, which DILATE treats as not
    constant)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [3, 4])
        a = g.add_tensor("a", [3, 4])
        g.add_operator("RELU", [x], [a])
        graph_inputs = [x]
        if kind == "constant":
            dilations = g.add_constant("dilations", np.array([2, 3], dtype=np.int32))
        elif kind == "input":
            dilations = g.add_tensor("dilations", [2], "INT32")
            graph_inputs.append(dilations)
        else:
            like = g.add_tensor("like", [2, 3])
            graph_inputs.append(like)
            dilations = g.add_tensor("dilations", [2], "INT32")
            g.add_operator("SHAPE", [like], [dilations], options={"out_type": TensorType.INT32})
        padding = g.add_constant("padding_value", np.array(0.0, dtype=np.float32))
        y = g.add_tensor("y", [5, 10])
        g.add_operator("DILATE", [a, dilations, padding], [y])
        z = g.add_tensor("z", [5, 10])
        g.add_operator("RELU", [y], [z])
        return graph_inputs, [z]

    return _single(build)


def _random(kind: str) -> bytes:
    """RANDOM_UNIFORM with a `constant` or `input` shape, or MULTINOMIAL of input logits
    (`multinomial`): outputs sized in Prepare only from constant or folded inputs."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [4, 6])
        graph_inputs = [x]
        if kind == "multinomial":
            samples = g.add_constant("samples", np.array(5, dtype=np.int32))
            drawn = g.add_tensor("drawn", [4, 5], "INT64")
            g.add_operator("MULTINOMIAL", [x, samples], [drawn], options_type="RandomOptions")
            return graph_inputs, [drawn]
        if kind == "constant":
            shape = g.add_constant("shape", np.array([4, 6], dtype=np.int32))
        else:
            shape = g.add_tensor("shape", [2], "INT32")
            graph_inputs.append(shape)
        noise = g.add_tensor("noise", [4, 6])
        g.add_operator("RANDOM_UNIFORM", [shape], [noise], options_type="RandomOptions")
        y = g.add_tensor("y", [4, 6])
        g.add_operator("ADD", [x, noise], [y])
        return graph_inputs, [y]

    return _single(build)


def _fully_connected_narrow(weights: str, *, batch: int, columns: int, units: int) -> bytes:
    """Hybrid FULLY_CONNECTED with packed int4 / int2 weights (raw bytes): int4 weights with
    even columns ≥ 32 and ≥ 4 units take the optimized 4-bit kernel and its packed layout."""
    bits = 4 if weights == "INT4" else 2

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [batch, columns])
        packed = bytes(
            np.random.default_rng(3).integers(
                0, 256, (units * columns * bits + 7) // 8, dtype=np.uint8
            )
        )
        w = g.add_tensor(
            "w", [units, columns], weights, data=packed, quantization=quantization(0.02, 0)
        )
        y = g.add_tensor("y", [batch, units])
        g.add_operator("FULLY_CONNECTED", [x, w, -1], [y])
        z = g.add_tensor("z", [batch, units])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def stablehlo_reduce_window(*, dilated: bool) -> bytes:
    """stablehlo.reduce_window (sum) over a [1, 5, 6] input; `dilated` adds base and window
    dilations, strides and a padding that crops: dilated [1, 9, 6], padded [1, 11, 5], output
    [1, 5, 1]. Its body subgraph is inspected, never allocated."""
    model = ModelBuilder()
    main = model.add_subgraph("main")
    x = main.add_tensor("x", [1, 5, 6])
    a = main.add_tensor("a", [1, 5, 6])
    main.add_operator("RELU", [x], [a])
    zero = main.add_constant("zero", np.array(0.0, dtype=np.float32))
    options: dict[str, Any] = {"window_dimensions": [1, 2, 3], "body_subgraph_index": 1}
    output = [1, 4, 4]
    if dilated:
        options |= {
            "window_strides": [1, 2, 1],
            "base_dilations": [1, 2, 1],
            "window_dilations": [1, 1, 2],
            "padding": [0, 0, 1, 1, 0, -1],
        }
        output = [1, 5, 1]
    y = main.add_tensor("y", output)
    main.add_operator("STABLEHLO_REDUCE_WINDOW", [a, zero], [y], options=options)
    z = main.add_tensor("z", output)
    main.add_operator("RELU", [y], [z])
    main.set_inputs([x])
    main.set_outputs([z])
    body = model.add_subgraph("body")
    left, right = body.add_tensor("left", []), body.add_tensor("right", [])
    total = body.add_tensor("total", [])
    body.add_operator("STABLEHLO_ADD", [left, right], [total])
    body.set_inputs([left, right])
    body.set_outputs([total])
    return model.build()


KERNEL_CASES: dict[str, Callable[[], bytes]] = {
    "transpose_conv_float_bias": lambda: _transpose_conv(bias_type="FLOAT32"),
    "transpose_conv_uint8": lambda: _transpose_conv(input_type="UINT8", bias_type="INT32"),
    "transpose_conv_int8_bias": lambda: _transpose_conv(input_type="INT8", bias_type="INT32"),
    "transpose_conv_int16": lambda: _transpose_conv(input_type="INT16", bias_type="INT64"),
    "transpose_conv_int16_int32_bias": lambda: _transpose_conv(
        input_type="INT16", bias_type="INT32", options={"quantized_bias_type": "INT32"}
    ),
    "transpose_conv_shape_input": lambda: _transpose_conv(shape="input"),
    "transpose_conv_shape_folded": lambda: _transpose_conv(shape="folded"),
    "transpose_conv_int8_shape_input": lambda: _transpose_conv(input_type="INT8", shape="input"),
    "transpose_conv_int16_shape_input": lambda: _transpose_conv(input_type="INT16", shape="input"),
    "transpose_conv_hybrid_shape_input": lambda: _transpose_conv(
        input_type="HYBRID", shape="input"
    ),
    "transpose_conv_weights_input": lambda: _transpose_conv(weights="input"),
    "transpose_conv_weights_dequantized": lambda: _transpose_conv(weights="dequantized"),
    "transpose_conv_resized_output": lambda: _transpose_conv(stored_output=[1, 9, 9, 3]),
    "transpose_conv_hybrid_decoder": transpose_conv_hybrid_decoder,
    "detection_fast_nms": lambda: _detection(boxes=32, classes=3, max_detections=5),
    "detection_regular_nms": lambda: _detection(
        boxes=40,
        classes=6,
        max_detections=4,
        classes_per_detection=2,
        regular_nms=True,
        detections_per_class=3,
    ),
    "detection_uint8": lambda: _detection(boxes=24, classes=2, max_detections=6, quantized=True),
    "detection_outputs_resized": lambda: _detection(
        boxes=16,
        classes=4,
        max_detections=3,
        classes_per_detection=3,
        stored_outputs=[[1, 1, 4], [1, 1], [1, 1], [1]],
    ),
    "broadcast_args_constant": lambda: _broadcast("constant"),
    "broadcast_args_folded": lambda: _broadcast("folded", "INT64"),
    "broadcast_args_input": lambda: _broadcast("input"),
    "rfft2d": lambda: _rfft2d([2, 8, 16], (8, 16), constant=True),
    "rfft2d_cropped": lambda: _rfft2d([1, 6, 12], (4, 32), constant=True),
    "rfft2d_length_input": lambda: _rfft2d([1, 8, 16], (8, 16), constant=False),
    "rfft2d_length_folded_concat": lambda: _rfft2d_folded_length("concat"),
    "rfft2d_length_folded_reshape": lambda: _rfft2d_folded_length("reshape"),
    "rfft2d_length_folded_shape": lambda: _rfft2d_folded_length("shape"),
    "shape_arithmetic_folded": shape_arithmetic_folded,
    "conv_3d_transpose": _conv_3d_transpose,
    "conv_3d_transpose_dilated": lambda: _conv_3d_transpose(dilated=True),
    "conv_3d_transpose_shape_folded": lambda: _conv_3d_transpose(shape="folded"),
    "conv_3d_transpose_shape_input": lambda: _conv_3d_transpose(shape="input"),
    "numeric_verify": numeric_verify,
    "resource_variables": resource_variables,
    "dilate": lambda: _dilate("constant"),
    "dilate_dilations_input": lambda: _dilate("input"),
    "dilate_dilations_folded": lambda: _dilate("folded"),
    "random_uniform": lambda: _random("constant"),
    "random_uniform_shape_input": lambda: _random("input"),
    "multinomial": lambda: _random("multinomial"),
    "fully_connected_int4_packed_rows": lambda: _fully_connected_narrow(
        "INT4", batch=3, columns=64, units=8
    ),
    "fully_connected_int4_padded": lambda: _fully_connected_narrow(
        "INT4", batch=5, columns=40, units=6
    ),
    "fully_connected_int4_dense_kernel": lambda: _fully_connected_narrow(
        "INT4", batch=2, columns=16, units=8
    ),
    "fully_connected_int2": lambda: _fully_connected_narrow("INT2", batch=3, columns=64, units=8),
    "stablehlo_reduce_window": lambda: stablehlo_reduce_window(dilated=False),
    "stablehlo_reduce_window_dilated_padded": lambda: stablehlo_reduce_window(dilated=True),
    **RECURRENT_CASES,
}
