"""The heap figure against the wheel's from twelve Python process states (tests/
litert_heap_states.py: the interpreter's prefix and PYTHONPATH; cached in tests/data/
litert_heap_states.json on the AMD EPYC): glibc's placement moves the measured bytes with the
process's history, so the figure must be above every state's, not only the cached one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import X86_64_V3_ZEN
from tests.litert_heap_cache import cached
from tests.litert_heap_measure import HELD_OUT, held_out_model
from tests.litert_heap_states import DATA, MODELS

CACHE: dict[str, Any] = json.loads(DATA.read_text())
FAMILIES = {f"{name}.tflite": (family, seed, name) for name, family, seed in HELD_OUT}
PHASES = (("after_allocate", "after_setup"), ("after_invoke", "after_first_invoke"),
          ("peak", "peak"))  # fmt: skip
CASES = [(f"{name}.tflite", mode) for mode, names in MODELS.items() for name in names]


def test_every_listed_model_is_measured_in_every_state() -> None:
    assert CACHE["command"] == "python -m tests.litert_heap_states"
    assert len(CACHE["states"]) == 12
    for name, mode in CASES:
        figures = CACHE["models"][name][mode]
        assert len(figures) == 12 and all("error" not in figure for figure in figures)


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_the_figure_is_above_every_process_state(
    name: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    epyc = eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")
    path = tmp_path / name
    path.write_bytes(held_out_model(*FAMILIES[name]))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    delegate = "none" if mode == "builtin" else "xnnpack"
    heap = interpreter_heap(analysis.model, sizes, delegate=delegate, isa=X86_64_V3_ZEN)
    for figures in (*CACHE["models"][name][mode], cached(name)[mode]):
        for measured, predicted in PHASES:
            assert getattr(heap, predicted) >= figures[measured], (measured, figures[measured])


def test_the_process_state_moves_the_bytes() -> None:
    """The same model's figures differ between states (glibc's placement, not the model), by
    at most a few hundred bytes."""
    spreads = []
    for name, mode in CASES:
        peaks = [figure["after_allocate"] for figure in CACHE["models"][name][mode]]
        spreads.append(max(peaks) - min(peaks))
    assert max(spreads) > 0
    assert max(spreads) <= 512
