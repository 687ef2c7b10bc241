"""optimize: smaller heads that the real TFLM runtime reproduces, outputs bit-identical."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens import load_model
from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.builds.build import HOST
from arenalens.cli import main
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.optimization import Optimization, optimize_model, pin_scratch, prove_outputs
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.problem import Buffer, Problem
from arenalens.planning.registry import run_planner
from arenalens.runtimes import get_runtime
from arenalens.tflite.rewriter import rewrite_model
from tests.conftest import SHARED_MODELS, shared_params, shared_reference
from tests.fixtures.optimize_models import residual_add_model, streaming_state_model
from tests.hang_guard import no_hang

EXACT_EFFORT = 10.0  # counted work (arenalens.effort), not seconds: the same plan on every machine


def _tflm_loads(name: str) -> bool:
    entry = shared_reference().get(name, {})
    return bool(entry.get("tflm", {}).get("loads"))


def _check_file(original: bytes, optimization: Optimization) -> None:
    rewritten = optimization.data
    assert rewritten.endswith(original) or rewritten == original
    before, after = load_model(original), load_model(rewritten)
    for index in range(len(before.buffers)):
        assert after.buffer_bytes(index) == before.buffer_bytes(index)
    assert optimization.new_head <= optimization.original_head


def _sources() -> list[object]:
    examples = [pytest.param(f"example:{n}", id=f"example-{n}") for n in sorted(EXAMPLES)]
    return [*shared_params(), *examples]


def _bytes(source: str | None) -> bytes:
    assert source is not None
    if source.startswith("example:"):
        return example_bytes(source.removeprefix("example:"))
    return (SHARED_MODELS / source).read_bytes()


@pytest.mark.parametrize("source", _sources())
@pytest.mark.parametrize("planner", ["optimal", "best"])
def test_exact_planners_reach_the_bound_or_prove_a_gap(source: str | None, planner: str) -> None:
    pytest.importorskip("ortools")
    model = load_model(_bytes(source))
    for arena in get_runtime("tflm").arenas(model, HOST):
        with no_hang(EXACT_EFFORT, planner):  # about a second of CPU a unit, with headroom
            plan = run_planner(planner, arena.problem, effort=EXACT_EFFORT)
        bound = sound_lower_bound(arena.problem)
        assert plan.arena_size == bound or (plan.bound is not None and plan.bound >= bound)
        if plan.arena_size == bound:
            assert plan.proven_optimal


@pytest.mark.parametrize("source", _sources())
def test_optimize_never_grows_the_predicted_head(source: str | None) -> None:
    original = _bytes(source)
    optimization = optimize_model(original, reorder=True)
    _check_file(original, optimization)
    if optimization.chosen is not None:
        assert optimization.chosen.reproduced, optimization.chosen.label


def test_a_model_the_build_cannot_run_is_not_optimized(shared_path: Path) -> None:
    # A Vela model: TFLM without the Ethos-U NPU has no ethos-u kernel. That is the answer; its
    # offline plan stays as it is, and nothing is written.
    original = (shared_path / "tflite_micro__person_detect_vela.tflite").read_bytes()
    optimization = optimize_model(original)
    assert optimization.chosen is None and not optimization.runs
    assert optimization.data == original
    assert any("ethos-u" in note for note in optimization.notes)


@pytest.mark.runtime
@pytest.mark.parametrize("name", shared_params())
def test_real_tflm_reports_the_planned_head(name: str | None) -> None:
    pytest.importorskip("tflite_micro")
    assert name is not None
    if not _tflm_loads(name):
        pytest.skip("TFLM cannot load this model (reference.json: loads false)")
    original = (SHARED_MODELS / name).read_bytes()
    optimization = optimize_model(original)
    # When no plan lowers the number to declare, optimize writes nothing; its best candidate is
    # still checked on real TFLM, written here the way optimize would write it.
    candidate = optimization.chosen or min(
        optimization.candidates, key=lambda c: (c.required_bytes, c.predicted_head)
    )
    data = optimization.data
    if optimization.chosen is None:
        assert optimization.saved_bytes == 0 and optimization.data == original
        data = rewrite_model(original, offline_plan=candidate.offline)
    model = load_model(original)
    proof = prove_outputs(original, data, model)
    assert proof.identical, proof.detail
    assert proof.original_head == optimization.original_head
    assert proof.new_head == candidate.plan.arena_size == candidate.predicted_head
    assert proof.new_head <= proof.original_head


@pytest.mark.runtime
def test_vww_int8_head_drops_to_the_bound(shared_path: Path) -> None:
    pytest.importorskip("tflite_micro")
    original = (shared_path / "mlperf_tiny__vww_96_int8.tflite").read_bytes()
    optimization = optimize_model(original)
    proof = prove_outputs(original, optimization.data, load_model(original))
    assert (proof.original_head, proof.new_head) == (73_728, 55_296)
    assert proof.identical


@pytest.mark.runtime
def test_reorder_cuts_the_real_head_of_the_branchy_example() -> None:
    pytest.importorskip("tflite_micro")
    original = example_bytes("branchy_inception")
    plain = optimize_model(original)
    reordered = optimize_model(original, reorder=True)
    assert reordered.chosen is not None and reordered.chosen.schedule.moved() > 0
    proof = prove_outputs(original, reordered.data, load_model(original))
    assert proof.identical
    assert proof.new_head == reordered.new_head == 20_480
    assert plain.new_head == 30_720


@pytest.mark.runtime
def test_reorder_cuts_the_real_head_of_a_streaming_model() -> None:
    pytest.importorskip("tflite_micro")
    original = streaming_state_model()
    optimization = optimize_model(original, reorder=True)
    proof = prove_outputs(original, optimization.data, load_model(original), invocations=5)
    assert proof.identical, proof.detail
    assert proof.original_head is not None and proof.new_head is not None
    assert proof.new_head <= 0.83 * proof.original_head
    # The replica plans resource handles TFLM keeps out of the head: it may over-predict a little.
    assert proof.new_head <= optimization.new_head


@pytest.mark.runtime
def test_inplace_alias_on_a_residual_add_is_proven_and_smaller() -> None:
    pytest.importorskip("tflite_micro")
    original = residual_add_model()
    optimization = optimize_model(original, inplace=True)
    assert optimization.chosen is not None and optimization.chosen.aliases
    assert any("bit-exact" in note for note in optimization.notes)
    proof = prove_outputs(original, optimization.data, load_model(original))
    assert proof.identical
    assert (proof.original_head, proof.new_head) == (12_288, 8_192)


def test_inplace_needs_the_runtime_proof_option(tmp_path: Path) -> None:
    out = tmp_path / "out.tflite"
    code = main(["optimize", "example:fc_autoencoder", "-o", str(out), "--inplace", "--no-verify"])
    assert code == 2
    assert not out.exists()


def test_cli_writes_atomically_and_never_over_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.tflite"
    source.write_bytes(example_bytes("vww_mobilenet_v1"))
    before = source.read_bytes()
    assert main(["optimize", str(source), "-o", str(source), "--no-verify"]) == 2
    assert "refusing to overwrite the input" in capsys.readouterr().err
    assert source.read_bytes() == before
    out = tmp_path / "out.tflite"
    assert main(["optimize", str(source), "-o", str(out), "--no-verify", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["written"] and document["runtime_head"] == 73_728
    assert document["new_head"] == 55_296 and document["saved_bytes"] == 18_432
    assert document["required_bytes"] - document["new_required_bytes"] == 18_432
    assert load_model(out).offline_plan is not None
    assert source.read_bytes() == before
    # No temporary file is left behind by the atomic write.
    assert {p.name for p in tmp_path.iterdir()} == {"model.tflite", "out.tflite"}


def test_cli_prints_before_and_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.tflite"
    code = main(
        ["optimize", "example:branchy_inception", "--reorder", "-o", str(out), "--no-verify"]
    )
    text = capsys.readouterr().out
    assert code == 0
    # The number to declare leads, before and after; the head is shown as its part.
    assert text.startswith("kTensorArenaSize 40,232 → 29,992 B  saves 10,240 B")
    assert "head (as given)" in text and "head (optimized)" in text
    assert "30,720" in text and "20,480" in text


def test_compare_json_has_a_row_per_planner(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "example:vww_mobilenet_v1", "--json", "--effort", "2"])
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    rows = {row["planner"]: row for row in document["rows"]}
    assert {"greedy_by_size", "greedy_by_breadth", "first_fit", "hillclimb", "best"} <= set(rows)
    assert rows["tflm_greedy"]["runtime_planner"]
    assert rows["tflm_greedy"]["arena_bytes"] == document["runtime_arena_bytes"] == 73_728
    assert rows["best"]["arena_bytes"] == document["lower_bound"] == 55_296
    assert rows["best"]["saving_bytes"] == 18_432 and rows["best"]["proven_optimal"]
    assert rows["best"]["over_lower_bound_percent"] == 0.0


def test_compare_table_with_reorder(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "example:branchy_inception", "--reorder", "--planners", "best"])
    text = capsys.readouterr().out
    assert code == 0
    assert "30,720 → 20,480" in text
    assert "best" in text and "proven" in text


def test_plan_reorder_plans_the_reordered_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "example:branchy_inception", "--reorder", "--planner", "best", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["reorder"]["file_order_peak"] == 30_720
    assert document["reorder"]["peak"] == 20_480
    assert document["arena_bytes"] == 20_480
    assert sorted(document["reorder"]["order"]) == list(range(25))


def _arena(tensors: list[tuple[int, int, int]], scratch: list[tuple[int, int]]) -> ArenaProblem:
    """Tensors (start, end, size) then scratch (step, size), ids in that order, like TFLM."""
    buffers: list[Buffer] = []
    meanings: dict[int, PlannedBuffer] = {}
    for start, end, size in tensors:
        index = len(buffers)
        buffers.append(Buffer(index, start, end, size))
        meanings[index] = PlannedBuffer(index, BufferKind.TENSOR, 0, index, None, f"t{index}", size)
    for step, size in scratch:
        index = len(buffers)
        buffers.append(Buffer(index, step, step, size))
        meanings[index] = PlannedBuffer(index, BufferKind.SCRATCH, 0, None, step, "s", size)
    return ArenaProblem(
        name="head",
        problem=Problem(tuple(buffers), alignment=1),
        buffers=MappingProxyType(meanings),
        steps=(),
        runtime_planner="tflm_greedy",
        size_rounding=16,
    )


@settings(max_examples=80, deadline=None)
@given(
    tensors=st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 4), st.integers(1, 40)), min_size=1, max_size=12
    ),
    scratch=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 30)), max_size=6),
    planner=st.sampled_from(["greedy_by_size", "first_fit", "hillclimb", "greedy_by_breadth"]),
)
def test_pinned_scratch_plans_are_reproduced_by_the_runtime_greedy(
    tensors: list[tuple[int, int, int]], scratch: list[tuple[int, int]], planner: str
) -> None:
    arena = _arena(
        [(start, start + length, 16 * size) for start, length, size in tensors],
        [(step, 16 * size) for step, size in scratch],
    )
    pinned = pin_scratch(arena, Problem(arena.problem.buffers, alignment=16))
    plan = run_planner(planner, pinned)
    # What TFLM does with the written file: tensors offline at the plan, scratch online.
    replay = Problem(
        tuple(
            b._replace(fixed_offset=plan.offsets[b.id])
            if arena.buffers[b.id].kind is BufferKind.TENSOR
            else b
            for b in arena.problem.buffers
        )
    )
    runtime = run_planner("tflm_greedy", replay)
    assert dict(runtime.offsets) == dict(plan.offsets)
    assert runtime.arena_size == plan.arena_size


def test_compare_under_litert_rules_with_reorder(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", "example:branchy_inception", "--runtime", "litert", "--reorder", "--json"]
    assert main([*args, "--planners", "litert_arena,best"]) == 0
    document = json.loads(capsys.readouterr().out)
    reorder = document["reorder"]
    # LiteRT's busiest step includes im2col temporaries; reordering still lowers it.
    assert reorder["peak"] == document["lower_bound"] < reorder["file_order_lower_bound"]
    assert reorder["file_order_peak"] == reorder["file_order_lower_bound"]
    rows = {row["planner"]: row for row in document["rows"]}
    assert rows["best"]["arena_bytes"] == document["lower_bound"]
    assert rows["litert_arena"]["runtime_planner"]


def test_diagnose_finds_nothing_to_redo_on_optimizes_own_output() -> None:
    # The streaming fixture's VAR_HANDLE outputs are bound in Prepare, never planned: the offline
    # plan rightly leaves them at -1, and diagnose must not call that incomplete (issue 13).
    from arenalens.diagnostics import Severity, diagnose

    optimization = optimize_model(streaming_state_model(), reorder=True)
    assert optimization.chosen is not None
    diagnosis = diagnose(load_model(optimization.data), planner_effort=1.0)
    rules = {f.rule for f in diagnosis.findings if f.severity is not Severity.INFO}
    assert "offline-plan-incomplete" not in rules
    assert "planner-waste" not in rules
    assert all("optimize" not in f.fix for f in diagnosis.findings if f.rule == "planner-waste")


def test_savings_are_counted_in_the_number_to_declare() -> None:
    optimization = optimize_model(example_bytes("vww_mobilenet_v1"))
    assert optimization.chosen is not None
    assert optimization.new_required_bytes == optimization.chosen.required_bytes
    assert optimization.saved_bytes == (
        optimization.original_required_bytes - optimization.new_required_bytes
    )
    assert optimization.saved_bytes > 0
    # The written model declares that number, read back through the pipeline.
    from arenalens.pipeline import analyze

    written = analyze(load_model(optimization.data))
    assert written.budget.required_bytes == optimization.new_required_bytes


def test_a_model_that_saves_nothing_is_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.tflite"
    code = main(["optimize", "example:fc_autoencoder", "-o", str(out), "--no-verify", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert not out.exists()
    assert document["written"] is False and document["saved_bytes"] == 0
    assert document["new_required_bytes"] == document["required_bytes"]


def test_optimize_notes_print_install_hints_without_markup_escapes() -> None:
    from arenalens.report.optimize_output import render_optimize

    document = {
        "model": "m.tflite",
        "required_bytes": 100,
        "new_required_bytes": 100,
        "saved_bytes": 0,
        "saved_percent": 0.0,
        "runtime_head": 64,
        "new_head": 64,
        "lower_bound": 64,
        "chosen": None,
        "real_tflm": None,
        "output": "out.tflite",
        "written": False,
        "notes": ["not checked on real TFLM: pip install 'arenalens[runtime]'"],
    }
    text = render_optimize(document)
    assert "arenalens[runtime]" in text and "\\[" not in text


def test_a_plan_the_independent_check_refuses_is_dropped_not_fatal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A held-out flow (seed 99123, flow 110) ended `check --target all` with exit 2: a
    candidate's shared bytes failed the independent validity check. The check has the last word:
    the candidate is dropped with a note and the search goes on to the next."""
    from arenalens import optimization
    from arenalens.errors import PlanError
    from arenalens.examples import example_bytes

    real = optimization.checked_validity
    refused: list[str] = []

    def first_refused(candidate: Any, rules: Any, source: str) -> Any:
        if not refused:
            refused.append(candidate.label)
            raise PlanError(f"{source}: the plan '{candidate.label}' fails the check")
        return real(candidate, rules, source)

    monkeypatch.setattr(optimization, "checked_validity", first_refused)
    result = optimization.optimize_model(
        example_bytes("branchy_inception"), overlap=True, prove_inplace=False
    )
    assert refused and any(
        note.endswith(f"'{refused[0]}' fails the check: dropped") for note in result.notes
    )
    assert result.chosen is None or result.chosen.label != refused[0]
