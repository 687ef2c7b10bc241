"""nn cases: pooling, softmax, normalisation, EMBEDDING_LOOKUP, PRELU, CUMSUM."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arenalens.tflite.builder import QuantizationSpec, quantization
from tests.conformance.cases import Case
from tests.conformance.cases.nn.common import NUMPY_TYPES, SCAN, activation_quantization
from tests.conformance.models import Const, In, Op, Out, single_op

# ---------------------------------------------------------------------------------------------
# Pooling, softmax, normalisation


def pool(
    opcode: str,
    dtype: str = "FLOAT32",
    *,
    padding: str = "VALID",
    stride: int = 2,
    activation: str = "NONE",
    output_q: QuantizationSpec | None = None,
) -> Callable[[], bytes]:
    def build() -> bytes:
        size = -(-6 // stride) if padding == "SAME" else (6 - 2) // stride + 1
        q = activation_quantization(dtype)
        options = {
            "padding": padding,
            "stride_w": stride,
            "stride_h": stride,
            "filter_width": 2,
            "filter_height": 2,
            "fused_activation_function": activation,
        }
        out = Out((1, size, size, 4), dtype, output_q or q)
        return single_op(Op(opcode, [In((1, 6, 6, 4), dtype, q)], [out], options=options))

    return build


def softmax(
    dtype: str = "FLOAT32",
    output: str | None = None,
    *,
    shape: Sequence[int] = (1, 40),
    output_q: QuantizationSpec | None = None,
    input_q: QuantizationSpec | None = None,
) -> Callable[[], bytes]:
    output = output or dtype
    defaults = {
        ("INT8", "INT8"): quantization(1 / 256, -128),
        ("INT8", "INT16"): quantization(1 / 65536, -32768),
        ("INT16", "INT16"): quantization(1 / 32768, 0),
        ("UINT8", "UINT8"): quantization(1 / 256, 0),
    }

    def build() -> bytes:
        iq = input_q or (
            None if dtype == "FLOAT32" else quantization(0.1 if dtype != "INT16" else 0.001, 0)
        )
        oq = output_q or defaults.get((dtype, output))
        out = Out(tuple(shape), output, oq)
        return single_op(Op("SOFTMAX", [In(tuple(shape), dtype, iq)], [out], options={"beta": 1.0}))

    return build


def log_softmax(
    dtype: str = "FLOAT32", *, shape: Sequence[int] = (1, 40), output_scale: float = 16 / 256
) -> Callable[[], bytes]:
    def build() -> bytes:
        iq = None if dtype == "FLOAT32" else quantization(0.1, 0)
        oq = None if dtype == "FLOAT32" else quantization(output_scale, 127)
        out = Out(tuple(shape), dtype, oq)
        return single_op(Op("LOG_SOFTMAX", [In(tuple(shape), dtype, iq)], [out]))

    return build


def l2_normalization(
    dtype: str = "FLOAT32", *, shape: Sequence[int] = (1, 4, 4, 8), activation: str = "NONE"
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = None if dtype == "FLOAT32" else quantization(1 / 128, 0)
        out = Out(tuple(shape), dtype, q)
        options = {"fused_activation_function": activation}
        return single_op(
            Op("L2_NORMALIZATION", [In(tuple(shape), dtype, q)], [out], options=options)
        )

    return build


def pool_softmax_cases() -> list[Case]:
    cases: list[Case] = []
    for opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for dtype in ("FLOAT32", "INT8", "INT16"):
            cases.append(Case(f"{opcode}.{dtype}.valid", opcode, dtype, pool(opcode, dtype)))
        cases += [
            Case(
                f"{opcode}.INT8.same_relu6",
                opcode,
                "INT8",
                pool(opcode, "INT8", padding="SAME", stride=1, activation="RELU6"),
            ),
            Case(f"{opcode}.UINT8.refused", opcode, "UINT8", pool(opcode, "UINT8")),
            Case(
                f"{opcode}.INT8.scale_refused",
                opcode,
                "INT8",
                pool(opcode, "INT8", output_q=quantization(0.2, 0)),
            ),
        ]
    cases += [
        Case(
            "AVERAGE_POOL_2D.FLOAT32.same_stride1",
            "AVERAGE_POOL_2D",
            "FLOAT32",
            pool("AVERAGE_POOL_2D", padding="SAME", stride=1),
        ),
        Case(
            "MAX_POOL_2D.INT16.zero_point_refused",
            "MAX_POOL_2D",
            "INT16",
            pool("MAX_POOL_2D", "INT16", output_q=quantization(1 / 32768, 3)),
        ),
    ]
    l2 = "L2_POOL_2D"
    cases += [
        Case(f"{l2}.FLOAT32.valid_stride2", l2, "FLOAT32", pool(l2), scan_bytes=SCAN),
        Case(
            f"{l2}.FLOAT32.same_stride1",
            l2,
            "FLOAT32",
            pool(l2, padding="SAME", stride=1),
            scan_bytes=SCAN,
        ),
        Case(f"{l2}.INT8.refused", l2, "INT8", pool(l2, "INT8")),
    ]
    sm = "SOFTMAX"
    for rank, shape in (("rank2", (1, 40)), ("rank4", (1, 2, 3, 10))):
        cases += [
            Case(f"{sm}.FLOAT32.{rank}", sm, "FLOAT32", softmax(shape=shape)),
            Case(f"{sm}.INT8.{rank}", sm, "INT8", softmax("INT8", shape=shape)),
            Case(
                f"{sm}.INT8.int16_output_{rank}", sm, "INT8", softmax("INT8", "INT16", shape=shape)
            ),
            Case(f"{sm}.INT16.{rank}", sm, "INT16", softmax("INT16", shape=shape), scan_bytes=SCAN),
        ]
    cases += [
        Case(
            f"{sm}.INT8.output_zero_point_refused",
            sm,
            "INT8",
            softmax("INT8", output_q=quantization(1 / 256, 0)),
        ),
        Case(
            f"{sm}.INT16.zero_point_refused",
            sm,
            "INT16",
            softmax("INT16", input_q=quantization(0.001, 5)),
        ),
        Case(f"{sm}.UINT8.refused", sm, "UINT8", softmax("UINT8")),
    ]
    lsm = "LOG_SOFTMAX"
    cases += [
        Case(f"{lsm}.FLOAT32.rank2", lsm, "FLOAT32", log_softmax()),
        Case(f"{lsm}.INT8.rank2", lsm, "INT8", log_softmax("INT8"), scan_bytes=SCAN),
        Case(
            f"{lsm}.INT8.rank4",
            lsm,
            "INT8",
            log_softmax("INT8", shape=(1, 2, 3, 10)),
            scan_bytes=SCAN,
        ),
        Case(f"{lsm}.INT16.invoke_refused", lsm, "INT16", log_softmax("INT16")),
        Case(
            f"{lsm}.INT8.output_scale_refused", lsm, "INT8", log_softmax("INT8", output_scale=0.1)
        ),
    ]
    l2n = "L2_NORMALIZATION"
    cases += [
        Case(f"{l2n}.FLOAT32.rank4", l2n, "FLOAT32", l2_normalization()),
        Case(f"{l2n}.FLOAT32.rank2", l2n, "FLOAT32", l2_normalization(shape=(3, 16))),
        Case(f"{l2n}.INT8.rank4", l2n, "INT8", l2_normalization("INT8")),
        Case(f"{l2n}.INT8.rank2", l2n, "INT8", l2_normalization("INT8", shape=(3, 16))),
        Case(f"{l2n}.INT16.refused", l2n, "INT16", l2_normalization("INT16")),
        Case(f"{l2n}.FLOAT32.relu_refused", l2n, "FLOAT32", l2_normalization(activation="RELU")),
        Case(
            f"{l2n}.FLOAT32.rank5_refused", l2n, "FLOAT32", l2_normalization(shape=(1, 2, 2, 2, 8))
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# EMBEDDING_LOOKUP, PRELU, CUMSUM


def embedding_lookup(
    value: str = "FLOAT32",
    output: str | None = None,
    *,
    rows: int = 10,
    columns: Sequence[int] = (8,),
    lookups: int = 3,
    lookup: str = "INT32",
    output_shape: Sequence[int] | None = None,
) -> Callable[[], bytes]:
    output = output or value

    def build() -> bytes:
        vq = None if value == "FLOAT32" else quantization(0.1, 0)
        oq = None if output == "FLOAT32" else quantization(0.1, 0)
        table = Const(np.ones((rows, *columns), NUMPY_TYPES[value]), value, vq)
        ids = In((lookups,), lookup, None)
        out = Out(tuple(output_shape or (lookups, *columns)), output, oq)
        return single_op(Op("EMBEDDING_LOOKUP", [ids, table], [out]))

    return build


def prelu(
    dtype: str = "FLOAT32",
    alpha: str | None = None,
    *,
    alpha_shape: Sequence[int] = (8,),
) -> Callable[[], bytes]:
    alpha = alpha or dtype

    def build() -> bytes:
        q = activation_quantization(dtype)
        aq = None if alpha == "FLOAT32" else quantization(0.05, 0)
        slope = Const(np.ones(tuple(alpha_shape), NUMPY_TYPES[alpha]), alpha, aq)
        shape = (1, 4, 4, 8)
        return single_op(Op("PRELU", [In(shape, dtype, q), slope], [Out(shape, dtype, q)]))

    return build


def cumsum(
    dtype: str = "FLOAT32",
    *,
    shape: Sequence[int] = (2, 8),
    axis: int = 1,
    axis_type: str = "INT32",
    exclusive: bool = False,
    reverse: bool = False,
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = activation_quantization(dtype)
        axis_tensor = Const(np.array([axis], NUMPY_TYPES[axis_type]), axis_type)
        options = {"exclusive": exclusive, "reverse": reverse}
        out = Out(tuple(shape), dtype, q)
        return single_op(
            Op("CUMSUM", [In(tuple(shape), dtype, q), axis_tensor], [out], options=options)
        )

    return build


def misc_cases() -> list[Case]:
    em, pr, cs = "EMBEDDING_LOOKUP", "PRELU", "CUMSUM"
    cases = [
        Case(f"{em}.FLOAT32.rank2", em, "FLOAT32", embedding_lookup(), scan_bytes=SCAN),
        Case(
            f"{em}.FLOAT32.rank3", em, "FLOAT32", embedding_lookup(columns=(2, 4)), scan_bytes=SCAN
        ),
        Case(f"{em}.INT8.rank2", em, "INT8", embedding_lookup("INT8"), scan_bytes=SCAN),
        Case(
            f"{em}.INT8.float_output",
            em,
            "INT8",
            embedding_lookup("INT8", "FLOAT32"),
            scan_bytes=SCAN,
        ),
        Case(
            f"{em}.INT8.float_output_rank3",
            em,
            "INT8",
            embedding_lookup("INT8", "FLOAT32", columns=(2, 4)),
            scan_bytes=SCAN,
        ),
        Case(
            f"{em}.FLOAT32.output_rank3",
            em,
            "FLOAT32",
            embedding_lookup(output_shape=(3, 8, 1)),
            scan_bytes=SCAN,
        ),
        Case(f"{em}.FLOAT32.int64_lookup_refused", em, "FLOAT32", embedding_lookup(lookup="INT64")),
        Case(f"{em}.INT16.refused", em, "INT16", embedding_lookup("INT16")),
        Case(
            f"{em}.FLOAT32.int8_output_refused", em, "FLOAT32", embedding_lookup("FLOAT32", "INT8")
        ),
    ]
    for dtype, alpha in (("FLOAT32", "FLOAT32"), ("INT8", "INT8"), ("INT16", "INT8")):
        cases += [
            Case(f"{pr}.{dtype}.alpha_channels", pr, dtype, prelu(dtype, alpha)),
            Case(
                f"{pr}.{dtype}.alpha_full", pr, dtype, prelu(dtype, alpha, alpha_shape=(1, 4, 4, 8))
            ),
        ]
    cases += [
        Case(f"{pr}.INT8.alpha_rank4", pr, "INT8", prelu("INT8", alpha_shape=(1, 1, 1, 8))),
        Case(f"{pr}.INT16.int16_alpha_refused", pr, "INT16", prelu("INT16", "INT16")),
        Case(f"{pr}.UINT8.invoke_refused", pr, "UINT8", prelu("UINT8")),
    ]
    cases += [
        Case(f"{cs}.FLOAT32.rank1", cs, "FLOAT32", cumsum(shape=(8,), axis=0)),
        Case(f"{cs}.FLOAT32.rank2", cs, "FLOAT32", cumsum()),
        Case(
            f"{cs}.FLOAT32.rank4_exclusive_reverse",
            cs,
            "FLOAT32",
            cumsum(shape=(1, 2, 3, 4), axis=2, exclusive=True, reverse=True),
        ),
        Case(f"{cs}.INT8.rank1", cs, "INT8", cumsum("INT8", shape=(8,), axis=0), scan_bytes=SCAN),
        Case(f"{cs}.INT8.rank2", cs, "INT8", cumsum("INT8"), scan_bytes=SCAN),
        Case(
            f"{cs}.INT8.rank4_reverse",
            cs,
            "INT8",
            cumsum("INT8", shape=(1, 2, 3, 4), axis=3, reverse=True),
            scan_bytes=SCAN,
        ),
        Case(f"{cs}.INT16.refused", cs, "INT16", cumsum("INT16")),
        Case(f"{cs}.FLOAT32.int64_axis_refused", cs, "FLOAT32", cumsum(axis_type="INT64")),
    ]
    return cases
