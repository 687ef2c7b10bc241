"""Measured targets: name → the arenalens build predicted for it and how it is measured.

* `host`: the x86-64 `tflite_micro` wheel installed here (`arenalens.runtimes.tflm.probe`).
* `host@<version>`: an older `tflite-micro` wheel, run in an environment of its own
  (`tests/conformance/wheels.py`); `release_target(version)` makes one (measure.py's
  `measured_releases()` lists those with cached measurements).
* `cortex-*`: real TFLM for Cortex-M under QEMU (the probes in ../shared/tools/cortex-m,
  run through their `run.py`), measured with the recording allocator (head, tail, categories,
  minimal arena) and the plain allocator firmware uses (tail, minimal arena).
* `cortex-*@<commit>`: the same Cortex-M probe builds at an older TFLM commit, built with the
  probes' kit (`device_release_target`; their run.py and ELF in `RELEASE_PROBES/<commit>/`).
* `esp*`, `rv32-reference`: esp-tflite-micro v1.3.8 (TFLM with Espressif's ESP-NN kernels) built
  for RV32 ILP32, the struct layout of the ESP32 family, under `qemu-system-riscv32` (the probes
  in ../shared/tools/esp, same `run.py` interface), measured as the Cortex-M probes are, and
  predicted with the ESP build each stands for (`ESP_BUILDS`). Which cases each ESP variant
  measures: `tests/conformance/esp_variants.py`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arenalens.builds.build import HOST, Build, build_named, device_build, host_build
from arenalens.builds.tflm import wheel_release

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBES = Path(
    os.environ.get("ARENALENS_CORTEX_M_PROBES", REPO_ROOT.parent / "shared" / "tools" / "cortex-m")
)
PROBES_REASON = f"Cortex-M probes not found at {PROBES} (set ARENALENS_CORTEX_M_PROBES)"
ESP_PROBES = Path(
    os.environ.get("ARENALENS_ESP_PROBES", REPO_ROOT.parent / "shared" / "tools" / "esp")
)
ESP_PROBES_REASON = f"ESP probes not found at {ESP_PROBES} (set ARENALENS_ESP_PROBES)"
ESP_ROOMY_ARENA = 4 << 20
# The ESP build that measures every case with both allocators (tests/conformance/esp_variants.py).
ESP_FULL = "esp32s3-esp-nn"


@dataclass(frozen=True)
class Target:
    """One measured build."""

    name: str
    # The recording-allocator build (what the measurement prints categories for); None for a
    # target that is measured but not yet predicted (its cached figures wait for its rules).
    build: Build | None
    device: bool
    # The folder of the probe's run.py (None: the host wheel, measured in-process).
    probes: Path | None = None
    # Whether the recording allocator's minimal arena is measured too (the plain one always is).
    # Not on the ESP probes: QEMU time is the cost there, and firmware runs the plain allocator;
    # the recording run still gives head, tail and every category.
    recording_minimum: bool = True
    # Whether the recording allocator runs at all (its tail and categories): the ESP builds but
    # the full one measure the plain allocator only (head, tail, minimal arena), for QEMU time.
    recording_run: bool = True
    # The arena of the roomy runs (None: the probe's default, its whole RAM less the model). The
    # ESP probes take about four times as long at 192 MiB as at a few MiB (QEMU touches the
    # memory), and a conformance case needs well under 4 MiB; a multiple of 16, as the default.
    roomy_arena: int | None = None
    wheel: str | None = None  # the tflite-micro version of a `host@<version>` target
    # The probe's own name for the build (run.py --target), when the target's name adds the
    # release: `cortex-m7-reference@2b3f8d0` runs run.py --target cortex-m7-reference.
    probe_target: str | None = None

    @property
    def predicted(self) -> Build:
        """The build arenalens predicts this target with (ValueError when it has none yet)."""
        if self.build is None:
            raise ValueError(f"arenalens does not predict {self.name} yet")
        return self.build

    @property
    def plain(self) -> Build:
        """The same build with firmware's plain MicroAllocator."""
        return self.predicted.with_recording(False)

    @property
    def qemu(self) -> str:
        """The QEMU binary the target's probes run under."""
        return "qemu-system-riscv32" if self.probes == ESP_PROBES else "qemu-system-arm"


RELEASE_PREFIX = "host@"


def release_target(version: str) -> Target:
    """An older wheel as a measured target, `host@<version>`: predicted for the host build of
    that wheel's TFLM release."""
    return Target(
        RELEASE_PREFIX + version, host_build(wheel_release(version)), False, wheel=version
    )


# Cortex-M probes built at another TFLM commit than ../shared/tools/cortex-m's (its build kit,
# build/build.sh, with TFLM_COMMIT=<commit>): one folder per commit holding a copy of run.py and
# the ELF it names (tflm-cortex-m7-reference.elf). Their measurements are cached like every
# target's, so only remaking them needs the folder.
RELEASE_PROBES = Path(
    os.environ.get(
        "ARENALENS_CORTEX_M_RELEASE_PROBES",
        Path.home() / ".cache" / "arenalens" / "cortex-m-releases",
    )
)
DEVICE_RELEASE_SEPARATOR = "@"


def device_release_target(name: str) -> Target:
    """A Cortex-M probe build at an older TFLM commit, `<probe build>@<commit>`
    (`cortex-m7-reference@2b3f8d0`): predicted for that device build at that release."""
    base, _, commit = name.partition(DEVICE_RELEASE_SEPARATOR)
    if base not in TARGETS or TARGETS[base].probes != PROBES:
        raise KeyError(name)
    cpu, kernels = "-".join(base.split("-", 2)[:2]), base.split("-", 2)[2]
    build = device_build(cpu, kernels, recording=True, tflm=commit)
    return Target(name, build, True, RELEASE_PROBES / commit, probe_target=base)


def target_named(name: str) -> Target:
    """A target by name: one of TARGETS, `host@<wheel version>`, or `<Cortex-M probe
    build>@<TFLM commit>`."""
    if name.startswith(RELEASE_PREFIX):
        return release_target(name.removeprefix(RELEASE_PREFIX))
    if name not in TARGETS and DEVICE_RELEASE_SEPARATOR in name:
        return device_release_target(name)
    return TARGETS[name]


def _device(name: str) -> Target:
    cpu, kernels = name.split("-", 2)[:2], name.split("-", 2)[2]
    return Target(name, device_build("-".join(cpu), kernels, recording=True), True, PROBES)


def _esp(name: str, build: str) -> Target:
    return Target(
        name,
        build_named(build).with_recording(True),
        True,
        ESP_PROBES,
        recording_minimum=False,
        recording_run=name == ESP_FULL,
        roomy_arena=ESP_ROOMY_ARENA,
    )


# The ESP probes (../shared/tools/esp/README.md) and the build each stands for: esp-tflite-micro
# v1.3.8 with esp-nn 1.2.3 on the ESP32-S3 path, the generic optimised path (ESP32, S2, C3, C6),
# ANSI C and the ESP32-P4 path; the S3 with esp-nn v1.2.0 and v1.1.2; and TFLM's reference
# kernels on the same core (every ESP chip has the same ABI: the RISC-V probes stand for Xtensa).
ESP_BUILDS = {
    "esp32s3-esp-nn": "esp32s3/esp-nn",
    "esp-generic-opt": "esp32c3/esp-nn",
    "esp-ansi": "esp32/esp-nn-ansi",
    "esp32p4-esp-nn": "esp32p4/esp-nn",
    "esp32s3-esp-nn@v1.2.0": "esp32s3/esp-nn@1.2.0",
    "esp32s3-esp-nn@v1.1.2": "esp32s3/esp-nn@1.1.2",
    "rv32-reference": "esp32c3/reference",
}
ESP_TARGET_NAMES = tuple(ESP_BUILDS)

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
    **{name: _esp(name, build) for name, build in ESP_BUILDS.items()},
}


def predicted_targets() -> dict[str, Target]:
    """The targets arenalens predicts (the ones the coverage table and tests compare)."""
    return {name: target for name, target in TARGETS.items() if target.build is not None}
