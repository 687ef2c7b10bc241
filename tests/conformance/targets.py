"""Measured targets: name → the arenalens build predicted for it and how it is measured.

* `host`: the x86-64 `tflite_micro` wheel (`arenalens.runtimes.tflm.probe`).
* `cortex-*`: real TFLM for Cortex-M under QEMU (the probes in ../shared/tools/cortex-m,
  run through their `run.py`), measured with the recording allocator (head, tail, categories,
  minimal arena) and the plain allocator firmware uses (tail, minimal arena).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arenalens.builds.build import HOST, Build, device_build

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBES = Path(
    os.environ.get("ARENALENS_CORTEX_M_PROBES", REPO_ROOT.parent / "shared" / "tools" / "cortex-m")
)
PROBES_REASON = f"Cortex-M probes not found at {PROBES} (set ARENALENS_CORTEX_M_PROBES)"


@dataclass(frozen=True)
class Target:
    """One measured build."""

    name: str
    build: Build  # the recording-allocator build (what the measurement prints categories for)
    device: bool

    @property
    def plain(self) -> Build:
        """The same build with firmware's plain MicroAllocator."""
        return self.build.with_recording(False)


def _device(name: str) -> Target:
    cpu, kernels = name.split("-", 2)[:2], name.split("-", 2)[2]
    return Target(name, device_build("-".join(cpu), kernels, recording=True), True)


TARGETS: dict[str, Target] = {
    "host": Target("host", HOST, False),
    **{
        name: _device(name)
        for name in (
            "cortex-m7-reference",
            "cortex-m7-cmsis-nn",
            "cortex-m3-cmsis-nn",
            "cortex-m55-reference",
            "cortex-m55-cmsis-nn",
        )
    },
}
