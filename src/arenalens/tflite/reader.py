"""FlatBuffer reader: .tflite path or bytes → checked `ir.Model`, without TensorFlow.

The file is memory-mapped, never copied: weights stay in the map and the IR records where each
buffer's bytes are. Every vector length is checked against the file size before it is walked, so a
small hostile file cannot claim millions of entries; any malformed read becomes a `ModelError`.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arenalens.errors import ModelError
from arenalens.ir import (
    CONTROL_FLOW_OPTION_FIELDS,
    MAX_TENSOR_BYTES,
    BufferRef,
    Metadata,
    Model,
    OfflinePlan,
    Operator,
    PlanRecord,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TensorKind,
    check_model,
    dtype_for_code,
)
from arenalens.tflite.opcodes import LazyOptions, OptionsKey, builtin_name
from arenalens.tflite.plan_record import PLAN_RECORD_METADATA, decode_plan_record
from arenalens.tflite.tables import MalformedTableError, TableView
from arenalens.units import format_bytes_exact

_U32 = struct.Struct("<I")

# FlatBuffers let many tables point at one vector or table, so a small file can describe a huge
# model: 20,000 operators sharing one 20,000-entry inputs vector are 400 million tensor
# references in 300 KB. The reader counts what it decodes (tensors, operators, subgraphs and
# their index and shape entries) and refuses a file that decodes to more than this many items
# per byte (plus a floor for tiny files). Real models decode to under 0.2 items per byte, and
# the builder's, which share identical shape vectors, to under 0.3.
MAX_ITEMS_PER_BYTE = 0.5
MIN_ITEM_BUDGET = 100_000
# A decoded table (tensor, operator, subgraph) costs about as much time as four index entries.
TABLE_ITEMS = 4

FILE_IDENTIFIER = b"TFL3"
# schema.fbs: `Buffer.data` is `force_align: 16`, so TFLM can read weights in place. A rule of the
# file's layout; TFLM's arena alignment (`runtimes.tflm.alignment`) is a different idea.
BUFFER_DATA_ALIGNMENT = 16
OFFLINE_PLAN_METADATA = "OfflineMemoryAllocation"
_METADATA_OFFLINE_HEADER_WORDS = 3
# Exceptions the FlatBuffers runtime raises when offsets point outside the file or types are off.
_MALFORMED = (
    MalformedTableError,
    struct.error,
    IndexError,
    TypeError,
    ValueError,
    OverflowError,
    UnicodeDecodeError,
    AttributeError,
    RecursionError,
)


def load_model(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview, *, strict: bool = False
) -> Model:
    """A .tflite path or its bytes → a checked Model; raises ModelError naming the source.

    Operators that read a tensor nothing writes are accepted (both runtimes tolerate them and
    Vela's scratch tensors are exactly that; `arenalens diagnose` reports them); `strict=True`
    refuses them too.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        return parse_model(bytes(source), "<bytes>", strict=strict)
    path = Path(source)
    label = str(source)
    data = _map_file(path, label)
    return parse_model(data, label, strict=strict)


def _map_file(path: Path, label: str) -> Any:
    if not path.exists():
        raise ModelError(label, "no such file")
    if path.is_dir():
        if (path / "saved_model.pb").exists() or (path / "saved_model.pbtxt").exists():
            raise ModelError(
                label,
                "a TensorFlow SavedModel folder, not a TFLite model: convert it with "
                "tf.lite.TFLiteConverter.from_saved_model(folder) and pass the .tflite file",
            )
        raise ModelError(label, "is a directory, not a .tflite file")
    try:
        size = path.stat().st_size
        if size == 0:
            raise ModelError(label, "empty file (0 bytes), not a .tflite model")
        with path.open("rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except PermissionError as error:
        raise ModelError(label, "permission denied") from error
    except OSError as error:
        raise ModelError(label, f"cannot read file ({error.strerror or error})") from error


_CONVERT_KERAS = (
    "convert it with tf.lite.TFLiteConverter.from_keras_model(tf.keras.models.load_model(...)) "
    "and pass the .tflite file"
)


def _other_format(head: bytes, label: str) -> str:
    """A model file of another framework (by its magic bytes or name) → how to convert it."""
    name = label.lower()
    if head.startswith(b"\x89HDF\r\n\x1a\n") or name.endswith((".h5", ".hdf5")):
        return f"a Keras HDF5 model, not a TFLite model: {_CONVERT_KERAS}"
    if head.startswith(b"PK\x03\x04") or name.endswith((".zip", ".keras")):
        return (
            "a zip archive (a .keras model, or a zipped SavedModel / .tflite), not a TFLite "
            f"model: unzip it and pass the .tflite file inside, or {_CONVERT_KERAS}"
        )
    if name.endswith(".onnx"):
        return (
            "an ONNX model, not a TFLite model: convert it to TFLite first (e.g. onnx2tf, or "
            "ai-edge-torch from the PyTorch source) and pass the .tflite file"
        )
    if name.endswith(".pb"):
        return (
            "a TensorFlow graph (SavedModel .pb), not a TFLite model: convert its folder with "
            "tf.lite.TFLiteConverter.from_saved_model(folder) and pass the .tflite file"
        )
    if name.endswith((".pt", ".pth")):
        return (
            "a PyTorch checkpoint, not a TFLite model: export it with ai-edge-torch and pass the "
            ".tflite file"
        )
    return ""


def parse_model(data: Any, label: str, *, strict: bool = False) -> Model:
    """FlatBuffer bytes (or a read-only map) → checked Model."""
    size = len(data)
    if size < 8:
        raise ModelError(label, f"file too small for a FlatBuffer ({format_bytes_exact(size)})")
    if bytes(data[4:8]) != FILE_IDENTIFIER:
        found = bytes(data[4:8])
        known = _other_format(bytes(data[:16]), label)
        if known:
            raise ModelError(label, known)
        raise ModelError(
            label, f"not a TFLite model: file identifier is {found!r}, expected b'TFL3'"
        )
    try:
        model = _Parser(data, label).model()
    except ModelError:
        raise
    except _MALFORMED as error:
        raise ModelError(label, f"malformed FlatBuffer ({type(error).__name__}: {error})") from None
    except MemoryError:
        raise ModelError(label, "malformed FlatBuffer (implausible sizes)") from None
    check_model(model, strict=strict)
    return model


# Field slots (vtable offsets) of the schema tables the reader walks (schema.fbs field order).
class _ModelSlots:
    VERSION, OPERATOR_CODES, SUBGRAPHS, DESCRIPTION, BUFFERS = 4, 6, 8, 10, 12
    METADATA, SIGNATURE_DEFS = 16, 18


class _SubgraphSlots:
    TENSORS, INPUTS, OUTPUTS, OPERATORS, NAME = 4, 6, 8, 10, 12


class _TensorSlots:
    SHAPE, TYPE, BUFFER, NAME, QUANTIZATION, IS_VARIABLE, SPARSITY, SHAPE_SIGNATURE = (
        4,
        6,
        8,
        10,
        12,
        14,
        16,
        18,
    )


class _QuantizationSlots:
    SCALE, ZERO_POINT, QUANTIZED_DIMENSION = 8, 10, 16


class _OperatorSlots:
    OPCODE_INDEX, INPUTS, OUTPUTS, OPTIONS_TYPE, OPTIONS, INTERMEDIATES = 4, 6, 8, 10, 12, 20
    OPTIONS2_TYPE, OPTIONS2 = 26, 28
    CUSTOM_OPTIONS, LARGE_CUSTOM_OPTIONS_OFFSET, LARGE_CUSTOM_OPTIONS_SIZE = 14, 22, 24


class _OperatorCodeSlots:
    DEPRECATED_BUILTIN_CODE, CUSTOM_CODE, VERSION, BUILTIN_CODE = 4, 6, 8, 10


class _BufferSlots:
    DATA, OFFSET, SIZE = 4, 6, 8


class _SignatureSlots:
    INPUTS, OUTPUTS, KEY, SUBGRAPH_INDEX = 4, 6, 8, 12


@dataclass
class _Parser:
    data: Any
    label: str

    def __post_init__(self) -> None:
        self.size = len(self.data)
        self.options_cache: dict[OptionsKey, dict[str, Any]] = {}
        self.items = 0
        self.item_budget = MIN_ITEM_BUDGET + int(MAX_ITEMS_PER_BYTE * self.size)

    def fail(self, problem: str) -> ModelError:
        return ModelError(self.label, problem)

    def text(self, fb: TableView, slot: int) -> str:
        """A string field, charged by length (one shared long name must not decode 10^5 times)."""
        value = fb.string(slot)
        self.charge(len(value) >> 3)
        return value

    def charge(self, count: int) -> None:
        """Count decoded items; refuse a file that shares structure to decode far more."""
        self.items += count
        if self.items > self.item_budget:
            raise self.fail(
                f"decodes to more than {self.item_budget:,} tensors, operators and indices "
                f"from {format_bytes_exact(self.size)} (tables and vectors shared many times over)"
            )

    def root(self) -> TableView:
        return TableView(self.data, _U32.unpack_from(self.data, 0)[0], self.size)

    # -- model ------------------------------------------------------------------------
    def model(self) -> Model:
        root = self.root()
        buffers = tuple(
            self.buffer_ref(i, b) for i, b in enumerate(root.tables(_ModelSlots.BUFFERS))
        )
        opcode_rows = tuple(self.opcode(code) for code in root.tables(_ModelSlots.OPERATOR_CODES))
        fb_subgraphs = root.tables(_ModelSlots.SUBGRAPHS)
        if not fb_subgraphs:
            raise self.fail("model has no subgraphs")
        subgraphs = tuple(
            self.subgraph(index, fb, buffers, opcode_rows) for index, fb in enumerate(fb_subgraphs)
        )
        metadata = tuple(
            Metadata(self.text(entry, 4), entry.u32(6))
            for entry in root.tables(_ModelSlots.METADATA)
        )
        signatures = tuple(self.signature(sig) for sig in root.tables(_ModelSlots.SIGNATURE_DEFS))
        model = Model(
            source=self.label,
            version=root.u32(_ModelSlots.VERSION),
            description=self.text(root, _ModelSlots.DESCRIPTION),
            subgraphs=subgraphs,
            buffers=buffers,
            metadata=metadata,
            signature_defs=signatures,
            offline_plan=None,
            file_bytes=self.size,
            data=self.data,
        )
        offline = self.offline_plan(model)
        record = self.plan_record(model)
        if offline is None and record is None:
            return model
        return replace(model, offline_plan=offline, plan_record=record)

    def buffer_ref(self, index: int, fb: TableView) -> BufferRef:
        external_offset = fb.u64(_BufferSlots.OFFSET)
        # Offset 1 is the converter's placeholder for "not written yet": no data.
        if external_offset > 1:
            external_size = fb.u64(_BufferSlots.SIZE)
            if external_offset + external_size > self.size:
                raise self.fail(
                    f"buffer {index}: external data [{external_offset}, "
                    f"{external_offset + external_size}) lies beyond the end of the file "
                    f"({format_bytes_exact(self.size)})"
                )
            return BufferRef(index, external_offset, external_size, external=True)
        start, length = fb.vector(_BufferSlots.DATA, 1)
        return BufferRef(index, start, length, external=False)

    def opcode(self, code: TableView) -> tuple[str, int, int, str | None, int]:
        raw = code.i32(_OperatorCodeSlots.BUILTIN_CODE)
        builtin = max(raw, code.i8(_OperatorCodeSlots.DEPRECATED_BUILTIN_CODE))
        custom_name = self.text(code, _OperatorCodeSlots.CUSTOM_CODE) or None
        if builtin_name(builtin) == "CUSTOM" or custom_name:
            name = f"CUSTOM:{custom_name or ''}"
        else:
            name = builtin_name(builtin)
        return name, builtin, raw, custom_name, code.i32(_OperatorCodeSlots.VERSION, 1)

    def subgraph(
        self,
        index: int,
        fb: TableView,
        buffers: tuple[BufferRef, ...],
        opcodes: tuple[tuple[str, int, int, str | None, int], ...],
    ) -> Subgraph:
        inputs = fb.int32_vector(_SubgraphSlots.INPUTS) or ()
        outputs = fb.int32_vector(_SubgraphSlots.OUTPUTS) or ()
        input_set, output_set = set(inputs), set(outputs)
        where = f"subgraph {index}"
        tensor_tables = fb.tables(_SubgraphSlots.TENSORS)
        operator_tables = fb.tables(_SubgraphSlots.OPERATORS)
        tables = 1 + len(tensor_tables) + len(operator_tables)
        self.charge(TABLE_ITEMS * tables + len(inputs) + len(outputs))
        tensor = self.tensor
        tensors = tuple(
            tensor(i, fb=t, buffers=buffers, inputs=input_set, outputs=output_set, where=where)
            for i, t in enumerate(tensor_tables)
        )
        operators = tuple(
            self.operator(i, op, opcodes, where) for i, op in enumerate(operator_tables)
        )
        return Subgraph(
            index=index,
            name=self.text(fb, _SubgraphSlots.NAME),
            tensors=tensors,
            operators=operators,
            inputs=inputs,
            outputs=outputs,
        )

    def tensor(
        self,
        index: int,
        *,
        fb: TableView,
        buffers: tuple[BufferRef, ...],
        inputs: set[int],
        outputs: set[int],
        where: str,
    ) -> Tensor:
        # One call per tensor: the Tensor is built from positional arguments (a third faster
        # than keywords), and the "subgraph S tensor T" label only for an error.
        shape = fb.int32_vector(_TensorSlots.SHAPE) or ()
        # Without a shape_signature the shape is fully known: report it as the signature, as the
        # TFLite interpreter's tensor details do.
        signature = fb.int32_vector(_TensorSlots.SHAPE_SIGNATURE)
        self.charge(len(shape) + (len(signature) if signature else 0))
        dtype = dtype_for_code(fb.i8(_TensorSlots.TYPE))
        buffer_index = fb.u32(_TensorSlots.BUFFER)
        # With no buffers at all, only the default index 0 ("no data") is meaningful.
        if buffer_index >= max(len(buffers), 1):
            raise self.fail(
                f"{where} tensor {index}: buffer index {buffer_index} out of range "
                f"(model has {len(buffers)} buffers)"
            )
        has_data = buffer_index < len(buffers) and buffers[buffer_index].nbytes > 0
        is_variable = bool(fb.u8(_TensorSlots.IS_VARIABLE))
        if shape:
            _check_shape_size(self.label, where, index, shape, dtype.element_bytes or 1)
        is_input, is_output = index in inputs, index in outputs
        name = self.text(fb, _TensorSlots.NAME)
        quantization = fb.table(_TensorSlots.QUANTIZATION)
        return Tensor(
            index,
            name,
            shape,
            shape if signature is None else signature,
            dtype,
            buffer_index,
            has_data,
            is_variable,
            _kind(has_data, is_variable, is_input, is_output),
            is_input,
            is_output,
            None if quantization is None else self.quantization(quantization),
            bool(fb.field(_TensorSlots.SPARSITY)),
        )

    def quantization(self, fb: TableView | None) -> Quantization | None:
        if fb is None:
            return None
        scale, scale_count = fb.first_float(_QuantizationSlots.SCALE)
        if not scale_count:
            return None
        zero_point, _ = fb.first_int64(_QuantizationSlots.ZERO_POINT)
        return Quantization(
            scale=scale,
            zero_point=zero_point,
            channel_count=scale_count,
            axis=fb.i32(_QuantizationSlots.QUANTIZED_DIMENSION),
        )

    def operator(
        self,
        index: int,
        fb: TableView,
        opcodes: tuple[tuple[str, int, int, str | None, int], ...],
        where: str,
    ) -> Operator:
        opcode_index = fb.u32(_OperatorSlots.OPCODE_INDEX)
        if opcode_index >= len(opcodes):
            raise self.fail(
                f"{where} operator {index}: opcode index {opcode_index} out of range "
                f"(model has {len(opcodes)} operator codes)"
            )
        name, builtin, raw, custom, version = opcodes[opcode_index]
        options = LazyOptions(
            self.data,
            (fb.u8(_OperatorSlots.OPTIONS_TYPE), fb.target(_OperatorSlots.OPTIONS)),
            (fb.u8(_OperatorSlots.OPTIONS2_TYPE), fb.target(_OperatorSlots.OPTIONS2)),
            self.options_cache,
            self.label,
        )
        called: tuple[int, ...] = ()
        if name in CONTROL_FLOW_OPTION_FIELDS:
            called = _called_subgraphs(name, options)
        inputs = fb.int32_vector(_OperatorSlots.INPUTS) or ()
        outputs = fb.int32_vector(_OperatorSlots.OUTPUTS) or ()
        intermediates = fb.int32_vector(_OperatorSlots.INTERMEDIATES) or ()
        self.charge(len(inputs) + len(outputs) + len(intermediates) + len(called))
        # Positional, as in `tensor` (one call per operator).
        return Operator(
            index,
            name,  # opcode
            builtin,  # builtin_code
            raw,  # raw_builtin_code
            custom,  # custom_code
            version,
            inputs,
            outputs,
            intermediates,
            options,
            called,  # called_subgraphs
        )

    def signature(self, fb: TableView) -> SignatureDef:
        def tensor_map(slot: int) -> tuple[tuple[str, int], ...]:
            entries = fb.tables(slot)
            self.charge(TABLE_ITEMS * len(entries))
            return tuple((self.text(entry, 4), entry.u32(6)) for entry in entries)

        return SignatureDef(
            key=self.text(fb, _SignatureSlots.KEY),
            subgraph=fb.u32(_SignatureSlots.SUBGRAPH_INDEX),
            inputs=tensor_map(_SignatureSlots.INPUTS),
            outputs=tensor_map(_SignatureSlots.OUTPUTS),
        )

    def offline_plan(self, model: Model) -> OfflinePlan | None:
        raw = self.last_metadata(model, OFFLINE_PLAN_METADATA)
        return None if raw is None else decode_offline_plan(raw, self.label)

    def plan_record(self, model: Model) -> PlanRecord | None:
        raw = self.last_metadata(model, PLAN_RECORD_METADATA)
        return None if raw is None else decode_plan_record(raw, self.label)

    def last_metadata(self, model: Model, name: str) -> bytes | None:
        """The bytes of the last metadata entry with this name (None: there is none)."""
        # TFLM checks every entry with this exact name; the last one wins. Only that one is
        # read: thousands of entries naming one large buffer must not copy it thousands of times.
        named = [e for e in model.metadata if e.name == name]
        for entry in named:
            if not 0 <= entry.buffer < len(model.buffers):
                raise self.fail(
                    f"metadata '{name}' names buffer {entry.buffer}, "
                    f"out of range (model has {len(model.buffers)} buffers)"
                )
        if not named:
            return None
        return model.buffer_bytes(named[-1].buffer)


def read_quantization_scales(model: Model, subgraph: int, tensor: int) -> tuple[float, ...]:
    """Model + (subgraph, tensor) → every quantization scale of that tensor (the IR keeps one)."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root().tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS)[tensor]
    )
    quantization = fb_tensor.table(_TensorSlots.QUANTIZATION)
    if quantization is None:
        return ()
    data, length = quantization.vector(_QuantizationSlots.SCALE, 4)
    return tuple(struct.unpack_from(f"<{length}f", model.data, data)) if length else ()


def read_quantization_zero_points(model: Model, subgraph: int, tensor: int) -> tuple[int, ...]:
    """Model + (subgraph, tensor) → every quantization zero point of that tensor (the IR keeps
    the first)."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root().tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS)[tensor]
    )
    quantization = fb_tensor.table(_TensorSlots.QUANTIZATION)
    if quantization is None:
        return ()
    data, length = quantization.vector(_QuantizationSlots.ZERO_POINT, 8)
    return tuple(struct.unpack_from(f"<{length}q", model.data, data)) if length else ()


def read_dims_entry(model: Model, subgraph: int, tensor: int, index: int) -> int | None:
    """Model + (subgraph, tensor) → the int32 a kernel reads as `dims->data[index]` while the
    tensor's dims are the file's: TFLM points them at the shape vector in the model file
    (FlatBufferVectorToTfLiteTypeArray, little-endian), so an index past the rank reads the bytes
    that follow it. None when the tensor has no shape vector or those bytes lie outside the
    file."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root().tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS)[tensor]
    )
    start, _ = fb_tensor.vector(_TensorSlots.SHAPE, 4)
    position = start + 4 * index
    if not start or index < 0 or position + 4 > len(model.data):
        return None
    value: int = struct.unpack_from("<i", model.data, position)[0]
    return value


def read_custom_options(model: Model, subgraph: int, operator: int) -> bytes:
    """Model + (subgraph, operator) → the operator's raw `custom_options` bytes (b"" when it has
    none), in the FlatBuffer or, for models over 2 GB, stored after it; ModelError when they
    point outside the file."""
    parser = _Parser(model.data, model.source)
    try:
        fb_operator = (
            parser.root()
            .tables(_ModelSlots.SUBGRAPHS)[subgraph]
            .tables(_SubgraphSlots.OPERATORS)[operator]
        )
        data, length = fb_operator.vector(_OperatorSlots.CUSTOM_OPTIONS, 1)
        if not data:
            data = fb_operator.u64(_OperatorSlots.LARGE_CUSTOM_OPTIONS_OFFSET)
            length = fb_operator.u64(_OperatorSlots.LARGE_CUSTOM_OPTIONS_SIZE)
            if data <= 1 or data + length > len(model.data):
                # 0 and 1 are the schema's "not stored outside" markers.
                return b""
    except _MALFORMED as error:
        raise parser.fail(
            f"operator {operator} of subgraph {subgraph}: custom options: {error}"
        ) from None
    return bytes(model.data[data : data + length])


def decode_offline_plan(raw: bytes, label: str) -> OfflinePlan:
    """`OfflineMemoryAllocation` bytes → OfflinePlan (little-endian int32 words)."""
    header_bytes = 4 * _METADATA_OFFLINE_HEADER_WORDS
    if len(raw) < header_bytes:
        raise ModelError(
            label,
            f"'{OFFLINE_PLAN_METADATA}' metadata is {format_bytes_exact(len(raw))}, "
            f"shorter than its 12-byte header",
        )
    version, subgraph_count, count = struct.unpack_from("<iii", raw, 0)
    available = (len(raw) - header_bytes) // 4
    if count < 0 or count > available:
        raise ModelError(
            label,
            f"'{OFFLINE_PLAN_METADATA}' metadata claims {count} offsets but holds {available}",
        )
    offsets = struct.unpack_from(f"<{count}i", raw, header_bytes)
    return OfflinePlan(version, subgraph_count, tuple(offsets))


def encode_offline_plan(plan: OfflinePlan) -> bytes:
    """OfflinePlan → `OfflineMemoryAllocation` metadata bytes."""
    count = len(plan.offsets)
    return struct.pack(f"<iii{count}i", plan.version, plan.subgraph_count, count, *plan.offsets)


def _kind(has_data: bool, is_variable: bool, is_input: bool, is_output: bool) -> TensorKind:
    if has_data:
        return TensorKind.CONSTANT
    if is_variable:
        return TensorKind.VARIABLE
    if is_input:
        return TensorKind.INPUT
    if is_output:
        return TensorKind.OUTPUT
    return TensorKind.INTERMEDIATE


def _check_shape_size(
    label: str, where: str, index: int, shape: tuple[int, ...], element_bytes: int
) -> None:
    total = element_bytes
    for dim in shape:
        if dim <= 0:
            return
        total *= dim
        if total > MAX_TENSOR_BYTES:
            raise ModelError(
                label,
                f"{where} tensor {index}: shape {list(shape)} is too large "
                f"(more than 2^62 bytes; the size would overflow)",
            )


def _called_subgraphs(opcode: str, options: Any) -> tuple[int, ...]:
    fields = CONTROL_FLOW_OPTION_FIELDS.get(opcode, ())
    called: list[int] = []
    for field_name in fields:
        value = options.get(field_name)
        if isinstance(value, tuple):
            called.extend(int(v) for v in value)
        elif isinstance(value, int):
            called.append(value)
    return tuple(called)


__all__ = [
    "FILE_IDENTIFIER",
    "OFFLINE_PLAN_METADATA",
    "decode_offline_plan",
    "encode_offline_plan",
    "load_model",
    "parse_model",
]
