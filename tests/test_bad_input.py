"""Bad input: a one-line error naming the file and the problem, exit code 2, no traceback, fast."""

from __future__ import annotations

import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from arenalens import ModelError, load_model
from arenalens.cli import main
from arenalens.tflite.builder import ModelBuilder
from tests.hang_guard import no_hang


def small_model() -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    y = graph.add_tensor("y", [1, 8])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


def run_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["inspect", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(path: Path, capsys: pytest.CaptureFixture[str], fragment: str) -> None:
    with no_hang(5, str(path)):
        code, out, err = run_cli(path, capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(tmp_path / "nope.tflite", capsys, "no such file")


def test_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A folder is a batch of the models in it; one without models is an error.
    assert_one_line_error(tmp_path, capsys, "holds no .tflite files")


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.tflite"
    path.write_bytes(b"")
    assert_one_line_error(path, capsys, "empty file")


def test_random_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "random.tflite"
    path.write_bytes(random.Random(0).randbytes(4096))
    assert_one_line_error(path, capsys, "not a TFLite model")


def test_wrong_file_identifier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(small_model())
    data[4:8] = b"ABCD"
    path = tmp_path / "wrong_id.tflite"
    path.write_bytes(bytes(data))
    assert_one_line_error(path, capsys, "file identifier")


@pytest.mark.parametrize("keep", [8, 16, 40, 100, 0.5, 0.9])
def test_truncated_model(tmp_path: Path, capsys: pytest.CaptureFixture[str], keep: float) -> None:
    data = small_model()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    path = tmp_path / "truncated.tflite"
    path.write_bytes(data[:cut])
    assert_one_line_error(path, capsys, "")


def test_every_truncation_is_an_error_or_a_model() -> None:
    data = small_model()
    for cut in range(len(data)):
        try:
            load_model(data[:cut])
        except ModelError:
            continue


def with_patched_vector_length(data: bytes, old: tuple[int, ...], new_length: int) -> bytes:
    """Find the int32 vector holding `old` and rewrite its length word."""
    needle = struct.pack(f"<I{len(old)}i", len(old), *old)
    position = data.find(needle)
    assert position >= 0
    return data[:position] + struct.pack("<I", new_length) + data[position + 4 :]


def test_index_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    for index in range(300):  # pad so the patched index is a distinctive number
        graph.add_tensor(f"pad{index}", [1])
    x = graph.add_tensor("x", [1, 8])
    y = graph.add_tensor("y", [1, 8])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = builder.build()
    # Every one-element vector [x] now names tensor 999 (the model has 302).
    patched = data.replace(struct.pack("<Ii", 1, x), struct.pack("<Ii", 1, 999))
    assert patched != data
    path = tmp_path / "out_of_range.tflite"
    path.write_bytes(patched)
    assert_one_line_error(path, capsys, "names tensor 999, out of range")


def test_small_file_claiming_millions_of_tensors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    y = graph.add_tensor("y", [1, 8])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = builder.build()
    assert len(data) < 2048
    # The subgraph's tensors vector: a length word of 2 followed by two table offsets; find the
    # length word that precedes the tensors by trying each candidate until the loader complains.
    candidates = [i for i in range(0, len(data) - 4, 4) if data[i : i + 4] == struct.pack("<I", 2)]
    complaints = 0
    for position in candidates:
        hostile = data[:position] + struct.pack("<I", 5_000_000) + data[position + 4 :]
        path = tmp_path / "hostile.tflite"
        path.write_bytes(hostile)
        with no_hang(5, f"position {position}"):
            code, _, err = run_cli(path, capsys)
        if code == 2 and "5,000,000 entries" in err:
            complaints += 1
            assert len(err.strip().splitlines()) == 1
    assert complaints >= 1


def test_shape_product_overflowing_64_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    big = 2**31 - 1
    x = graph.add_tensor("x", [big, big, big])
    y = graph.add_tensor("y", [big, big, big])
    graph.add_operator("RELU", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    path = tmp_path / "overflow.tflite"
    path.write_bytes(builder.build())
    assert_one_line_error(path, capsys, "too large")


def test_operators_out_of_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b"))
    graph.add_operator("RELU", [a], [b])  # reads a before the next operator writes it
    graph.add_operator("RELU", [x], [a])
    graph.set_inputs([x])
    graph.set_outputs([b])
    path = tmp_path / "order.tflite"
    path.write_bytes(builder.build())
    assert_one_line_error(path, capsys, "before operator 1 writes it")


def test_data_cycle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b"))
    graph.add_operator("ADD", [x, b], [a])
    graph.add_operator("RELU", [a], [b])
    graph.set_inputs([x])
    graph.set_outputs([b])
    path = tmp_path / "cycle.tflite"
    path.write_bytes(builder.build())
    assert_one_line_error(path, capsys, "out of order, or a cycle")


def test_control_flow_cycle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = ModelBuilder()
    main_graph = builder.add_subgraph("main")
    body = builder.add_subgraph("body")
    for graph, callee in ((main_graph, 1), (body, 1)):
        x = graph.add_tensor("x", [1, 8])
        y = graph.add_tensor("y", [1, 8])
        graph.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": callee})
        graph.add_operator("RELU", [x], [y])
        graph.set_inputs([x])
        graph.set_outputs([y])
    path = tmp_path / "recursion.tflite"
    path.write_bytes(builder.build())
    assert_one_line_error(path, capsys, "control flow cycle")


def test_control_flow_index_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    graph.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": 9})
    graph.set_inputs([x])
    graph.set_outputs([x])
    path = tmp_path / "bad_call.tflite"
    path.write_bytes(builder.build())
    assert_one_line_error(path, capsys, "calls subgraph 9, out of range")


def test_strict_mode_refuses_tensors_nobody_writes() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, orphan, y = (graph.add_tensor(n, [1, 8]) for n in ("x", "orphan", "y"))
    graph.add_operator("ADD", [x, orphan], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    data = builder.build()
    load_model(data)  # tolerated by default, as both runtimes tolerate it
    with pytest.raises(ModelError, match="written by no operator"):
        load_model(data, strict=True)


def test_cli_entry_point_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "junk.tflite"
    path.write_bytes(b"\x00" * 64)
    result = subprocess.run(
        [sys.executable, "-m", "arenalens", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("name", "data", "fragment"),
    [
        ("model.h5", b"\x89HDF\r\n\x1a\n" + b"\x00" * 64, "Keras HDF5 model"),
        ("weights.bin", b"\x89HDF\r\n\x1a\n" + b"\x00" * 64, "TFLiteConverter.from_keras_model"),
        ("model.keras", b"PK\x03\x04" + b"\x00" * 64, "zip archive"),
        ("bundle.zip", b"PK\x03\x04" + b"\x00" * 64, "unzip it"),
        ("model.onnx", b"\x08\x07\x12\x04onnx" + b"\x00" * 64, "ONNX model"),
        ("saved_model.pb", b"\x08\x01\x12\x00" + b"\x00" * 64, "from_saved_model"),
    ],
)
def test_other_frameworks_get_how_to_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: bytes, fragment: str
) -> None:
    # Before issue 13 these said "file identifier is b'...'", which tells a user nothing.
    path = tmp_path / name
    path.write_bytes(data)
    assert_one_line_error(path, capsys, fragment)
    assert "file identifier" not in capsys.readouterr().err


def test_a_saved_model_folder_gets_how_to_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"\x08\x01")
    assert_one_line_error(folder, capsys, "SavedModel folder")
    assert main(["check", str(folder), str(folder), "--budget", "1MiB"]) == 2
    assert "from_saved_model" in capsys.readouterr().err


def test_the_c_header_names_the_model_file_not_its_absolute_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep" / "folder" / "net.tflite"
    path.parent.mkdir(parents=True)
    path.write_bytes(small_model())
    assert main(["export", str(path), "--format", "c-header"]) == 0
    header = capsys.readouterr().out
    assert "from net.tflite;" in header
    assert str(tmp_path) not in header
