"""What `verify` and `optimize` hold a runtime to on its real interpreter: the prediction, the
rows compared and their result, and an original-vs-rewritten output proof. Only those commands
load this module (`Runtime.verify`, `prove_outputs`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arenalens.analysis.arena_problem import ArenaProblem
    from arenalens.builds.build import Build
    from arenalens.ir import Model
    from arenalens.planning.problem import Plan


@dataclass(frozen=True, slots=True)
class VerifyRow:
    """One predicted-vs-real comparison (an arena size, a tensor's offset, ...)."""

    label: str
    predicted: int | None
    real: int | None
    agrees: bool
    note: str = ""


@dataclass(frozen=True)
class Prediction:
    """What arenalens predicts for a model on a build, as `verify` holds the real interpreter to
    it: the runtime's arenas, primary first, and the runtime's own plan of each."""

    model: Model
    arenas: tuple[ArenaProblem, ...]
    plans: tuple[Plan, ...]
    build: Build


@dataclass(frozen=True)
class VerifyResult:
    """Predicted vs real, as measured by running the real interpreter on the model file."""

    runtime: str
    rows: tuple[VerifyRow, ...]
    notes: tuple[str, ...] = ()
    interpreter: str = ""  # the real interpreter run: its package and version
    predicted_for: str = ""  # the build the predictions are for (`build_title`)
    refused: str = ""  # the real interpreter refused to set the model up: its words

    @property
    def agrees(self) -> bool:
        """True when every compared number matches."""
        return all(row.agrees for row in self.rows)


@dataclass(frozen=True)
class OutputProof:
    """Original vs rewritten model on the real interpreter (`tflm_runtime().prove_outputs`):
    heads and whether outputs are bit-identical."""

    identical: bool
    original_head: int | None
    new_head: int | None
    invocations: int
    detail: str = ""
    logs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
