"""Model rewriter: .tflite bytes + new operator orders, tensor shapes and an offline plan → new
.tflite bytes.

Nothing of the original is re-serialized. FlatBuffer references are relative: a table field or
vector element holds an unsigned offset *forward* to its target, and a table reaches its vtable by
a signed offset. So new objects are written in a *prefix* and the original file follows unchanged:

    [root offset, "TFL3"] [new Model table] [new vectors] [new SubGraph / Metadata / Buffer tables]
    [padding to `alignment`] [the original file, byte for byte]

The new Model table copies every field of the old one, pointing into the original for what does
not change (operator codes, description, signature defs, ...). A reordered subgraph gets a new
SubGraph table whose `operators` vector lists the *original* Operator tables in the new order; a
tensor with a new shape (an input resized, and every shape that follows from it) gets a new Tensor
table with the other fields pointing into the original, listed in the subgraph's new `tensors`
vector; the `OfflineMemoryAllocation` metadata entries (and any `arenalens_plan_validity` record,
which describes the plan it was written with) are replaced by one new entry whose data lives in
the prefix, followed by the new plan's record when one is given. Every old relative offset stays
valid because the original bytes move as one block; since the prefix length is a multiple of
`alignment` (≥ 16, the schema's `force_align` for buffer data), every weight keeps its alignment
and its bytes.

The original root offset and file identifier remain inside the appended block at offset P; nothing
points to them, so readers (which start at byte 0) and the FlatBuffers verifier never see them.
Only absolute file offsets would break: `Buffer.offset` (external data of > 2 GB models) gets a
new Buffer table shifted by P; `Operator.large_custom_options_offset` is refused.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arenalens.errors import ModelError
from arenalens.ir import OFFLINE_PLAN_METADATA, Model, OfflinePlan, PlanRecord
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.plan_record import PLAN_RECORD_METADATA, encode_plan_record
from arenalens.tflite.reader import BUFFER_DATA_ALIGNMENT, FILE_IDENTIFIER, parse_model
from arenalens.units import format_bytes_exact

# Metadata that describes the offline plan: replaced together with it.
_PLAN_METADATA = frozenset({OFFLINE_PLAN_METADATA, PLAN_RECORD_METADATA})

DEFAULT_ALIGNMENT = 64  # prefix multiple: keeps 16-byte force_align and LiteRT's 64-byte mmap

# Field slots (0-based) of the tables the rewriter rebuilds, and which of them are references.
_MODEL_FIELDS = 8  # version, operator_codes, subgraphs, description, buffers, metadata_buffer,
# metadata, signature_defs
_MODEL_SCALARS = {0: 4}  # slot → byte width
_MODEL_SUBGRAPHS, _MODEL_BUFFERS, _MODEL_METADATA = 2, 4, 6
_SUBGRAPH_FIELDS = 6  # tensors, inputs, outputs, operators, name, debug_metadata_index
_SUBGRAPH_SCALARS = {5: 4}
_SUBGRAPH_TENSORS, _SUBGRAPH_OPERATORS = 0, 3
# shape, type, buffer, name, quantization, is_variable, sparsity, shape_signature, has_rank,
# variant_tensors
_TENSOR_FIELDS = 10
_TENSOR_SCALARS = {1: 1, 2: 4, 5: 1, 8: 1}
_TENSOR_SHAPE, _TENSOR_SHAPE_SIGNATURE = 0, 7
_BUFFER_DATA, _BUFFER_OFFSET, _BUFFER_SIZE = 0, 1, 2
_METADATA_NAME, _METADATA_BUFFER = 0, 1
_TENSOR_BUFFER = 2
_OPERATOR_LARGE_CUSTOM_OPTIONS_OFFSET = 9


def rewrite_model(
    data: bytes | bytearray | memoryview,
    *,
    operator_orders: Mapping[int, Sequence[int]] | None = None,
    offline_plan: OfflinePlan | None = None,
    plan_record: PlanRecord | None = None,
    tensor_shapes: Mapping[tuple[int, int], TensorShape] | None = None,
    drop_offline_plan: bool = False,
    alignment: int = DEFAULT_ALIGNMENT,
    label: str = "<bytes>",
) -> bytes:
    """Original .tflite bytes → new bytes with operators reordered, tensors reshaped and/or a
    new offline plan.

    `operator_orders` maps a subgraph index to a permutation of its operator indices (new
    position → old index). `tensor_shapes` maps (subgraph, tensor) to its new shape and
    shape_signature. `offline_plan`, when given, replaces every `OfflineMemoryAllocation` and
    `arenalens_plan_validity` metadata entry; `plan_record` (only with a plan) is written after
    it; `drop_offline_plan` removes them all (the runtime then plans every tensor). The original
    bytes follow a prefix that is a multiple of `alignment`.
    """
    if plan_record is not None and offline_plan is None:
        raise ValueError("a plan record describes an offline plan: give the plan too")
    if alignment < BUFFER_DATA_ALIGNMENT or alignment & (alignment - 1):
        raise ValueError(f"alignment must be a power of two >= 16, got {alignment}")
    original = bytes(data)
    view = _View(original, label)
    if original[4:8] != FILE_IDENTIFIER:
        raise view.fail("not a TFLite model (file identifier is not 'TFL3')")
    model = view.table(view.u32(0))
    subgraphs = view.vector_of_tables(model, _MODEL_SUBGRAPHS)
    buffers = view.vector_of_tables(model, _MODEL_BUFFERS)
    metadata = view.vector_of_tables(model, _MODEL_METADATA)
    view.refuse_unknown_fields(model, _MODEL_FIELDS, "Model")
    _refuse_large_custom_options(view, subgraphs)
    orders = dict(operator_orders or {})
    for index, order in orders.items():
        if not 0 <= index < len(subgraphs):
            raise ValueError(
                f"operator order given for subgraph {index}, model has {len(subgraphs)}"
            )
        count = len(view.vector_of_tables(subgraphs[index], _SUBGRAPH_OPERATORS))
        if sorted(order) != list(range(count)):
            raise ValueError(
                f"subgraph {index}: operator order must be a permutation of 0..{count - 1}"
            )
    shapes = dict(tensor_shapes or {})
    for subgraph_index, tensor in shapes:
        if not 0 <= subgraph_index < len(subgraphs):
            raise ValueError(f"tensor shape given for subgraph {subgraph_index}")
        count = len(view.vector_of_tables(subgraphs[subgraph_index], _SUBGRAPH_TENSORS))
        if not 0 <= tensor < count:
            raise ValueError(f"subgraph {subgraph_index} has no tensor {tensor}")
    if drop_offline_plan and offline_plan is not None:
        raise ValueError("give a new offline plan or drop it, not both")
    plan = _Plan(
        view,
        subgraphs,
        buffers,
        metadata,
        orders,
        offline_plan,
        shapes,
        drop_offline_plan,
        plan_record,
    )
    return plan.write(alignment)


@dataclass(frozen=True)
class TensorShape:
    """A tensor's new `shape`, and its `shape_signature` (None: keep the file's)."""

    shape: tuple[int, ...]
    signature: tuple[int, ...] | None = None


def _refuse_large_custom_options(view: _View, subgraphs: Sequence[int]) -> None:
    for index, subgraph in enumerate(subgraphs):
        for position, operator in enumerate(view.vector_of_tables(subgraph, _SUBGRAPH_OPERATORS)):
            if view.scalar(operator, _OPERATOR_LARGE_CUSTOM_OPTIONS_OFFSET, 8) > 1:
                raise view.fail(
                    f"subgraph {index} operator {position} keeps its custom options at an "
                    f"absolute file offset (a > 2 GB model); rewriting it is not supported"
                )


# ---------------------------------------------------------------------------------------------
# Reading the original: positions of tables and fields, bounded by the file size.


@dataclass
class _View:
    data: bytes
    label: str

    def fail(self, problem: str) -> ModelError:
        return ModelError(self.label, problem)

    def check(self, position: int, length: int) -> None:
        if position < 0 or position + length > len(self.data):
            raise self.fail(
                f"malformed FlatBuffer: read of {format_bytes_exact(length)} at {position}"
            )

    def u32(self, position: int) -> int:
        self.check(position, 4)
        value: int = struct.unpack_from("<I", self.data, position)[0]
        return value

    def table(self, position: int) -> int:
        self.check(position, 4)
        return position

    def vtable(self, table: int) -> tuple[int, int, int]:
        """table → (vtable position, vtable bytes, table inline bytes)."""
        self.check(table, 4)
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        self.check(vtable, 4)
        vtable_bytes, inline_bytes = struct.unpack_from("<HH", self.data, vtable)
        self.check(vtable, vtable_bytes)
        self.check(table, inline_bytes)
        return vtable, vtable_bytes, inline_bytes

    def field(self, table: int, slot: int) -> int:
        """Absolute position of a field, or 0 when absent."""
        vtable, vtable_bytes, _ = self.vtable(table)
        entry = 4 + 2 * slot
        if entry + 2 > vtable_bytes:
            return 0
        offset: int = struct.unpack_from("<H", self.data, vtable + entry)[0]
        return table + offset if offset else 0

    def slots(self, table: int) -> int:
        _, vtable_bytes, _ = self.vtable(table)
        return (vtable_bytes - 4) // 2

    def target(self, table: int, slot: int) -> int:
        """Absolute position a reference field points to, or 0 when absent."""
        position = self.field(table, slot)
        return position + self.u32(position) if position else 0

    def scalar(self, table: int, slot: int, width: int) -> int:
        position = self.field(table, slot)
        if not position:
            return 0
        self.check(position, width)
        value: int = struct.unpack_from("<Q" if width == 8 else "<I", self.data, position)[0]
        return value

    def vector_of_tables(self, table: int, slot: int) -> list[int]:
        vector = self.target(table, slot)
        if not vector:
            return []
        length = self.u32(vector)
        self.check(vector + 4, 4 * length)
        elements = vector + 4
        return [self.table(elements + 4 * i + self.u32(elements + 4 * i)) for i in range(length)]

    def string(self, position: int) -> str:
        if not position:
            return ""
        length = self.u32(position)
        self.check(position + 4, length)
        return self.data[position + 4 : position + 4 + length].decode("utf-8", errors="replace")

    def refuse_unknown_fields(self, table: int, known: int, what: str) -> None:
        for slot in range(known, self.slots(table)):
            if self.field(table, slot):
                raise self.fail(
                    f"{what} table has field {slot}, unknown to this schema version; "
                    f"refusing to rewrite it"
                )


# ---------------------------------------------------------------------------------------------
# Writing the prefix: objects laid out forward, every reference pointing to a later position.


class _Ref:
    """A prefix object whose position is known once it is written (after its referrers)."""

    position: int | None = None


# A reference target: an original position, a prefix object, or (for Buffer.offset) an absolute
# file offset in the original that moves by the prefix length.
_Target = tuple[str, "int | _Ref"]
_Field = tuple[int, bytes, "_Target | None"]


@dataclass
class _Prefix:
    data: bytearray = field(default_factory=bytearray)
    fixups: list[tuple[int, str, int | _Ref]] = field(default_factory=list)

    def align(self, alignment: int) -> None:
        self.data.extend(b"\0" * (-len(self.data) % alignment))

    def put(self, raw: bytes, alignment: int = 1, ref: _Ref | None = None) -> int:
        self.align(alignment)
        position = len(self.data)
        self.data.extend(raw)
        if ref is not None:
            ref.position = position
        return position

    def table(self, fields: Sequence[_Field], ref: _Ref | None = None) -> int:
        """Write a vtable and its table; each field is (slot, inline bytes, target or None)."""
        slot_count = max((slot for slot, _, _ in fields), default=-1) + 1
        # Inline layout: the soffset, then fields widest first so each is naturally aligned.
        offsets: dict[int, int] = {}
        inline = 4
        for slot, raw, _ in sorted(fields, key=lambda f: (-len(f[1]), f[0])):
            inline += -inline % len(raw)
            offsets[slot] = inline
            inline += len(raw)
        inline += -inline % 4
        vtable = struct.pack(
            f"<HH{slot_count}H",
            4 + 2 * slot_count,
            inline,
            *[offsets.get(s, 0) for s in range(slot_count)],
        )
        vtable_position = self.put(vtable, 2)
        # 8-aligned start, so 8-byte scalars (Buffer.offset) are naturally aligned too.
        table_position = self.put(b"\0" * inline, 8, ref)
        struct.pack_into("<i", self.data, table_position, table_position - vtable_position)
        for slot, raw, target in fields:
            position = table_position + offsets[slot]
            self.data[position : position + len(raw)] = raw
            if target is not None:
                self.fixups.append((position, *target))
        return table_position

    def table_copy(
        self,
        view: _View,
        table: int,
        slots: int,
        ref: _Ref,
        *,
        replaced: Mapping[int, _Ref],
        scalars: Mapping[int, int],
    ) -> int:
        """Write a copy of an original table of `slots` fields: a slot in `replaced` points at
        that prefix object, a present scalar keeps its bytes (`scalars`: slot → width), every
        other present field points into the original."""
        fields: list[_Field] = []
        for slot in range(slots):
            position = view.field(table, slot)
            new = replaced.get(slot)
            if new is not None:
                fields.append((slot, _OFFSET, ("prefix", new)))
            elif slot in scalars:
                if position:
                    fields.append((slot, view.data[position : position + scalars[slot]], None))
            elif position:
                fields.append((slot, _OFFSET, ("original", view.target(table, slot))))
        return self.table(fields, ref)

    def vector(self, targets: Sequence[_Target], ref: _Ref) -> int:
        """A vector of references (uoffsets to tables)."""
        position = self.put(struct.pack("<I", len(targets)) + b"\0" * (4 * len(targets)), 4, ref)
        for index, target in enumerate(targets):
            self.fixups.append((position + 4 + 4 * index, *target))
        return position

    def resolve(self, shift: int) -> None:
        """Fill every reference once the original's start in the new file (`shift`) is known."""
        for position, kind, target in self.fixups:
            if kind == "absolute":
                assert isinstance(target, int)
                struct.pack_into("<Q", self.data, position, target + shift)
                continue
            if kind == "original":
                assert isinstance(target, int)
                absolute = shift + target
            else:
                assert isinstance(target, _Ref) and target.position is not None
                absolute = target.position
            if absolute <= position:
                raise AssertionError("FlatBuffer references must point forward")
            struct.pack_into("<I", self.data, position, absolute - position)


_OFFSET = b"\0\0\0\0"  # placeholder for a uoffset filled in by `resolve`


@dataclass
class _Plan:
    view: _View
    subgraphs: list[int]
    buffers: list[int]
    metadata: list[int]
    orders: dict[int, Sequence[int]]
    offline_plan: OfflinePlan | None
    shapes: dict[tuple[int, int], TensorShape]
    drop_offline_plan: bool = False
    plan_record: PlanRecord | None = None

    def rewritten_subgraphs(self) -> list[int]:
        """Subgraphs that get a new SubGraph table: reordered, or with a reshaped tensor."""
        return sorted(set(self.orders) | {subgraph for subgraph, _ in self.shapes})

    def write(self, alignment: int) -> bytes:
        view, prefix = self.view, _Prefix()
        root = _Ref()
        prefix.put(_OFFSET + FILE_IDENTIFIER)
        prefix.fixups.append((0, "prefix", root))
        buffers = self.new_buffers()
        plan_buffer = len(buffers) - (2 if self.plan_record is not None else 1)
        metadata = self.new_metadata(plan_buffer)
        refs = {
            _MODEL_SUBGRAPHS: _Ref() if self.rewritten_subgraphs() else None,
            _MODEL_BUFFERS: _Ref() if buffers != [("original", b) for b in self.buffers] else None,
            _MODEL_METADATA: _Ref()
            if self.offline_plan is not None or self.drop_offline_plan
            else None,
        }
        prefix.table_copy(
            view,
            view.table(view.u32(0)),
            _MODEL_FIELDS,
            root,
            replaced={slot: ref for slot, ref in refs.items() if ref is not None},
            scalars=_MODEL_SCALARS,
        )

        subgraph_refs: dict[int, _Ref] = {index: _Ref() for index in self.rewritten_subgraphs()}
        if (ref := refs[_MODEL_SUBGRAPHS]) is not None:
            targets: list[_Target] = [
                ("prefix", subgraph_refs[i]) if i in subgraph_refs else ("original", table)
                for i, table in enumerate(self.subgraphs)
            ]
            prefix.vector(targets, ref)
        if (ref := refs[_MODEL_BUFFERS]) is not None:
            prefix.vector([target for target in buffers], ref)
        if (ref := refs[_MODEL_METADATA]) is not None:
            prefix.vector(metadata, ref)
        for index, ref in subgraph_refs.items():
            self.write_subgraph(prefix, index, ref)
        for kind, target in (*buffers, *metadata):
            if kind == "prefix":
                assert isinstance(target, _Ref)
                self.write_pending(prefix, target)
        prefix.align(alignment)
        prefix.resolve(len(prefix.data))
        return bytes(prefix.data) + view.data

    # -- pieces ------------------------------------------------------------------------

    def write_subgraph(self, prefix: _Prefix, index: int, ref: _Ref) -> None:
        """A copy of SubGraph `index`: its operators vector lists the originals in the new order,
        its tensors vector the original tables or, for a reshaped tensor, a new one."""
        view = self.view
        subgraph = self.subgraphs[index]
        view.refuse_unknown_fields(subgraph, _SUBGRAPH_FIELDS, f"SubGraph {index}")
        reshaped = {t: shape for (s, t), shape in self.shapes.items() if s == index}
        operators_ref = _Ref() if index in self.orders else None
        tensors_ref = _Ref() if reshaped else None
        replaced = {_SUBGRAPH_OPERATORS: operators_ref, _SUBGRAPH_TENSORS: tensors_ref}
        prefix.table_copy(
            view,
            subgraph,
            _SUBGRAPH_FIELDS,
            ref,
            replaced={slot: new for slot, new in replaced.items() if new is not None},
            scalars=_SUBGRAPH_SCALARS,
        )
        if operators_ref is not None:
            operators = view.vector_of_tables(subgraph, _SUBGRAPH_OPERATORS)
            prefix.vector(
                [("original", operators[old]) for old in self.orders[index]], operators_ref
            )
        if tensors_ref is not None:
            tensors = view.vector_of_tables(subgraph, _SUBGRAPH_TENSORS)
            new_tables = {tensor: _Ref() for tensor in reshaped}
            prefix.vector(
                [
                    ("prefix", new_tables[i]) if i in new_tables else ("original", table)
                    for i, table in enumerate(tensors)
                ],
                tensors_ref,
            )
            for tensor, table_ref in new_tables.items():
                self.write_tensor(prefix, tensors[tensor], reshaped[tensor], table_ref)

    def write_tensor(self, prefix: _Prefix, tensor: int, shape: TensorShape, ref: _Ref) -> None:
        """A copy of one Tensor table with a new shape (and signature); every other field
        points into the original."""
        view = self.view
        view.refuse_unknown_fields(tensor, _TENSOR_FIELDS, "Tensor")
        new_dims = {_TENSOR_SHAPE: shape.shape}
        if shape.signature is not None:
            new_dims[_TENSOR_SHAPE_SIGNATURE] = shape.signature
        refs = {slot: _Ref() for slot in new_dims}
        prefix.table_copy(view, tensor, _TENSOR_FIELDS, ref, replaced=refs, scalars=_TENSOR_SCALARS)
        for slot, dims in sorted(new_dims.items()):  # in slot order, as the fields
            prefix.put(struct.pack(f"<I{len(dims)}i", len(dims), *dims), 4, refs[slot])

    def stale_buffers(self) -> int:
        """How many buffers at the end held the plan (and record) this rewrite replaces: the old
        plan metadata's, when nothing else reads them (no tensor, no other metadata). They go,
        so that optimizing an optimized model leaves no orphaned plan behind."""
        if self.offline_plan is None and not self.drop_offline_plan:
            return 0
        view = self.view
        plan_buffers: set[int] = set()
        kept_buffers: set[int] = set()
        for entry in self.metadata:
            buffer = view.scalar(entry, _METADATA_BUFFER, 4)
            named = view.string(view.target(entry, _METADATA_NAME))
            (plan_buffers if named in _PLAN_METADATA else kept_buffers).add(buffer)
        used = max(
            (
                view.scalar(tensor, _TENSOR_BUFFER, 4)
                for subgraph in self.subgraphs
                for tensor in view.vector_of_tables(subgraph, _SUBGRAPH_TENSORS)
            ),
            default=0,
        )
        count = 0
        last = len(self.buffers) - 1
        while last - count > max(used, 0) and (last - count) in plan_buffers - kept_buffers:
            count += 1
        return count

    def new_buffers(self) -> list[_Target]:
        """Buffers vector: original tables (less the replaced plan's, `stale_buffers`); external
        ones shifted; the offline plan's data last."""
        view = self.view
        targets: list[_Target] = []
        stale = self.stale_buffers()
        for buffer in self.buffers[: len(self.buffers) - stale]:
            offset = view.scalar(buffer, _BUFFER_OFFSET, 8)
            if offset > 1:
                size = view.scalar(buffer, _BUFFER_SIZE, 8)
                targets.append(("prefix", _PendingBuffer(external=(offset, size))))
            else:
                targets.append(("original", buffer))
        if self.offline_plan is not None:
            if not targets:
                # A model without buffers: its tensors all read buffer 0 ("no data"). The plan's
                # buffer must not become buffer 0, or every tensor would turn into a constant.
                targets.append(("prefix", _PendingBuffer()))
            targets.append(("prefix", _PendingBuffer(data=encode_offline_plan(self.offline_plan))))
            if self.plan_record is not None:
                targets.append(
                    ("prefix", _PendingBuffer(data=encode_plan_record(self.plan_record)))
                )
        return targets

    def new_metadata(self, plan_buffer: int) -> list[_Target]:
        """Metadata vector: original entries minus old offline plans and their records, plus
        the new plan (and its record, in the buffer after the plan's)."""
        if self.offline_plan is None and not self.drop_offline_plan:
            return [("original", entry) for entry in self.metadata]
        view = self.view
        targets: list[_Target] = []
        for entry in self.metadata:
            if view.string(view.target(entry, _METADATA_NAME)) not in _PLAN_METADATA:
                targets.append(("original", entry))
        if self.offline_plan is not None:
            targets.append(("prefix", _PendingMetadata(OFFLINE_PLAN_METADATA, plan_buffer)))
            if self.plan_record is not None:
                targets.append(("prefix", _PendingMetadata(PLAN_RECORD_METADATA, plan_buffer + 1)))
        return targets

    def write_pending(self, prefix: _Prefix, pending: _Ref) -> None:
        if isinstance(pending, _PendingMetadata):
            name = _Ref()
            prefix.table(
                [
                    (_METADATA_NAME, _OFFSET, ("prefix", name)),
                    (_METADATA_BUFFER, struct.pack("<I", pending.buffer), None),
                ],
                pending,
            )
            text = pending.name.encode()
            prefix.put(struct.pack("<I", len(text)) + text + b"\0", 4, name)
        elif isinstance(pending, _PendingBuffer):
            fields: list[_Field] = []
            data = _Ref()
            if pending.data is not None:
                fields.append((_BUFFER_DATA, _OFFSET, ("prefix", data)))
            if pending.external is not None:
                offset, size = pending.external
                fields.append((_BUFFER_OFFSET, b"\0" * 8, ("absolute", offset)))
                fields.append((_BUFFER_SIZE, struct.pack("<Q", size), None))
            prefix.table(fields, pending)
            if pending.data is not None:
                # The length word sits just before data that starts 16-aligned (force_align).
                prefix.align(BUFFER_DATA_ALIGNMENT)
                prefix.put(b"\0" * (BUFFER_DATA_ALIGNMENT - 4))
                prefix.put(struct.pack("<I", len(pending.data)) + pending.data, 1, data)


class _PendingBuffer(_Ref):
    """A new Buffer table: the offline plan's bytes, or an external buffer shifted by P."""

    def __init__(
        self, *, data: bytes | None = None, external: tuple[int, int] | None = None
    ) -> None:
        self.data = data
        self.external = external


class _PendingMetadata(_Ref):
    """A new Metadata table: name and buffer index."""

    def __init__(self, name: str, buffer: int) -> None:
        self.name = name
        self.buffer = buffer


def shape_changes(model: Model) -> dict[tuple[int, int], TensorShape]:
    """A model whose shapes were changed in memory (`--input-shape`) → the tensors whose shape or
    signature differ from its file's, for `rewrite_model(tensor_shapes=...)`."""
    stored = parse_model(model.data, model.source)
    changes: dict[tuple[int, int], TensorShape] = {}
    for subgraph, stored_subgraph in zip(model.subgraphs, stored.subgraphs, strict=True):
        for tensor, stored_tensor in zip(subgraph.tensors, stored_subgraph.tensors, strict=True):
            signature_changed = tensor.shape_signature != stored_tensor.shape_signature
            if tensor.shape != stored_tensor.shape or signature_changed:
                changes[(subgraph.index, tensor.index)] = TensorShape(
                    tensor.shape, tensor.shape_signature if signature_changed else None
                )
    return changes


def model_bytes(model: Model, *, drop_offline_plan: bool = False) -> bytes:
    """A model as it is in memory (its tensor shapes, `--input-shape`'s included) → .tflite
    bytes that carry those shapes; the file's own bytes when nothing changed."""
    changes = shape_changes(model)
    if not changes and not drop_offline_plan:
        return bytes(model.data)
    return rewrite_model(
        model.data, tensor_shapes=changes, drop_offline_plan=drop_offline_plan, label=model.source
    )
