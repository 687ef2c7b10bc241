"""The stored option tables: true to the installed `tflite` package, and decoding exactly as the
generated classes do."""

from __future__ import annotations

import importlib
import random
import struct
import subprocess
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

import flatbuffers
import numpy as np
import pytest

from arenalens.errors import ModelError
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.opcodes import (
    OPTION_TABLES_PATH,
    LazyOptions,
    decode_options,
    eager_options,
    snake_case,
)
from tests.tflite_io.option_tables import derive, reference_decode, render, union_members

_NUMPY_TYPES = {
    "?": np.bool_,
    "b": np.int8,
    "B": np.uint8,
    "h": np.int16,
    "H": np.uint16,
    "i": np.int32,
    "I": np.uint32,
    "q": np.int64,
    "Q": np.uint64,
    "f": np.float32,
    "d": np.float64,
}


def test_stored_tables_match_the_installed_package() -> None:
    assert Path(OPTION_TABLES_PATH).read_text() == render(derive()), (
        "option_tables.json is stale: python -m tests.tflite_io.option_tables"
    )


def _random_scalar(kind: str, rng: random.Random) -> Any:
    if kind == "?":
        return rng.random() < 0.5
    if kind in "fd":
        value = rng.uniform(-1e6, 1e6)
        return struct.unpack("<f", struct.pack("<f", value))[0] if kind == "f" else value
    bits = struct.calcsize(f"<{kind}") * 8
    low, high = (
        (0, (1 << bits) - 1) if kind.isupper() else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    )
    return rng.choice([low, high, 0, 1, rng.randint(low, high)])


def _table_bytes(name: str, fields: list[list[Any]], rng: random.Random) -> tuple[bytes, int]:
    """One options table with random values in a random subset of its fields."""
    module = importlib.import_module(f"tflite.{name}")
    adders = {
        snake_case(function_name[len(f"{name}Add") :]): function
        for function_name, function in vars(module).items()
        if function_name.startswith(f"{name}Add")
    }
    builder = flatbuffers.Builder(64)
    values: dict[str, Any] = {}
    for key, _, kind, _ in fields:
        if rng.random() < 0.3:
            continue  # absent: the default
        if kind == "string":
            text = "".join(rng.choice("abcé€ \x00") for _ in range(rng.randint(0, 6)))
            values[key] = builder.CreateString(text)
        elif kind.startswith("vector:"):
            element = kind.removeprefix("vector:")
            items = [_random_scalar(element, rng) for _ in range(rng.randint(0, 5))]
            values[key] = builder.CreateNumpyVector(np.array(items, dtype=_NUMPY_TYPES[element]))
        else:
            values[key] = _random_scalar(kind, rng)
    getattr(module, f"{name}Start")(builder)
    for key, value in values.items():
        adders[key](builder, value)
    builder.Finish(getattr(module, f"{name}End")(builder))
    data = bytes(builder.Output())
    return data, int.from_bytes(data[:4], "little")


@pytest.mark.parametrize("seed", range(3))
def test_every_table_decodes_as_the_generated_classes_do(seed: int) -> None:
    rng = random.Random(seed)
    document = derive()
    unions = union_members()
    for union, members in unions.items():
        for code, name in sorted(members.items()):
            fields = document["tables"].get(name)
            if fields is None:
                continue
            data, position = _table_bytes(name, fields, rng)
            where = ((code, position), (0, 0)) if union == "options" else ((0, 0), (code, position))
            expected = reference_decode(data, *where)
            found = decode_options(data, *where)
            assert list(found.items()) == list(expected.items()), name
            assert [type(v) for v in found.values()] == [type(v) for v in expected.values()], name


def test_type_none_or_no_table_decodes_to_nothing() -> None:
    tables = derive()["tables"]
    data, position = _table_bytes("Conv2DOptions", tables["Conv2DOptions"], random.Random(7))
    assert decode_options(data, (0, position), (0, 0)) == {}  # BuiltinOptions.NONE
    assert decode_options(data, (1, 0), (0, 0)) == {}  # a type but no table


def test_an_options_table_outside_the_file_is_a_model_error() -> None:
    conv = union_members()["options"]
    code = next(c for c, n in conv.items() if n == "Conv2DOptions")
    data = b"\x00" * 16
    with pytest.raises(ModelError, match="malformed operator options"):
        dict(LazyOptions(data, (code, 100), (0, 0)))


def test_scalar_options_are_decoded_as_read_others_when_used() -> None:
    """`eager_options`: a table of scalars only is decoded at once (bounded work) into a
    read-only dict; a table with a vector or string, or one that does not decode, is left to
    `LazyOptions`, which decodes it on first use and fails there, as before."""
    members = union_members()["options"]
    codes = {name: code for code, name in members.items()}
    tables = derive()["tables"]
    data, position = _table_bytes("Conv2DOptions", tables["Conv2DOptions"], random.Random(3))
    key = ((codes["Conv2DOptions"], position), (0, 0))
    found = eager_options(data, key, {})
    assert isinstance(found, MappingProxyType)
    assert dict(found) == decode_options(data, *key)
    vector_table = next(
        name
        for name, fields in tables.items()
        if name in codes and any(kind.startswith("vector:") for _, _, kind, _ in fields)
    )
    data, position = _table_bytes(vector_table, tables[vector_table], random.Random(3))
    assert eager_options(data, ((codes[vector_table], position), (0, 0)), {}) is None
    outside = ((codes["Conv2DOptions"], 100), (0, 0))
    assert eager_options(b"\x00" * 16, outside, {}) is None
    with pytest.raises(ModelError, match="malformed operator options"):
        dict(LazyOptions(b"\x00" * 16, *outside))


def test_reading_options_imports_neither_flatbuffers_nor_numpy() -> None:
    # The builder writes options through numpy: a child process only reads the model.
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, y = graph.add_tensor("x", [1, 8, 8, 4]), graph.add_tensor("y", [1, 4, 4, 4])
    graph.add_operator("MAX_POOL_2D", [x], [y], options={"filter_width": 2, "stride_w": 2})
    graph.set_inputs([x])
    graph.set_outputs([y])
    child = (
        "import sys\n"
        "from arenalens.tflite.reader import load_model\n"
        "model = load_model(sys.stdin.buffer.read())\n"
        "options = dict(model.subgraphs[0].operators[0].options)\n"
        "assert options['filter_width'] == 2 and options['stride_w'] == 2, options\n"
        "print(sorted(m for m in ('numpy', 'flatbuffers') if m in sys.modules))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", child],
        input=builder.build(),
        capture_output=True,
        check=True,
    )
    assert completed.stdout.decode().strip() == "[]"
