"""Builds: (core, kernel library, TFLM release) → the value that says which device a figure is for.

A `Build` is made of records (`records.py`, loaded from the checked `build_records.json`): its
`core`, `abi`, kernel `library` with its `code_path` and `library_release`, `npu`, and the
TFLM release (`tflm`). The lookups below read those records; adding a core, a library (with its
rules package), a release of one or a co-processor is a row there.

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
* the **NPU** (`npu`, a co-processor row of the records; builds/npu.py): an Arm Ethos-U
  configuration the firmware drives (`CO_PROCESSOR=ethos_u`), which registers the `ethos-u`
  operator Vela writes; None without one.

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

import functools
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from arenalens.builds.abi import Abi
from arenalens.builds.npu import npu_named
from arenalens.builds.records import (
    COPROCESSOR_FAMILIES,
    CORE_SPELLINGS,
    CORES,
    HOST_RECORD,
    TOOLCHAINS,
    CodePath,
    Core,
    KernelLibrary,
    LibraryRelease,
    Npu,
    linked_libraries,
)
from arenalens.builds.records import (
    KERNEL_LIBRARIES as LIBRARY_RECORDS,
)
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
from arenalens.records import record

# The kernel libraries by the names their records (and rules packages) give them.
REFERENCE = "reference"  # TFLM's own kernels (tensorflow/lite/micro/kernels/)
CMSIS_NN = "cmsis-nn"  # OPTIMIZED_KERNEL_DIR=cmsis_nn: Arm's CMSIS-NN (Cortex-M)
ESP_NN = "esp-nn"  # esp-tflite-micro's kernels/esp_nn/ over Espressif's esp-nn (ESP32 family)
# The libraries --kernels takes (every one some core links), in the records' order.
KERNEL_LIBRARIES = linked_libraries()
KERNELS_RELEASE_SEPARATOR = "@"
# The --kernels spellings that select a code path on any core (CONFIG_NN_ANSI_C: 'esp-nn-ansi').
PATH_OPTIONS: Mapping[str, CodePath] = MappingProxyType(
    {
        path.option: path
        for library in LIBRARY_RECORDS.values()
        for path in library.code_paths
        if path.option is not None
    }
)
ESP_NN_ANSI = "esp-nn-ansi"

# Each library's default release, and every modelled release of ESP-NN (--kernels esp-nn@1.2.0).
CMSIS_NN_RELEASE = LIBRARY_RECORDS[CMSIS_NN].default_release or ""
ESP_NN_RELEASES = LIBRARY_RECORDS[ESP_NN].release_names
ESP_NN_RELEASE = LIBRARY_RECORDS[ESP_NN].default_release or ""
# A kernel library's release as build names spell it after '@': '1.2.0', 'v1.2.0'.
_VERSION_SPELLING = re.compile(r"^v?\d+\.\d+\.\d+$")

# The code paths kernel rules compare `Build.isa` with (names of the libraries' code path rows):
# CMSIS-NN's instruction-set paths (arm_nn_math_types.h: ARM_MATH_DSP from __ARM_FEATURE_DSP,
# ARM_MATH_MVEI from __ARM_FEATURE_MVE), and the functions esp-nn compiles (include/esp_nn.h:
# with CONFIG_NN_OPTIMIZED the ESP32-S3's and ESP32-P4's own, the generic optimised C on every
# other chip; with CONFIG_NN_ANSI_C the ANSI C ones on any chip).
ISA_NONE = "none"
ISA_DSP = "dsp"
ISA_MVE = "mve"
ISA_ESP32S3 = "esp32s3"
ISA_ESP32P4 = "esp32p4"
ISA_ESP_GENERIC = "esp-generic"
ISA_ESP_ANSI = "esp-ansi"

NAMED_BY_USER = "user"
NAMED_BY_BOARD = "board"

# Build features, as struct members name them in `only_with` (runtimes/tflm/abi.py): this one,
# and the keys of the TFLM changes a release has (builds/tflm.py).
COMPRESSION = "compression"  # USE_TFLM_COMPRESSION
# The TFLM sources each toolchain's builds compile by default (its SDK's).
# (The releases tflm.py names are these very values: one object per release.)
TOOLCHAIN_RELEASES: Mapping[str, TflmRelease] = MappingProxyType(
    {
        name: next(
            (
                known
                for known in (TFLM_CORTEX_M_PROBES, TFLM_WHEEL)
                if known.commit == toolchain.tflm
            ),
            tflm_release(toolchain.tflm),
        )
        for name, toolchain in TOOLCHAINS.items()
    }
)
# The tflite-micro sources Espressif's esp-tflite-micro v1.3.8 ships: what an ESP chip's build
# compiles.
TFLM_ESP_TFLITE_MICRO = TOOLCHAIN_RELEASES["esp-idf"]
TFLM_RELEASES: Mapping[str, TflmRelease] = MappingProxyType(
    {release.name: release for release in (TFLM_ESP_TFLITE_MICRO, TFLM_CORTEX_M_PROBES, TFLM_WHEEL)}
)

# The cores and chips builds are made for, by name (`records.CORES`).
CPUS: Mapping[str, Core] = CORES


@dataclass(frozen=True, slots=True)
class Build:
    """One TFLM build: what decides every struct size, kernel buffer and scratch request. Its
    facts are records (`records.py`); `cpu`, `kernels`, `isa` and `kernels_release` spell them."""

    name: str  # "host" or "<cpu>/<kernels>"
    title: str
    abi: Abi
    library: KernelLibrary  # the kernel library it links
    code_path: CodePath  # the library's code path on its core
    compression: bool  # USE_TFLM_COMPRESSION (the wheel)
    recording: bool  # RecordingMicroAllocator (wheel, probes) vs MicroAllocator (firmware)
    tflm: TflmRelease
    core: Core | None = None  # None: the x86-64 wheel
    # The library's own release (None: the reference kernels, TFLM's): the CMSIS-NN commit, the
    # esp-nn version.
    library_release: LibraryRelease | None = None
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
    # The entries of the MicroResourceVariables table the firmware creates
    # (`MicroResourceVariables::Create(allocator, N)`); None: one per distinct VAR_HANDLE
    # shared_name, as the tflite_micro Python interpreter counts them (`--resource-variables`).
    resource_variables: int | None = None
    # The `only_with` struct variants this build compiles: compression and the release's.
    features: frozenset[str] = field(init=False, repr=False, compare=False)
    # The kernel library's code path ('none' for the reference kernels; 'dsp', 'mve', ... for
    # CMSIS-NN; 'esp32s3', 'esp-generic', 'esp-ansi', ... for ESP-NN): `code_path.name`, kept
    # as a field (kernel rules read it per operator, a property was a call each time).
    isa: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        own = frozenset({COMPRESSION}) if self.compression else frozenset()
        object.__setattr__(self, "features", own | self.tflm.features)
        object.__setattr__(self, "isa", self.code_path.name)

    def __hash__(self) -> int:
        # Builds key the per-model caches (`memo.recent_by_identity`), about twenty lookups a
        # check: hashing every nested record each time (~10 µs) cost more than some lookups
        # save, and so did a tuple of its flags (callgrind: ~2.6 K instructions a hash). Equal
        # builds have equal names: the name's hash (cached by the string) is hash enough.
        return hash(self.name)

    def has(self, change: str) -> bool:
        """Does this build have a change of TFLM's history (builds/tflm.py `HISTORY`)? A
        source change when its release does; a change of how the wheel is built on the host
        only."""
        if CHANGES[change].wheel_only:
            return self.is_host and self.tflm.has(change)
        return change in self.tflm.features

    @property
    def cpu(self) -> str | None:
        """The core's name ('cortex-m7', 'esp32s3'); None for the x86-64 wheel."""
        return None if self.core is None else self.core.name

    @property
    def kernels(self) -> str:
        """The kernel library's name ('reference', 'cmsis-nn', 'esp-nn')."""
        return self.library.name

    @property
    def kernels_release(self) -> str:
        """The library's own release as documents spell it ('' for the reference kernels)."""
        return "" if self.library_release is None else self.library_release.name

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
        return self.core is None

    def __getitem__(self, key: str) -> Any:
        """Deprecated: the build was a dict (`build_summary`) on `MemoryBudget`, `Verdict` and
        the report data before it travelled whole; read its fields, or `build_summary(build)`."""
        warnings.warn(
            f"build[{key!r}] is deprecated: the build is a Build now; read its fields "
            "(build.name, build.cpu, ...) or build_summary(build) for the JSON form",
            DeprecationWarning,
            stacklevel=2,
        )
        return build_summary(self)[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Deprecated, as `build[key]`."""
        warnings.warn(
            f"build.get({key!r}) is deprecated: the build is a Build now; read its fields "
            "(build.name, build.cpu, ...) or build_summary(build) for the JSON form",
            DeprecationWarning,
            stacklevel=2,
        )
        return build_summary(self).get(key, default)

    def with_recording(self, recording: bool) -> Build:
        """The same build with the recording (or plain) allocator."""
        return replace(self, recording=recording)

    def at_release(self, tflm: TflmRelease) -> Build:
        """The same build compiled from another TFLM release (the wheel of that release, for
        the host: with compression from when the wheel was built so)."""
        if self.is_host:
            return host_build(tflm)
        if self.library_release is not None:
            _check_library_release(self.library, self.library_release, tflm)
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


def with_kernels_named(build: Build) -> Build:
    """The same build as a command naming its kernel library selects it (`build_flags` always
    names it): overlaps then hold on that library alone, and the number on this build alone."""
    return replace(build, kernels_named_by=NAMED_BY_USER)


def default_release(cpu: str | None) -> TflmRelease:
    """The TFLM release a build of this core compiles unless --tflm says otherwise: its
    toolchain's (the Cortex-M probes' commit, esp-tflite-micro v1.3.8's); the newest wheel's for
    the host."""
    if cpu is None:
        return TFLM_WHEEL
    core = CORES.get(cpu)
    return TFLM_CORTEX_M_PROBES if core is None else TOOLCHAIN_RELEASES[core.toolchain.name]


# A build name with a release: "host@2b3f8d0", "cortex-m7/cmsis-nn@2025-08",
# "esp32s3/esp-nn@1.2.0@2025-08" (a kernel library's release first, then TFLM's).
RELEASE_SEPARATOR = "@"
# A build name with an NPU: "cortex-m55/reference+ethos-u55-128" (before any release).
NPU_SEPARATOR = "+"


def split_release(name: str) -> tuple[str, str]:
    """A build name → (the build without its TFLM release, that release or ''): the last '@'
    part is the TFLM release unless it spells a kernel library's version ('1.2.0'), which
    belongs to the kernels ('esp32s3/esp-nn@1.2.0')."""
    base, separator, last = name.strip().rpartition(RELEASE_SEPARATOR)
    if not separator or _VERSION_SPELLING.match(last.strip().lower()):
        return name.strip(), ""
    return base, last


def host_build(tflm: TflmRelease = TFLM_WHEEL) -> Build:
    """The x86-64 `tflite-micro` wheel of a TFLM release (reference kernels, the recording
    allocator; compression from 2025-08-04 on, when the wheel started to be built with it)."""
    compression = tflm.has(WHEEL_COMPRESSION)
    reference = LIBRARY_RECORDS[REFERENCE]
    return Build(
        name="host" if tflm == TFLM_WHEEL else f"host{RELEASE_SEPARATOR}{tflm.name}",
        title="x86-64 host (tflite_micro wheel: reference kernels, "
        f"{'compression' if compression else 'no compression'}, recording allocator)",
        abi=HOST_RECORD.abi,
        library=reference,
        code_path=reference.code_paths[0],
        compression=compression,
        recording=True,
        tflm=tflm,
        # Wheels before f8c117b were built in bazel's fastbuild mode, without NDEBUG.
        dchecks=not tflm.has(WHEEL_OPT_MODE),
    )


HOST = host_build()


def spelled(text: str) -> str:
    """A name as users type it → the records' spelling: lower case, '-' for '_' and spaces,
    'plus' for '+' ('Cortex-M0+' → 'cortex-m0plus', 'ESP32_S3' → 'esp32-s3')."""
    return text.strip().lower().replace("_", "-").replace(" ", "-").replace("+", "plus")


def cpu_named(text: str) -> Core:
    """A core or chip as users type it ('cortex-m7', 'Cortex-M7', 'm7', 'cortex-m0+', 'esp32s3',
    'ESP32-S3': its name or an alias in the records) → Core; UsageError listing the known ones."""
    name = CORE_SPELLINGS.get(spelled(text))
    if name is None:
        raise UsageError(f"unknown CPU '{text}' (known: {', '.join(CORES)})")
    return CORES[name]


@record(slots=True)
class KernelsOption:
    """--kernels as typed: the library, its release (None: the library's default) and a code
    path the spelling chose (ESP-NN built with CONFIG_NN_ANSI_C), else None (the core's)."""

    library: KernelLibrary
    release: LibraryRelease | None = None
    code_path: CodePath | None = None

    @property
    def spelling(self) -> str:
        """How build names and --kernels spell it: 'esp-nn-ansi@1.2.0', 'cmsis-nn'."""
        path = self.code_path
        name = path.option if path is not None and path.option else self.library.name
        if self.release is None:
            return name
        return f"{name}{KERNELS_RELEASE_SEPARATOR}{self.release.name}"


def _library_spellings() -> Mapping[str, tuple[KernelLibrary, CodePath | None]]:
    """Every --kernels name (before '@'): each linked library's name and aliases, and the code
    path options ('esp-nn-ansi')."""
    found: dict[str, tuple[KernelLibrary, CodePath | None]] = {}
    for name in KERNEL_LIBRARIES:
        library = LIBRARY_RECORDS[name]
        for spelling in (name, *library.aliases):
            found[spelling] = (library, None)
        for path in library.code_paths:
            if path.option is not None:
                found[path.option] = (library, path)
                for alias in library.aliases:
                    found[path.option.replace(name, alias, 1)] = (library, path)
    return MappingProxyType(found)


_KERNELS_SPELLINGS = _library_spellings()
# The libraries --kernels takes a release for: those with more than one modelled.
_RELEASED = tuple(name for name in KERNEL_LIBRARIES if len(LIBRARY_RECORDS[name].releases) > 1)


def kernels_option(text: str) -> KernelsOption:
    """--kernels as users type it ('cmsis-nn', 'CMSIS_NN', 'reference', 'esp-nn', 'esp-nn@1.2.0',
    'esp-nn-ansi') → KernelsOption; UsageError listing what is known. A release is only taken for
    a library with several modelled (ESP-NN), and only one whose sizes arenalens models."""
    key = text.strip().lower().replace("_", "-")
    name, separator, release = key.partition(KERNELS_RELEASE_SEPARATOR)
    known_spelling = _KERNELS_SPELLINGS.get(name)
    if known_spelling is None:
        known = ", ".join((*KERNEL_LIBRARIES, *PATH_OPTIONS))
        releases = "; ".join(f"{name}{KERNELS_RELEASE_SEPARATOR}RELEASE" for name in _RELEASED)
        raise UsageError(f"unknown kernel library '{text}' (known: {known}; {releases})")
    library, path = known_spelling
    if not separator:
        return KernelsOption(library, None, path)
    if library.name not in _RELEASED:
        raise UsageError(
            f"--kernels '{text}': a release is taken for {' and '.join(_RELEASED)} only; "
            f"{library.title} is modelled at "
            + (library.default_release or "the build's TFLM release")
        )
    version = release.removeprefix("v")
    if version not in library.release_names:
        raise UsageError(
            f"--kernels '{text}': {library.name} {release or '(none)'} is not modelled "
            f"(modelled: {', '.join(library.release_names)})"
        )
    chosen = None if version == library.default_release else library.release(version)
    return KernelsOption(library, chosen, path)


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
    """(core, kernel library) → the firmware build: the core's ABI, its toolchain's default flags
    (no compression) at a TFLM release (`tflm`: a release, what --tflm takes, or None for the one
    its SDK builds: the Cortex-M probes' commit, esp-tflite-micro v1.3.8's on an ESP chip), the
    plain MicroAllocator unless `recording`. `kernels` given (--kernels: 'cmsis-nn',
    'esp-nn@1.2.0', ...) is named by `named_by` (the user unless a board preset says it); without
    it, the core's default (reference on Cortex-M, ESP-NN on an ESP chip, as esp-tflite-micro
    always links it), not named. `npu` (--npu: 'ethos-u55-128') makes it a build of that core
    driving that NPU (a core its family's `host_toolchain` builds)."""
    core = cpu_named(cpu)
    option = (
        KernelsOption(LIBRARY_RECORDS[core.default_kernels])
        if kernels is None
        else kernels_option(kernels)
    )
    library = option.library
    if library.name not in core.libraries:
        runs = " or ".join(sorted(core.libraries))
        raise UsageError(
            f"--kernels {kernels}: {library.title} kernels do not run on "
            f"{core.title} (its builds link {runs} kernels)"
        )
    path = option.code_path or library.code_path(core.code_path_of(library.name))
    chosen = _driven(core, npu)
    release = option.release
    if release is None and library.default_release is not None:
        release = library.release(library.default_release)
    name = f"{core.name}/{option.spelling}" + (
        "" if chosen is None else f"{NPU_SEPARATOR}{chosen.name}"
    )
    title = f"{core.title}, {_kernels_title(library, path)}"
    build = Build(
        name=name,
        title=title if chosen is None else f"{title}, {chosen.title}",
        abi=core.abi,
        library=library,
        code_path=path,
        compression=False,
        recording=recording,
        tflm=TOOLCHAIN_RELEASES[core.toolchain.name],
        core=core,
        library_release=release,
        kernels_named_by=None if kernels is None else named_by,
        dchecks=True,
        npu=chosen,
    )
    return build if tflm is None else at_tflm(build, tflm)


def at_tflm(build: Build, tflm: TflmRelease | str) -> Build:
    """The build at the release --tflm names. Where --tflm falls between two releases arenalens
    cannot tell apart, the error suggests only the releases this build can be made at (a kernel
    library modelled for some releases refuses the others), so each suggestion runs as printed."""
    try:
        release = as_release(tflm)
    except UnplacedValueError as error:
        raise _runnable_choices(build, error) from None
    return build.at_release(release)


def _runnable_choices(build: Build, error: UnplacedValueError) -> UsageError:
    """`error` with its --tflm choices cut to those `build` is made at; with none left, why
    not (the build's own refusal at the first choice) and the release it is made at."""
    kept = tuple(
        choice for choice in error.instead if choice[0] != "--tflm" or _made_at(build, choice[1])
    )
    if kept == error.instead:
        return error
    if kept:
        return UnplacedValueError(error.reason, kept, ask=error.ask)
    try:
        build.at_release(as_release(error.instead[0][1]))
    except UnplacedValueError as refusal:
        # Its --kernels choice would keep the unplaced --tflm: only its release runs as printed.
        releases = tuple(choice for choice in refusal.instead if choice[0] == "--tflm")
        return UnplacedValueError(f"{error.reason}; {refusal.reason}", releases, refusal.ask)
    return error


def _made_at(build: Build, tflm: str) -> bool:
    try:
        build.at_release(as_release(tflm))
    except UsageError:
        return False
    return True


def _driven(core: Core, npu: Npu | str | None) -> Npu | None:
    """The NPU named, when this core may drive it (its family's host toolchain builds the core);
    UsageError otherwise."""
    if npu is None:
        return None
    chosen = npu_named(npu) if isinstance(npu, str) else npu
    family = COPROCESSOR_FAMILIES[chosen.family]
    if core.toolchain.name != family.host_toolchain:
        raise UsageError(
            f"--npu {chosen.name}: {family.title} are driven by {family.driven_by}, "
            f"not by {core.title}"
        )
    return chosen


def _kernels_title(library: KernelLibrary, path: CodePath) -> str:
    """'CMSIS-NN kernels', 'ESP-NN kernels (ESP32-S3 path), esp-tflite-micro v1.3.8' (the
    library's release and TFLM's are named by `build_title`)."""
    title = f"{library.title} kernels"
    if library.title_names_code_path:
        title += f" ({path.title})"
    if library.shipped_by:
        title += f", {library.shipped_by}"
    return title


def _check_library_release(
    library: KernelLibrary, release: LibraryRelease, tflm: TflmRelease
) -> None:
    """UnplacedValueError unless arenalens's rules for this library release describe a build of
    it at this TFLM release (the records' `tflm_from` to `tflm_until`)."""
    first, last = tflm_release(release.tflm_from), tflm_release(release.tflm_until)
    if first.time <= tflm.time <= last.time:
        return
    reference = ("--kernels", REFERENCE, f"TFLM's reference kernels at {tflm.name}")
    if first == last:
        raise UnplacedValueError(
            f"{library.title} builds are modelled as {library.shipped_by} ships them, at "
            f"{last.title}; {tflm.title} is not",
            (reference, ("--tflm", last.name, f"{library.shipped_by}'s, with {library.title}")),
            ask="run",
        )
    raise UnplacedValueError(
        f"{library.title} builds are modelled for TFLM {first.name} ({first.date}) to "
        f"{last.name} ({last.date}), which pin {library.release_title} {release.name}; "
        f"{tflm.title} is not",
        (reference, ("--tflm", last.name, f"{library.release_title} {release.name}")),
        ask="run",
    )


def as_release(tflm: TflmRelease | str) -> TflmRelease:
    """A release, or what --tflm takes (a wheel version, a date, a commit) → the release."""
    return tflm if isinstance(tflm, TflmRelease) else tflm_release(tflm)


def select_build(
    cpu: str | None,
    kernels: str | None,
    tflm: str | None = None,
    npu: str | None = None,
) -> Build:
    """The --cpu / --kernels / --tflm / --npu options → a build; no core → the host wheel (of
    the --tflm release)."""
    if cpu is None and npu is not None:
        raise UsageError(
            f"--npu {npu} needs --cpu: the Cortex-M core whose firmware drives the NPU "
            "(e.g. --cpu cortex-m55)"
        )
    if cpu is None:
        if kernels is not None and kernel_library_named(kernels) != HOST.library:
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
    base, _, npu = base.partition(NPU_SEPARATOR)
    cpu, _, kernels = base.partition("/")
    return device_build(cpu, kernels or None, tflm=tflm or None, npu=npu or None)


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
    table = (
        ""
        if build.resource_variables is None
        else f"; a resource-variable table of {build.resource_variables}"
    )
    if build.is_host:
        return f"64-bit host build, {build.tflm.title}{table}"
    release = build.library_release
    kernels = "" if release is None else f"; {build.library.release_title} {release.name}"
    return (
        f"{build.title}; {build.abi.title}, {allocator_name(build)}{kernels}; "
        f"{build.tflm.title}{table}"
    )


def build_summary(build: Build) -> dict[str, Any]:
    """A build → what documents say about it (JSON-ready)."""
    summary: dict[str, Any] = {
        "name": build.name,
        "title": build.title,
        "cpu": build.cpu,
        "kernels": build.kernels,
        "isa": build.isa,
        "abi": build.abi.title,
        "allocator": allocator_name(build),
        "compression": build.compression,
        "kernels_release": build.kernels_release or None,
        "kernels_named_by": build.kernels_named_by,
        "resource_variables": build.resource_variables,
        "tflm": {
            "release": build.tflm.name,
            "commit": build.tflm.commit or None,
            "date": build.tflm.date,
            "wheel": build.tflm.wheel or None,
            "title": build.tflm.title,
        },
    }
    if build.npu is not None:
        # Only on builds with one: documents of builds without stay as they were.
        summary["npu"] = build.npu.name
    return summary


def build_document(build: Build | None) -> dict[str, Any] | None:
    """What a JSON writer says about the build a figure is for: `build_summary`, or None for a
    runtime without builds (LiteRT). The build travels whole until here."""
    return None if build is None else build_summary(build)


def kernels_release_title(build: Build | None) -> str:
    """A build → its kernel library's own release as figures name it ('CMSIS-NN 4ab83cc3cc98',
    'esp-nn 1.2.3'); '' for the reference kernels (TFLM's release) and for no build."""
    if build is None or build.library_release is None or not build.library.release_title:
        return ""
    return f"{build.library.release_title} {build.library_release.name}"


def build_flags(build: Build | None) -> str:
    """A build → the options that select it again, for the commands a report suggests:
    ' --cpu cortex-m4 --kernels cmsis-nn', '' for today's host wheel (and for a runtime without
    builds), with ' --tflm RELEASE' for another TFLM release than the build's default."""
    if build is None:
        return ""
    release = release_flag(build)
    if build.cpu is None:
        return release
    return f" --cpu {build.cpu} --kernels {kernels_flag(build)}{npu_flag(build)}{release}"


def npu_flag(build: Build | None) -> str:
    """' --npu ethos-u55-128' for a build with an NPU, else ''."""
    return "" if build is None or build.npu is None else f" --npu {build.npu.name}"


def kernels_flag(build: Build) -> str:
    """The --kernels value that selects a build's kernels again: 'cmsis-nn', 'esp-nn',
    'esp-nn@1.2.0', 'esp-nn-ansi'."""
    library = build.library
    release = build.library_release
    return KernelsOption(
        library,
        None if release is None or release.name == library.default_release else release,
        build.code_path if build.code_path.option else None,
    ).spelling


def overlap_flags(build: Build | None) -> str:
    """The options of an `optimize --overlap` command for this build: `build_flags`, but
    --kernels only when the user named the library (`Build.kernels_named_by`); otherwise the
    overlaps must hold on every library the core may run, so the command names none."""
    if build is None:
        return ""
    if build.kernels_named_by == NAMED_BY_USER:
        return build_flags(build)
    cpu = f" --cpu {build.cpu}" if build.cpu else ""
    return cpu + npu_flag(build) + release_flag(build)


def release_flag(build: Build | None) -> str:
    """' --tflm RELEASE' when a build's TFLM release is not its build's default (so a suggested
    command, with --target too, stays at the release the user asked for), else ''; and
    ' --resource-variables N' when the build names its table (every command that sizes a build
    takes it)."""
    if build is None:
        return ""
    table = (
        ""
        if build.resource_variables is None
        else f" --resource-variables {build.resource_variables}"
    )
    if build.tflm.name == default_release(build.cpu).name:
        return table
    return f" --tflm {_tflm_flag(build.tflm)}{table}"


def _tflm_flag(tflm: TflmRelease) -> str:
    """The --tflm value that names a release again: its wheel, else its short commit (the whole
    hash when the short one is ambiguous), else its date."""
    if tflm.wheel:
        return tflm.wheel
    if tflm.commit:
        try:
            return (
                tflm.commit[:7]
                if tflm_release(tflm.commit[:7]).commit == tflm.commit
                else tflm.commit
            )
        except UsageError:
            return tflm.commit
    return tflm.name
