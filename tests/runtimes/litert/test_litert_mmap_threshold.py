"""Blocks of 128 KiB to 32 MiB made at the first invoke or by XNNPACK (glibc's dynamic mmap
threshold: mmapped or served from the heap as the process's history has it, counted mmapped,
up to a page over): the part holding one says it is a bound and why (HeapPart.mmapped), as the
setup parts have since session 11; its bytes are replayed all the same, never under.
Until session 12 Eigen's packed blocks, ruy's buffers and XNNPACK's packed weights of that
size were called exact."""

from __future__ import annotations

from pathlib import Path

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap import InterpreterHeap, interpreter_heap
from arenalens.runtimes.litert.heap_part import MMAPPED_NOTE
from tests.litert_heap_cache import cached, cached_isa
from tests.litert_heap_measure import HELD_OUT, held_out_model

FAMILIES = {f"{name}.tflite": (family, seed, name) for name, family, seed in HELD_OUT}


def _heap(name: str, delegate: str, folder: Path) -> InterpreterHeap:
    path = folder / name
    path.write_bytes(held_out_model(*FAMILIES[name]))
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    return interpreter_heap(analysis.model, sizes, delegate=delegate, isa=cached_isa(name))


def test_a_counted_mapping_is_recognised() -> None:
    # Eigen's 262,208-byte block (the wheel's trace: 266,224 usable) and a 64-aligned 128 KiB
    # mapping are decided by the threshold; a small block and one of 32 MiB and over are not.
    assert glibc.counted_mmapped(glibc.usable(262_208))
    assert glibc.counted_mmapped(glibc.aligned_usable(64, 128 * 1024))
    assert not glibc.counted_mmapped(glibc.usable(100_000))
    assert not glibc.counted_mmapped(glibc.usable(40 * 1024 * 1024))


def test_eigens_first_invoke_blocks_make_the_peak_a_bound(tmp_path: Path) -> None:
    """peak5_float_conv_1, builtin: Eigen packs its float GEMMs into heap blocks over 128 KiB
    at the first invoke (the peak): the transient part is a bound that says why; the figure
    is never under the wheel's."""
    heap = _heap("peak5_float_conv_1.tflite", "none", tmp_path)
    transient = next(part for part in heap.parts if part.name == "first-invoke transient")
    assert transient.mmapped and not transient.exact
    assert transient.meaning.endswith(MMAPPED_NOTE)
    assert "first-invoke transient (a block glibc mmaps" in (heap.estimate or "")
    assert heap.peak >= cached("peak5_float_conv_1.tflite")["builtin"]["peak"]


def test_a_model_without_such_blocks_stays_exact(tmp_path: Path) -> None:
    heap = _heap("var12_1203.tflite", "xnnpack", tmp_path)
    assert not any(part.mmapped for part in heap.parts)
