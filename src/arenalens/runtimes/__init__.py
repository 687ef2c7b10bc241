"""Runtime rules: how TFLM and LiteRT turn a model into arena problems and the arena to declare.

Each runtime module exposes a `RUNTIME` object that satisfies `Runtime`, the one interface the
pipeline and every other stage use: a model and a build (`builds.Build`) in, lifetimes, arenas,
the memory to declare, the overlaps its kernels allow, and the real interpreter's word out. Only
`runtimes/` imports the real interpreters, lazily, for `arenalens verify`.

What only TFLM has (its setup replay, the tail by operator, its kernel rules, offline plans and
the kernel code paths they hold on, output proofs on the wheel) is asked of
`runtimes.door.tflm_runtime()`, the one door into `runtimes/tflm/`: no module outside
`runtimes/` imports that package's modules (`tests/test_architecture.py` checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from functools import cached_property
from importlib import import_module
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from arenalens.errors import UsageError
from arenalens.records import record

if TYPE_CHECKING:
    from arenalens.analysis.arena_problem import ArenaProblem
    from arenalens.analysis.lifetimes import Timeline
    from arenalens.analysis.overlap_pairs import OverlapPair
    from arenalens.builds.build import Build
    from arenalens.builds.kernel_paths import KernelPath
    from arenalens.ir import Model
    from arenalens.planning.problem import Plan
    from arenalens.runtimes.arena_split import ArenaSplit
    from arenalens.runtimes.sections import ArenaSection
    from arenalens.runtimes.verification import Prediction, VerifyResult


@record(slots=True)
class Obstacle:
    """One reason the runtime cannot run a model: where, what, and in which phase it fails."""

    reason: str
    phase: str = "setup"  # "setup": the interpreter cannot be set up; "invoke": Invoke fails
    subgraph: int | None = None
    operator: int | None = None
    opcode: str | None = None
    dtype: str | None = None  # the tensor type the kernel refuses, when that is the reason
    no_kernel: bool = False  # the build registers no kernel for the operator at all
    fix: str = ""  # what to change in the conversion, when the kernel's rule says it
    # A builtin kernel's own Prepare check (LiteRT): an operator a delegate takes never runs it.
    builtin_prepare: bool = False

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
            "no_kernel": self.no_kernel,
            "reason": self.reason,
            "fix": self.fix,
        }


def _nothing() -> None:
    """A budget's split when its runtime has none."""
    return None


@record()
class MemoryBudget:
    """The memory a runtime needs for one plan: the number a user must declare, and its parts."""

    required_bytes: int  # TFLM: minimal kTensorArenaSize; LiteRT: arenas + persistent arenas
    parts: Mapping[str, int]  # e.g. {"head": ..., "tail": ...} or per-arena sizes
    assumptions: tuple[str, ...] = ()
    # The build the number is for, in words ("64-bit host build (tflite-micro wheel)",
    # "Cortex-M7 (Armv7E-M, DSP), CMSIS-NN kernels; ILP32 (Arm EABI), MicroAllocator").
    device: str = ""
    # The build itself (its JSON is `build_summary`'s, made by the writers); None for a runtime
    # with one build.
    build: Build | None = None
    # Why `required_bytes` is an estimate rather than the runtime's exact figure (empty: exact).
    estimate_reasons: tuple[str, ...] = ()
    # Why the runtime cannot run the model at all (empty: it runs); the bytes are then moot.
    obstacles: tuple[Obstacle, ...] = ()
    # Where every byte of required_bytes goes, in address order: what `sections` computes when
    # first read (`check` never reads them: a search loop does not pay for the tail's parts).
    sections_of: Callable[[], tuple[ArenaSection, ...]] = field(
        default=tuple, repr=False, compare=False
    )
    # The same memory split into the buffers the runtime lets firmware place apart: what
    # `split` computes when first read (only boards with several RAM banks ask).
    split_of: Callable[[], ArenaSplit | None] = field(default=_nothing, repr=False, compare=False)

    @cached_property
    def sections(self) -> tuple[ArenaSection, ...]:
        """Where every byte of required_bytes goes, in address order: they cover it exactly.
        Empty for a budget not made by a runtime's rules."""
        return self.sections_of()

    @cached_property
    def split(self) -> ArenaSplit | None:
        """The same memory split into the buffers the runtime lets firmware place apart, each at
        its minimum (TFLM: two buffers, resource variables apart); None for a runtime without
        such."""
        return self.split_of()

    @property
    def splits(self) -> bool:
        """True when the runtime lets firmware split this memory (`split` is not None), told
        without making the split."""
        return self.split_of is not _nothing

    @property
    def runs(self) -> bool:
        """True when nothing stops the runtime from setting the model up and invoking it."""
        return not self.obstacles


class Runtime(Protocol):
    """One runtime's rules, as functions of the model and the build the figures are for.

    A runtime without builds (LiteRT: the host interpreter only) takes the host build and
    refuses any other (`runtime_build` says so before any work)."""

    @property
    def name(self) -> str:
        """'tflm' | 'litert'."""

    @property
    def title(self) -> str:
        """'TensorFlow Lite Micro'."""

    @property
    def has_builds(self) -> bool:
        """True when the figures depend on the build (TFLM: the wheel or a firmware build)."""

    @property
    def default_alignment(self) -> int:
        """Offset alignment of this runtime's arenas (TFLM rounds sizes instead: 1)."""

    @property
    def data_alignment(self) -> int:
        """What a kernel's data can rely on when nobody asks for more: every offset the runtime's
        own planner gives is a multiple of it (TFLM: sizes rounded to it from an aligned head)."""

    @property
    def plans_overlaps(self) -> bool:
        """True when `overlaps` can let an output start below an input it consumes."""

    def timeline(self, model: Model, build: Build) -> Timeline:
        """Model → every tensor's lifetime on this build."""

    def arenas(
        self, model: Model, build: Build, *, alignment: int | None = None
    ) -> tuple[ArenaProblem, ...]:
        """Model → the arenas this runtime plans, primary first (`alignment` replaces the
        runtime's own)."""

    def budget(
        self, model: Model, arenas: Sequence[ArenaProblem], plans: Sequence[Plan], build: Build
    ) -> MemoryBudget:
        """Model + arenas + their plans → the memory to declare on this build."""

    def overlaps(
        self, model: Model, arena: ArenaProblem, *, paths: Sequence[KernelPath]
    ) -> tuple[OverlapPair, ...]:
        """The primary arena → every overlap (an output starting below an input it consumes)
        that the access orders of all these kernel code paths allow
        (`builds.kernel_paths.overlap_rules` says which paths a plan for a build must hold on:
        the paths are all of the build that matters here)."""

    def verify(self, path: str, prediction: Prediction, *, min_arena: bool = False) -> VerifyResult:
        """The model file and the prediction for it → predicted vs real, running the real
        interpreter (`runtime` extra; `min_arena`: also bisect the smallest arena)."""

    def require_interpreter(self) -> None:
        """RuntimeUnavailableError, with the install hint, when the real interpreter `verify`
        runs is not installed (a look-up, not an import: callers ask before any work)."""


RUNTIME_MODULES: Mapping[str, str] = MappingProxyType(
    {"tflm": "arenalens.runtimes.tflm.rules", "litert": "arenalens.runtimes.litert.rules"}
)


def get_runtime(name: str) -> Runtime:
    """Runtime name → its rules; UsageError for unknown names."""
    rules = _LOADED.get(name)
    if rules is None:
        module_name = RUNTIME_MODULES.get(name)
        if module_name is None:
            raise UsageError(f"unknown runtime '{name}' (known: {', '.join(RUNTIME_MODULES)})")
        rules = _LOADED[name] = import_module(module_name).RUNTIME
    return rules


# Each runtime's rules once imported: import_module's look-up costs ~9 K instructions, and a
# check asks twice (its analysis and the build it plans for).
_LOADED: dict[str, Runtime] = {}
