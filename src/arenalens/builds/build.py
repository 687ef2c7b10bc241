"""TFLM builds: (CPU, kernel library) → the build whose memory is predicted.

The same model needs different arena bytes on different builds of TFLM: the x86-64 `tflite_micro`
wheel that `verify` runs, and the firmware a user flashes. What changes the bytes:

* the **ABI** (`abi`): pointer-sized fields halve on 32-bit cores;
* the **kernel library**: TFLM's reference kernels, or CMSIS-NN's (`kernels/cmsis_nn/` in TFLM),
  whose OpData and scratch buffers differ, and whose code path (and scratch sizes) depends on the
  core's instruction set: none (Armv6-M, Armv7-M without DSP), the DSP extension, or MVE (Helium);
* **compression** (`USE_TFLM_COMPRESSION`): extra OpData fields; the wheel is built with it,
  TFLM's default firmware build is not;
* the **allocator**: firmware's `MicroAllocator`, or the `RecordingMicroAllocator` the wheel uses
  (it keeps records in the tail, and prints the categories).

**CMSIS-NN's code path is the compiler's, not the core name's.** CMSIS-NN picks its kernels (and
their scratch sizes) from the compiler's predefined macros (`Include/arm_nn_math_types.h`):
MVE when `__ARM_FEATURE_MVE` is set, else DSP when `__ARM_FEATURE_DSP` is, else pure C; a core with
both (Cortex-M55, M85) takes MVE. The `CPUS` table gives each core's default with
arm-none-eabi-gcc, what TFLM's makefile uses: M0+ and M3 pure C; M4, M7, M33 DSP; M55, M85 MVE.
Flags change it: GCC turns MVE off under `-mfloat-abi=soft`, so a **Cortex-M55 built with
`-mfloat-abi=soft` runs the DSP path** (TFLM's makefile builds M55 with `softfp` for that reason;
`cortex-m55+nofp` with `softfp` keeps integer MVE); `cortex-m33+nodsp` and `cortex-m55+nodsp+nofp`
run pure C. Pick the core whose path your build gets (e.g. `cortex-m7` for an M55 built
soft-float). Sizes assume GCC; armclang builds differ in two places (a DSP 1x1 convolution buffer
of 4·channels bytes, and MVE depthwise convolutions with one input channel converted only above 8
output channels): see `kernels/cmsis_nn/buffers.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from arenalens.builds.abi import ILP32, LP64, Abi
from arenalens.errors import UsageError

REFERENCE = "reference"
CMSIS_NN = "cmsis-nn"
KERNEL_LIBRARIES = (REFERENCE, CMSIS_NN)

# The instruction-set path CMSIS-NN compiles for (arm_nn_math_types.h: ARM_MATH_DSP from
# __ARM_FEATURE_DSP, ARM_MATH_MVEI from __ARM_FEATURE_MVE).
ISA_NONE = "none"
ISA_DSP = "dsp"
ISA_MVE = "mve"

COMPRESSION = "compression"
# The wheel is built from later tflite-micro sources than the Cortex-M builds (g8f6596d vs
# 90b983c2b3f1); struct members added in between are `only_with` this feature.
WHEEL_SOURCES = "wheel-sources"


@dataclass(frozen=True, slots=True)
class Cpu:
    """A Cortex-M core as far as arena bytes care: its instruction-set extensions."""

    name: str
    title: str
    isa: str


CPUS: Mapping[str, Cpu] = MappingProxyType(
    {
        cpu.name: cpu
        for cpu in (
            Cpu("cortex-m0plus", "Cortex-M0+ (Armv6-M)", ISA_NONE),
            Cpu("cortex-m3", "Cortex-M3 (Armv7-M, no DSP)", ISA_NONE),
            Cpu("cortex-m4", "Cortex-M4 (Armv7E-M, DSP)", ISA_DSP),
            Cpu("cortex-m7", "Cortex-M7 (Armv7E-M, DSP)", ISA_DSP),
            Cpu("cortex-m33", "Cortex-M33 (Armv8-M Mainline, DSP)", ISA_DSP),
            Cpu("cortex-m55", "Cortex-M55 (Armv8.1-M, MVE/Helium)", ISA_MVE),
            Cpu("cortex-m85", "Cortex-M85 (Armv8.1-M, MVE/Helium)", ISA_MVE),
        )
    }
)


@dataclass(frozen=True, slots=True)
class Build:
    """One TFLM build: what decides every struct size, kernel buffer and scratch request."""

    name: str  # "host" or "<cpu>/<kernels>"
    title: str
    abi: Abi
    kernels: str  # REFERENCE | CMSIS_NN
    isa: str  # ISA_NONE | ISA_DSP | ISA_MVE
    features: frozenset[str]  # {"compression"} on the wheel
    recording: bool  # RecordingMicroAllocator (wheel, probes) vs MicroAllocator (firmware)
    cpu: str | None = None

    @property
    def pointer_bytes(self) -> int:
        """sizeof(void*) on this build."""
        return self.abi.pointer_bytes

    @property
    def is_host(self) -> bool:
        """True for the x86-64 wheel."""
        return self.cpu is None

    def with_recording(self, recording: bool) -> Build:
        """The same build with the recording (or plain) allocator."""
        return replace(self, recording=recording)


HOST = Build(
    name="host",
    title="x86-64 host (tflite_micro wheel: reference kernels, compression, recording allocator)",
    abi=LP64,
    kernels=REFERENCE,
    isa=ISA_NONE,
    features=frozenset({COMPRESSION, WHEEL_SOURCES}),
    recording=True,
)


def cpu_named(text: str) -> Cpu:
    """A core as users type it ('cortex-m7', 'Cortex-M7', 'm7', 'cortex-m0+') → Cpu; UsageError
    listing the known cores."""
    key = text.strip().lower().replace("_", "-").replace(" ", "-").replace("+", "plus")
    if not key.startswith("cortex-"):
        key = "cortex-" + key
    core = CPUS.get(key)
    if core is None:
        raise UsageError(f"unknown CPU '{text}' (known: {', '.join(CPUS)})")
    return core


def kernel_library_named(text: str) -> str:
    """A kernel library as users type it ('cmsis-nn', 'CMSIS_NN', 'cmsisnn', 'reference') → its
    name; UsageError listing the known ones."""
    key = text.strip().lower().replace("_", "-").replace("cmsisnn", "cmsis-nn")
    if key not in KERNEL_LIBRARIES:
        raise UsageError(f"unknown kernel library '{text}' (known: {', '.join(KERNEL_LIBRARIES)})")
    return key


def device_build(cpu: str, kernels: str = REFERENCE, *, recording: bool = False) -> Build:
    """(Cortex-M core, kernel library) → the firmware build: ILP32, TFLM's default make flags
    (no compression), the plain MicroAllocator unless `recording`."""
    core = cpu_named(cpu)
    library_key = kernel_library_named(kernels)
    library = "CMSIS-NN" if library_key == CMSIS_NN else "reference"
    isa = core.isa if library_key == CMSIS_NN else ISA_NONE
    return Build(
        name=f"{core.name}/{library_key}",
        title=f"{core.title}, {library} kernels",
        abi=ILP32,
        kernels=library_key,
        isa=isa,
        features=frozenset(),
        recording=recording,
        cpu=core.name,
    )


def select_build(cpu: str | None, kernels: str | None) -> Build:
    """The --cpu / --kernels options → a build; neither → the host wheel."""
    if cpu is None:
        if kernels is not None and kernel_library_named(kernels) != REFERENCE:
            raise UsageError("--kernels needs --cpu (CMSIS-NN kernels run on a Cortex-M core)")
        return HOST
    return device_build(cpu, kernels or REFERENCE)


def build_named(name: str) -> Build:
    """'host', 'cortex-m7' or 'cortex-m7/cmsis-nn' (as `Build.name` spells it) → the build."""
    if name.strip().lower() == HOST.name:
        return HOST
    cpu, _, kernels = name.partition("/")
    return device_build(cpu, kernels or REFERENCE)


def as_build(build: Build | str | None) -> Build:
    """A build, a build name, or None (the host wheel) → the build."""
    if build is None:
        return HOST
    if isinstance(build, Build):
        return build
    return build_named(build)


def allocator_name(build: Build) -> str:
    """The C++ class that allocates the arena on this build."""
    return "RecordingMicroAllocator" if build.recording else "MicroAllocator"


def build_summary(build: Build) -> dict[str, Any]:
    """A build → what documents say about it (JSON-ready)."""
    return {
        "name": build.name,
        "title": build.title,
        "cpu": build.cpu,
        "kernels": build.kernels,
        "isa": build.isa,
        "abi": build.abi.name,
        "allocator": allocator_name(build),
        "compression": COMPRESSION in build.features,
    }


def build_flags(summary: Mapping[str, Any]) -> str:
    """A build summary (`build_summary`) → the options that select it again, for the commands
    a report suggests: ' --cpu cortex-m4 --kernels cmsis-nn', or '' for the host wheel."""
    cpu = summary.get("cpu")
    if not cpu:
        return ""
    return f" --cpu {cpu} --kernels {summary.get('kernels') or REFERENCE}"
