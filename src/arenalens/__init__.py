"""arenalens: see where every byte of a TFLite / TFLite Micro tensor arena goes; get bytes back."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from arenalens.errors import ArenalensError, ModelError, PlanError, UsageError

if TYPE_CHECKING:
    from arenalens.builds.build import Build, device_build
    from arenalens.memo import clear_caches
    from arenalens.pipeline import analyze
    from arenalens.planning import Buffer, Overlap, Plan, Problem, register_planner, run_planner
    from arenalens.tflite.reader import load_model
    from arenalens.verdict import Answer, Verdict, check

# The public names load on first use, not with the package: importing any arenalens module (the
# CLI's, a kernel rule's) runs this file first, and a command imports only what it uses.
_LAZY = {
    "Answer": "arenalens.verdict",
    "Buffer": "arenalens.planning",
    "Build": "arenalens.builds.build",
    "Overlap": "arenalens.planning",
    "Plan": "arenalens.planning",
    "Problem": "arenalens.planning",
    "Verdict": "arenalens.verdict",
    "analyze": "arenalens.pipeline",
    "check": "arenalens.verdict",
    "clear_caches": "arenalens.memo",
    "device_build": "arenalens.builds.build",
    "load_model": "arenalens.tflite.reader",
    "register_planner": "arenalens.planning",
    "run_planner": "arenalens.planning",
}


def __getattr__(name: str) -> Any:
    """`arenalens.check`, `arenalens.analyze`, ...: imported from their module when first used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'arenalens' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "Answer",
    "ArenalensError",
    "Buffer",
    "Build",
    "ModelError",
    "Overlap",
    "Plan",
    "PlanError",
    "Problem",
    "UsageError",
    "Verdict",
    "__version__",
    "analyze",
    "check",
    "clear_caches",
    "device_build",
    "load_model",
    "register_planner",
    "run_planner",
]
