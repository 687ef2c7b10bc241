"""The explicit rule list and `diagnose`: Model (+ runtime) → Diagnosis (sorted findings).

A rule is a function `DiagnoseContext -> Iterable[Finding]`, one per rule id. Adding one is a
function in a rule module and one line in RULES. Rules that read the runtime's plan are skipped
(with an `analysis-failed` finding saying why) when the model cannot be planned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from arenalens.builds.build import Build
from arenalens.diagnostics import (
    graph_rules,
    offline_rules,
    peak,
    plan_rules,
    shape_rules,
    support_rules,
    tail_rules,
)
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.errors import ArenalensError, UsageError
from arenalens.ir import Model
from arenalens.pipeline import Analysis, analyze
from arenalens.records import record
from arenalens.runtimes import RUNTIME_MODULES, get_runtime

if TYPE_CHECKING:
    from arenalens.targets import Target


@record()
class Rule:
    """One diagnostic rule: its id, what it checks, and the function that checks it."""

    id: str
    title: str
    function: Callable[[DiagnoseContext], Iterable[Finding]]
    needs_plan: bool = False


RULES: tuple[Rule, ...] = (
    Rule(
        "cannot-run",
        "operators the runtime has no kernel for, or whose types or options its kernel refuses",
        support_rules.cannot_run,
    ),
    Rule(
        "cannot-run-correctly",
        "an offline plan whose shared bytes the build's kernels read after writing over them",
        support_rules.cannot_run_correctly,
    ),
    Rule(
        "output-overwritten",
        "a model output whose bytes another tensor is written into before it is read",
        plan_rules.output_overwritten,
        needs_plan=True,
    ),
    Rule(
        "offline-plan-count",
        "an offline plan whose offset count differs from the tensor count (TFLM setup fails)",
        offline_rules.offline_plan_count,
    ),
    Rule(
        "offline-plan-overlap",
        "an offline plan that gives tensors live at the same step common bytes",
        offline_rules.offline_plan_overlap,
    ),
    Rule(
        "offline-plan-incomplete",
        "an offline plan that leaves planned tensors online (-1)",
        offline_rules.offline_plan_incomplete,
    ),
    Rule(
        "offline-plan-ignored",
        "an offline plan under LiteRT, which ignores it",
        offline_rules.offline_plan_ignored,
    ),
    Rule(
        "tensor-never-read",
        "operator outputs nothing reads and the model does not return",
        graph_rules.tensor_never_read,
    ),
    Rule(
        "tensor-unused",
        "non-constant tensors no operator touches",
        graph_rules.tensor_unused,
    ),
    Rule(
        "read-before-written",
        "operators reading a tensor that nothing writes first",
        graph_rules.read_before_written,
    ),
    Rule(
        "operand-count",
        "operators with fewer or more inputs / outputs than their kernel needs",
        graph_rules.operand_count,
    ),
    Rule(
        "optional-input-misplaced",
        "omitted (-1) inputs in required slots, and -1 outputs",
        graph_rules.optional_input_misplaced,
    ),
    Rule(
        "dynamic-shape",
        "-1 dimensions (shape_signature) that make the runtime resize and re-plan",
        shape_rules.dynamic_shape,
    ),
    Rule(
        "dynamic-tensor-unsupported",
        "TFLM: operator outputs whose shape has a dimension <= 0 (Prepare fails)",
        shape_rules.dynamic_tensor_unsupported,
    ),
    Rule(
        "subgraph-arenas",
        "several subgraphs: how their arenas combine and which is largest",
        plan_rules.subgraph_arenas,
        needs_plan=True,
    ),
    Rule(
        "misaligned-offset",
        "planned offsets that break the required alignment (--alignment)",
        plan_rules.misaligned_offset,
        needs_plan=True,
    ),
    Rule(
        "planner-waste",
        "the runtime's plan needs more bytes than the best plan found (what `optimize` saves)",
        plan_rules.planner_waste,
        needs_plan=True,
    ),
    Rule(
        "overlap-savings",
        "TFLM: the head bytes `optimize --overlap` saves by letting outputs slide over inputs",
        plan_rules.overlap_savings,
        needs_plan=True,
    ),
    Rule(
        "peak",
        "the tensors and operator at the busiest step",
        peak.peak,
        needs_plan=True,
    ),
    Rule(
        "design-hints",
        "input resolution, channels, stride and operator order changes, with their savings",
        peak.design_hints,
        needs_plan=True,
    ),
    Rule(
        "tail",
        "TFLM: what the tail (persistent data) is made of, and the operators that keep the most",
        tail_rules.tail,
        needs_plan=True,
    ),
    Rule(
        "tail-fusion",
        "TFLM: activations and reshapes the converter can fold away, and the bytes that saves",
        tail_rules.tail_fusion,
        needs_plan=True,
    ),
    Rule(
        "tail-per-channel",
        "TFLM: layers whose kernels keep the most per-channel multipliers and shifts",
        tail_rules.tail_per_channel,
        needs_plan=True,
    ),
    Rule(
        "tail-variables",
        "TFLM: variables kept in the tail wider than int8, and what int8 would save",
        tail_rules.tail_variables,
        needs_plan=True,
    ),
)
RULE_IDS = tuple(rule.id for rule in RULES)


@record()
class Diagnosis:
    """All findings for one model under one runtime, most severe first."""

    model: Model
    runtime: str
    findings: tuple[Finding, ...]
    analysis: Analysis | None

    def count(self, severity: Severity) -> int:
        """Number of findings of one severity."""
        return sum(1 for finding in self.findings if finding.severity == severity)

    @property
    def worst(self) -> Severity | None:
        """The most severe finding's severity, or None when there are none."""
        return min((f.severity for f in self.findings), key=lambda s: s.rank, default=None)


def diagnose(
    model: Model,
    *,
    runtime: str = "tflm",
    build: Build | str | None = None,
    alignment: int | None = None,
    rules: Sequence[str] | None = None,
    analysis: Analysis | None = None,
    planner_effort: float = 5.0,
    planner_time_limit_s: float | None = None,
    what_if: bool = False,
    target: Target | None = None,
    delegate: str = "xnnpack",
) -> Diagnosis:
    """Model → Diagnosis: every selected rule run, findings sorted most severe first; `build`
    is the TFLM build whose plan is judged (None: the x86-64 wheel). `planner_effort` is the
    search effort planner-waste spends over all arenas (`arenalens.effort`; 0: heuristics only);
    `planner_time_limit_s` an optional wall-clock cap on it, the one setting that can make the
    findings depend on the machine; `target` the board asked, which the commands findings
    suggest name as it was typed; `delegate` LiteRT's (--delegate), whose verdict the
    cannot-run findings give."""
    selected = _select(rules)
    failure: Finding | None = None
    if analysis is None and any(rule.needs_plan for rule in selected):
        try:
            analysis = analyze(model, runtime=runtime, build=build)
        except ArenalensError as error:
            failure = _analysis_failed(runtime, error)
    context = DiagnoseContext(
        model=model,
        runtime=runtime,
        analysis=analysis,
        required_alignment=alignment or _data_alignment(runtime),
        planner_effort=planner_effort,
        planner_time_limit_s=planner_time_limit_s,
        what_if=what_if,
        target=target,
        delegate=delegate,
    )
    findings: list[Finding] = [] if failure is None else [failure]
    for rule in selected:
        if rule.needs_plan and analysis is None:
            continue
        findings.extend(rule.function(context))
    ordered = tuple(sorted(findings, key=Finding.sort_key))
    return Diagnosis(model=model, runtime=runtime, findings=ordered, analysis=analysis)


def _data_alignment(runtime: str) -> int:
    """The alignment the runtime's kernels rely on (1 for an unknown runtime: the analysis has
    failed and said why)."""
    if runtime not in RUNTIME_MODULES:
        return 1
    return get_runtime(runtime).data_alignment


def _select(rules: Sequence[str] | None) -> tuple[Rule, ...]:
    if rules is None:
        return RULES
    unknown = [name for name in rules if name not in RULE_IDS]
    if unknown:
        raise UsageError(f"unknown rule(s) {', '.join(unknown)} (known: {', '.join(RULE_IDS)})")
    return tuple(rule for rule in RULES if rule.id in set(rules))


def _analysis_failed(runtime: str, error: ArenalensError) -> Finding:
    return Finding(
        rule="analysis-failed",
        severity=Severity.ERROR,
        location=Location(),
        message=f"arenalens cannot plan this model under {runtime}: {error}; the plan rules "
        "(output reuse, alignment, waste, peak) were skipped",
        fix="fix the errors above first (they usually explain this one), then re-run",
    )
