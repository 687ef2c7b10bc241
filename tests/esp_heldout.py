"""Held-out models on the ESP probes: random networks the flow campaign generates
(`flows/models.py`: int8 CNNs, float CNNs, CNNs with an extreme quantization range; written by
another stream, never seen by the ESP-NN rules or the conformance cases) measured on every ESP
probe build, so the figures are checked on models nobody fitted them to.

Each entry names its recipe (family and seed), the model's sha256 and the plain allocator's head,
tail and minimal arena (or that setup fails) on each build. Remake under nice (QEMU, one job):

    python -m tests.esp_heldout
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / "data" / "esp_heldout.json"
FAMILIES = ("cnn", "float_cnn", "quant")
SEEDS = range(1, 9)


def recipes() -> list[tuple[str, int]]:
    """(family, seed) of every held-out model."""
    return [(family, seed) for seed in SEEDS for family in FAMILIES]


def model_bytes(family: str, seed: int) -> bytes:
    """The model flows/models.py makes for this family and seed."""
    from flows import models  # the flow campaign's generators, only here

    make = {"cnn": models.cnn, "float_cnn": models.float_cnn, "quant": models.quant}[family]
    return make(random.Random(seed)).data


@dataclasses.dataclass(frozen=True)
class _Heldout:
    """What tests.conformance.measure.measure_device asks of a case."""

    id: str
    data: bytes
    family: str = "heldout"
    scan_bytes: int = 0

    def model(self) -> bytes:
        return self.data

    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def measure_all() -> dict[str, Any]:
    """Every recipe on every ESP probe build (the plain allocator firmware uses)."""
    from tests.conformance.measure import measure_device  # QEMU, only here
    from tests.conformance.targets import ESP_TARGET_NAMES, TARGETS

    found: dict[str, Any] = {}
    for family, seed in recipes():
        case = _Heldout(f"{family} seed={seed}", model_bytes(family, seed))
        entry: dict[str, Any] = {"sha256": case.sha256(), "targets": {}}
        for name in ESP_TARGET_NAMES:
            target = dataclasses.replace(TARGETS[name], recording_run=False)
            figures = measure_device(case, target)
            entry["targets"][name] = {
                key: figures[key]
                for key in ("loads", "head", "tail_plain", "min_arena_plain")
                if key in figures
            }
            print(case.id, name, entry["targets"][name], flush=True)
        found[case.id] = entry
    return found


def main(argv: list[str] | None = None) -> int:
    """Measure and rewrite the cache."""
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    document = {
        "about": "Held-out flow-campaign models on the ESP probe builds (plain allocator). "
        "Remade by `python -m tests.esp_heldout`.",
        "models": measure_all(),
    }
    CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
