"""Shape cases: SLICE, STRIDED_SLICE, GATHER, GATHER_ND, DYNAMIC_UPDATE_SLICE, TRANSPOSE,
REVERSE_V2, BROADCAST_ARGS, BROADCAST_TO."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arenalens.tflite.builder import QuantizationSpec
from tests.conformance.cases import Case
from tests.conformance.cases.shape.common import (
    data_input,
    data_output,
    data_quantization,
    i32,
    i64,
    one_operator,
    shape_case,
)
from tests.conformance.models import Const, In, Out, per_channel

# -- SLICE, STRIDED_SLICE, GATHER, GATHER_ND, DYNAMIC_UPDATE_SLICE -------------------------------


def slice_cases() -> list[Case]:
    found = [
        shape_case(
            "SLICE",
            dtype,
            "int32_begin",
            one_operator(
                "SLICE",
                [data_input((4, 16), dtype), Const(i32(1, 0), "INT32"), Const(i32(2, 16), "INT32")],
                [data_output((2, 16), dtype)],
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "BOOL", "INT64")
    ]
    found += [
        shape_case(
            "SLICE",
            "INT8",
            "int64_begin",
            one_operator(
                "SLICE",
                [
                    data_input((4, 16), "INT8"),
                    Const(i64(1, 0), "INT64"),
                    Const(i64(2, 16), "INT64"),
                ],
                [data_output((2, 16), "INT8")],
            ),
        ),
        shape_case(
            "SLICE",
            "INT8",
            "quantized_begin",
            one_operator(
                "SLICE",
                [
                    data_input((4, 16), "INT8"),
                    Const(i32(1, 0), "INT32", per_channel(8)),
                    Const(i32(2, 16), "INT32", per_channel(8)),
                ],
                [data_output((2, 16), "INT8")],
            ),
        ),
        shape_case(
            "SLICE",
            "FLOAT32",
            "runtime_begin",
            one_operator(
                "SLICE", [In((4, 16)), In((2,), "INT32"), In((2,), "INT32")], [Out((2, 16))]
            ),
        ),
    ]
    return found


def _strided(
    dtype: str,
    source: tuple[int, ...],
    bounds: tuple[Sequence[int], Sequence[int], Sequence[int]],
    result: tuple[int, ...],
    **options: int,
) -> Callable[[], bytes]:
    """STRIDED_SLICE with constant (begin, end, strides) bounds."""
    begin, end, strides = bounds
    quantized = data_quantization(dtype)
    return one_operator(
        "STRIDED_SLICE",
        [
            In(source, dtype, quantized),
            Const(i32(*begin), "INT32", per_channel(4) if options.pop("quantized", 0) else None),
            Const(i32(*end), "INT32"),
            Const(i32(*strides), "INT32"),
        ],
        [Out(result, dtype, quantized)],
        options,
    )


def strided_slice_cases() -> list[Case]:
    found = [
        shape_case(
            "STRIDED_SLICE",
            dtype,
            "rank2",
            _strided(dtype, (4, 16), ((1, 0), (3, 16), (1, 2)), (2, 8)),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "BOOL", "INT64")
    ]
    found += [
        shape_case(
            "STRIDED_SLICE",
            "INT8",
            "rank4_masks",
            _strided(
                "INT8",
                (1, 4, 4, 8),
                ((0, 1, 0, 2), (0, 3, 0, 6), (1, 1, 2, 1)),
                (1, 2, 2, 4),
                begin_mask=5,
                end_mask=5,
            ),
        ),
        shape_case(
            "STRIDED_SLICE",
            "FLOAT32",
            "shrink",
            _strided("FLOAT32", (4, 16), ((2, 0), (3, 16), (1, 1)), (16,), shrink_axis_mask=1),
        ),
        shape_case(
            "STRIDED_SLICE",
            "INT8",
            "rank1_quantized_begin",
            _strided("INT8", (64,), ((-8,), (64,), (1,)), (8,), quantized=1),
        ),
        shape_case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_rank5",
            _strided(
                "FLOAT32", (1, 1, 1, 2, 4), ((0,) * 5, (1, 1, 1, 2, 4), (1,) * 5), (1, 1, 1, 2, 4)
            ),
        ),
        shape_case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_output_shape",
            _strided("FLOAT32", (4, 16), ((1, 0), (3, 16), (1, 1)), (1, 16)),
        ),
        shape_case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_runtime_begin",
            one_operator(
                "STRIDED_SLICE",
                [
                    In((4, 16)),
                    In((2,), "INT32"),
                    Const(i32(3, 16), "INT32"),
                    Const(i32(1, 1), "INT32"),
                ],
                [Out((2, 16))],
            ),
        ),
    ]
    return found


def _gather(
    dtype: str,
    source: tuple[int, ...],
    positions: In | Const,
    result: tuple[int, ...],
    **options: int,
) -> Callable[[], bytes]:
    return one_operator(
        "GATHER", [data_input(source, dtype), positions], [data_output(result, dtype)], options
    )


def gather_cases() -> list[Case]:
    return [
        shape_case(
            "GATHER",
            "INT8",
            "axis0",
            _gather("INT8", (8, 16), Const(i32(1, 3, 5), "INT32"), (3, 16)),
        ),
        shape_case(
            "GATHER",
            "FLOAT32",
            "axis0",
            _gather("FLOAT32", (8, 16), Const(i32(1, 3, 5), "INT32"), (3, 16)),
        ),
        shape_case(
            "GATHER",
            "INT8",
            "axis1_rank3_output",
            _gather(
                "INT8",
                (4, 8, 6),
                Const(np.array([[1, 2], [3, 4]], np.int32), "INT32"),
                (4, 2, 2, 6),
                axis=1,
            ),
        ),
        shape_case(
            "GATHER",
            "FLOAT32",
            "axis_last_runtime_positions",
            _gather("FLOAT32", (4, 8), In((3,), "INT32"), (4, 3), axis=-1),
        ),
        shape_case(
            "GATHER",
            "INT8",
            "batch_dims1",
            _gather(
                "INT8",
                (2, 8, 4),
                Const(np.array([[1, 2, 3], [0, 1, 2]], np.int32), "INT32"),
                (2, 3, 4),
                axis=1,
                batch_dims=1,
            ),
        ),
        shape_case(
            "GATHER",
            "FLOAT32",
            "scalar_position",
            _gather("FLOAT32", (8, 16), Const(np.array(2, np.int32), "INT32"), (16,)),
        ),
        shape_case(
            "GATHER",
            "INT16",
            "refused_type",
            _gather("INT16", (8, 4), Const(i32(1), "INT32"), (1, 4)),
        ),
        shape_case(
            "GATHER",
            "INT32",
            "refused_type",
            _gather("INT32", (8, 4), Const(i32(1), "INT32"), (1, 4)),
        ),
        shape_case(
            "GATHER",
            "FLOAT32",
            "refused_int64_positions",
            _gather("FLOAT32", (8, 4), Const(i64(1), "INT64"), (1, 4)),
        ),
    ]


def gather_nd_cases() -> list[Case]:
    def build(
        dtype: str,
        source: tuple[int, ...],
        indices: np.ndarray,
        result: tuple[int, ...],
        index_type: str = "INT32",
    ) -> Callable[[], bytes]:
        return one_operator(
            "GATHER_ND",
            [data_input(source, dtype), Const(indices, index_type)],
            [data_output(result, dtype)],
        )

    pairs = np.array([[0, 1], [2, 3]], np.int32)
    return [
        shape_case(
            "GATHER_ND",
            "INT8",
            "depth1",
            build("INT8", (4, 16), np.array([[1], [3]], np.int32), (2, 16)),
        ),
        shape_case(
            "GATHER_ND",
            "FLOAT32",
            "depth1",
            build("FLOAT32", (4, 16), np.array([[1], [3]], np.int32), (2, 16)),
        ),
        shape_case("GATHER_ND", "INT8", "depth2", build("INT8", (4, 4, 8), pairs, (2, 8))),
        shape_case("GATHER_ND", "FLOAT32", "full_index", build("FLOAT32", (4, 4), pairs, (2,))),
        shape_case("GATHER_ND", "INT16", "refused_type", build("INT16", (4, 4), pairs, (2,))),
        shape_case(
            "GATHER_ND",
            "FLOAT32",
            "refused_int64_indices",
            build("FLOAT32", (4, 4), pairs.astype(np.int64), (2,), "INT64"),
        ),
        shape_case(
            "GATHER_ND",
            "FLOAT32",
            "refused_depth",
            build("FLOAT32", (4, 4), np.array([[0, 1, 2]], np.int32), (1,)),
        ),
    ]


def dynamic_update_slice_cases() -> list[Case]:
    def build(dtype: str, start: In | Const) -> Callable[[], bytes]:
        return one_operator(
            "DYNAMIC_UPDATE_SLICE",
            [data_input((4, 16), dtype), data_input((2, 8), dtype), start],
            [data_output((4, 16), dtype)],
        )

    found = [
        shape_case("DYNAMIC_UPDATE_SLICE", dtype, "int32_start", build(dtype, In((2,), "INT32")))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    found += [
        shape_case("DYNAMIC_UPDATE_SLICE", "INT8", "int64_start", build("INT8", In((2,), "INT64"))),
        shape_case(
            "DYNAMIC_UPDATE_SLICE",
            "FLOAT32",
            "constant_start",
            build("FLOAT32", Const(i32(1, 4), "INT32")),
        ),
        shape_case(
            "DYNAMIC_UPDATE_SLICE",
            "FLOAT32",
            "refused_int16_start",
            build("FLOAT32", In((2,), "INT16")),
        ),
    ]
    return found


# -- TRANSPOSE, REVERSE_V2, BROADCAST_ARGS, BROADCAST_TO -----------------------------------------


def transpose_cases() -> list[Case]:
    def build(
        dtype: str, source: tuple[int, ...], permutation: Sequence[int], constant: bool = True
    ) -> Callable[[], bytes]:
        result = tuple(source[axis] for axis in permutation)
        perm: In | Const = (
            Const(i32(*permutation), "INT32") if constant else In((len(source),), "INT32")
        )
        return one_operator(
            "TRANSPOSE", [data_input(source, dtype), perm], [data_output(result, dtype)]
        )

    return [
        shape_case("TRANSPOSE", "INT8", "rank2", build("INT8", (8, 16), (1, 0))),
        shape_case("TRANSPOSE", "INT16", "rank4", build("INT16", (1, 4, 6, 8), (0, 3, 1, 2))),
        shape_case("TRANSPOSE", "FLOAT32", "rank4", build("FLOAT32", (1, 4, 6, 8), (0, 2, 3, 1))),
        shape_case("TRANSPOSE", "INT8", "rank5", build("INT8", (1, 2, 3, 4, 5), (4, 3, 2, 1, 0))),
        shape_case("TRANSPOSE", "INT32", "invoke_refused", build("INT32", (8, 16), (1, 0))),
        shape_case(
            "TRANSPOSE",
            "FLOAT32",
            "refused_runtime_perm",
            build("FLOAT32", (8, 16), (1, 0), constant=False),
        ),
        shape_case(
            "TRANSPOSE",
            "FLOAT32",
            "refused_rank6",
            build("FLOAT32", (1, 1, 2, 2, 2, 2), (5, 4, 3, 2, 1, 0)),
        ),
    ]


def reverse_cases() -> list[Case]:
    def build(
        dtype: str, axes: In | Const, source: tuple[int, ...] = (4, 6, 8)
    ) -> Callable[[], bytes]:
        return one_operator(
            "REVERSE_V2", [data_input(source, dtype), axes], [data_output(source, dtype)]
        )

    found = [
        shape_case("REVERSE_V2", dtype, "axis1", build(dtype, Const(i32(1), "INT32")))
        for dtype in ("INT8", "UINT8", "INT16", "INT32", "INT64", "FLOAT32", "BOOL")
    ]
    found += [
        shape_case(
            "REVERSE_V2", "INT8", "axes_contiguous", build("INT8", Const(i32(1, 2), "INT32"))
        ),
        shape_case(
            "REVERSE_V2",
            "FLOAT32",
            "invoke_refused_gap",
            build("FLOAT32", Const(i32(0, 2), "INT32")),
        ),
        shape_case("REVERSE_V2", "FLOAT32", "runtime_axis", build("FLOAT32", In((1,), "INT32"))),
        shape_case(
            "REVERSE_V2", "FLOAT16", "refused_type", build("FLOAT16", Const(i32(1), "INT32"))
        ),
        shape_case(
            "REVERSE_V2", "FLOAT32", "refused_int64_axis", build("FLOAT32", Const(i64(1), "INT64"))
        ),
    ]
    return found


def broadcast_args_cases() -> list[Case]:
    def build(
        dtype: str, constant: bool, q: QuantizationSpec | None = None, other: str | None = None
    ) -> Callable[[], bytes]:
        numpy_type = {"INT32": np.int32, "INT64": np.int64, "FLOAT32": np.float32}[dtype]
        first: In | Const = (
            Const(np.array([1, 4, 1], numpy_type), dtype, q) if constant else In((3,), dtype, q)
        )
        second_type = other or dtype
        second: In | Const = (
            Const(
                np.array(
                    [3, 1, 5],
                    {"INT32": np.int32, "INT64": np.int64, "FLOAT32": np.float32}[second_type],
                ),
                second_type,
                q,
            )
            if constant
            else In((3,), second_type, q)
        )
        return one_operator("BROADCAST_ARGS", [first, second], [Out((3,), dtype, q)])

    return [
        shape_case("BROADCAST_ARGS", "INT32", "constants", build("INT32", True)),
        shape_case("BROADCAST_ARGS", "INT64", "constants", build("INT64", True)),
        shape_case("BROADCAST_ARGS", "INT32", "runtime", build("INT32", False)),
        shape_case("BROADCAST_ARGS", "INT64", "runtime", build("INT64", False)),
        shape_case("BROADCAST_ARGS", "INT32", "quantized", build("INT32", True, per_channel(8))),
        shape_case("BROADCAST_ARGS", "FLOAT32", "refused_type", build("FLOAT32", True)),
        shape_case("BROADCAST_ARGS", "INT32", "refused_mixed", build("INT32", True, other="INT64")),
    ]


def broadcast_to_cases() -> list[Case]:
    def build(
        dtype: str,
        shape_type: str = "INT32",
        constant_input: bool = False,
        target: tuple[int, ...] = (4, 3, 16),
        source: tuple[int, ...] = (3, 1),
    ) -> Callable[[], bytes]:
        values = np.array(target, np.int64 if shape_type == "INT64" else np.int32)
        data: In | Const = (
            Const(np.zeros(source, np.float32), "FLOAT32")
            if constant_input
            else data_input(source, dtype)
        )
        return one_operator(
            "BROADCAST_TO",
            [data, Const(values, shape_type)],
            [data_output(target, dtype)],
        )

    found = [
        shape_case("BROADCAST_TO", dtype, "int32_shape", build(dtype))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL", "UINT8")
    ]
    found += [
        shape_case("BROADCAST_TO", "INT8", "int64_shape", build("INT8", "INT64")),
        shape_case(
            "BROADCAST_TO", "FLOAT32", "constant_input", build("FLOAT32", constant_input=True)
        ),
        shape_case(
            "BROADCAST_TO",
            "FLOAT32",
            "refused_rank6",
            build("FLOAT32", target=(1, 1, 2, 2, 3, 1), source=(3, 1)),
        ),
        shape_case(
            "BROADCAST_TO",
            "FLOAT32",
            "refused_runtime_shape",
            one_operator("BROADCAST_TO", [In((3, 1)), In((3,), "INT32")], [Out((4, 3, 16))]),
        ),
    ]
    return found
