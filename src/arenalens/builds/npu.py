"""NPUs a TFLM build may drive: Arm's Ethos-U configurations, loaded from `npus.json`.

A build with an NPU (`Build.npu`) is TFLM built with `CO_PROCESSOR=ethos_u`: its op resolver
registers the `ethos-u` custom operator Vela writes (`kernels/ethos_u/ethosu.cc`; elsewhere
`Register_ETHOSU()` returns null), and at Invoke the Ethos-U core driver runs its command stream.
The driver refuses a command stream compiled for another configuration ("NPU config mismatch":
`ethosu_dev_verify_optimizer_config` compares the product and the MACs per cycle), so the NPU is
named as Vela's `--accelerator-config` names it, and each row carries the register fields that
check compares.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

from arenalens.errors import UsageError

PRODUCTS: Mapping[int, str] = MappingProxyType({0: "Ethos-U55", 1: "Ethos-U65", 2: "Ethos-U85"})


@dataclass(frozen=True, slots=True)
class Npu:
    """One Ethos-U configuration: what the driver checks a command stream against, and the Vela
    settings arenalens compiles with when nothing else is said."""

    name: str  # Vela's --accelerator-config: 'ethos-u55-128'
    product: int  # the CONFIG register's product field: 0 U55, 1 U65, 2 U85
    log2_macs: int  # its macs_per_cc field: log2 of the MACs per cycle
    system_config: str  # Vela's default system configuration for it (vela.ini)
    memory_mode: str  # ... and memory mode
    core_driver: str  # the Ethos-U core driver commit TFLM pins

    @property
    def macs_per_cycle(self) -> int:
        return 1 << self.log2_macs

    @property
    def title(self) -> str:
        """'Arm Ethos-U55 NPU (128 MACs/cycle)'."""
        return f"Arm {PRODUCTS[self.product]} NPU ({self.macs_per_cycle} MACs/cycle)"


@cache
def npus() -> Mapping[str, Npu]:
    """Every configuration by name, from the checked data file."""
    document = json.loads(
        resources.files("arenalens.builds").joinpath("npus.json").read_text(encoding="utf-8")
    )
    return MappingProxyType(
        {
            row["name"]: Npu(
                name=row["name"],
                product=int(row["product"]),
                log2_macs=int(row["log2_macs"]),
                system_config=row["system_config"],
                memory_mode=row["memory_mode"],
                core_driver=document["core_driver"],
            )
            for row in document["npus"]
        }
    )


def npu_named(text: str) -> Npu:
    """--npu as users type it ('ethos-u55-128', 'Ethos_U55_128', 'u55-128') → Npu; UsageError
    listing the known ones."""
    key = text.strip().lower().replace("_", "-").replace(" ", "-")
    if not key.startswith("ethos-"):
        key = "ethos-" + key
    found = npus().get(key)
    if found is None:
        raise UsageError(f"unknown NPU '{text}' (known: {', '.join(npus())})")
    return found


def npu_for_config(product: int, log2_macs: int) -> Npu | None:
    """The configuration a command stream was compiled for (its OPTIMIZER_CONFIG fields)."""
    for found in npus().values():
        if (found.product, found.log2_macs) == (product, log2_macs):
            return found
    return None
