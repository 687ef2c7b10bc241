"""Compile every Ethos-U case with Vela and measure it on the Ethos-U probe (real TFLM 90b983c
with the real ETHOSU kernel, Cortex-M55 under QEMU: AllocateTensors only), caching the compiled
models and the figures. Remake under nice (QEMU, one job at a time):

    nice -n 10 python -m tests.ethos_u.measure            # the development set
    nice -n 10 python -m tests.ethos_u.measure --heldout  # the held-out set
    nice -n 10 python -m tests.ethos_u.measure --boards   # the done-when models and settings
    nice -n 10 python -m tests.ethos_u.measure --cmsis-nn # CPU fallbacks on the CMSIS-NN probe

The CMSIS-NN probe is the same probe linked against TFLM's CMSIS-NN library for Cortex-M55
(OPTIMIZED_KERNEL_DIR=cmsis_nn, MVE), as firmware on these boards links it for the operators Vela
leaves to the CPU. `build/ethos-u/build_ethosu_probe.sh` of ../shared/tools/cortex-m links the
reference library; the same script with that library's path and make flags swapped for CMSIS-NN's
builds it (everything under /tmp, out of git):

    KIT=/work/shared/tools/cortex-m PROBES=~/.cache/arenalens/ethos-u-cmsis-nn
    mkdir -p /tmp/ethos-u-cmsis-nn && cd /tmp/ethos-u-cmsis-nn
    MIRROR=<bare mirrors> JOBS=2 bash $KIT/build/build.sh cortex-m55-cmsis-nn  # the library
    cp -r $KIT/build kit   # the script finds probe.cc, startup.c and the linker scripts beside it
    sed -e 's#_default_gcc/lib#_default_cmsis_nn_gcc/lib#' \
        -e 's#=ethos_u ETHOSU#=ethos_u OPTIMIZED_KERNEL_DIR=cmsis_nn ETHOSU#' \
        $KIT/build/ethos-u/build_ethosu_probe.sh > kit/ethos-u/build_cmsis_nn.sh
    MIRROR=<bare mirrors> OUTNAME=cortex-m55-ethos-u-cmsis-nn bash kit/ethos-u/build_cmsis_nn.sh
    mkdir -p $PROBES && cp $KIT/run.py $PROBES/ && \
        cp .cortexm/build/cortex-m55-ethos-u-cmsis-nn/probe.elf $PROBES/tflm-cortex-m55-ethos-u.elf

(the probe measured here: sha256 630b51daeab799e3944b721a2f5018a6e93e40e3e370bfe7f4e2f84f4841dbc6,
arm-none-eabi-gcc 12.2.1; the CMSIS-NN library's objects in its link map;
`ARENALENS_ETHOS_U_CMSIS_NN_PROBES` names another folder). `--cmsis-nn` measures every cached
compilation with a CPU operator there (development, held-out and `CMSIS_NN_HELDOUT`, compiled
first), into `tests/data/ethos_u/cmsis_nn.json`.

Each entry: the Vela settings and version, Vela's summary (SRAM used, off-chip memory used,
estimated inference time, NPU and CPU operators), the compiled model's sha256 and the probe's
figures (recording allocator: head, tail, categories; plain allocator, as firmware: tail and
minimal arena).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from tests.ethos_u.cases import CMSIS_NN_HELDOUT, DATA, MODELS, Case, cases

TARGET_NAME = "cortex-m55-ethos-u"
CMSIS_NN_TARGET_NAME = "cortex-m55-ethos-u-cmsis-nn"
ROOMY_ARENA = 16 << 20  # a multiple of 16 well above every case (the probe's default is 224 MiB)
# The CMSIS-NN build of the probe (its run.py and an ELF named as run.py's cortex-m55-ethos-u).
CMSIS_NN_PROBES = Path(
    os.environ.get(
        "ARENALENS_ETHOS_U_CMSIS_NN_PROBES",
        Path.home() / ".cache" / "arenalens" / "ethos-u-cmsis-nn",
    )
)
CMSIS_NN_CACHE = DATA / "cmsis_nn.json"


def cache_path(heldout: bool, boards: bool = False) -> Path:
    if boards:
        return DATA / "boards.json"
    return DATA / ("heldout.json" if heldout else "development.json")


@dataclasses.dataclass(frozen=True)
class _Measured:
    """What tests.conformance.measure.measure_device asks of a case."""

    id: str
    data: bytes
    family: str = "ethos-u"
    scan_bytes: int = 0

    def model(self) -> bytes:
        return self.data

    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def target() -> Any:
    """The Ethos-U probe as a measured target (no arenalens build: only measured here)."""
    from tests.conformance.targets import PROBES, Target

    return Target(TARGET_NAME, None, True, PROBES, recording_minimum=False, roomy_arena=ROOMY_ARENA)


def cmsis_nn_target() -> Any:
    """The CMSIS-NN build of the Ethos-U probe as a measured target."""
    from tests.conformance.targets import Target

    return Target(
        CMSIS_NN_TARGET_NAME,
        None,
        True,
        CMSIS_NN_PROBES,
        recording_minimum=False,
        roomy_arena=ROOMY_ARENA,
        probe_target=TARGET_NAME,
    )


def fallback_entries() -> dict[str, dict[str, Any]]:
    """Every cached compilation with a CPU operator (development and held-out), by case id."""
    found: dict[str, dict[str, Any]] = {}
    for path in (cache_path(False), cache_path(True)):
        for case_id, entry in json.loads(path.read_text())["cases"].items():
            if entry["vela"]["cpu_operators"] > 0:
                found[case_id] = entry
    return found


def measure_cmsis_nn(only: str | None) -> int:
    """The CPU-fallback compilations on the CMSIS-NN probe (the held-out ones compiled first)."""
    from tests.conformance.measure import measure_device  # QEMU, only here

    document: dict[str, Any] = (
        json.loads(CMSIS_NN_CACHE.read_text()) if CMSIS_NN_CACHE.exists() else {"cases": {}}
    )
    document["about"] = (
        "CPU-fallback compilations on the Ethos-U probe built against TFLM's CMSIS-NN library "
        f"({CMSIS_NN_TARGET_NAME}: TFLM 90b983c, CMSIS-NN 4ab83cc, the ETHOSU kernel, Cortex-M55 "
        "MVE). Remade by `python -m tests.ethos_u.measure --cmsis-nn` (see its docstring)."
    )
    entries = fallback_entries()
    for case in CMSIS_NN_HELDOUT:
        if only and only not in case.id:
            continue
        entry = compile_case(case)
        if entry["vela"]["cpu_operators"] > 0 and entry["vela"]["npu_operators"] > 0:
            entries[case.id] = {**entry, "heldout": True}
    for case_id, entry in sorted(entries.items()):
        if only and only not in case_id:
            continue
        data = (MODELS / f"{case_id}.tflite").read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], case_id
        kept = {key: entry[key] for key in ("source", "setting", "vela_version", "vela", "sha256")}
        kept["heldout"] = bool(entry.get("heldout"))
        kept["probe"] = measure_device(_Measured(case_id, data), cmsis_nn_target())
        document["cases"][case_id] = kept
        CMSIS_NN_CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(case_id, json.dumps(kept["probe"])[:160], flush=True)
    return 0


def compile_case(case: Case) -> dict[str, Any]:
    """Compile the case with Vela, write the compiled model, return its entry (no figures)."""
    from arenalens.vela.compiler import compile_model

    compiled = compile_model(case.source.model(), case.settings, name=case.source.id)
    MODELS.mkdir(parents=True, exist_ok=True)
    case.path.write_bytes(compiled.model)
    return {
        "source": case.source.id,
        "setting": case.setting,
        "vela_command": case.settings.command(f"{case.source.id}.tflite"),
        "vela_version": compiled.vela_version,
        "vela": dataclasses.asdict(compiled.summary),
        "sha256": hashlib.sha256(compiled.model).hexdigest(),
    }


def measure_case(case: Case) -> dict[str, Any]:
    """One case compiled and measured."""
    from tests.conformance.measure import measure_device  # QEMU, only here

    entry = compile_case(case)
    entry["probe"] = measure_device(_Measured(case.id, case.path.read_bytes()), target())
    return entry


def main(argv: list[str] | None = None) -> int:
    """Measure one set and rewrite its cache (entry by entry, so a stopped run keeps its work)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--heldout", action="store_true", help="the held-out set")
    parser.add_argument("--boards", action="store_true", help="the done-when board cases")
    parser.add_argument(
        "--cmsis-nn", action="store_true", help="the CPU fallbacks on the CMSIS-NN probe"
    )
    parser.add_argument("--only", help="cases whose id contains this text")
    parser.add_argument("--quiet", action="store_true", help="print no figures (held-out)")
    options = parser.parse_args(argv)
    if options.cmsis_nn:
        return measure_cmsis_nn(options.only)
    path = cache_path(options.heldout, options.boards)
    document: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"cases": {}}
    document["about"] = (
        "Vela-compiled models on the Ethos-U probe (cortex-m55-ethos-u: TFLM 90b983c, the ETHOSU "
        "kernel, reference kernels for CPU operators). Remade by `python -m tests.ethos_u.measure"
        + (" --heldout`." if options.heldout else " --boards`." if options.boards else "`.")
    )
    for case in cases(options.heldout, options.boards):
        if options.only and options.only not in case.id:
            continue
        entry = measure_case(case)
        document["cases"][case.id] = entry
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        shown = "measured" if options.quiet else json.dumps(entry["probe"])[:200]
        print(case.id, shown, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
