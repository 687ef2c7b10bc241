"""FlatBuffer model builder: tensors, operators, subgraphs, signatures, metadata → .tflite bytes.

Written against the `tflite` schema package's generated builder functions and `flatbuffers.Builder`;
no TensorFlow. The builder checks only what would make the file itself unreadable (tensor and
subgraph indices out of range, numpy data that does not match its tensor); it accepts graphs the
runtimes may refuse or treat specially (an operator reading a tensor nobody writes, an output
nobody reads, variables, optional -1 inputs, raw constant bytes of any length) because tests need
exactly those.

Layout, chosen to match what the TFLite converter writes where it matters:
* buffer 0 is the empty buffer; every tensor without data points at it (the converter gives each
  activation its own empty buffer instead; both runtimes treat any empty buffer the same way);
* every buffer's data starts at a 16-byte aligned file offset, because TFLM reads weights in place
  and its kernels assume aligned data;
* operator codes appear in first-use order with `deprecated_builtin_code = min(code, 127)`, so old
  and new readers find the same operator;
* a builtin operator always gets its options table when the schema has one, filled with the
  defaults a converter would write (stride 1, softmax beta 1.0, ...) unless the caller overrides
  them: the runtimes read a missing table as all-zero options (stride 0, beta 0).

Identical shape vectors, quantization tables and option tables are written once and shared; the
format allows it, and it keeps a 20,000-operator model quick to build. Output is deterministic:
the same calls give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import flatbuffers
import numpy as np
import tflite as schema

from arenalens.errors import UsageError
from arenalens.ir import DTYPES_BY_NAME
from arenalens.tflite.builder_options import (
    DEFAULT_OPTIONS,
    OPTIONS_TYPES,
    merged_options,
    option_fields,
    options_module,
    options_table_for,
    union_code,
)
from arenalens.tflite.opcodes import BUILTIN_CODES
from arenalens.tflite.reader import BUFFER_DATA_ALIGNMENT, FILE_IDENTIFIER

# Where constant data starts, in bytes: the converter's alignment, and what TFLM's kernels assume.
# Builtin codes above this live only in `builtin_code`; the byte-sized deprecated field holds 127.
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127
_SCHEMA_VERSION = 3

# Numpy storage for each tensor type with a fixed element size (sub-byte and string types are
# passed as raw bytes).
NUMPY_DTYPES: Mapping[str, np.dtype[Any]] = MappingProxyType(
    {
        "FLOAT32": np.dtype("<f4"),
        "FLOAT16": np.dtype("<f2"),
        "FLOAT64": np.dtype("<f8"),
        "INT8": np.dtype("i1"),
        "UINT8": np.dtype("u1"),
        "INT16": np.dtype("<i2"),
        "UINT16": np.dtype("<u2"),
        "INT32": np.dtype("<i4"),
        "UINT32": np.dtype("<u4"),
        "INT64": np.dtype("<i8"),
        "UINT64": np.dtype("<u8"),
        "BOOL": np.dtype("?"),
        "COMPLEX64": np.dtype("<c8"),
        "COMPLEX128": np.dtype("<c16"),
    }
)


_BLOCKWISE_DETAILS = 2  # QuantizationDetails.BlockwiseQuantization


@dataclass(frozen=True, slots=True)
class QuantizationSpec:
    """Affine quantization: one scale and zero point, or one per channel along `axis`."""

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int = 0
    # Blockwise quantization's details (schema BlockwiseQuantization): the scales tensor, the
    # zero-points tensor (-1: none) and the block size; with no scales or zero points here.
    blockwise: tuple[int, int, int] | None = None


def blockwise_quantization(scales: int, zero_points: int, block_size: int) -> QuantizationSpec:
    """An int4 filter's blockwise quantization: its scales tensor (fp16, one per block of each
    output channel), zero-points tensor (-1: none) and block size."""
    return QuantizationSpec((), (), 0, (scales, zero_points, block_size))


def quantization(
    scale: float | Sequence[float] | np.ndarray,
    zero_point: int | Sequence[int] | np.ndarray = 0,
    *,
    axis: int = 0,
) -> QuantizationSpec:
    """Scale(s) and zero point(s) → QuantizationSpec; one zero point is repeated per scale."""
    scales = tuple(float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64)))
    zero_points = tuple(int(z) for z in np.atleast_1d(np.asarray(zero_point, dtype=np.int64)))
    if len(zero_points) == 1 and len(scales) > 1:
        # Both runtimes want one zero point per scale for per-channel tensors.
        zero_points = zero_points * len(scales)
    if not scales or len(zero_points) != len(scales):
        raise UsageError(
            f"quantization needs one zero point per scale (got {len(scales)} scales, "
            f"{len(zero_points)} zero points)"
        )
    return QuantizationSpec(scales, zero_points, axis)


@dataclass(frozen=True, slots=True)
class TensorRecord:
    """One tensor as it will be written: name, shape, type code, buffer and flags."""

    name: str
    shape: tuple[int, ...]
    type_code: int
    buffer: int
    quantization: QuantizationSpec | None
    is_variable: bool
    shape_signature: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class OperatorRecord:
    """One operator as it will be written: opcode index, tensor indices and options."""

    opcode_index: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options_type: str | None  # schema table name ("Conv2DOptions"), None for no table
    options: tuple[tuple[str, Any], ...]  # sorted (snake_case field, value) pairs
    custom_options: bytes | None


@dataclass(frozen=True, slots=True)
class SignatureRecord:
    """One signature def; None inputs/outputs mean 'the subgraph's, keyed by tensor name'."""

    key: str
    subgraph: int
    inputs: tuple[tuple[str, int], ...] | None
    outputs: tuple[tuple[str, int], ...] | None


class SubgraphBuilder:
    """Collects one subgraph's tensors, operators, inputs and outputs; made by ModelBuilder."""

    def __init__(self, model: ModelBuilder, index: int, name: str) -> None:
        self.model = model
        self.index = index
        self.name = name
        self.tensors: list[TensorRecord] = []
        self.operators: list[OperatorRecord] = []
        self.inputs: tuple[int, ...] = ()
        self.outputs: tuple[int, ...] = ()

    def add_tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str = "FLOAT32",
        *,
        data: bytes | np.ndarray | None = None,
        buffer: int | None = None,
        quantization: QuantizationSpec | None = None,
        is_variable: bool = False,
        shape_signature: Sequence[int] | None = None,
    ) -> int:
        """Name, shape, dtype and optional data → the new tensor's index in this subgraph.

        `data` as a numpy array must match `shape` and `dtype`; as raw bytes it is written as
        given (sub-byte types, strings, and deliberately wrong sizes for tests). `buffer` shares
        an existing buffer instead (from `ModelBuilder.add_buffer`).
        """
        type_code = _type_code(dtype)
        shape_tuple = tuple(int(d) for d in shape)
        if data is not None and buffer is not None:
            raise UsageError(f"tensor '{name}': give data or buffer, not both")
        if data is not None:
            buffer = self.model.add_buffer(_tensor_bytes(name, shape_tuple, dtype, data))
        elif buffer is None:
            buffer = 0
        elif not 0 <= buffer < len(self.model.buffers):
            raise UsageError(
                f"tensor '{name}': buffer {buffer} does not exist "
                f"(model has {len(self.model.buffers)} buffers)"
            )
        signature = None if shape_signature is None else tuple(int(d) for d in shape_signature)
        self.tensors.append(
            TensorRecord(name, shape_tuple, type_code, buffer, quantization, is_variable, signature)
        )
        return len(self.tensors) - 1

    def add_constant(
        self,
        name: str,
        array: np.ndarray,
        dtype: str | None = None,
        *,
        quantization: QuantizationSpec | None = None,
    ) -> int:
        """A numpy array → a constant tensor of its shape (dtype taken from the array if None)."""
        type_name = dtype if dtype is not None else _type_name_for_numpy(name, array.dtype)
        return self.add_tensor(name, array.shape, type_name, data=array, quantization=quantization)

    def add_operator(
        self,
        opcode: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        *,
        options: Mapping[str, Any] | None = None,
        intermediates: Sequence[int] = (),
        options_type: str | None = None,
        custom_options: bytes | None = None,
        version: int = 1,
    ) -> int:
        """Opcode ('CONV_2D' or 'CUSTOM:<code>') and tensor indices → the new operator's index.

        `options` uses the reader's snake_case field names ({'stride_w': 2, 'padding': 'SAME'});
        enum fields take schema names or numbers. `options_type` overrides the table the opcode
        implies ('NONE' writes no table). Inputs may be -1 (an omitted optional input).
        """
        opcode_index = self.model.opcode_index(opcode, version)
        input_tuple = self._checked_indices(opcode, "input", inputs, allow_omitted=True)
        output_tuple = self._checked_indices(opcode, "output", outputs, allow_omitted=False)
        intermediate_tuple = self._checked_indices(
            opcode, "intermediate", intermediates, allow_omitted=False
        )
        table = options_table_for(opcode, options_type)
        merged = merged_options(opcode, table, options, len(output_tuple))
        self.operators.append(
            OperatorRecord(
                opcode_index,
                input_tuple,
                output_tuple,
                intermediate_tuple,
                table,
                merged,
                custom_options,
            )
        )
        return len(self.operators) - 1

    def set_inputs(self, tensors: Iterable[int]) -> None:
        """Tensor indices → this subgraph's inputs, in order."""
        self.inputs = self._checked_indices("subgraph", "input", tensors, allow_omitted=False)

    def set_outputs(self, tensors: Iterable[int]) -> None:
        """Tensor indices → this subgraph's outputs, in order."""
        self.outputs = self._checked_indices("subgraph", "output", tensors, allow_omitted=False)

    def shape(self, tensor: int) -> tuple[int, ...]:
        """Tensor index → its shape."""
        return self.tensors[tensor].shape

    def _checked_indices(
        self, owner: str, role: str, indices: Iterable[int], *, allow_omitted: bool
    ) -> tuple[int, ...]:
        checked = tuple(int(i) for i in indices)
        count = len(self.tensors)
        for tensor_index in checked:
            if tensor_index == -1 and allow_omitted:
                continue
            if not 0 <= tensor_index < count:
                raise UsageError(
                    f"subgraph {self.index} {owner} {role} names tensor {tensor_index}, "
                    f"out of range (subgraph has {count} tensors)"
                )
        return checked


class ModelBuilder:
    """Collects a model's subgraphs, buffers, metadata and signatures; `build()` writes them."""

    def __init__(self, *, description: str = "arenalens builder") -> None:
        self.description = description
        self.subgraphs: list[SubgraphBuilder] = []
        self.buffers: list[bytes] = [b""]  # buffer 0: the empty buffer, by convention
        self.metadata: list[tuple[str, int]] = []
        self.signatures: list[SignatureRecord] = []
        # (builtin code, custom code, version) → opcode index, in first-use order.
        self.opcodes: dict[tuple[int, str | None, int], int] = {}

    def add_subgraph(self, name: str = "") -> SubgraphBuilder:
        """Name → a new, empty subgraph; the first one added is the model's main subgraph."""
        subgraph = SubgraphBuilder(self, len(self.subgraphs), name)
        self.subgraphs.append(subgraph)
        return subgraph

    def add_buffer(self, data: bytes = b"") -> int:
        """Bytes → the index of a new buffer holding them (tensors may share it)."""
        self.buffers.append(bytes(data))
        return len(self.buffers) - 1

    def add_metadata(self, name: str, data: bytes) -> int:
        """Name and bytes → a metadata entry; returns the index of the buffer holding the bytes."""
        buffer = self.add_buffer(data)
        self.metadata.append((name, buffer))
        return buffer

    def add_signature(
        self,
        key: str,
        subgraph: int | SubgraphBuilder,
        *,
        inputs: Mapping[str, int] | None = None,
        outputs: Mapping[str, int] | None = None,
    ) -> None:
        """A signature key, its subgraph and name → tensor maps (None: the subgraph's own I/O)."""
        index = subgraph.index if isinstance(subgraph, SubgraphBuilder) else int(subgraph)
        if not 0 <= index < len(self.subgraphs):
            raise UsageError(
                f"signature '{key}' names subgraph {index}, out of range "
                f"(model has {len(self.subgraphs)} subgraphs)"
            )
        self.signatures.append(
            SignatureRecord(
                key,
                index,
                None if inputs is None else tuple(inputs.items()),
                None if outputs is None else tuple(outputs.items()),
            )
        )

    def opcode_index(self, opcode: str, version: int = 1) -> int:
        """Opcode name ('CONV_2D', 'CUSTOM:<code>') and version → its operator-code index."""
        if opcode.startswith("CUSTOM:"):
            key: tuple[int, str | None, int] = (BUILTIN_CODES["CUSTOM"], opcode[7:], version)
        elif opcode in BUILTIN_CODES:
            key = (BUILTIN_CODES[opcode], None, version)
        else:
            raise UsageError(f"unknown builtin operator '{opcode}' (custom ops: 'CUSTOM:<code>')")
        return self.opcodes.setdefault(key, len(self.opcodes))

    def build(self) -> bytes:
        """The collected parts → .tflite FlatBuffer bytes (deterministic)."""
        if not self.subgraphs:
            raise UsageError("a model needs at least one subgraph")
        return _Writer(self).write()


# -- writing --------------------------------------------------------------------------------


class _Writer:
    """One FlatBuffer write: shares identical vectors and tables, aligns buffer data."""

    def __init__(self, model: ModelBuilder) -> None:
        self.model = model
        data_bytes = sum(len(b) + BUFFER_DATA_ALIGNMENT for b in model.buffers)
        item_count = sum(len(sg.tensors) + len(sg.operators) for sg in model.subgraphs)
        # Sized up front: growing the builder copies everything written so far.
        self.builder = flatbuffers.Builder(data_bytes + 192 * item_count + 1024)
        self.int_vectors: dict[tuple[str, tuple[Any, ...]], int] = {}
        self.quantization_tables: dict[QuantizationSpec, int] = {}
        self.option_tables: dict[tuple[str, tuple[tuple[str, Any], ...]], int] = {}

    def write(self) -> bytes:
        builder = self.builder
        # Buffers first: FlatBuffers are written back to front, so their data ends up last in the
        # file, after all tables, in index order.
        buffers = [self.buffer(data) for data in reversed(self.model.buffers)][::-1]
        buffers_vector = self.offset_vector(buffers)
        metadata_vector = self.offset_vector([self.metadata(n, b) for n, b in self.model.metadata])
        signatures_vector = self.offset_vector(
            [self.signature(record) for record in self.model.signatures]
        )
        subgraphs_vector = self.offset_vector([self.subgraph(sg) for sg in self.model.subgraphs])
        codes_vector = self.offset_vector([self.operator_code(*key) for key in self.model.opcodes])
        description = builder.CreateString(self.model.description)
        schema.ModelStart(builder)
        schema.ModelAddVersion(builder, _SCHEMA_VERSION)
        schema.ModelAddOperatorCodes(builder, codes_vector)
        schema.ModelAddSubgraphs(builder, subgraphs_vector)
        schema.ModelAddDescription(builder, description)
        schema.ModelAddBuffers(builder, buffers_vector)
        if self.model.metadata:
            schema.ModelAddMetadata(builder, metadata_vector)
        if self.model.signatures:
            schema.ModelAddSignatureDefs(builder, signatures_vector)
        builder.Finish(schema.ModelEnd(builder), file_identifier=FILE_IDENTIFIER)
        return bytes(builder.Output())

    # -- vectors ---------------------------------------------------------------------------
    def offset_vector(self, offsets: Sequence[int]) -> int:
        builder = self.builder
        builder.StartVector(4, len(offsets), 4)
        for offset in reversed(offsets):
            builder.PrependUOffsetTRelative(offset)
        return int(builder.EndVector())

    def number_vector(self, values: Sequence[Any], numpy_dtype: str) -> int:
        key = (numpy_dtype, tuple(values))
        found = self.int_vectors.get(key)
        if found is None:
            found = self.builder.CreateNumpyVector(np.asarray(values, dtype=numpy_dtype))
            self.int_vectors[key] = found
        return found

    def aligned_bytes(self, data: bytes) -> int:
        builder = self.builder
        builder.StartVector(1, len(data), BUFFER_DATA_ALIGNMENT)
        builder.head = builder.head - len(data)
        builder.Bytes[builder.head : builder.head + len(data)] = data
        return int(builder.EndVector())

    # -- tables ----------------------------------------------------------------------------
    def buffer(self, data: bytes) -> int:
        builder = self.builder
        vector = self.aligned_bytes(data) if data else None
        schema.BufferStart(builder)
        if vector is not None:
            schema.BufferAddData(builder, vector)
        return int(schema.BufferEnd(builder))

    def metadata(self, name: str, buffer: int) -> int:
        builder = self.builder
        name_offset = builder.CreateString(name)
        schema.MetadataStart(builder)
        schema.MetadataAddName(builder, name_offset)
        schema.MetadataAddBuffer(builder, buffer)
        return int(schema.MetadataEnd(builder))

    def signature(self, record: SignatureRecord) -> int:
        builder = self.builder
        subgraph = self.model.subgraphs[record.subgraph]
        inputs = record.inputs if record.inputs is not None else _named(subgraph, subgraph.inputs)
        outputs = (
            record.outputs if record.outputs is not None else _named(subgraph, subgraph.outputs)
        )
        inputs_vector = self.offset_vector([self.tensor_map(n, i) for n, i in inputs])
        outputs_vector = self.offset_vector([self.tensor_map(n, i) for n, i in outputs])
        key = builder.CreateString(record.key)
        schema.SignatureDefStart(builder)
        schema.SignatureDefAddInputs(builder, inputs_vector)
        schema.SignatureDefAddOutputs(builder, outputs_vector)
        schema.SignatureDefAddSignatureKey(builder, key)
        schema.SignatureDefAddSubgraphIndex(builder, record.subgraph)
        return int(schema.SignatureDefEnd(builder))

    def tensor_map(self, name: str, tensor: int) -> int:
        builder = self.builder
        name_offset = builder.CreateString(name)
        schema.TensorMapStart(builder)
        schema.TensorMapAddName(builder, name_offset)
        schema.TensorMapAddTensorIndex(builder, tensor)
        return int(schema.TensorMapEnd(builder))

    def operator_code(self, builtin_code: int, custom_code: str | None, version: int) -> int:
        builder = self.builder
        custom = builder.CreateString(custom_code) if custom_code is not None else None
        schema.OperatorCodeStart(builder)
        schema.OperatorCodeAddDeprecatedBuiltinCode(
            builder, min(builtin_code, _PLACEHOLDER_FOR_GREATER_OP_CODES)
        )
        if custom is not None:
            schema.OperatorCodeAddCustomCode(builder, custom)
        schema.OperatorCodeAddVersion(builder, version)
        schema.OperatorCodeAddBuiltinCode(builder, builtin_code)
        return int(schema.OperatorCodeEnd(builder))

    def subgraph(self, subgraph: SubgraphBuilder) -> int:
        builder = self.builder
        tensors = self.offset_vector([self.tensor(record) for record in subgraph.tensors])
        operators = self.offset_vector([self.operator(record) for record in subgraph.operators])
        inputs = self.number_vector(subgraph.inputs, "<i4")
        outputs = self.number_vector(subgraph.outputs, "<i4")
        name = builder.CreateString(subgraph.name)
        schema.SubGraphStart(builder)
        schema.SubGraphAddTensors(builder, tensors)
        schema.SubGraphAddInputs(builder, inputs)
        schema.SubGraphAddOutputs(builder, outputs)
        schema.SubGraphAddOperators(builder, operators)
        schema.SubGraphAddName(builder, name)
        return int(schema.SubGraphEnd(builder))

    def tensor(self, record: TensorRecord) -> int:
        builder = self.builder
        shape = self.number_vector(record.shape, "<i4")
        signature = (
            None
            if record.shape_signature is None
            else self.number_vector(record.shape_signature, "<i4")
        )
        quantization = (
            None if record.quantization is None else self.quantization(record.quantization)
        )
        name = builder.CreateString(record.name)
        schema.TensorStart(builder)
        schema.TensorAddShape(builder, shape)
        schema.TensorAddType(builder, record.type_code)
        schema.TensorAddBuffer(builder, record.buffer)
        schema.TensorAddName(builder, name)
        if quantization is not None:
            schema.TensorAddQuantization(builder, quantization)
        if record.is_variable:
            schema.TensorAddIsVariable(builder, True)
        if signature is not None:
            schema.TensorAddShapeSignature(builder, signature)
        return int(schema.TensorEnd(builder))

    def quantization(self, spec: QuantizationSpec) -> int:
        found = self.quantization_tables.get(spec)
        if found is not None:
            return found
        builder = self.builder
        details = None
        if spec.blockwise is not None:
            # The installed schema package predates BlockwiseQuantization (QuantizationDetails
            # 2): its three int fields written by hand.
            builder.StartObject(3)
            for slot, value in enumerate(spec.blockwise):
                builder.PrependInt32Slot(slot, value, 0)
            details = builder.EndObject()
        affine = spec.blockwise is None  # its vectors written even when empty
        scales = self.number_vector(spec.scales, "<f4") if affine or spec.scales else None
        zero_points = (
            self.number_vector(spec.zero_points, "<i8") if affine or spec.zero_points else None
        )
        schema.QuantizationParametersStart(builder)
        if scales is not None:
            schema.QuantizationParametersAddScale(builder, scales)
        if zero_points is not None:
            schema.QuantizationParametersAddZeroPoint(builder, zero_points)
        if details is not None:
            schema.QuantizationParametersAddDetailsType(builder, _BLOCKWISE_DETAILS)
            schema.QuantizationParametersAddDetails(builder, details)
        schema.QuantizationParametersAddQuantizedDimension(builder, spec.axis)
        found = int(schema.QuantizationParametersEnd(builder))
        self.quantization_tables[spec] = found
        return found

    def operator(self, record: OperatorRecord) -> int:
        builder = self.builder
        inputs = self.number_vector(record.inputs, "<i4")
        outputs = self.number_vector(record.outputs, "<i4")
        intermediates = (
            self.number_vector(record.intermediates, "<i4") if record.intermediates else None
        )
        custom = (
            builder.CreateByteVector(record.custom_options)
            if record.custom_options is not None
            else None
        )
        options = None
        if record.options_type is not None:
            options = self.options_table(record.options_type, record.options)
        schema.OperatorStart(builder)
        schema.OperatorAddOpcodeIndex(builder, record.opcode_index)
        schema.OperatorAddInputs(builder, inputs)
        schema.OperatorAddOutputs(builder, outputs)
        if options is not None and record.options_type is not None:
            union, type_code = union_code(record.options_type)
            if union == 1:
                schema.OperatorAddBuiltinOptionsType(builder, type_code)
                schema.OperatorAddBuiltinOptions(builder, options)
            else:
                schema.OperatorAddBuiltinOptions2Type(builder, type_code)
                schema.OperatorAddBuiltinOptions2(builder, options)
        if custom is not None:
            schema.OperatorAddCustomOptions(builder, custom)
        if intermediates is not None:
            schema.OperatorAddIntermediates(builder, intermediates)
        return int(schema.OperatorEnd(builder))

    def options_table(self, table: str, options: tuple[tuple[str, Any], ...]) -> int:
        key = (table, options)
        found = self.option_tables.get(key)
        if found is not None:
            return found
        builder = self.builder
        fields = option_fields(table)
        # Strings and vectors must be complete before the table starts (no nesting).
        prepared: list[tuple[Callable[[Any, Any], None], Any]] = []
        for name, value in options:
            field = fields[name]
            if field.kind == "string":
                prepared.append((field.add, builder.CreateString(str(value))))
            elif field.kind == "vector":
                prepared.append((field.add, self.number_vector(value, field.numpy_dtype)))
            else:
                prepared.append((field.add, value))
        module = options_module(table)
        getattr(module, f"{table}Start")(builder)
        for add, value in prepared:
            add(builder, value)
        found = int(getattr(module, f"{table}End")(builder))
        self.option_tables[key] = found
        return found


def _named(subgraph: SubgraphBuilder, tensors: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    return tuple((subgraph.tensors[t].name, t) for t in tensors)


def _type_code(dtype: str) -> int:
    found = DTYPES_BY_NAME.get(dtype)
    if found is None:
        raise UsageError(f"unknown tensor type '{dtype}' (known: {', '.join(DTYPES_BY_NAME)})")
    return found.code


def _type_name_for_numpy(name: str, numpy_dtype: np.dtype[Any]) -> str:
    for type_name, candidate in NUMPY_DTYPES.items():
        if candidate == numpy_dtype.newbyteorder("<") or candidate == numpy_dtype:
            return type_name
    raise UsageError(f"tensor '{name}': no TFLite type for numpy dtype {numpy_dtype}")


def _tensor_bytes(name: str, shape: tuple[int, ...], dtype: str, data: bytes | np.ndarray) -> bytes:
    """Constant data → little-endian bytes; numpy arrays are checked against shape and type."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    expected = NUMPY_DTYPES.get(dtype)
    if expected is None:
        raise UsageError(f"tensor '{name}': pass {dtype} data as raw bytes")
    if data.dtype.kind != expected.kind or data.dtype.itemsize != expected.itemsize:
        raise UsageError(f"tensor '{name}': data is {data.dtype}, tensor type is {dtype}")
    if tuple(data.shape) != shape:
        raise UsageError(f"tensor '{name}': data shape {list(data.shape)} != shape {list(shape)}")
    return np.ascontiguousarray(data, dtype=expected).tobytes()


__all__ = [
    "DEFAULT_OPTIONS",
    "NUMPY_DTYPES",
    "OPTIONS_TYPES",
    "ModelBuilder",
    "OperatorRecord",
    "QuantizationSpec",
    "SignatureRecord",
    "SubgraphBuilder",
    "TensorRecord",
    "quantization",
]
