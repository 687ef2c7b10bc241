"""Resource variables' heap under LiteRT (runtimes/litert/heap_resources.py, the variable
kernels' facts in heap_kernels.py, xnnpack_variables in the XNNPACK partition, the delegate's
variable maps in xnnpack_objects.py and XNNPACK's copy fusion in xnnpack_workspace.py), against
the 2.3.0 wheel's traces (tests/litert_heap_trace.py) and cached measurements."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import (
    glibc,
    heap_interpreter,
    heap_resources,
    heap_xnnpack,
    xnnpack_objects,
    xnnpack_variables,
    xnnpack_workspace,
)
from arenalens.runtimes.litert.heap import WRAPPER_VARIATION_BYTES, interpreter_heap
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder
from arenalens.tflite.reader import parse_model
from tests.litert_cases import _single
from tests.litert_heap_measure import DATA as HEAP_DATA
from tests.litert_variable_cases import variable_heap_model
from tests.litert_xnnpack_parts import DATA, model_file


def _streaming(long_names: bool = False, *, relu_of_sum: bool = True) -> Model:
    """VAR_HANDLE state; total = read(state) + x; state = total; out = relu(total) (or
    relu(x)): a streaming cell."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 8])
        handle = g.add_tensor("state/handle", [1], "RESOURCE")
        name = "a_rather_long_variable_name" if long_names else "state"
        g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
        read = g.add_tensor("read", [1, 8])
        g.add_operator("READ_VARIABLE", [handle], [read])
        total = g.add_tensor("total", [1, 8])
        g.add_operator("ADD", [read, x], [total])
        g.add_operator("ASSIGN_VARIABLE", [handle, total], [])
        out = g.add_tensor("out", [1, 8])
        g.add_operator("RELU", [total if relu_of_sum else x], [out])
        return [x], [out]

    return parse_model(_single(build), "streaming")


def test_variable_kernels_blocks_at_creation_are_known() -> None:
    """ParseVarHandle's params (16 B), var_handle::Init's VarParams (4 B) and one node of the
    interpreter's resource-id map per name pair (104 B; a name over 15 characters adds its
    string): the wheel's xcase_resource_variables trace, 72 B in 3 blocks and 384 B in 6."""
    model = _streaming()
    blocks = heap_interpreter.creation_blocks(model)
    assert all(block.exact for block in blocks)
    ids = [block.request for block in blocks if "resource ids" in block.site]
    assert ids == [104]
    long_ids = [
        block.request
        for block in heap_interpreter.creation_blocks(_streaming(long_names=True))
        if "resource ids" in block.site
    ]
    assert long_ids == [104, len("a_rather_long_variable_name") + 1]


def test_first_assignment_makes_the_variable() -> None:
    """CreateResourceVariableIfNotAvailable: the object (128 B), the map's 13 buckets on the
    first insertion, its node; AssignFrom: the dims copy and the data with 16 B of padding
    (the wheel's trace: 136, 104, 24, 24, 40 usable). A second assignment of the same shape
    allocates nothing; another size reallocates."""
    variables = heap_resources.Variables()
    first = list(variables.assign(("", "v"), (1, 4), 16))
    assert first == [136, 104, 24, 24, 40]
    assert list(variables.assign(("", "v"), (1, 4), 16)) == []
    assert list(variables.assign(("", "v"), (1, 8), 32)) == [glibc.usable(48), -40]
    assert list(variables.assign(("", "w"), (2,), 8)) == [136, 24, 24, 24]


def _runtime_nodes(model: Model) -> list[xnnpack_workspace._Node]:
    subgraph = model.subgraphs[0]
    split = heap_xnnpack.partition(subgraph, model)
    assert split.delegated == (0, 1, 2, 3, 4) and not split.unmodelled
    subset = next(s for s in heap_xnnpack.node_subsets(subgraph, split.delegated) if s.delegated)
    boundary = set(subset.inputs) | set(subset.outputs)
    return xnnpack_workspace._nodes(subgraph, subset.operators, boundary, model)


def test_read_copy_fuses_into_its_reader_and_assignment_into_its_writer() -> None:
    """xnn_subgraph_fusion: READ_VARIABLE's copy fuses downstream into the ADD reading its
    internal value (the ADD reads the resource); ASSIGN_VARIABLE's copy fuses upstream into
    the ADD writing its internal value only when the copy is that value's one consumer (the
    ADD then writes the resource). Fails if either fusion is dropped or over-applied."""
    kept = _runtime_nodes(_streaming())
    assert [node.kind for node in kept] == ["binary", "copy", "clamp"]
    assert kept[0].inputs == [1, 0]
    fused = _runtime_nodes(_streaming(relu_of_sum=False))
    assert [node.kind for node in fused] == ["binary", "clamp"]
    assert fused[0].inputs == [1, 0] and fused[0].outputs == [1]


def test_delegate_variable_maps() -> None:
    """The delegate's resource map (a 32-byte node per handle's resource, 13 buckets), copied
    into each delegate kernel, and its var-handle map (an 88-byte hash-caching node per name
    pair, 13 buckets): the wheel's xcase_resource_variables trace (40 B x 3 + 104, 88 x 3 +
    104)."""
    model = _streaming()
    resources, names = xnnpack_objects.variable_maps_bytes(model)
    assert (resources, names) == (40 + 104, 88 + 104)


def test_cached_variable_model_within_one_percent_after_setup_and_at_peak() -> None:
    """xcase_resource_variables (3 handles, one unused; a rank-0 read the delegate refuses):
    XNNPACK after setup and at the peak within 1% of the wheel's cached figures, never under;
    after the first invoke an estimate (the rank-0 read's re-plan is not replayed), over."""
    cached = json.loads(DATA.read_text())["models"]["xcase_resource_variables.tflite"]["heap"]
    with tempfile.TemporaryDirectory() as folder:
        path = model_file("xcase_resource_variables.tflite", Path(folder))
        assert path is not None
        model = parse_model(path.read_bytes(), path.name)
    heap = interpreter_heap(model, [], delegate="xnnpack")
    for figure, key in ((heap.after_setup, "after_allocate"), (heap.peak, "peak")):
        assert cached[key] <= figure <= 1.01 * cached[key]
    assert heap.after_first_invoke >= cached["after_invoke"]
    assert heap_resources.dynamic_reads(model.subgraphs[0])


_HEAP = json.loads(HEAP_DATA.read_text())["models"]
HELD_OUT = sorted(name for name in _HEAP if name.startswith("var7_"))


def test_held_out_variable_models_are_cached() -> None:
    assert len(HELD_OUT) == 24


@pytest.mark.parametrize("name", HELD_OUT)
def test_held_out_variable_model_within_one_percent(name: str) -> None:
    """Held-out variable models (tests/litert_variable_cases.py, drawn after the rules):
    builtin and XNNPACK after setup, after the first invoke and at the peak never under the
    wheel and, the wrapper allowance left out, within 1% where every part is replayed (a
    rank-0 read's first invoke is an estimate: only never under); the wheel's XNNPACK
    failures are the models arenalens refuses."""
    model = parse_model(variable_heap_model(int(name.removeprefix("var7_").split(".")[0])), name)
    refused = bool(xnnpack_variables.quantization_failures(model.subgraphs[0]))
    dynamic = heap_resources.dynamic_reads(model.subgraphs[0])
    for mode, delegate in (("builtin", "none"), ("xnnpack", "xnnpack")):
        real = _HEAP[name][mode]
        if "error" in real:
            assert mode == "xnnpack" and refused, real["error"]
            continue
        assert not (mode == "xnnpack" and refused)
        sizes = [
            result.runtime_plan.arena_size for result in analyze(model, runtime="litert").arenas
        ]
        heap = interpreter_heap(model, sizes, delegate=delegate)
        for figure, key in (
            (heap.after_setup, "after_allocate"),
            (heap.after_first_invoke, "after_invoke"),
            (heap.peak, "peak"),
        ):
            assert figure >= real[key], (mode, key)
            if not (dynamic and key != "after_allocate"):
                assert figure - WRAPPER_VARIATION_BYTES <= 1.01 * real[key], (mode, key)
