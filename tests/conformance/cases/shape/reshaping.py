"""Shape cases: RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE, PACK, UNPACK, SPLIT, SPLIT_V,
CONCATENATION."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tests.conformance.cases import Case
from tests.conformance.cases.shape.common import (
    PC,
    PC_ODD,
    Q,
    data_input,
    data_output,
    i32,
    i64,
    one_operator,
    shape_case,
)
from tests.conformance.models import INT8_Q, INT16_Q, Const, In, Out, per_channel

# -- RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE --------------------------------------------------------

_ALL_TYPES = ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")


def reshape_cases() -> list[Case]:
    found = [
        shape_case(
            "RESHAPE",
            dtype,
            "shape_input",
            one_operator(
                "RESHAPE",
                [data_input((1, 64), dtype), Const(i32(2, 32), "INT32")],
                [data_output((2, 32), dtype)],
            ),
        )
        for dtype in _ALL_TYPES
    ]
    found += [
        shape_case(
            "RESHAPE",
            "INT8",
            "per_tensor",
            one_operator(
                "RESHAPE",
                [In((1, 64), "INT8"), Const(i32(4, 16), "INT32")],
                [Out((4, 16), "INT8")],
            ),
        ),
        shape_case(
            "RESHAPE",
            "INT8",
            "new_shape_option",
            one_operator(
                "RESHAPE",
                [data_input((1, 64), "INT8")],
                [data_output((2, 32), "INT8")],
                {"new_shape": [2, 32]},
            ),
        ),
        shape_case(
            "RESHAPE",
            "FLOAT32",
            "no_options",
            one_operator("RESHAPE", [In((1, 64))], [Out((8, 8))], options_type="NONE"),
        ),
        # A -1 output dim: a tail copy of the dims, and the head plans the resolved size.
        shape_case(
            "RESHAPE",
            "FLOAT32",
            "stretch_rank3",
            one_operator(
                "RESHAPE", [In((1, 64)), Const(i32(2, -1, 4), "INT32")], [Out((2, -1, 4))]
            ),
        ),
        shape_case(
            "RESHAPE",
            "INT8",
            "stretch_rank2",
            one_operator(
                "RESHAPE",
                [data_input((1, 64), "INT8"), Const(i32(-1, 32), "INT32")],
                [data_output((-1, 32), "INT8")],
            ),
        ),
        shape_case(
            "RESHAPE",
            "INT16",
            "stretch_option",
            one_operator(
                "RESHAPE",
                [data_input((4, 30), "INT16")],
                [data_output((-1, 8), "INT16")],
                {"new_shape": [-1, 8]},
            ),
        ),
        shape_case(
            "RESHAPE",
            "INT8",
            "refused_type_mismatch",
            one_operator(
                "RESHAPE", [In((1, 8), "INT8"), Const(i32(8), "INT32")], [Out((8,), "INT16")]
            ),
        ),
        shape_case(
            "RESHAPE",
            "INT8",
            "refused_count_mismatch",
            one_operator(
                "RESHAPE", [In((1, 8), "INT8"), Const(i32(6), "INT32")], [Out((6,), "INT8")]
            ),
        ),
        shape_case(
            "RESHAPE",
            "FLOAT32",
            "refused_two_stretch",
            one_operator("RESHAPE", [In((1, 64)), Const(i32(-1, -1), "INT32")], [Out((-1, -1))]),
        ),
        shape_case(
            "RESHAPE",
            "FLOAT32",
            "refused_nine_dims_option",
            one_operator("RESHAPE", [In((1, 8))], [Out((8,))], {"new_shape": [1] * 8 + [8]}),
        ),
    ]
    return found


def squeeze_cases() -> list[Case]:
    found = [
        shape_case(
            "SQUEEZE",
            dtype,
            "dims",
            one_operator(
                "SQUEEZE",
                [data_input((1, 64, 1), dtype)],
                [data_output((64, 1), dtype)],
                {"squeeze_dims": [0]},
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT64", "BOOL")
    ]
    found += [
        shape_case(
            "SQUEEZE",
            "FLOAT32",
            "no_options",
            one_operator("SQUEEZE", [In((1, 64, 1))], [Out((64,))], options_type="NONE"),
        ),
        shape_case(
            "SQUEEZE",
            "INT8",
            "negative_dim",
            one_operator(
                "SQUEEZE",
                [data_input((4, 1), "INT8")],
                [data_output((4,), "INT8")],
                {"squeeze_dims": [-1]},
            ),
        ),
        shape_case(
            "SQUEEZE",
            "FLOAT32",
            "refused_dim_not_one",
            one_operator("SQUEEZE", [In((2, 64))], [Out((64,))], {"squeeze_dims": [0]}),
        ),
    ]
    return found


def expand_dims_cases() -> list[Case]:
    found = [
        shape_case(
            "EXPAND_DIMS",
            dtype,
            "axis0",
            one_operator(
                "EXPAND_DIMS",
                [data_input((64,), dtype), Const(i32(0), "INT32")],
                [data_output((1, 64), dtype)],
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32")
    ]
    found += [
        shape_case(
            "EXPAND_DIMS",
            "FLOAT32",
            "axis_last",
            one_operator("EXPAND_DIMS", [In((4, 16)), Const(i32(-1), "INT32")], [Out((4, 16, 1))]),
        ),
        shape_case(
            "EXPAND_DIMS",
            "INT8",
            "quantized_axis",
            one_operator(
                "EXPAND_DIMS",
                [data_input((64,), "INT8"), Const(i32(0), "INT32", per_channel(16))],
                [data_output((1, 64), "INT8")],
            ),
        ),
        shape_case(
            "EXPAND_DIMS",
            "INT32",
            "invoke_refused",
            one_operator(
                "EXPAND_DIMS", [In((64,), "INT32"), Const(i32(0), "INT32")], [Out((1, 64), "INT32")]
            ),
        ),
        shape_case(
            "EXPAND_DIMS",
            "FLOAT32",
            "refused_runtime_axis",
            one_operator("EXPAND_DIMS", [In((64,)), In((1,), "INT32")], [Out((1, 64))]),
        ),
        shape_case(
            "EXPAND_DIMS",
            "FLOAT32",
            "refused_int64_axis",
            one_operator("EXPAND_DIMS", [In((64,)), Const(i64(0), "INT64")], [Out((1, 64))]),
        ),
    ]
    return found


def shape_cases() -> list[Case]:
    return [
        shape_case(
            "SHAPE",
            "FLOAT32",
            "int32",
            one_operator("SHAPE", [In((1, 2, 3))], [Out((3,), "INT32")], {"out_type": 2}),
        ),
        shape_case(
            "SHAPE",
            "INT8",
            "int32",
            one_operator(
                "SHAPE", [data_input((1, 64), "INT8")], [Out((2,), "INT32")], {"out_type": 2}
            ),
        ),
        shape_case(
            "SHAPE",
            "FLOAT32",
            "no_options",
            one_operator("SHAPE", [In((4, 4))], [Out((2,), "INT32")], options_type="NONE"),
        ),
        shape_case(
            "SHAPE",
            "FLOAT32",
            "invoke_refused_int64",
            one_operator("SHAPE", [In((1, 2, 3))], [Out((3,), "INT64")], {"out_type": 4}),
        ),
    ]


# -- PACK, UNPACK, SPLIT, SPLIT_V, CONCATENATION -------------------------------------------------


def pack_cases() -> list[Case]:
    found = [
        shape_case(
            "PACK",
            "INT8",
            f"inputs{count}",
            one_operator(
                "PACK",
                [data_input((1, 16), "INT8") for _ in range(count)],
                [data_output((count, 1, 16), "INT8")],
                {"values_count": count, "axis": 0},
            ),
        )
        for count in (2, 3, 8)
    ]
    found += [
        shape_case(
            "PACK",
            dtype,
            "inputs3",
            one_operator(
                "PACK",
                [data_input((1, 16), dtype) for _ in range(3)],
                [data_output((1, 16, 3), dtype)],
                {"values_count": 3, "axis": -1},
            ),
        )
        for dtype in ("INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    return found


def unpack_cases() -> list[Case]:
    found = [
        shape_case(
            "UNPACK",
            dtype,
            f"outputs{count}",
            one_operator(
                "UNPACK",
                [data_input((count, 16), dtype)],
                [data_output((16,), dtype) for _ in range(count)],
                {"num": count, "axis": 0},
            ),
        )
        for dtype, count in (("INT8", 2), ("INT8", 4), ("INT16", 3), ("FLOAT32", 3), ("INT32", 3))
    ]
    found += [
        shape_case(
            "UNPACK",
            dtype,
            "invoke_refused",
            one_operator(
                "UNPACK", [In((2, 8), dtype)], [Out((8,), dtype), Out((8,), dtype)], {"num": 2}
            ),
        )
        for dtype in ("INT64", "BOOL")
    ]
    return found


def split_cases() -> list[Case]:
    found = [
        shape_case(
            "SPLIT",
            dtype,
            f"outputs{count}",
            one_operator(
                "SPLIT",
                [Const(i32(0), "INT32"), data_input((count, 16), dtype)],
                [data_output((1, 16), dtype) for _ in range(count)],
                {"num_splits": count},
            ),
        )
        for dtype, count in (
            ("INT8", 2),
            ("INT8", 4),
            ("INT16", 2),
            ("FLOAT32", 2),
            ("INT32", 2),
            ("INT64", 2),
        )
    ]
    found += [
        shape_case(
            "SPLIT",
            "INT8",
            "quantized_axis_last",
            one_operator(
                "SPLIT",
                [Const(i32(-1), "INT32", per_channel(16)), data_input((4, 32), "INT8")],
                [data_output((4, 16), "INT8"), data_output((4, 16), "INT8")],
                {"num_splits": 2},
            ),
        ),
        shape_case(
            "SPLIT",
            "FLOAT32",
            "refused_runtime_axis",
            one_operator(
                "SPLIT",
                [In((1,), "INT32"), In((2, 16))],
                [Out((1, 16)), Out((1, 16))],
                {"num_splits": 2},
            ),
        ),
    ]
    return found


def split_v_cases() -> list[Case]:
    found = [
        shape_case(
            "SPLIT_V",
            dtype,
            "outputs2",
            one_operator(
                "SPLIT_V",
                [data_input((3, 16), dtype), Const(i32(1, 2), "INT32"), Const(i32(0), "INT32")],
                [data_output((1, 16), dtype), data_output((2, 16), dtype)],
                {"num_splits": 2},
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64")
    ]
    found += [
        shape_case(
            "SPLIT_V",
            "INT8",
            "quantized_constants",
            one_operator(
                "SPLIT_V",
                [
                    data_input((2, 24), "INT8"),
                    Const(i32(8, 8, 8), "INT32", per_channel(8)),
                    Const(i32(1), "INT32", per_channel(16)),
                ],
                [data_output((2, 8), "INT8") for _ in range(3)],
                {"num_splits": 3},
            ),
        ),
        shape_case(
            "SPLIT_V",
            "FLOAT32",
            "refused_runtime_axis",
            one_operator(
                "SPLIT_V",
                [In((3, 16)), Const(i32(1, 2), "INT32"), In((1,), "INT32")],
                [Out((1, 16)), Out((2, 16))],
                {"num_splits": 2},
            ),
        ),
    ]
    return found


def _concat(
    dtype: str, count: int, q: Q, *, shape: tuple[int, ...] = (1, 2), axis: int = 0, **kw: Any
) -> Callable[[], bytes]:
    out_shape = list(shape)
    out_shape[axis] *= count
    inputs: list[In | Const] = [In(shape, dtype, q) for _ in range(count)]
    for position, value in kw.pop("replace", {}).items():
        inputs[position] = value
    return one_operator(
        "CONCATENATION",
        inputs,
        [Out(tuple(out_shape), kw.pop("out_dtype", dtype), kw.pop("out_q", q))],
        {"axis": axis, **kw},
    )


def concatenation_cases() -> list[Case]:
    # Tiny per-tensor inputs: the n + 2 temp tensors (input 0 twice) set the minimal arena.
    found = [
        shape_case("CONCATENATION", "INT8", f"inputs{count}", _concat("INT8", count, INT8_Q))
        for count in (2, 3, 4, 5, 8, 10)
    ]
    found += [
        shape_case(
            "CONCATENATION", "INT8", f"per_channel_inputs{count}", _concat("INT8", count, PC)
        )
        for count in (2, 6)
    ]
    found += [
        shape_case("CONCATENATION", "INT8", "per_channel_odd_inputs3", _concat("INT8", 3, PC_ODD)),
        shape_case("CONCATENATION", "INT16", "inputs3", _concat("INT16", 3, INT16_Q)),
        shape_case("CONCATENATION", "FLOAT32", "inputs2", _concat("FLOAT32", 2, None)),
        shape_case(
            "CONCATENATION",
            "FLOAT32",
            "inputs4_4x4x3",
            _concat("FLOAT32", 4, None, shape=(4, 4, 3), axis=2),
        ),
        shape_case("CONCATENATION", "INT32", "inputs3", _concat("INT32", 3, None)),
        shape_case("CONCATENATION", "INT64", "inputs2", _concat("INT64", 2, None)),
        shape_case("CONCATENATION", "BOOL", "inputs2", _concat("BOOL", 2, None)),
        shape_case(
            "CONCATENATION", "INT8", "negative_axis", _concat("INT8", 2, PC, shape=(2, 3), axis=-1)
        ),
        shape_case(
            "CONCATENATION",
            "INT8",
            "constant_input",
            _concat(
                "INT8",
                3,
                PC,
                shape=(1, 4),
                replace={1: Const(np.zeros((1, 4), np.int8), "INT8", PC)},
            ),
        ),
        shape_case(
            "CONCATENATION",
            "FLOAT32",
            "rank6",
            _concat("FLOAT32", 2, None, shape=(1, 1, 1, 1, 2, 2)),
        ),
        shape_case("CONCATENATION", "FLOAT32", "refused_inputs11", _concat("FLOAT32", 11, None)),
        shape_case("CONCATENATION", "UINT8", "refused_type", _concat("UINT8", 2, "default")),
        shape_case(
            "CONCATENATION",
            "FLOAT32",
            "refused_relu",
            _concat("FLOAT32", 2, None, fused_activation_function="RELU"),
        ),
        shape_case(
            "CONCATENATION",
            "FLOAT32",
            "refused_mixed_types",
            _concat("FLOAT32", 2, None, replace={1: In((1, 2), "INT32")}),
        ),
        shape_case(
            "CONCATENATION",
            "INT8",
            "refused_scale_mismatch",
            _concat("INT8", 2, INT8_Q, replace={1: In((1, 2), "INT8", per_channel(1))}),
        ),
        shape_case(
            "CONCATENATION",
            "INT16",
            "refused_zero_point",
            _concat(
                "INT16", 2, INT16_Q, replace={1: In((1, 2), "INT16", per_channel(1, zero_point=3))}
            ),
        ),
        shape_case(
            "CONCATENATION",
            "FLOAT32",
            "refused_rank7",
            _concat("FLOAT32", 2, None, shape=(1, 1, 1, 1, 1, 2, 2)),
        ),
    ]
    return found
