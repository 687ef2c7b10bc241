"""The XNNPACK delegate's build moment (runtimes/litert/heap_build.py) against the wheel's
trace, block for block: what allocate_tensors() holds at its highest moment and frees before
it returns (the kernel's XNNPACK subgraph, Subgraph::Create's containers, the partition, every
subgraph's old dims arrays, the delegate creators, the Python call's blocks), read with

    python -m tests.litert_heap_trace MODEL.tflite xnnpack --build-moment   # "as requested"

(the requests' own glibc chunks: the usable bytes move by 16 B with the process's history,
which the heap placement allowance covers). Until session 14 the replay was 170-290 B short on
control-flow models and var10_341 (every subgraph's old dims, the subsets' vector capacity and
its vectors' pushes, the plan-sized node arrays; and over by the dims of nodes prepared at the
first invoke and a range-built set's 80 B), hidden by the allowance: docs/litert-heap.md,
"The XNNPACK build moment, block for block".

The cf14_ / turns14_ / ifstate14_ models were drawn after the rule was written and measured on
the AMD EPYC into tests/data/litert_heap_avx2.json (its `command` remakes them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking, heap_build, xnnpack_custom
from arenalens.runtimes.litert.glibc import usable
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import X86_64_V3_ZEN
from arenalens.runtimes.litert.libstdcxx import sized_bucket_count
from tests.litert_heap_measure import HELD_OUT, REPO_ROOT, held_out_model

CACHE: dict[str, Any] = json.loads((REPO_ROOT / "tests/data/litert_heap_avx2.json").read_text())
FAMILIES = {name: (family, seed, name) for name, family, seed in HELD_OUT}
# The traced build transient (bytes as requested) of models whose allocate_tensors() peaks at
# the last delegate kernel's Init: six cached models, then every such held-out session-14 draw.
TRACED = {
    "cf11_3": 31472,
    "cf11_6": 31792,
    "var10_341": 31216,
    "var10_319": 32288,  # (2): two of its outputs are prepared at the first invoke
    "zen10_graph_882": 32104,  # (4): a tensor three nodes read, pushed as an output each time
    "var12_1218": 32816,
    "cf14_1": 31600,
    "cf14_2": 31816,
    "cf14_3": 31496,
    "cf14_4": 31352,
    "cf14_8": 31056,
    "cf14_9": 31312,
    "cf14_10": 31528,
    "cf14_11": 31520,
    "cf14_12": 31328,
    "cf14_13": 31624,
    "cf14_14": 31792,
    "cf14_16": 31032,
    "turns14_1": 31600,
    "turns14_2": 31816,
    "turns14_3": 31248,
    "turns14_4": 31624,
    "turns14_5": 31768,
    "turns14_7": 31600,
    "turns14_8": 31792,
    "ifstate14_2": 31328,
    "ifstate14_3": 31056,
    "ifstate14_4": 31328,
    "ifstate14_8": 31056,
    # Session 15: over by the dims of subgraphs allocate_tensors() never prepares (a signature's
    # own: 24-120 B) or by a partition that did not chain the WHILE (cfvar11_6/_11: 24 B), and
    # under by the empty temporaries arrays Prepare replaces (zen10_graph_881: 48 B) before.
    "xnn10_signatures_1": 31984,
    "xnn10_signatures_2": 30912,
    "xnn10_signatures_6": 31184,
    "xnn10_signatures_7": 31184,
    "xnn10_signatures_13": 31432,
    "xnn10_signatures_19": 33400,
    "xnn10_signatures_20": 31720,
    "cfvar11_6": 32040,
    "cfvar11_11": 31224,
    "zen10_graph_881": 33560,
}
DRAWN14 = sorted(name for name in FAMILIES if name.startswith(("cf14_", "turns14_", "ifstate14_")))
PHASES = (("after_allocate", "after_setup"), ("after_invoke", "after_first_invoke"),
          ("peak", "peak"))  # fmt: skip


def _model(name: str, folder: Path) -> Any:
    path = folder / f"{name}.tflite"
    path.write_bytes(held_out_model(*FAMILIES[name]))
    return analyze(path, runtime="litert")


@pytest.mark.parametrize("name", sorted(TRACED))
def test_the_build_transient_is_the_traced_blocks(name: str, tmp_path: Path) -> None:
    model = xnnpack_custom.as_xnnpack_builtins(_model(name, tmp_path).model)
    graph, subset, shared = heap_build.delegate_kernels(model)[-1]
    assert heap_build.kernel_transient(graph, subset, shared, model) == TRACED[name]


def test_every_subgraphs_old_dims_are_held(tmp_path: Path) -> None:
    """cf11_3 (a WHILE whose body holds an IF of two delegated branches): 13 old dims arrays
    are freed after the last kernel's Init (traced): each subgraph's outputs and its children's
    inputs the IF's and WHILE's Prepare resize, not the condition's unread input (its
    RemoveUnusedInputs), not the primary subgraph's inputs."""
    model = xnnpack_custom.as_xnnpack_builtins(_model("cf11_3", tmp_path).model)
    assert heap_build.held_dims(model) == 13 * usable(8)


def test_nodes_prepared_at_the_first_invoke_keep_their_dims(tmp_path: Path) -> None:
    """var10_319: PrepareOpsStartingAt stops after a rank-0 READ_VARIABLE; of the four outputs
    Prepare would resize, the two after it wait for the first invoke (traced: 2 freed)."""
    model = xnnpack_custom.as_xnnpack_builtins(_model("var10_319", tmp_path).model)
    assert heap_build.held_dims(model) == 2 * usable(8)


def test_the_partition_vector_grows_one_subset_past_what_it_keeps(tmp_path: Path) -> None:
    """graph_info.cc Partition emplaces a last, empty subset and pops it: var10_341's four
    subsets sit in a vector of eight (640 B, traced), cf11_3's one in a vector of two (160 B);
    the delegate's two node arrays are the plan's size (6 nodes: 28 B requests, traced)."""
    model = _model("var10_341", tmp_path).model
    graph = model.subgraphs[0]
    split = heap_build.partition(graph, model)
    subsets = heap_build.node_subsets(graph, split.delegated)
    assert len(subsets) == 4 and len(split.delegated) == 4
    vectors = 3 * 24 + 3 * 24 + 2 * 24 + 3 * 24  # each subset's nodes, inputs, outputs
    expected = 2 * usable(28) + usable(8 * 80) + vectors + heap_build.CALL_BYTES
    assert heap_build.partition_bytes(graph, subsets) == expected


def test_only_the_subgraphs_allocate_tensors_prepares_replace_dims(tmp_path: Path) -> None:
    """interpreter.cc AllocateTensors prepares the primary subgraph, and if.cc / while.cc
    Prepare their children: a signature's own subgraph keeps its dims arrays until it runs
    (xnn10_signatures_1: one old dims array freed by allocate_tensors(), traced; 72 B were
    counted for its three subgraphs)."""
    model = xnnpack_custom.as_xnnpack_builtins(_model("xnn10_signatures_1", tmp_path).model)
    assert len(model.subgraphs) == 3 and heap_build.prepared_subgraphs(model) == [0]
    assert heap_build.held_dims(model) == usable(8)
    control_flow = xnnpack_custom.as_xnnpack_builtins(_model("cfvar11_6", tmp_path).model)
    assert heap_build.prepared_subgraphs(control_flow) == [0, 1, 2, 3, 4]


def test_the_partition_chains_control_flow_as_a_side_effect(tmp_path: Path) -> None:
    """Subgraph::OpMightHaveSideEffect: a resource input or output, or an IF, WHILE or
    CALL_ONCE; graph_info.cc chains those nodes in plan order. cfvar11_6's primary subgraph
    (VAR_HANDLE, ASSIGN_VARIABLE, WHILE, VAR_HANDLE, READ_VARIABLE, ADD): the read waits for
    the WHILE, so the delegate's kernels are (0, 1) and (3, 4, 5), not (0, 1, 3, 4) and (5)
    (traced: the read's dims are not a kernel output's, never resized)."""
    model = xnnpack_custom.as_xnnpack_builtins(_model("cfvar11_6", tmp_path).model)
    graph = model.subgraphs[0]
    subsets = heap_build.node_subsets(graph, heap_build.partition(graph, model).delegated)
    assert [(s.operators, s.delegated) for s in subsets] == [
        ((0, 1), True),
        ((2,), False),
        ((3, 4, 5), True),
    ]


def test_prepare_replaces_empty_temporaries_arrays(tmp_path: Path) -> None:
    """zen10_graph_881: its RFFT2D's and REDUCE_PROD's Prepare free the empty temporaries
    array AddNodeWithParameters made (two 4 B requests freed by allocate_tensors(), traced)."""
    model = xnnpack_custom.as_xnnpack_builtins(_model("zen10_graph_881", tmp_path).model)
    assert heap_build.replaced_temporaries(model) == 2 * usable(4)


def test_a_set_built_from_a_range_is_sized_at_once() -> None:
    """Subgraph::Create's inputs set is built from the subset's inputs: 2 buckets for 2 (a
    16 B request in var10_341's trace), 3 for 3 (cf11_3's), not the 13 of an insertion."""
    assert [sized_bucket_count(n) for n in range(6)] == [1, 2, 2, 3, 5, 5]
    assert sized_bucket_count(14) == 17 and sized_bucket_count(100) == 103


@pytest.mark.parametrize("name", DRAWN14)
def test_held_out_control_flow_is_never_under(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    epyc = eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")
    analysis = _model(name, tmp_path)
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for mode, delegate in (("builtin", "none"), ("xnnpack", "xnnpack")):
        heap = interpreter_heap(analysis.model, sizes, delegate=delegate, isa=X86_64_V3_ZEN)
        measured = CACHE["models"][f"{name}.tflite"][mode]
        for key, predicted in PHASES:
            assert getattr(heap, predicted) >= measured[key], (mode, key)
        assert heap.peak <= measured["peak"] * 1.01, (mode, heap.peak / measured["peak"])


def test_a_build_transient_of_nothing_is_not_an_estimate(tmp_path: Path) -> None:
    """ifstate13_12 under XNNPACK: the build moment, an upper bound, is under the first invoke's
    peak as counted, so the build transient is 0 B and adds nothing to any figure: the part is
    exact and the heap's words (JSON, terminal, page) no longer list it. Before: "estimate that
    errs high: XNNPACK build transient" under a heap whose every other part is exact.
    cf11_19's transient (13,016 B above its first invoke) is replayed on a replayed ISA since
    session 16 (exact, not listed), and still a labelled bound on an estimated one (x86-64-v3)."""
    from arenalens.report.heap_output import heap_tables
    from arenalens.runtimes.litert.heap_json import heap_document
    from arenalens.runtimes.litert.isa import HOST, X86_64_V3
    from tests.litert_control_flow_heap_cases import control_flow_heap_case, if_state_case

    path = tmp_path / "model.tflite"
    for data, isa, counted, listed in (
        (if_state_case(12), HOST, False, False),
        (control_flow_heap_case(19), HOST, True, False),
        (control_flow_heap_case(19), X86_64_V3, True, True),
    ):
        path.write_bytes(data)
        analysis = analyze(path, runtime="litert")
        sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
        heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=isa)
        [part] = [part for part in heap.parts if part.name == "XNNPACK build transient"]
        assert (part.nbytes > 0) is counted and part.exact is not listed
        if not isa.replayed:
            continue  # the ISA's own estimate words (isa.IsaProfile.estimate)
        document = heap_document(heap)
        shown = " ".join(str(text) for text in heap_tables([document]))
        assert "XNNPACK build transient" not in str(document["estimate"])
        assert "XNNPACK build transient" not in shown
        if not counted:  # (cf11_19 has other parts that are bounds: its ways)
            assert document["exact"] is True
