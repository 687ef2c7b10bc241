"""Builds: (core, kernel library, TFLM release) → the value that says which device a figure is for.

The same model needs different arena bytes on different builds of TFLM: the x86-64 `tflite_micro`
wheel that `verify` runs, and the firmware a user flashes. What changes the bytes, each one field
of `Build`:

* the **core** (`cpu`) and its **ABI** (`abi`): pointer-sized fields halve on 32-bit cores, and
  enums are short under the Arm EABI;
* the **kernel library** (`kernels`): TFLM's reference kernels, CMSIS-NN's (`kernels/cmsis_nn/`
  in TFLM, Cortex-M) or ESP-NN's (`kernels/esp_nn/` in Espressif's esp-tflite-micro, the ESP32
  family), whose OpData and scratch buffers differ; its **release** (`kernels_release`: the
  CMSIS-NN commit, the esp-nn version; the reference kernels are TFLM's own), and whether the
  user or the board **named** it or it was only defaulted (`kernels_named`: a plan that holds on
  one library only may be written only for a library the user named);
* the library's **code path** (`isa`), which depends on the core: for CMSIS-NN its instruction
  set, none (Armv6-M, Armv7-M without DSP), the DSP extension or MVE (Helium); for ESP-NN the
  chip's own functions (ESP32-S3, ESP32-P4), the generic optimised C (every other chip), or ANSI C
  (`CONFIG_NN_ANSI_C`, any chip);
* the **TFLM release** (`tflm`, builds/tflm.py): the tflite-micro sources built, a point in
  TFLM's history; struct members, kernel checks and registrations come and go between releases
  (the changes it has: `TflmRelease.features`);
* **compression** (`USE_TFLM_COMPRESSION`): extra OpData fields; the wheel is built with it
  since 2025-08-04, TFLM's default firmware build is not;
* the **allocator** (`recording`): firmware's `MicroAllocator`, or the `RecordingMicroAllocator`
  the wheel uses (it keeps records in the tail, and prints the categories);
* the **NPU** (`npu`, builds/npu.py): an Arm Ethos-U configuration the firmware drives
  (`CO_PROCESSOR=ethos_u`), which registers the `ethos-u` operator Vela writes; None without one.

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

**ESP32 chips build Espressif's esp-tflite-micro** (the ESP-IDF component), which always compiles
its ESP-NN kernels (`CMakeLists.txt` removes TFLM's seven and globs `kernels/esp_nn/`): an ESP
chip's build takes ESP-NN unless told `--kernels reference`, at esp-tflite-micro v1.3.8's TFLM
(096563546) and the newest esp-nn its `idf_component.yml` (`>= 1.1.1`) resolves to, 1.2.3;
`--kernels esp-nn@1.2.0` names a pinned one (`dependencies.lock`), `esp-nn-ansi` the ANSI C
setting. ESP-NN builds exist at that TFLM release only (its kernel files are v1.3.8's); the
reference kernels on an ESP chip at any covered release. docs/esp-nn.md has the sources.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from arenalens.builds.abi import ILP32, ILP32_INT_ENUMS, LP64, Abi
from arenalens.builds.npu import Npu, npu_named
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
    ESP_NN = "esp-nn"  # esp-tflite-micro's kernels/esp_nn/ over Espressif's esp-nn (ESP32 family)


REFERENCE = KernelLibrary.REFERENCE
CMSIS_NN = KernelLibrary.CMSIS_NN
ESP_NN = KernelLibrary.ESP_NN
KERNEL_LIBRARIES = tuple(str(library) for library in KernelLibrary)
KERNEL_LIBRARY_TITLES: Mapping[KernelLibrary, str] = MappingProxyType(
    {REFERENCE: "reference", CMSIS_NN: "CMSIS-NN", ESP_NN: "ESP-NN"}
)
# How a library's own release is named under a figure: 'CMSIS-NN 4ab83cc3cc98', 'esp-nn 1.2.3'.
KERNEL_RELEASE_TITLES: Mapping[KernelLibrary, str] = MappingProxyType(
    {CMSIS_NN: "CMSIS-NN", ESP_NN: "esp-nn"}
)
# What --kernels takes besides the library names: ESP-NN built with CONFIG_NN_ANSI_C (its ANSI C
# functions on any chip), and a release after '@' (esp-nn only: `esp-nn@1.2.0`).
ESP_NN_ANSI = "esp-nn-ansi"
KERNELS_RELEASE_SEPARATOR = "@"

# The CMSIS-NN sources arenalens's CMSIS-NN rules are checked against: the commit the Cortex-M
# probes build (../shared/tools/cortex-m/build/build.sh).
CMSIS_NN_RELEASE = "4ab83cc3cc98"
# The TFLM releases whose CMSIS-NN builds those rules describe: TFLM pins CMSIS-NN 4ab83cc from
# acc13e42e (2026-06-24) on, and its kernels/cmsis_nn/ glue last changed before the probes'
# commit in bc0e8c658 (2026-07-08); past the probes' commit (90b983c2b, the newest TFLM sources
# read here) neither is known.
CMSIS_NN_TFLM_FROM = "bc0e8c658b7925c0cad3313027135b4485ccb329"

# The esp-nn releases whose scratch-size functions the ESP-NN rules model
# (runtimes/tflm/kernels/esp_nn/buffers.py), oldest first, and the default: the newest, which
# esp-tflite-micro v1.3.8's `espressif/esp-nn >= 1.1.1` resolves to without a lock file.
ESP_NN_RELEASES = ("1.1.1", "1.1.2", "1.2.0", "1.2.1", "1.2.2", "1.2.3")
ESP_NN_RELEASE = ESP_NN_RELEASES[-1]
_ESP_NN_RELEASE_SPELLING = re.compile(r"^v?\d+\.\d+\.\d+$")

# The instruction-set path CMSIS-NN compiles for (arm_nn_math_types.h: ARM_MATH_DSP from
# __ARM_FEATURE_DSP, ARM_MATH_MVEI from __ARM_FEATURE_MVE).
ISA_NONE = "none"
ISA_DSP = "dsp"
ISA_MVE = "mve"
# The functions esp-nn compiles (include/esp_nn.h): with CONFIG_NN_OPTIMIZED (the default) the
# ESP32-S3's and ESP32-P4's own, the generic optimised C on every other chip; with
# CONFIG_NN_ANSI_C the ANSI C ones on any chip.
ISA_ESP32S3 = "esp32s3"
ISA_ESP32P4 = "esp32p4"
ISA_ESP_GENERIC = "esp-generic"
ISA_ESP_ANSI = "esp-ansi"
ISA_TITLES: Mapping[str, str] = MappingProxyType(
    {
        ISA_NONE: "plain C",
        ISA_DSP: "DSP",
        ISA_MVE: "MVE",
        ISA_ESP32S3: "ESP32-S3 path",
        ISA_ESP32P4: "ESP32-P4 path",
        ISA_ESP_GENERIC: "generic optimised C",
        ISA_ESP_ANSI: "ANSI C",
    }
)

NAMED_BY_USER = "user"
NAMED_BY_BOARD = "board"

# Build features, as struct members name them in `only_with` (runtimes/tflm/abi.py): this one,
# and the keys of the TFLM changes a release has (builds/tflm.py).
COMPRESSION = "compression"  # USE_TFLM_COMPRESSION
# The tflite-micro sources Espressif's esp-tflite-micro v1.3.8 ships (docs/esp-nn.md: every file
# outside kernels/esp_nn/ is byte-identical to this commit); what an ESP chip's build compiles.
TFLM_ESP_TFLITE_MICRO = tflm_release("096563546742ba81adb6f012ab718d196a48e02d")
TFLM_RELEASES: Mapping[str, TflmRelease] = MappingProxyType(
    {release.name: release for release in (TFLM_ESP_TFLITE_MICRO, TFLM_CORTEX_M_PROBES, TFLM_WHEEL)}
)

# How each core family's firmware is built, as the layout's assumptions name it.
CORTEX_M_TOOLCHAIN = (
    "TFLM's Makefile build for Cortex-M (TARGET=cortex_m_generic, arm-none-eabi-gcc: "
    f"{ILP32.name}, short enums)"
)
ESP_TOOLCHAIN = (
    "esp-tflite-micro v1.3.8 as an ESP-IDF component (xtensa-esp-elf-gcc / riscv32-esp-elf-gcc: "
    "ILP32, int-sized enums; ESP_NN, TF_LITE_STATIC_MEMORY)"
)


@dataclass(frozen=True, slots=True)
class Cpu:
    """A core (or chip) as far as arena bytes care: its ABI, the kernel libraries its firmware
    can link and the code path its vendor library takes there, and the TFLM its SDK builds."""

    name: str
    title: str
    # The code path of its vendor library: CMSIS-NN's with arm-none-eabi-gcc's default flags, or
    # the esp-nn functions the chip compiles.
    isa: str
    abi: Abi = ILP32
    libraries: frozenset[KernelLibrary] = frozenset({REFERENCE, CMSIS_NN})
    default_kernels: KernelLibrary = REFERENCE  # without --kernels
    tflm: TflmRelease = TFLM_CORTEX_M_PROBES  # without --tflm
    toolchain: str = CORTEX_M_TOOLCHAIN


def _esp(name: str, title: str, isa: str) -> Cpu:
    """An ESP32-family chip: esp-tflite-micro, which links ESP-NN unless its kernels are
    swapped for TFLM's reference ones."""
    return Cpu(
        name,
        title,
        isa,
        ILP32_INT_ENUMS,
        libraries=frozenset({REFERENCE, ESP_NN}),
        default_kernels=ESP_NN,
        tflm=TFLM_ESP_TFLITE_MICRO,
        toolchain=ESP_TOOLCHAIN,
    )


_CORTEX_M_LIBRARIES = frozenset({REFERENCE, CMSIS_NN})
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
            _esp("esp32", "ESP32 (Xtensa LX6)", ISA_ESP_GENERIC),
            _esp("esp32s2", "ESP32-S2 (Xtensa LX7)", ISA_ESP_GENERIC),
            _esp("esp32s3", "ESP32-S3 (Xtensa LX7)", ISA_ESP32S3),
            _esp("esp32c3", "ESP32-C3 (RISC-V)", ISA_ESP_GENERIC),
            _esp("esp32c6", "ESP32-C6 (RISC-V)", ISA_ESP_GENERIC),
            _esp("esp32p4", "ESP32-P4 (RISC-V)", ISA_ESP32P4),
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
    isa: str  # ISA_*: the kernel library's code path (ISA_NONE for the reference kernels)
    compression: bool  # USE_TFLM_COMPRESSION (the wheel)
    recording: bool  # RecordingMicroAllocator (wheel, probes) vs MicroAllocator (firmware)
    tflm: TflmRelease
    cpu: str | None = None  # None: the x86-64 wheel
    # The library's own release ("": the reference kernels, TFLM's): the CMSIS-NN commit, the
    # esp-nn version.
    kernels_release: str = ""
    # Who named the kernel library: NAMED_BY_USER (--kernels, "cortex-m7/cmsis-nn"),
    # NAMED_BY_BOARD (a --target preset's), or None when it is only the default.
    kernels_named_by: str | None = None
    # TFLITE_DCHECKs are compiled in (no NDEBUG): TFLM's Makefile default build type, which
    # firmware and the Cortex-M probes use; the wheel is built with NDEBUG from f8c117b on (a
    # failing DCHECK is skipped there, measured: FULLY_CONNECTED with a filter zero point of 1
    # sets up on 0.dev20261006214927 and aborts on 0.dev20260203175027).
    dchecks: bool = True
    # The NPU the firmware drives (TFLM built with CO_PROCESSOR=ethos_u); None: no NPU.
    npu: Npu | None = None
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
        if self.kernels == ESP_NN:
            _check_esp_nn_release(tflm)
        base = split_release(self.name)[0]
        name = (
            base if tflm == default_release(self.cpu) else f"{base}{RELEASE_SEPARATOR}{tflm.name}"
        )
        return replace(self, name=name, tflm=tflm)


def with_npu(build: Build, npu: Npu | str) -> Build:
    """The same firmware build driving an NPU (--npu on a board preset's build)."""
    if build.cpu is None:
        raise UsageError(
            f"--npu {npu if isinstance(npu, str) else npu.name} needs --cpu: the Cortex-M core "
            "whose firmware drives the NPU (e.g. --cpu cortex-m55)"
        )
    base, release = split_release(build.name)
    base = base.partition(NPU_SEPARATOR)[0]
    kernels = base.partition("/")[2]
    found = device_build(
        build.cpu, kernels, recording=build.recording, named_by=build.kernels_named_by, npu=npu
    )
    found = replace(found, kernels_named_by=build.kernels_named_by)
    return found if not release else found.at_release(build.tflm)


def default_release(cpu: str | None) -> TflmRelease:
    """The TFLM release a build of this core compiles unless --tflm says otherwise: its SDK's
    (the Cortex-M probes' commit, esp-tflite-micro v1.3.8's); the newest wheel's for the host."""
    if cpu is None:
        return TFLM_WHEEL
    core = CPUS.get(cpu)
    return TFLM_CORTEX_M_PROBES if core is None else core.tflm


# A build name with a release: "host@2b3f8d0", "cortex-m7/cmsis-nn@2025-08",
# "esp32s3/esp-nn@1.2.0@2025-08" (an esp-nn release first, then TFLM's).
RELEASE_SEPARATOR = "@"
# A build name with an NPU: "cortex-m55/reference+ethos-u55-128" (before any release).
NPU_SEPARATOR = "+ethos-"


def split_release(name: str) -> tuple[str, str]:
    """A build name → (the build without its TFLM release, that release or ''): the last '@'
    part is the TFLM release unless it spells an esp-nn release ('1.2.0'), which belongs to the
    kernels ('esp32s3/esp-nn@1.2.0')."""
    base, separator, last = name.strip().rpartition(RELEASE_SEPARATOR)
    if not separator or _ESP_NN_RELEASE_SPELLING.match(last.strip().lower()):
        return name.strip(), ""
    return base, last


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
    """A core or chip as users type it ('cortex-m7', 'Cortex-M7', 'm7', 'cortex-m0+', 'esp32s3',
    'ESP32-S3') → Cpu; UsageError listing the known ones."""
    key = text.strip().lower().replace("_", "-").replace(" ", "-").replace("+", "plus")
    if key.startswith("esp"):
        key = key.replace("-", "")
    elif not key.startswith("cortex-"):
        key = "cortex-" + key
    core = CPUS.get(key)
    if core is None:
        raise UsageError(f"unknown CPU '{text}' (known: {', '.join(CPUS)})")
    return core


@dataclass(frozen=True, slots=True)
class KernelsOption:
    """--kernels as typed: the library, and for ESP-NN the release and whether it is built with
    CONFIG_NN_ANSI_C."""

    library: KernelLibrary
    release: str | None = None  # None: the library's default
    ansi: bool = False

    @property
    def spelling(self) -> str:
        """How build names and --kernels spell it: 'esp-nn-ansi@1.2.0', 'cmsis-nn'."""
        name = ESP_NN_ANSI if self.ansi else str(self.library)
        return name if self.release is None else f"{name}{KERNELS_RELEASE_SEPARATOR}{self.release}"


def kernels_option(text: str) -> KernelsOption:
    """--kernels as users type it ('cmsis-nn', 'CMSIS_NN', 'reference', 'esp-nn', 'esp-nn@1.2.0',
    'esp-nn-ansi') → KernelsOption; UsageError listing what is known. A release is only taken for
    ESP-NN, and only one whose scratch sizes arenalens models."""
    key = text.strip().lower().replace("_", "-")
    name, separator, release = key.partition(KERNELS_RELEASE_SEPARATOR)
    name = name.replace("cmsisnn", "cmsis-nn").replace("espnn", "esp-nn")
    ansi = name == ESP_NN_ANSI
    if ansi:
        name = str(ESP_NN)
    if name not in KERNEL_LIBRARIES:
        known = ", ".join((*KERNEL_LIBRARIES, ESP_NN_ANSI))
        raise UsageError(f"unknown kernel library '{text}' (known: {known}; esp-nn@RELEASE)")
    library = KernelLibrary(name)
    if not separator:
        return KernelsOption(library, None, ansi)
    if library != ESP_NN:
        raise UsageError(
            f"--kernels '{text}': a release is taken for esp-nn only; "
            f"{KERNEL_LIBRARY_TITLES[library]} is modelled at "
            + (CMSIS_NN_RELEASE if library == CMSIS_NN else "the build's TFLM release")
        )
    version = release.removeprefix("v")
    if version not in ESP_NN_RELEASES:
        raise UsageError(
            f"--kernels '{text}': esp-nn {release or '(none)'} is not modelled "
            f"(modelled: {', '.join(ESP_NN_RELEASES)})"
        )
    return KernelsOption(library, None if version == ESP_NN_RELEASE else version, ansi)


def kernel_library_named(text: str) -> KernelLibrary:
    """A kernel library as users type it ('cmsis-nn', 'CMSIS_NN', 'cmsisnn', 'reference',
    'esp-nn@1.2.0') → the library; UsageError listing the known ones."""
    return kernels_option(text).library


def device_build(
    cpu: str,
    kernels: str | None = None,
    *,
    recording: bool = False,
    named_by: str | None = NAMED_BY_USER,
    tflm: TflmRelease | str | None = None,
    npu: Npu | str | None = None,
) -> Build:
    """(core, kernel library) → the firmware build: the core's ABI, its SDK's default flags (no
    compression) at a TFLM release (`tflm`: a release, what --tflm takes, or None for the one its
    SDK builds: the Cortex-M probes' commit, esp-tflite-micro v1.3.8's on an ESP chip), the plain
    MicroAllocator unless `recording`. `kernels` given (--kernels: 'cmsis-nn', 'esp-nn@1.2.0',
    ...) is named by `named_by` (the user unless a board preset says it); without it, the core's
    default (reference on Cortex-M, ESP-NN on an ESP chip, as esp-tflite-micro always links it),
    not named. `npu` (--npu: 'ethos-u55-128') makes it an Ethos-U build of that core."""
    core = cpu_named(cpu)
    accelerator = npu_named(npu) if isinstance(npu, str) else npu
    if accelerator is not None and core.libraries != _CORTEX_M_LIBRARIES:
        raise UsageError(
            f"--npu {accelerator.name}: Arm's Ethos-U NPUs are driven by a Cortex-M core, "
            f"not by {core.title}"
        )
    option = KernelsOption(core.default_kernels) if kernels is None else kernels_option(kernels)
    library = option.library
    if library not in core.libraries:
        runs = " or ".join(sorted(str(known) for known in core.libraries))
        raise UsageError(
            f"--kernels {kernels}: {KERNEL_LIBRARY_TITLES[library]} kernels do not run on "
            f"{core.title} (its builds link {runs} kernels)"
        )
    build = Build(
        name=f"{core.name}/{option.spelling}"
        + ("" if accelerator is None else f"+{accelerator.name}"),
        title=f"{core.title}, {_kernels_title(core, option)}"
        + ("" if accelerator is None else f", {accelerator.title}"),
        abi=core.abi,
        kernels=library,
        isa=_code_path(core, option),
        compression=False,
        recording=recording,
        tflm=core.tflm,
        cpu=core.name,
        kernels_release=_kernels_release(option),
        kernels_named_by=None if kernels is None else named_by,
        dchecks=True,
        npu=accelerator,
    )
    return build if tflm is None else build.at_release(as_release(tflm))


def _code_path(core: Cpu, option: KernelsOption) -> str:
    if option.library == CMSIS_NN:
        return core.isa
    if option.library == ESP_NN:
        return ISA_ESP_ANSI if option.ansi else core.isa
    return ISA_NONE


def _kernels_release(option: KernelsOption) -> str:
    if option.library == CMSIS_NN:
        return CMSIS_NN_RELEASE
    if option.library == ESP_NN:
        return option.release or ESP_NN_RELEASE
    return ""


def _kernels_title(core: Cpu, option: KernelsOption) -> str:
    """'CMSIS-NN kernels', 'ESP-NN kernels (ESP32-S3 path), esp-tflite-micro v1.3.8' (the
    library's release and TFLM's are named by `build_title`)."""
    title = f"{KERNEL_LIBRARY_TITLES[option.library]} kernels"
    if option.library == ESP_NN:
        title += f" ({ISA_TITLES[_code_path(core, option)]}), esp-tflite-micro v1.3.8"
    return title


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


def _check_esp_nn_release(tflm: TflmRelease) -> None:
    """UsageError unless the release is esp-tflite-micro v1.3.8's TFLM, whose ESP-NN kernel
    files arenalens's rules describe."""
    if tflm != TFLM_ESP_TFLITE_MICRO:
        raise UnplacedValueError(
            "ESP-NN builds are modelled as esp-tflite-micro v1.3.8 ships them, at "
            f"{TFLM_ESP_TFLITE_MICRO.title}; {tflm.title} is not",
            (
                ("--kernels", "reference", f"TFLM's reference kernels at {tflm.name}"),
                ("--tflm", TFLM_ESP_TFLITE_MICRO.name, "esp-tflite-micro v1.3.8's, with ESP-NN"),
            ),
            ask="run",
        )


def as_release(tflm: TflmRelease | str) -> TflmRelease:
    """A release, or what --tflm takes (a wheel version, a date, a commit) → the release."""
    return tflm if isinstance(tflm, TflmRelease) else tflm_release(tflm)


def select_build(
    cpu: str | None, kernels: str | None, tflm: str | None = None, npu: str | None = None
) -> Build:
    """The --cpu / --kernels / --tflm / --npu options → a build; no core → the host wheel (of
    the --tflm release)."""
    if cpu is None and npu is not None:
        raise UsageError(
            f"--npu {npu} needs --cpu: the Cortex-M core whose firmware drives the NPU "
            "(e.g. --cpu cortex-m55)"
        )
    if cpu is None:
        if kernels is not None and kernel_library_named(kernels) != REFERENCE:
            raise UsageError(
                "--kernels needs --cpu (CMSIS-NN kernels run on a Cortex-M core, ESP-NN on an "
                "ESP32 chip)"
            )
        return HOST if tflm is None else host_build(tflm_release(tflm))
    return device_build(cpu, kernels, tflm=tflm, npu=npu)


@functools.lru_cache(maxsize=64)  # a search loop names the same build every call
def build_named(name: str) -> Build:
    """'host', 'cortex-m7', 'cortex-m7/cmsis-nn' or 'esp32s3/esp-nn@1.2.0' (as `Build.name` spells
    it), each optionally with an NPU ('cortex-m55/reference+ethos-u55-128') and with '@' and a
    TFLM release as --tflm takes it ('host@2025-08') → the build; a library in the name counts as
    named."""
    base, tflm = split_release(name)
    if base.lower() == HOST.name:
        return HOST if not tflm else host_build(tflm_release(tflm))
    base, separator, npu = base.partition(NPU_SEPARATOR)
    cpu, _, kernels = base.partition("/")
    return device_build(
        cpu, kernels or None, tflm=tflm or None, npu="ethos-" + npu if separator else None
    )


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
    library = KERNEL_RELEASE_TITLES.get(build.kernels, "")
    kernels = f"; {library} {build.kernels_release}" if build.kernels_release else ""
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
        # The NPU, only on builds with one (documents of builds without stay as they were).
        **({} if build.npu is None else {"npu": build.npu.name}),
    }


def kernels_release_title(summary: Mapping[str, Any]) -> str:
    """A build summary → its kernel library's own release as figures name it ('CMSIS-NN
    4ab83cc3cc98', 'esp-nn 1.2.3'); '' for the reference kernels (TFLM's release)."""
    release = summary.get("kernels_release")
    library = KERNEL_RELEASE_TITLES.get(KernelLibrary(summary.get("kernels") or REFERENCE), "")
    return f"{library} {release}" if release and library else ""


def build_flags(summary: Mapping[str, Any]) -> str:
    """A build summary (`build_summary`) → the options that select it again, for the commands
    a report suggests: ' --cpu cortex-m4 --kernels cmsis-nn', '' for today's host wheel, with
    ' --tflm RELEASE' for another TFLM release than the build's default."""
    cpu = summary.get("cpu")
    release = release_flag(summary)
    if not cpu:
        return release
    return f" --cpu {cpu} --kernels {kernels_flag(summary)}{npu_flag(summary)}{release}"


def npu_flag(summary: Mapping[str, Any]) -> str:
    """' --npu ethos-u55-128' for a summarised build with an NPU, else ''."""
    npu = summary.get("npu")
    return f" --npu {npu}" if npu else ""


def kernels_flag(summary: Mapping[str, Any]) -> str:
    """The --kernels value that selects a summarised build's kernels again: 'cmsis-nn',
    'esp-nn', 'esp-nn@1.2.0', 'esp-nn-ansi'."""
    library = str(summary.get("kernels") or REFERENCE)
    if library != ESP_NN:
        return library
    release = summary.get("kernels_release") or ESP_NN_RELEASE
    return KernelsOption(
        ESP_NN,
        None if release == ESP_NN_RELEASE else str(release),
        summary.get("isa") == ISA_ESP_ANSI,
    ).spelling


def overlap_flags(summary: Mapping[str, Any]) -> str:
    """The options of an `optimize --overlap` command for this build: `build_flags`, but
    --kernels only when the user named the library (`Build.kernels_named_by`); otherwise the
    overlaps must hold on every library the core may run, so the command names none."""
    if summary.get("kernels_named_by") == NAMED_BY_USER:
        return build_flags(summary)
    cpu = summary.get("cpu")
    return (f" --cpu {cpu}" if cpu else "") + npu_flag(summary) + release_flag(summary)


def release_flag(summary: Mapping[str, Any]) -> str:
    """' --tflm RELEASE' when a build summary's TFLM release is not its build's default (so a
    suggested command, with --target too, stays at the release the user asked for), else ''."""
    tflm = summary.get("tflm") or {}
    default = default_release(summary.get("cpu")).name
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
