"""`arenalens verify` on every built-in example agrees with both real runtimes (exit 0)."""

from __future__ import annotations

import pytest

from arenalens.cli import main
from arenalens.examples import EXAMPLES
from tests.conftest import SHARED_MODELS, SHARED_REASON


@pytest.mark.runtime
@pytest.mark.parametrize("runtime", ["tflm", "litert"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_verify_cli_agrees_on_builtin_example(
    name: str, runtime: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tflite_micro" if runtime == "tflm" else "ai_edge_litert")
    code = main(["verify", f"example:{name}", "--runtime", runtime, "--no-color"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "all predictions agree with the real runtime" in out


@pytest.mark.runtime
@pytest.mark.parametrize("runtime", ["tflm", "litert"])
def test_a_model_the_real_runtime_refuses_is_its_answer(
    runtime: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Vela model: its ethos-u custom op has no kernel in either runtime here. Before
    # issue 13, `verify --runtime litert` ended in "internal error" (exit 3); then in a one-line
    # error (exit 2). arenalens predicts CANNOT RUN, and the interpreter refuses it: they agree,
    # and the refusal is said first.
    pytest.importorskip("tflite_micro" if runtime == "tflm" else "ai_edge_litert")
    model = SHARED_MODELS / "tflite_micro__person_detect_vela.tflite"
    if not model.exists():
        pytest.skip(SHARED_REASON)
    code = main(["verify", str(model), "--runtime", runtime, "--no-color"])
    captured = capsys.readouterr()
    assert code == 0 and not captured.err
    first = captured.out.splitlines()[0]
    assert first.startswith("CANNOT RUN on the real interpreter:"), captured.out
    assert "could not set up this model" in first and "internal error" not in captured.out
    assert "all predictions agree with the real runtime" in captured.out
