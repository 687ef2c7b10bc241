"""Measured targets: name → the arenalens build predicted for it and how it is measured.

* `host`: the x86-64 `tflite_micro` wheel installed here (`arenalens.runtimes.tflm.probe`).
* `host@<version>`: an older `tflite-micro` wheel, run in an environment of its own
  (`tests/conformance/wheels.py`); `release_target(version)` makes one (measure.py's
  `measured_releases()` lists those with cached measurements).
* `cortex-*`: real TFLM for Cortex-M under QEMU (the probes in ../shared/tools/cortex-m,
  run through their `run.py`), measured with the recording allocator (head, tail, categories,
  minimal arena) and the plain allocator firmware uses (tail, minimal arena).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arenalens.builds.build import HOST, Build, device_build, host_build
from arenalens.builds.tflm import wheel_release

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
    wheel: str | None = None  # the tflite-micro version of a `host@<version>` target

    @property
    def plain(self) -> Build:
        """The same build with firmware's plain MicroAllocator."""
        return self.build.with_recording(False)


RELEASE_PREFIX = "host@"


def release_target(version: str) -> Target:
    """An older wheel as a measured target, `host@<version>`: predicted for the host build of
    that wheel's TFLM release."""
    return Target(
        RELEASE_PREFIX + version, host_build(wheel_release(version)), False, wheel=version
    )


def target_named(name: str) -> Target:
    """A target by name: one of TARGETS, or `host@<wheel version>`."""
    if name.startswith(RELEASE_PREFIX):
        return release_target(name.removeprefix(RELEASE_PREFIX))
    return TARGETS[name]


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
