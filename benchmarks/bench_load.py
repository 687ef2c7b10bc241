"""Load + lifetimes speed: the largest shared model and a generated 20,000-operator model.

Baseline, measured in the same run: walking every tensor's name, shape and type and every
operator's inputs and outputs through the `tflite` package's generated accessors alone (what a
hand-written FlatBuffer script does). Ratios < 1 mean arenalens is faster than that walk while
doing more (bounds checks, the model checker, lifetimes).

Run: python benchmarks/bench_load.py [--operators 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import warnings

from rich.console import Console
from rich.table import Table
from tflite.Model import Model as FlatModel

from arenalens import load_model
from arenalens.runtimes.litert.lifetimes import litert_timeline
from arenalens.runtimes.tflm.lifetimes import tflm_timeline
from benchkit import SHARED, best_of, synthetic_model


def tflite_package_walk(data: bytes) -> int:
    """Read every tensor and operator with the generated accessors; returns a checksum."""
    model = FlatModel.GetRootAs(data, 0)
    total = 0
    for s in range(model.SubgraphsLength()):
        subgraph = model.Subgraphs(s)
        for t in range(subgraph.TensorsLength()):
            tensor = subgraph.Tensors(t)
            total += len(tensor.Name() or b"") + tensor.ShapeLength() + tensor.Type()
            total += tensor.Buffer()
        for o in range(subgraph.OperatorsLength()):
            operator = subgraph.Operators(o)
            total += operator.InputsLength() + operator.OutputsLength() + operator.OpcodeIndex()
    return total


def largest_shared_model() -> tuple[str, bytes] | None:
    """(name, bytes) of the corpus model with the most operators, if the corpus is here."""
    if not SHARED.is_dir():
        return None
    best = max(SHARED.glob("*.tflite"), key=lambda p: load_model(p).operator_count, default=None)
    return None if best is None else (best.name, best.read_bytes())


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operators", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    cases: list[tuple[str, bytes]] = []
    shared = largest_shared_model()
    if shared is not None:
        cases.append(shared)
    else:
        print(f"(corpus not found at {SHARED}; shared-model row skipped)", file=sys.stderr)
    cases.append(
        (f"synthetic chain, {args.operators:,} ops", synthetic_model("chain", args.operators))
    )
    table = Table(title=f"load + lifetimes (best of {args.repeat} runs, one core)")
    for column in (
        "model",
        "ops",
        "tensors",
        "baseline walk",
        "load",
        "TFLM lifetimes",
        "LiteRT lifetimes",
        "load+lifetimes",
        "ratio vs walk",
    ):
        table.add_column(column, justify="left" if column == "model" else "right")
    for name, data in cases:
        model = load_model(data)
        walk = best_of(args.repeat, lambda d=data: tflite_package_walk(d))
        load = best_of(args.repeat, lambda d=data: load_model(d))
        tflm = best_of(args.repeat, lambda m=model: tflm_timeline(m))
        litert = best_of(args.repeat, lambda m=model: litert_timeline(m))
        total = load + tflm
        table.add_row(
            name,
            f"{model.operator_count:,}",
            f"{model.tensor_count:,}",
            f"{walk * 1000:.1f} ms",
            f"{load * 1000:.1f} ms",
            f"{tflm * 1000:.1f} ms",
            f"{litert * 1000:.1f} ms",
            f"{total * 1000:.1f} ms",
            f"{total / walk:.2f}x",
        )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
