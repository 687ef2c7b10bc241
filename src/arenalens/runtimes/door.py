"""The one door into TFLM for the rest of arenalens: `tflm_runtime()` → TFLM's rules
(`runtimes/tflm/rules.py` `TflmRuntime`: the `Runtime` protocol, and what only TFLM has: its setup
replay and support, what each operator keeps in the tail, its kernel rules, lifetimes, offline
plans and the kernel code paths they hold on, the installed wheel, output proofs), and the types
its answers carry, for annotations. No module outside `runtimes/` imports `runtimes/tflm/`
(`tests/test_architecture.py` checks it); this module loads it by name, when first asked."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from arenalens.runtimes import RUNTIME_MODULES

if TYPE_CHECKING:  # the answers' types, for the door's callers to annotate with
    from arenalens.runtimes.tflm.plan_validity import PlacedTensor as PlacedTensor  # noqa: PLC0414
    from arenalens.runtimes.tflm.plan_validity import SharedBytes as SharedBytes  # noqa: PLC0414
    from arenalens.runtimes.tflm.rules import TflmRuntime


def tflm_runtime() -> TflmRuntime:
    """TFLite Micro's rules with everything only TFLM has, loaded on first use."""
    # By name, as `get_runtime` loads a runtime: TFLM loads when first asked, and this package
    # (which its rules import) does not import them back.
    found: TflmRuntime = import_module(RUNTIME_MODULES["tflm"]).TFLM
    return found
