"""The reader's one-read shortcuts against the careful reads they stand for.

`tables.int32s_of_row` reads a vector's length and up to 4 entries in one unpack (bytes past a
shorter vector are read and left); `tables.field_places` says where each wanted field lands in
what `field_reader`'s unpack returns, so a loop subscripts it instead of making the whole row.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from typing import Any

import pytest
import tflite
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.errors import ModelError
from arenalens.memo import clear_caches
from arenalens.tflite import opcodes, operator_tables, reader
from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, _Writer
from arenalens.tflite.reader import load_model
from arenalens.tflite.tables import (
    MalformedTableError,
    TableView,
    field_places,
    field_reader,
    int32_vector_at,
    int32s_of_row,
)
from tests.conftest import SHARED_MODELS, SHARED_REASON


def _careful(buf: bytes, at: int) -> tuple[int, ...] | str:
    try:
        return int32_vector_at(buf, len(buf), at)
    except MalformedTableError as error:
        return f"error: {error}"


def _quick(buf: bytes, at: int) -> tuple[int, ...] | str:
    offset = struct.unpack_from("<I", buf, at)[0]
    try:
        return int32s_of_row(buf, len(buf), at, offset)
    except MalformedTableError as error:
        return f"error: {error}"


@given(
    entries=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=7),
    claimed_extra=st.sampled_from([0, 0, 0, 1, 3, 1 << 20]),
    tail=st.integers(0, 24),
    gap=st.integers(0, 8),
)
@settings(max_examples=80, deadline=None)
def test_int32s_of_row_equals_int32_vector_at(
    entries: list[int], claimed_extra: int, tail: int, gap: int
) -> None:
    # A uoffset at 0 pointing `gap` bytes on to a vector that may claim more entries than it
    # holds, followed by `tail` bytes: near the end of the file the one-read path cannot read
    # 4 entries and falls back to the careful read.
    count = len(entries) + claimed_extra
    vector = struct.pack(f"<I{len(entries)}i", count, *entries)
    buf = struct.pack("<I", 4 + gap) + bytes(gap) + vector + bytes(range(tail))
    assert _quick(buf, 0) == _careful(buf, 0)


def test_int32s_of_row_reads_past_a_short_vector_only_to_leave_it() -> None:
    buf = struct.pack("<II2i3i", 4, 2, 7, -8, 99, 98, 97)
    assert int32s_of_row(buf, len(buf), 0, 4) == (7, -8)


@pytest.mark.parametrize("lead", [False, True])
@given(
    offsets=st.lists(st.integers(0, 24), min_size=8, max_size=8),
    formats=st.lists(st.sampled_from("bBiIf"), min_size=4, max_size=4),
)
@settings(max_examples=40, deadline=None)
def test_field_places_match_field_readers_pick(
    lead: bool, offsets: list[int], formats: list[str]
) -> None:
    # Any vtable, overlapping fields included (only a hostile one has them): each present
    # wanted field is where `field_places` says, and an absent one is at place 0.
    fields = (*offsets, *(0,) * 8)
    wanted = tuple((2 * slot + 1, code) for slot, code in enumerate(formats))
    buf = bytes(range(64))
    unpack, pick, absent = field_reader(fields, wanted, lead=lead)
    values = unpack(buf, 8)
    row = pick(values + absent)
    for order, place in enumerate(field_places(fields, wanted, lead=lead)):
        index = wanted[order][0]
        if fields[index]:
            assert place > 0 or not lead
            assert values[place] == row[order]
        else:
            assert place == 0 and row[order] == 0


def _pads_with_own_tables(count: int) -> bytes:
    """A chain of PAD operators, each with its own (field-less) PadOptions table, as converters
    write them (the builder shares equal tables: here it is made not to)."""
    builder = ModelBuilder()
    main = builder.add_subgraph()
    paddings = main.add_tensor("paddings", (1, 2), "INT32", data=bytes(8))
    previous = main.add_tensor("input", (4,), "INT8")
    main.set_inputs([previous])
    for index in range(count):
        output = main.add_tensor(f"pad_{index}", (4,), "INT8")
        main.add_operator("PAD", [previous, paddings], [output])
        previous = output
    main.set_outputs([previous])
    with pytest.MonkeyPatch.context() as patched:
        share = _Writer.options_table

        def own_table(writer: Any, *arguments: Any) -> int:
            writer.option_tables.clear()
            found: int = share(writer, *arguments)
            return found

        patched.setattr(_Writer, "options_table", own_table)
        return builder.build()


def test_field_less_options_tables_are_decoded_once_per_vtable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Operators whose options table has no fields (PAD, TRANSPOSE: one table each in converted
    models) decode the first table with a vtable and take its empty options for the others."""
    data = _pads_with_own_tables(4)
    decodes: list[object] = []
    decode = opcodes.decode_options

    def counted(*arguments: Any) -> dict[str, Any]:
        decodes.append(arguments)
        return decode(*arguments)

    monkeypatch.setattr(opcodes, "decode_options", counted)
    operators = load_model(data).subgraphs[0].operators
    assert [dict(op.options) for op in operators] == [{}] * 4
    assert len({id(op.options) for op in operators}) == 1  # the first table's, for all
    assert len(decodes) == 1


def test_repeated_operator_codes_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that gives every operator a code of its own (mobilenet_v2 224: 84 codes) names
    each builtin once per distinct code, and every operator as the code it points at."""
    path = SHARED_MODELS / "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite"
    if not path.is_file():
        pytest.skip(SHARED_REASON)
    named: list[int] = []
    name = opcodes.builtin_name

    def counted(code: int) -> str:
        named.append(code)
        return name(code)

    monkeypatch.setattr(operator_tables, "builtin_name", counted)
    operators = load_model(path).subgraphs[0].operators
    codes = tflite.Model.GetRootAs(path.read_bytes(), 0)
    assert codes.OperatorCodesLength() == len(operators) == 84
    assert len(named) == len(set(named)) == len({op.opcode for op in operators}) == 8


def test_option_tables_are_decoded_once_per_process() -> None:
    """A scalar options table is known by its vtable's and its fields' bytes across files
    (`opcodes._FIRST_DECODERS`): a second file with the same tables (a search loop's next
    candidate) gets the options decoded for the first, the same read-only mappings."""
    path = SHARED_MODELS / "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite"
    if not path.is_file():
        pytest.skip(SHARED_REASON)
    data = path.read_bytes()
    first = load_model(data).subgraphs[0].operators
    second = load_model(bytes(bytearray(data))).subgraphs[0].operators
    assert [dict(op.options) for op in first] == [dict(op.options) for op in second]
    shared = [a.opcode for a, b in zip(first, second, strict=True) if a.options is b.options]
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD"} <= set(shared)
    # A cold call (`clear_caches`, the benchmark's) forgets the decoded values, not the decoders.
    clear_caches()
    third = load_model(bytes(bytearray(data))).subgraphs[0].operators
    assert [dict(op.options) for op in third] == [dict(op.options) for op in first]
    assert not any(a.options is c.options for a, c in zip(first, third, strict=True) if a.options)


@pytest.mark.parametrize("custom", [False, True])
def test_builtin_codes_read_as_in_order(custom: bool) -> None:
    """`read_builtin_codes` (each code table one unpack, repeated codes made once) gives the
    codes `codes_in_order` reads (every table checked first, then each read), versions and
    repeats included; a file with a custom code is read in order."""
    builder = ModelBuilder()
    subgraph = builder.add_subgraph()
    tensor = subgraph.add_tensor("a", (1, 4))
    for opcode, version in [("RELU", 1), ("RELU", 2), ("LOGISTIC", 1), ("RELU", 1)]:
        out = subgraph.add_tensor(f"{opcode}{version}", (1, 4))
        subgraph.add_operator(opcode, [tensor], [out], version=version)
        tensor = out
    if custom:
        out = subgraph.add_tensor("custom", (1, 4))
        subgraph.add_operator("CUSTOM:Mine", [tensor], [out])
        tensor = out
    subgraph.set_inputs([0])
    subgraph.set_outputs([tensor])
    data = builder.build()
    parser = reader._Parser(data, "m")
    vector = parser.root().vector(6, 4)  # Model.operator_codes
    in_order = parser.codes_in_order(vector)
    assert reader._Parser(data, "m").opcodes(vector) == in_order
    if custom:
        with pytest.raises(MalformedTableError):
            operator_tables.read_builtin_codes(reader._Parser(data, "m"), vector)
    else:
        assert operator_tables.read_builtin_codes(reader._Parser(data, "m"), vector) == in_order
    assert [row[0] for row in in_order][:3] == ["RELU", "RELU", "LOGISTIC"]


def _three_tensor_model() -> bytes:
    builder = ModelBuilder()
    subgraph = builder.add_subgraph()
    first = subgraph.add_tensor("a", (1, 4), data=bytes(16))
    second = subgraph.add_tensor("b", (1, 4), data=bytes(16))
    out = subgraph.add_tensor("c", (1, 4))
    subgraph.add_operator("ADD", [first, second], [out])
    subgraph.set_outputs([out])
    return builder.build()


def _vector_of(data: bytes, table: int, slot: int) -> int:
    """Where the vector of a table's field starts (its length word)."""
    at = TableView(data, table, len(data)).field(slot)
    start: int = at + struct.unpack_from("<I", data, at)[0]
    return start


def _error(data: bytes) -> str:
    with pytest.raises(ModelError) as raised:
        load_model(data)
    return str(raised.value)


@pytest.mark.parametrize("vector", ["tensors", "buffers"])
def test_a_file_with_two_faults_names_the_table_outside_the_file(vector: str) -> None:
    """The tensor and buffer loops read each table and its vectors as they go
    (`tensor_tables`); the reader still names the fault the reader's order meets first: every
    table of the vector before any table's vectors. Here the first table's vector points
    outside the file and the last table does."""
    data = bytearray(_three_tensor_model())
    root = struct.unpack_from("<I", data, 0)[0]
    if vector == "tensors":
        subgraph = _vector_of(data, root, 8) + 4
        owner = subgraph + struct.unpack_from("<I", data, subgraph)[0]
        tables = _vector_of(data, owner, 4)
    else:
        tables = _vector_of(data, root, 12)
    count = struct.unpack_from("<I", data, tables)[0]
    first = tables + 4 + struct.unpack_from("<I", data, tables + 4)[0]
    # The first table's first vector (shape; data of buffer 1: buffer 0 is the empty one)...
    if vector == "buffers":
        first = tables + 8 + struct.unpack_from("<I", data, tables + 8)[0]
    field = TableView(bytes(data), first, len(data)).field(4)
    struct.pack_into("<I", data, field, len(data))
    alone = _error(bytes(data))
    assert "points outside the file" in alone
    # ... and the last table's offset past the end of the file.
    last = tables + 4 * count
    struct.pack_into("<I", data, last, len(data))
    both = _error(bytes(data))
    assert f"table at {last + len(data)} outside the file" in both


def _adds_with_own_tables(activations: list[str]) -> bytes:
    """A chain of ADD operators, each with its own AddOptions table (a scalar table) of these
    fused activations."""
    builder = ModelBuilder()
    main = builder.add_subgraph()
    other = main.add_tensor("other", (4,), "FLOAT32", data=bytes(16))
    previous = main.add_tensor("input", (4,), "FLOAT32")
    main.set_inputs([previous])
    for index, activation in enumerate(activations):
        output = main.add_tensor(f"add_{index}", (4,), "FLOAT32")
        options = {"fused_activation_function": activation}
        main.add_operator("ADD", [previous, other], [output], options=options)
        previous = output
    main.set_outputs([previous])
    with pytest.MonkeyPatch.context() as patched:
        share = _Writer.options_table

        def own_table(writer: Any, *arguments: Any) -> int:
            writer.option_tables.clear()
            found: int = share(writer, *arguments)
            return found

        patched.setattr(_Writer, "options_table", own_table)
        return builder.build()


def test_scalar_options_tables_are_decoded_by_their_vtables_decoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Operators with scalar options tables of one vtable: the first is decoded by the decoder
    the others use (no field-by-field decode_options), and equal tables share its options."""
    activations = ["RELU", "RELU", "RELU6", "RELU"]
    data = _adds_with_own_tables(activations)
    decodes: list[object] = []
    decode = opcodes.decode_options

    def counted(*arguments: Any) -> dict[str, Any]:
        decodes.append(arguments)
        return decode(*arguments)

    monkeypatch.setattr(opcodes, "decode_options", counted)
    operators = load_model(data).subgraphs[0].operators
    assert [op.options["fused_activation_function"] for op in operators] == [1, 1, 3, 1]
    assert decodes == []
    assert len({id(op.options) for op in operators}) == 2


def test_reading_a_model_without_an_offline_plan_leaves_its_codec_unimported(
    tmp_path: Any,
) -> None:
    """The offline plan's codec is imported when a model has one, not for every read (a check
    imports only what it needs)."""
    path = tmp_path / "plain.tflite"
    path.write_bytes(_three_tensor_model())
    code = (
        "import sys; from arenalens.tflite.reader import load_model; "
        f"load_model({str(path)!r}); print('arenalens.tflite.offline_plan' in sys.modules)"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "False"


def _scaled_chain(count: int) -> bytes:
    """`count` per-channel quantized tensors in one subgraph (a chain of ADDs)."""
    builder = ModelBuilder()
    main = builder.add_subgraph()
    quantization = QuantizationSpec((0.5, 0.25), (0, 0))
    previous = main.add_tensor("input", (2,), "INT8", quantization=quantization)
    main.set_inputs([previous])
    for index in range(count):
        output = main.add_tensor(f"add_{index}", (2,), "INT8", quantization=quantization)
        main.add_operator("ADD", [previous, previous], [output])
        previous = output
    main.set_outputs([previous])
    return builder.build()


def test_table_at_is_the_vectors_table_and_refuses_past_its_end() -> None:
    data = _scaled_chain(5)
    root = TableView(data, struct.unpack_from("<I", data, 0)[0], len(data))
    subgraph = root.table_at(8, 0)  # Model.subgraphs (its vtable slot)
    assert subgraph.pos == root.tables(8)[0].pos
    tensors = subgraph.tables(4)  # SubGraph.tensors
    assert [subgraph.table_at(4, i).pos for i in range(len(tensors))] == [t.pos for t in tensors]
    for past in (len(tensors), -1):
        with pytest.raises(IndexError):
            subgraph.table_at(4, past)


def test_one_tensors_scales_are_read_without_a_view_of_every_tensor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Called once per tensor (LiteRT's prepare, a split's channels), a view of every tensor per
    # call made reading a model's scales quadratic in its size.
    model = load_model(_scaled_chain(6))

    def every_table(self: TableView, slot: int) -> list[TableView]:
        raise AssertionError("read one table, not the whole vector")

    monkeypatch.setattr(TableView, "tables", every_table)
    assert reader.read_quantization_scales(model, 0, 6) == (0.5, 0.25)
    assert reader.read_quantization_zero_points(model, 0, 3) == (0, 0)
    assert reader.read_custom_options(model, 0, 2) == b""
