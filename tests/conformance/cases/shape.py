"""Cases for the shape family: reshaping, joining, splitting, slicing, gathering, padding, layout
and resizing kernels, control flow and resource variables (kernels/shape.py, slicing.py,
layout.py, control_flow.py, variables.py).

Every kernel gets each type it accepts and one it refuses (at setup, or only at Invoke), and the
options and shapes that change its memory. int8 operands are mostly quantized per channel
(`PC`, 32 scales): each temp TfLiteTensor then carries a 140-byte zero-point copy, so the Prepare
temp phase sets the minimal arena and a missing or extra temp tensor shows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, SubgraphBuilder
from tests.conformance.cases import Case
from tests.conformance.models import INT8_Q, INT16_Q, Const, In, Op, Out, per_channel, single_op

PC = per_channel(32)
PC_ODD = per_channel(33)
Q = QuantizationSpec | str | None

# The quantization each type's data operands get: int8 per channel, int16 symmetric.
_DATA_Q: dict[str, Q] = {"INT8": PC, "INT16": INT16_Q, "UINT8": "default"}


def _q(dtype: str) -> Q:
    return _DATA_Q.get(dtype)


def i32(*values: int) -> np.ndarray:
    return np.array(values, np.int32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _one(
    opcode: str,
    inputs: Sequence[In | Const | None],
    outputs: Sequence[Out],
    options: dict[str, Any] | None = None,
    options_type: str | None = None,
) -> Callable[[], bytes]:
    op = Op(opcode, inputs, outputs, options=options or {}, options_type=options_type)
    return lambda: single_op(op)


def _case(
    opcode: str, dtype: str, variant: str, build: Callable[[], bytes], note: str = ""
) -> Case:
    return Case(f"{opcode}.{dtype}.{variant}", opcode, dtype, build, note)


def _data(shape: Sequence[int], dtype: str) -> In:
    return In(shape, dtype, _q(dtype))


def _out(shape: Sequence[int], dtype: str) -> Out:
    return Out(shape, dtype, _q(dtype))


# -- RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE --------------------------------------------------------

_ALL_TYPES = ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")


def _reshape_cases() -> list[Case]:
    found = [
        _case(
            "RESHAPE",
            dtype,
            "shape_input",
            _one(
                "RESHAPE",
                [_data((1, 64), dtype), Const(i32(2, 32), "INT32")],
                [_out((2, 32), dtype)],
            ),
        )
        for dtype in _ALL_TYPES
    ]
    found += [
        _case(
            "RESHAPE",
            "INT8",
            "per_tensor",
            _one(
                "RESHAPE",
                [In((1, 64), "INT8"), Const(i32(4, 16), "INT32")],
                [Out((4, 16), "INT8")],
            ),
        ),
        _case(
            "RESHAPE",
            "INT8",
            "new_shape_option",
            _one(
                "RESHAPE", [_data((1, 64), "INT8")], [_out((2, 32), "INT8")], {"new_shape": [2, 32]}
            ),
        ),
        _case(
            "RESHAPE",
            "FLOAT32",
            "no_options",
            _one("RESHAPE", [In((1, 64))], [Out((8, 8))], options_type="NONE"),
        ),
        # A -1 output dim: a tail copy of the dims, and the head plans the resolved size.
        _case(
            "RESHAPE",
            "FLOAT32",
            "stretch_rank3",
            _one("RESHAPE", [In((1, 64)), Const(i32(2, -1, 4), "INT32")], [Out((2, -1, 4))]),
        ),
        _case(
            "RESHAPE",
            "INT8",
            "stretch_rank2",
            _one(
                "RESHAPE",
                [_data((1, 64), "INT8"), Const(i32(-1, 32), "INT32")],
                [_out((-1, 32), "INT8")],
            ),
        ),
        _case(
            "RESHAPE",
            "INT16",
            "stretch_option",
            _one(
                "RESHAPE",
                [_data((4, 30), "INT16")],
                [_out((-1, 8), "INT16")],
                {"new_shape": [-1, 8]},
            ),
        ),
        _case(
            "RESHAPE",
            "INT8",
            "refused_type_mismatch",
            _one("RESHAPE", [In((1, 8), "INT8"), Const(i32(8), "INT32")], [Out((8,), "INT16")]),
        ),
        _case(
            "RESHAPE",
            "INT8",
            "refused_count_mismatch",
            _one("RESHAPE", [In((1, 8), "INT8"), Const(i32(6), "INT32")], [Out((6,), "INT8")]),
        ),
        _case(
            "RESHAPE",
            "FLOAT32",
            "refused_two_stretch",
            _one("RESHAPE", [In((1, 64)), Const(i32(-1, -1), "INT32")], [Out((-1, -1))]),
        ),
        _case(
            "RESHAPE",
            "FLOAT32",
            "refused_nine_dims_option",
            _one("RESHAPE", [In((1, 8))], [Out((8,))], {"new_shape": [1] * 8 + [8]}),
        ),
    ]
    return found


def _squeeze_cases() -> list[Case]:
    found = [
        _case(
            "SQUEEZE",
            dtype,
            "dims",
            _one(
                "SQUEEZE", [_data((1, 64, 1), dtype)], [_out((64, 1), dtype)], {"squeeze_dims": [0]}
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT64", "BOOL")
    ]
    found += [
        _case(
            "SQUEEZE",
            "FLOAT32",
            "no_options",
            _one("SQUEEZE", [In((1, 64, 1))], [Out((64,))], options_type="NONE"),
        ),
        _case(
            "SQUEEZE",
            "INT8",
            "negative_dim",
            _one("SQUEEZE", [_data((4, 1), "INT8")], [_out((4,), "INT8")], {"squeeze_dims": [-1]}),
        ),
        _case(
            "SQUEEZE",
            "FLOAT32",
            "refused_dim_not_one",
            _one("SQUEEZE", [In((2, 64))], [Out((64,))], {"squeeze_dims": [0]}),
        ),
    ]
    return found


def _expand_dims_cases() -> list[Case]:
    found = [
        _case(
            "EXPAND_DIMS",
            dtype,
            "axis0",
            _one(
                "EXPAND_DIMS", [_data((64,), dtype), Const(i32(0), "INT32")], [_out((1, 64), dtype)]
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32")
    ]
    found += [
        _case(
            "EXPAND_DIMS",
            "FLOAT32",
            "axis_last",
            _one("EXPAND_DIMS", [In((4, 16)), Const(i32(-1), "INT32")], [Out((4, 16, 1))]),
        ),
        _case(
            "EXPAND_DIMS",
            "INT8",
            "quantized_axis",
            _one(
                "EXPAND_DIMS",
                [_data((64,), "INT8"), Const(i32(0), "INT32", per_channel(16))],
                [_out((1, 64), "INT8")],
            ),
        ),
        _case(
            "EXPAND_DIMS",
            "INT32",
            "invoke_refused",
            _one(
                "EXPAND_DIMS", [In((64,), "INT32"), Const(i32(0), "INT32")], [Out((1, 64), "INT32")]
            ),
        ),
        _case(
            "EXPAND_DIMS",
            "FLOAT32",
            "refused_runtime_axis",
            _one("EXPAND_DIMS", [In((64,)), In((1,), "INT32")], [Out((1, 64))]),
        ),
        _case(
            "EXPAND_DIMS",
            "FLOAT32",
            "refused_int64_axis",
            _one("EXPAND_DIMS", [In((64,)), Const(i64(0), "INT64")], [Out((1, 64))]),
        ),
    ]
    return found


def _shape_cases() -> list[Case]:
    return [
        _case(
            "SHAPE",
            "FLOAT32",
            "int32",
            _one("SHAPE", [In((1, 2, 3))], [Out((3,), "INT32")], {"out_type": 2}),
        ),
        _case(
            "SHAPE",
            "INT8",
            "int32",
            _one("SHAPE", [_data((1, 64), "INT8")], [Out((2,), "INT32")], {"out_type": 2}),
        ),
        _case(
            "SHAPE",
            "FLOAT32",
            "no_options",
            _one("SHAPE", [In((4, 4))], [Out((2,), "INT32")], options_type="NONE"),
        ),
        _case(
            "SHAPE",
            "FLOAT32",
            "invoke_refused_int64",
            _one("SHAPE", [In((1, 2, 3))], [Out((3,), "INT64")], {"out_type": 4}),
        ),
    ]


# -- PACK, UNPACK, SPLIT, SPLIT_V, CONCATENATION -------------------------------------------------


def _pack_cases() -> list[Case]:
    found = [
        _case(
            "PACK",
            "INT8",
            f"inputs{count}",
            _one(
                "PACK",
                [_data((1, 16), "INT8") for _ in range(count)],
                [_out((count, 1, 16), "INT8")],
                {"values_count": count, "axis": 0},
            ),
        )
        for count in (2, 3, 8)
    ]
    found += [
        _case(
            "PACK",
            dtype,
            "inputs3",
            _one(
                "PACK",
                [_data((1, 16), dtype) for _ in range(3)],
                [_out((1, 16, 3), dtype)],
                {"values_count": 3, "axis": -1},
            ),
        )
        for dtype in ("INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    return found


def _unpack_cases() -> list[Case]:
    found = [
        _case(
            "UNPACK",
            dtype,
            f"outputs{count}",
            _one(
                "UNPACK",
                [_data((count, 16), dtype)],
                [_out((16,), dtype) for _ in range(count)],
                {"num": count, "axis": 0},
            ),
        )
        for dtype, count in (("INT8", 2), ("INT8", 4), ("INT16", 3), ("FLOAT32", 3), ("INT32", 3))
    ]
    found += [
        _case(
            "UNPACK",
            dtype,
            "invoke_refused",
            _one("UNPACK", [In((2, 8), dtype)], [Out((8,), dtype), Out((8,), dtype)], {"num": 2}),
        )
        for dtype in ("INT64", "BOOL")
    ]
    return found


def _split_cases() -> list[Case]:
    found = [
        _case(
            "SPLIT",
            dtype,
            f"outputs{count}",
            _one(
                "SPLIT",
                [Const(i32(0), "INT32"), _data((count, 16), dtype)],
                [_out((1, 16), dtype) for _ in range(count)],
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
        _case(
            "SPLIT",
            "INT8",
            "quantized_axis_last",
            _one(
                "SPLIT",
                [Const(i32(-1), "INT32", per_channel(16)), _data((4, 32), "INT8")],
                [_out((4, 16), "INT8"), _out((4, 16), "INT8")],
                {"num_splits": 2},
            ),
        ),
        _case(
            "SPLIT",
            "FLOAT32",
            "refused_runtime_axis",
            _one(
                "SPLIT",
                [In((1,), "INT32"), In((2, 16))],
                [Out((1, 16)), Out((1, 16))],
                {"num_splits": 2},
            ),
        ),
    ]
    return found


def _split_v_cases() -> list[Case]:
    found = [
        _case(
            "SPLIT_V",
            dtype,
            "outputs2",
            _one(
                "SPLIT_V",
                [_data((3, 16), dtype), Const(i32(1, 2), "INT32"), Const(i32(0), "INT32")],
                [_out((1, 16), dtype), _out((2, 16), dtype)],
                {"num_splits": 2},
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64")
    ]
    found += [
        _case(
            "SPLIT_V",
            "INT8",
            "quantized_constants",
            _one(
                "SPLIT_V",
                [
                    _data((2, 24), "INT8"),
                    Const(i32(8, 8, 8), "INT32", per_channel(8)),
                    Const(i32(1), "INT32", per_channel(16)),
                ],
                [_out((2, 8), "INT8") for _ in range(3)],
                {"num_splits": 3},
            ),
        ),
        _case(
            "SPLIT_V",
            "FLOAT32",
            "refused_runtime_axis",
            _one(
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
    return _one(
        "CONCATENATION",
        inputs,
        [Out(tuple(out_shape), kw.pop("out_dtype", dtype), kw.pop("out_q", q))],
        {"axis": axis, **kw},
    )


def _concatenation_cases() -> list[Case]:
    # Tiny per-tensor inputs: the n + 2 temp tensors (input 0 twice) set the minimal arena.
    found = [
        _case("CONCATENATION", "INT8", f"inputs{count}", _concat("INT8", count, INT8_Q))
        for count in (2, 3, 4, 5, 8, 10)
    ]
    found += [
        _case("CONCATENATION", "INT8", f"per_channel_inputs{count}", _concat("INT8", count, PC))
        for count in (2, 6)
    ]
    found += [
        _case("CONCATENATION", "INT8", "per_channel_odd_inputs3", _concat("INT8", 3, PC_ODD)),
        _case("CONCATENATION", "INT16", "inputs3", _concat("INT16", 3, INT16_Q)),
        _case("CONCATENATION", "FLOAT32", "inputs2", _concat("FLOAT32", 2, None)),
        _case(
            "CONCATENATION",
            "FLOAT32",
            "inputs4_4x4x3",
            _concat("FLOAT32", 4, None, shape=(4, 4, 3), axis=2),
        ),
        _case("CONCATENATION", "INT32", "inputs3", _concat("INT32", 3, None)),
        _case("CONCATENATION", "INT64", "inputs2", _concat("INT64", 2, None)),
        _case("CONCATENATION", "BOOL", "inputs2", _concat("BOOL", 2, None)),
        _case(
            "CONCATENATION", "INT8", "negative_axis", _concat("INT8", 2, PC, shape=(2, 3), axis=-1)
        ),
        _case(
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
        _case(
            "CONCATENATION",
            "FLOAT32",
            "rank6",
            _concat("FLOAT32", 2, None, shape=(1, 1, 1, 1, 2, 2)),
        ),
        _case("CONCATENATION", "FLOAT32", "refused_inputs11", _concat("FLOAT32", 11, None)),
        _case("CONCATENATION", "UINT8", "refused_type", _concat("UINT8", 2, "default")),
        _case(
            "CONCATENATION",
            "FLOAT32",
            "refused_relu",
            _concat("FLOAT32", 2, None, fused_activation_function="RELU"),
        ),
        _case(
            "CONCATENATION",
            "FLOAT32",
            "refused_mixed_types",
            _concat("FLOAT32", 2, None, replace={1: In((1, 2), "INT32")}),
        ),
        _case(
            "CONCATENATION",
            "INT8",
            "refused_scale_mismatch",
            _concat("INT8", 2, INT8_Q, replace={1: In((1, 2), "INT8", per_channel(1))}),
        ),
        _case(
            "CONCATENATION",
            "INT16",
            "refused_zero_point",
            _concat(
                "INT16", 2, INT16_Q, replace={1: In((1, 2), "INT16", per_channel(1, zero_point=3))}
            ),
        ),
        _case(
            "CONCATENATION",
            "FLOAT32",
            "refused_rank7",
            _concat("FLOAT32", 2, None, shape=(1, 1, 1, 1, 1, 2, 2)),
        ),
    ]
    return found


# -- SLICE, STRIDED_SLICE, GATHER, GATHER_ND, DYNAMIC_UPDATE_SLICE -------------------------------


def _slice_cases() -> list[Case]:
    found = [
        _case(
            "SLICE",
            dtype,
            "int32_begin",
            _one(
                "SLICE",
                [_data((4, 16), dtype), Const(i32(1, 0), "INT32"), Const(i32(2, 16), "INT32")],
                [_out((2, 16), dtype)],
            ),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "BOOL", "INT64")
    ]
    found += [
        _case(
            "SLICE",
            "INT8",
            "int64_begin",
            _one(
                "SLICE",
                [_data((4, 16), "INT8"), Const(i64(1, 0), "INT64"), Const(i64(2, 16), "INT64")],
                [_out((2, 16), "INT8")],
            ),
        ),
        _case(
            "SLICE",
            "INT8",
            "quantized_begin",
            _one(
                "SLICE",
                [
                    _data((4, 16), "INT8"),
                    Const(i32(1, 0), "INT32", per_channel(8)),
                    Const(i32(2, 16), "INT32", per_channel(8)),
                ],
                [_out((2, 16), "INT8")],
            ),
        ),
        _case(
            "SLICE",
            "FLOAT32",
            "runtime_begin",
            _one("SLICE", [In((4, 16)), In((2,), "INT32"), In((2,), "INT32")], [Out((2, 16))]),
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
    quantized = _q(dtype)
    return _one(
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


def _strided_slice_cases() -> list[Case]:
    found = [
        _case(
            "STRIDED_SLICE",
            dtype,
            "rank2",
            _strided(dtype, (4, 16), ((1, 0), (3, 16), (1, 2)), (2, 8)),
        )
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "BOOL", "INT64")
    ]
    found += [
        _case(
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
        _case(
            "STRIDED_SLICE",
            "FLOAT32",
            "shrink",
            _strided("FLOAT32", (4, 16), ((2, 0), (3, 16), (1, 1)), (16,), shrink_axis_mask=1),
        ),
        _case(
            "STRIDED_SLICE",
            "INT8",
            "rank1_quantized_begin",
            _strided("INT8", (64,), ((-8,), (64,), (1,)), (8,), quantized=1),
        ),
        _case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_rank5",
            _strided(
                "FLOAT32", (1, 1, 1, 2, 4), ((0,) * 5, (1, 1, 1, 2, 4), (1,) * 5), (1, 1, 1, 2, 4)
            ),
        ),
        _case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_output_shape",
            _strided("FLOAT32", (4, 16), ((1, 0), (3, 16), (1, 1)), (1, 16)),
        ),
        _case(
            "STRIDED_SLICE",
            "FLOAT32",
            "refused_runtime_begin",
            _one(
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
    return _one("GATHER", [_data(source, dtype), positions], [_out(result, dtype)], options)


def _gather_cases() -> list[Case]:
    return [
        _case(
            "GATHER",
            "INT8",
            "axis0",
            _gather("INT8", (8, 16), Const(i32(1, 3, 5), "INT32"), (3, 16)),
        ),
        _case(
            "GATHER",
            "FLOAT32",
            "axis0",
            _gather("FLOAT32", (8, 16), Const(i32(1, 3, 5), "INT32"), (3, 16)),
        ),
        _case(
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
        _case(
            "GATHER",
            "FLOAT32",
            "axis_last_runtime_positions",
            _gather("FLOAT32", (4, 8), In((3,), "INT32"), (4, 3), axis=-1),
        ),
        _case(
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
        _case(
            "GATHER",
            "FLOAT32",
            "scalar_position",
            _gather("FLOAT32", (8, 16), Const(np.array(2, np.int32), "INT32"), (16,)),
        ),
        _case(
            "GATHER",
            "INT16",
            "refused_type",
            _gather("INT16", (8, 4), Const(i32(1), "INT32"), (1, 4)),
        ),
        _case(
            "GATHER",
            "INT32",
            "refused_type",
            _gather("INT32", (8, 4), Const(i32(1), "INT32"), (1, 4)),
        ),
        _case(
            "GATHER",
            "FLOAT32",
            "refused_int64_positions",
            _gather("FLOAT32", (8, 4), Const(i64(1), "INT64"), (1, 4)),
        ),
    ]


def _gather_nd_cases() -> list[Case]:
    def build(
        dtype: str,
        source: tuple[int, ...],
        indices: np.ndarray,
        result: tuple[int, ...],
        index_type: str = "INT32",
    ) -> Callable[[], bytes]:
        return _one(
            "GATHER_ND", [_data(source, dtype), Const(indices, index_type)], [_out(result, dtype)]
        )

    pairs = np.array([[0, 1], [2, 3]], np.int32)
    return [
        _case(
            "GATHER_ND",
            "INT8",
            "depth1",
            build("INT8", (4, 16), np.array([[1], [3]], np.int32), (2, 16)),
        ),
        _case(
            "GATHER_ND",
            "FLOAT32",
            "depth1",
            build("FLOAT32", (4, 16), np.array([[1], [3]], np.int32), (2, 16)),
        ),
        _case("GATHER_ND", "INT8", "depth2", build("INT8", (4, 4, 8), pairs, (2, 8))),
        _case("GATHER_ND", "FLOAT32", "full_index", build("FLOAT32", (4, 4), pairs, (2,))),
        _case("GATHER_ND", "INT16", "refused_type", build("INT16", (4, 4), pairs, (2,))),
        _case(
            "GATHER_ND",
            "FLOAT32",
            "refused_int64_indices",
            build("FLOAT32", (4, 4), pairs.astype(np.int64), (2,), "INT64"),
        ),
        _case(
            "GATHER_ND",
            "FLOAT32",
            "refused_depth",
            build("FLOAT32", (4, 4), np.array([[0, 1, 2]], np.int32), (1,)),
        ),
    ]


def _dynamic_update_slice_cases() -> list[Case]:
    def build(dtype: str, start: In | Const) -> Callable[[], bytes]:
        return _one(
            "DYNAMIC_UPDATE_SLICE",
            [_data((4, 16), dtype), _data((2, 8), dtype), start],
            [_out((4, 16), dtype)],
        )

    found = [
        _case("DYNAMIC_UPDATE_SLICE", dtype, "int32_start", build(dtype, In((2,), "INT32")))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    found += [
        _case("DYNAMIC_UPDATE_SLICE", "INT8", "int64_start", build("INT8", In((2,), "INT64"))),
        _case(
            "DYNAMIC_UPDATE_SLICE",
            "FLOAT32",
            "constant_start",
            build("FLOAT32", Const(i32(1, 4), "INT32")),
        ),
        _case(
            "DYNAMIC_UPDATE_SLICE",
            "FLOAT32",
            "refused_int16_start",
            build("FLOAT32", In((2,), "INT16")),
        ),
    ]
    return found


# -- TRANSPOSE, REVERSE_V2, BROADCAST_ARGS, BROADCAST_TO -----------------------------------------


def _transpose_cases() -> list[Case]:
    def build(
        dtype: str, source: tuple[int, ...], permutation: Sequence[int], constant: bool = True
    ) -> Callable[[], bytes]:
        result = tuple(source[axis] for axis in permutation)
        perm: In | Const = (
            Const(i32(*permutation), "INT32") if constant else In((len(source),), "INT32")
        )
        return _one("TRANSPOSE", [_data(source, dtype), perm], [_out(result, dtype)])

    return [
        _case("TRANSPOSE", "INT8", "rank2", build("INT8", (8, 16), (1, 0))),
        _case("TRANSPOSE", "INT16", "rank4", build("INT16", (1, 4, 6, 8), (0, 3, 1, 2))),
        _case("TRANSPOSE", "FLOAT32", "rank4", build("FLOAT32", (1, 4, 6, 8), (0, 2, 3, 1))),
        _case("TRANSPOSE", "INT8", "rank5", build("INT8", (1, 2, 3, 4, 5), (4, 3, 2, 1, 0))),
        _case("TRANSPOSE", "INT32", "invoke_refused", build("INT32", (8, 16), (1, 0))),
        _case(
            "TRANSPOSE",
            "FLOAT32",
            "refused_runtime_perm",
            build("FLOAT32", (8, 16), (1, 0), constant=False),
        ),
        _case(
            "TRANSPOSE",
            "FLOAT32",
            "refused_rank6",
            build("FLOAT32", (1, 1, 2, 2, 2, 2), (5, 4, 3, 2, 1, 0)),
        ),
    ]


def _reverse_cases() -> list[Case]:
    def build(
        dtype: str, axes: In | Const, source: tuple[int, ...] = (4, 6, 8)
    ) -> Callable[[], bytes]:
        return _one("REVERSE_V2", [_data(source, dtype), axes], [_out(source, dtype)])

    found = [
        _case("REVERSE_V2", dtype, "axis1", build(dtype, Const(i32(1), "INT32")))
        for dtype in ("INT8", "UINT8", "INT16", "INT32", "INT64", "FLOAT32", "BOOL")
    ]
    found += [
        _case("REVERSE_V2", "INT8", "axes_contiguous", build("INT8", Const(i32(1, 2), "INT32"))),
        _case(
            "REVERSE_V2",
            "FLOAT32",
            "invoke_refused_gap",
            build("FLOAT32", Const(i32(0, 2), "INT32")),
        ),
        _case("REVERSE_V2", "FLOAT32", "runtime_axis", build("FLOAT32", In((1,), "INT32"))),
        _case("REVERSE_V2", "FLOAT16", "refused_type", build("FLOAT16", Const(i32(1), "INT32"))),
        _case(
            "REVERSE_V2", "FLOAT32", "refused_int64_axis", build("FLOAT32", Const(i64(1), "INT64"))
        ),
    ]
    return found


def _broadcast_args_cases() -> list[Case]:
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
        return _one("BROADCAST_ARGS", [first, second], [Out((3,), dtype, q)])

    return [
        _case("BROADCAST_ARGS", "INT32", "constants", build("INT32", True)),
        _case("BROADCAST_ARGS", "INT64", "constants", build("INT64", True)),
        _case("BROADCAST_ARGS", "INT32", "runtime", build("INT32", False)),
        _case("BROADCAST_ARGS", "INT64", "runtime", build("INT64", False)),
        _case("BROADCAST_ARGS", "INT32", "quantized", build("INT32", True, per_channel(8))),
        _case("BROADCAST_ARGS", "FLOAT32", "refused_type", build("FLOAT32", True)),
        _case("BROADCAST_ARGS", "INT32", "refused_mixed", build("INT32", True, other="INT64")),
    ]


def _broadcast_to_cases() -> list[Case]:
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
            else _data(source, dtype)
        )
        return _one(
            "BROADCAST_TO",
            [data, Const(values, shape_type)],
            [_out(target, dtype)],
        )

    found = [
        _case("BROADCAST_TO", dtype, "int32_shape", build(dtype))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL", "UINT8")
    ]
    found += [
        _case("BROADCAST_TO", "INT8", "int64_shape", build("INT8", "INT64")),
        _case("BROADCAST_TO", "FLOAT32", "constant_input", build("FLOAT32", constant_input=True)),
        _case(
            "BROADCAST_TO",
            "FLOAT32",
            "refused_rank6",
            build("FLOAT32", target=(1, 1, 2, 2, 3, 1), source=(3, 1)),
        ),
        _case(
            "BROADCAST_TO",
            "FLOAT32",
            "refused_runtime_shape",
            _one("BROADCAST_TO", [In((3, 1)), In((3,), "INT32")], [Out((4, 3, 16))]),
        ),
    ]
    return found


# -- PAD, PADV2, MIRROR_PAD ----------------------------------------------------------------------


def _pad(
    opcode: str,
    dtype: str,
    source: tuple[int, ...],
    paddings: Sequence[tuple[int, int]],
    *,
    constant: In | Const | str | None = "none",
    q: Q = "data",
    runtime_paddings: bool = False,
) -> Callable[[], bytes]:
    quantized = _q(dtype) if q == "data" else q
    result = tuple(
        dim + before + after for dim, (before, after) in zip(source, paddings, strict=True)
    )
    amounts: In | Const = (
        In((len(source), 2), "INT32")
        if runtime_paddings
        else Const(np.array(paddings, np.int32), "INT32")
    )
    inputs: list[In | Const | None] = [In(source, dtype, quantized), amounts]
    if constant != "none":
        inputs.append(constant)  # type: ignore[arg-type]
    return _one(opcode, inputs, [Out(result, dtype, quantized)])


_IMAGE_PADS = ((0, 0), (1, 1), (2, 2), (0, 0))


def _pad_cases() -> list[Case]:
    found = [
        _case("PAD", dtype, "rank2", _pad("PAD", dtype, (4, 16), ((1, 0), (2, 3))))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    found += [
        _case(
            "PAD",
            "INT8",
            "per_tensor_image",
            _pad("PAD", "INT8", (1, 4, 4, 8), _IMAGE_PADS, q="default"),
        ),
        _case("PAD", "FLOAT32", "rank1", _pad("PAD", "FLOAT32", (16,), ((3, 5),))),
        _case(
            "PAD",
            "INT8",
            "rank5",
            _pad("PAD", "INT8", (1, 2, 2, 2, 4), ((0, 0), (1, 0), (0, 1), (0, 0), (1, 1))),
        ),
        _case(
            "PAD",
            "FLOAT32",
            "three_inputs",
            _pad(
                "PAD",
                "FLOAT32",
                (4, 16),
                ((1, 1), (0, 0)),
                constant=Const(np.array(0.5, np.float32), "FLOAT32"),
            ),
        ),
        _case(
            "PAD",
            "FLOAT32",
            "refused_rank6",
            _pad("PAD", "FLOAT32", (1, 1, 1, 2, 2, 2), ((0, 0),) * 5 + ((1, 1),)),
        ),
        _case(
            "PAD",
            "FLOAT32",
            "refused_runtime_paddings",
            _pad("PAD", "FLOAT32", (4, 16), ((1, 1), (0, 0)), runtime_paddings=True),
        ),
    ]
    return found


def _padv2_cases() -> list[Case]:
    def value(dtype: str) -> Const:
        numpy_type = {"INT8": np.int8, "INT16": np.int16, "FLOAT32": np.float32}[dtype]
        return Const(
            np.array(0, numpy_type), dtype, _q(dtype) if dtype != "INT8" else per_channel(32)
        )

    return [
        *(
            _case(
                "PADV2",
                dtype,
                "constant",
                _pad("PADV2", dtype, (1, 4, 4, 8), _IMAGE_PADS, constant=value(dtype)),
            )
            for dtype in ("INT8", "INT16", "FLOAT32")
        ),
        _case(
            "PADV2", "FLOAT32", "two_inputs", _pad("PADV2", "FLOAT32", (4, 16), ((1, 1), (2, 2)))
        ),
        _case(
            "PADV2",
            "INT8",
            "omitted_constant",
            _pad("PADV2", "INT8", (4, 16), ((1, 1), (2, 2)), constant=None),
        ),
        _case(
            "PADV2",
            "INT8",
            "refused_zero_point",
            _pad(
                "PADV2",
                "INT8",
                (4, 16),
                ((1, 1), (2, 2)),
                q=INT8_Q,
                constant=Const(np.array(0, np.int8), "INT8", per_channel(1, zero_point=3)),
            ),
        ),
    ]


def _mirror_pad_cases() -> list[Case]:
    def build(
        dtype: str,
        source: tuple[int, ...],
        paddings: Sequence[tuple[int, int]],
        mode: str,
        amounts: str = "const32",
    ) -> Callable[[], bytes]:
        result = tuple(d + a + b for d, (a, b) in zip(source, paddings, strict=True))
        matrix: In | Const = {
            "const32": Const(np.array(paddings, np.int32), "INT32"),
            "const64": Const(np.array(paddings, np.int64), "INT64"),
            "runtime": In((len(source), 2), "INT32"),
        }[amounts]
        return _one(
            "MIRROR_PAD", [_data(source, dtype), matrix], [_out(result, dtype)], {"mode": mode}
        )

    return [
        _case(
            "MIRROR_PAD",
            "INT8",
            "reflect_rank4",
            build("INT8", (1, 4, 4, 8), _IMAGE_PADS, "REFLECT"),
        ),
        _case(
            "MIRROR_PAD",
            "INT8",
            "symmetric_rank2",
            build("INT8", (4, 16), ((1, 2), (3, 0)), "SYMMETRIC"),
        ),
        _case(
            "MIRROR_PAD", "FLOAT32", "reflect_rank1", build("FLOAT32", (16,), ((2, 2),), "REFLECT")
        ),
        _case(
            "MIRROR_PAD",
            "FLOAT32",
            "int64_paddings",
            build("FLOAT32", (4, 16), ((1, 1), (1, 1)), "SYMMETRIC", "const64"),
        ),
        _case(
            "MIRROR_PAD",
            "FLOAT32",
            "runtime_paddings",
            build("FLOAT32", (4, 16), ((1, 1), (1, 1)), "REFLECT", "runtime"),
        ),
        _case(
            "MIRROR_PAD",
            "INT16",
            "invoke_refused",
            build("INT16", (4, 16), ((1, 1), (1, 1)), "REFLECT"),
        ),
    ]


# -- BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH ------------------------


def _batch_space_cases() -> list[Case]:
    def build(
        opcode: str,
        dtype: str,
        source: tuple[int, ...],
        result: tuple[int, ...],
        quantized_constants: bool = False,
    ) -> Callable[[], bytes]:
        spatial = len(source) - 2
        q = per_channel(4) if quantized_constants else None
        block = Const(np.full((spatial,), 2, np.int32), "INT32", q)
        crops = Const(np.zeros((spatial, 2), np.int32), "INT32", q)
        return _one(opcode, [_data(source, dtype), block, crops], [_out(result, dtype)])

    found: list[Case] = []
    for opcode, big, small in (
        ("BATCH_TO_SPACE_ND", (4, 2, 2, 8), (1, 4, 4, 8)),
        ("SPACE_TO_BATCH_ND", (1, 4, 4, 8), (4, 2, 2, 8)),
    ):
        found += [
            _case(opcode, "INT8", "rank4", build(opcode, "INT8", big, small)),
            _case(
                opcode,
                "FLOAT32",
                "rank4",
                build(opcode, "FLOAT32", big, small, quantized_constants=True),
            ),
            _case(opcode, "INT16", "invoke_refused", build(opcode, "INT16", big, small)),
        ]
    found += [
        _case(
            "BATCH_TO_SPACE_ND",
            "INT8",
            "rank3",
            build("BATCH_TO_SPACE_ND", "INT8", (4, 4, 8), (2, 8, 8)),
        ),
        _case(
            "SPACE_TO_BATCH_ND",
            "FLOAT32",
            "rank3",
            build("SPACE_TO_BATCH_ND", "FLOAT32", (2, 8, 8), (4, 4, 8)),
        ),
        _case(
            "SPACE_TO_BATCH_ND",
            "FLOAT32",
            "refused_rank5",
            build("SPACE_TO_BATCH_ND", "FLOAT32", (1, 4, 4, 4, 2), (8, 2, 2, 2, 2)),
        ),
    ]
    return found


def _depth_space_cases() -> list[Case]:
    def build(
        opcode: str, dtype: str, source: tuple[int, ...], block: int, result: tuple[int, ...]
    ) -> Callable[[], bytes]:
        return _one(opcode, [_data(source, dtype)], [_out(result, dtype)], {"block_size": block})

    return [
        _case(
            "DEPTH_TO_SPACE",
            "INT8",
            "block2",
            build("DEPTH_TO_SPACE", "INT8", (1, 4, 4, 16), 2, (1, 8, 8, 4)),
        ),
        _case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "block4",
            build("DEPTH_TO_SPACE", "FLOAT32", (1, 2, 2, 32), 4, (1, 8, 8, 2)),
        ),
        _case(
            "DEPTH_TO_SPACE",
            "INT16",
            "refused_type",
            build("DEPTH_TO_SPACE", "INT16", (1, 4, 4, 16), 2, (1, 8, 8, 4)),
        ),
        _case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "refused_block0",
            build("DEPTH_TO_SPACE", "FLOAT32", (1, 4, 4, 16), 0, (1, 8, 8, 4)),
        ),
        _case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "refused_rank3",
            build("DEPTH_TO_SPACE", "FLOAT32", (4, 4, 16), 2, (8, 8, 4)),
        ),
        _case(
            "SPACE_TO_DEPTH",
            "INT8",
            "block2",
            build("SPACE_TO_DEPTH", "INT8", (1, 8, 8, 4), 2, (1, 4, 4, 16)),
        ),
        _case(
            "SPACE_TO_DEPTH",
            "FLOAT32",
            "block4",
            build("SPACE_TO_DEPTH", "FLOAT32", (1, 8, 8, 2), 4, (1, 2, 2, 32)),
        ),
        _case(
            "SPACE_TO_DEPTH",
            "INT16",
            "refused_type",
            build("SPACE_TO_DEPTH", "INT16", (1, 8, 8, 4), 2, (1, 4, 4, 16)),
        ),
    ]


# -- RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR ----------------------------------------------------


def _resize_cases() -> list[Case]:
    def build(
        opcode: str,
        dtype: str,
        size: In | Const | None = None,
        source: tuple[int, ...] = (1, 4, 4, 8),
        **options: bool,
    ) -> Callable[[], bytes]:
        target = Const(i32(8, 8), "INT32") if size is None else size
        result = (*source[:-3], 8, 8, source[-1]) if len(source) == 4 else (8, 8, source[-1])
        return _one(opcode, [_data(source, dtype), target], [_out(result, dtype)], dict(options))

    found: list[Case] = []
    for opcode, types, refused in (
        ("RESIZE_BILINEAR", ("INT8", "FLOAT32"), "INT16"),
        ("RESIZE_NEAREST_NEIGHBOR", ("INT8", "INT16", "FLOAT32"), "INT32"),
    ):
        found += [_case(opcode, dtype, "plain", build(opcode, dtype)) for dtype in types]
        found += [
            _case(opcode, refused, "invoke_refused", build(opcode, refused)),
            _case(opcode, "INT8", "align_corners", build(opcode, "INT8", align_corners=True)),
            _case(
                opcode,
                "FLOAT32",
                "half_pixel_centers",
                build(opcode, "FLOAT32", half_pixel_centers=True),
            ),
            _case(
                opcode,
                "FLOAT32",
                "refused_runtime_size",
                build(opcode, "FLOAT32", In((2,), "INT32")),
            ),
            _case(opcode, "FLOAT32", "refused_rank3", build(opcode, "FLOAT32", source=(4, 4, 8))),
        ]
    found += [
        _case(
            "RESIZE_BILINEAR",
            "FLOAT32",
            "refused_both_options",
            build("RESIZE_BILINEAR", "FLOAT32", align_corners=True, half_pixel_centers=True),
        ),
        _case(
            "RESIZE_NEAREST_NEIGHBOR",
            "INT8",
            "both_options",
            build("RESIZE_NEAREST_NEIGHBOR", "INT8", align_corners=True, half_pixel_centers=True),
        ),
    ]
    return found


# -- IF, WHILE, CALL_ONCE (branches use RESHAPE, so only this family's kernels appear) ----------


def _tensor(graph: SubgraphBuilder, name: str, shape: Sequence[int], dtype: str, q: Q) -> int:
    quantized = _q(dtype) if q == "data" else q
    return graph.add_tensor(name, list(shape), dtype, quantization=quantized)  # type: ignore[arg-type]


def _copy(graph: SubgraphBuilder, source: int, result: int, shape: Sequence[int]) -> None:
    """A RESHAPE to the same shape: the cheapest operator that moves data."""
    graph.add_operator("RESHAPE", [source], [result], options={"new_shape": list(shape)})


def _if_model(
    *,
    cond_type: str = "BOOL",
    cond_q: QuantizationSpec | None = None,
    cond_shape: tuple[int, ...] = (1,),
    dtype: str = "FLOAT32",
    branch_ops: int = 1,
    then_inputs: int = 1,
    else_inputs: int = 1,
) -> Callable[[], bytes]:
    def build() -> bytes:
        builder = ModelBuilder()
        main = builder.add_subgraph("main")
        branches = [builder.add_subgraph("then"), builder.add_subgraph("else")]
        condition = main.add_tensor("cond", list(cond_shape), cond_type, quantization=cond_q)
        source = _tensor(main, "x", (1, 64), dtype, "data")
        result = _tensor(main, "y", (1, 64), dtype, "data")
        main.add_operator(
            "IF",
            [condition, source],
            [result],
            options={"then_subgraph_index": 1, "else_subgraph_index": 2},
        )
        main.set_inputs([condition, source])
        main.set_outputs([result])
        for graph, count in zip(branches, (then_inputs, else_inputs), strict=True):
            inputs = [_tensor(graph, f"i{k}", (1, 64), dtype, "data") for k in range(count)]
            current = inputs[0]
            for step in range(branch_ops):
                following = _tensor(graph, f"t{step}", (1, 64), dtype, "data")
                _copy(graph, current, following, (1, 64))
                current = following
            graph.set_inputs(inputs)
            graph.set_outputs([current])
        return builder.build()

    return build


def _while_model(
    *,
    variables: int = 1,
    dtype: str = "FLOAT32",
    cond_inputs: int | None = None,
    body_inputs: int | None = None,
) -> Callable[[], bytes]:
    """WHILE over a bool flag (the condition: a copy of it) and `variables - 1` data tensors
    (the body copies each); a false flag ends the loop at once."""

    def build() -> bytes:
        builder = ModelBuilder()
        main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
        specs = [((1,), "BOOL", None)] + [((1, 32), dtype, "data")] * (variables - 1)
        inputs = [_tensor(main, f"v{k}", s, t, q) for k, (s, t, q) in enumerate(specs)]
        outputs = [_tensor(main, f"r{k}", s, t, q) for k, (s, t, q) in enumerate(specs)]
        main.add_operator(
            "WHILE", inputs, outputs, options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
        )
        main.set_inputs(inputs)
        main.set_outputs(outputs)
        count = len(specs) if cond_inputs is None else cond_inputs
        cond_tensors = [
            _tensor(cond, f"c{k}", *specs[min(k, len(specs) - 1)]) for k in range(count)
        ]
        flag = cond.add_tensor("continue", [1], "BOOL")
        _copy(cond, cond_tensors[0], flag, (1,))
        cond.set_inputs(cond_tensors)
        cond.set_outputs([flag])
        count = len(specs) if body_inputs is None else body_inputs
        body_tensors = [
            _tensor(body, f"b{k}", *specs[min(k, len(specs) - 1)]) for k in range(count)
        ]
        results = []
        for k, (shape, t, q) in enumerate(specs):
            result = _tensor(body, f"n{k}", shape, t, q)
            _copy(body, body_tensors[min(k, count - 1)], result, shape)
            results.append(result)
        body.set_inputs(body_tensors)
        body.set_outputs(results)
        return builder.build()

    return build


def _while_less_add() -> bytes:
    """The usual counter loop: LESS in the condition, ADD in the body (other families' kernels)."""
    builder = ModelBuilder()
    main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    count, result = main.add_tensor("i", [1], "INT32"), main.add_tensor("o", [1], "INT32")
    main.add_operator(
        "WHILE", [count], [result], options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
    )
    main.set_inputs([count])
    main.set_outputs([result])
    step = cond.add_tensor("i", [1], "INT32")
    limit = cond.add_constant("limit", np.array([10], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step])
    cond.set_outputs([flag])
    step = body.add_tensor("i", [1], "INT32")
    one = body.add_constant("one", np.array([1], np.int32))
    following = body.add_tensor("next", [1], "INT32")
    body.add_operator("ADD", [step, one], [following])
    body.set_inputs([step])
    body.set_outputs([following])
    return builder.build()


def _call_once_model(*, with_input: bool = False, init_ops: int = 2) -> Callable[[], bytes]:
    def build() -> bytes:
        builder = ModelBuilder()
        main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
        source, result = main.add_tensor("x", [1, 64]), main.add_tensor("y", [1, 64])
        main.add_operator(
            "CALL_ONCE", [source] if with_input else [], [], options={"init_subgraph_index": 1}
        )
        _copy(main, source, result, (1, 64))
        main.set_inputs([source])
        main.set_outputs([result])
        current = init.add_tensor("a", [1, 8])
        init.set_inputs([current])
        for step in range(init_ops):
            following = init.add_tensor(f"t{step}", [1, 8])
            _copy(init, current, following, (1, 8))
            current = following
        init.set_outputs([current])
        return builder.build()

    return build


def _control_flow_cases() -> list[Case]:
    return [
        _case("IF", "FLOAT32", "one_op_branches", _if_model()),
        _case("IF", "INT8", "two_op_branches", _if_model(dtype="INT8", branch_ops=2)),
        _case("IF", "BOOL", "quantized_condition", _if_model(cond_q=per_channel(16))),
        _case("IF", "FLOAT32", "else_takes_more_inputs", _if_model(else_inputs=2)),
        _case("IF", "INT32", "refused_condition_type", _if_model(cond_type="INT32")),
        _case("IF", "BOOL", "refused_two_conditions", _if_model(cond_shape=(2,))),
        _case("IF", "FLOAT32", "refused_then_arity", _if_model(then_inputs=2)),
        _case("WHILE", "BOOL", "flag_only", _while_model()),
        _case("WHILE", "FLOAT32", "three_variables", _while_model(variables=3)),
        _case("WHILE", "INT8", "two_variables", _while_model(variables=2, dtype="INT8")),
        _case("WHILE", "INT32", "less_add", _while_less_add),
        _case("WHILE", "FLOAT32", "refused_body_arity", _while_model(variables=2, body_inputs=1)),
        _case("WHILE", "FLOAT32", "refused_cond_arity", _while_model(variables=2, cond_inputs=3)),
        _case("CALL_ONCE", "FLOAT32", "init_subgraph", _call_once_model()),
        _case("CALL_ONCE", "FLOAT32", "refused_input", _call_once_model(with_input=True)),
    ]


# -- VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE --------------------------------------------------


def _variables_model(
    *,
    dtype: str = "FLOAT32",
    assign_in: tuple[str, ...] = ("main",),
    names: tuple[str, ...] = ("v",),
    read_first: bool = True,
    value_q: Q = "data",
    shape: tuple[int, ...] = (2, 24),
) -> Callable[[], bytes]:
    """Variables of `shape` read into main's output and assigned from main's input, in main
    and/or a CALL_ONCE init subgraph (which assigns zeros)."""

    def build() -> bytes:
        builder = ModelBuilder()
        main = builder.add_subgraph("main")
        init = builder.add_subgraph("init") if "init" in assign_in else None
        if init is not None:
            main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": 1})
        source = _tensor(main, "x", shape, dtype, "data")
        outputs = []
        for name in names:
            handle = main.add_tensor(f"{name}/handle", [1], "RESOURCE")
            main.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
            value = _tensor(main, f"{name}/value", shape, dtype, "data")
            steps = [
                ("READ_VARIABLE", [handle], [value]),
                ("ASSIGN_VARIABLE", [handle, source], []),
            ]
            if "main" not in assign_in:
                steps = steps[:1]
            for opcode, operands, results in steps if read_first else steps[::-1]:
                main.add_operator(opcode, operands, results)
            outputs.append(value)
        main.set_inputs([source])
        main.set_outputs(outputs)
        if init is not None:
            for name in names:
                handle = init.add_tensor(f"{name}/handle", [1], "RESOURCE")
                init.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
                zeros = np.zeros(shape, {"FLOAT32": np.float32, "INT8": np.int8}[dtype])
                quantized = _q(dtype) if value_q == "data" else value_q
                constant = init.add_constant(f"{name}/zeros", zeros, dtype, quantization=quantized)  # type: ignore[arg-type]
                init.add_operator("ASSIGN_VARIABLE", [handle, constant], [])
        return builder.build()

    return build


def _variable_cases() -> list[Case]:
    return [
        _case("VAR_HANDLE", "FLOAT32", "assign_in_main", _variables_model()),
        _case("VAR_HANDLE", "INT8", "assign_in_main", _variables_model(dtype="INT8")),
        _case("VAR_HANDLE", "FLOAT32", "assign_in_init", _variables_model(assign_in=("init",))),
        _case(
            "VAR_HANDLE",
            "INT8",
            "assign_in_both",
            _variables_model(dtype="INT8", assign_in=("main", "init")),
        ),
        _case(
            "VAR_HANDLE",
            "INT8",
            "init_value_other_quantization",
            _variables_model(dtype="INT8", assign_in=("init",), value_q=INT8_Q),
        ),
        _case("VAR_HANDLE", "FLOAT32", "two_variables", _variables_model(names=("a", "b"))),
        _case("VAR_HANDLE", "FLOAT32", "same_name_twice", _variables_model(names=("v", "v"))),
        _case("VAR_HANDLE", "FLOAT32", "assign_before_read", _variables_model(read_first=False)),
        _case("VAR_HANDLE", "FLOAT32", "never_assigned", _variables_model(assign_in=())),
        # The same kernels listed under their own opcodes, with resource buffers whose sizes are
        # not multiples of the 16-byte alignment (60 and 13 bytes).
        _case(
            "READ_VARIABLE",
            "FLOAT32",
            "read_after_assign",
            _variables_model(read_first=False, shape=(3, 5)),
        ),
        _case(
            "ASSIGN_VARIABLE",
            "INT8",
            "assign_then_read",
            _variables_model(dtype="INT8", read_first=False, shape=(1, 13)),
        ),
    ]


CASES = (
    *_reshape_cases(),
    *_squeeze_cases(),
    *_expand_dims_cases(),
    *_shape_cases(),
    *_pack_cases(),
    *_unpack_cases(),
    *_split_cases(),
    *_split_v_cases(),
    *_concatenation_cases(),
    *_slice_cases(),
    *_strided_slice_cases(),
    *_gather_cases(),
    *_gather_nd_cases(),
    *_dynamic_update_slice_cases(),
    *_transpose_cases(),
    *_reverse_cases(),
    *_broadcast_args_cases(),
    *_broadcast_to_cases(),
    *_pad_cases(),
    *_padv2_cases(),
    *_mirror_pad_cases(),
    *_batch_space_cases(),
    *_depth_space_cases(),
    *_resize_cases(),
    *_control_flow_cases(),
    *_variable_cases(),
)
