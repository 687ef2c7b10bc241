"""arenalens: see where every byte of a TFLite / TFLite Micro tensor arena goes; get bytes back."""

from arenalens.errors import ArenalensError, ModelError, PlanError, UsageError
from arenalens.tflite.reader import load_model

__version__ = "0.1.0"

__all__ = [
    "ArenalensError",
    "ModelError",
    "PlanError",
    "UsageError",
    "__version__",
    "load_model",
]
