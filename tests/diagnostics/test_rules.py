"""Every diagnostic rule on a model built to trigger it, and on one that must not."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest

from arenalens.builds.build import device_build
from arenalens.diagnostics import RULE_IDS, Diagnosis, Severity, diagnose, plan_rules, support_rules
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.examples import example_bytes
from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.reorder.schedule import Schedule, check_schedule
from arenalens.tflite.builder import ModelBuilder, quantization
from arenalens.tflite.reader import load_model, parse_model
from tests.diagnostics import exhaustive
from tests.diagnostics.models import (
    ACTIVATION,
    chain,
    conv,
    load,
    tensor_count,
    with_offline_plan,
)


def rules_of(diagnosis: Diagnosis, rule: str) -> list:
    return [finding for finding in diagnosis.findings if finding.rule == rule]


def run(model: Model, rule: str, **options: object) -> list:
    return rules_of(diagnose(model, rules=[rule], **options), rule)  # type: ignore[arg-type]


def clean_model() -> Model:
    builder, _ = chain()
    return load(builder)


def test_every_rule_is_tested_here() -> None:
    tested = {
        name.removeprefix("test_").removesuffix("_triggers").replace("_", "-")
        for name in globals()
        if name.startswith("test_") and name.endswith("_triggers")
    }
    assert tested == {*RULE_IDS, "analysis-failed"}


def test_clean_model_has_no_problems() -> None:
    diagnosis = diagnose(clean_model())
    problems = [f for f in diagnosis.findings if f.severity != Severity.INFO]
    assert problems == []
    assert {f.rule for f in diagnosis.findings} <= {
        "peak",
        "design-hints",
        "overlap-savings",
        "tail",
        "tail-per-channel",
    }


# -- output-overwritten ------------------------------------------------------------------------


def overwritten_output_model() -> Model:
    """input → a → out (model output) ; a → late (written after out): offline plan shares bytes."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 4), "INT8")
    graph.set_inputs([source])
    middle = conv(graph, source, 4, "a")
    out = conv(graph, middle, 4, "out")
    late = conv(graph, middle, 4, "late")
    graph.set_outputs([out, late])
    offsets = [-1] * tensor_count(builder)
    offsets[source], offsets[middle] = 0, 64
    offsets[out], offsets[late] = 128, 128
    return load(with_offline_plan(builder, offsets))


def test_cannot_run_triggers() -> None:
    from tests.runtimes.tflm.test_support import custom_op_model, hybrid_model

    for data, operator in ((custom_op_model(), 1), (hybrid_model(), 0)):
        findings = [f for f in diagnose(parse_model(data, "m")).findings if f.rule == "cannot-run"]
        assert [(f.severity, f.location.operator) for f in findings] == [(Severity.ERROR, operator)]


def test_cannot_run_quiet_on_clean_model() -> None:
    assert not [f for f in diagnose(clean_model()).findings if f.rule == "cannot-run"]


def test_output_overwritten_triggers() -> None:
    (finding,) = run(overwritten_output_model(), "output-overwritten")
    assert finding.severity == Severity.ERROR
    assert "'out'" in finding.message and "'late'" in finding.message
    assert finding.location.subgraph == 0 and finding.location.operator == 1
    assert "offline plan" in finding.message


def test_output_overwritten_quiet_on_clean_plan() -> None:
    assert run(clean_model(), "output-overwritten") == []


# -- offline plan --------------------------------------------------------------------------------


def test_offline_plan_count_triggers() -> None:
    builder, _ = chain()
    model = load(with_offline_plan(builder, [0, 1, 2]))
    (finding,) = run(model, "offline-plan-count")
    assert finding.severity == Severity.ERROR
    assert "3 offsets" in finding.message and "10 tensors" in finding.message


def test_offline_plan_count_quiet_when_counts_match() -> None:
    builder, _ = chain()
    model = load(with_offline_plan(builder, [-1] * tensor_count(builder)))
    assert run(model, "offline-plan-count") == []


def test_offline_plan_overlap_triggers() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[3], offsets[6] = 0, 256  # conv0 (512 B) and conv1 overlap while conv1 reads conv0
    model = load(with_offline_plan(builder, offsets))
    (finding,) = run(model, "offline-plan-overlap")
    assert finding.severity == Severity.ERROR
    assert finding.location.tensors == (3, 6)
    assert finding.details["bytes"] == 256


def test_offline_plan_overlap_quiet_for_disjoint_or_dead_tensors() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[0], offsets[3], offsets[6], offsets[9] = 0, 512, 1024, 0  # input dead by conv2
    assert run(load(with_offline_plan(builder, offsets)), "offline-plan-overlap") == []


def test_offline_plan_overlap_accepts_an_output_sliding_over_its_consumed_input() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    # conv1 (1x1, 8 -> 16 channels, 1024 B) reads conv0 (512 B): its kernel's access order lets
    # it start 512 + 7 bytes below conv0; 528 is the next 16-aligned offset.
    offsets[0], offsets[3], offsets[6], offsets[9] = 2048, 528, 0, 4096
    (finding,) = run(load(with_offline_plan(builder, offsets)), "offline-plan-overlap")
    assert finding.details["safe_overlaps"] == 1
    # Safe on the reference kernels; CMSIS-NN's 1x1 path re-reads its input, so: a warning.
    assert finding.severity == Severity.WARNING
    assert finding.details["valid_for"] == ["reference"]
    assert "right on: TFLM reference kernels" in finding.message
    assert "wrong outputs on: CMSIS-NN, pure C" in finding.message
    assert "without --kernels" in finding.fix
    offsets[3] = 512  # 7 bytes too close: an error as before
    (closer,) = run(load(with_offline_plan(builder, offsets)), "offline-plan-overlap")
    assert closer.severity == Severity.ERROR


def test_cannot_run_correctly_triggers() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    # conv1 (1x1) 528 B below the conv0 it consumes: right on the reference kernels only.
    offsets[0], offsets[3], offsets[6], offsets[9] = 2048, 528, 0, 4096
    model = load(with_offline_plan(builder, offsets))
    assert run(model, "cannot-run-correctly") == []  # the host wheel runs the reference kernels
    context = DiagnoseContext(
        model=model,
        runtime="tflm",
        analysis=analyze(model, build=device_build("cortex-m7", "cmsis-nn")),
        required_alignment=16,
    )
    (finding,) = support_rules.cannot_run_correctly(context)
    assert finding.severity == Severity.ERROR
    assert finding.message.startswith("CANNOT RUN CORRECTLY on Cortex-M7")
    assert "CONV_2D (op 1)" in finding.message and "CMSIS-NN, DSP extension" in finding.message


def test_offline_plan_overlap_is_info_inside_one_vela_operator() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 64), "INT8")
    scratch = graph.add_tensor("scratch", (1024,), "UINT8")
    out = graph.add_tensor("output", (1, 2), "INT8")
    graph.add_operator("CUSTOM:ethos-u", [scratch, source], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    model = load(with_offline_plan(builder, [0, 0, 0]))
    findings = run(model, "offline-plan-overlap")
    assert findings and all(f.severity == Severity.INFO for f in findings)
    assert all("Vela" in f.message for f in findings)


def test_offline_plan_incomplete_triggers() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[0], offsets[3], offsets[6] = 0, 512, 1024
    (finding,) = run(load(with_offline_plan(builder, offsets)), "offline-plan-incomplete")
    assert finding.severity == Severity.WARNING
    assert finding.location.tensors == (9,)


def test_offline_plan_incomplete_quiet_when_complete() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[0], offsets[3], offsets[6], offsets[9] = 0, 512, 1024, 0
    assert run(load(with_offline_plan(builder, offsets)), "offline-plan-incomplete") == []


def test_offline_plan_ignored_triggers() -> None:
    builder, _ = chain()
    model = load(with_offline_plan(builder, [-1] * tensor_count(builder)))
    (finding,) = run(model, "offline-plan-ignored", runtime="litert")
    assert finding.severity == Severity.INFO


def test_offline_plan_ignored_quiet_under_tflm() -> None:
    builder, _ = chain()
    model = load(with_offline_plan(builder, [-1] * tensor_count(builder)))
    assert run(model, "offline-plan-ignored") == []


# -- graph rules ---------------------------------------------------------------------------------


def test_tensor_never_read_triggers() -> None:
    builder, graph = chain()
    conv(graph, 3, 4, "dead_branch")  # reads conv0, nobody reads its output
    (finding,) = run(load(builder), "tensor-never-read")
    assert finding.severity == Severity.WARNING
    assert finding.location.operator == 3
    assert finding.details["nbytes"] == 8 * 8 * 4


def test_tensor_never_read_quiet_on_clean_model() -> None:
    assert run(clean_model(), "tensor-never-read") == []


def test_tensor_unused_triggers() -> None:
    builder, graph = chain()
    orphan = graph.add_tensor("orphan", (1, 100), "INT8")
    (finding,) = run(load(builder), "tensor-unused")
    assert finding.location.tensors == (orphan,)
    assert finding.details["nbytes"] == 100


def test_tensor_unused_quiet_on_clean_model() -> None:
    assert run(clean_model(), "tensor-unused") == []


def test_read_before_written_triggers() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 8), "INT8")
    ghost = graph.add_tensor("ghost", (1, 8), "INT8")  # read, never written
    out = graph.add_tensor("out", (1, 8), "INT8")
    graph.add_operator("ADD", [source, ghost], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    (finding,) = run(load(builder), "read-before-written")
    assert finding.severity == Severity.ERROR
    assert finding.location.tensors == (ghost,)
    assert "garbage" in finding.message
    (litert,) = run(load(builder), "read-before-written", runtime="litert")
    assert "null" in litert.message


def test_read_before_written_quiet_on_clean_model() -> None:
    assert run(clean_model(), "read-before-written") == []


def test_operand_count_triggers() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 3), "INT8")
    out = graph.add_tensor("out", (1, 4, 4, 3), "INT8")
    graph.add_operator("CONV_2D", [source], [out])  # no filter
    graph.set_inputs([source])
    graph.set_outputs([out])
    (finding,) = run(load(builder), "operand-count")
    assert finding.severity == Severity.ERROR
    assert "1 inputs, needs at least 2" in finding.message


def test_operand_count_quiet_with_omitted_optional_bias() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 3), "INT8")
    conv(graph, source, 4, "no_bias", bias=False)
    graph.set_inputs([source])
    graph.set_outputs([1 + 1])
    assert run(load(builder), "operand-count") == []


def test_optional_input_misplaced_triggers() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 3), "INT8")
    bias = graph.add_constant("bias", np.zeros((4,), dtype=np.int32))
    out = graph.add_tensor("out", (1, 4, 4, 4), "INT8")
    graph.add_operator("CONV_2D", [source, -1, bias], [out])  # -1 where the filter belongs
    graph.set_inputs([source])
    graph.set_outputs([out])
    (finding,) = run(load(builder), "optional-input-misplaced")
    assert finding.details["input_slots"] == [1]


def test_optional_input_misplaced_quiet_for_omitted_bias() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 3), "INT8")
    weights = graph.add_constant("w", np.ones((4, 1, 1, 3), dtype=np.int8))
    out = graph.add_tensor("out", (1, 4, 4, 4), "INT8")
    graph.add_operator("CONV_2D", [source, weights, -1], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    assert run(load(builder), "optional-input-misplaced") == []


# -- shapes --------------------------------------------------------------------------------------


def dynamic_batch_model() -> Model:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 16), "FLOAT32", shape_signature=(-1, 16))
    out = graph.add_tensor("out", (1, 16), "FLOAT32", shape_signature=(-1, 16))
    graph.add_operator("RELU", [source], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    return load(builder)


def test_dynamic_shape_triggers() -> None:
    (tflm,) = run(dynamic_batch_model(), "dynamic-shape")
    assert tflm.severity == Severity.INFO and tflm.location.tensors == (0,)
    assert "--input-shape 'input=1x16'" in tflm.fix
    (litert,) = run(dynamic_batch_model(), "dynamic-shape", runtime="litert")
    assert litert.severity == Severity.WARNING


def test_dynamic_shape_quiet_for_fixed_shapes() -> None:
    assert run(clean_model(), "dynamic-shape") == []


def test_dynamic_tensor_unsupported_triggers() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 16), "FLOAT32")
    out = graph.add_tensor("out", (-1, 16), "FLOAT32", shape_signature=(-1, 16))
    graph.add_operator("RELU", [source], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    (finding,) = run(load(builder), "dynamic-tensor-unsupported")
    assert "Dynamic tensors are not supported" in finding.message
    assert run(load(builder), "dynamic-tensor-unsupported", runtime="litert") == []


def test_dynamic_tensor_unsupported_quiet_for_fixed_shapes() -> None:
    assert run(dynamic_batch_model(), "dynamic-tensor-unsupported") == []


# -- plan rules ----------------------------------------------------------------------------------


def two_subgraph_model() -> Model:
    """Main chain plus a second subgraph nothing calls (an extra signature)."""
    builder, _ = chain()
    extra = builder.add_subgraph("unused_signature")
    source = extra.add_tensor("x", (1, 4096), "INT8")
    middle = extra.add_tensor("y", (1, 4096), "INT8")
    out = extra.add_tensor("z", (1, 4096), "INT8")
    extra.add_operator("RELU", [source], [middle])
    extra.add_operator("RELU", [middle], [out])
    extra.set_inputs([source])
    extra.set_outputs([out])
    builder.add_signature("extra", extra)
    return load(builder)


def test_subgraph_arenas_triggers() -> None:
    (finding,) = run(two_subgraph_model(), "subgraph-arenas")
    assert "2 subgraphs" in finding.message
    assert finding.details["largest"] == 1
    # The unreachable subgraph's three (-1, -1) buffers stack: 3 x 4096 above the real peak.
    assert finding.severity == Severity.WARNING
    assert finding.saving_bytes is not None and finding.saving_bytes > 0


def test_subgraph_arenas_quiet_for_one_subgraph() -> None:
    assert run(clean_model(), "subgraph-arenas") == []


def test_misaligned_offset_triggers() -> None:
    builder, _ = chain(size=4, channels=(1, 8, 8))  # conv0 (16 B) lands at 48: 16- not 32-aligned
    model = load(builder)
    assert run(model, "misaligned-offset") == []
    (finding,) = run(model, "misaligned-offset", alignment=32)
    assert finding.severity == Severity.WARNING
    assert finding.details["alignment"] == 32
    assert "alignas(32)" in finding.fix


def test_misaligned_offset_from_offline_plan() -> None:
    builder, _ = chain()
    offsets = [-1] * tensor_count(builder)
    offsets[0] = 8  # TFLM places it at 8 unchecked
    (finding,) = run(load(with_offline_plan(builder, offsets)), "misaligned-offset")
    assert finding.severity == Severity.ERROR
    assert "offline" in finding.message


def test_misaligned_offset_quiet_at_runtime_alignment() -> None:
    assert run(clean_model(), "misaligned-offset") == []


def waste_model(size: int = 16) -> Model:
    """A chain where TFLM's greedy order leaves a gap: at size 16, 3,584 B planned, 3,072 B
    needed, and kTensorArenaSize 5,768 B → 5,256 B with the better plan."""
    builder, _ = chain(size=size, channels=(8, 4, 2, 8, 2))
    return load(builder)


def test_planner_waste_triggers(monkeypatch: pytest.MonkeyPatch) -> None:
    exhaustive.install(monkeypatch)
    monkeypatch.setattr(plan_rules, "OPTIMUM_PLANNERS", (exhaustive.NAME,))
    (finding,) = run(waste_model(), "planner-waste")
    assert finding.details["runtime_bytes"] == 3584
    assert finding.details["best_bytes"] == 3072
    # Counted in the number to declare, which the plan lowers by as much as the head.
    assert finding.saving_bytes == finding.details["declared_saving_bytes"] == 512
    assert finding.severity == Severity.WARNING
    assert "arenalens optimize" in finding.fix and "<bytes>" not in finding.fix


def test_planner_waste_needs_the_number_to_declare_to_drop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At size 4 the better plan saves 32 B of head, but setup's own peak sets kTensorArenaSize
    # (2,920 B either way): no finding, as `optimize` would write nothing (issue 13).
    exhaustive.install(monkeypatch)
    monkeypatch.setattr(plan_rules, "OPTIMUM_PLANNERS", (exhaustive.NAME,))
    assert run(waste_model(size=4), "planner-waste") == []


def test_small_planner_waste_is_info(monkeypatch: pytest.MonkeyPatch) -> None:
    # 128 B of 3,080 B: below the 256 B / 1% threshold, so it cannot fail a CI gate on warnings.
    exhaustive.install(monkeypatch)
    monkeypatch.setattr(plan_rules, "OPTIMUM_PLANNERS", (exhaustive.NAME,))
    (finding,) = run(waste_model(size=8), "planner-waste")
    assert finding.saving_bytes == 128
    assert finding.severity == Severity.INFO


def test_planner_waste_quiet_when_greedy_is_optimal(monkeypatch: pytest.MonkeyPatch) -> None:
    exhaustive.install(monkeypatch)
    monkeypatch.setattr(plan_rules, "OPTIMUM_PLANNERS", (exhaustive.NAME,))
    assert run(clean_model(), "planner-waste") == []


def test_overlap_savings_triggers() -> None:
    # resnet8_cifar peaks at a 3x3 convolution, whose output may slide on every kernel library.
    (finding,) = run(parse_model(example_bytes("resnet8_cifar"), "resnet8"), "overlap-savings")
    assert finding.severity == Severity.INFO
    details = finding.details
    assert details["overlap_bytes"] < details["disjoint_bytes"] <= details["runtime_bytes"]
    assert finding.saving_bytes == details["disjoint_bytes"] - details["overlap_bytes"]
    assert "--overlap" in finding.fix


def test_overlap_savings_quiet_without_a_rule_or_under_litert() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 16), "FLOAT32")
    weights = graph.add_constant("w", np.ones((8, 16), np.float32))
    out = graph.add_tensor("out", (1, 8), "FLOAT32")
    graph.add_operator("FULLY_CONNECTED", [source, weights, -1], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    assert run(load(builder), "overlap-savings") == []
    assert run(clean_model(), "overlap-savings", runtime="litert") == []
    # A chain of 1x1 convolutions: CMSIS-NN's pure-C and DSP paths re-read the input per
    # output-channel pair, so `optimize --overlap` (right on every library) saves nothing.
    assert run(clean_model(), "overlap-savings") == []


def test_peak_triggers() -> None:
    (finding,) = run(clean_model(), "peak")
    # conv0 (512 B) and conv1 (1024 B) are live while operator 1 runs.
    assert finding.details["live_bytes"] == 1536
    assert finding.location.operator == 1
    assert set(finding.location.tensors) == {3, 6}


def test_peak_quiet_without_planned_tensors() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    constant = graph.add_constant("c", np.zeros((4,), dtype=np.int8))
    graph.set_outputs([constant])
    assert run(load(builder), "peak") == []


def test_design_hints_triggers() -> None:
    findings = run(clean_model(), "design-hints")
    kinds = {f.details["hint"]: f for f in findings}
    assert {"channels", "stride", "input-resolution"} <= set(kinds)
    # Halving conv1's 16 channels: 512 + 512 live instead of 512 + 1024.
    assert kinds["channels"].saving_bytes == 512
    # Stride 2 on conv1: its 1024 B become 256 B; conv0 + conv1 = 768.
    assert kinds["stride"].saving_bytes == 768


def test_design_hints_operator_order() -> None:
    """Two branches: running the branch that frees its big input first lowers the peak."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 4), "INT8")
    graph.set_inputs([source])
    big = conv(graph, source, 32, "big")  # 512 B
    wide = conv(graph, source, 32, "wide")  # 512 B, read only at the end
    small = conv(graph, big, 1, "small")  # frees big
    joined = graph.add_tensor("joined", (1, 4, 4, 33), "INT8")
    graph.add_operator("CONCATENATION", [small, wide], [joined], options={"axis": 3})
    graph.set_outputs([joined])
    findings = [
        f for f in run(load(builder), "design-hints") if f.details["hint"] == "operator-order"
    ]
    (finding,) = findings
    assert finding.details["order"] == [0, 2, 1, 3]
    assert finding.saving_bytes is not None and finding.saving_bytes > 0


def state_variable_model() -> Model:
    """VAR_HANDLE, RELU, READ_VARIABLE, ASSIGN_VARIABLE, ADD: the variable is read, then written.

    x (1 KiB) → RELU → r, which only ASSIGN_VARIABLE reads; the value READ_VARIABLE returns
    (16 B) feeds ADD. Nothing but the variable orders READ before ASSIGN.
    """
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", (1, 256))
    handle = graph.add_tensor("state/handle", (1,), "RESOURCE")
    graph.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "state"})  # 0
    relu = graph.add_tensor("r", (1, 256))
    graph.add_operator("RELU", [source], [relu])  # 1
    value = graph.add_tensor("value", (1, 4))
    graph.add_operator("READ_VARIABLE", [handle], [value])  # 2
    graph.add_operator("ASSIGN_VARIABLE", [handle, relu], [])  # 3
    out = graph.add_tensor("out", (1, 4))
    graph.add_operator("ADD", [value, value], [out])  # 4
    graph.set_inputs([source])
    graph.set_outputs([out])
    return load(builder)


def test_design_hints_operator_order_keeps_state_reads_before_writes() -> None:
    """Regression (issue 14): the hint ran ASSIGN_VARIABLE before READ_VARIABLE ([1, 0, 3, 2, 4]),
    which changes what READ_VARIABLE returns, and still said the results are unchanged."""
    model = state_variable_model()
    (finding,) = [f for f in run(model, "design-hints") if f.details["hint"] == "operator-order"]
    order = finding.details["order"]
    check_schedule(model, Schedule(MappingProxyType({0: tuple(order)})))
    # RELU first frees x before the handle exists (TFLM plans the handle: 4 B → 16 B);
    # READ_VARIABLE keeps its place before ASSIGN_VARIABLE.
    assert order == [1, 0, 2, 3, 4]
    assert finding.saving_bytes == 16


def test_design_hints_quiet_for_vector_model() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 1), "FLOAT32")
    out = graph.add_tensor("out", (1, 1), "FLOAT32")
    graph.add_operator("RELU", [source], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    assert run(load(builder), "design-hints") == []


def test_analysis_failed_triggers(monkeypatch: pytest.MonkeyPatch) -> None:
    from arenalens.diagnostics import rules
    from arenalens.errors import ModelError

    def broken(model: Model, **_: object) -> None:
        raise ModelError(model.source, "cannot plan")

    monkeypatch.setattr(rules, "analyze", broken)
    diagnosis = diagnose(clean_model())
    assert [f.rule for f in diagnosis.findings] == ["analysis-failed"]


def test_diagnose_rejects_unknown_rule() -> None:
    from arenalens.errors import UsageError

    with pytest.raises(UsageError, match="unknown rule"):
        diagnose(clean_model(), rules=["no-such-rule"])


def test_image_layouts() -> None:
    from arenalens.image_inputs import image_axes

    assert image_axes((1, 96, 96, 3)) == (1, 2)
    assert image_axes((1, 3, 224, 224)) == (2, 3)
    assert image_axes((1, 49, 10, 1)) == (1, 2)
    assert image_axes((1, 640)) is None
    assert image_axes((1, 8, 8, 64)) is None


def test_resolution_hint_is_computed_with_litert() -> None:
    pytest.importorskip("ai_edge_litert")
    from arenalens.examples import example_bytes

    model = load_model(example_bytes("vww_mobilenet_v1"))
    findings = run(model, "design-hints", what_if=True)
    (resolution,) = [f for f in findings if f.details["hint"] == "input-resolution"]
    assert resolution.saving_bytes is not None and resolution.saving_bytes > 0
    # Half (48x48) leaves the 3x3 pooling window no input; 3/4 (72x72) still works.
    assert "1x72x72x3" in resolution.fix
    (estimate,) = [f for f in run(model, "design-hints") if f.details["hint"] == "input-resolution"]
    assert estimate.saving_bytes is None and "--what-if" in estimate.message


def test_resolution_hint_without_litert_says_it_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Walking the README in a fresh `.[images]` venv, `diagnose model.tflite --what-if` said
    "LiteRT could not propagate a smaller input through this graph" of VWW, whose graph LiteRT
    propagates at 72x72 (the test above): the interpreter was not installed. It now says so."""
    from arenalens.errors import RuntimeUnavailableError
    from arenalens.runtimes.litert import shapes

    def missing(*_arguments: object, **_options: object) -> Model:
        raise RuntimeUnavailableError("the real LiteRT interpreter is not installed")

    monkeypatch.setattr(shapes, "resize_model_inputs", missing)
    model = load_model(example_bytes("vww_mobilenet_v1"))
    findings = run(model, "design-hints", what_if=True)
    (resolution,) = [f for f in findings if f.details["hint"] == "input-resolution"]
    assert "could not propagate" not in resolution.message
    assert "not installed: pip install 'arenalens[runtime]'" in resolution.message
    assert resolution.saving_bytes is None and "1x48x48x3" in resolution.fix


# -- issue 13 regressions --------------------------------------------------------------------------


def test_zero_element_tensor_is_never_read_before_written() -> None:
    # A RESHAPE whose shape operand is an empty, non-constant tensor: nothing to read, so no
    # ERROR that would fail a CI gate on a valid model.
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 8), "INT8")
    empty = graph.add_tensor("empty_shape", (0,), "INT32")
    out = graph.add_tensor("out", (8,), "INT8")
    graph.add_operator("RESHAPE", [source, empty], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    assert run(load(builder), "read-before-written") == []


def test_no_channel_hint_for_a_1d_audio_tensor() -> None:
    # A 144,000-sample waveform has samples, not channels: halving them is no design hint.
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("audio", (144000,), "FLOAT32")
    scaled = graph.add_tensor("scaled", (144000,), "FLOAT32")
    out = graph.add_tensor("out", (144000,), "FLOAT32")
    graph.add_operator("ABS", [source], [scaled])
    graph.add_operator("RELU", [scaled], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    hints = {f.details["hint"] for f in run(load(builder), "design-hints")}
    assert "channels" not in hints


def test_no_channel_hint_for_an_operator_that_passes_channels_through() -> None:
    # RELU (like READ_VARIABLE, RESHAPE, ADD) does not choose its output channels.
    builder, graph = chain(channels=(8, 16))
    last = graph.outputs[0]
    out = graph.add_tensor("relu", graph.shape(last), "INT8")
    graph.add_operator("RELU", [last], [out])
    graph.set_outputs([out])
    for finding in run(load(builder), "design-hints"):
        if finding.details["hint"] == "channels":
            assert "CONV_2D" in finding.message
            assert "of subgraph 0" in finding.message


def test_operator_numbers_name_their_subgraph() -> None:
    builder, graph = chain()
    conv(graph, 3, 4, "dead_branch")
    (finding,) = run(load(builder), "tensor-never-read")
    assert "operator 3 (CONV_2D) of subgraph 0" in finding.message


# -- the tail --------------------------------------------------------------------------------


def test_tail_triggers() -> None:
    """The tail's share, its parts and the operators that keep most, in the budget's bytes."""
    from arenalens.pipeline import analyze

    model = clean_model()
    (finding,) = run(model, "tail", build="cortex-m7/cmsis-nn")
    budget = analyze(model, build="cortex-m7/cmsis-nn").budget
    tail = next(section for section in budget.sections if section.name == "tail")
    assert finding.severity == Severity.INFO
    assert finding.details["tail_bytes"] == tail.nbytes == budget.parts["tail_at_minimum"]
    assert finding.details["parts"] == {part.name: part.nbytes for part in tail.parts}
    assert f"{tail.nbytes:,} B" in finding.message
    assert finding.details["operators"][0]["opcode"] == "CONV_2D"


def activation_after_conv(*, same_quantization: bool = True, relu_fused: bool = False) -> Model:
    """input → CONV_2D (no fused activation) → RELU → output; or, with relu_fused, the model
    the converter would write: one CONV_2D with RELU fused."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 8, 8, 3), "INT8", quantization=ACTIVATION)
    graph.set_inputs([source])
    middle = conv(graph, source, 8, "conv", activation="RELU" if relu_fused else "NONE")
    if relu_fused:
        graph.set_outputs([middle])
        return load(builder)
    quantization_out = ACTIVATION if same_quantization else quantization(0.05, -128)
    out = graph.add_tensor("relu", (1, 8, 8, 8), "INT8", quantization=quantization_out)
    graph.add_operator("RELU", [middle], [out])
    graph.set_outputs([out])
    return load(builder)


def test_tail_fusion_triggers() -> None:
    """The folded model is the one the converter writes: the saving is what that declares less."""
    from arenalens.diagnostics.tail_rules import foldable, folded
    from arenalens.pipeline import analyze

    model = activation_after_conv()
    (finding,) = run(model, "tail-fusion", build="cortex-m7/cmsis-nn")
    fused = activation_after_conv(relu_fused=True)
    before = analyze(model, build="cortex-m7/cmsis-nn").budget
    after = analyze(fused, build="cortex-m7/cmsis-nn").budget
    assert finding.saving_bytes == before.required_bytes - after.required_bytes > 0
    assert finding.severity == Severity.WARNING  # same quantization: bit-identical outputs
    assert "bit-identical" in finding.fix
    assert finding.location.operator == 1
    rewritten = folded(model, foldable(model))
    assert analyze(rewritten, build="cortex-m7/cmsis-nn").budget.required_bytes == (
        after.required_bytes
    )
    assert [op.opcode for op in rewritten.subgraphs[0].operators] == ["CONV_2D"]
    # A RELU that requantizes changes the outputs' last step: said, and only an info.
    (requantized,) = run(activation_after_conv(same_quantization=False), "tail-fusion")
    assert requantized.severity == Severity.INFO and "accuracy" in requantized.fix


def test_tail_per_channel_triggers() -> None:
    from tests.tflm_synthetic import fully_connected_per_channel

    (convolutions,) = run(clean_model(), "tail-per-channel", build="cortex-m7/reference")
    # conv0..conv2: 8, 16 and 8 channels, two int32 arrays each, 16-byte tail steps.
    assert convolutions.details["bytes"] == 2 * (32 + 64 + 32)
    assert convolutions.saving_bytes == 2 * (32 + 64 + 32) - 2 * (16 + 32 + 16)
    assert convolutions.location.operator == 1  # the widest layer first
    dense = parse_model(fully_connected_per_channel(24), "fc")
    (finding,) = run(dense, "tail-per-channel")
    assert finding.saving_bytes == 2 * 96
    assert "per-tensor" in finding.fix and "accuracy" in finding.fix


def test_tail_variables_triggers() -> None:
    """A float resource variable: an int8 conversion stores it in a quarter of the bytes."""
    from tests.tflm_synthetic import resource_variables_mixed

    model = parse_model(resource_variables_mixed(), "variables")
    (finding,) = run(model, "tail-variables")
    assert finding.details == {"variables": 1, "bytes": 80, "bytes_as_int8": 32}
    assert finding.saving_bytes == 48
    assert "'features/value' FLOAT32" in finding.message
    assert "accuracy" in finding.fix
