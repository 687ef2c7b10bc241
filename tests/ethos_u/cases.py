"""Vela-compiled models measured on the Ethos-U probe: source models × Vela settings.

Sources are models this project generates (the built-in examples, the flow campaign's random
networks), compiled with real Vela from PyPI over accelerator configurations, memory modes,
`--optimise` and arena cache sizes; some leave operators to the CPU (a float or unsupported
operator between NPU operators). Two sets: `DEVELOPMENT`, which the Ethos-U rules were written
against, and `HELDOUT`, measured the same way and only compared at the end (no rule was fitted to
them). The compiled models are kept in `tests/data/ethos_u/models/` (Vela's output depends on its
version), their measurements in `tests/data/ethos_u/<set>.json`; `python -m tests.ethos_u.measure`
remakes both.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from arenalens.vela.compiler import (
    DEDICATED_SRAM,
    SHARED_SRAM,
    SIZE,
    SRAM_ONLY,
    VelaSettings,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "ethos_u"
SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
MODELS = DATA / "models"

# Vela settings by short name: each a row of the sweep (NPU, system config, memory mode, ...).
SETTINGS: dict[str, VelaSettings] = {
    "u55-128": VelaSettings("ethos-u55-128", "Ethos_U55_High_End_Embedded", SHARED_SRAM),
    "u55-256-size": VelaSettings(
        "ethos-u55-256", "Ethos_U55_High_End_Embedded", SHARED_SRAM, optimise=SIZE
    ),
    "u55-64-sram-only": VelaSettings("ethos-u55-64", "Ethos_U55_Deep_Embedded", SRAM_ONLY),
    "u65-256-dedicated": VelaSettings("ethos-u65-256", "Ethos_U65_High_End", DEDICATED_SRAM),
    "u65-512-dedicated-64k": VelaSettings(
        "ethos-u65-512", "Ethos_U65_High_End", DEDICATED_SRAM, arena_cache_size=65536
    ),
    "u85-256-dedicated": VelaSettings("ethos-u85-256", "Ethos_U85_SYS_DRAM_High", DEDICATED_SRAM),
    "u85-512-shared-size": VelaSettings(
        "ethos-u85-512", "Ethos_U85_SYS_Flash_High", SHARED_SRAM, optimise=SIZE
    ),
}
HELDOUT_SETTINGS = ("u55-128", "u55-256-size", "u65-256-dedicated", "u85-512-shared-size")
# The settings `arenalens vela` chose for the boards (Alif E7 DevKit: U55-256; Grove Vision
# AI V2: U55-64), with the system configuration it compiles with.
SETTINGS.update(
    {
        "u55-64-shared": VelaSettings("ethos-u55-64", "Ethos_U55_High_End_Embedded", SHARED_SRAM),
        "u55-64-sram-only-size": VelaSettings(
            "ethos-u55-64", "Ethos_U55_High_End_Embedded", SRAM_ONLY, optimise=SIZE
        ),
        "u55-256-sram-only": VelaSettings(
            "ethos-u55-256", "Ethos_U55_High_End_Embedded", SRAM_ONLY
        ),
    }
)


@dataclass(frozen=True)
class Source:
    """An uncompiled model: an example by name, or a flow-campaign family and seed."""

    family: str  # 'example' or a flows/models.py generator
    name: str  # the example's name, or the seed

    @property
    def id(self) -> str:
        return f"{self.family}-{self.name}"

    def model(self) -> bytes:
        if self.family == "shared":
            return (SHARED_MODELS / f"{self.name}.tflite").read_bytes()
        if self.family == "example":
            from arenalens.examples import example_bytes

            return example_bytes(self.name)
        from flows import models  # the flow campaign's generators, only here

        return getattr(models, self.family)(random.Random(int(self.name))).data


# cnn-3: a depthwise convolution left to the CPU before the NPU operator; quant-3: a CPU ADD
# between two NPU operators that share the scratch tensor; float_cnn-1 and audio-1: nothing on
# the NPU (Vela leaves float and signal operators to the CPU).
DEVELOPMENT = tuple(
    Source(family, name)
    for family, name in (
        ("example", "kws_ds_cnn"),
        ("example", "resnet8_cifar"),
        ("example", "branchy_inception"),
        ("example", "fc_autoencoder"),
        ("cnn", "1"),
        ("cnn", "3"),
        ("quant", "1"),
        ("quant", "3"),
        ("float_cnn", "1"),
        ("audio", "1"),
    )
)
HELDOUT = tuple(
    Source(family, name)
    for family, name in (
        ("example", "vww_mobilenet_v1"),
        *(("cnn", str(seed)) for seed in range(11, 15)),
        *(("quant", str(seed)) for seed in range(11, 15)),
        ("dag", "11"),
        ("audio", "11"),
    )
)

# Held out for the CMSIS-NN probe: generated models Vela splits between the NPU and the CPU
# (u55-128), measured once the CMSIS-NN rules for the fallbacks were checked on the cases above.
CMSIS_NN_HELDOUT_SOURCES = tuple(
    Source(family, seed)
    for family, seed in (
        ("cnn", "23"),
        ("cnn", "24"),
        ("cnn", "38"),
        ("cnn", "39"),
        ("quant", "23"),
        ("quant", "24"),
        ("quant", "38"),
        ("quant", "39"),
    )
)


@dataclass(frozen=True)
class Case:
    """One compilation: a source model with one row of SETTINGS."""

    source: Source
    setting: str

    @property
    def id(self) -> str:
        return f"{self.source.id}@{self.setting}"

    @property
    def settings(self) -> VelaSettings:
        return SETTINGS[self.setting]

    @property
    def path(self) -> Path:
        """The compiled model, as cached."""
        return MODELS / f"{self.id}.tflite"


# The issue's done-when models (the shared corpus' person_detect and MobileNetV2, uncompiled) with
# the setting `arenalens vela` chose for each board; MobileNetV2's compilations are too large to
# keep (3.5 MB), so only their figures are cached and a slow test compiles them again.
BOARDS = (
    Case(Source("shared", "tflite_micro__person_detect"), "u55-64-sram-only-size"),
    Case(Source("shared", "tflite_micro__person_detect"), "u55-256-sram-only"),
    Case(Source("shared", "tflite_micro__mobilenet_v2_quantized_1x3x224x224"), "u55-64-shared"),
    Case(Source("shared", "tflite_micro__mobilenet_v2_quantized_1x3x224x224"), "u55-256-sram-only"),
)


# Each with the U55-128 setting and a U65 Dedicated_Sram one.
CMSIS_NN_HELDOUT = tuple(
    Case(source, setting)
    for source in CMSIS_NN_HELDOUT_SOURCES
    for setting in ("u55-128", "u65-256-dedicated")
)


def cases(heldout: bool = False, boards: bool = False) -> tuple[Case, ...]:
    """Every case of one set."""
    if boards:
        return BOARDS
    if heldout:
        return tuple(Case(source, name) for source in HELDOUT for name in HELDOUT_SETTINGS)
    return tuple(Case(source, name) for source in DEVELOPMENT for name in SETTINGS)
