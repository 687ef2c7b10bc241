"""The README's promises: its first lines are the two commands, and its Python snippets run."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from arenalens.examples import write_example

README = Path(__file__).resolve().parents[1] / "README.md"


def python_snippets() -> list[str]:
    """Every ```python block of the README."""
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_starts_with_the_two_commands() -> None:
    lines = README.read_text().splitlines()
    assert lines[0] == "```sh"
    assert "arenalens demo" in lines[1] and lines[1].startswith("pip install")
    assert "python -m pytest" in lines[2] and lines[2].startswith("pip install -e")
    assert lines[3] == "```"


@pytest.mark.parametrize("index", range(len(python_snippets())))
def test_python_snippet_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = write_example("kws_ds_cnn", tmp_path)
    (tmp_path / "model.tflite").write_bytes(model.read_bytes())
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "snippet.py"
    script.write_text(python_snippets()[index])
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        from arenalens.planning.registry import PLANNERS

        # Snippets may register example planners; keep the registry as other tests expect it.
        for name in ("by_first_use",):
            PLANNERS.pop(name, None)
