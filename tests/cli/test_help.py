"""Every command's --help prints and exits 0 (help strings are %-formatted by argparse)."""

from __future__ import annotations

import pytest

from arenalens.cli import COMMANDS, main


def test_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: arenalens " + command in capsys.readouterr().out


def test_no_command_shows_help_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "commands" in capsys.readouterr().err
