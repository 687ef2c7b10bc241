"""Terminal report: the summary answers the ten-second questions; plain text stays plain."""

from __future__ import annotations

from arenalens.report.build import build_report
from arenalens.report.diff import diff_reports
from arenalens.report.terminal import render_report_text
from tests.report_helpers import synthetic_model, tensor_only_analysis


def _report(budget: int | None = None, renames: dict[int, str] | None = None) -> object:
    return build_report(
        tensor_only_analysis(synthetic_model(3, renames=renames), tail_bytes=256), budget=budget
    )


def test_summary_names_arena_bound_overhead_reuse_and_peak_op() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(3), tail_bytes=256))
    text = render_report_text(report, color=False)
    assert "arena (head)" in text
    assert "lower bound" in text
    assert "overhead" in text
    assert "without reuse" in text
    peak = report.primary.peak
    assert peak is not None
    assert f"while op {peak.operator} {peak.opcode} runs" in text
    # The number to declare leads, with the arena and what the runtime needs besides it.
    first_line = text.splitlines()[0]
    assert first_line.startswith(f"kTensorArenaSize = {report.required_bytes:,} B")
    assert "head" in first_line and "inside the tensor arena" in first_line
    assert "\x1b[" not in text  # no ANSI codes when colour is off


def test_colour_output_uses_ansi_codes() -> None:
    text = render_report_text(_report(), color=True)  # type: ignore[arg-type]
    assert "\x1b[" in text


def test_budget_verdicts() -> None:
    over = render_report_text(_report(budget=1000), color=False)  # type: ignore[arg-type]
    assert "over by" in over
    fits = render_report_text(_report(budget=10**7), color=False)  # type: ignore[arg-type]
    assert "fits" in fits and "to spare" in fits


def test_markup_in_tensor_names_is_printed_literally() -> None:
    report = _report(renames={2: "[bold red]boom[/] <script>"})
    text = render_report_text(report, color=False, tensor_rows=None)  # type: ignore[arg-type]
    assert "[bold red]boom[/] <script>" in text


def test_tensor_rows_limit_and_caption() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(10)))
    text = render_report_text(report, color=False, tensor_rows=5)
    assert f"{len(report.primary.buffers) - 5} smaller buffers not shown" in text


def test_memory_plan_and_diff_sections() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(3)))
    text = render_report_text(
        report,
        color=False,
        memory_plan="0 (id=0): size=16, offset=0, first_used=0 last_used=1\n",
        diff=diff_reports(report, report, right_planner="naive"),
    )
    assert "PrintMemoryPlan" in text and "(id=0)" in text
    assert "compare" in text and "largest changes per tensor" in text


def test_same_input_same_text() -> None:
    first = render_report_text(_report(budget=5000), color=True)  # type: ignore[arg-type]
    second = render_report_text(_report(budget=5000), color=True)  # type: ignore[arg-type]
    assert first == second


def test_operator_labels_name_the_subgraph_when_an_arena_spans_several() -> None:
    from dataclasses import replace

    from arenalens.report.terminal import tensor_table

    report = build_report(tensor_only_analysis(synthetic_model(1), tail_bytes=0))
    arena = report.primary
    plain = render_report_text(report, color=False)
    assert "op 1 DEPTHWISE_CONV_2D" in plain and "subgraph 0 op" not in plain
    nested_steps = tuple(replace(step, subgraph=1) for step in arena.steps)
    nested = replace(arena, steps=nested_steps)
    from arenalens.report.console import render_text

    text = render_text([tensor_table(nested)], color=False, width=160)
    assert "subgraph 1 op 1 DEPTHWISE_CONV_2D" in text
