"""The generated LiteRT heap caches, read by model name: tests/data/litert_heap.json (the
AVX-512 + AMX machine: `python -m tests.litert_heap_measure`) and tests/data/
litert_heap_avx2.json (an AMD EPYC 7001, first Zen: AVX2 and FMA, no AVX-512: the file's own
`command`). Each file is one CPU, named by its `environment`; a test asks for an entry by name
and gets it with the ISA profile of the CPU it was measured on, so an entry can move between
the files without a test changing."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.runtimes.litert import eigen_blocking
from arenalens.runtimes.litert.isa import HOST, X86_64_V3_ZEN, IsaProfile
from tests.litert_heap_measure import DATA

AVX2_DATA = DATA.with_name("litert_heap_avx2.json")
HELD18_DATA = DATA.with_name("litert_heap_held18.json")  # session 18's campaign, the EPYC
GENERATED = (DATA, AVX2_DATA, HELD18_DATA)


@functools.cache
def document(path: Path) -> dict[str, Any]:
    """One cache file as it is on disk."""
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def names() -> list[str]:
    """Every cached model, from every generated cache."""
    return sorted({name for path in GENERATED for name in document(path)["models"]})


def cached(name: str) -> dict[str, Any]:
    """A model's entry (its `builtin` and `xnnpack` figures), whichever file holds it."""
    for path in GENERATED:
        found = document(path)["models"].get(name)
        if found is not None:
            return dict(found)
    raise KeyError(name)


def environment(name: str) -> dict[str, Any]:
    """Where a model's figures hold: its entry's own environment, else its file's."""
    for path in GENERATED:
        found = document(path)["models"].get(name)
        if found is not None:
            own: dict[str, Any] = found.get("environment") or document(path)["environment"]
            return own
    raise KeyError(name)


def on_avx2(name: str) -> bool:
    """Measured on a CPU with AVX2 and no AVX-512 (the x86-64-v3-zen replay's EPYC)."""
    flags = set(environment(name)["cpu_flags"])
    return "avx2" in flags and not any(flag.startswith("avx512") for flag in flags)


def cached_isa(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> IsaProfile:
    """The profile of the CPU a model was measured on; with `monkeypatch`, that CPU's cache
    sizes are set for Eigen's blocking (the EPYC's for x86-64-v3-zen; tests/conftest.py pins
    the AVX-512 machine's otherwise)."""
    if not on_avx2(name):
        return HOST
    if monkeypatch is not None:
        epyc = eigen_blocking.ZEN_EPYC
        monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, f"{epyc.l1},{epyc.l2},{epyc.l3}")
    return X86_64_V3_ZEN
