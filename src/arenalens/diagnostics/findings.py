"""Findings: what a rule reports — rule id, severity, where, what is wrong, and what to do."""

from __future__ import annotations

import enum
import shlex
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from arenalens.ir import Model
from arenalens.memo import recent_by_identity
from arenalens.names import short_name
from arenalens.records import record


class Severity(enum.StrEnum):
    """How bad a finding is: errors break the model on a device, warnings cost bytes or risk."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for info: sort key, most severe first."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@record(slots=True)
class Location:
    """Where a finding is: a subgraph, optionally one operator, and the tensors involved."""

    subgraph: int | None = None
    operator: int | None = None
    tensors: tuple[int, ...] = ()

    def describe(self, model: Model) -> str:
        """'subgraph 0, operator 3 (CONV_2D), tensor 7 'conv/Relu'' — names looked up in model."""
        if self.subgraph is None:
            return "model"
        parts = [f"subgraph {self.subgraph}"]
        subgraph = model.subgraphs[self.subgraph] if self.subgraph < len(model.subgraphs) else None
        if self.operator is not None:
            opcode = ""
            if subgraph is not None and self.operator < len(subgraph.operators):
                opcode = f" ({subgraph.operators[self.operator].opcode})"
            parts.append(f"operator {self.operator}{opcode}")
        if self.tensors:
            named = [_tensor_label(subgraph, tensor) for tensor in self.tensors[:4]]
            more = f" and {len(self.tensors) - 4} more" if len(self.tensors) > 4 else ""
            noun = "tensor" if len(self.tensors) == 1 else "tensors"
            parts.append(f"{noun} {', '.join(named)}{more}")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"subgraph": self.subgraph, "operator": self.operator, "tensors": list(self.tensors)}


def _tensor_label(subgraph: Any, tensor: int) -> str:
    if subgraph is None or not 0 <= tensor < len(subgraph.tensors):
        return str(tensor)
    return f"{tensor} '{short_name(subgraph.tensors[tensor].name)}'"


def model_argument(model: Model) -> str:
    """The model as a command-line argument in a fix ('MODEL' when it came from bytes), with the
    `--input-shape` it was diagnosed at, so that the fix's command works at that size."""
    if not model.source or model.source.startswith("<"):
        return "MODEL"
    return shlex.quote(model.source) + input_shape_options(model)


def optimize_output(model: Model) -> str:
    """The `-o` file of a suggested `arenalens optimize` of this model (never the model)."""
    from arenalens.next_steps import optimized_file  # noqa: PLC0415

    return optimized_file(model.source)


@recent_by_identity()
def input_shape_options(model: Model) -> str:
    """' --input-shape NAME=SHAPE' for each input of subgraph 0 whose shape is not the one in the
    file (a model resized by `--input-shape`); '' for a model at its own size."""
    from arenalens.errors import ArenalensError  # noqa: PLC0415
    from arenalens.tflite.reader import parse_model  # noqa: PLC0415 - resized models only

    if not model.subgraphs or not model.data:
        return ""
    try:
        stored = parse_model(model.data, model.source).subgraphs[0]
    except ArenalensError:
        return ""
    main = model.subgraphs[0]
    names = [main.tensors[index].name for index in main.inputs if index >= 0]
    options = ""
    for position, index in enumerate(i for i in main.inputs if i >= 0):
        shape = main.tensors[index].shape
        if index >= len(stored.tensors) or shape == stored.tensors[index].shape:
            continue
        name = names[position]
        # The name as the user would type it; the position when the name is ambiguous.
        key = name if names.count(name) == 1 and not name.isdigit() and name else str(position)
        value = f"{key}={'x'.join(str(d) for d in shape)}"
        options += f" --input-shape {shlex.quote(value)}"
    return options


@record()
class Finding:
    """One problem: which rule found it, how bad, where, what is wrong and the concrete fix."""

    rule: str
    severity: Severity
    location: Location
    message: str
    fix: str
    # Bytes the fix would give back, when arenalens can compute it (None: not computable).
    saving_bytes: int | None = None
    # Numbers behind the message, for scripts (JSON); keys are stable per rule.
    details: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def sort_key(self) -> tuple[int, str, int, int, tuple[int, ...]]:
        """Most severe first, then rule id, then location: a deterministic report order."""
        where = self.location
        return (
            self.severity.rank,
            self.rule,
            -1 if where.subgraph is None else where.subgraph,
            -1 if where.operator is None else where.operator,
            where.tensors,
        )

    def as_dict(self, model: Model) -> dict[str, Any]:
        """JSON form, with the location spelled out as text too."""
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "location": {**self.location.as_dict(), "text": self.location.describe(model)},
            "message": self.message,
            "fix": self.fix,
            "saving_bytes": self.saving_bytes,
            "details": dict(self.details),
        }
