"""The kernel registry's completeness, generated from the registry itself: every kernel a build
registers has one rule that states every fact about it, and every kernel a library replaces has a
variant that embeds the reference rule and says where the library's kernel differs."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from arenalens.builds.build import HOST, REFERENCE
from arenalens.builds.records import KERNEL_LIBRARIES as LIBRARY_RECORDS
from arenalens.diagnostics.operands import LITERT_ONLY, operands_of
from arenalens.runtimes import tflm
from arenalens.runtimes.tflm import kernels as kernels_package
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels.base import AccessOrder, KernelRule
from arenalens.runtimes.tflm.kernels.families import Families
from arenalens.runtimes.tflm.kernels.registry import (
    LIBRARIES,
    REFERENCE_KERNELS,
    library_rule,
    registered_opcodes,
    stands_in,
)
from arenalens.tflite.reader import parse_model
from tests.conformance.cases import all_cases
from tests.conformance.targets import TARGETS

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"


def test_every_registered_kernel_has_a_reference_rule() -> None:
    assert sorted(registered_opcodes() - set(REFERENCE_KERNELS)) == []
    for opcode, rule in REFERENCE_KERNELS.items():
        assert rule.opcode == opcode and rule.library == REFERENCE and rule.reference is None


def test_the_family_tables_list_every_rule_of_every_module() -> None:
    """The registry's and each library's table of which module holds which operator is what the
    modules' RULES say (a module checks it when it loads), and no family module of the package is
    left out of it."""
    package = Path(kernels_package.__file__).parent
    tables = {
        package: REFERENCE_KERNELS,
        **{package / name.replace("-", "_"): LIBRARIES[name].rules for name in LIBRARIES},
    }
    helpers = {"base", "common", "families", "quantization", "refusals", "registry", "setups"}
    helpers |= {"setup_memo"}
    helpers |= {"access", "buffers", "traces", "variants", "scratch"}
    for folder, table in tables.items():
        assert isinstance(table, Families)
        dict(table)  # imports every module of the table: raises if a RULES differs from it
        listed = {table.module_of(opcode).rsplit(".", 1)[1] for opcode in table}
        modules = {path.stem for path in folder.glob("*.py")} - {"__init__"} - helpers
        assert modules == listed, folder
        for opcode in table:
            module = importlib.import_module(table.module_of(opcode))
            assert table[opcode] in module.RULES


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_every_replaced_kernel_is_a_variant_of_the_reference_rule(library: str) -> None:
    kernels = LIBRARIES[library]
    assert kernels.name == library
    assert sorted(kernels.replaces - registered_opcodes()) == []
    assert sorted(set(kernels.rules) - kernels.replaces) == []
    for opcode in sorted(kernels.replaces):
        rule = kernels.rules.get(opcode)
        if rule is None:
            continue  # an estimate until the library's rule exists (stands_in)
        assert rule.opcode == opcode and rule.library == library
        assert rule.reference is REFERENCE_KERNELS[opcode], opcode
        # The library's kernel runs its own loops: it must say how they read and write, even
        # where the answer is "not analysed" (inheriting the reference order would be a guess).
        assert rule.access is not rule.reference.access, opcode


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_a_build_takes_the_variant_where_there_is_one(library: str) -> None:
    kernels = LIBRARIES[library]
    for opcode in sorted(registered_opcodes()):
        rule = library_rule(opcode, library)
        assert isinstance(rule, KernelRule)
        expected = kernels.rules.get(opcode, REFERENCE_KERNELS[opcode])
        assert rule is expected, opcode
    assert library_rule("CONV_2D", REFERENCE) is REFERENCE_KERNELS["CONV_2D"]


def test_stands_in_names_replaced_kernels_without_a_variant() -> None:
    for library, kernels in LIBRARIES.items():
        build = replace(HOST, library=LIBRARY_RECORDS[library])
        for opcode in sorted(registered_opcodes()):
            missing = opcode in kernels.replaces and opcode not in kernels.rules
            assert stands_in(opcode, build) == missing, opcode


def _structs() -> dict[int, Struct]:
    """Every struct the TFLM modules define, nested ones included, by identity."""
    found: dict[int, Struct] = {}

    def visit(layout: Struct) -> None:
        if id(layout) not in found:
            found[id(layout)] = layout
            for field in layout.fields:
                if isinstance(field.ctype, Struct):
                    visit(field.ctype)

    for module in pkgutil.walk_packages(tflm.__path__, tflm.__name__ + "."):
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, Struct):
                visit(value)
    return found


def test_every_struct_is_defined_once() -> None:
    # A variant embeds the reference kernel's structs instead of copying them (a copy drifts: two
    # copies once spelled a feature "compression" where the reference used the constant).
    # "OpData" is every kernel's own struct in its anonymous namespace, one per kernel file (and
    # "NodeData" every ESP-NN kernel file's).
    names = Counter(layout.name for layout in _structs().values())
    own = {"OpData", "NodeData"}
    assert {name: count for name, count in names.items() if count > 1 and name not in own} == {}


@pytest.mark.parametrize("library", [REFERENCE, *sorted(LIBRARIES)])
def test_every_kernel_states_its_operands_and_overlaps_only_data(library: str) -> None:
    for opcode in sorted(registered_opcodes()):
        rule = library_rule(opcode, library)
        assert rule is not None
        taken = rule.operands
        assert all(taken.inputs), opcode
        assert taken.max_inputs is None or taken.min_inputs <= taken.max_inputs <= len(taken.inputs)
        assert taken.max_outputs is None or taken.min_outputs <= taken.max_outputs, opcode
        assert all(slot < len(taken.inputs) for slot in taken.optional), opcode
        orders = [rule.access] if isinstance(rule.access, AccessOrder) else []
        for order in orders:
            slots = order.data_inputs or ()
            assert all(taken.role(slot) for slot in slots), (opcode, slots)


def _measured_on_the_wheel() -> dict[str, dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for path in sorted((CONFORMANCE / "data" / "host").glob("*.json")):
        found.update(json.loads(path.read_text())["cases"])
    return found


def test_every_case_the_real_runtime_sets_up_fits_its_kernels_operands() -> None:
    # The measured conformance cases are the runtime's word on what a kernel accepts: a case
    # the wheel set up never breaks the operands its rule states (counts, omitted slots).
    measured = _measured_on_the_wheel()
    broken = []
    for case in all_cases():
        if not measured.get(case.id, {}).get("loads"):
            continue
        model = parse_model(case.model(), case.id)
        for subgraph in model.subgraphs:
            for op in subgraph.operators:
                taken = REFERENCE_KERNELS[op.opcode].operands
                inputs, outputs = len(op.inputs), len(op.outputs)
                omitted = [slot for slot, index in enumerate(op.inputs) if index < 0]
                if (
                    inputs < taken.min_inputs
                    or (taken.max_inputs is not None and inputs > taken.max_inputs)
                    or outputs < taken.min_outputs
                    or (taken.max_outputs is not None and outputs > taken.max_outputs)
                    or any(slot not in taken.optional for slot in omitted)
                ):
                    broken.append((case.id, op.opcode, inputs, outputs, omitted))
    assert broken == []


def test_the_litert_only_operands_never_shadow_a_tflm_kernel() -> None:
    assert sorted(set(LITERT_ONLY) & set(REFERENCE_KERNELS)) == []
    assert operands_of("CONV_2D") is REFERENCE_KERNELS["CONV_2D"].operands
    assert operands_of("CONV_3D") is LITERT_ONLY["CONV_3D"]


def _measured_opcodes(library: str) -> set[str]:
    """The operators of every conformance case measured on a target of this kernel library."""
    opcodes = {case.id: case.opcode for case in all_cases()}
    found: set[str] = set()
    for name, target in TARGETS.items():
        if target.build is None or target.build.kernels != library:
            continue  # a target arenalens does not predict yet (ESP), or another library
        for path in sorted((CONFORMANCE / "data" / name).glob("*.json")):
            cases = json.loads(path.read_text())["cases"]
            found.update(opcodes[case] for case in cases if case in opcodes)
    return found


@pytest.mark.parametrize("library", [REFERENCE, *sorted(LIBRARIES)])
def test_every_kernel_rule_is_measured_on_its_library(library: str) -> None:
    # A rule is only as good as its conformance cases on real TFLM: every kernel the wheel
    # registers, and every variant of a library, on a target that runs that library.
    rules = registered_opcodes() if library == REFERENCE else set(LIBRARIES[library].rules)
    assert sorted(rules - _measured_opcodes(library)) == []


# Modules outside the kernel rules that name a TFLM kernel, and why that is not a kernel fact.
# The LiteRT side, the examples, the FlatBuffer reader and the report name operators freely.
_NAMED_ELSEWHERE = {
    ("ir.py", "IF"): "the schema: which options name subgraphs (control flow, every runtime)",
    ("ir.py", "WHILE"): "the schema: which options name subgraphs",
    ("ir.py", "CALL_ONCE"): "the schema: which options name subgraphs",
    ("reorder/schedule.py", "READ_VARIABLE"): "the order resource variables impose on a model",
    ("reorder/schedule.py", "ASSIGN_VARIABLE"): "the order resource variables impose",
    ("reorder/schedule.py", "VAR_HANDLE"): "the order resource variables impose",
    ("runtimes/tflm/resources.py", "VAR_HANDLE"): "TFLM's resource-variable store, not a kernel",
    ("runtimes/tflm/resources.py", "ASSIGN_VARIABLE"): "TFLM's resource-variable store",
    ("runtimes/tflm/resources.py", "READ_VARIABLE"): (
        "the store's Read copies whole variables (micro_resource_variable.cc)"
    ),
    ("vela/__init__.py", "CUSTOM:ethos-u"): (
        "Vela's output format: the operator it writes, whose command stream says the NPU"
    ),
    ("diagnostics/operands.py", "UNIDIRECTIONAL_SEQUENCE_LSTM"): "LiteRT's LSTM takes its operands",
    ("cannot_run.py", "CUSTOM:ethos-u"): "a refusal's fix: run a Vela-compiled graph on the NPU",
    ("cannot_run.py", "SELECT_V2"): "a refusal's fix: the operator to convert SELECT into",
    ("cannot_run.py", "L2_NORMALIZATION"): "a refusal's fix: the operator to convert LRN into",
}
# split/ rewrites graphs into stock operators (slices, pads, concatenations and the operators it
# cuts): which operators compute an element from a window, a channel or the same element is the
# operators' arithmetic on every runtime, not a TFLM kernel's arena or access facts.
_FREE = ("runtimes/tflm/kernels/", "runtimes/litert/", "examples/", "tflite/", "report/", "split/")


def test_a_tflm_kernels_facts_are_only_on_its_rule() -> None:
    # Diagnostics, in-place, overlap and the arena read a kernel's facts from its rule; a module
    # testing `op.opcode == "CONV_2D"` would be a second home that drifts.
    package = Path(tflm.__file__).resolve().parents[2]
    found = set()
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative.startswith(_FREE):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in REFERENCE_KERNELS:
                found.add((relative, node.value))
    assert sorted(found - set(_NAMED_ELSEWHERE)) == []
    assert sorted(set(_NAMED_ELSEWHERE) - found) == []  # no stale exception
