"""Labels: report values → the short texts every view shows (tensor, operator, shape, status).

Each label is made here once: the terminal report and the images call these functions, and the
HTML report's document carries their results, so the viewer shows them without deriving them again.

Tensor labels. Converters name tensors by path and join fused ops with ';'
(`model/activation_2/Relu;model/batch_normalization_2/FusedBatchNormV3;...`), so full names are
too long for a chart and their endings are generic (`Relu`, `output`). For each name this keeps
the first ';' part, drops trailing path parts that end many names (a generic ending says nothing),
then keeps the shortest tail of path parts no other name shares — the way editors label tabs of
files with the same name. `activation_2`, `Conv2d_1_depthwise`, `module_a/branch_3/1`.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Sequence

from arenalens.declared import Status
from arenalens.next_steps import OPTIMIZED_FILE, optimized_file

# A last path part that ends at least this share of the names is generic and dropped.
GENERIC_SHARE = 0.3


def short_labels(names: Sequence[str]) -> tuple[str, ...]:
    """Names → one short label each, unique where the names allow it."""
    paths = [_path(name) for name in names]
    endings = Counter(path[-1] for path in paths if len(path) > 1)
    threshold = max(2, GENERIC_SHARE * len(paths))
    stripped = [
        path[:-1] if len(path) > 1 and endings[path[-1]] >= threshold else path for path in paths
    ]
    tails: Counter[tuple[str, ...]] = Counter()
    for path in stripped:
        for length in range(1, len(path) + 1):
            tails[tuple(path[-length:])] += 1
    labels = []
    for path in stripped:
        label = "/".join(path)
        for length in range(1, len(path) + 1):
            tail = tuple(path[-length:])
            if tails[tail] == 1:
                label = "/".join(tail)
                break
        labels.append(label)
    return tuple(labels)


def _path(name: str) -> list[str]:
    first = name.partition(";")[0]
    parts = [part for part in first.split("/") if part]
    return parts or [first or "(unnamed)"]


def operator_label(
    operator: int | None, opcode: str, *, subgraph: int = 0, nested: bool = False
) -> str:
    """'op 3 CONV_2D'; with the subgraph when the arena spans several ('subgraph 1 op 3 ...');
    the step's own label (opcode) when no operator runs."""
    if operator is None:
        return opcode
    where = f"subgraph {subgraph} " if nested else ""
    return f"{where}op {operator} {opcode}"


def format_shape(shape: Iterable[int]) -> str:
    """(1, 96, 96, 3) → '1x96x96x3'; a scalar → 'scalar'."""
    dims = list(shape)
    return "x".join(str(d) for d in dims) if dims else "scalar"


def shape_label(kind: str, shape: Sequence[int]) -> str:
    """A buffer's shape as text; scratch buffers and temporaries have none: their kind instead."""
    return format_shape(shape) if kind in ("tensor", "variable") else kind


def optimize_command(model_argument: str, planner: str, build_options: str = "") -> str:
    """The command that writes a plan into the model: `--overlap` for the plan with overlaps
    (named '<planner>+overlaps'), else `--planner NAME`; `build_options` (`build_flags`) keep
    the device build the plan was made for."""
    output = optimized_file(shlex.split(model_argument)[0]) if model_argument else OPTIMIZED_FILE
    base = f"arenalens optimize {model_argument}{build_options} -o {output}"
    if planner.endswith(OVERLAP_PLAN_SUFFIX):
        return base + " --overlap"
    return f"{base} --planner {planner}"


# The overlap plan's name ends with this (pipeline.py names it '<planner>+overlaps').
OVERLAP_PLAN_SUFFIX = "+overlaps"

_QUALIFIERS = {
    Status.EXACT: "",
    Status.ESTIMATE: "estimate",
    Status.CANNOT_RUN: "cannot run",
    Status.WRONG_OUTPUTS: "cannot run correctly",
    Status.PLACEHOLDER_SHAPE: "for a placeholder input shape",
    Status.WRONG_OUTPUTS: "the offline plan would corrupt tensors",
}
_REASON_PREFIXES = {
    Status.CANNOT_RUN: "cannot run",
    Status.PLACEHOLDER_SHAPE: "unknown input size",
    Status.WRONG_OUTPUTS: "cannot run correctly",
}


def declared_qualifier(status: Status) -> str:
    """What follows the number to declare, in parentheses: '' when exact, 'estimate' ..."""
    return _QUALIFIERS[status]


def reason_prefix(status: Status) -> str:
    """What each reason the number is not exact begins with: 'estimate', 'cannot run' ..."""
    return _REASON_PREFIXES.get(status, "estimate")
