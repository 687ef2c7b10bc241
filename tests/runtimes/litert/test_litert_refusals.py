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
