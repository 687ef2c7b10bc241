"""What the firmware must change, proven on real TFLM for a Cortex-M3 with CMSIS-NN under QEMU: a
probe whose op resolver is exactly the `MicroMutableOpResolver` lines `arenalens optimize` prints
(instead of the probe's resolver with every operator) and whose `MicroResourceVariables` table
has the size `--resource-variables` names, set up at the number arenalens declares, and not one
byte below; with the resolver of the model as given (missing the operators a split adds) setup
fails whatever the arena.

    python -m tests.firmware_probe   # build the probes and measure (minutes), rewrite the cache

Building needs ../shared/tools/cortex-m/build (the kit), its TFLM sources in .cortexm/src (as the
kit's build.sh lays them out; git-ignored) and a built libtensorflow-microlite.a for the
cortex-m3-cmsis-nn target there (`bash <kit>/build.sh cortex-m3-cmsis-nn`). The probes are build
products under .cortexm/firmware/, never committed; the cache (tests/data/firmware_probe.json)
records each model's sha256, the lines and table size used, and what the probe measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KIT = REPO.parent / "shared" / "tools" / "cortex-m"
WORK = REPO / ".cortexm"
CACHE = Path(__file__).resolve().parent / "data" / "firmware_probe.json"
TARGET = "cortex-m3-cmsis-nn"  # the probe target (run.py's name)
BUILD = "cortex-m3/cmsis-nn"  # the arenalens build it is


def cases() -> dict[str, dict[str, Any]]:
    """name → {model bytes, the arenalens command's options}."""
    from arenalens.examples import example_bytes
    from tests.tflm_synthetic import resource_variables_mixed

    return {
        # optimize --split adds operators the model as given does not run.
        "vww split": {
            "data": example_bytes("vww_mobilenet_v1"),
            "optimize": ["--cpu", "cortex-m3", "--kernels", "cmsis-nn", "--overlap", "--split"],
        },
        # A firmware table of 20 for a model with 4 resource variables.
        "resource variables, table 20": {
            "data": resource_variables_mixed(),
            "plan": ["--cpu", "cortex-m3", "--kernels", "cmsis-nn", "--resource-variables", "20"],
            "table": 20,
        },
    }


def _arenalens(*argv: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "arenalens", *argv, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    document: dict[str, Any] = json.loads(completed.stdout)
    return document


def printed(name: str, case: dict[str, Any], folder: Path) -> dict[str, Any]:
    """What arenalens prints for the case: the model the firmware runs, its number, the resolver
    lines and the table size (and the resolver of the model as given)."""
    from arenalens.firmware import firmware_needs
    from arenalens.tflite.reader import parse_model

    source = folder / "model.tflite"
    source.write_bytes(case["data"])
    original = firmware_needs(parse_model(case["data"], name))
    if "optimize" in case:
        written = folder / "optimized.tflite"
        document = _arenalens("optimize", str(source), "-o", str(written), *case["optimize"])
        assert document["written"], document.get("notes")
        firmware = document["firmware"]
        return {
            "model": written.read_bytes(),
            "required_bytes": document["new_required_bytes"],
            "resolver": firmware["resolver"],
            "table": firmware["resource_variables"],
            "resolver_as_given": list(original.resolver_lines),
        }
    document = _arenalens("plan", str(source), *case["plan"])
    needs = firmware_needs(parse_model(case["data"], name), case["table"])
    return {
        "model": case["data"],
        "required_bytes": document["min_arena_bytes"],
        "resolver": list(needs.resolver_lines),
        "table": needs.resource_variables,
        "resolver_as_given": None,
    }


def probe_source(resolver: list[str], table: int) -> str:
    """The kit's probe.cc with the printed resolver and a table of `table` entries."""
    text = (KIT / "build" / "probe.cc").read_text()
    declaration = "  static tflite::PythonOpsResolver resolver;\n"
    assert declaration in text and text.count("CountResourceVariables(model)") == 2
    lines = "".join(f"  {line}\n" for line in resolver)
    text = text.replace(declaration, lines)
    text = text.replace("CountResourceVariables(model)", str(table))
    include = '#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"\n'
    return text.replace('#include "python/tflite_micro/python_ops_resolver.h"\n', include)


def build_probe(name: str, resolver: list[str], table: int) -> Path:
    """A probe ELF with this resolver and table, linked against the built TFLM library."""
    kit = WORK / "firmware" / name.replace(" ", "-").replace(",", "") / "kit"
    if kit.exists():
        shutil.rmtree(kit)
    shutil.copytree(KIT / "build", kit)
    (kit / "probe.cc").write_text(probe_source(resolver, table))
    env = {**os.environ, "PROBE_ONLY": "1", "WORKDIR": str(kit.parent)}
    source = kit.parent / ".cortexm" / "src"
    source.parent.mkdir(exist_ok=True)
    if not source.exists():
        source.symlink_to(WORK / "src")
    subprocess.run(
        ["bash", str(kit / "build.sh"), TARGET], env=env, check=True, capture_output=True
    )
    elf = kit.parent / ".cortexm" / "build" / TARGET / "probe.elf"
    runner = kit.parent / "runner"
    runner.mkdir(exist_ok=True)
    shutil.copy(KIT / "run.py", runner / "run.py")
    shutil.copy(elf, runner / f"tflm-{TARGET}.elf")
    return runner / "run.py"


def minimal_arena(runner: Path, model: bytes) -> dict[str, Any]:
    """run.py --min-arena with the plain allocator (what firmware uses) on the probe."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.tflite"
        path.write_bytes(model)
        command = [sys.executable, str(runner), str(path), "--target", TARGET]
        completed = subprocess.run(
            [*command, "--min-arena", "--allocator", "plain", "--json"],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    found: dict[str, Any] = json.loads(completed.stdout)
    return found


def main() -> int:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, case in cases().items():
            shown = printed(name, case, Path(folder))
            runner = build_probe(name, shown["resolver"], shown["table"] or 0)
            measured = minimal_arena(runner, shown["model"])
            record = {
                "sha256": hashlib.sha256(shown["model"]).hexdigest(),
                "required_bytes": shown["required_bytes"],
                "resolver": shown["resolver"],
                "table": shown["table"],
                "status": measured.get("status"),
                "min_arena": measured.get("min_arena"),
            }
            if shown["resolver_as_given"] is not None:
                given = build_probe(f"{name} as given", shown["resolver_as_given"], 0)
                refused = minimal_arena(given, shown["model"])
                record["as_given_status"] = refused.get("status")
                record["as_given_detail"] = str(refused.get("detail", ""))[:200]
            results[name] = record
            print(name, json.dumps({k: v for k, v in record.items() if k != "resolver"}))
    document = {
        "about": f"Firmware built from arenalens' printed resolver lines and table size, on the "
        f"{TARGET} probe (../shared/tools/cortex-m). Remade by `python -m tests.firmware_probe`.",
        "target": TARGET,
        "build": BUILD,
        "cases": results,
    }
    CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
