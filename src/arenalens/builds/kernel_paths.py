"""Kernel code paths: which loops a TFLM build runs for each kernel → the builds a plan that lets
outputs share bytes with inputs computes the right outputs on.

An offline plan whose outputs start below the inputs they consume (`optimize --overlap`) relies on
the order each kernel reads and writes memory. That order is a property of the *code path*, not of
the arena's bytes: TFLM's reference kernels run the same loops on every core, while CMSIS-NN picks
its loops by the instruction set it is compiled for (pure C, the DSP extension or MVE; `build`).
So a plan is valid for a set of paths, and the builds it may meet are judged by theirs:

* `KernelPath`: one library and, for a library whose loops differ by code path (CMSIS-NN, its
  record's `access_by_code_path`), one code path. `path_of(build)` is the path a build runs;
  `build_for(path)` a build that runs it (what the access rules are asked with). Whether a path's
  access orders are known is whether its library has a rules package (`has_rules`): the rules
  then answer operator by operator (ESP-NN's refuse every int8 overlap, its int8 loops being
  untraced, and run the reference loops for the other types).
* `OverlapRules`: the paths a plan must be safe on and the builds whose `kTensorArenaSize` it
  must hold on. `overlap_rules(build, kernels)` gives them: when the user names the kernel library
  (`--kernels`, or a build whose `kernels_named_by` is the user), that library's path on the
  build's core; otherwise (a board preset's implied library included) every library the chip may
  run. On a
  Cortex-M core (or with no core named) that is the reference kernels and CMSIS-NN on every code
  path: a core's default path is the compiler's choice and flags move it (a Cortex-M55 built with
  `-mfloat-abi=soft` runs the DSP path). On an ESP32 chip it is the reference kernels and ESP-NN,
  on a core arenalens has no 32-bit model of (other RISC-V MCUs) the vendor's kernels, whose
  access order is not known here: no overlap is then safe.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field

from arenalens.builds.build import (
    CMSIS_NN,
    ESP_NN,
    HOST,
    ISA_NONE,
    NAMED_BY_USER,
    REFERENCE,
    Build,
    device_build,
    kernel_library_named,
    spelled,
)
from arenalens.builds.records import CORE_SPELLINGS, CORES, HOST_RECORD, KERNEL_LIBRARIES
from arenalens.errors import UsageError
from arenalens.records import record

# Kernels arenalens has no rules for: the vendor libraries of cores without a 32-bit model
# (NMSIS-NN, KPU drivers, ...).
VENDOR = "vendor"
_LIBRARY_ORDER = tuple(KERNEL_LIBRARIES)


@record(slots=True)
class KernelPath:
    """One kernel library and, for one whose loops differ per code path (CMSIS-NN), the code
    path it is compiled for."""

    kernels: str  # a kernel library's name (`records.KERNEL_LIBRARIES`)
    isa: str = ISA_NONE  # the code path, for a library whose access differs by it; else 'none'

    @property
    def name(self) -> str:
        """'reference', 'cmsis-nn/dsp', ...: how records and documents spell it."""
        if KERNEL_LIBRARIES[self.kernels].access_by_code_path:
            return f"{self.kernels}/{self.isa}"
        return str(self.kernels)

    @property
    def title(self) -> str:
        """The path in words."""
        library = KERNEL_LIBRARIES[self.kernels]
        if library.access_by_code_path:
            return f"{library.path_title}, {library.code_path(self.isa).description}"
        return library.path_title

    @property
    def rank(self) -> tuple[int, int]:
        """Sort key: the records' order of libraries, then of a library's code paths."""
        library = KERNEL_LIBRARIES[self.kernels]
        names = [path.name for path in library.code_paths]
        return (
            _LIBRARY_ORDER.index(self.kernels),
            names.index(self.isa) if self.isa in names else 0,
        )

    @property
    def has_rules(self) -> bool:
        """True when arenalens knows this path's access orders: its library has a rules
        package (whose kernels say, operator by operator, which loops are traced)."""
        return KERNEL_LIBRARIES[self.kernels].has_rules


def library_paths(library: str) -> tuple[KernelPath, ...]:
    """Every code path of a library an overlap must hold on: one per code path for a library
    whose loops differ by it (CMSIS-NN), else the library's one."""
    record = KERNEL_LIBRARIES[library]
    if not record.access_by_code_path:
        return (KernelPath(library),)
    return tuple(KernelPath(library, path.name) for path in record.code_paths)


REFERENCE_PATH = KernelPath(REFERENCE)
CMSIS_NN_PATHS = library_paths(CMSIS_NN)
# The paths an overlap holds on when no core is named (the host's libraries: the reference
# kernels and CMSIS-NN on every code path).
KNOWN_PATHS = tuple(
    path for library in HOST_RECORD.overlap_libraries for path in library_paths(library)
)
ESP_NN_PATH = KernelPath(ESP_NN)
VENDOR_PATH = KernelPath(VENDOR)
# Every path a plan may be asked about, rules or not, in the records' order.
ALL_PATHS = tuple(path for library in KERNEL_LIBRARIES for path in library_paths(library))


def path_of(build: Build) -> KernelPath:
    """The code path a build runs: its library and, where the library's loops differ by it, its
    code path on the build's core."""
    if build.library.access_by_code_path:
        return KernelPath(build.kernels, build.isa)
    return KernelPath(build.kernels)


def path_named(text: str) -> KernelPath | None:
    """'reference', 'cmsis-nn/mve', 'esp-nn', ... (as `KernelPath.name` spells it) → the path;
    None for a name this version does not know."""
    kernels, _, isa = text.partition("/")
    library = KERNEL_LIBRARIES.get(kernels)
    if library is None:
        return None
    if library.access_by_code_path:
        known = any(path.name == isa for path in library.code_paths)
        return KernelPath(kernels, isa) if known else None
    return None if isa else KernelPath(kernels)


def build_for(path: KernelPath) -> Build:
    """A build that runs this path: a core that takes it, for a library whose loops differ by
    code path; else the host wheel (the reference loops the access orders are asked about)."""
    library = KERNEL_LIBRARIES[path.kernels]
    if library.access_by_code_path:
        core = library.code_path(path.isa).example_core
        assert core is not None, f"{path.name} names no example core"
        return device_build(core, path.kernels)
    return HOST


def paths_text(paths: Iterable[KernelPath]) -> str:
    """'reference, cmsis-nn/none, cmsis-nn/dsp' (in canonical order, for notes and records)."""
    return ", ".join(path.name for path in sorted_paths(paths))


def sorted_paths(paths: Iterable[KernelPath]) -> tuple[KernelPath, ...]:
    """Distinct paths in their canonical order (`KernelPath.rank`)."""
    return tuple(sorted(set(paths), key=lambda path: path.rank))


@record()
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
        kernels = build.kernels
    if kernels is not None:
        library = kernel_library_named(kernels)
        if not build.is_host and build.library != library:
            raise UsageError(
                f"the build {build.name} runs {build.kernels} kernels; kernels '{kernels}' "
                "names another library"
            )
        if build.is_host or not library.access_by_code_path:
            paths: tuple[KernelPath, ...] = library_paths(library.name)
        else:
            paths = (path_of(build),)
        return OverlapRules(paths, (build,), explicit=True, why=f"--kernels {library.name}")
    if chip is not None:
        return _chip_rules(build, chip)
    if build.is_host:
        return OverlapRules(
            KNOWN_PATHS,
            (build,),
            explicit=False,
            why="no --kernels: every kernel library arenalens knows ("
            + ", ".join(KERNEL_LIBRARIES[name].title for name in HOST_RECORD.overlap_libraries)
            + ")",
        )
    assert build.core is not None
    libraries = _linked(build.core.libraries)
    size_builds = tuple(
        device_build(build.core.name, library, recording=build.recording, named_by=None)
        for library in libraries
    )
    return OverlapRules(
        tuple(path for library in libraries for path in library_paths(library)),
        size_builds,
        explicit=False,
        why=f"no --kernels: {build.core.name} firmware may link the "
        + " or the ".join(KERNEL_LIBRARIES[library].title for library in libraries)
        + " kernels",
    )


def _linked(libraries: Iterable[str]) -> tuple[str, ...]:
    """Kernel library names in the records' order."""
    chosen = set(libraries)
    return tuple(name for name in KERNEL_LIBRARIES if name in chosen)


def _chip_rules(build: Build, chip: str) -> OverlapRules:
    """A board preset's chip: every library its core's firmware may link when it is a core of
    the records; else (no 32-bit model of it) TFLM's reference kernels or its vendor's."""
    core = CORES.get(CORE_SPELLINGS.get(spelled(chip), ""))
    libraries = (REFERENCE, VENDOR) if core is None else _linked(core.libraries)
    paths = tuple(path for library in libraries for path in library_paths(library))
    others = " or ".join(path.title for path in paths if path.kernels != REFERENCE)
    return OverlapRules(
        paths,
        (build,),
        explicit=False,
        why=f"{chip} firmware may run TFLM's reference kernels or {others}",
    )


def as_overlap_rules(value: OverlapRules | str | None, build: Build) -> OverlapRules:
    """Rules, a kernel library's name ('reference', 'cmsis-nn': named by the user) or None (the
    safe default for the build's chip) → the rules."""
    if isinstance(value, OverlapRules):
        return value
    return overlap_rules(build, None if value is None else str(value))


__all__ = [
    "ALL_PATHS",
    "CMSIS_NN_PATHS",
    "ESP_NN_PATH",
    "KNOWN_PATHS",
    "REFERENCE_PATH",
    "VENDOR_PATH",
    "KernelPath",
    "OverlapRules",
    "as_overlap_rules",
    "build_for",
    "library_paths",
    "overlap_rules",
    "path_named",
    "path_of",
    "paths_text",
    "sorted_paths",
]
