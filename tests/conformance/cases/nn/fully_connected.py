"""nn cases: FULLY_CONNECTED."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arenalens.tflite.builder import quantization
from tests.conformance.cases import Case
from tests.conformance.cases.nn.common import (
    SCAN,
    bias_const,
    default_bias_type,
    weights_const,
    weights_quantization,
)
from tests.conformance.models import OMITTED, Const, In, Op, Out, single_op

# ---------------------------------------------------------------------------------------------
# FULLY_CONNECTED


def fully_connected(
    dtype: str = "INT8",
    weights: str | None = None,
    *,
    units: int = 8,
    depth: int = 32,
    per_channel: int = 0,
    bias: str | None = "auto",  # a type, "auto", "omitted" (-1) or None (two inputs)
    input_shape: Sequence[int] | None = None,
    output_shape: Sequence[int] | None = None,
    options: dict[str, Any] | None = None,
    bias_scale: float | None = None,
) -> Callable[[], bytes]:
    weights = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")

    def build() -> bytes:
        wq = weights_quantization(weights, units, per_channel, 0)
        operands: list[Any] = [
            In(tuple(input_shape or (1, depth)), dtype),
            weights_const((units, depth), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = default_bias_type(dtype) if bias == "auto" else bias
            found = bias_const(units, kind, dtype, wq)
            if bias_scale is not None:
                found = Const(found.array, kind, quantization(bias_scale, 0))
            operands.append(found)
        out = Out(tuple(output_shape or (1, units)), dtype)
        return single_op(Op("FULLY_CONNECTED", operands, [out], options=options or {}))

    return build


def fc_cases() -> list[Case]:
    fc = "FULLY_CONNECTED"
    cases = [
        Case(f"{fc}.FLOAT32.bias", fc, "FLOAT32", fully_connected("FLOAT32")),
        Case(f"{fc}.FLOAT32.two_inputs", fc, "FLOAT32", fully_connected("FLOAT32", bias=None)),
        Case(
            f"{fc}.FLOAT32.bias_omitted", fc, "FLOAT32", fully_connected("FLOAT32", bias="omitted")
        ),
        Case(
            f"{fc}.FLOAT32.keep_num_dims",
            fc,
            "FLOAT32",
            fully_connected(
                "FLOAT32",
                input_shape=(2, 3, 32),
                output_shape=(2, 3, 8),
                options={"keep_num_dims": True},
            ),
        ),
        Case(f"{fc}.INT8.per_tensor", fc, "INT8", fully_connected()),
        Case(f"{fc}.INT8.per_tensor_two_inputs", fc, "INT8", fully_connected(bias=None)),
        Case(f"{fc}.INT8.per_tensor_bias_omitted", fc, "INT8", fully_connected(bias="omitted")),
        Case(
            f"{fc}.INT8.batch3",
            fc,
            "INT8",
            fully_connected(input_shape=(3, 32), output_shape=(3, 8)),
        ),
        Case(
            f"{fc}.INT8.rank3_flattened",
            fc,
            "INT8",
            fully_connected(input_shape=(2, 3, 32), output_shape=(6, 8)),
        ),
        Case(f"{fc}.INT8.int4_weights", fc, "INT8", fully_connected(weights="INT4")),
        Case(f"{fc}.INT16.bias_int64", fc, "INT16", fully_connected("INT16")),
        Case(f"{fc}.INT16.bias_int32", fc, "INT16", fully_connected("INT16", bias="INT32")),
        Case(f"{fc}.INT16.bias_omitted", fc, "INT16", fully_connected("INT16", bias="omitted")),
        Case(
            f"{fc}.FLOAT32.hybrid_refused",
            fc,
            "FLOAT32",
            fully_connected("FLOAT32", weights="INT8", bias=None),
        ),
        Case(
            f"{fc}.INT8.int16_weights_refused",
            fc,
            "INT8",
            fully_connected(weights="INT16", bias=None),
        ),
        Case(
            f"{fc}.INT16.int16_weights_refused",
            fc,
            "INT16",
            fully_connected("INT16", weights="INT16"),
        ),
        Case(
            f"{fc}.INT8.int4_per_channel_refused",
            fc,
            "INT8",
            fully_connected(weights="INT4", per_channel=8),
        ),
        Case(f"{fc}.INT8.bias_scale_refused", fc, "INT8", fully_connected(bias_scale=0.5)),
        Case(
            f"{fc}.INT8.weights_format_refused",
            fc,
            "INT8",
            fully_connected(options={"weights_format": 2}),
        ),
        Case(f"{fc}.UINT8.invoke_refused", fc, "UINT8", fully_connected("UINT8", weights="UINT8")),
    ]
    # Per-channel: two int32 arrays of C entries written over the kernel's live temps.
    for channels in (2, 3, 4, 5, 16, 33):
        cases.append(
            Case(
                f"{fc}.INT8.channels{channels}",
                fc,
                "INT8",
                fully_connected(units=channels, per_channel=channels),
                scan_bytes=SCAN,
            )
        )
    cases += [
        Case(
            f"{fc}.INT8.per_channel16_bias_omitted",
            fc,
            "INT8",
            fully_connected(units=16, per_channel=16, bias="omitted"),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT8.per_channel8_batch3",
            fc,
            "INT8",
            fully_connected(per_channel=8, input_shape=(3, 32), output_shape=(3, 8)),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT8.per_channel8_keep_num_dims",
            fc,
            "INT8",
            fully_connected(
                per_channel=8,
                input_shape=(2, 3, 32),
                output_shape=(2, 3, 8),
                options={"keep_num_dims": True},
            ),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT16.per_channel2",
            fc,
            "INT16",
            fully_connected("INT16", units=2, per_channel=2),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT16.per_channel8",
            fc,
            "INT16",
            fully_connected("INT16", per_channel=8),
            scan_bytes=SCAN,
        ),
    ]
    return cases
