"""The CLI's help layout is argparse's own: the width it finds without shutil is the one
argparse's default formatter finds with it (issue 31: a check need not load shutil)."""

from __future__ import annotations

import argparse

import pytest

from arenalens.cli import _HelpFormatter


@pytest.mark.parametrize("columns", [None, "", "abc", "0", "-3", "40", "100", "250"])
def test_the_help_width_is_argparses(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours, argparses = _HelpFormatter("arenalens"), argparse.HelpFormatter("arenalens")
    assert (ours._width, ours._max_help_position) == (
        argparses._width,
        argparses._max_help_position,
    )
