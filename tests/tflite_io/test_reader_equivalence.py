"""The reader's model against the `tflite` package's generated accessors, field by field.

The reader reads each table's inline fields in one `struct` read per vtable layout
(`tables.read_tables`) and the vectors inline; the schema package reads every field through its own
generated code. Both must give the same model: on every shared model, every example, the
synthetic test models and random builder models (hypothesis: shapes, signatures, per-channel
quantization, names, variables, shared and empty buffers, omitted inputs, intermediates).
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import tflite
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.tflm_synthetic as synthetic
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.ir import Model
from arenalens.tflite.builder import ModelBuilder, quantization
from arenalens.tflite.reader import _Parser, parse_model
from tests.conftest import SHARED_MODELS, shared_params


def _schema_view(data: bytes) -> Any:
    """The model as the schema package reads it: per subgraph, each tensor's and operator's
    fields the reader keeps, and each buffer's data length."""
    model = tflite.Model.GetRootAs(data, 0)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    buffers = []
    for index in range(model.BuffersLength()):
        buffer = model.Buffers(index)
        external = buffer.Offset() > 1
        buffers.append((buffer.Size() if external else buffer.DataLength(), external))
    subgraphs = []
    for sg_index in range(model.SubgraphsLength()):
        subgraph = model.Subgraphs(sg_index)
        tensors = []
        for t_index in range(subgraph.TensorsLength()):
            tensor = subgraph.Tensors(t_index)
            shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
            signature = shape
            if not tensor.ShapeSignatureIsNone():
                signature = tuple(int(d) for d in tensor.ShapeSignatureAsNumpy())
            quantized = None
            parameters = tensor.Quantization()
            if parameters is not None and parameters.ScaleLength():
                zero_point = int(parameters.ZeroPoint(0)) if parameters.ZeroPointLength() else None
                quantized = (
                    float(parameters.Scale(0)),
                    zero_point,
                    parameters.ScaleLength(),
                    parameters.QuantizedDimension(),
                )
            tensors.append(
                (
                    (tensor.Name() or b"").decode("utf-8", errors="replace"),
                    shape,
                    signature,
                    tensor.Type(),
                    tensor.Buffer(),
                    bool(tensor.IsVariable()),
                    quantized,
                    tensor.Sparsity() is not None,
                )
            )
        operators = []
        for o_index in range(subgraph.OperatorsLength()):
            operator = subgraph.Operators(o_index)
            code = codes[operator.OpcodeIndex()]
            builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())

            def indices(length: int, item: Any) -> tuple[int, ...]:
                return tuple(int(item(i)) for i in range(length))

            custom = (code.CustomCode() or b"").decode("utf-8", errors="replace") or None
            operators.append(
                (
                    builtin,
                    custom,
                    indices(operator.InputsLength(), operator.Inputs),
                    indices(operator.OutputsLength(), operator.Outputs),
                    indices(operator.IntermediatesLength(), operator.Intermediates),
                    code.Version(),
                )
            )
        subgraphs.append((tensors, operators))
    return subgraphs, buffers


def _reader_view(model: Model) -> Any:
    """The same fields from the reader's model."""
    subgraphs = []
    for subgraph in model.subgraphs:
        tensors = [
            (
                tensor.name,
                tensor.shape,
                tensor.shape_signature,
                tensor.dtype.code,
                tensor.buffer,
                tensor.is_variable,
                None if tensor.quantization is None else tuple(tensor.quantization),
                tensor.has_sparsity,
            )
            for tensor in subgraph.tensors
        ]
        operators = [
            (
                op.builtin_code,
                op.custom_code,
                op.inputs,
                op.outputs,
                op.intermediates,
                op.version,
            )
            for op in subgraph.operators
        ]
        subgraphs.append((tensors, operators))
    buffers = [(ref.nbytes, ref.external) for ref in model.buffers]
    return subgraphs, buffers


def _same(data: bytes, label: str) -> None:
    model = parse_model(data, label)
    assert _reader_view(model) == _schema_view(data)
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            # Constant and kind follow from the buffer the schema names.
            assert tensor.has_data == (
                tensor.buffer < len(model.buffers) and model.buffers[tensor.buffer].nbytes > 0
            )


@pytest.mark.parametrize("name", shared_params())
def test_shared_models_read_as_the_schema_package_reads_them(name: str) -> None:
    _same((SHARED_MODELS / name).read_bytes(), name)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_read_as_the_schema_package_reads_them(name: str) -> None:
    _same(example_bytes(name), name)


def _synthetic_builders() -> list[str]:
    names = []
    for name, function in vars(synthetic).items():
        if not inspect.isfunction(function) or function.__module__ != synthetic.__name__:
            continue
        parameters = inspect.signature(function).parameters.values()
        if name.startswith("_") or any(p.default is inspect.Parameter.empty for p in parameters):
            continue
        names.append(name)
    return sorted(names)


@pytest.mark.parametrize("name", _synthetic_builders())
def test_synthetic_models_read_as_the_schema_package_reads_them(name: str) -> None:
    data = getattr(synthetic, name)()
    if isinstance(data, bytes):
        _same(data, name)


_DTYPES = ("FLOAT32", "INT8", "INT16", "INT32", "UINT8", "BOOL", "INT64")
_SIZE = {"FLOAT32": 4, "INT8": 1, "INT16": 2, "INT32": 4, "UINT8": 1, "BOOL": 1, "INT64": 8}


@st.composite
def _models(draw: st.DrawFn) -> bytes:
    builder = ModelBuilder(description=draw(st.text(max_size=8)))
    graph = builder.add_subgraph(draw(st.text(max_size=6)))
    shared = builder.add_buffer(b"\x01" * 64)
    count = draw(st.integers(1, 12))
    for index in range(count):
        shape: list[int] = draw(st.lists(st.integers(0, 9), max_size=5))
        dtype = draw(st.sampled_from(_DTYPES))
        signature: list[int] | None = None
        dynamic: bool = draw(st.booleans())
        if shape and dynamic:
            signature = [-1 if draw(st.booleans()) else d for d in shape]
        spec = None
        if draw(st.booleans()):
            channels = draw(st.integers(1, 4))
            scales = draw(st.lists(st.floats(1e-6, 10.0), min_size=channels, max_size=channels))
            zero_points = draw(
                st.lists(st.integers(-128, 127), min_size=channels, max_size=channels)
            )
            spec = quantization(scales, zero_points, axis=draw(st.integers(0, 3)))
        data: bytes | None = None
        buffer: int | None = None
        choice = draw(st.sampled_from(["none", "data", "shared", "empty"]))
        if choice == "data":
            elements = 1
            for dim in shape:
                elements *= dim
            data = bytes(elements * _SIZE[dtype])
        elif choice == "shared":
            buffer = shared
        elif choice == "empty":
            buffer = builder.add_buffer(b"")
        graph.add_tensor(
            draw(st.text(max_size=10)) + str(index),
            shape,
            dtype,
            data=data,
            buffer=buffer,
            quantization=spec,
            is_variable=choice == "none" and draw(st.booleans()),
            shape_signature=signature,
        )
    tensor = st.integers(0, count - 1)
    for _ in range(draw(st.integers(0, 6))):
        inputs = draw(st.lists(st.one_of(tensor, st.just(-1)), max_size=4))
        outputs = draw(st.lists(tensor, min_size=1, max_size=2))
        intermediates = draw(st.lists(tensor, max_size=2))
        opcode = draw(st.sampled_from(["ADD", "RELU", "CONCATENATION", "CUSTOM:Mine"]))
        graph.add_operator(opcode, inputs, outputs, intermediates=intermediates)
    graph.set_inputs(draw(st.lists(tensor, max_size=2, unique=True)))
    graph.set_outputs(draw(st.lists(tensor, max_size=2, unique=True)))
    return builder.build()


@settings(max_examples=30, deadline=None)
@given(_models())
def test_random_models_read_as_the_schema_package_reads_them(data: bytes) -> None:
    # What was read, before `check_model` (random operators may read a tensor written later).
    model = _Parser(data, "random").model()
    assert _reader_view(model) == _schema_view(data)
