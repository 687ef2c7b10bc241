"""Split a generated model by hand and compare it with the original on the real TFLM wheel."""

from __future__ import annotations

from collections.abc import Sequence

from arenalens import load_model
from arenalens.ir import Model
from arenalens.optimization import prove_outputs
from arenalens.split.bands import split_bands
from arenalens.split.channels import split_channels
from arenalens.split.lowering import write_split
from arenalens.split.parts import RegionSplit, SplitKind
from arenalens.split.regions import Rules, region_of
from arenalens.split.schedule import SplitPlan

Cut = tuple[SplitKind, int, int, int]  # kind, first operator, last operator, parts


def cut(model: Model, kind: SplitKind, first: int, last: int, parts: int) -> RegionSplit:
    """One region split (the test fails with the refusal when there is none)."""
    rules = Rules.of(model)
    region = region_of(rules, first, last, kind)
    assert not isinstance(region, str), region
    split = (split_bands if kind is SplitKind.BANDS else split_channels)(rules, region, parts)
    assert not isinstance(split, str), split
    return split


def split_model(data: bytes, cuts: Sequence[Cut]) -> tuple[bytes, Model, SplitPlan]:
    """The model with every cut applied: its bytes, IR and plan."""
    model = load_model(data)
    plan = SplitPlan(0)
    for kind, first, last, parts in cuts:
        plan = plan.with_split(cut(model, kind, first, last, parts))
    written, ir = write_split(model, plan)
    return written, ir, plan


def assert_identical(original: bytes, rewritten: bytes, seeds: Sequence[int] = (0, 1)) -> None:
    """Every output byte equal on the real wheel, over several seeds of random inputs."""
    model = load_model(original)
    for seed in seeds:
        proof = prove_outputs(original, rewritten, model, seed=seed, invocations=2)
        assert proof.original_head is not None, proof.detail
        assert proof.identical, f"seed {seed}: {proof.detail}"
