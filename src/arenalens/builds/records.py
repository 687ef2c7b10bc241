"""Build records: the cores, kernel libraries (their code paths, releases and the changes each
release has), toolchains and co-processors a `Build` is made of, as frozen values loaded once from
checked data (`build_records.json`, schema `schemas/build_records.schema.json`, checked by
`tests/builds/test_records.py`), as Vela builds its `arch` from a configuration file.

* A **core** (`Core`) names its C ABI, the toolchain (and so the TFLM release) its SDK builds
  with, and for each kernel library its firmware may link the code path that library takes there
  (CMSIS-NN's instruction-set path, esp-nn's chip functions).
* A **kernel library** (`KernelLibrary`) is the build-side twin of its rules package
  (`rules`: `runtimes/tflm/kernels/<library>/`, whose variants say what its kernels allocate and
  the order their loops read and write): its code paths, its releases (`LibraryRelease`) with the
  TFLM releases each is modelled for, and the named changes between them (`LibraryChange`, as
  TFLM's are in `tflm.py`): a rule asks `build.library_release.has(KEY)`, never compares
  versions. Whether a library's access orders are known is whether it has a rules package
  (`has_rules`), not a flag of its own.
* A **co-processor** (`Npu`: an Ethos-U configuration) belongs to a family
  (`CoprocessorFamily`) that names the cores that may drive it (by their toolchain), the custom
  operators only its builds register, and its driver.

Adding one is a row (and, for a library, its rules package); nothing else lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from arenalens.builds.abi import ABIS, Abi
from arenalens.builds.data import from_row, records_document
from arenalens.records import record

_Record = TypeVar("_Record")


def _identified_by(*fields: str) -> Callable[[type[_Record]], type[_Record]]:
    """A record is equal to another of its type with the same key (its name; a release's and a
    code path's with their library's): records are loaded once, and a build that crossed a
    process boundary is still the same build. Hashing the key alone keeps a `Build` cheap as a
    cache key."""

    def decorate(cls: type[_Record]) -> type[_Record]:
        def key(record: Any) -> tuple[Any, ...]:
            return (cls.__name__, *(getattr(record, name) for name in fields))

        def equal(self: Any, other: object) -> bool:
            return type(other) is type(self) and key(self) == key(other)

        def short(self: Any) -> str:
            return f"{cls.__name__}({', '.join(repr(part) for part in key(self)[1:])})"

        cls.__eq__ = equal  # type: ignore[method-assign]
        cls.__hash__ = lambda self: hash(key(self))  # type: ignore[method-assign]
        cls.__repr__ = short  # type: ignore[method-assign]
        return cls

    return decorate


@_identified_by("library", "name")
@record(slots=True, eq=False)
class CodePath:
    """One way a kernel library is compiled: CMSIS-NN for the DSP extension, esp-nn's ESP32-S3
    functions, ... (`Build.isa` spells its name)."""

    library: str
    name: str
    title: str  # in a build's title: 'ESP32-S3 path', 'DSP'
    description: str  # in notes about overlaps: 'DSP extension (Cortex-M4, M7, M33)'
    example_core: str | None = None  # a core that takes it by default (what rules are asked with)
    option: str | None = None  # a --kernels spelling that selects it on any core ('esp-nn-ansi')


@record(slots=True)
class LibraryChange:
    """One change between a kernel library's releases that moves arena bytes."""

    key: str
    release: str  # the first release with it
    commit: str  # "" when only its release is known
    summary: str


@_identified_by("library", "name")
@record(slots=True, eq=False)
class LibraryRelease:
    """One release of a kernel library: the TFLM releases it is modelled with and the changes
    it has."""

    library: str
    name: str  # as --kernels LIBRARY@RELEASE and documents spell it
    tflm_from: str  # the oldest TFLM commit whose build of this library the rules describe
    tflm_until: str  # the newest
    changes: frozenset[str]
    source: str

    def has(self, key: str) -> bool:
        """Does this release have a change (`LibraryChange.key`)? KeyError for a key the
        library does not list."""
        if key not in KERNEL_LIBRARIES[self.library].change_keys:
            raise KeyError(f"{self.library} lists no change '{key}'")
        return key in self.changes


@_identified_by("name")
@record(slots=True, eq=False)
class KernelLibrary:
    """A TFLM kernel library: which kernels' code (OpData, scratch, access order) a build runs."""

    name: str  # as `Build.kernels` and --kernels spell it
    title: str  # 'CMSIS-NN': a build's title says '<title> kernels'
    path_title: str  # its code paths in notes about overlaps
    rules: str | None  # the module of its rules (None: arenalens has none)
    access_by_code_path: bool  # its loops (and so overlaps) differ per code path
    code_paths: tuple[CodePath, ...]
    source: str
    release_title: str = ""  # how a figure names its release: 'CMSIS-NN 4ab83cc3cc98'
    releases: tuple[LibraryRelease, ...] = ()  # oldest first; none: TFLM's own release
    default_release: str | None = None
    changes: tuple[LibraryChange, ...] = ()
    title_names_code_path: bool = False  # a build's title names the code path
    shipped_by: str = ""  # the distribution a build's title names ('esp-tflite-micro v1.3.8')
    aliases: tuple[str, ...] = ()  # other spellings --kernels takes ('cmsisnn')

    @property
    def has_rules(self) -> bool:
        """True when arenalens has this library's rules (its kernels' allocations and access
        orders, from their sources); without them no overlap is known to be safe on it."""
        return self.rules is not None

    @property
    def change_keys(self) -> frozenset[str]:
        """The keys of the changes its releases list."""
        return frozenset(change.key for change in self.changes)

    def code_path(self, name: str) -> CodePath:
        """The code path of this name (KeyError for one the library does not have)."""
        for path in self.code_paths:
            if path.name == name:
                return path
        raise KeyError(f"{self.name} has no code path '{name}'")

    def release(self, name: str) -> LibraryRelease:
        """The release of this name (KeyError for one not modelled)."""
        for release in self.releases:
            if release.name == name:
                return release
        raise KeyError(f"{self.name} {name} is not modelled")

    @property
    def release_names(self) -> tuple[str, ...]:
        """Its modelled releases, oldest first."""
        return tuple(release.name for release in self.releases)


@_identified_by("name")
@record(slots=True, eq=False)
class Toolchain:
    """How a core family's firmware is built, and the TFLM sources its SDK compiles."""

    name: str
    title: str  # as the layout's assumptions name it
    tflm: str  # the TFLM commit its builds compile unless --tflm says otherwise
    source: str


@_identified_by("name")
@record(slots=True, eq=False)
class Core:
    """A core (or chip) as far as arena bytes care: its ABI, the kernel libraries its firmware
    can link and the code path each takes there, and the toolchain that builds it."""

    name: str  # as --cpu and build names spell it
    title: str
    architecture: str
    abi: Abi
    toolchain: Toolchain
    # (kernel library name, the name of the code path it takes on this core), in the records'
    # order.
    code_paths: tuple[tuple[str, str], ...]
    default_kernels: str  # the library a build links without --kernels
    aliases: tuple[str, ...] = ()

    @property
    def libraries(self) -> frozenset[str]:
        """The kernel libraries its firmware may link."""
        return frozenset(library for library, _ in self.code_paths)

    def code_path_of(self, library: str) -> str:
        """The name of the code path a kernel library takes on this core (KeyError when its
        firmware does not link it)."""
        for name, path in self.code_paths:
            if name == library:
                return path
        raise KeyError(f"{self.name} does not link {library}")


@record(slots=True)
class CoprocessorFamily:
    """What every configuration of one co-processor family shares: the cores that may drive it
    (those built with `host_toolchain`), the custom operators only its builds register, and the
    driver its builds link."""

    name: str  # 'ethos-u'
    title: str  # "Arm's Ethos-U NPUs"
    driven_by: str  # 'a Cortex-M core'
    host_toolchain: str  # a `Toolchain` name: the cores built with it may drive one
    registers: frozenset[str]  # opcodes as kernel rules name them ('CUSTOM:ethos-u')
    products: Mapping[int, str]  # the CONFIG register's product field → the product's name
    core_driver: str  # the core driver commit TFLM pins
    source: str


@_identified_by("name")
@record(slots=True, eq=False)
class Npu:
    """One co-processor configuration a build may drive (an Arm Ethos-U: what the driver checks a
    command stream against, and the Vela settings arenalens compiles with when nothing else is
    said). A row of `build_records.json`'s "coprocessors"."""

    name: str  # Vela's --accelerator-config: 'ethos-u55-128'
    product: int  # the CONFIG register's product field: 0 U55, 1 U65, 2 U85
    log2_macs: int  # its macs_per_cc field: log2 of the MACs per cycle
    system_config: str  # Vela's default system configuration for it (vela.ini)
    memory_mode: str  # ... and memory mode
    core_driver: str  # the Ethos-U core driver commit TFLM pins
    family: str = "ethos-u"

    @property
    def macs_per_cycle(self) -> int:
        return 1 << self.log2_macs

    @property
    def title(self) -> str:
        """'Arm Ethos-U55 NPU (128 MACs/cycle)'."""
        product = COPROCESSOR_FAMILIES[self.family].products[self.product]
        return f"Arm {product} NPU ({self.macs_per_cycle} MACs/cycle)"

    @property
    def registers(self) -> frozenset[str]:
        """The custom operators only builds driving it register."""
        return COPROCESSOR_FAMILIES[self.family].registers


@record(slots=True)
class Host:
    """The x86-64 `tflite_micro` wheel's side of the records: its ABI, and the kernel libraries
    an overlap plan must hold on when no core is named."""

    title: str
    abi: Abi
    overlap_libraries: tuple[str, ...]


def _library(row: Mapping[str, Any]) -> KernelLibrary:
    name = row["name"]
    changes = tuple(
        LibraryChange(change["key"], change["release"], change["commit"], change["summary"])
        for change in row.get("changes", ())
    )
    order = [release["name"] for release in row.get("releases", ())]
    releases = tuple(
        LibraryRelease(
            library=name,
            name=release["name"],
            tflm_from=release["tflm_from"],
            tflm_until=release["tflm_until"],
            changes=frozenset(
                change.key
                for change in changes
                if order.index(change.release) <= order.index(release["name"])
            ),
            source=release["source"],
        )
        for release in row.get("releases", ())
    )
    return KernelLibrary(
        name=name,
        title=row["title"],
        path_title=row["path_title"],
        rules=row["rules"],
        access_by_code_path=row["access_by_code_path"],
        code_paths=tuple(
            CodePath(
                name,
                path["name"],
                path["title"],
                path["description"],
                path.get("example_core"),
                path.get("option"),
            )
            for path in row["code_paths"]
        ),
        source=row["source"],
        release_title=row.get("release_title", ""),
        releases=releases,
        default_release=row.get("default_release"),
        changes=changes,
        title_names_code_path=row.get("title_names_code_path", False),
        shipped_by=row.get("shipped_by", ""),
        aliases=tuple(row.get("aliases", ())),
    )


def _core(row: Mapping[str, Any], toolchains: Mapping[str, Toolchain]) -> Core:
    return from_row(
        Core,
        row,
        abi=ABIS[row["abi"]],
        toolchain=toolchains[row["toolchain"]],
        code_paths=tuple(row["code_paths"].items()),
        aliases=tuple(row.get("aliases", ())),
    )


def _family(row: Mapping[str, Any]) -> CoprocessorFamily:
    return from_row(
        CoprocessorFamily,
        row,
        registers=frozenset(row["registers"]),
        products=MappingProxyType({int(key): name for key, name in row["products"].items()}),
    )


def _npu(row: Mapping[str, Any], families: Mapping[str, CoprocessorFamily]) -> Npu:
    return from_row(Npu, row, core_driver=families[row["family"]].core_driver)


_DOCUMENT = records_document()
TOOLCHAINS: Mapping[str, Toolchain] = MappingProxyType(
    {row["name"]: from_row(Toolchain, row) for row in _DOCUMENT["toolchains"]}
)
KERNEL_LIBRARIES: Mapping[str, KernelLibrary] = MappingProxyType(
    {row["name"]: _library(row) for row in _DOCUMENT["kernel_libraries"]}
)
CORES: Mapping[str, Core] = MappingProxyType(
    {row["name"]: _core(row, TOOLCHAINS) for row in _DOCUMENT["cores"]}
)
COPROCESSOR_FAMILIES: Mapping[str, CoprocessorFamily] = MappingProxyType(
    {row["name"]: _family(row) for row in _DOCUMENT["coprocessor_families"]}
)
COPROCESSORS: Mapping[str, Npu] = MappingProxyType(
    {row["name"]: _npu(row, COPROCESSOR_FAMILIES) for row in _DOCUMENT["coprocessors"]}
)
HOST_RECORD = Host(
    title=_DOCUMENT["host"]["title"],
    abi=ABIS[_DOCUMENT["host"]["abi"]],
    overlap_libraries=tuple(_DOCUMENT["host"]["overlap_libraries"]),
)
# Every spelling --cpu takes for a core (after lower-casing, '_' and ' ' to '-', '+' to 'plus').
CORE_SPELLINGS: Mapping[str, str] = MappingProxyType(
    {spelling: core.name for core in CORES.values() for spelling in (core.name, *core.aliases)}
)


def linked_libraries() -> tuple[str, ...]:
    """The kernel libraries some core links, in the records' order (what --kernels takes)."""
    linked = {name for core in CORES.values() for name in core.libraries}
    return tuple(name for name in KERNEL_LIBRARIES if name in linked)


__all__ = [
    "COPROCESSORS",
    "COPROCESSOR_FAMILIES",
    "CORES",
    "CORE_SPELLINGS",
    "HOST_RECORD",
    "KERNEL_LIBRARIES",
    "TOOLCHAINS",
    "CodePath",
    "CoprocessorFamily",
    "Core",
    "Host",
    "KernelLibrary",
    "LibraryChange",
    "LibraryRelease",
    "Npu",
    "Toolchain",
    "linked_libraries",
]
