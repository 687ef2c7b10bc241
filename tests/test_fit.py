"""fit.check_fit: required vs budget (or target) minus reserve."""

from __future__ import annotations

import pytest

from arenalens.errors import UsageError
from arenalens.fit import check_fit
from arenalens.pipeline import analyze
from arenalens.targets import get_target
from arenalens.verdict import verdict_for
from tests.diagnostics.models import chain, load


def test_headroom_and_shortfall() -> None:
    builder, _ = chain()
    analysis = analyze(load(builder))
    need = analysis.budget.required_bytes
    fits = check_fit(analysis, budget_bytes=need + 50, reserve_bytes=20)
    assert fits.fits and fits.headroom_bytes == 30 and fits.available_bytes == need + 30
    short = check_fit(analysis, budget_bytes=need + 50, reserve_bytes=60)
    assert not short.fits and short.headroom_bytes == -10
    assert short.best_case_bytes <= need
    document = verdict_for(analysis, fit=short).as_dict()
    assert document["fits"] is False and document["headroom_bytes"] == -10


def test_target_budget_is_its_arena_limit() -> None:
    builder, _ = chain()
    analysis = analyze(load(builder))
    check = check_fit(analysis, target=get_target("esp32"))
    assert check.budget_bytes == 160 * 1024
    assert verdict_for(analysis, fit=check).as_dict()["target"]["sram_bytes"] == 520 * 1024


def test_budget_options_are_checked() -> None:
    builder, _ = chain()
    analysis = analyze(load(builder))
    with pytest.raises(UsageError, match="exactly one"):
        check_fit(analysis)
    with pytest.raises(UsageError, match="exactly one"):
        check_fit(analysis, budget_bytes=10, target=get_target("rp2040"))
    with pytest.raises(UsageError, match="leaves nothing"):
        check_fit(analysis, budget_bytes=10, reserve_bytes=10)
    with pytest.raises(UsageError, match="negative"):
        check_fit(analysis, budget_bytes=10, reserve_bytes=-1)
