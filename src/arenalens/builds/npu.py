"""NPUs a TFLM build may drive: Arm's Ethos-U configurations, rows of `build_records.json`'s
"coprocessors" (`records.Npu`, their family's facts in "coprocessor_families").

A build with an NPU (`Build.npu`) is TFLM built with `CO_PROCESSOR=ethos_u`: its op resolver
registers the `ethos-u` custom operator Vela writes (`kernels/ethos_u/ethosu.cc`; elsewhere
`Register_ETHOSU()` returns null), and at Invoke the Ethos-U core driver runs its command stream.
The driver refuses a command stream compiled for another configuration ("NPU config mismatch":
`ethosu_dev_verify_optimizer_config` compares the product and the MACs per cycle), so the NPU is
named as Vela's `--accelerator-config` names it, and each row carries the register fields that
check compares.
"""

from __future__ import annotations

from collections.abc import Mapping

from arenalens.builds.records import COPROCESSOR_FAMILIES, COPROCESSORS, Npu
from arenalens.errors import UsageError

# The Ethos-U family's product names by the CONFIG register's product field.
PRODUCTS: Mapping[int, str] = COPROCESSOR_FAMILIES["ethos-u"].products


def npus() -> Mapping[str, Npu]:
    """Every configuration by name, from the checked data file."""
    return COPROCESSORS


def npu_named(text: str) -> Npu:
    """--npu as users type it ('ethos-u55-128', 'Ethos_U55_128', 'u55-128') → Npu; UsageError
    listing the known ones."""
    key = text.strip().lower().replace("_", "-").replace(" ", "-")
    # A configuration may be named without its family's prefix ('u55-128' for 'ethos-u55-128').
    endings = [name for name in COPROCESSORS if name.endswith("-" + key)]
    found = COPROCESSORS.get(key) or (COPROCESSORS[endings[0]] if len(endings) == 1 else None)
    if found is None:
        raise UsageError(f"unknown NPU '{text}' (known: {', '.join(COPROCESSORS)})")
    return found


def npu_for_config(product: int, log2_macs: int) -> Npu | None:
    """The configuration a command stream was compiled for (its OPTIMIZER_CONFIG fields)."""
    for found in COPROCESSORS.values():
        if (found.product, found.log2_macs) == (product, log2_macs):
            return found
    return None


__all__ = ["PRODUCTS", "Npu", "npu_for_config", "npu_named", "npus"]
