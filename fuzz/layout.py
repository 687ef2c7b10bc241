"""Where the structure of a .tflite file lives: every offset, vtable, vector length and index word.

Structure-aware mutation needs to know which bytes are pointers and which are weights. This walks
a (valid or half-valid) model the way the reader does, from the root table down through the
schema tables the reader visits, and records each structural word as a `Site`: its file position,
width and role. Mutators then rewrite exactly those words (a vector length to 2**31 - 1, an offset
past the end of the file, a tensor index to -2 ...) instead of flipping bits in weight data.

The walk is defensive: anything outside the file ends that branch; shared tables are visited once;
the number of sites is capped so a large model costs milliseconds, not seconds. Slot numbers are
the schema's (tensorflow/compiler/mlir/lite/schema/schema.fbs field order), as in the reader.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")

# Sites recorded per file, at most: enough to cover a few hundred operators in full.
MAX_SITES = 20_000
# Elements of one int vector recorded as sites (shapes and tensor lists are short).
MAX_VECTOR_ELEMENTS = 64


class SiteKind(enum.StrEnum):
    """The role of one structural word."""

    ROOT = "root"  # the root table's uoffset at byte 0
    SOFFSET = "soffset"  # table → vtable, signed, pointing backwards or forwards
    VTABLE_BYTES = "vtable_bytes"  # u16 size of a vtable
    TABLE_BYTES = "table_bytes"  # u16 size of the table the vtable describes
    FIELD = "field"  # u16 position of one field relative to its table
    UOFFSET = "uoffset"  # field → table, vector or string, unsigned, forwards
    LENGTH = "length"  # u32 element count of a vector or string
    INDEX = "index"  # i32 element of a tensor-index vector (inputs, outputs, intermediates)
    DIM = "dim"  # i32 element of a shape or shape signature
    SCALAR = "scalar"  # a scalar field (opcode index, buffer index, type, builtin code ...)
    OFFSET_ELEMENT = "offset_element"  # u32 element of a vector of tables


@dataclass(frozen=True, slots=True)
class Site:
    """One structural word: file position, width in bytes, role, and the schema field it is."""

    position: int
    width: int
    kind: SiteKind
    label: str  # "SubGraph.tensors", "Tensor.shape[2]", "Operator.opcode_index" ...


@dataclass(frozen=True)
class Layout:
    """Every site found in one file, and where each kind of table starts."""

    size: int
    sites: tuple[Site, ...]
    tables: Mapping[str, tuple[int, ...]]  # schema table name → table positions, in walk order
    vectors: tuple[int, ...]  # positions of vector length words (vector starts)

    def of_kind(self, *kinds: SiteKind) -> tuple[Site, ...]:
        """Sites of the given kinds, in walk order."""
        return tuple(site for site in self.sites if site.kind in kinds)


# Field types: ("scalar", width) | ("table", type) | ("tables", type) | ("ints", role)
# | ("string",) | ("bytes",) | ("floats",) | ("longs",) | ("union", type slot)
_Field = tuple[str, object]

SCHEMA: Mapping[str, Mapping[int, _Field]] = MappingProxyType(
    {
        "Model": {
            4: ("scalar", 4),
            6: ("tables", "OperatorCode"),
            8: ("tables", "SubGraph"),
            10: ("string", None),
            12: ("tables", "Buffer"),
            14: ("ints", SiteKind.SCALAR),
            16: ("tables", "Metadata"),
            18: ("tables", "SignatureDef"),
        },
        "OperatorCode": {
            4: ("scalar", 1),
            6: ("string", None),
            8: ("scalar", 4),
            10: ("scalar", 4),
        },
        "SubGraph": {
            4: ("tables", "Tensor"),
            6: ("ints", SiteKind.INDEX),
            8: ("ints", SiteKind.INDEX),
            10: ("tables", "Operator"),
            12: ("string", None),
        },
        "Tensor": {
            4: ("ints", SiteKind.DIM),
            6: ("scalar", 1),
            8: ("scalar", 4),
            10: ("string", None),
            12: ("table", "QuantizationParameters"),
            14: ("scalar", 1),
            16: ("table", "Options"),  # sparsity: walked as an opaque table
            18: ("ints", SiteKind.DIM),
        },
        "QuantizationParameters": {
            4: ("floats", None),
            6: ("floats", None),
            8: ("floats", None),
            10: ("longs", None),
            16: ("scalar", 4),
        },
        "Operator": {
            4: ("scalar", 4),
            6: ("ints", SiteKind.INDEX),
            8: ("ints", SiteKind.INDEX),
            10: ("scalar", 1),
            12: ("table", "Options"),
            14: ("bytes", None),
            20: ("ints", SiteKind.INDEX),
            26: ("scalar", 1),
            28: ("table", "Options"),
        },
        "Buffer": {4: ("bytes", None), 6: ("scalar", 8), 8: ("scalar", 8)},
        "Metadata": {4: ("string", None), 6: ("scalar", 4)},
        "SignatureDef": {
            4: ("tables", "TensorMap"),
            6: ("tables", "TensorMap"),
            8: ("string", None),
            12: ("scalar", 4),
        },
        "TensorMap": {4: ("string", None), 6: ("scalar", 4)},
        # Builtin option tables differ per operator; their fields are recorded as 4-byte scalars
        # (subgraph indices, strides, axes) without following any offsets.
        "Options": {},
    }
)

_FIELD_NAMES: Mapping[str, Mapping[int, str]] = MappingProxyType(
    {
        "Model": {
            4: "version",
            6: "operator_codes",
            8: "subgraphs",
            10: "description",
            12: "buffers",
            14: "metadata_buffer",
            16: "metadata",
            18: "signature_defs",
        },
        "OperatorCode": {
            4: "deprecated_builtin_code",
            6: "custom_code",
            8: "version",
            10: "builtin_code",
        },
        "SubGraph": {4: "tensors", 6: "inputs", 8: "outputs", 10: "operators", 12: "name"},
        "Tensor": {
            4: "shape",
            6: "type",
            8: "buffer",
            10: "name",
            12: "quantization",
            14: "is_variable",
            16: "sparsity",
            18: "shape_signature",
        },
        "QuantizationParameters": {
            4: "min",
            6: "max",
            8: "scale",
            10: "zero_point",
            16: "quantized_dimension",
        },
        "Operator": {
            4: "opcode_index",
            6: "inputs",
            8: "outputs",
            10: "builtin_options_type",
            12: "builtin_options",
            14: "custom_options",
            20: "intermediates",
            26: "builtin_options_2_type",
            28: "builtin_options_2",
        },
        "Buffer": {4: "data", 6: "offset", 8: "size"},
        "Metadata": {4: "name", 6: "buffer"},
        "SignatureDef": {4: "inputs", 6: "outputs", 8: "signature_key", 12: "subgraph_index"},
        "TensorMap": {4: "name", 6: "tensor_index"},
        "Options": {},
    }
)


def find_layout(data: bytes, *, max_sites: int = MAX_SITES) -> Layout:
    """File bytes → every structural site the walk can reach (never raises on bad input)."""
    return _Walker(data, max_sites).walk()


class _Walker:
    """Iterative walk from the root table; a branch ends where it leaves the file."""

    def __init__(self, data: bytes, max_sites: int) -> None:
        self.data = data
        self.max_sites = max_sites
        self.size = len(data)
        self.sites: list[Site] = []
        self.tables: dict[str, list[int]] = {}
        self.vectors: list[int] = []
        self.seen_tables: set[int] = set()
        self.seen_vectors: set[int] = set()
        self.pending: list[tuple[int, str]] = []

    def add(self, position: int, width: int, kind: SiteKind, label: str) -> None:
        if len(self.sites) < self.max_sites and 0 <= position <= self.size - width:
            self.sites.append(Site(position, width, kind, label))

    def u32(self, position: int) -> int | None:
        if 0 <= position <= self.size - 4:
            value: int = _U32.unpack_from(self.data, position)[0]
            return value
        return None

    def walk(self) -> Layout:
        root = self.u32(0)
        if root is not None:
            self.add(0, 4, SiteKind.ROOT, "root")
            self.pending.append((root, "Model"))
        while self.pending and len(self.sites) < self.max_sites:
            position, table_type = self.pending.pop()
            self.table(position, table_type)
        return Layout(
            size=self.size,
            sites=tuple(self.sites),
            tables=MappingProxyType({k: tuple(v) for k, v in self.tables.items()}),
            vectors=tuple(self.vectors),
        )

    def table(self, position: int, table_type: str) -> None:
        if position in self.seen_tables or not 0 <= position <= self.size - 4:
            return
        self.seen_tables.add(position)
        self.tables.setdefault(table_type, []).append(position)
        vtable = position - _I32.unpack_from(self.data, position)[0]
        self.add(position, 4, SiteKind.SOFFSET, f"{table_type}.vtable")
        if not 0 <= vtable <= self.size - 4:
            return
        vtable_bytes = _U16.unpack_from(self.data, vtable)[0]
        self.add(vtable, 2, SiteKind.VTABLE_BYTES, f"{table_type}.vtable_bytes")
        self.add(vtable + 2, 2, SiteKind.TABLE_BYTES, f"{table_type}.table_bytes")
        schema = SCHEMA[table_type]
        names = _FIELD_NAMES[table_type]
        field_count = max(0, min(vtable_bytes, self.size - vtable) - 4) // 2
        for index in range(field_count):
            slot = 4 + 2 * index
            relative = _U16.unpack_from(self.data, vtable + slot)[0]
            name = names.get(slot, f"slot{slot}")
            self.add(vtable + slot, 2, SiteKind.FIELD, f"{table_type}.{name}@vtable")
            if not relative:
                continue
            field_type = schema.get(slot, ("scalar", 4))
            self.field(position + relative, field_type, f"{table_type}.{name}")

    def field(self, position: int, field_type: _Field, label: str) -> None:
        kind, detail = field_type
        if kind == "scalar":
            width = detail if isinstance(detail, int) else 4
            self.add(position, width, SiteKind.SCALAR, label)
            return
        offset = self.u32(position)
        if offset is None:
            return
        self.add(position, 4, SiteKind.UOFFSET, label)
        target = position + offset
        if kind == "table":
            self.pending.append((target, str(detail)))
            return
        length = self.u32(target)
        if length is None or target in self.seen_vectors:
            return
        self.seen_vectors.add(target)
        self.vectors.append(target)
        self.add(target, 4, SiteKind.LENGTH, f"{label}.length")
        if kind == "tables":
            count = min(length, max(0, (self.size - target - 4) // 4))
            for index in range(count):
                element = target + 4 + 4 * index
                self.add(element, 4, SiteKind.OFFSET_ELEMENT, f"{label}[{index}]")
                pointed = self.u32(element)
                if pointed is not None:
                    self.pending.append((element + pointed, str(detail)))
        elif kind == "ints":
            site_kind = detail if isinstance(detail, SiteKind) else SiteKind.SCALAR
            count = min(length, MAX_VECTOR_ELEMENTS, max(0, (self.size - target - 4) // 4))
            for index in range(count):
                self.add(target + 4 + 4 * index, 4, site_kind, f"{label}[{index}]")
        # Strings, bytes, floats and longs: only the length word is structural.


__all__ = ["MAX_SITES", "SCHEMA", "Layout", "Site", "SiteKind", "find_layout"]
