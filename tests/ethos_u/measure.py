"""Compile every Ethos-U case with Vela and measure it on the Ethos-U probe (real TFLM 90b983c
with the real ETHOSU kernel, Cortex-M55 under QEMU: AllocateTensors only), caching the compiled
models and the figures. Remake under nice (QEMU, one job at a time):

    nice -n 10 python -m tests.ethos_u.measure            # the development set
    nice -n 10 python -m tests.ethos_u.measure --heldout  # the held-out set
    nice -n 10 python -m tests.ethos_u.measure --boards   # the done-when models and settings

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
from pathlib import Path
from typing import Any

from tests.ethos_u.cases import DATA, MODELS, Case, cases

TARGET_NAME = "cortex-m55-ethos-u"
ROOMY_ARENA = 16 << 20  # a multiple of 16 well above every case (the probe's default is 224 MiB)


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
    parser.add_argument("--only", help="cases whose id contains this text")
    parser.add_argument("--quiet", action="store_true", help="print no figures (held-out)")
    options = parser.parse_args(argv)
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
