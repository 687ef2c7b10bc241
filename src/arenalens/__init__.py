"""arenalens: see where every byte of a TFLite / TFLite Micro tensor arena goes; get bytes back."""

from typing import TYPE_CHECKING, Any

from arenalens.builds.build import Build, device_build
from arenalens.errors import ArenalensError, ModelError, PlanError, UsageError
from arenalens.pipeline import analyze
from arenalens.planning import Buffer, Overlap, Plan, Problem, register_planner, run_planner
from arenalens.tflite.reader import load_model

if TYPE_CHECKING:
    from arenalens.verdict import Answer, Verdict, check

# The verdict and its board catalogue load on first use (`arenalens.check`), not with the package.
_LAZY = {"Answer", "Verdict", "check"}


def __getattr__(name: str) -> Any:
    """`arenalens.check`, `arenalens.Verdict`, `arenalens.Answer`, imported when first used."""
    if name in _LAZY:
        from arenalens import verdict  # noqa: PLC0415 - see _LAZY

        return getattr(verdict, name)
    raise AttributeError(f"module 'arenalens' has no attribute {name!r}")


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
    "device_build",
    "load_model",
    "register_planner",
    "run_planner",
]
