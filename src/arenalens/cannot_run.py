"""Why a runtime cannot run a model, said once per reason: obstacles → grouped refusals, each with
the operators it hits and what to change in the conversion.

A converter repeats a pattern across a whole model, so one cause usually refuses many operators
(a float16-quantized model has a DEQUANTIZE per weight tensor, 74 of them in a MobileNet): the
user needs the cause once, the operators it hits, and the one change that removes all of them.
The runtime's own message stays as it is (it is what the device prints); the fix names the
conversion setting behind it.
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.ir import Model, Operator
from arenalens.records import record
from arenalens.runtimes import Obstacle

# How many operator numbers one line lists before it counts the rest.
OPERATORS_LISTED = 8

# Builtin operators TFLM has no kernel for, and the nearest thing it does run.
NEAREST_SUPPORTED = {
    "DENSIFY": "convert without sparse weights (drop the sparsity optimization): TFLM reads "
    "dense weights only",
    "GELU": "HARD_SWISH, or the sigmoid form x·LOGISTIC(1.702·x) built from LOGISTIC and MUL "
    "before converting",
    "RELU_N1_TO_1": "MINIMUM and MAXIMUM with constants 1 and -1 (a clip)",
    "RELU_0_TO_1": "MINIMUM and MAXIMUM with constants 1 and 0 (a clip)",
    "POW": "MUL, SQUARE or SQRT for a constant exponent",
    "TILE": "BROADCAST_TO or CONCATENATION",
    "SELECT": "SELECT_V2",
    "LOCAL_RESPONSE_NORMALIZATION": "L2_NORMALIZATION",
    "TOPK_V2": "ARG_MAX (for the top 1)",
    "ONE_HOT": "GATHER rows of a constant identity matrix",
    "NON_MAX_SUPPRESSION_V4": "the TFLite_Detection_PostProcess custom operator, which TFLM "
    "registers",
    "NON_MAX_SUPPRESSION_V5": "the TFLite_Detection_PostProcess custom operator, which TFLM "
    "registers",
    "RANGE": "a constant tensor (the range is known when converting)",
    "REDUCE_PROD": "EXP of SUM of LOG for positive values, or a MUL chain for a short axis",
}
_HYBRID_WEIGHT_TYPES = frozenset({"INT8", "INT4", "UINT8"})
_FLOAT_ACTIVATIONS = frozenset({"FLOAT32", "FLOAT16"})


@record(slots=True)
class Refusal:
    """One distinct reason the runtime refuses a model, the operators it hits and the fix."""

    reason: str  # the runtime's own words
    phase: str  # "setup": AllocateTensors fails; "invoke": Invoke fails
    opcode: str | None  # None: not an operator's refusal (a tensor type, a resource table)
    operators: tuple[tuple[int, int], ...]  # (subgraph, operator), in model order
    fix: str  # what to change, in the conversion where that is the cause

    @property
    def count(self) -> int:
        """How many operators (or places) this reason refuses."""
        return max(1, len(self.operators))

    def where(self) -> str:
        """'operator 3 (CONV_2D) of subgraph 0', '74 DEQUANTIZE operators (0, 2, 4, ... and 66
        more) of subgraph 0', or 'the model' for a reason that is no operator's."""
        if not self.operators:
            return "the model"
        subgraphs = sorted({subgraph for subgraph, _ in self.operators})
        of = f"subgraph {subgraphs[0]}" if len(subgraphs) == 1 else "several subgraphs"
        if len(self.operators) == 1:
            ((_, operator),) = self.operators
            return f"operator {operator} ({self.opcode}) of {of}"
        numbers = [operator for _, operator in self.operators]
        listed = ", ".join(str(n) for n in numbers[:OPERATORS_LISTED])
        if len(numbers) > OPERATORS_LISTED:
            listed += f", ... and {len(numbers) - OPERATORS_LISTED} more"
        return f"{len(numbers)} {self.opcode} operators ({listed}) of {of}"

    def text(self) -> str:
        """One line: where, then why."""
        return f"{self.where()}: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "reason": self.reason,
            "phase": self.phase,
            "opcode": self.opcode,
            "operators": [list(pair) for pair in self.operators],
            "count": self.count,
            "fix": self.fix,
        }


def group_refusals(model: Model, obstacles: Sequence[Obstacle]) -> tuple[Refusal, ...]:
    """Obstacles (one per operator and reason) → one Refusal per distinct (phase, opcode,
    reason), in the order each first appears."""
    groups: dict[tuple[str, str | None, str], list[Obstacle]] = {}
    for obstacle in obstacles:
        groups.setdefault((obstacle.phase, obstacle.opcode, obstacle.reason), []).append(obstacle)
    refusals = []
    for (phase, opcode, reason), members in groups.items():
        operators = tuple((o.subgraph or 0, o.operator) for o in members if o.operator is not None)
        refusals.append(
            Refusal(
                reason=reason,
                phase=phase,
                opcode=opcode,
                operators=operators,
                fix=conversion_fix(model, members[0]),
            )
        )
    return tuple(refusals)


def conversion_fix(model: Model, obstacle: Obstacle) -> str:
    """What to change so the runtime accepts what this obstacle refuses: the kernel rule's own
    fix where it has one (a quantization check names the scale and the conversion setting behind
    it), else one read from the reason and the operator's types."""
    if obstacle.fix:
        return obstacle.fix
    operator = _operator(model, obstacle)
    opcode = obstacle.opcode
    if opcode is None:
        if obstacle.dtype:
            return (
                f"convert so that no tensor is {obstacle.dtype} (TFLM sizes only the numeric "
                "types its kernels use): cast to a supported type before exporting"
            )
        return "convert the model with types and operators the runtime supports"
    if obstacle.no_kernel:
        return _missing_kernel_fix(opcode)
    types = _input_types(model, obstacle, operator)
    if "FLOAT16" in types:
        return (
            "the model was converted with float16 weights (float16 quantization), and TFLM has "
            "no float16 kernels: convert with int8 quantization (full-integer, with a "
            "representative dataset) or keep the weights float32"
        )
    if types[:1] and types[0] in _FLOAT_ACTIVATIONS and _HYBRID_WEIGHT_TYPES & set(types[1:2]):
        return (
            f"{opcode} takes float activations with {types[1]} weights (dynamic-range, 'hybrid' "
            "quantization), which TFLM has no kernels for: convert with full-integer int8 "
            "quantization (a representative dataset) or keep the weights float32"
        )
    if obstacle.dtype:
        return (
            f"convert so that {opcode} sees a type its kernel accepts (it refuses "
            f"{obstacle.dtype}): e.g. full-integer int8 quantization"
        )
    return (
        f"change {opcode}'s operands or options to what its kernel accepts (the check above "
        "names the one that fails), usually by a different quantization or converter setting"
    )


def _missing_kernel_fix(opcode: str) -> str:
    if opcode == "CUSTOM:ethos-u":
        return (
            "run it on an Ethos-U build (the NPU firmware registers ethos-u), or give the "
            "uncompiled model (before Vela) to a build without the NPU"
        )
    if opcode.startswith("CUSTOM:"):
        name = opcode.removeprefix("CUSTOM:")
        return (
            f"register a kernel for the custom operator '{name}' in the application's op resolver "
            f'(resolver.AddCustom("{name}", ...)), or convert it away: build that step from '
            "builtin operators, or compute it outside the model"
        )
    nearest = NEAREST_SUPPORTED.get(opcode)
    if nearest is not None:
        return f"TFLM has no {opcode} kernel; the nearest it runs: {nearest}"
    return (
        f"replace {opcode} with operators TFLM registers (a converter option or computing that "
        "step outside the model), or register a kernel for it in the firmware's op resolver"
    )


def _operator(model: Model, obstacle: Obstacle) -> Operator | None:
    if obstacle.operator is None or obstacle.subgraph is None:
        return None
    if not 0 <= obstacle.subgraph < len(model.subgraphs):
        return None
    operators = model.subgraphs[obstacle.subgraph].operators
    return operators[obstacle.operator] if 0 <= obstacle.operator < len(operators) else None


def _input_types(model: Model, obstacle: Obstacle, operator: Operator | None) -> list[str]:
    """The type names of an operator's inputs, in order ('' for an omitted one)."""
    if operator is None or obstacle.subgraph is None:
        return []
    tensors = model.subgraphs[obstacle.subgraph].tensors
    return [
        tensors[index].dtype.name if 0 <= index < len(tensors) else "" for index in operator.inputs
    ]
