"""Pasteable commands at a terminal's width: a long one continued with ' \\' (the shell joins the
lines), only on a terminal; piped text keeps each command whole on one line."""

from __future__ import annotations

from contextvars import ContextVar

# Set by the CLI when stdout is a terminal (no rich here: every command may set it cheaply).
WRAP_COMMANDS: ContextVar[bool] = ContextVar("wrap_commands", default=False)


def command_lines(line: str, width: int) -> list[str]:
    """The command as printed: wrapped to the width on a terminal, whole otherwise."""
    if not WRAP_COMMANDS.get() or not line.lstrip().startswith("arenalens "):
        return [line]  # piped, or not a command (code to paste stays as written)
    return wrap_command(line, width)


def wrap_command(line: str, width: int) -> list[str]:
    """A command longer than the width → lines ending in ' \\' (the shell joins them), each
    continuation indented 4 more: it fits the terminal and still pastes as one command. Breaks
    only between words; a line with quoted spaces stays whole."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    words = line.strip().split(" ")
    if any("'" in word and word.count("'") % 2 for word in words):
        return [line]  # a quoted argument with spaces: breaking it would change it
    lines: list[str] = []
    current = indent + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = indent + "    " + word
        else:
            current += " " + word
    lines.append(current)
    return lines
