"""Can TFLM run this model: model + build → whether it sets up and invokes, and every reason not.

A model TFLM cannot set up has no arena size: `AllocateTensors` fails whatever the arena. The
reasons come from the runtime (a type it cannot size, an operator without a registered kernel,
a dynamic output shape, a non-empty intermediate tensor, resource-variable ids past the table)
and from each kernel's own checks in Prepare (`kernels`: types and options it refuses). Some
kernels set up but refuse a type only when Invoke runs; those are reasons too, with their phase.
"""

from __future__ import annotations

from arenalens.builds.build import HOST, Build
from arenalens.cannot_run import group_refusals
from arenalens.ir import Model, Tensor
from arenalens.memo import recent_by_identity
from arenalens.records import record
from arenalens.runtimes import Obstacle
from arenalens.runtimes.tflm.kernels.base import (
    INVOKE,
    SETUP,
    Estimate,
    KernelContext,
    OutputShape,
    Refusal,
)
from arenalens.runtimes.tflm.kernels.registry import REFERENCE_KERNELS, stands_in
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, operator_setups
from arenalens.runtimes.tflm.resources import invoke_failures, resource_variables
from arenalens.runtimes.tflm.tensor_bytes import TFLM_ELEMENT_BYTES, tflm_tensor_bytes

# The type names TFLM sizes, as a set (a membership test on the mapping proxy costs twice).
_SIZED_TYPES = frozenset(TFLM_ELEMENT_BYTES)
# Kernel events that make an operator an obstacle or an estimate (`_operator_obstacles`).
_NOTABLE_EVENTS = frozenset({Refusal, OutputShape, Estimate})


@record()
class Support:
    """Whether TFLM runs a model on one build, and the operators whose bytes are estimates."""

    build: Build
    obstacles: tuple[Obstacle, ...]
    unmodelled: tuple[str, ...]  # opcodes whose kernel has no rule (their bytes are estimates)
    # Opcodes whose rule holds sizes measured on the 64-bit wheel (`KernelRule.derived` False),
    # used as they are on another build: pointers and enums only shrink, so they are high there.
    wheel_measured: tuple[str, ...] = ()
    # Opcodes a CMSIS-NN build runs CMSIS-NN's kernel for, modelled by the reference kernel's rule.
    reference_stand_ins: tuple[str, ...] = ()
    estimates: tuple[Estimate, ...] = ()  # what rules say they do not know, one per reason

    @property
    def exact(self) -> bool:
        """True when every kernel's bytes on this build come from a rule made for it."""
        return not (
            self.unmodelled or self.wheel_measured or self.reference_stand_ins or self.estimates
        )

    @property
    def sets_up(self) -> bool:
        """True when AllocateTensors succeeds given a large enough arena."""
        return not any(obstacle.phase == SETUP for obstacle in self.obstacles)

    @property
    def runs(self) -> bool:
        """True when the model sets up and Invoke accepts every operator."""
        return not self.obstacles


def support(
    model: Model, build: Build = HOST, setups: tuple[OperatorSetup, ...] | None = None
) -> Support:
    """Model + build → every reason TFLM cannot set up or invoke it, in model order."""
    if setups is None:
        return _support(model, build)  # the head arena's notes and the budget both ask
    return _support_of(model, build, setups)


@recent_by_identity()
def _support(model: Model, build: Build) -> Support:
    return _support_of(model, build, operator_setups(model, build))


def _support_of(model: Model, build: Build, operators: tuple[OperatorSetup, ...]) -> Support:
    found: list[Obstacle] = []
    unmodelled: set[str] = set()
    wheel_measured: set[str] = set()
    stand_ins: set[str] = set()
    estimates: dict[str, Estimate] = {}
    if len(operators) != sum(len(subgraph.operators) for subgraph in model.subgraphs):
        raise ValueError("support needs one setup per operator, as operator_setups makes them")
    # One setup per operator in model order (`operator_setups`): walked beside the operators
    # (a dict by (subgraph, operator) would read four fields of each setup).
    setups = iter(operators)
    standing_in: dict[str, bool] = {}  # by opcode: asked once per model, not per operator
    is_host = build.is_host
    for subgraph in model.subgraphs:
        tensors = subgraph.tensors
        unsized = _first_unsized(tensors)
        if unsized is not None:
            found.append(_unsized_obstacle(unsized, subgraph.index))
        for operator in subgraph.operators:
            setup = next(setups)
            # The fields read here, unpacked at once (a NamedTuple field read by name costs a
            # generic attribute lookup).
            _, registered, rule, _, _, _, kinds, holds = setup
            # Only an output's dims can make it dynamic (CheckDynamicTensors): its own outputs
            # are looked at, not every tensor of the subgraph (most are constants).
            sized = True
            for index in operator.outputs:
                if index >= 0:
                    for dim in tensors[index].shape:
                        if dim <= 0:
                            sized = False
            # The usual operator: registered, its events hold no refusal, rewritten shape or
            # estimate, no intermediates, no output dim <= 0: nothing to find. (Told from the
            # event types the setup holds: asking for each view is a Python call per operator.)
            if holds is None:
                holds = kinds
            plain = (
                sized
                and registered
                and holds is not None
                and holds.isdisjoint(_NOTABLE_EVENTS)
                and not operator.intermediates
            )
            if not plain:
                obstacles = _operator_obstacles(setup, sized)
                if obstacles:
                    found.extend(obstacles)
                if not registered:
                    continue
            opcode = operator.opcode
            if rule is None:
                unmodelled.add(opcode)
                continue
            stands = standing_in.get(opcode)
            if stands is None:
                stands = standing_in[opcode] = stands_in(opcode, build)
            if stands:
                stand_ins.add(opcode)
            elif not rule.derived and not is_host:
                wheel_measured.add(opcode)
            if not plain:
                for estimate in setup.estimates:
                    estimates.setdefault(estimate.reason, estimate)
    table = resource_variables(model, build.resource_variables)
    found.extend(Obstacle(text) for text in table.failures)
    found.extend(
        Obstacle(
            why, INVOKE, mismatch.subgraph, mismatch.operator, mismatch.opcode, fix=mismatch.fix
        )
        for mismatch, why in invoke_failures(table, build.dchecks)
    )
    return Support(
        build,
        tuple(found),
        tuple(sorted(unmodelled)),
        wheel_measured=tuple(sorted(wheel_measured)),
        reference_stand_ins=tuple(sorted(stand_ins)),
        estimates=tuple(estimates[reason] for reason in sorted(estimates)),
    )


def _first_unsized(tensors: tuple[Tensor, ...]) -> Tensor | None:
    """The first tensor TFLM cannot size (a type TfLiteTypeSizeOf does not know), or None (a
    plain loop: a C pass, `issuperset(map(attrgetter))`, costs more per tensor)."""
    sized = _SIZED_TYPES
    for tensor in tensors:
        if tensor.dtype.name not in sized:
            return tensor
    return None


def _unsized_obstacle(tensor: Tensor, subgraph_index: int) -> Obstacle:
    return Obstacle(
        f"TFLM cannot size tensor {tensor.index} '{tensor.name}' ({tensor.dtype.name}): "
        "setup fails",
        subgraph=subgraph_index,
        dtype=tensor.dtype.name,
    )


def _operator_obstacles(setup: OperatorSetup, positive_shapes: bool = False) -> list[Obstacle]:
    """Why TFLM does not run the operator of `setup` (`positive_shapes`: none of its outputs
    has a dim <= 0 in the file)."""
    context = setup.context
    subgraph, operator = context.subgraph, context.operator
    if not setup.registered:
        # The NPU's rule and payload reader load only for an operator no kernel runs.
        from arenalens.runtimes.tflm.kernels.ethos_u import NPU_KERNELS  # noqa: PLC0415

        reason = _no_kernel_reason(operator.opcode, setup.context.build)
        fix = _npu_build_fix(setup.context) if operator.opcode in NPU_KERNELS else ""
        return [
            Obstacle(
                reason,
                SETUP,
                subgraph.index,
                operator.index,
                operator.opcode,
                no_kernel=True,
                fix=fix,
            )
        ]
    refusals = setup.refusals
    found = [_obstacle(context, r.reason, r.phase, r.fix) for r in refusals] if refusals else []
    # CheckDynamicTensors reads the eval dims after Prepare (rewritten ones included).
    rewritten, tensors = setup.output_shapes, subgraph.tensors
    for index in operator.outputs if rewritten or not positive_shapes else ():
        if index < 0:
            continue  # no tensor: no dims
        shape = rewritten.get(index, tensors[index].shape) if rewritten else tensors[index].shape
        if shape != (0,) and min(shape, default=1) <= 0:  # a dim <= 0 (no generator: per output)
            found.append(
                _obstacle(
                    context,
                    f"output {index} has shape {list(shape)}: 'Dynamic tensors are not supported'",
                )
            )
    for index in operator.intermediates:  # usually none
        if index >= 0 and tflm_tensor_bytes(tensors[index]) != 0:
            found.append(
                _obstacle(
                    context,
                    f"non-empty intermediate tensor {index}: "
                    "'Does not support intermediate tensor with non-zero size'",
                )
            )
    return found


def _obstacle(context: KernelContext, reason: str, phase: str = SETUP, fix: str = "") -> Obstacle:
    """A reason the operator of `context` does not run."""
    operator = context.operator
    return Obstacle(reason, phase, context.subgraph.index, operator.index, operator.opcode, fix=fix)


def _npu_build_fix(context: KernelContext) -> str:
    """The build that runs a Vela-compiled operator: this core (a Cortex-M55 when it is none)
    with the NPU its command stream was compiled for."""
    from arenalens.vela.compiled import read_payload  # noqa: PLC0415 - Vela-compiled models only

    stream = context.input(0)
    payload = b""
    if stream is not None and stream.has_data:
        payload = context.model.buffer_bytes(stream.buffer)
    compiled_for = read_payload(payload)[0]
    npu = compiled_for.npu if compiled_for is not None else None
    build = context.build
    cpu = build.cpu if build.cpu is not None and build.cpu.startswith("cortex-") else "cortex-m55"
    target = f"--cpu {cpu} --npu {npu.name}" if npu is not None else f"--cpu {cpu} --npu NPU"
    compiled = ", the NPU Vela compiled it for" if npu is not None else ""
    return (
        f"run it on firmware built for an Ethos-U NPU: {target} (TFLM with "
        f"CO_PROCESSOR=ethos_u{compiled}), or give the uncompiled model (before Vela) to a "
        "build without the NPU"
    )


def _no_kernel_reason(opcode: str, build: Build) -> str:
    rule = REFERENCE_KERNELS.get(opcode)
    if rule is not None and rule.unregistered is not None:
        name = opcode.removeprefix("CUSTOM:")
        return f"no {name} kernel in this build ({rule.unregistered})"
    what = (
        f"custom operator '{opcode.removeprefix('CUSTOM:')}'"
        if opcode.startswith("CUSTOM:")
        else opcode
    )
    return f"TFLM has no kernel for {what} (not registered by the {build.name} build's op resolver)"


def setup_failures(model: Model, build: Build = HOST) -> list[str]:
    """Reasons TFLM's setup would fail on this model whatever the arena size, as text: one line
    per distinct reason, with the operators it hits."""
    setup = [o for o in support(model, build).obstacles if o.phase == SETUP]
    return [refusal.text() for refusal in group_refusals(model, setup)]
