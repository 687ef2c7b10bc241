"""What LiteRT refuses at Invoke, said first: an integer SVDF without a fused RELU sets up
(allocate_tensors() succeeds) and fails every invoke() on the real wheel (svdf.cc's Eval check);
arenalens answers CANNOT RUN for it, with the operators and the fix, and runs the RELU one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arenalens.declared import Status, declared_arena
from arenalens.pipeline import analyze
from tests.litert_recurrent_cases import svdf_integer_stack


@pytest.mark.parametrize("activation", ["NONE", "RELU6", "RELU"])
def test_integer_svdf_runs_only_with_relu(activation: str, tmp_path: Path) -> None:
    path = tmp_path / f"svdf_{activation}.tflite"
    path.write_bytes(svdf_integer_stack(2, activation=activation))
    declared = declared_arena(analyze(path, runtime="litert"))
    if activation == "RELU":
        assert declared.status is Status.EXACT
    else:
        assert declared.status is Status.CANNOT_RUN
        reason = declared.reasons[0]
        assert "fused RELU" in reason and "SVDF operators (0, 2)" in reason


@pytest.mark.runtime
def test_the_wheel_refuses_what_arenalens_refuses(tmp_path: Path) -> None:
    interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")
    for activation, runs in (("NONE", False), ("RELU", True)):
        interpreter = interpreter_module.Interpreter(
            model_content=svdf_integer_stack(2, activation=activation),
            experimental_op_resolver_type=(
                interpreter_module.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
            ),
        )
        interpreter.allocate_tensors()
        details = interpreter.get_input_details()[0]
        interpreter.set_tensor(details["index"], np.zeros(details["shape"], details["dtype"]))
        if runs:
            interpreter.invoke()
        else:
            with pytest.raises(RuntimeError, match="kTfLiteActRelu"):
                interpreter.invoke()


def _int8_batch_matmul(scale: float, *, constant_b: bool) -> bytes:
    """One int8 BATCH_MATMUL [1, 4, 8] x [8, 6]: A at `scale`, B and the output at 1, so its
    requantization scale (A's x B's / the output's) is `scale`; B constant or a second input."""
    from arenalens.tflite.builder import ModelBuilder, quantization

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    a = graph.add_tensor("a", [1, 4, 8], "INT8", quantization=quantization(scale, 0))
    inputs = [a]
    if constant_b:
        b = graph.add_constant(
            "b", np.ones((8, 6), np.int8), "INT8", quantization=quantization(1.0, 0)
        )
    else:
        b = graph.add_tensor("b", [8, 6], "INT8", quantization=quantization(1.0, 0))
        inputs.append(b)
    y = graph.add_tensor("y", [1, 4, 6], "INT8", quantization=quantization(1.0, 0))
    graph.add_operator("BATCH_MATMUL", [a, b], [y], options={"adj_x": False, "adj_y": False})
    graph.set_inputs(inputs)
    graph.set_outputs([y])
    return builder.build()


@pytest.mark.parametrize(
    ("scale", "constant_b", "refused"),
    [(255.0, True, False), (255.5, True, True), (1000.0, True, True), (1000.0, False, False)],
)
def test_an_int8_batch_matmul_over_its_requantization_limit_cannot_run_under_xnnpack(
    scale: float, constant_b: bool, refused: bool, tmp_path: Path
) -> None:
    """batch-matrix-multiply-nc.c packs a constant int8 B at creation and refuses a
    requantization scale outside (0, 255]; a run-time B is not checked. On the 2.3.0 wheel
    (measured by hand, and by the runtime test below): 255.5, 256 and 1,000 with a constant B
    crash the first invoke() under XNNPACK (allocate_tensors() succeeds), 255 runs, a run-time B
    runs at 1,000, and the builtin kernels run every one."""
    from arenalens.litert_memory import litert_memory

    path = tmp_path / "bmm.tflite"
    path.write_bytes(_int8_batch_matmul(scale, constant_b=constant_b))
    analysis = analyze(path, runtime="litert")
    xnnpack = litert_memory(analysis, "xnnpack")
    assert (xnnpack.status is Status.CANNOT_RUN) is refused
    if refused:
        (refusal,) = xnnpack.refusals
        assert refusal.opcode == "BATCH_MATMUL" and refusal.phase == "invoke"
        assert "over 255" in refusal.reason and "--delegate none" in refusal.fix
    assert litert_memory(analysis, "none").status.gives_a_number


_CRASH_CHILD = """
import sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
kind = getattr(OpResolverType, sys.argv[1])
interpreter = Interpreter(model_content=sys.stdin.buffer.read(), experimental_op_resolver_type=kind)
interpreter.allocate_tensors()
print("allocated", flush=True)
interpreter.invoke()
print("invoked", flush=True)
"""


@pytest.mark.runtime
def test_the_wheel_crashes_an_int8_batch_matmul_over_the_limit_only_under_xnnpack() -> None:
    import subprocess
    import sys

    pytest.importorskip("ai_edge_litert.interpreter")
    data = _int8_batch_matmul(255.5, constant_b=True)
    outcomes = {}
    for kind in ("AUTO", "BUILTIN_WITHOUT_DEFAULT_DELEGATES"):
        completed = subprocess.run(
            [sys.executable, "-c", _CRASH_CHILD, kind],
            input=data,
            capture_output=True,
            timeout=120,
            check=False,
        )
        outcomes[kind] = (completed.returncode, completed.stdout.decode().split())
    assert outcomes["AUTO"][0] != 0 and outcomes["AUTO"][1] == ["allocated"]
    assert outcomes["BUILTIN_WITHOUT_DEFAULT_DELEGATES"] == (0, ["allocated", "invoked"])


@pytest.mark.parametrize(("seed", "refused"), [(8, True), (10, False), (2, False)])
def test_a_grouped_hybrid_convolution_needs_a_scale_per_output_channel(
    seed: int, refused: bool, tmp_path: Path
) -> None:
    """hybrid6_conv_8 (grouped, one filter scale) fails the wheel's builtin Prepare
    ('affine_quantization->scale->size != filter->dims->data[0]', tests/data/litert_heap.json)
    and runs under XNNPACK; the grouped ones with a scale per output channel (10, 2) run."""
    from arenalens.litert_memory import litert_memory
    from tests.litert_composite_cases import hybrid_conv

    path = tmp_path / "conv.tflite"
    path.write_bytes(hybrid_conv(seed))
    analysis = analyze(path, runtime="litert")
    assert (litert_memory(analysis, "none").status is Status.CANNOT_RUN) is refused
    assert litert_memory(analysis, "xnnpack").status.gives_a_number


# The composites whose options LiteRT's parser refuses (flatbuffer_conversions.cc
# ParseStablehloComposite), with the message the 2.3.0 wheel's Interpreter(...) raises.
_COMPOSITE_REFUSED = {
    "no_attributes": "missing required option 'composite_attributes'",
    "no_name": "missing required option 'name'",
    "no_options": "Could not get 'stablehlo.composite' operation parameters",
}


@pytest.mark.parametrize(
    "case", ["complete", "no_attributes", "empty_attributes", "no_name", "empty_name", "no_options"]
)
def test_a_composite_without_its_attributes_or_name_cannot_run(case: str, tmp_path: Path) -> None:
    """An absent `composite_attributes` or `name`, or no options table, is CANNOT RUN under
    both delegates (the parser fails before any delegate); an empty vector or an empty name
    runs. The reader tells the absent vector (None) from the empty one (())."""
    from arenalens.litert_memory import litert_memory
    from tests.litert_composite_cases import composite_options

    path = tmp_path / f"{case}.tflite"
    path.write_bytes(composite_options(case))
    analysis = analyze(path, runtime="litert")
    options = analysis.model.subgraphs[0].operators[0].options
    if case == "no_attributes":
        assert options["composite_attributes"] is None
    elif case == "empty_attributes":
        assert options["composite_attributes"] == ()
    refused = _COMPOSITE_REFUSED.get(case)
    for delegate in ("none", "xnnpack"):
        memory = litert_memory(analysis, delegate)
        assert (memory.status is Status.CANNOT_RUN) is (refused is not None), delegate
        if refused is not None:
            assert refused in memory.reasons[0] and "Interpreter(...)" in memory.reasons[0]


@pytest.mark.runtime
def test_the_wheel_refuses_the_composites_arenalens_refuses() -> None:
    interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")
    from tests.litert_composite_cases import COMPOSITE_OPTION_CASES, composite_options

    for case in COMPOSITE_OPTION_CASES:
        for kind in ("AUTO", "BUILTIN_WITHOUT_DEFAULT_DELEGATES"):
            resolver = getattr(interpreter_module.OpResolverType, kind)
            refused = _COMPOSITE_REFUSED.get(case)
            if refused is None:
                interpreter = interpreter_module.Interpreter(
                    model_content=composite_options(case), experimental_op_resolver_type=resolver
                )
                interpreter.allocate_tensors()
                interpreter.invoke()
            else:
                with pytest.raises(ValueError, match=refused):
                    interpreter_module.Interpreter(
                        model_content=composite_options(case),
                        experimental_op_resolver_type=resolver,
                    )
