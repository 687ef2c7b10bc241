"""Custom operator options: (model, subgraph, operator) → the FlexBuffer a custom kernel reads.

Custom kernels (DETECTION_POSTPROCESS, the Signal library, ethos-u) keep their parameters in the
operator's `custom_options` bytes, usually a FlexBuffer map or vector, which the IR does not carry.
Memory rules that depend on them (scratch sizes, persistent state) read them here.
"""

from __future__ import annotations

from typing import Any

from arenalens.ir import Model
from arenalens.tflite.reader import read_custom_options


def custom_options(model: Model, subgraph: int, operator: int) -> Any:
    """The operator's custom options decoded as a FlexBuffer (map → dict, vector → list).

    Returns None when there are no options or they are not a valid FlexBuffer.
    """
    raw = read_custom_options(model, subgraph, operator)
    if not raw:
        return None
    # flatbuffers imports numpy when loaded: only models with custom options pay for it.
    from flatbuffers import flexbuffers  # noqa: PLC0415

    try:
        return flexbuffers.Loads(raw)
    except (ValueError, IndexError, KeyError, TypeError, OverflowError):
        return None
