"""Variables read inside IF / WHILE subgraphs (runtimes/litert/variable_order.py): a read fails
on the inputs whose path runs it before any assignment made its variable, and LiteRT then
cannot run the model (CANNOT RUN, naming the path). The expected verdicts are the 2.3.0 wheel's,
input by input (tests/litert_control_flow_cases.py; `python -m tests.litert_control_flow_cases`
prints them): the builtin kernels fail exactly there, XNNPACK (which takes the float reads and
makes the variables from its proxies) runs them all."""

from __future__ import annotations

import json

import pytest

from arenalens.litert_memory import delegate_verdict
from arenalens.pipeline import analyze
from arenalens.tflite.reader import parse_model
from tests.litert_control_flow_cases import (
    REMAKE,
    WHEEL,
    held_out_cases,
    probe_cases,
    wheel_runs,
)

# name → the wheel's first invoke with the first input 0 and 1, builtin kernels only (XNNPACK
# ran every case with both), measured before the rule was written.
PROBES = {
    "if_then_reads": (True, False),
    "if_both_read": (False, False),
    "if_assign_before_then_reads": (True, True),
    "if_then_assigns_read_after": (False, True),
    "if_both_assign_read_after": (True, True),
    "if_then_assigns_then_reads": (True, True),
    "while_cond_reads": (False, False),
    "while_cond_reads_assigned_before": (True, True),
    "while_body_reads_first": (False, True),
    "while_body_assigns_first": (True, True),
    "while_body_assigns_read_after": (True, False),
}
# What each failing read's reason says of the path that fails.
UNLESS = "unless an IF branch or WHILE body that assigns it ran before"
PATHS = {
    "if_then_reads": ("IF operator 0 of subgraph 0 takes its then branch (subgraph 1)",),
    "if_both_read": ("takes its then branch (subgraph 1)", "takes its else branch (subgraph 2)"),
    "if_then_assigns_read_after": (UNLESS,),
    "while_cond_reads": ("has made it ('variable != nullptr' at Invoke)",),
    "while_body_reads_first": ("WHILE operator 0 of subgraph 0 runs its body (subgraph 2)",),
    "while_body_assigns_read_after": (UNLESS,),
}


def _verdicts(data: bytes) -> dict[str, bool]:
    analysis = analyze(parse_model(data, "case"), runtime="litert")
    return {delegate: delegate_verdict(analysis, delegate).runs for delegate in ("none", "xnnpack")}


@pytest.mark.parametrize("name", list(PROBES))
def test_a_read_on_a_path_some_inputs_take_stops_the_builtin_kernels(name: str) -> None:
    data = probe_cases()[name]
    assert _verdicts(data) == {"none": all(PROBES[name]), "xnnpack": True}
    analysis = analyze(parse_model(data, "case"), runtime="litert")
    reasons = [obstacle.reason for obstacle in delegate_verdict(analysis, "none").obstacles]
    assert len(reasons) == len(PATHS.get(name, ()))
    for reason, path in zip(reasons, PATHS.get(name, ()), strict=True):
        assert path in reason


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["if_then_reads", "while_body_assigns_read_after"])
def test_the_wheel_fails_on_the_inputs_that_take_the_path(name: str) -> None:
    pytest.importorskip("ai_edge_litert.interpreter")
    data = probe_cases()[name]
    assert tuple(wheel_runs(data, "none", value) for value in (0, 1)) == PROBES[name]
    assert all(wheel_runs(data, "xnnpack", value) for value in (0, 1))


def test_held_out_models_get_the_wheels_verdict() -> None:
    """24 WHILE loops with an IF on the count in the body, drawn after the rule was committed
    (held_out_cases, seeds 8001-8024), run on the wheel with counts -7, -2, -1, 0 and 1 under
    both resolvers (tests/data/litert_control_flow.json, `python -m
    tests.litert_control_flow_cases --write`): LiteRT runs a model under a delegate when every
    count ran. The wheel: builtin kernels 7 run, 9 fail on some counts, 8 on all; XNNPACK 24."""
    measured = json.loads(WHEEL.read_text())
    assert measured["command"] == REMAKE
    cases = held_out_cases()
    assert set(measured["cases"]) == set(cases)
    for name, data in cases.items():
        expected = {delegate: all(runs) for delegate, runs in measured["cases"][name].items()}
        assert _verdicts(data) == expected, name


# control_flow_variables held-out models (tests/litert_heap_measure.held_out_model) whose IF in
# the WHILE body compares the loop count with the constant the cond does (`count < 1` in `count
# < 1`: the else branch never runs) → whether the builtin kernels run them on every count.
GUARDED = {121797: True, 120102: True, 120119: True, 120144: True, 120265: False}


@pytest.mark.parametrize("seed", sorted(GUARDED))
def test_a_branch_the_loop_condition_rules_out_is_not_walked(seed: int) -> None:
    """Seed 1300201 flow 142 (`python -m flows --replay 142 --seed 1300201 --family stateful
    --wide`): control_flow_variables seed 121797 reads 't' first in the else branch of an IF
    on `count < 1` inside a WHILE on `count < 1`; check and report called it CANNOT RUN ("on the
    inputs for which ... IF operator 2 takes its else branch"), which no count gives: the real
    interpreter runs it on every count. A branch the loop's condition rules out is not walked;
    seed 120265 reads first where a count does run (count 1: the wheel fails there).
    Of 300 held-out seeds (120000-120299), 23 changed, every one as the wheel runs them."""
    from tests.litert_heap_measure import held_out_model

    data = held_out_model("control_flow_variables", seed)
    assert _verdicts(data) == {"none": GUARDED[seed], "xnnpack": True}


@pytest.mark.runtime
@pytest.mark.parametrize("seed", sorted(GUARDED))
def test_the_wheel_runs_the_ruled_out_branch_models_on_every_count(seed: int) -> None:
    pytest.importorskip("ai_edge_litert.interpreter")
    from tests.litert_control_flow_cases import HELD_OUT_COUNTS
    from tests.litert_heap_measure import held_out_model

    data = held_out_model("control_flow_variables", seed)
    runs = [wheel_runs(data, "none", count) for count in HELD_OUT_COUNTS]
    assert all(runs) == GUARDED[seed], runs
