"""IFs and WHILEs whose Prepare sets their outputs dynamic (if.cc / while.cc: SetTensorToDynamic):
no arena address for them, the parent's Prepare stops after the node, and the reason is on the
node (`RuntimeNode.eval_dynamic`), computed once. Against the wheel: reshaping_while(3) gave
MISMATCH (subgraph 0 high-water 8,320 predicted, 4,160 real; reshaping_if 160 vs 96), and 28 of
40 drawn cases (tests/litert_dynamic_control_flow_cases.py) disagreed before the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert.prepare.state import Allocation
from arenalens.runtimes.litert.rules import litert_plans
from tests.litert_control_flow_heap_cases import reshaping_if, reshaping_while
from tests.litert_dynamic_control_flow_cases import DYNAMIC, KINDS, dynamic_control_flow_case
from tests.litert_random_graphs import disagreements_of

# Held out: drawn after the rule was written, one of each kind (seed % 10 is the kind).
SAMPLE = tuple(range(240, 250))


@pytest.mark.parametrize("seed", range(len(KINDS)))
def test_dynamic_outputs_and_their_reason(seed: int) -> None:
    """Every output of a dynamic IF or WHILE is Dynamic and its node says why; a static one
    (same shapes, or a scalar count that comes back [1]) keeps its outputs in the arena."""
    kind = KINDS[seed]
    model = analyze(dynamic_control_flow_case(seed), runtime="litert").model
    main = litert_plans(model)[0].prepared
    node = next(node for node in main.nodes if node.opcode in ("IF", "WHILE"))
    outputs = [main.tensors[index] for index in node.outputs if index >= 0]
    assert bool(node.eval_dynamic) == (kind in DYNAMIC)
    assert all((t.allocation is Allocation.DYNAMIC) == (kind in DYNAMIC) for t in outputs)
    assert node.dynamic_output == (kind in DYNAMIC)


def test_the_reasons() -> None:
    """One reason per rule of while.cc Prepare_impl and if.cc Prepare."""
    reasons = {
        kind: next(
            node.eval_dynamic
            for node in litert_plans(
                analyze(dynamic_control_flow_case(seed), runtime="litert").model
            )[0].prepared.nodes
            if node.opcode in ("IF", "WHILE")
        )
        for seed, kind in enumerate(KINDS)
    }
    assert reasons["while_grow"] == "its body reshapes a loop value"
    assert reasons["while_dynamic"] == reasons["while_if"] == "its body has dynamic tensors"
    assert reasons["if_shapes"] == "its branches give outputs of different shapes"
    assert reasons["if_dynamic"] == reasons["if_while"] == "a branch has dynamic tensors"


@pytest.mark.runtime
@pytest.mark.parametrize("seed", SAMPLE)
def test_drawn_control_flow_matches_the_wheel(seed: int, tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    path = tmp_path / f"dyncf_{seed}.tflite"
    path.write_bytes(dynamic_control_flow_case(seed))
    assert disagreements_of(path) == []


@pytest.mark.runtime
@pytest.mark.parametrize("case", ["while", "if"])
def test_reshaping_control_flow_matches_the_wheel(case: str, tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    path = tmp_path / f"reshaping_{case}.tflite"
    path.write_bytes(reshaping_while(3) if case == "while" else reshaping_if())
    assert disagreements_of(path) == []
