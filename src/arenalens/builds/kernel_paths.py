"""Kernel code paths: which loops a TFLM build runs for each kernel → the builds a plan that lets
outputs share bytes with inputs computes the right outputs on.

An offline plan whose outputs start below the inputs they consume (`optimize --overlap`) relies on
the order each kernel reads and writes memory. That order is a property of the *code path*, not of
the arena's bytes: TFLM's reference kernels run the same loops on every core, while CMSIS-NN picks
its loops by the instruction set it is compiled for (pure C, the DSP extension or MVE; `build`).
So a plan is valid for a set of paths, and the builds it may meet are judged by theirs:

* `KernelPath`: one library and, for CMSIS-NN, one code path. `path_of(build)` is the path a
  build runs; `build_for(path)` a build that runs it (what the access rules are asked with).
* `OverlapRules`: the paths a plan must be safe on and the builds whose `kTensorArenaSize` it
  must hold on. `overlap_rules(build, kernels)` gives them: when the user names the kernel library
  (`--kernels`, or a build whose `kernels_named_by` is the user), that library's path on the
  build's core; otherwise (a board preset's implied library included) every library the chip may
  run. On a
  Cortex-M core (or with no core named) that is the reference kernels and CMSIS-NN on every code
  path: a core's default path is the compiler's choice and flags move it (a Cortex-M55 built with
  `-mfloat-abi=soft` runs the DSP path). On an ESP32 chip it is the reference kernels and ESP-NN,
  on a core arenalens has no 32-bit model of (other RISC-V MCUs) the vendor's kernels; the access
  order of those is not known here (esp-nn's int8 loops are its own C and assembly): no overlap
  is then safe.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arenalens.builds.build import (
    CMSIS_NN,
    ESP_NN,
    HOST,
    ISA_DSP,
    ISA_MVE,
    ISA_NONE,
    NAMED_BY_USER,
    REFERENCE,
    Build,
    cpu_named,
    device_build,
    kernel_library_named,
)
from arenalens.errors import UsageError

# Kernels whose access order arenalens has not traced: ESP-NN's int8 loops (esp-nn's own C and
# assembly) on ESP32 chips, and the vendor libraries of cores without a 32-bit model (NMSIS-NN,
# KPU drivers, ...).
VENDOR = "vendor"
_ESP_CHIP_PREFIX = "esp32"

_LIBRARY_ORDER = (REFERENCE, CMSIS_NN, ESP_NN, VENDOR)
_ISA_ORDER = (ISA_NONE, ISA_DSP, ISA_MVE)
# A core of each CMSIS-NN code path: the access rules read a build's kernels and code path only.
_PATH_CORES = {ISA_NONE: "cortex-m3", ISA_DSP: "cortex-m7", ISA_MVE: "cortex-m55"}
_ISA_TITLES = {
    ISA_NONE: "pure C (no DSP extension: Cortex-M0+, M3)",
    ISA_DSP: "DSP extension (Cortex-M4, M7, M33)",
    ISA_MVE: "MVE/Helium (Cortex-M55, M85)",
}


@dataclass(frozen=True, slots=True)
class KernelPath:
    """One kernel library and, for CMSIS-NN, the code path it is compiled for."""

    kernels: str  # REFERENCE | CMSIS_NN | ESP_NN | VENDOR
    isa: str = ISA_NONE  # CMSIS-NN's code path; ISA_NONE for every other library

    @property
    def name(self) -> str:
        """'reference', 'cmsis-nn/dsp', ...: how records and documents spell it."""
        return f"{self.kernels}/{self.isa}" if self.kernels == CMSIS_NN else str(self.kernels)

    @property
    def title(self) -> str:
        """The path in words."""
        if self.kernels == CMSIS_NN:
            return f"CMSIS-NN, {_ISA_TITLES[self.isa]}"
        if self.kernels == REFERENCE:
            return "TFLM reference kernels (any core)"
        if self.kernels == ESP_NN:
            return "ESP-NN (esp-tflite-micro on ESP32 chips)"
        return "the vendor's optimized kernels"

    @property
    def rank(self) -> tuple[int, int]:
        """Sort key: reference, CMSIS-NN (none, DSP, MVE), then libraries without rules."""
        return (_LIBRARY_ORDER.index(self.kernels), _ISA_ORDER.index(self.isa))

    @property
    def has_rules(self) -> bool:
        """True when arenalens knows this path's access orders (from the kernels' sources)."""
        return self.kernels in (REFERENCE, CMSIS_NN)


REFERENCE_PATH = KernelPath(REFERENCE)
CMSIS_NN_PATHS = tuple(KernelPath(CMSIS_NN, isa) for isa in (ISA_NONE, ISA_DSP, ISA_MVE))
# Every path whose access order arenalens knows.
KNOWN_PATHS = (REFERENCE_PATH, *CMSIS_NN_PATHS)
ESP_NN_PATH = KernelPath(ESP_NN)
VENDOR_PATH = KernelPath(VENDOR)


def path_of(build: Build) -> KernelPath:
    """The code path a build runs: its library and, for CMSIS-NN, the core's instruction set."""
    if build.kernels == CMSIS_NN:
        return KernelPath(CMSIS_NN, build.isa)
    return KernelPath(build.kernels)


def path_named(text: str) -> KernelPath | None:
    """'reference', 'cmsis-nn/mve', 'esp-nn', ... (as `KernelPath.name` spells it) → the path;
    None for a name this version does not know."""
    kernels, _, isa = text.partition("/")
    if kernels == CMSIS_NN and isa in _PATH_CORES:
        return KernelPath(CMSIS_NN, isa)
    if not isa and kernels in (REFERENCE, ESP_NN, VENDOR):
        return KernelPath(kernels)
    return None


def build_for(path: KernelPath) -> Build:
    """A build that runs this path (the reference kernels: the host wheel)."""
    if path.kernels == CMSIS_NN:
        return device_build(_PATH_CORES[path.isa], CMSIS_NN)
    return HOST


def paths_text(paths: Iterable[KernelPath]) -> str:
    """'reference, cmsis-nn/none, cmsis-nn/dsp' (in canonical order, for notes and records)."""
    return ", ".join(path.name for path in sorted_paths(paths))


def sorted_paths(paths: Iterable[KernelPath]) -> tuple[KernelPath, ...]:
    """Distinct paths in their canonical order (`KernelPath.rank`)."""
    return tuple(sorted(set(paths), key=lambda path: path.rank))


@dataclass(frozen=True)
class OverlapRules:
    """Which code paths an overlap must be safe on, and which builds the number to declare must
    hold on (the plan fixes the tensors' offsets; each build places its own scratch around them)."""

    paths: tuple[KernelPath, ...]
    size_builds: tuple[Build, ...]
    explicit: bool  # the user named the kernel library
    why: str = field(default="", compare=False)  # for notes: where these paths come from

    @property
    def title(self) -> str:
        """The paths for one-line notes: 'reference, cmsis-nn/none, cmsis-nn/dsp, cmsis-nn/mve'."""
        return paths_text(self.paths)

    @property
    def unknown(self) -> tuple[KernelPath, ...]:
        """Paths whose access order arenalens does not know (no overlap is safe on them)."""
        return tuple(path for path in self.paths if not path.has_rules)


def overlap_rules(
    build: Build, kernels: str | None = None, *, chip: str | None = None
) -> OverlapRules:
    """The build the figures are for + a kernel library the user named apart from it (None: the
    build's own, when the user named it) + the chip of a board preset whose core has no 32-bit
    model → the paths and size builds. The one place that decides which kernels' access order an
    overlap respects (optimize, compare, analyze, report --overlap ask here).

    Named by the user (`kernels`, or the build's library when `Build.kernels_named_by` is the
    user): that library's path on the build's core (every CMSIS-NN path when no core is named),
    sizes on the build. Otherwise, and for a library only a board preset implies (the firmware
    may link another): every library the chip may run, sizes on each of its builds (the
    reference and the CMSIS-NN build of the core; the build alone when no core is named).
    """
    if kernels is None and build.kernels_named_by == NAMED_BY_USER:
        kernels = str(build.kernels)
    if kernels is not None:
        library = kernel_library_named(kernels)
        if not build.is_host and build.kernels != library:
            raise UsageError(
                f"the build {build.name} runs {build.kernels} kernels; kernels '{kernels}' "
                "names another library"
            )
        if library == REFERENCE:
            paths: tuple[KernelPath, ...] = (REFERENCE_PATH,)
        elif build.is_host:
            paths = CMSIS_NN_PATHS
        else:
            paths = (path_of(build),)
        return OverlapRules(paths, (build,), explicit=True, why=f"--kernels {library}")
    if chip is not None:
        vendor = ESP_NN_PATH if chip.startswith(_ESP_CHIP_PREFIX) else VENDOR_PATH
        return OverlapRules(
            (REFERENCE_PATH, vendor),
            (build,),
            explicit=False,
            why=f"{chip} firmware may run TFLM's reference kernels or {vendor.title}",
        )
    if build.is_host:
        return OverlapRules(
            KNOWN_PATHS,
            (build,),
            explicit=False,
            why="no --kernels: every kernel library arenalens knows (reference, CMSIS-NN)",
        )
    assert build.cpu is not None
    if ESP_NN in cpu_named(build.cpu).libraries:
        # esp-tflite-micro links ESP-NN unless its kernels are swapped for TFLM's reference ones.
        libraries, paths, spelled = (REFERENCE, ESP_NN), (REFERENCE_PATH, ESP_NN_PATH), "ESP-NN"
    else:
        libraries, paths, spelled = (REFERENCE, CMSIS_NN), KNOWN_PATHS, "CMSIS-NN"
    size_builds = tuple(
        device_build(build.cpu, library, recording=build.recording, named_by=None)
        for library in libraries
    )
    return OverlapRules(
        paths,
        size_builds,
        explicit=False,
        why=f"no --kernels: {build.cpu} firmware may link the reference or the {spelled} kernels",
    )


def as_overlap_rules(value: OverlapRules | str | None, build: Build) -> OverlapRules:
    """Rules, a kernel library's name ('reference', 'cmsis-nn': named by the user) or None (the
    safe default for the build's chip) → the rules."""
    if isinstance(value, OverlapRules):
        return value
    return overlap_rules(build, None if value is None else str(value))


__all__ = [
    "CMSIS_NN_PATHS",
    "ESP_NN_PATH",
    "KNOWN_PATHS",
    "REFERENCE_PATH",
    "VENDOR_PATH",
    "KernelPath",
    "OverlapRules",
    "as_overlap_rules",
    "build_for",
    "overlap_rules",
    "path_named",
    "path_of",
    "paths_text",
    "sorted_paths",
]
