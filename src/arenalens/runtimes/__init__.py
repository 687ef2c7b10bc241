"""Runtime rules: how TFLM and LiteRT turn a model into arena problems and the arena to declare.

Each runtime module exposes a `RUNTIME: RuntimeRules` object. Only `runtimes/` imports the real
interpreters, lazily, for `arenalens verify`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType
from typing import Any

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.lifetimes import Timeline
from arenalens.errors import UsageError
from arenalens.runtimes.sections import ArenaSection


@dataclass(frozen=True, slots=True)
class Obstacle:
    """One reason the runtime cannot run a model: where, what, and in which phase it fails."""

    reason: str
    phase: str = "setup"  # "setup": the interpreter cannot be set up; "invoke": Invoke fails
    subgraph: int | None = None
    operator: int | None = None
    opcode: str | None = None
    dtype: str | None = None  # the tensor type the kernel refuses, when that is the reason

    def text(self) -> str:
        """One line: where, then why."""
        if self.operator is not None:
            prefix = f"operator {self.operator} ({self.opcode}) of subgraph {self.subgraph}"
        elif self.subgraph is not None:
            prefix = f"subgraph {self.subgraph}"
        else:
            return self.reason
        return f"{prefix}: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "phase": self.phase,
            "subgraph": self.subgraph,
            "operator": self.operator,
            "opcode": self.opcode,
            "dtype": self.dtype,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class MemoryBudget:
    """The memory a runtime needs for one plan: the number a user must declare, and its parts."""

    required_bytes: int  # TFLM: minimal kTensorArenaSize; LiteRT: arenas + persistent arenas
    parts: Mapping[str, int]  # e.g. {"head": ..., "tail": ...} or per-arena sizes
    assumptions: tuple[str, ...] = ()
    # The build the number is for, in words ("64-bit host build (tflite-micro wheel)",
    # "Cortex-M7 (Armv7E-M, DSP), CMSIS-NN kernels; ILP32 (Arm EABI), MicroAllocator").
    device: str = ""
    # The same as data (TFLM: `build_summary`: name, cpu, kernels, isa, abi, allocator); empty
    # for a runtime with one build.
    build: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # Why `required_bytes` is an estimate rather than the runtime's exact figure (empty: exact).
    estimate_reasons: tuple[str, ...] = ()
    # Why the runtime cannot run the model at all (empty: it runs); the bytes are then moot.
    obstacles: tuple[Obstacle, ...] = ()
    # Where every byte of required_bytes goes, in address order (`sections`): they cover it
    # exactly. Empty for a budget not made by a runtime's rules.
    sections: tuple[ArenaSection, ...] = ()

    @property
    def runs(self) -> bool:
        """True when nothing stops the runtime from setting the model up and invoking it."""
        return not self.obstacles


@dataclass(frozen=True, slots=True)
class VerifyRow:
    """One predicted-vs-real comparison (an arena size, a tensor's offset, ...)."""

    label: str
    predicted: int | None
    real: int | None
    agrees: bool
    note: str = ""


@dataclass(frozen=True)
class VerifyResult:
    """Predicted vs real, as measured by running the real interpreter on the model file."""

    runtime: str
    rows: tuple[VerifyRow, ...]
    notes: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        """True when every compared number matches."""
        return all(row.agrees for row in self.rows)


@dataclass(frozen=True)
class RuntimeRules:
    """One runtime's planning rules, as functions of the model."""

    name: str  # "tflm" | "litert"
    title: str  # "TensorFlow Lite Micro"
    # Model (+ build, see `has_builds`) → lifetimes.
    timeline: Callable[..., Timeline]
    # Model (+ options such as alignment, build) → the arenas this runtime plans, primary first.
    arenas: Callable[..., tuple[ArenaProblem, ...]]
    # Model + arenas + their plans (+ build) → memory to declare.
    budget: Callable[..., MemoryBudget]
    # (model path, Analysis) → predicted vs real, running the real interpreter (`runtime` extra).
    verify: Callable[..., VerifyResult] | None = None
    # Default offset alignment of this runtime's arenas (TFLM rounds sizes instead: 1).
    default_alignment: int = 1
    # True when timeline, arenas and budget take a `build=` (TFLM: the wheel or a Cortex-M
    # build); a runtime without builds has one set of figures, the host's.
    has_builds: bool = False

    def with_build(self, build: Any) -> dict[str, Any]:
        """The keyword arguments that give this runtime's rules a build ({} without builds, or
        for None: the rules' default, the host)."""
        return {"build": build} if self.has_builds and build is not None else {}

    # What a kernel's data can rely on when nobody asks for more: every offset the runtime's own
    # planner gives is a multiple of it (TFLM: sizes rounded to it from an aligned head start).
    data_alignment: int = 1


RUNTIME_MODULES: Mapping[str, str] = MappingProxyType(
    {"tflm": "arenalens.runtimes.tflm.rules", "litert": "arenalens.runtimes.litert.rules"}
)


def get_runtime(name: str) -> RuntimeRules:
    """Runtime name → its rules; UsageError for unknown names."""
    module_name = RUNTIME_MODULES.get(name)
    if module_name is None:
        raise UsageError(f"unknown runtime '{name}' (known: {', '.join(RUNTIME_MODULES)})")
    rules: RuntimeRules = import_module(module_name).RUNTIME
    return rules
