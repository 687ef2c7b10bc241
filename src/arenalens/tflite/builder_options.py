"""Builder options: opcode + option values → its schema options table, fields and encoded values.

The builder writes options the way the converter does: the table the opcode implies, defaults a
real model carries (stride 1, softmax beta 1.0) unless the caller overrides them, enum fields by
schema name or number, vector fields as numpy arrays of the schema's element type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOptions import BuiltinOptions
from tflite.BuiltinOptions2 import BuiltinOptions2
from tflite.FullyConnectedOptionsWeightsFormat import FullyConnectedOptionsWeightsFormat
from tflite.LSTMKernelType import LSTMKernelType
from tflite.MirrorPadMode import MirrorPadMode
from tflite.Padding import Padding
from tflite.TensorType import TensorType

from arenalens.errors import UsageError
from arenalens.tflite.opcodes import snake_case

# Opcode → its options table. Ops missing here (LOGISTIC, RELU, TANH, ...) have no table in the
# schema; `add_operator(options_type=...)` covers anything else.
OPTIONS_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "ADD": "AddOptions",
        "ARG_MAX": "ArgMaxOptions",
        "ARG_MIN": "ArgMinOptions",
        "ASSIGN_VARIABLE": "AssignVariableOptions",
        "AVERAGE_POOL_2D": "Pool2DOptions",
        "BATCH_MATMUL": "BatchMatMulOptions",
        "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
        "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
        "BIDIRECTIONAL_SEQUENCE_RNN": "BidirectionalSequenceRNNOptions",
        "CALL": "CallOptions",
        "CALL_ONCE": "CallOnceOptions",
        "CAST": "CastOptions",
        "CONCATENATION": "ConcatenationOptions",
        "CONV_2D": "Conv2DOptions",
        "CONV_3D": "Conv3DOptions",
        "CONV_3D_TRANSPOSE": "Conv3DOptions",
        "CUMSUM": "CumsumOptions",
        "DEPTH_TO_SPACE": "DepthToSpaceOptions",
        "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
        "DEQUANTIZE": "DequantizeOptions",
        "DIV": "DivOptions",
        "EXPAND_DIMS": "ExpandDimsOptions",
        "FULLY_CONNECTED": "FullyConnectedOptions",
        "GATHER": "GatherOptions",
        "GELU": "GeluOptions",
        "HARD_SWISH": "HardSwishOptions",
        "IF": "IfOptions",
        "L2_NORMALIZATION": "L2NormOptions",
        "L2_POOL_2D": "Pool2DOptions",
        "LEAKY_RELU": "LeakyReluOptions",
        "LOG_SOFTMAX": "LogSoftmaxOptions",
        "LSTM": "LSTMOptions",
        "MAX_POOL_2D": "Pool2DOptions",
        "MAXIMUM": "MaximumMinimumOptions",
        "MEAN": "ReducerOptions",
        "MINIMUM": "MaximumMinimumOptions",
        "MIRROR_PAD": "MirrorPadOptions",
        "MUL": "MulOptions",
        "PACK": "PackOptions",
        "PAD": "PadOptions",
        "PADV2": "PadV2Options",
        "QUANTIZE": "QuantizeOptions",
        "READ_VARIABLE": "ReadVariableOptions",
        "REDUCE_MAX": "ReducerOptions",
        "REDUCE_MIN": "ReducerOptions",
        "REDUCE_PROD": "ReducerOptions",
        "RESHAPE": "ReshapeOptions",
        "RESIZE_BILINEAR": "ResizeBilinearOptions",
        "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
        "RNN": "RNNOptions",
        "SELECT_V2": "SelectV2Options",
        "SHAPE": "ShapeOptions",
        "SOFTMAX": "SoftmaxOptions",
        "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
        "SPACE_TO_DEPTH": "SpaceToDepthOptions",
        "SPLIT": "SplitOptions",
        "SPLIT_V": "SplitVOptions",
        "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
        "SQUEEZE": "SqueezeOptions",
        "STABLEHLO_REDUCE_WINDOW": "StablehloReduceWindowOptions",
        "STRIDED_SLICE": "StridedSliceOptions",
        "SUB": "SubOptions",
        "SUM": "ReducerOptions",
        "SVDF": "SVDFOptions",
        "TRANSPOSE": "TransposeOptions",
        "TRANSPOSE_CONV": "TransposeConvOptions",
        "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
        "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
        "UNPACK": "UnpackOptions",
        "VAR_HANDLE": "VarHandleOptions",
        "WHILE": "WhileOptions",
        "ZEROS_LIKE": "ZerosLikeOptions",
    }
)

# Converter-style values for fields whose schema default (0) no real model carries.
_STRIDE_ONE: Mapping[str, Any] = MappingProxyType({"stride_w": 1, "stride_h": 1})
_POOL_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"stride_w": 1, "stride_h": 1, "filter_width": 1, "filter_height": 1}
)
DEFAULT_OPTIONS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "CONV_2D": _STRIDE_ONE,
        "DEPTHWISE_CONV_2D": MappingProxyType({**_STRIDE_ONE, "depth_multiplier": 1}),
        "TRANSPOSE_CONV": _STRIDE_ONE,
        "AVERAGE_POOL_2D": _POOL_DEFAULTS,
        "MAX_POOL_2D": _POOL_DEFAULTS,
        "L2_POOL_2D": _POOL_DEFAULTS,
        "SOFTMAX": MappingProxyType({"beta": 1.0}),
    }
)
# Options whose value is the operator's output count.
_OUTPUT_COUNT_OPTIONS: Mapping[str, str] = MappingProxyType(
    {"SPLIT": "num_splits", "SPLIT_V": "num_splits", "UNPACK": "num"}
)

# Option fields that take schema enum names as well as numbers ("SAME", "RELU6").
_ENUM_FIELDS: Mapping[str, type] = MappingProxyType(
    {
        "padding": Padding,
        "fused_activation_function": ActivationFunctionType,
        "weights_format": FullyConnectedOptionsWeightsFormat,
        "kernel_type": LSTMKernelType,
        "mode": MirrorPadMode,
        "quantized_bias_type": TensorType,
        "in_data_type": TensorType,
        "out_data_type": TensorType,
        "output_type": TensorType,
        "idx_out_type": TensorType,
    }
)
_NUMPY_FOR_FLAGS: Mapping[str, str] = MappingProxyType(
    {
        "Int8Flags": "i1",
        "Uint8Flags": "u1",
        "BoolFlags": "?",
        "Int16Flags": "<i2",
        "Uint16Flags": "<u2",
        "Int32Flags": "<i4",
        "Uint32Flags": "<u4",
        "Int64Flags": "<i8",
        "Uint64Flags": "<u8",
        "Float32Flags": "<f4",
        "Float64Flags": "<f8",
    }
)


@dataclass(frozen=True, slots=True)
class OptionField:
    """One field of a schema options table: how to add it and what it holds."""

    add: Callable[[Any, Any], None]
    kind: str  # "scalar", "string" or "vector"
    numpy_dtype: str  # element type of a vector field


@cache
def options_module(table: str) -> ModuleType:
    try:
        return importlib.import_module(f"tflite.{table}")
    except ImportError:
        raise UsageError(f"unknown options table '{table}'") from None


@cache
def union_code(table: str) -> tuple[int, int]:
    """Options table name → (1 or 2 for the union it belongs to, its type code there)."""
    for union, enum_class in ((1, BuiltinOptions), (2, BuiltinOptions2)):
        code = vars(enum_class).get(table)
        if isinstance(code, int):
            return union, code
    raise UsageError(f"'{table}' is not a builtin options table")


@cache
def option_fields(table: str) -> Mapping[str, OptionField]:
    """Options table name → its fields by snake_case name (the keys the reader decodes)."""
    module = options_module(table)
    options_class = getattr(module, table)
    prefix = f"{table}Add"
    fields: dict[str, OptionField] = {}
    for function_name, function in sorted(vars(module).items()):
        if not function_name.startswith(prefix) or not callable(function):
            continue
        camel = function_name[len(prefix) :]
        getter = getattr(options_class, camel, None)
        names = getter.__code__.co_names if getter is not None else ()
        kind, numpy_dtype = "scalar", ""
        if "String" in names:
            kind = "string"
        elif "Vector" in names:
            kind = "vector"
            as_numpy = getattr(options_class, camel + "AsNumpy", None)
            flags = [
                n for n in (as_numpy.__code__.co_names if as_numpy else ()) if n in _NUMPY_FOR_FLAGS
            ]
            if not flags:
                continue  # a vector of tables: not supported as an option value
            numpy_dtype = _NUMPY_FOR_FLAGS[flags[0]]
        elif "Indirect" in names:
            continue  # a nested table: not supported as an option value
        fields[snake_case(camel)] = OptionField(function, kind, numpy_dtype)
    return MappingProxyType(fields)


def options_table_for(opcode: str, options_type: str | None) -> str | None:
    if options_type is not None:
        if options_type == "NONE":
            return None
        union_code(options_type)  # raises for unknown tables
        return options_type
    return OPTIONS_TYPES.get(opcode)


def merged_options(
    opcode: str, table: str | None, options: Mapping[str, Any] | None, output_count: int
) -> tuple[tuple[str, Any], ...]:
    """Defaults + caller options → sorted, hashable (field, value) pairs, names checked."""
    if table is None:
        if options:
            raise UsageError(
                f"{opcode} has no options table, but options were given: {sorted(options)}"
            )
        return ()
    merged: dict[str, Any] = dict(DEFAULT_OPTIONS.get(opcode, {}))
    count_field = _OUTPUT_COUNT_OPTIONS.get(opcode)
    if count_field is not None:
        merged[count_field] = output_count
    merged.update(options or {})
    fields = option_fields(table)
    result: list[tuple[str, Any]] = []
    for name in sorted(merged):
        if name not in fields:
            raise UsageError(
                f"{opcode}: '{name}' is not a field of {table} (fields: {', '.join(fields)})"
            )
        result.append((name, option_value(opcode, name, merged[name])))
    return tuple(result)


def option_value(opcode: str, name: str, value: Any) -> Any:
    """One option value → what the schema stores (enum names become numbers, lists tuples)."""
    if isinstance(value, str) and name in _ENUM_FIELDS:
        code = vars(_ENUM_FIELDS[name]).get(value)
        if not isinstance(code, int):
            raise UsageError(f"{opcode}: '{value}' is not a value of {name}")
        return code
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(np.asarray(value).tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


# -- tensors --------------------------------------------------------------------------------
