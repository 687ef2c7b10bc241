"""The split search: targets for the busiest step, kept only on the build's measured bytes."""

from __future__ import annotations

import pytest

from arenalens import load_model
from arenalens.builds.build import as_build
from arenalens.ir import Model
from arenalens.optimization import required_bytes
from arenalens.split.parts import SplitKind
from arenalens.split.regions import Rules, regions
from arenalens.split.schedule import SplitPlan, live_profile, region_peak
from arenalens.split.search import search_splits
from tests.split import models
from tests.split.checks import cut

M7 = as_build("cortex-m7/cmsis-nn")


def test_the_search_keeps_the_best_measured_plan() -> None:
    model = load_model(models.stem_model(size=(64, 48)))
    measured: list[int] = []

    def measure(candidate: Model) -> int:
        measured.append(required_bytes(candidate, M7))
        return measured[-1]

    result = search_splits(model, measure)
    assert result.original_bytes == measured[0] == required_bytes(model, M7)
    assert result.chosen is not None
    assert result.chosen.required_bytes == min(measured) < result.original_bytes
    assert required_bytes(result.chosen.model, M7) == result.chosen.required_bytes
    assert result.rounds


def test_nothing_is_kept_on_the_estimate_alone() -> None:
    model = load_model(models.stem_model(size=(64, 48)))
    original = required_bytes(model, M7)
    result = search_splits(model, lambda candidate: original)
    assert result.chosen is None and result.original_bytes == original


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (models.residual_model(), SplitKind.BANDS),
        (models.stem_model(), SplitKind.BANDS),
        (models.stem_model(), SplitKind.CHANNELS),
        (models.channel_model(), SplitKind.CHANNELS),
    ],
)
def test_region_peak_is_the_split_plans_own_busiest_step_there(
    data: bytes, kind: SplitKind
) -> None:
    model = load_model(data)
    rules = Rules.of(model)
    base = live_profile(model, SplitPlan(0))
    for region in regions(rules, kind):
        for parts in (2, 3):
            split = cut(model, kind, region.first, region.last, parts)
            profile = live_profile(model, SplitPlan(0).with_split(split))
            inside = set(region.operators)
            expected = max(
                live for live, o in zip(profile.steps, profile.origins, strict=True) if o in inside
            )
            assert region_peak(model, base, split) == expected, region
