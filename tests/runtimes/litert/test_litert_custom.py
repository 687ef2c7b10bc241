"""The custom operators LiteRT's XNNPACK delegate takes (runtimes/litert/xnnpack_custom.py):
with the builtin kernels alone the interpreter cannot run them ("Encountered unresolved custom
op"); with XNNPACK it runs them, or fails as the wheel does."""

from __future__ import annotations

from pathlib import Path

import pytest

from arenalens.declared import Status
from arenalens.litert_memory import litert_memory
from arenalens.pipeline import analyze
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
        # What XNNPACK holds for them is not replayed: a labelled estimate.
        assert declared.status is Status.ESTIMATE and declared.required_bytes
