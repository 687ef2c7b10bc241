"""FlatBuffer reader: .tflite path or bytes → checked `ir.Model`, without TensorFlow.

The file is memory-mapped, never copied: weights stay in the map and the IR records where each
buffer's bytes are. Every vector length is checked against the file size before it is walked, so a
small hostile file cannot claim millions of entries; any malformed read becomes a `ModelError`.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tflite.Buffer import Buffer as FbBuffer
from tflite.Model import Model as FbModel

from arenalens.errors import ModelError
from arenalens.ir import (
    CONTROL_FLOW_OPTION_FIELDS,
    MAX_TENSOR_BYTES,
    BufferRef,
    Metadata,
    Model,
    OfflinePlan,
    Operator,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TensorKind,
    check_model,
    dtype_for_code,
)
from arenalens.tflite.opcodes import builtin_name, decode_options

FILE_IDENTIFIER = b"TFL3"
OFFLINE_PLAN_METADATA = "OfflineMemoryAllocation"
# Field slots (vtable offsets) used where the generated accessors would copy data.
_BUFFER_DATA_SLOT = 4
_METADATA_OFFLINE_HEADER_WORDS = 3
# Exceptions the FlatBuffers runtime raises when offsets point outside the file or types are off.
_MALFORMED = (
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


def parse_model(data: Any, label: str, *, strict: bool = False) -> Model:
    """FlatBuffer bytes (or a read-only map) → checked Model."""
    size = len(data)
    if size < 8:
        raise ModelError(label, f"file too small for a FlatBuffer ({size} bytes)")
    if bytes(data[4:8]) != FILE_IDENTIFIER:
        found = bytes(data[4:8])
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


@dataclass
class _Parser:
    data: Any
    label: str

    def __post_init__(self) -> None:
        self.size = len(self.data)

    def fail(self, problem: str) -> ModelError:
        return ModelError(self.label, problem)

    # -- bounded vectors --------------------------------------------------------------
    def count(self, length: int, element_bytes: int, what: str) -> int:
        """Reject vector lengths that could not fit in the file (hostile counts)."""
        if length < 0 or length * element_bytes > self.size:
            raise self.fail(
                f"{what}: vector claims {length:,} entries but the file has only "
                f"{self.size:,} bytes"
            )
        return length

    def ints(self, array: Any, what: str) -> tuple[int, ...]:
        """A numpy vector (or the 0 the accessors return when absent) → tuple of ints."""
        if isinstance(array, int):
            return ()
        self.count(len(array), array.itemsize, what)
        return tuple(array.tolist())

    def items(self, length_getter: Any, item_getter: Any, what: str) -> Iterator[Any]:
        for position in range(self.count(length_getter(), 4, what)):
            yield item_getter(position)

    # -- model ------------------------------------------------------------------------
    def model(self) -> Model:
        root = FbModel.GetRootAs(self.data, 0)
        buffers = tuple(
            self.buffer_ref(i, b)
            for i, b in enumerate(self.items(root.BuffersLength, root.Buffers, "buffers"))
        )
        codes = tuple(self.items(root.OperatorCodesLength, root.OperatorCodes, "operator codes"))
        opcode_rows = tuple(self.opcode(code) for code in codes)
        fb_subgraphs = tuple(self.items(root.SubgraphsLength, root.Subgraphs, "subgraphs"))
        if not fb_subgraphs:
            raise self.fail("model has no subgraphs")
        subgraphs = tuple(
            self.subgraph(index, fb, buffers, opcode_rows) for index, fb in enumerate(fb_subgraphs)
        )
        metadata = tuple(
            Metadata(self.text(entry.Name()), entry.Buffer())
            for entry in self.items(root.MetadataLength, root.Metadata, "metadata")
        )
        signatures = tuple(
            self.signature(sig)
            for sig in self.items(root.SignatureDefsLength, root.SignatureDefs, "signature defs")
        )
        model = Model(
            source=self.label,
            version=root.Version(),
            description=self.text(root.Description()),
            subgraphs=subgraphs,
            buffers=buffers,
            metadata=metadata,
            signature_defs=signatures,
            offline_plan=None,
            file_bytes=self.size,
            data=self.data,
        )
        offline = self.offline_plan(model)
        if offline is None:
            return model
        return replace(model, offline_plan=offline)

    def text(self, raw: bytes | None) -> str:
        return raw.decode("utf-8", errors="replace") if raw else ""

    def buffer_ref(self, index: int, fb: FbBuffer) -> BufferRef:
        external_offset = fb.Offset()
        if external_offset > 1:
            external_size = fb.Size()
            if external_offset + external_size > self.size:
                raise self.fail(
                    f"buffer {index}: external data [{external_offset}, "
                    f"{external_offset + external_size}) lies beyond the end of the file "
                    f"({self.size} bytes)"
                )
            return BufferRef(index, external_offset, external_size, external=True)
        slot = fb._tab.Offset(_BUFFER_DATA_SLOT)
        if slot == 0:
            return BufferRef(index, 0, 0, external=False)
        start = fb._tab.Vector(slot)
        length = fb._tab.VectorLen(slot)
        if start + length > self.size:
            raise self.fail(f"buffer {index}: data runs past the end of the file")
        return BufferRef(index, start, length, external=False)

    def opcode(self, code: Any) -> tuple[str, int, int, str | None, int]:
        raw = code.BuiltinCode()
        builtin = max(raw, code.DeprecatedBuiltinCode())
        custom = code.CustomCode()
        custom_name = self.text(custom) if custom is not None else None
        if builtin_name(builtin) == "CUSTOM" or custom_name:
            name = f"CUSTOM:{custom_name or ''}"
        else:
            name = builtin_name(builtin)
        return name, builtin, raw, custom_name, code.Version()

    def subgraph(
        self,
        index: int,
        fb: Any,
        buffers: tuple[BufferRef, ...],
        opcodes: tuple[tuple[str, int, int, str | None, int], ...],
    ) -> Subgraph:
        what = f"subgraph {index}"
        inputs = self.ints(fb.InputsAsNumpy(), f"{what} inputs")
        outputs = self.ints(fb.OutputsAsNumpy(), f"{what} outputs")
        input_set, output_set = set(inputs), set(outputs)
        tensors = tuple(
            self.tensor(i, fb=t, buffers=buffers, inputs=input_set, outputs=output_set, where=what)
            for i, t in enumerate(self.items(fb.TensorsLength, fb.Tensors, f"{what} tensors"))
        )
        operators = tuple(
            self.operator(i, op, opcodes, what)
            for i, op in enumerate(
                self.items(fb.OperatorsLength, fb.Operators, f"{what} operators")
            )
        )
        return Subgraph(
            index=index,
            name=self.text(fb.Name()),
            tensors=tensors,
            operators=operators,
            inputs=inputs,
            outputs=outputs,
        )

    def tensor(
        self,
        index: int,
        *,
        fb: Any,
        buffers: tuple[BufferRef, ...],
        inputs: set[int],
        outputs: set[int],
        where: str,
    ) -> Tensor:
        what = f"{where} tensor {index}"
        shape = self.ints(fb.ShapeAsNumpy(), f"{what} shape")
        # Without a shape_signature the shape is fully known: report it as the signature, as the
        # TFLite interpreter's tensor details do.
        signature = (
            shape
            if fb.ShapeSignatureIsNone()
            else self.ints(fb.ShapeSignatureAsNumpy(), f"{what} shape_signature")
        )
        dtype = dtype_for_code(fb.Type())
        buffer_index = fb.Buffer()
        if not 0 <= buffer_index < max(len(buffers), 1):
            raise self.fail(
                f"{what}: buffer index {buffer_index} out of range "
                f"(model has {len(buffers)} buffers)"
            )
        has_data = bool(buffers) and buffers[buffer_index].nbytes > 0
        is_variable = bool(fb.IsVariable())
        _check_shape_size(self.label, what, shape, dtype.element_bytes or 1)
        is_input, is_output = index in inputs, index in outputs
        return Tensor(
            index=index,
            name=self.text(fb.Name()),
            shape=shape,
            shape_signature=signature,
            dtype=dtype,
            buffer=buffer_index,
            has_data=has_data,
            is_variable=is_variable,
            kind=_kind(has_data, is_variable, is_input, is_output),
            is_input=is_input,
            is_output=is_output,
            quantization=self.quantization(fb.Quantization(), what),
            has_sparsity=fb.Sparsity() is not None,
        )

    def quantization(self, fb: Any, what: str) -> Quantization | None:
        if fb is None:
            return None
        scales = fb.ScaleAsNumpy()
        zero_points = fb.ZeroPointAsNumpy()
        scale_count = 0 if isinstance(scales, int) else len(scales)
        if scale_count == 0:
            return None
        self.count(scale_count, 4, f"{what} quantization scales")
        zero_point = None
        if not isinstance(zero_points, int) and len(zero_points):
            zero_point = int(zero_points[0])
        return Quantization(
            scale=float(np.float32(scales[0])),
            zero_point=zero_point,
            channel_count=scale_count,
            axis=fb.QuantizedDimension(),
        )

    def operator(
        self,
        index: int,
        fb: Any,
        opcodes: tuple[tuple[str, int, int, str | None, int], ...],
        where: str,
    ) -> Operator:
        what = f"{where} operator {index}"
        opcode_index = fb.OpcodeIndex()
        if not 0 <= opcode_index < len(opcodes):
            raise self.fail(
                f"{what}: opcode index {opcode_index} out of range "
                f"(model has {len(opcodes)} operator codes)"
            )
        name, builtin, raw, custom, version = opcodes[opcode_index]
        options = decode_options(fb)
        return Operator(
            index=index,
            opcode=name,
            builtin_code=builtin,
            raw_builtin_code=raw,
            custom_code=custom,
            version=version,
            inputs=self.ints(fb.InputsAsNumpy(), f"{what} inputs"),
            outputs=self.ints(fb.OutputsAsNumpy(), f"{what} outputs"),
            intermediates=self.ints(fb.IntermediatesAsNumpy(), f"{what} intermediates"),
            options=options,
            called_subgraphs=_called_subgraphs(name, options),
        )

    def signature(self, fb: Any) -> SignatureDef:
        def tensor_map(length: Any, getter: Any, what: str) -> tuple[tuple[str, int], ...]:
            return tuple(
                (self.text(entry.Name()), entry.TensorIndex())
                for entry in self.items(length, getter, what)
            )

        return SignatureDef(
            key=self.text(fb.SignatureKey()),
            subgraph=fb.SubgraphIndex(),
            inputs=tensor_map(fb.InputsLength, fb.Inputs, "signature inputs"),
            outputs=tensor_map(fb.OutputsLength, fb.Outputs, "signature outputs"),
        )

    def offline_plan(self, model: Model) -> OfflinePlan | None:
        plan: OfflinePlan | None = None
        # TFLM checks every entry with this exact name; the last one wins.
        for entry in model.metadata:
            if entry.name != OFFLINE_PLAN_METADATA:
                continue
            if not 0 <= entry.buffer < len(model.buffers):
                raise self.fail(
                    f"metadata '{OFFLINE_PLAN_METADATA}' names buffer {entry.buffer}, "
                    f"out of range (model has {len(model.buffers)} buffers)"
                )
            plan = decode_offline_plan(model.buffer_bytes(entry.buffer), self.label)
        return plan


def decode_offline_plan(raw: bytes, label: str) -> OfflinePlan:
    """`OfflineMemoryAllocation` bytes → OfflinePlan (little-endian int32 words)."""
    header_bytes = 4 * _METADATA_OFFLINE_HEADER_WORDS
    if len(raw) < header_bytes:
        raise ModelError(
            label,
            f"'{OFFLINE_PLAN_METADATA}' metadata is {len(raw)} bytes, "
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


def _check_shape_size(label: str, what: str, shape: tuple[int, ...], element_bytes: int) -> None:
    total = element_bytes
    for dim in shape:
        if dim <= 0:
            return
        total *= dim
        if total > MAX_TENSOR_BYTES:
            raise ModelError(
                label,
                f"{what}: shape {list(shape)} is too large "
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
