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
* the **TFLM release** (`tflm`, builds/tflm.py): the tflite-micro sources built, a point in
  TFLM's history; struct members, kernel checks and registrations come and go between releases
  (the changes it has: `TflmRelease.features`);
* **compression** (`USE_TFLM_COMPRESSION`): extra OpData fields; the wheel is built with it
  since 2025-08-04, TFLM's default firmware build is not;
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
from arenalens.builds.tflm import (
    CHANGES,
    TFLM_CORTEX_M_PROBES,
    TFLM_WHEEL,
    WHEEL_COMPRESSION,
    WHEEL_OPT_MODE,
    TflmRelease,
    tflm_release,
)
from arenalens.errors import UnplacedValueError, UsageError


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
# The TFLM releases whose CMSIS-NN builds those rules describe: TFLM pins CMSIS-NN 4ab83cc from
# acc13e42e (2026-06-24) on, and its kernels/cmsis_nn/ glue last changed before the probes'
# commit in bc0e8c658 (2026-07-08); past the probes' commit (90b983c2b, the newest TFLM sources
# read here) neither is known.
CMSIS_NN_TFLM_FROM = "bc0e8c658b7925c0cad3313027135b4485ccb329"

# The instruction-set path CMSIS-NN compiles for (arm_nn_math_types.h: ARM_MATH_DSP from
# __ARM_FEATURE_DSP, ARM_MATH_MVEI from __ARM_FEATURE_MVE).
ISA_NONE = "none"
ISA_DSP = "dsp"
ISA_MVE = "mve"

NAMED_BY_USER = "user"
NAMED_BY_BOARD = "board"

# Build features, as struct members name them in `only_with` (runtimes/tflm/abi.py): this one,
# and the keys of the TFLM changes a release has (builds/tflm.py).
COMPRESSION = "compression"  # USE_TFLM_COMPRESSION
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
    # TFLITE_DCHECKs are compiled in (no NDEBUG): TFLM's Makefile default build type, which
    # firmware and the Cortex-M probes use; the wheel is built with NDEBUG from f8c117b on (a
    # failing DCHECK is skipped there, measured: FULLY_CONNECTED with a filter zero point of 1
    # sets up on 0.dev20261006214927 and aborts on 0.dev20260203175027).
    dchecks: bool = True
    # The `only_with` struct variants this build compiles: compression and the release's.
    features: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        own = frozenset({COMPRESSION}) if self.compression else frozenset()
        object.__setattr__(self, "features", own | self.tflm.features)

    def has(self, change: str) -> bool:
        """Does this build have a change of TFLM's history (builds/tflm.py `HISTORY`)? A
        source change when its release does; a change of how the wheel is built on the host
        only."""
        if CHANGES[change].wheel_only:
            return self.is_host and self.tflm.has(change)
        return change in self.tflm.features

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

    def at_release(self, tflm: TflmRelease) -> Build:
        """The same build compiled from another TFLM release (the wheel of that release, for
        the host: with compression from when the wheel was built so)."""
        if self.is_host:
            return host_build(tflm)
        if self.kernels == CMSIS_NN:
            _check_cmsis_nn_release(tflm)
        base = self.name.partition(RELEASE_SEPARATOR)[0]
        name = base if tflm == TFLM_CORTEX_M_PROBES else f"{base}{RELEASE_SEPARATOR}{tflm.name}"
        return replace(self, name=name, tflm=tflm)


# A build name with a release: "host@2b3f8d0", "cortex-m7/cmsis-nn@2025-08".
RELEASE_SEPARATOR = "@"


def host_build(tflm: TflmRelease = TFLM_WHEEL) -> Build:
    """The x86-64 `tflite-micro` wheel of a TFLM release (reference kernels, the recording
    allocator; compression from 2025-08-04 on, when the wheel started to be built with it)."""
    compression = tflm.has(WHEEL_COMPRESSION)
    return Build(
        name="host" if tflm == TFLM_WHEEL else f"host{RELEASE_SEPARATOR}{tflm.name}",
        title="x86-64 host (tflite_micro wheel: reference kernels, "
        f"{'compression' if compression else 'no compression'}, recording allocator)",
        abi=LP64,
        kernels=REFERENCE,
        isa=ISA_NONE,
        compression=compression,
        recording=True,
        tflm=tflm,
        # Wheels before f8c117b were built in bazel's fastbuild mode, without NDEBUG.
        dchecks=not tflm.has(WHEEL_OPT_MODE),
    )


HOST = host_build()


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
    tflm: TflmRelease | str | None = None,
) -> Build:
    """(core, kernel library) → the firmware build: the core's ABI, TFLM's default make flags (no
    compression) at a TFLM release (`tflm`: a release, what --tflm takes, or None for the
    Cortex-M probes' commit), the plain MicroAllocator unless `recording`. `kernels` given is
    named by `named_by` (the user unless a board preset says it); without it, the reference
    kernels, not named."""
    core = cpu_named(cpu)
    library = REFERENCE if kernels is None else kernel_library_named(kernels)
    build = Build(
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
        dchecks=True,
    )
    return build if tflm is None else build.at_release(as_release(tflm))


def _check_cmsis_nn_release(tflm: TflmRelease) -> None:
    """UsageError unless arenalens's CMSIS-NN rules describe a CMSIS-NN build of this release."""
    first = tflm_release(CMSIS_NN_TFLM_FROM)
    if not first.time <= tflm.time <= TFLM_CORTEX_M_PROBES.time:
        raise UnplacedValueError(
            f"CMSIS-NN builds are modelled for TFLM {first.name} ({first.date}) to "
            f"{TFLM_CORTEX_M_PROBES.name} ({TFLM_CORTEX_M_PROBES.date}), which pin CMSIS-NN "
            f"{CMSIS_NN_RELEASE}; {tflm.title} is not",
            (
                ("--kernels", "reference", f"TFLM's reference kernels at {tflm.name}"),
                ("--tflm", TFLM_CORTEX_M_PROBES.name, f"CMSIS-NN {CMSIS_NN_RELEASE}"),
            ),
            ask="run",
        )


def as_release(tflm: TflmRelease | str) -> TflmRelease:
    """A release, or what --tflm takes (a wheel version, a date, a commit) → the release."""
    return tflm if isinstance(tflm, TflmRelease) else tflm_release(tflm)


def select_build(cpu: str | None, kernels: str | None, tflm: str | None = None) -> Build:
    """The --cpu / --kernels / --tflm options → a build; no core → the host wheel (of the
    --tflm release)."""
    if cpu is None:
        if kernels is not None and kernel_library_named(kernels) != REFERENCE:
            raise UsageError("--kernels needs --cpu (CMSIS-NN kernels run on a Cortex-M core)")
        return HOST if tflm is None else host_build(tflm_release(tflm))
    return device_build(cpu, kernels, tflm=tflm)


def build_named(name: str) -> Build:
    """'host', 'cortex-m7' or 'cortex-m7/cmsis-nn' (as `Build.name` spells it), each optionally
    with '@' and a TFLM release as --tflm takes it ('host@2025-08') → the build; a library in
    the name counts as named."""
    base, _, tflm = name.strip().partition(RELEASE_SEPARATOR)
    if base.lower() == HOST.name:
        return HOST if not tflm else host_build(tflm_release(tflm))
    cpu, _, kernels = base.partition("/")
    return device_build(cpu, kernels or None, tflm=tflm or None)


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


def build_title(build: Build) -> str:
    """The build in words, as every document names what a figure is for: the device, its kernel
    library and that library's release, and the TFLM release."""
    if build.is_host:
        return f"64-bit host build, {build.tflm.title}"
    kernels = f"; CMSIS-NN {build.kernels_release}" if build.kernels_release else ""
    return f"{build.title}; {build.abi.name}, {allocator_name(build)}{kernels}; {build.tflm.title}"


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
            "commit": build.tflm.commit or None,
            "date": build.tflm.date,
            "wheel": build.tflm.wheel or None,
            "title": build.tflm.title,
        },
    }


def build_flags(summary: Mapping[str, Any]) -> str:
    """A build summary (`build_summary`) → the options that select it again, for the commands
    a report suggests: ' --cpu cortex-m4 --kernels cmsis-nn', '' for today's host wheel, with
    ' --tflm RELEASE' for another TFLM release than the build's default."""
    cpu = summary.get("cpu")
    release = release_flag(summary)
    if not cpu:
        return release
    return f" --cpu {cpu} --kernels {summary.get('kernels') or REFERENCE}{release}"


def overlap_flags(summary: Mapping[str, Any]) -> str:
    """The options of an `optimize --overlap` command for this build: `build_flags`, but
    --kernels only when the user named the library (`Build.kernels_named_by`); otherwise the
    overlaps must hold on every library the core may run, so the command names none."""
    if summary.get("kernels_named_by") == NAMED_BY_USER:
        return build_flags(summary)
    cpu = summary.get("cpu")
    return (f" --cpu {cpu}" if cpu else "") + release_flag(summary)


def release_flag(summary: Mapping[str, Any]) -> str:
    """' --tflm RELEASE' when a build summary's TFLM release is not its build's default (so a
    suggested command, with --target too, stays at the release the user asked for), else ''."""
    tflm = summary.get("tflm") or {}
    default = (TFLM_CORTEX_M_PROBES if summary.get("cpu") else TFLM_WHEEL).name
    return "" if tflm.get("release", default) == default else f" --tflm {_tflm_flag(tflm)}"


def _tflm_flag(tflm: Mapping[str, Any]) -> str:
    """The --tflm value that names a summarised release again: its wheel, else its short commit
    (the whole hash when the short one is ambiguous), else its date."""
    if tflm.get("wheel"):
        return str(tflm["wheel"])
    commit = str(tflm.get("commit") or "")
    if commit:
        try:
            return commit[:7] if tflm_release(commit[:7]).commit == commit else commit
        except UsageError:
            return commit
    return str(tflm.get("release"))
