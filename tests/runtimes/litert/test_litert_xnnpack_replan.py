"""XNNPACK delegate kernels after a rank-0 READ_VARIABLE, prepared at the first invoke's re-plan
(runtimes/litert/heap_xnnpack_reshape.py, heap_replan.py), against the 2.3.0 wheel: var11_*
(tests/litert_variable_cases.replan_model, drawn for the builtin re-plan) and var12_*
(tests/litert_replan_cases.py, drawn after the XNNPACK replay was written), both measured on
the AMD EPYC this profile replays (tests/litert_heap_cache.py finds them in either cache).

Until session 12 the whole workspace and the whole arena were counted at setup and the re-plan
at its bound: XNNPACK after setup up to 1.027x, labelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import heap_replan, heap_xnnpack, heap_xnnpack_reshape
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import X86_64_V3_ZEN
from arenalens.runtimes.litert.rules import litert_plans
from arenalens.runtimes.litert.xnnpack_custom import as_xnnpack_builtins
from arenalens.runtimes.litert.xnnpack_variables import quantization_failures
from arenalens.tflite.reader import parse_model
from tests.litert_heap_cache import cached, cached_isa, names
from tests.litert_heap_measure import HELD_OUT, held_out_model
from tests.litert_replan_scratch import COMMAND as SCRATCH_COMMAND
from tests.litert_replan_scratch import MODELS as SCRATCH_MODELS
from tests.litert_replan_scratch import SCRATCH

FAMILIES = {f"{name}.tflite": (family, seed, name) for name, family, seed in HELD_OUT}
REPLANS = [
    name
    for name in names()
    if name.startswith(("var11_", "var12_")) and "error" not in cached(name)["xnnpack"]
]
PHASES = (("after_allocate", "after_setup"), ("after_invoke", "after_first_invoke"),
          ("peak", "peak"))  # fmt: skip
# Over the wheel by more than the allowances and 0.5%, and why (never under). Until session 13
# var11_1102 / _1107 / _1110 were (up to 0.75%): a fused variable copy's operator-data slot was
# counted after a clean-up had compacted the array (xnnpack_slots).
OVER: dict[str, str] = {}


def _model(name: str, folder: Path) -> Path:
    path = folder / name
    path.write_bytes(held_out_model(*FAMILIES[name]))
    return path


def test_every_drawn_replan_is_measured() -> None:
    # 25 of var11's 28 run under XNNPACK, 19 of var12's 24 (the others' delegate refuses an
    # 8-bit assignment of another scale: xnnpack_variables).
    assert sum(name.startswith("var11_") for name in REPLANS) == 25
    assert sum(name.startswith("var12_") for name in REPLANS) == 19


def test_a_kernel_after_the_read_is_prepared_at_the_first_invoke() -> None:
    """var11_1101 (tests/litert_heap_trace.py, XNNPACK): allocate_tensors() stops after the
    rank-0 read at view node 2 and holds no workspace (no xnn_plan_memory block before the
    invoke); node 3's kernel is reshaped at the first invoke: its 17 usage records (552 B), the
    planner's scratch (72 + 40 B traced: 9 ids, 2 records placed), the 160 B workspace (168 B
    traced, its 64-aligned block counted at 200), the records freed, its two outputs' dims
    made anew."""
    model = as_xnnpack_builtins(parse_model(held_out_model("replan", 1101), "var11_1101"))
    view = heap_xnnpack.delegated_view(model)
    assert view is not None
    reshapes = heap_xnnpack_reshape.kernel_reshapes(model, view, X86_64_V3_ZEN)
    replayed = heap_replan.replan(litert_plans(view)[0].prepared, view.subgraphs[0], reshapes)
    assert replayed.exact and replayed.later_kernels == {3, 5}
    steps = replayed.steps_at[3]
    assert steps[:11] == (552, 72, 40, -72, -40, 200, -552, 24, -24, 24, -24)
    assert heap_xnnpack_reshape.setup_workspace(reshapes, replayed.later_kernels) == 0


def test_the_reshapes_scratch_is_exact(tmp_path: Path) -> None:
    """The planner's scratch at the re-plan is counted exactly (memory-planner.c's ids from the
    first workspace value to the last operator, its placed records): no bound said. Until
    session 13 it was a labelled bound, 192-736 B over the wheel (var11_1101, var12_1213/_1219)."""
    analysis = analyze(_model("var11_1101.tflite", tmp_path), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=X86_64_V3_ZEN)
    parts = {part.name: part for part in heap.parts}
    transient = parts["first-invoke transient"]
    assert transient.exact and "planner's scratch" not in transient.meaning
    assert parts["first-invoke kernel buffers"].exact
    assert parts["XNNPACK workspace"].nbytes == 0  # none after setup: the wheel's trace


@pytest.mark.parametrize("name", REPLANS)
def test_the_replan_under_xnnpack_against_the_wheel(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isa = cached_isa(name, monkeypatch)
    assert isa is X86_64_V3_ZEN
    analysis = analyze(_model(name, tmp_path), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=isa)
    kept = next(part for part in heap.parts if part.name == "first-invoke kernel buffers")
    assert kept.exact, kept.meaning  # the re-plan replayed: no READ_VARIABLE bound
    real = cached(name)["xnnpack"]
    allowances = sum(part.nbytes for part in heap.parts if part.allowance)
    mmapped = any(part.mmapped for part in heap.parts)
    for measured, predicted in PHASES:
        figure = getattr(heap, predicted)
        assert figure >= real[measured], measured
        if name not in OVER and not mmapped:
            assert figure - allowances <= real[measured] * 1.005, measured


def test_a_packed_block_glibc_may_serve_from_its_heap_is_labelled(tmp_path: Path) -> None:
    """var12_1219's 128 × 256 float weights pack to 132,096 B: the wheel's Python process
    served them from its heap (132,104 B usable, traced), a C++ app that never freed a larger
    mmapped block gets them mmapped (135,104 B: counted so). The part says it is a bound."""
    analysis = analyze(_model("var12_1219.tflite", tmp_path), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=X86_64_V3_ZEN)
    packed = next(part for part in heap.parts if part.name == "XNNPACK packed weights")
    assert packed.mmapped and not packed.exact and "128 KiB to 32 MiB" in packed.meaning
    assert "XNNPACK packed weights (a block glibc mmaps" in (heap.estimate or "")
    small = analyze(_model("var12_1203.tflite", tmp_path), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in small.arenas]
    heap = interpreter_heap(small.model, sizes, delegate="xnnpack", isa=X86_64_V3_ZEN)
    packed = next(part for part in heap.parts if part.name == "XNNPACK packed weights")
    assert packed.exact and not packed.mmapped


@pytest.mark.parametrize(("name", "family", "seed"), SCRATCH_MODELS)
def test_the_planners_scratch_is_the_wheels(name: str, family: str, seed: int) -> None:
    """Each kernel the re-plan prepares asks for its planner's scratch as the wheel's trace
    does (tests/litert_replan_scratch.py): 8 B per id from its first workspace value to its last
    operator, 16 B per record placed. 98 of 117 models run (var11_*, var12_*, 48 draws,
    scr13_*, drawn after the rule, and 17, scr14*, whose first planned value is one the nodes
    add past a static or cleared one, drawn after heap_xnnpack_reshape._added_position), all
    equal and every kernel exact (scr13_1346's was a labelled bound until session 14); the
    other 19 the delegate refuses."""
    real = json.loads(SCRATCH.read_text())[name]
    model = as_xnnpack_builtins(parse_model(held_out_model(family, seed), name))
    if real is None:
        # The wheel's delegate refused it: arenalens must say so too (a variable's value
        # quantized otherwise than its first access), not give a figure.
        assert any(map(quantization_failures, model.subgraphs)), SCRATCH_COMMAND
        return
    view = heap_xnnpack.delegated_view(model)
    assert view is not None
    reshapes = heap_xnnpack_reshape.kernel_reshapes(model, view, X86_64_V3_ZEN)
    replayed = heap_replan.replan(litert_plans(view)[0].prepared, view.subgraphs[0], reshapes)
    assert replayed.exact
    assert all(reshapes[kernel].scratch_exact for kernel in replayed.later_kernels)
    predicted = []
    for kernel in sorted(replayed.later_kernels):
        if reshapes[kernel].planned:
            predicted += [8 * reshapes[kernel].planned, 16 * reshapes[kernel].placed]
    assert predicted == real, SCRATCH_COMMAND
