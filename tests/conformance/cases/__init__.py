"""Conformance cases: small generated models, one family per module, each case one memory path.

A family module defines `CASES`, a tuple of `Case`; `all_cases()` joins them. Case ids are stable
names (they key the cached measurements), so rename a case only together with its data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from importlib import import_module

# Family modules, in the order the coverage table lists them.
FAMILIES = (
    "corpus_paths",
    "cmsis_nn",
    "elementwise",
    "esp_nn",
    "nn",
    "quantization",
    "shape",
    "signal",
)


@dataclass(frozen=True)
class Case:
    """One generated model: which operator and type it exercises, and how to build it."""

    id: str  # "<OPCODE>.<dtype>.<variant>", unique
    opcode: str  # as arenalens names it (CUSTOM:<name> for custom operators)
    dtype: str  # the type the case is about (the kernel's input type), e.g. "INT8"
    build: Callable[[], bytes]
    note: str = ""
    family: str = ""  # the module that defines it (set by all_cases)
    # Bytes of consecutive fitting sizes the measurement must see above its bisection result
    # before calling it the minimum: for kernels whose Prepare writes tail buffers over their
    # own temp tensors, fitting is not monotone (a band of failing sizes above fitting ones).
    scan_bytes: int = 0

    def model(self) -> bytes:
        """The .tflite bytes (built once per process)."""
        return _built(self.id, self.build)

    def sha256(self) -> str:
        """Hash of the model bytes: cached measurements name the exact model they measured."""
        return hashlib.sha256(self.model()).hexdigest()


_MODELS: dict[str, bytes] = {}


def _built(case_id: str, build: Callable[[], bytes]) -> bytes:
    if case_id not in _MODELS:
        _MODELS[case_id] = build()
    return _MODELS[case_id]


@cache
def all_cases() -> tuple[Case, ...]:
    """Every case of every family, ids checked unique."""
    found: list[Case] = []
    for family in FAMILIES:
        cases = import_module(f"tests.conformance.cases.{family}").CASES
        found.extend(replace(case, family=family) for case in cases)
    ids = [case.id for case in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate conformance case ids: {duplicates}")
    return tuple(found)


def case_by_id(case_id: str) -> Case:
    """One case by id."""
    for case in all_cases():
        if case.id == case_id:
            return case
    raise KeyError(case_id)
