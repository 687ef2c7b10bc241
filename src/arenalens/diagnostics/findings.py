"""Findings: what a rule reports — rule id, severity, where, what is wrong, and what to do."""

from __future__ import annotations

import enum
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from arenalens.ir import Model
from arenalens.names import short_name


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


@dataclass(frozen=True, slots=True)
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
    """The model as a command-line argument in a fix ('MODEL' when it came from bytes)."""
    if not model.source or model.source.startswith("<"):
        return "MODEL"
    return shlex.quote(model.source)


@dataclass(frozen=True)
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
