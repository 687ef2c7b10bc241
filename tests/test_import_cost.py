"""The CLI imports only what its command needs: `plan --json` and `check` on one model (and the
in-process `arenalens.check`) never load the heavy optional modules, the kernel rules of operators
the model does not use, nor planners they do not run; `import arenalens` loads its public names
on first use (issue 31: a check must start in a blink; numpy alone costs more than planning a
small model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from arenalens.examples import write_example

# Modules none of these commands may import: numerical and drawing libraries, the FlatBuffers
# packages (the reader has its own table view), the exact solver, the real runtimes, and process
# pools (only batches and real-interpreter runs need them).
HEAVY = (
    "numpy",
    "matplotlib",
    "flatbuffers",
    "tflite",
    "ortools",
    "tflite_micro",
    "ai_edge_litert",
    "hypothesis",
    "multiprocessing",
    "concurrent.futures",
)
# `plan --json` and `check --json` write JSON only: no terminal renderer either.
JSON_ONLY = ("rich",)
# Modules these commands do not use on a model of fixed shape, without --max-input: the LiteRT
# shape propagation (--input-shape), the planners other than TFLM's own, the debugging traceback.
UNUSED = (
    "arenalens.runtimes.litert",
    "arenalens.planning.litert_arena",
    "arenalens.planning.optimal",
    "arenalens.planning.best",
    "arenalens.planning.hillclimb",
    "arenalens.planning.naive",
    "arenalens.reorder",
    "arenalens.optimization",
    "arenalens.split",
    "arenalens.report.html_page",
    "arenalens.exports",
    "arenalens.diagnostics",
    # A model that fits as given, without an NPU operator, on a one-bank board: no remedy ladder,
    # no input search, no Vela reading, no verification records; the arena's sections, tail
    # parts and two-buffer split are worked out only when a report or plan asks for them; the
    # written model's cache key (hashlib loads OpenSSL) only when a rewrite is checked.
    "arenalens.ladder",
    "arenalens.max_input",
    "arenalens.vela.memory",
    "arenalens.vela.compiled",
    "arenalens.runtimes.tflm.kernels.ethos_u",
    "arenalens.runtimes.verification",
    "arenalens.runtimes.sections",
    "arenalens.runtimes.arena_split",
    "arenalens.runtimes.tflm.tail_parts",
    "arenalens.runtimes.tflm.two_buffers",
    # No kernel buffer filled while its temps are live (a per-channel FULLY_CONNECTED, SVDF,
    # CUMSUM, compressed tensors): where such a buffer would break setup is not worked out.
    "arenalens.runtimes.tflm.temp_overlap",
    "hashlib",
    # One RAM bank: its largest block is the figure (blocks.py), no split is placed in banks.
    "arenalens.placement",
    # No Vela-compiled operator: no NPU pieces to place beside the arena.
    "arenalens.vela.placement",
    # argparse's terminal width is found without shutil (which loads lzma, bz2 and zlib); the
    # interval index's sorted list only for problems of thousands of buffers.
    "shutil",
    "sortedcontainers",
    # Package data, a model file and model arguments are opened with os.path: pathlib (which
    # loads urllib.parse and ipaddress) only walks a folder of models or writes output files.
    "pathlib",
)
KERNELS = "arenalens.runtimes.tflm.kernels"
# arenalens's own modules a command may load for kws_ds_cnn: importing them is most of a small
# model's command (each module's dataclasses are made as it loads: ~1 M instructions apiece), so a
# module more on these paths must be one the command needs. At ac82924: plan --runtime tflm
# --json 89, check --target nucleo-f401re 107 (with `import arenalens` and its API check).
# At 649b45f9: 93 for plan, as the reader's tables moved to tflite/tensor_tables.py and
# tflite/operator_tables.py (6b553dce: reader.py was at the 800-line limit) and the offline
# plan codec left the path (4b7ccc55).
MOST_MODULES = {"plan": 93, "check": 110}

_PLAN = """
import contextlib, io, json, sys
from arenalens.cli import main

with contextlib.redirect_stdout(io.StringIO()):
    main(["plan", sys.argv[1], "--runtime", "tflm", "--json"])
after_plan = sorted(sys.modules)
with contextlib.redirect_stdout(io.StringIO()):
    main(["check", sys.argv[1], "--target", "nucleo-f401re", "--json"])
after_check = sorted(sys.modules)
with contextlib.redirect_stdout(io.StringIO()):
    main(["report", sys.argv[1]])
print(json.dumps([after_plan, after_check, sorted(sys.modules)]))
"""
# What a terminal report of one model (no -o, no second model) does not write or compare.
NOT_IN_TERMINAL_REPORT = (
    "arenalens.report.html_page",
    "arenalens.report.viewer",
    "arenalens.report.diff",
    "arenalens.vela.compiled",
    "hashlib",
)

_CHECK = """
import contextlib, io, json, sys

def loaded():
    return sorted(sys.modules)

import arenalens
after_import = loaded()
from arenalens.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["check", sys.argv[1], "--target", "nucleo-f401re"])
after_check = loaded()
targets = sys.modules["arenalens.targets"]
lists = ("CHIPS", "BOARDS", "LINUX_DEVICES", "TARGETS")
target_lists = [name for name in lists if name in vars(targets)]
built_targets = sorted(name for _, name in targets._BUILT)
arenalens.check(open(sys.argv[1], "rb").read(), budget=10**7, build="cortex-m7/cmsis-nn")
after_api = loaded()
model = arenalens.load_model(sys.argv[1])
opcodes = sorted({op.opcode for graph in model.subgraphs for op in graph.operators})
print(json.dumps([after_import, after_check, after_api, opcodes, target_lists, built_targets]))
"""


def _imported(name: str, modules: list[str]) -> list[str]:
    return [m for m in modules if m == name or m.startswith(name + ".")]


def _run(child: str, model: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", child, str(model)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_plan_and_check_import_no_heavy_module(tmp_path: Path) -> None:
    model = write_example("kws_ds_cnn", tmp_path)
    after_plan, after_json_check, after_report = _run(_PLAN, model)
    after_import, after_check, after_api, opcodes, target_lists, built = _run(_CHECK, model)
    assert _imported("arenalens", after_import) == ["arenalens", "arenalens.errors"]
    assert len(_imported("arenalens", after_plan)) <= MOST_MODULES["plan"]
    assert len(_imported("arenalens", after_check)) <= MOST_MODULES["check"]
    # A check on one board builds that board and its chip, not the catalogue's 257 targets.
    assert target_lists == []
    assert built == ["nucleo-f401re", "stm32f401re"]
    # `plan` runs TFLM's planner and the no-reuse one (naive), not the searching planners.
    others = ("optimal", "hillclimb", "best", "litert_arena", "greedy_by_size", "first_fit")
    unused_by_plan = (
        "arenalens.runtimes.litert",
        "pathlib",
        *(f"arenalens.planning.{p}" for p in others),
    )
    for name in (*HEAVY, *JSON_ONLY, *unused_by_plan):
        assert not _imported(name, after_plan), f"plan --runtime tflm --json imported {name}"
    for name in (*HEAVY, *JSON_ONLY):
        assert not _imported(name, after_json_check), f"plan, then check --json imported {name}"
    for name in NOT_IN_TERMINAL_REPORT:
        assert not _imported(name, after_report), f"plan, check, then report imported {name}"
    # A check's verdict printed to a pipe (no colour) is laid out without rich (report.styled).
    for name in (*HEAVY, *UNUSED, *JSON_ONLY):
        assert not _imported(name, after_check), f"check imported {name}"
        assert not _imported(name, after_api), f"arenalens.check imported {name}"
    # Kernel rules: only the family modules holding the rules of the model's operators (and the
    # reference modules the CMSIS-NN variants in those modules embed: the builds here use
    # CMSIS-NN); the Ethos-U rule only for a model with an NPU operator (UNUSED above).
    families = set(_imported(KERNELS, after_api)) & _family_modules()
    allowed = _rule_modules(opcodes)
    assert families <= allowed, sorted(families - allowed)
    assert not _imported(KERNELS + ".esp_nn", after_api)


def _family_modules() -> set[str]:
    """Every module of the kernels package (and of its libraries' packages) that holds rules."""
    from arenalens.runtimes.tflm.kernels.families import Families
    from arenalens.runtimes.tflm.kernels.registry import LIBRARIES, REFERENCE_KERNELS

    tables = [REFERENCE_KERNELS, *(LIBRARIES[name].rules for name in LIBRARIES)]
    modules = set()
    for table in tables:
        assert isinstance(table, Families)
        modules |= {table.module_of(opcode) for opcode in table}
    return modules


def _rule_modules(opcodes: list[str]) -> set[str]:
    """The family modules holding the rules of these operators: the reference rule's, the
    CMSIS-NN variant's, and the reference modules of every operator that variant's module covers."""
    from arenalens.runtimes.tflm.kernels.families import Families
    from arenalens.runtimes.tflm.kernels.registry import LIBRARIES, REFERENCE_KERNELS

    assert isinstance(REFERENCE_KERNELS, Families)
    variants = LIBRARIES["cmsis-nn"].rules
    assert isinstance(variants, Families)
    modules = set()
    for opcode in opcodes:
        modules.add(REFERENCE_KERNELS.module_of(opcode))
        if opcode in variants:
            module = variants.module_of(opcode)
            modules.add(module)
            for other in variants:
                if variants.module_of(other) == module:
                    modules.add(REFERENCE_KERNELS.module_of(other))
    return modules
