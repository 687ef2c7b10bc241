"""`arenalens verify` on every built-in example agrees with both real runtimes (exit 0)."""

from __future__ import annotations

import pytest

from arenalens.cli import main
from arenalens.examples import EXAMPLES


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
