"""Builds: (core, kernel library, TFLM release) → the value that says which device a figure is for.

The same model needs different arena bytes on different builds of TFLM: the x86-64 `tflite_micro`
wheel that `verify` runs, and the firmware a user flashes. What changes the bytes, each one field
of `Build`:

* the **core** (`cpu`) and its **ABI** (`abi`): pointer-sized fields halve on 32-bit cores, and
  enums are short under the Arm EABI;
* the **kernel library** (`kernels`): TFLM's reference kernels, or CMSIS-NN's
  (`kernels/cmsis_nn/` in TFLM), whose OpData and scratch buffers differ; its **release**
  (`kernels_release`: the CMSIS-NN commit; the reference kernels are TFLM's own), and whether the
  user or the board **named** it or it was only defaulted (`kernels_named`: a plan that holds on
  one library only may be written only for a library the user named);
* the library's **code path** (`isa`), which depends on the core's instruction set: none
  (Armv6-M, Armv7-M without DSP), the DSP extension, or MVE (Helium);
* the **TFLM release** (`tflm`): the tflite-micro sources built; struct members come and go
  between releases (`TflmRelease.features`);
* **compression** (`USE_TFLM_COMPRESSION`): extra OpData fields; the wheel is built with it,
  TFLM's default firmware build is not;
* the **allocator** (`recording`): firmware's `MicroAllocator`, or the `RecordingMicroAllocator`
  the wheel uses (it keeps records in the tail, and prints the categories).

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
output channels): see `runtimes/tflm/kernels/cmsis_nn/buffers.py`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from arenalens.builds.abi import ILP32, LP64, Abi
from arenalens.errors import UsageError


class KernelLibrary(enum.StrEnum):
    """A TFLM kernel library: which kernels' code (OpData, scratch, access order) a build runs."""

    REFERENCE = "reference"  # TFLM's own kernels (tensorflow/lite/micro/kernels/)
    CMSIS_NN = "cmsis-nn"  # OPTIMIZED_KERNEL_DIR=cmsis_nn: Arm's CMSIS-NN (Cortex-M)


REFERENCE = KernelLibrary.REFERENCE
CMSIS_NN = KernelLibrary.CMSIS_NN
KERNEL_LIBRARIES = tuple(str(library) for library in KernelLibrary)
KERNEL_LIBRARY_TITLES: Mapping[KernelLibrary, str] = MappingProxyType(
    {REFERENCE: "reference", CMSIS_NN: "CMSIS-NN"}
)

# The CMSIS-NN sources arenalens's CMSIS-NN rules are checked against: the commit the Cortex-M
# probes build (../shared/tools/cortex-m/build/build.sh).
CMSIS_NN_RELEASE = "4ab83cc3cc98"

# The instruction-set path CMSIS-NN compiles for (arm_nn_math_types.h: ARM_MATH_DSP from
# __ARM_FEATURE_DSP, ARM_MATH_MVEI from __ARM_FEATURE_MVE).
ISA_NONE = "none"
ISA_DSP = "dsp"
ISA_MVE = "mve"

NAMED_BY_USER = "user"
NAMED_BY_BOARD = "board"

# Build features, as struct members name them in `only_with` (runtimes/tflm/abi.py).
COMPRESSION = "compression"  # USE_TFLM_COMPRESSION
# The wheel is built from later tflite-micro sources than the Cortex-M builds (g8f6596d vs
# 90b983c2b3f1); struct members added in between are `only_with` this feature, which only the
# wheel's `TflmRelease` has.
WHEEL_SOURCES = "wheel-sources"


@dataclass(frozen=True, slots=True)
class TflmRelease:
    """One tflite-micro source tree a build compiles: which struct members and kernels exist."""

    name: str  # the spelling documents use: the commit, abbreviated as git describes it
    commit: str  # the tflite-micro commit, as far as it is known
    date: str  # ISO date of the sources (releases order by it)
    title: str
    # The `only_with` struct variants these sources have (`WHEEL_SOURCES`).
    features: frozenset[str] = frozenset()


# The `tflite-micro` PyPI wheel arenalens measures against: version 0.dev20261023182759, built
# from commit 8f6596d (its METADATA links the sources there); the date is the wheel's build date.
TFLM_WHEEL = TflmRelease(
    name="8f6596d",
    commit="8f6596d",
    date="2026-10-23",
    title="tflite-micro 0.dev20261023182759 (the PyPI wheel, g8f6596d)",
    features=frozenset({WHEEL_SOURCES}),
)
# The tflite-micro commit the Cortex-M probes build (../shared/tools/cortex-m/README.md).
TFLM_CORTEX_M_PROBES = TflmRelease(
    name="90b983c2b3f1",
    commit="90b983c2b3f1480642e040bbd2ddb37b998f3424",
    date="2026-08-20",
    title="tflite-micro 90b983c2b3f1 (2026-08-20, the Cortex-M probes' sources)",
)
TFLM_RELEASES: Mapping[str, TflmRelease] = MappingProxyType(
    {release.name: release for release in (TFLM_CORTEX_M_PROBES, TFLM_WHEEL)}
)


@dataclass(frozen=True, slots=True)
class Cpu:
    """A core as far as arena bytes care: its ABI and the kernel code path it takes."""

    name: str
    title: str
    isa: str  # the CMSIS-NN code path arm-none-eabi-gcc gives it by default
    abi: Abi = ILP32


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
    kernels: KernelLibrary
    isa: str  # ISA_NONE | ISA_DSP | ISA_MVE: the kernel library's code path
    compression: bool  # USE_TFLM_COMPRESSION (the wheel)
    recording: bool  # RecordingMicroAllocator (wheel, probes) vs MicroAllocator (firmware)
    tflm: TflmRelease
    cpu: str | None = None  # None: the x86-64 wheel
    kernels_release: str = ""  # the library's own release ("": the reference kernels, TFLM's)
    # Who named the kernel library: NAMED_BY_USER (--kernels, "cortex-m7/cmsis-nn"),
    # NAMED_BY_BOARD (a --target preset's), or None when it is only the default.
    kernels_named_by: str | None = None
    # The `only_with` struct variants this build compiles: compression and the release's.
    features: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        own = frozenset({COMPRESSION}) if self.compression else frozenset()
        object.__setattr__(self, "features", own | self.tflm.features)

    @property
    def kernels_named(self) -> bool:
        """True when the user or a board named the kernel library (a plan that holds on that
        library only may be written for it); False when it is only the default."""
        return self.kernels_named_by is not None

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
    compression=True,
    recording=True,
    tflm=TFLM_WHEEL,
)
# What documents say the TFLM figures are for when no device is chosen.
HOST_DEVICE = "64-bit host build (tflite-micro wheel)"


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


def kernel_library_named(text: str) -> KernelLibrary:
    """A kernel library as users type it ('cmsis-nn', 'CMSIS_NN', 'cmsisnn', 'reference') → the
    library; UsageError listing the known ones."""
    key = text.strip().lower().replace("_", "-").replace("cmsisnn", "cmsis-nn")
    if key not in KERNEL_LIBRARIES:
        raise UsageError(f"unknown kernel library '{text}' (known: {', '.join(KERNEL_LIBRARIES)})")
    return KernelLibrary(key)


def device_build(
    cpu: str,
    kernels: str | None = None,
    *,
    recording: bool = False,
    named_by: str | None = NAMED_BY_USER,
) -> Build:
    """(core, kernel library) → the firmware build: the core's ABI, TFLM's default make flags (no
    compression) at the Cortex-M probes' TFLM release, the plain MicroAllocator unless
    `recording`. `kernels` given is named by `named_by` (the user unless a board preset says
    it); without it, the reference kernels, not named."""
    core = cpu_named(cpu)
    library = REFERENCE if kernels is None else kernel_library_named(kernels)
    return Build(
        name=f"{core.name}/{library}",
        title=f"{core.title}, {KERNEL_LIBRARY_TITLES[library]} kernels",
        abi=core.abi,
        kernels=library,
        isa=core.isa if library == CMSIS_NN else ISA_NONE,
        compression=False,
        recording=recording,
        tflm=TFLM_CORTEX_M_PROBES,
        cpu=core.name,
        kernels_release=CMSIS_NN_RELEASE if library == CMSIS_NN else "",
        kernels_named_by=None if kernels is None else named_by,
    )


def select_build(cpu: str | None, kernels: str | None) -> Build:
    """The --cpu / --kernels options → a build; neither → the host wheel."""
    if cpu is None:
        if kernels is not None and kernel_library_named(kernels) != REFERENCE:
            raise UsageError("--kernels needs --cpu (CMSIS-NN kernels run on a Cortex-M core)")
        return HOST
    return device_build(cpu, kernels)


def build_named(name: str) -> Build:
    """'host', 'cortex-m7' or 'cortex-m7/cmsis-nn' (as `Build.name` spells it) → the build; a
    library in the name counts as named."""
    if name.strip().lower() == HOST.name:
        return HOST
    cpu, _, kernels = name.partition("/")
    return device_build(cpu, kernels or None)


def as_build(build: Build | str | None) -> Build:
    """A build, a build name, or None (the host wheel) → the build."""
    if build is None:
        return HOST
    if isinstance(build, Build):
        return build
    return build_named(build)


def overlap_kernels(build: Build) -> KernelLibrary:
    """The kernel library whose access order an overlap planned for this build must respect:
    the library the build runs.

    The one place that decides it: every caller (`analyze(overlap=True)`, `compare`, `optimize`,
    `report --overlap`) asks here."""
    return build.kernels


def allocator_name(build: Build) -> str:
    """The C++ class that allocates the arena on this build."""
    return "RecordingMicroAllocator" if build.recording else "MicroAllocator"


def build_title(build: Build) -> str:
    """The build in words, as every document names what a figure is for."""
    if build == HOST:
        return HOST_DEVICE
    return f"{build.title}; {build.abi.name}, {allocator_name(build)}"


def build_summary(build: Build) -> dict[str, Any]:
    """A build → what documents say about it (JSON-ready)."""
    return {
        "name": build.name,
        "title": build.title,
        "cpu": build.cpu,
        "kernels": str(build.kernels),
        "isa": build.isa,
        "abi": build.abi.name,
        "allocator": allocator_name(build),
        "compression": build.compression,
        "kernels_release": build.kernels_release or None,
        "kernels_named_by": build.kernels_named_by,
        "tflm": {
            "release": build.tflm.name,
            "commit": build.tflm.commit,
            "date": build.tflm.date,
            "title": build.tflm.title,
        },
    }


def build_flags(summary: Mapping[str, Any]) -> str:
    """A build summary (`build_summary`) → the options that select it again, for the commands
    a report suggests: ' --cpu cortex-m4 --kernels cmsis-nn', or '' for the host wheel."""
    cpu = summary.get("cpu")
    if not cpu:
        return ""
    return f" --cpu {cpu} --kernels {summary.get('kernels') or REFERENCE}"
