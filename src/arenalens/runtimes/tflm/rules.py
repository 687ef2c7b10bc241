"""TFLite Micro's rules: the head arena it plans, the `kTensorArenaSize` it needs, the overlaps
its kernels allow, and verify; and what only TFLM has, which the rest of arenalens asks here
(`runtimes.door.tflm_runtime()`) instead of reaching into this package's modules: its lifetimes,
the setup replay (can the build set the model up, what each operator keeps in the tail), its kernel
rules, offline plans and the kernel code paths they are right on, and the real interpreter.

Every rule takes the build (`builds.Build`: the x86-64 wheel or a firmware build). Verify runs
the real interpreter, the wheel, in a child process (`probe`, `verify`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.lifetimes import Timeline
from arenalens.builds.build import HOST, Build
from arenalens.builds.kernel_paths import ALL_PATHS, KernelPath
from arenalens.ir import Model, OfflinePlan, Tensor
from arenalens.planning.problem import Plan
from arenalens.records import record
from arenalens.runtimes import MemoryBudget, Runtime
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import arenas, tflm_timeline_with_scratch
from arenalens.runtimes.tflm.budget import budget

if TYPE_CHECKING:  # what the door hands out; each module loads when its question is asked
    from arenalens.analysis.inplace import InPlace, NotInPlace
    from arenalens.analysis.overlap_pairs import OverlapPair
    from arenalens.runtimes.tflm.kernels.base import KernelRule
    from arenalens.runtimes.tflm.operator_tail import OperatorPersistent
    from arenalens.runtimes.tflm.plan_validity import PlanValidity, SharedBytes
    from arenalens.runtimes.tflm.proof import OutputProof
    from arenalens.runtimes.tflm.support import Support
    from arenalens.runtimes.verification import Prediction, VerifyResult


@record(slots=True)
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
        self, model: Model, arena: ArenaProblem, *, paths: Sequence[KernelPath]
    ) -> tuple[OverlapPair, ...]:
        """The head arena → every overlap the access orders of these code paths allow."""
        # The access-order rules (and numpy under them) load only when overlaps are asked for.
        from arenalens.runtimes.tflm.overlap import arena_overlaps  # noqa: PLC0415 - see above

        return arena_overlaps(model, arena, paths=paths)

    def verify(self, path: str, prediction: Prediction, *, min_arena: bool = False) -> VerifyResult:
        """The wheel's real allocations vs the prediction for its own plan of the head arena on a
        build (the installed wheel's, unless another release is asked for)."""
        from arenalens.runtimes.tflm.verify import verify  # noqa: PLC0415 - the runtime extra

        head, plan = prediction.arenas[0], prediction.plans[0]
        return verify(path, prediction.model, head, plan, prediction.build, min_arena=min_arena)

    def require_interpreter(self) -> None:
        """RuntimeUnavailableError when the tflite_micro wheel `verify` runs is missing."""
        from arenalens.runtimes.tflm.probe import require_tflite_micro  # noqa: PLC0415

        require_tflite_micro()

    # -- What only TFLM has ---------------------------------------------------------------------

    def support(self, model: Model, build: Build = HOST) -> Support:
        """Can this build set the model up and invoke it, and every reason not (the setup
        replay's refusals, unregistered kernels, estimates)."""
        from arenalens.runtimes.tflm.support import support  # noqa: PLC0415

        return support(model, build)

    def kernel_rule(self, opcode: str) -> KernelRule | None:
        """The reference kernel's rule for an operator (its operands, options, what it folds);
        None when no TFLM kernel takes it."""
        from arenalens.runtimes.tflm.kernels.registry import REFERENCE_KERNELS  # noqa: PLC0415

        return REFERENCE_KERNELS.get(opcode)

    def resolver_method(self, opcode: str) -> str:
        """The `MicroMutableOpResolver` method a firmware calls to register a builtin operator
        ('PADV2' → 'AddPadV2'): its kernel rule's, else TFLM's usual spelling."""
        from arenalens.runtimes.tflm.kernels import base  # noqa: PLC0415

        rule = self.kernel_rule(opcode)
        return rule.resolver_method if rule is not None else base.default_resolver_method(opcode)

    def inplace_rule(self, opcode: str) -> InPlace | NotInPlace | None:
        """Whether the reference kernel may write its output over an input only it reads."""
        from arenalens.runtimes.tflm.kernels.registry import inplace_of  # noqa: PLC0415

        return inplace_of(opcode)

    def planned(self, tensor: Tensor) -> bool:
        """True when TFLM's planner gives this tensor bytes in the head."""
        from arenalens.runtimes.tflm.lifetimes import tflm_planned  # noqa: PLC0415

        return tflm_planned(tensor)

    def tensor_timeline(self, model: Model) -> Timeline:
        """Model → TFLM's tensor lifetimes (no scratch requests), steps as its planner counts."""
        from arenalens.runtimes.tflm.lifetimes import tflm_timeline  # noqa: PLC0415

        return tflm_timeline(model)

    def execution_timeline(self, model: Model) -> Timeline:
        """Model → the lifetimes of the steps TFLM executes (control flow unrolled as it runs)."""
        from arenalens.runtimes.tflm.lifetimes import execution_timeline  # noqa: PLC0415

        return execution_timeline(model)

    def tensor_bytes(self, tensor: Tensor) -> int:
        """The bytes TFLM gives a tensor."""
        from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes  # noqa: PLC0415

        return tflm_tensor_bytes(tensor)

    def resource_variable_tensors(self, model: Model) -> tuple[tuple[str, Tensor], ...]:
        """(shared name, the tensor its buffer is sized by) per resource variable."""
        from arenalens.runtimes.tflm.resources import resource_variables  # noqa: PLC0415

        buffers = resource_variables(model).buffers.values()
        return tuple((buffer.shared_name, buffer.tensor) for buffer in buffers)

    def resource_table_size(self, model: Model, table: int | None = None) -> int:
        """The MicroResourceVariables table the figures assume: `table` when the firmware names
        it, else one entry per distinct VAR_HANDLE shared_name (the Python interpreter's)."""
        from arenalens.runtimes.tflm.resources import resource_variables  # noqa: PLC0415

        return resource_variables(model, table).capacity

    def operator_persistent(self, model: Model, build: Build) -> tuple[OperatorPersistent, ...]:
        """What each operator keeps in the tail on this build (node, options, kernel buffers)."""
        from arenalens.runtimes.tflm.operator_tail import operator_persistent  # noqa: PLC0415

        return operator_persistent(model, build)

    def offline_plan(
        self, model: Model, arena: ArenaProblem, offsets: Mapping[int, int]
    ) -> OfflinePlan:
        """A head plan's offsets → the OfflineMemoryAllocation metadata TFLM reads."""
        from arenalens.runtimes.tflm.arena import offline_plan_for  # noqa: PLC0415

        return offline_plan_for(model, arena, offsets)

    def prepare_bound_tensors(self, model: Model) -> frozenset[tuple[int, int]]:
        """(subgraph, tensor) of the tensors a kernel's Prepare binds to an address."""
        from arenalens.runtimes.tflm.arena import prepare_bound_tensors  # noqa: PLC0415

        return prepare_bound_tensors(model)

    def plan_validity(self, model: Model) -> PlanValidity:
        """The model's offline plan → the tensors it lets share bytes while live, and the record
        of where it holds."""
        from arenalens.runtimes.tflm.plan_validity import plan_validity  # noqa: PLC0415

        return plan_validity(model)

    def pair_problem(self, model: Model, pair: SharedBytes, path: KernelPath) -> str:
        """Why two tensors sharing bytes computes wrong outputs on a kernel code path ('')."""
        from arenalens.runtimes.tflm.plan_validity import pair_problem  # noqa: PLC0415

        return pair_problem(model, pair, path)

    def valid_paths(
        self, model: Model, paths: Iterable[KernelPath] = ALL_PATHS
    ) -> tuple[KernelPath, ...]:
        """The kernel code paths the model's offline plan computes the right outputs on."""
        from arenalens.runtimes.tflm.plan_validity import valid_paths  # noqa: PLC0415

        return valid_paths(model, paths)

    def wrong_outputs(
        self, model: Model, path: KernelPath, *, limit: int | None
    ) -> tuple[str, ...]:
        """Why a build running this code path computes wrong outputs with the offline plan."""
        from arenalens.runtimes.tflm.plan_validity import wrong_outputs  # noqa: PLC0415

        return wrong_outputs(model, path, limit=limit)

    def wrong_everywhere(self, model: Model) -> tuple[str, ...]:
        """The offline plan's problems no known kernel code path tolerates."""
        from arenalens.runtimes.tflm.plan_validity import wrong_everywhere  # noqa: PLC0415

        return wrong_everywhere(model)

    def installed_build(self) -> Build | None:
        """The installed tflite_micro wheel's build (None: not installed, or not modelled)."""
        from arenalens.runtimes.tflm.probe import installed_build  # noqa: PLC0415

        return installed_build()

    def is_installed_wheel(self, build: Build) -> bool:
        """True when `build` is the installed wheel (what verify and proofs run)."""
        from arenalens.runtimes.tflm.probe import is_installed_wheel  # noqa: PLC0415

        return is_installed_wheel(build)

    def prove_outputs(
        self,
        original: bytes,
        rewritten: bytes,
        model: Model,
        *,
        invocations: int = 3,
        seed: int = 0,
    ) -> OutputProof:
        """Both files on the real wheel with the same random inputs → heads, output equality."""
        from arenalens.runtimes.tflm.proof import prove_outputs  # noqa: PLC0415

        return prove_outputs(original, rewritten, model, invocations=invocations, seed=seed)

    def require_proof(self) -> None:
        """RuntimeUnavailableError, as `prove_outputs` raises it, when the real interpreter
        that proves outputs is missing: a command whose plans must be proven asks first."""
        from arenalens.runtimes.tflm.proof import require_proof_interpreter  # noqa: PLC0415

        require_proof_interpreter()


TFLM = TflmRuntime()
RUNTIME: Runtime = TFLM  # mypy checks the class against the protocol here
