"""The custom operators LiteRT's XNNPACK delegate takes (runtimes/litert/xnnpack_custom.py):
with the builtin kernels alone the interpreter cannot run them ("Encountered unresolved custom
op"); with XNNPACK it runs them, or fails as the wheel does."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.declared import Status
from arenalens.litert_memory import litert_memory
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from tests.litert_custom_cases import custom_case

# Seeds of tests/litert_custom_cases.custom_case run by hand on the ai-edge-litert 2.3.0 wheel
# (allocate_tensors + invoke): BUILTIN_WITHOUT_DEFAULT_DELEGATES failed on every one
# ("Encountered unresolved custom op", or the CONV_2D before it), AUTO (XNNPACK) ran all but
# 4 and 11 (MaxUnpooling2D with SAME padding: "invalid padding mode (1)", then unresolved)
# and 6 (SAME unpooling and int32 indices: "failed to create XNNPACK Value").
RUNS_WITH_XNNPACK = {seed: seed not in (4, 6, 11) for seed in range(1, 13)}


@pytest.mark.parametrize("seed", sorted(RUNS_WITH_XNNPACK))
def test_custom_operators_run_as_on_the_wheel(seed: int, tmp_path: Path) -> None:
    path = tmp_path / f"custom_{seed}.tflite"
    path.write_bytes(custom_case(seed))
    analysis = analyze(path, runtime="litert")
    assert litert_memory(analysis, "none").status is Status.CANNOT_RUN
    declared = litert_memory(analysis, "xnnpack")
    runs = declared.status is not Status.CANNOT_RUN
    assert runs == RUNS_WITH_XNNPACK[seed], declared.reasons
    if runs:
        # Exact where every part of the heap is replayed (the custom operators the delegate
        # takes, and since session 16 its build transient on a replayed ISA), else a labelled
        # estimate: the status is the heap's own (test_litert_heap's custom-operator test checks
        # the figures against the wheel).
        sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
        heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack")
        assert declared.required_bytes
        assert declared.status is (Status.EXACT if heap.exact else Status.ESTIMATE)


def _deconvolution(size: int, kernel: int, stride: int, padding: int, out: int) -> bytes:
    """One Convolution2DTransposeBias [1, size, size, 2] → [1, out, out, 4]."""
    import struct

    import numpy as np

    from arenalens.tflite.builder import ModelBuilder

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, size, size, 2])
    weights = graph.add_constant("w", np.zeros((4, kernel, kernel, 2), np.float32))
    bias = graph.add_constant("b", np.zeros(4, np.float32))
    y = graph.add_tensor("y", [1, out, out, 4])
    graph.add_operator(
        "CUSTOM:Convolution2DTransposeBias",
        [x, weights, bias],
        [y],
        custom_options=struct.pack("<3i", padding, stride, stride),
    )
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


_SAME, _VALID = 1, 2
# (input size, kernel, stride, padding, output size) → whether the delegate takes it.
_DECONVOLUTIONS = {
    (4, 3, 2, _SAME, 8): True,
    (4, 1, 2, _SAME, 8): False,  # a stride over the kernel with SAME
    (4, 3, 2, _SAME, 9): False,  # SAME: the output implies another input
    (4, 3, 2, _VALID, 9): True,
    (1, 3, 1, _VALID, 2): False,  # VALID: the kernel outside the output
}


@pytest.mark.parametrize("case", sorted(_DECONVOLUTIONS))
def test_a_custom_deconvolution_needs_the_paddings_the_delegate_computes(
    case: tuple[int, int, int, int, int], tmp_path: Path
) -> None:
    """CalculateTransposeConvPaddings, as for TRANSPOSE_CONV: a Convolution2DTransposeBias
    the delegate cannot pad is left to its unresolved placeholder (CANNOT RUN); a taken one
    is replayed as the TRANSPOSE_CONV XNNPACK defines (its packing exact, not a bound)."""
    path = tmp_path / "deconvolution.tflite"
    path.write_bytes(_deconvolution(*case))
    declared = litert_memory(analyze(path, runtime="litert"), "xnnpack")
    assert (declared.status is not Status.CANNOT_RUN) is _DECONVOLUTIONS[case], declared.reasons
    if _DECONVOLUTIONS[case]:
        assert not any("packed weights" in reason for reason in declared.reasons), declared.reasons
