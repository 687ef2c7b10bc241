"""Float16 weights under XNNPACK (runtimes/litert/xnnpack_float16.py): the DEQUANTIZEs the
delegate skips (float16 filters and biases of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) and
those it unpacks ahead (a float16 constant an ADD reads), against the 2.3.0 wheel on the AMD
EPYC (tests/data/litert_heap_held18.json: held18_fp16_*, held18b_5 / _7, and fp16x_*, drawn
after the rule, tests/litert_fp16_18_cases.py). Every moment within 1% and never under; before
the replay they were labelled bounds at 1.47-1.99x (held18b_5 / _7 1.0224x at the peak)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking, xnnpack_float16
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import X86_64_V3_ZEN
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import load_model
from tests.litert_fp16_18_cases import NAMES as FP16X
from tests.litert_fp16_18_cases import fp16x_case
from tests.litert_held15 import MOMENTS
from tests.litert_held18 import DATA, case

CACHE: dict[str, Any] = json.loads(DATA.read_text())["models"]
HELD18 = (
    *((f"held18_fp16_{n}", "fp16", n) for n in (1, 2, 3, 5)),
    *((f"held18b_{n}", "held18b", n) for n in (5, 7)),
)
CASES = {name: (family, n) for name, family, n in (*HELD18, *FP16X)}


@pytest.fixture(autouse=True)
def _epyc_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    epyc = eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")


def _bytes(name: str) -> bytes:
    family, n = CASES[name]
    return fp16x_case(n) if family == "fp16x" else case(family, n)


def test_every_fp16x_model_is_measured() -> None:
    assert len(FP16X) == 6
    assert all("error" not in CACHE[f"{name}.tflite"]["xnnpack"] for name in CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_xnnpack_within_one_percent_and_never_under(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(_bytes(name))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=X86_64_V3_ZEN)
    way = next((way for way in heap.ways if way.zero_inputs), heap)
    measured = CACHE[f"{name}.tflite"]["xnnpack"]
    for key, attribute, _ in MOMENTS:
        figure = getattr(way, attribute)
        assert measured[key] <= figure <= 1.01 * measured[key], (key, figure, measured[key])


def _model(readers: tuple[str, ...], tmp_path: Path) -> Any:
    """A float16 constant DEQUANTIZEd and read by `readers` (FC: a FULLY_CONNECTED's weights,
    FC0: its data, ADD)."""
    builder = ModelBuilder(description="fp16 test")
    g = builder.add_subgraph("main")
    x = g.add_tensor("x", [1, 8])
    half = g.add_constant("w16", np.ones((8, 8), dtype=np.float16))
    w = g.add_tensor("w", [8, 8])
    g.add_operator("DEQUANTIZE", [half], [w])
    outputs = []
    for n, reader in enumerate(readers):
        out = g.add_tensor(f"y{n}", [1, 8] if reader != "FC0" else [8, 8])
        if reader == "ADD":
            g.add_operator("ADD", [x, w], [out], options={"fused_activation_function": "NONE"})
        else:
            other = g.add_constant(f"k{n}", np.ones((8, 8), np.float32))
            inputs = [x, w, -1] if reader == "FC" else [w, other, -1]
            options = {"fused_activation_function": "NONE"}
            g.add_operator("FULLY_CONNECTED", inputs, [out], options=options)
        outputs.append(out)
    g.set_inputs([x])
    g.set_outputs(outputs)
    path = tmp_path / "m.tflite"
    path.write_bytes(builder.build())
    return load_model(path)


def test_which_dequantizes_the_delegate_skips(tmp_path: Path) -> None:
    """PrepareOpsToDelegate: skipped when every reader is a GEMM reading it past its data;
    unpacked ahead (a float32 copy) when another reader reads it; a GEMM's data is left."""

    def found(*readers: str) -> set[tuple[int, bool]]:
        graph = _model(readers, tmp_path).subgraphs[0]
        return set(xnnpack_float16.static_dequantizes(graph).values())

    assert found("FC", "FC") == {(1, True)}
    assert found("FC", "ADD") == {(1, False)}
    assert not found("FC0")


def test_the_replayed_model_reads_float32_constants(tmp_path: Path) -> None:
    model = _model(("FC", "FC"), tmp_path)
    replayed = xnnpack_float16.as_float32_weights(model)
    graph = replayed.subgraphs[0]
    assert [operator.opcode for operator in graph.operators] == ["FULLY_CONNECTED"] * 2
    assert all(operator.inputs[1] == 1 for operator in graph.operators)
    assert graph.tensors[1].dtype.name == "FLOAT32"
    # Each FULLY_CONNECTED's creation holds a float32 copy of its 8x8 kernel (256 B).
    assert sorted(xnnpack_float16.conversions(model, replayed).values()) == [264, 264]
