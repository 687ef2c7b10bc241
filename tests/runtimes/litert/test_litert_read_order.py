"""A READ_VARIABLE before any ASSIGN_VARIABLE made its variable: CANNOT RUN with the builtin
kernels, and under XNNPACK where the read stays with them (runtimes/litert/variable_order.py).
The expected verdicts are the 2.3.0 wheel's (test_read_order_verdicts_are_the_wheels runs it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arenalens.cli import main
from arenalens.declared import Status
from arenalens.litert_memory import litert_memory
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.refusals import unwritten_variable_reads
from arenalens.tflite.reader import parse_model
from tests.litert_variable_cases import read_order_model, scalar_read_model

CASES = ("read_first", "assign_first", "call_once", "other_name", "container")
DTYPES = ("FLOAT32", "INT8", "INT32")
READ_NODE = {"read_first": 1, "other_name": 3, "container": 3}  # the wheel's "Node number N"


def fails(case: str, dtype: str, delegate: str) -> bool:
    """The wheel's first invoke fails: the read runs on the builtin kernel (always with
    --delegate none; under XNNPACK for an INT32 variable, whose values it does not take)."""
    builtin = delegate == "none" or dtype == "INT32"
    return case in READ_NODE and builtin


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_read_order_verdicts(case: str, dtype: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(read_order_model(case, dtype))
    analysis = analyze(str(path), runtime="litert")
    for delegate in ("none", "xnnpack"):
        declared = litert_memory(analysis, delegate)
        cannot = declared.status is Status.CANNOT_RUN
        assert cannot == fails(case, dtype, delegate), delegate
        if cannot:
            assert any(
                "state'" in reason and "READ_VARIABLE" in reason for reason in declared.reasons
            )


ORDERS = (("read", "relu", "assign"), ("relu", "read", "assign"), ("relu", "assign", "read"))


@pytest.mark.parametrize("order", ORDERS)
def test_a_builtin_read_of_a_variable_the_delegate_proxies(
    order: tuple[str, ...], tmp_path: Path
) -> None:
    """Measured on the 2.3.0 wheel (/tmp probe, same calls as the runtime test below): the
    builtin kernels fail a rank-0 read before the assignment; XNNPACK runs every order."""
    path = tmp_path / "scalar.tflite"
    path.write_bytes(scalar_read_model(order))
    analysis = analyze(str(path), runtime="litert")
    before = order.index("read") < order.index("assign")
    assert (litert_memory(analysis, "none").status is Status.CANNOT_RUN) == before
    assert litert_memory(analysis, "xnnpack").status is not Status.CANNOT_RUN


def test_the_refusal_names_the_operator_and_the_resource() -> None:
    model = parse_model(read_order_model("container"), "container")
    (obstacle,) = unwritten_variable_reads(model)
    assert (obstacle.subgraph, obstacle.operator, obstacle.phase) == (0, 3, "invoke")
    assert "resource variable 'c/state'" in obstacle.reason
    assert unwritten_variable_reads(parse_model(read_order_model("call_once"), "c")) == ()


def test_check_says_cannot_run_first_with_the_builtin_kernels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "read_first.tflite"
    path.write_bytes(read_order_model("read_first"))
    arguments = ["check", str(path), "--runtime", "litert", "--budget", "1M"]
    assert main([*arguments, "--delegate", "none"]) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert "CANNOT RUN" in text
    assert "operator 1 (READ_VARIABLE) of subgraph 0: it reads resource variable 'state'" in text
    assert main(arguments) == 0  # XNNPACK takes the read: the wheel runs it
    assert "FITS" in capsys.readouterr().out


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("case", "dtype"),
    [
        ("read_first", "FLOAT32"),
        ("call_once", "INT32"),
        ("container", "INT32"),
        ("assign_first", "INT8"),
    ],
)
def test_read_order_verdicts_are_the_wheels(case: str, dtype: str) -> None:
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    builtin = interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    data = read_order_model(case, dtype)
    for delegate in ("none", "xnnpack"):
        options = {} if delegate == "xnnpack" else {"experimental_op_resolver_type": builtin}
        runner = interpreter.Interpreter(model_content=data, **options)
        runner.allocate_tensors()
        detail = runner.get_input_details()[0]
        runner.set_tensor(detail["index"], np.ones(detail["shape"], detail["dtype"]))
        if fails(case, dtype, delegate):
            with pytest.raises(
                RuntimeError, match=rf"variable != nullptr.*Node number {READ_NODE[case]} "
            ):
                runner.invoke()
        else:
            runner.invoke()


@pytest.mark.runtime
def test_scalar_read_first_is_the_wheels() -> None:
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    builtin = interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    data = scalar_read_model(("read", "relu", "assign"))
    for delegate in ("none", "xnnpack"):
        options = {} if delegate == "xnnpack" else {"experimental_op_resolver_type": builtin}
        runner = interpreter.Interpreter(model_content=data, **options)
        runner.allocate_tensors()
        runner.set_tensor(runner.get_input_details()[0]["index"], np.ones((1, 4), np.float32))
        if delegate == "none":
            with pytest.raises(RuntimeError, match=r"variable != nullptr.*Node number 1 "):
                runner.invoke()
        else:
            runner.invoke()
