"""The build records (`build_records.json`) are checked data: the schema, every reference between
rows, each kernel library against its rules package, and one spelling per chip across the build
records and the board catalogue."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from arenalens.builds.abi import ABIS
from arenalens.builds.build import (
    ESP_NN,
    HOST,
    KERNEL_LIBRARIES,
    Build,
    build_named,
    build_summary,
    cpu_named,
    device_build,
)
from arenalens.builds.data import records_document
from arenalens.builds.kernel_paths import ALL_PATHS, KNOWN_PATHS, path_named
from arenalens.builds.npu import npu_named
from arenalens.builds.records import (
    COPROCESSOR_FAMILIES,
    COPROCESSORS,
    CORE_SPELLINGS,
    CORES,
    HOST_RECORD,
    TOOLCHAINS,
)
from arenalens.builds.records import (
    KERNEL_LIBRARIES as LIBRARIES,
)
from arenalens.builds.tflm import tflm_release
from arenalens.errors import UsageError
from arenalens.runtimes.tflm.kernels import registry
from arenalens.runtimes.tflm.kernels.ethos_u import NPU_KERNELS
from arenalens.targets import CHIPS, TARGETS, catalogue_document, get_target

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "src" / "arenalens" / "schemas" / "build_records.schema.json"
DOCUMENT = records_document()


def test_the_records_match_their_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DOCUMENT, schema)


def test_every_name_is_unique_within_its_kind() -> None:
    kinds = (
        "abis",
        "toolchains",
        "kernel_libraries",
        "cores",
        "coprocessor_families",
        "coprocessors",
    )
    for kind in kinds:
        names = [row["name"] for row in DOCUMENT[kind]]
        assert [name for name, count in Counter(names).items() if count > 1] == [], kind
    for library in DOCUMENT["kernel_libraries"]:
        for part in ("code_paths", "releases", "changes"):
            key = "key" if part == "changes" else "name"
            names = [row[key] for row in library.get(part, ())]
            assert len(names) == len(set(names)), (library["name"], part)


def test_every_core_names_records_that_exist() -> None:
    for core in DOCUMENT["cores"]:
        assert core["abi"] in ABIS and core["toolchain"] in TOOLCHAINS, core["name"]
        assert core["default_kernels"] in core["code_paths"], core["name"]
        # Every core may run TFLM's own kernels, and each library's path is one it has.
        assert core["code_paths"].get("reference") == "none", core["name"]
        for library, path in core["code_paths"].items():
            assert LIBRARIES[library].code_path(path).name == path, (core["name"], library)
    assert HOST_RECORD.abi is ABIS["lp64"] and HOST.abi is HOST_RECORD.abi
    assert set(HOST_RECORD.overlap_libraries) <= set(LIBRARIES)


def test_no_spelling_names_two_cores() -> None:
    spellings = [s for core in DOCUMENT["cores"] for s in (core["name"], *core.get("aliases", ()))]
    assert [spelling for spelling, count in Counter(spellings).items() if count > 1] == []
    for core in CORES.values():
        assert cpu_named(core.name) is core
        for alias in core.aliases:
            assert cpu_named(alias.upper().replace("-", "_")) is core


def test_one_spelling_per_chip() -> None:
    """A chip of the catalogue that is also a core of the build records is spelled as the core;
    the other spellings are aliases, and no alias of either file shadows a name of the other."""
    for chip in CHIPS:
        # A chip spelled as one of a core's aliases would be a second spelling of that chip.
        assert CORE_SPELLINGS.get(chip.name, chip.name) == chip.name, chip.name
        if chip.name in CORES:
            assert chip.build_cpu == chip.name, chip.name
    catalogue_aliases = set(catalogue_document()["aliases"])
    core_aliases = {alias for core in CORES.values() for alias in core.aliases}
    assert not core_aliases & set(TARGETS)
    assert not catalogue_aliases & set(CORE_SPELLINGS)
    for core in CORES.values():
        for alias in core.aliases:
            if core.name in TARGETS:
                assert get_target(alias) is TARGETS[core.name]
    assert cpu_named("esp32-s3").name == get_target("esp32-s3").name == "esp32s3"


def test_every_library_with_rules_is_its_rules_package() -> None:
    """A library record names its rules package, which names the library back: the build side
    and the rules side are twins, and nothing else lists libraries."""
    for name, library in LIBRARIES.items():
        if name == "reference":
            assert library.rules == "arenalens.runtimes.tflm.kernels"
            continue
        if library.rules is None:
            assert name not in registry.LIBRARIES
            continue
        kernels = registry.LIBRARIES[name]
        assert kernels.name == name and kernels.title == library.title
    assert set(registry.LIBRARIES) == {
        name for name, library in LIBRARIES.items() if library.rules and name != "reference"
    }


def test_whether_a_librarys_loops_are_known_comes_from_its_rules() -> None:
    """ESP-NN's rules say its int8 loops are untraced and its other types run the reference
    loops: its path has rules (each operator answers), a library without a package has none."""
    assert path_named("esp-nn") is not None and path_named("esp-nn").has_rules  # type: ignore[union-attr]
    assert not path_named("vendor").has_rules  # type: ignore[union-attr]
    assert all(path.has_rules for path in KNOWN_PATHS)
    assert [path.name for path in ALL_PATHS] == [
        "reference", "cmsis-nn/none", "cmsis-nn/dsp", "cmsis-nn/mve", "esp-nn", "vendor",
    ]  # fmt: skip


def test_every_library_release_and_change_is_consistent() -> None:
    for library in LIBRARIES.values():
        names = library.release_names
        if library.default_release is not None:
            assert library.default_release in names, library.name
        for change in library.changes:
            assert change.release in names, (library.name, change.key)
        for release in library.releases:
            first, last = tflm_release(release.tflm_from), tflm_release(release.tflm_until)
            assert first.time <= last.time, (library.name, release.name)
        # Each release has every change of the releases before it (changes accumulate).
        for older, newer in zip(library.releases, library.releases[1:], strict=False):
            assert older.changes <= newer.changes, (library.name, newer.name)
        for path in library.code_paths:
            if path.example_core is not None:
                assert CORES[path.example_core].code_path_of(library.name) == path.name
    esp = LIBRARIES[ESP_NN]
    assert not esp.release("1.1.2").has("depthwise-int16-gap-32")
    assert esp.release("1.2.0").has("depthwise-int16-gap-32")
    assert esp.release("1.2.3").has("p4-conv") and not esp.release("1.2.2").has("p4-conv")
    with pytest.raises(KeyError):
        esp.release("1.2.3").has("no-such-change")


def test_libraries_options_take_come_from_the_records() -> None:
    assert KERNEL_LIBRARIES == ("reference", "cmsis-nn", "esp-nn")  # every library a core links
    assert device_build("esp32s3", "espnn-ansi").isa == "esp-ansi"
    assert device_build("m7", "CMSISNN").kernels == "cmsis-nn"
    with pytest.raises(UsageError, match="a release is taken for esp-nn only"):
        device_build("m7", "cmsis-nn@1.0.0")


def test_a_build_is_made_of_records_and_survives_a_process_boundary() -> None:
    import pickle

    build = device_build("esp32-s3", "esp-nn@1.2.0")
    assert build.core is CORES["esp32s3"] and build.library is LIBRARIES["esp-nn"]
    assert build.library_release is LIBRARIES["esp-nn"].release("1.2.0")
    assert build.code_path is LIBRARIES["esp-nn"].code_path("esp32s3")
    again = pickle.loads(pickle.dumps(build))
    assert again == build and hash(again) == hash(build) and isinstance(again, Build)


def test_a_coprocessor_row_makes_a_build_that_registers_its_operators() -> None:
    """An Ethos-U configuration is a row: its family names the cores that drive it (by their
    toolchain) and the custom operators only its builds register; the build name carries it
    after '+'."""
    for npu in COPROCESSORS.values():
        family = COPROCESSOR_FAMILIES[npu.family]
        assert family.host_toolchain in TOOLCHAINS and npu.product in family.products
        assert npu_named(npu.name) is npu
    assert COPROCESSOR_FAMILIES["ethos-u"].registers == NPU_KERNELS  # the rules' NPU kernels
    build = build_named("cortex-m55/cmsis-nn+ethos-u55-128")
    assert build.npu is COPROCESSORS["ethos-u55-128"] and build.name.endswith("+ethos-u55-128")
    assert build_summary(build)["npu"] == "ethos-u55-128" and "npu" not in build_summary(HOST)
    assert registry.is_registered("CUSTOM:ethos-u", build)
    assert not registry.is_registered("CUSTOM:ethos-u", device_build("cortex-m55", "cmsis-nn"))
    with pytest.raises(UsageError, match="driven by a Cortex-M core, not by ESP32-S3"):
        build_named("esp32s3/esp-nn+ethos-u55-128")


def test_memory_banks_are_rows_of_chips_and_boards() -> None:
    """What issue 29's banks do: a chip lists its banks, a board adds the ones it carries."""
    from arenalens.targets import _board, _chip, bank_document

    bank = {"name": "sram", "kind": "on-chip", "size_bytes": 1024, "source": "a manual"}
    chip_row = {**catalogue_document()["chips"][0], "banks": [bank]}
    board_row = {
        "name": "test-board",
        "title": "a test board",
        "chip": chip_row["name"],
        "banks": [{**bank, "name": "psram", "kind": "external"}],
    }
    chip = _chip(chip_row)
    board = _board(board_row, {chip.name: chip}, {})
    assert [b.name for b in board.banks] == ["sram", "psram"]
    assert bank_document(chip.banks[0])["size_bytes"] == 1024
    targets_schema = json.loads((SCHEMA.parent / "targets.schema.json").read_text())
    document = {**catalogue_document(), "chips": [chip_row], "boards": [board_row]}
    document["board_layouts"], document["aliases"] = {}, {}
    jsonschema.validate(document, targets_schema)


# Comparisons above the runtime that name a record for another reason than choosing by it.
_NAMED_FOR_ANOTHER_REASON = {
    ("firmware.py", "ethos-u"),  # the custom operator code TFLM's resolver has AddEthosU for
}
_PACKAGE = ROOT / "src" / "arenalens"


def _record_names() -> set[str]:
    """Every name and alias of a core, kernel library (and its code paths) or co-processor:
    what an if-branch on a chip or library would compare with ('none', a code path of every
    library, is a common word and left out)."""
    names = {spelling for core in CORES.values() for spelling in (core.name, *core.aliases)}
    names |= {core.architecture for core in CORES.values()}
    for library in LIBRARIES.values():
        names |= {library.name, *library.aliases, *(path.name for path in library.code_paths)}
    names |= set(COPROCESSORS) | set(COPROCESSOR_FAMILIES)
    return names - {"none"}


def _named_in_branches(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) for each string constant a comparison (==, !=, in), a dict's key or a
    startswith/endswith call takes that is a record's name (or, for the calls, begins one)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        exact: list[ast.expr] = []
        prefixes: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            exact = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            exact = [key for key in node.keys if key is not None]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith", "removeprefix")
        ):
            prefixes = list(node.args)
        for text in _texts(exact):
            if text in names:
                found.append((node.lineno, text))
        for text in _texts(prefixes):
            if len(text) >= 3 and any(name.startswith(text) for name in names):
                found.append((node.lineno, text))
    return found


def _texts(nodes: list[ast.expr]) -> list[str]:
    """The string constants among the nodes and the tuples, sets and lists they are."""
    items = [
        e for n in nodes for e in (n.elts if isinstance(n, ast.Tuple | ast.Set | ast.List) else [n])
    ]
    return [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def test_no_if_branch_above_the_runtime_names_a_chip_or_library() -> None:
    """What differs by core, library or co-processor is read from its record: no module outside
    `runtimes/` (whose rules are the libraries' twins) and `builds/` (which loads the records)
    compares a name of one."""
    names = _record_names()
    found = []
    for path in sorted(_PACKAGE.rglob("*.py")):
        relative = path.relative_to(_PACKAGE).as_posix()
        if relative.startswith(("runtimes/", "builds/")):
            continue
        for line, name in _named_in_branches(path.read_text(encoding="utf-8"), names):
            if (relative, name) not in _NAMED_FOR_ANOTHER_REASON:
                found.append(f"{relative}:{line} compares {name!r}")
    assert not found, "read the record instead:\n" + "\n".join(found)


def test_the_name_guard_sees_every_spelling() -> None:
    names = _record_names()
    source = (
        'if build.kernels == "cmsis-nn": pass\n'
        'if cpu in ("esp32s3", "m7"): pass\n'
        'titles = {"esp-nn": "ESP-NN"}\n'
        'if target.cpu.startswith("cortex-m"): pass\n'
        'if isa != "mve": pass\n'
        'if args.mode == "none": pass\n'
    )
    assert sorted({line for line, _ in _named_in_branches(source, names)}) == [1, 2, 3, 4, 5]
