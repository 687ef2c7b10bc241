"""TFLite Micro's rules: the head arena it plans, the `kTensorArenaSize` it needs, the overlaps
its kernels allow, and verify.

Every rule takes the build (`builds.Build`: the x86-64 wheel or a firmware build). Verify runs
the real interpreter, the wheel, in a child process (`probe`, `verify`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.lifetimes import Timeline
from arenalens.analysis.overlap_pairs import OverlapPair
from arenalens.builds.build import Build
from arenalens.builds.kernel_paths import KernelPath
from arenalens.ir import Model
from arenalens.planning.problem import Plan
from arenalens.runtimes import MemoryBudget, Runtime, VerifyResult
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import arenas, tflm_timeline_with_scratch
from arenalens.runtimes.tflm.budget import budget


@dataclass(frozen=True, slots=True)
class TflmRuntime:
    """TFLM as a `runtimes.Runtime`."""

    name: str = "tflm"
    title: str = "TensorFlow Lite Micro"
    has_builds: bool = True
    default_alignment: int = 1
    data_alignment: int = ARENA_ALIGNMENT
    plans_overlaps: bool = True

    def timeline(self, model: Model, build: Build) -> Timeline:
        """Model → TFLM's lifetimes, scratch requests included."""
        return tflm_timeline_with_scratch(model, build)

    def arenas(
        self, model: Model, build: Build, *, alignment: int | None = None
    ) -> tuple[ArenaProblem, ...]:
        """Model → the head arena on this build."""
        return arenas(model, alignment, build=build)

    def budget(
        self, model: Model, arenas: Sequence[ArenaProblem], plans: Sequence[Plan], build: Build
    ) -> MemoryBudget:
        """Head arena + plan → the minimal kTensorArenaSize on this build."""
        return budget(model, arenas, plans, build=build)

    def overlaps(
        self,
        model: Model,
        arena: ArenaProblem,
        build: Build,
        *,
        paths: Sequence[KernelPath],
    ) -> tuple[OverlapPair, ...]:
        """The head arena → every overlap the access orders of these code paths allow."""
        # The access-order rules (and numpy under them) load only when overlaps are asked for.
        from arenalens.runtimes.tflm.overlap import arena_overlaps  # noqa: PLC0415 - see above

        return arena_overlaps(model, arena, paths=paths)

    def verify(
        self,
        path: str,
        model: Model,
        arenas: Sequence[ArenaProblem],
        plans: Sequence[Plan],
        build: Build,
        *,
        min_arena: bool = False,
    ) -> VerifyResult:
        """The wheel's real allocations vs the prediction for its own plan on a build (the
        installed wheel's, unless another release is asked for)."""
        from arenalens.runtimes.tflm.verify import verify  # noqa: PLC0415 - the runtime extra

        return verify(path, model, arenas[0], plans[0], build, min_arena=min_arena)


RUNTIME: Runtime = TflmRuntime()  # mypy checks the class against the protocol here
