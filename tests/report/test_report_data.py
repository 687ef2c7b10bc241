"""Report data and diffs: numbers every view shares, checked by hand and against invariants."""

from __future__ import annotations

import pytest

from arenalens.declared import Status
from arenalens.report.build import build_report
from arenalens.report.data import match_keys, report_document
from arenalens.report.diff import diff_reports
from arenalens.report.labels import (
    declared_qualifier,
    operator_label,
    optimize_command,
    reason_prefix,
    shape_label,
)
from tests.conftest import SHARED_MODELS, shared_params
from tests.report_helpers import (
    analysis_for,
    runtime_available,
    synthetic_model,
    tensor_only_analysis,
)


def test_chain_report_by_hand() -> None:
    # One block: input(4608 B) → expand(9216) → depthwise(9216) → project(4608) → add(4608).
    report = build_report(tensor_only_analysis(synthetic_model(1), tail_bytes=100), budget=20000)
    arena = report.primary
    assert [row.name for row in arena.buffers] == [
        "input",
        "block_0/expand/Relu",
        "block_0/depthwise/Relu",
        "block_0/project/BiasAdd",
        "block_0/add",
    ]
    assert [row.size for row in arena.buffers] == [4608, 9216, 9216, 4608, 4608]
    # TFLM steps: 0 = inputs, op k = step k+1; the input is read again by ADD at step 4.
    assert [(row.first, row.last) for row in arena.buffers] == [
        (0, 4),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 4),
    ]
    assert [row.producer for row in arena.buffers] == [None, 1, 2, 3, 4]
    assert arena.buffers[0].consumers == (1, 4)
    assert [s.live_bytes for s in arena.steps] == [4608, 13824, 23040, 18432, 13824]
    assert arena.lower_bound == 23040
    peak = arena.peak
    assert peak is not None
    assert (peak.step, peak.operator, peak.opcode) == (2, 1, "DEPTHWISE_CONV_2D")
    assert peak.reads == (1,)
    assert peak.writes == (2,)
    assert arena.live_at(2) == (1, 2, 0)  # largest first, ties by position
    assert [p.planner for p in arena.plans] == ["first_fit", "naive"]
    assert arena.plans[1].is_runtime  # the helper's runtime planner is naive
    assert arena.no_reuse_bytes == sum(row.size for row in arena.buffers)
    assert report.other_bytes == 100
    assert report.required_with("naive") == arena.no_reuse_bytes + 100
    assert report.budget == 20000


@pytest.mark.parametrize("runtime", ["tflm", "litert"])
@pytest.mark.parametrize("name", shared_params())
def test_invariants_on_real_models(name: str, runtime: str) -> None:
    if not runtime_available(runtime) and runtime != "tflm":
        pytest.skip(f"the {runtime} runtime rules are not on this branch")
    report = build_report(analysis_for(SHARED_MODELS / name, runtime))
    for arena in report.arenas:
        live = [step.live_bytes for step in arena.steps]
        assert max(live, default=0) == arena.lower_bound
        fixed = any("offline plan" in note for note in arena.notes)
        for view in arena.plans:
            # Offline (fixed) offsets may share bytes on purpose: then no lower bound holds.
            assert fixed or arena.lower_bound <= view.arena_size
            assert view.arena_size <= arena.no_reuse_bytes
            assert len(view.offsets) == len(arena.buffers)
            ends = [o + row.size for o, row in zip(view.offsets, arena.buffers, strict=True)]
            assert max(ends, default=0) == view.arena_size
        steps = {step.step for step in arena.steps}
        for row in arena.buffers:
            assert row.first <= row.last
            assert row.first in steps and row.last in steps
            assert row.producer is None or row.producer in steps


def test_document_is_columnar_and_deterministic() -> None:
    analysis = tensor_only_analysis(synthetic_model(3))
    first = report_document([build_report(analysis)], tool="t")
    second = report_document([build_report(analysis)], tool="t")
    assert first == second
    arena = first["reports"][0]["arenas"][0]
    count = len(arena["buffers"]["id"])
    assert all(len(column) == count for column in arena["buffers"].values())
    assert all(len(plan["offsets"]) == count for plan in arena["plans"])
    assert arena["peak_step"] == build_report(analysis).primary.peak.step  # type: ignore[union-attr]


def test_match_keys_number_repeated_names() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(2, renames={1: "x", 2: "x", 5: ""})))
    keys = match_keys(report.primary.buffers)
    assert keys[1:3] == ["x", "x#2"]
    assert keys[5] == "<unnamed tensor>"
    # The document carries a key only where it is not the name.
    shipped = report_document([report])["reports"][0]["arenas"][0]["buffers"]["key"]
    assert shipped[1:3] == [None, "x#2"] and shipped[5] == "<unnamed tensor>"
    assert shipped.count(None) == len(keys) - 2


def test_diff_of_two_models_says_where_the_bytes_went() -> None:
    small = build_report(tensor_only_analysis(synthetic_model(2), tail_bytes=64), name="small")
    large = build_report(tensor_only_analysis(synthetic_model(4), tail_bytes=64), name="large")
    diff = diff_reports(small, large)
    assert diff.left_label == "small · first_fit"
    totals = {label: (left, right) for label, left, right in diff.totals}
    assert totals["arena"] == (small.primary.plans[0].arena_size, large.primary.plans[0].arena_size)
    assert totals["required"][0] == small.required_bytes
    added = [c for c in diff.changes if c.left_bytes is None]
    assert {c.name for c in added} >= {"block_2/add", "block_3/expand/Relu"}
    largest = diff.largest_changes(3)
    assert all(abs(largest[0].byte_change) >= abs(c.byte_change) for c in diff.changes)


def test_diff_of_two_plans_reports_moves_only() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(3)))
    diff = diff_reports(report, report, right_planner="naive")
    assert all(change.byte_change == 0 for change in diff.changes)
    assert any(change.offset_change for change in diff.largest_changes(5))


def test_short_labels_drop_generic_endings_and_keep_unique_tails() -> None:
    from arenalens.report.labels import short_labels

    assert short_labels(
        [
            "model/activation_1/Relu;model/bn_1/FusedBatchNormV3",
            "model/activation_2/Relu;model/bn_2/FusedBatchNormV3",
            "model/activation_3/Relu",
            "input_1",
        ]
    ) == ("activation_1", "activation_2", "activation_3", "input_1")
    assert short_labels(
        ["a/branch_3/1/output", "b/branch_3/1/output", "a/branch_4/1/output", "stem/output"]
    ) == ("a/branch_3/1", "b/branch_3/1", "branch_4/1", "stem")
    assert short_labels(["", "x"]) == ("(unnamed)", "x")


def test_labels_by_hand() -> None:
    assert operator_label(3, "CONV_2D") == "op 3 CONV_2D"
    assert operator_label(3, "ADD", subgraph=1, nested=True) == "subgraph 1 op 3 ADD"
    assert operator_label(None, "inputs of subgraph 0", nested=True) == "inputs of subgraph 0"
    assert shape_label("tensor", (1, 96, 96, 3)) == "1x96x96x3"
    assert shape_label("variable", ()) == "scalar"
    assert shape_label("scratch", (512,)) == "scratch"
    assert optimize_command("m.tflite", "hillclimb") == (
        "arenalens optimize m.tflite -o optimized.tflite --planner hillclimb"
    )
    assert optimize_command("m.tflite", "best+overlaps").endswith("optimized.tflite --overlap")
    assert [declared_qualifier(status) for status in Status] == [
        "",
        "estimate",
        "cannot run",
        "the offline plan would corrupt tensors",
        "for a placeholder input shape",
    ]
    assert reason_prefix(Status.PLACEHOLDER_SHAPE) == "unknown input size"
    assert reason_prefix(Status.ESTIMATE) == "estimate"


def test_the_document_carries_the_labels_the_views_show() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(1), tail_bytes=100))
    arena = report.primary
    document = report_document([report])["reports"][0]["arenas"][0]
    assert document["steps"]["label"][1:] == [
        "op 0 CONV_2D",
        "op 1 DEPTHWISE_CONV_2D",
        "op 2 CONV_2D",
        "op 3 ADD",
    ]
    assert document["buffers"]["shape_label"][0] == "1x24x24x8"
    assert document["buffers"]["key"] == [None] * len(arena.buffers)  # every name is its key
    assert document["other_bytes"] == 100
    # The stand-in analysis plans with first_fit and calls naive the runtime's planner.
    first, naive = document["plans"]
    assert first["declare_bytes"] == report.required_bytes == first["arena_size"] + 100
    assert first["optimize_command"].endswith("-o optimized.tflite --planner first_fit")
    assert naive["is_runtime"] and naive["optimize_command"] is None
    assert naive["declare_bytes"] == naive["arena_size"] + 100
    assert naive["lower_bound"] == arena.lower_bound and naive["shared_regions"] == []


def test_sections_past_the_entry_limit_leave_the_document_without_sections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every plan of every arena carries all the report's sections (one per arena under LiteRT):
    # a hostile 500-subgraph model (fuzz seed 14, input 1891) wrote a 1.6 GiB page with 8 GB of
    # memory. Past the limit the document has none, as a report whose runtime computes none.
    from arenalens.examples import example_bytes
    from arenalens.report import data

    if not runtime_available("litert"):
        pytest.skip("the LiteRT rules are not installed")
    report = build_report(analysis_for(example_bytes("fc_autoencoder"), runtime="litert"))
    entries = len(report.sections) * (sum(len(arena.plans) for arena in report.arenas) + 1)
    sectioned = report_document([report], tool="t")["reports"][0]
    assert sectioned["arena_sections"]
    assert all(plan["sections"] for arena in sectioned["arenas"] for plan in arena["plans"])
    monkeypatch.setattr(data, "_SECTION_ENTRIES", entries - 1)
    bare = report_document([report], tool="t")["reports"][0]
    assert bare["arena_sections"] == []
    assert all(plan["sections"] == [] for arena in bare["arenas"] for plan in arena["plans"])
    assert bare["required_bytes"] == sectioned["required_bytes"]
