"""A figure planned without OR-Tools' exact search: one answer (the verdict's, the input search's,
the plan's) that every view says the same way, and only where the extra could change the figure.

Without the `exact` extra, `best` returns its heuristic plan; above the plan's lower bound the
exact search might have found a smaller one. Session 14 made `check`'s first step say so; the
board table's after-optimize column, `--max-input`'s size after optimize, `report --overlap`'s
step and plan, and every JSON key behind them stayed silent. Here each is compared with and
without the extra (OR-Tools hidden by making `_import_cp_model` raise as it does without it)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from arenalens import ladder
from arenalens.errors import RuntimeUnavailableError
from arenalens.examples import example_bytes
from arenalens.max_input import InputSize, _largest_after_optimize
from arenalens.planning import optimal
from arenalens.planning.optimal import EXACT_INSTALL
from arenalens.planning.problem import missing_extra_text
from arenalens.report.check_output import render_boards
from arenalens.report.verdict_lines import render_check
from arenalens.verdict import Answer, Verdict, board_row, check

pytest.importorskip("ortools")

SAID = missing_extra_text(EXACT_INSTALL)
# The Raspberry Pi Pico's 262,144 B block minus this leaves 27,000 B: branchy_inception's
# overlap rung declares 25,712 B with the exact search and 29,200 B without it (its reorder
# rung 29,488 B): the extra turns DOES NOT FIT into FITS AFTER OPTIMIZE.
PICO_RESERVE = 262_144 - 27_000


def _without_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise RuntimeUnavailableError(optimal.INSTALL_HINT)

    monkeypatch.setattr(optimal, "_import_cp_model", missing)
    # The rewrites this process made with the extra are kept by their inputs (OR-Tools is not
    # one: a process has it or not).
    monkeypatch.setattr(ladder, "_REWRITES", OrderedDict())


def _pico() -> Verdict:
    return check(
        example_bytes("branchy_inception"), target="raspberry-pi-pico", reserve=PICO_RESERVE
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_board_table_json_and_steps_say_a_rewrite_may_fit_with_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the extra: FITS AFTER OPTIMIZE (overlap, 25,712 B), nothing added anywhere. Without:
    DOES NOT FIT, and the table's after-optimize cell, its footnote, the board row's and the
    check document's `missing_extra`, the rewritten row and the no-fit step all say it, in the
    same words. The overlap rung's number (29,200 B) is not its own: optimize wrote the reorder
    candidate's plan, so the extra that could lower the overlap candidate went unsaid."""
    exact = _pico()
    assert exact.answer is Answer.FITS_AFTER_OPTIMIZE
    assert exact.optimized_bytes == 25_712
    table = _flat(render_boards([exact], color=False))
    assert "yes: overlap" in table and "*" not in table and "OR-Tools" not in table
    document = exact.as_dict()
    assert document["optimized_missing_extra"] is None
    assert board_row(exact)["missing_extra"] is None
    assert all(rung["missing_extra"] is None for rung in document["remedies"])

    _without_exact(monkeypatch)
    without = _pico()
    assert without.answer is Answer.DOES_NOT_FIT
    assert without.optimized_bytes == 29_200
    table = _flat(render_boards([without], color=False))
    assert "no *" in table and f"after optimize *: {SAID}" in table
    document = without.as_dict()
    assert document["optimized_missing_extra"] == EXACT_INSTALL
    assert board_row(without)["missing_extra"] == EXACT_INSTALL
    overlap = next(r for r in document["remedies"] if r["remedy"] == "overlap")
    assert overlap["missing_extra"] == EXACT_INSTALL
    text = _flat(render_check(without, color=False))
    assert text.count(SAID) == 2, text  # the rewritten row and the no-fit step


def test_report_overlap_says_its_step_and_plan_went_without_the_exact_search(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --overlap` on a Cortex-M7 with CMSIS-NN: its step promised 36,192 B without the
    extra (35,904 B with it) and its plan of 30,976 B (28,608 B with it, at the bound), silently;
    the terminal, the JSON document's plan view and the step now say so."""
    import json

    from arenalens.cli import main

    words = ["report", "example:branchy_inception", "--cpu", "cortex-m7", "--kernels"]
    words += ["cmsis-nn", "--overlap", "--no-color", "--no-findings"]

    def run(*more: str) -> str:
        main([*words, *more])
        return str(capsys.readouterr().out)

    assert "OR-Tools" not in run()
    _without_exact(monkeypatch)
    text = _flat(run())
    assert "declares 36,192 B, written only if" in text
    assert f"with that plan ({SAID}):" in text
    # The summary panel's arena row (in a box: its words wrap between borders).
    assert "30,976 B with best+overlaps; planned without OR-Tools' exact search" in text

    document: dict[str, Any] = json.loads(run("--json"))
    views = document["reports"][0]["arenas"][0]["plans"]
    assert views[0]["planner"] == "best+overlaps" and views[0]["missing_extra_text"] == SAID
    assert all("missing_extra_text" not in view for view in views[1:])


def test_the_input_search_says_the_extra_may_let_a_larger_size_fit() -> None:
    """The largest size after optimize, and the next one up that did not fit: when either was
    planned without the exact search, the answer may change with it (a larger size fits, or its
    number is lower); sizes planned at their bound, or refused, say nothing."""
    planned = {
        5: InputSize((), 900, True),
        6: InputSize((), 990, True),
        7: InputSize((), 1_100, True, missing_extra=EXACT_INSTALL),  # too big, without
        8: InputSize((), 1_300, True),
    }
    found, missing = _largest_after_optimize(planned.get, above=4, high=8, available_bytes=1_000)
    assert found == planned[6] and missing == EXACT_INSTALL
    planned[7] = InputSize((), 1_100, True)  # at its bound: the extra changes nothing
    found, missing = _largest_after_optimize(planned.get, above=4, high=8, available_bytes=1_000)
    assert found == planned[6] and missing == ""
    planned[6] = InputSize((), 990, True, missing_extra=EXACT_INSTALL)  # the one found
    assert _largest_after_optimize(planned.get, above=4, high=8, available_bytes=1_000) == (
        planned[6],
        EXACT_INSTALL,
    )
    assert _largest_after_optimize(lambda height: None, above=4, high=8, available_bytes=1) == (
        None,
        "",
    )
