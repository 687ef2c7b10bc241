"""The user's command line again with other option values: suggestions runnable as printed."""

from __future__ import annotations

import shlex


def with_option(words: list[str], option: str, value: str) -> list[str]:
    """A command line with `option value` in place of the option's value (`--tflm X` or
    `--tflm=X`), or added at its end."""
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            return [*words[:index], option, value, *words[index + 2 :]]
        if word.startswith(option + "="):
            return [*words[:index], option, value, *words[index + 1 :]]
    return [*words, option, value]


def with_value(words: list[str], option: str, value: str) -> list[str]:
    """A command line with `option value` in place of the option's value where it gives one
    (`--kernels X` or `--kernels=X`), else unchanged."""
    given = any(word == option or word.startswith(option + "=") for word in words)
    return with_option(words, option, value) if given else words


def without_options(words: list[str], *options: str) -> list[str]:
    """A command line without these options and their values (`--cpu X` or `--cpu=X`)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in options:
            skip = True
        elif not word.startswith(tuple(option + "=" for option in options)):
            kept.append(word)
    return kept


def rerun(words: list[str], *options: tuple[str, str]) -> str:
    """`arenalens <the user's words>` with each (option, value) set, quoted to run as printed."""
    for option, value in options:
        words = with_option(words, option, value)
    return shlex.join(["arenalens", *words])
