"""Helpers for writing conformance cases: one operator with given operands → .tflite bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flatbuffers import flexbuffers

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, quantization

INT8_Q = quantization(0.1, 0)
INT16_Q = quantization(1 / 32768, 0)
UINT8_Q = quantization(0.1, 128)


def per_channel(count: int, axis: int = 0, zero_point: int = 0) -> QuantizationSpec:
    """Per-channel quantization with `count` scales along `axis`."""
    return quantization([0.05 + 0.001 * i for i in range(count)], zero_point, axis=axis)


def default_quantization(dtype: str) -> QuantizationSpec | None:
    """The per-tensor quantization a quantized tensor of this type usually has (None for floats)."""
    return {"INT8": INT8_Q, "INT16": INT16_Q, "UINT8": UINT8_Q}.get(dtype)


@dataclass(frozen=True)
class In:
    """A graph input (activation) operand."""

    shape: Sequence[int]
    dtype: str = "FLOAT32"
    q: QuantizationSpec | str | None = "default"  # "default": default_quantization(dtype)


@dataclass(frozen=True)
class Const:
    """A constant operand (weights, shapes, axes...)."""

    array: Any  # numpy array, or raw bytes (then give shape)
    dtype: str
    q: QuantizationSpec | None = None
    shape: Sequence[int] | None = None  # for raw bytes (e.g. INT4)


@dataclass(frozen=True)
class Var:
    """A variable tensor (is_variable), e.g. an LSTM or SVDF state."""

    shape: Sequence[int]
    dtype: str = "FLOAT32"
    q: QuantizationSpec | str | None = "default"


@dataclass(frozen=True)
class Out:
    """An operator output (also a graph output)."""

    shape: Sequence[int]
    dtype: str = "FLOAT32"
    q: QuantizationSpec | str | None = "default"


OMITTED = None  # an omitted optional input (-1)


@dataclass(frozen=True)
class Op:
    """One operator of a case model."""

    opcode: str
    inputs: Sequence[In | Const | Var | Out | int | None]
    outputs: Sequence[Out]
    options: Mapping[str, Any] = field(default_factory=dict)
    custom: Mapping[str, Any] | None = None  # flexbuffer map for custom operators
    intermediates: Sequence[Out] = ()
    options_type: str | None = None  # another options table than the opcode's ("NONE": none)


def _q(spec: QuantizationSpec | str | None, dtype: str) -> QuantizationSpec | None:
    return default_quantization(dtype) if spec == "default" else spec  # type: ignore[return-value]


def single_op(op: Op) -> bytes:
    """A model with one operator: In operands become graph inputs, outputs graph outputs."""
    return chain([op])


def chain(ops: Sequence[Op]) -> bytes:
    """A model of several operators; an `int` operand k means output 0 of operator k."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    graph_inputs: list[int] = []
    graph_outputs: list[int] = []
    produced: list[list[int]] = []
    consumed: set[int] = set()
    for number, op in enumerate(ops):
        operands: list[int] = []
        for position, spec in enumerate(op.inputs):
            name = f"op{number}_in{position}"
            if spec is None:
                operands.append(-1)
            elif isinstance(spec, int):
                operands.append(produced[spec][0])
                consumed.add(produced[spec][0])
            elif isinstance(spec, Const):
                if isinstance(spec.array, bytes | bytearray):
                    operands.append(
                        graph.add_tensor(
                            name,
                            list(spec.shape or ()),
                            spec.dtype,
                            data=bytes(spec.array),
                            quantization=spec.q,
                        )
                    )
                else:
                    array = np.asarray(spec.array)
                    operands.append(
                        graph.add_constant(name, array, spec.dtype, quantization=spec.q)
                    )
            elif isinstance(spec, Var):
                operands.append(
                    graph.add_tensor(
                        name,
                        list(spec.shape),
                        spec.dtype,
                        quantization=_q(spec.q, spec.dtype),
                        is_variable=True,
                    )
                )
            else:
                tensor = graph.add_tensor(
                    name, list(spec.shape), spec.dtype, quantization=_q(spec.q, spec.dtype)
                )
                operands.append(tensor)
                graph_inputs.append(tensor)
        results = [
            graph.add_tensor(
                f"op{number}_out{i}", list(o.shape), o.dtype, quantization=_q(o.q, o.dtype)
            )
            for i, o in enumerate(op.outputs)
        ]
        intermediates = [
            graph.add_tensor(
                f"op{number}_tmp{i}", list(t.shape), t.dtype, quantization=_q(t.q, t.dtype)
            )
            for i, t in enumerate(op.intermediates)
        ]
        custom = None if op.custom is None else bytes(flexbuffers.Dumps(dict(op.custom)))
        graph.add_operator(
            op.opcode,
            operands,
            results,
            options=dict(op.options) or None,
            custom_options=custom,
            intermediates=intermediates,
            options_type=op.options_type,
        )
        produced.append(results)
    for results in produced:
        graph_outputs.extend(t for t in results if t not in consumed)
    graph.set_inputs(graph_inputs)
    graph.set_outputs(graph_outputs)
    return builder.build()
