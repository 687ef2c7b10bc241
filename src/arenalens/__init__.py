"""arenalens: see where every byte of a TFLite / TFLite Micro tensor arena goes; get bytes back."""

from arenalens.builds.build import Build, device_build
from arenalens.errors import ArenalensError, ModelError, PlanError, UsageError
from arenalens.pipeline import analyze
from arenalens.planning import Buffer, Overlap, Plan, Problem, register_planner, run_planner
from arenalens.tflite.reader import load_model

__version__ = "0.1.0"

__all__ = [
    "ArenalensError",
    "Buffer",
    "Build",
    "ModelError",
    "Overlap",
    "Plan",
    "PlanError",
    "Problem",
    "UsageError",
    "__version__",
    "analyze",
    "device_build",
    "load_model",
    "register_planner",
    "run_planner",
]
