"""Short labels for tensors: full names → the shortest text that still tells them apart.

Converters name tensors by path and join fused ops with ';'
(`model/activation_2/Relu;model/batch_normalization_2/FusedBatchNormV3;...`), so full names are
too long for a chart and their endings are generic (`Relu`, `output`). For each name this keeps
the first ';' part, drops trailing path parts that end many names (a generic ending says nothing),
then keeps the shortest tail of path parts no other name shares — the way editors label tabs of
files with the same name. `activation_2`, `Conv2d_1_depthwise`, `module_a/branch_3/1`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

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
