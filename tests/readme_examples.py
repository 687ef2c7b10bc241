"""The README's console examples: each command with the lines the README shows under it, and
whether a command's real output still prints them (tests/test_readme.py and the tests that
already run the slow examples, `demo` and `check --target all`, compare them)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

# Examples whose command a test elsewhere already runs (they take seconds): that test compares.
RUN_ELSEWHERE = ("arenalens demo", "arenalens check example:vww_mobilenet_v1 --target all")


def shown_under(command: str) -> list[str]:
    """The lines the README shows under `$ command` (the first console example of it)."""
    for found, shown in _all_examples():
        if found == command:
            return shown
    raise LookupError(f"the README has no console example of `{command}`")


def console_examples() -> list[tuple[str, list[str]]]:
    """(command, lines shown) for every console example that runs on its own here: a built-in
    example model, no pipe, no search that a slower test already runs (`optimize`,
    `--max-input`: the input-size scenario runs them), none of RUN_ELSEWHERE."""
    found = []
    for command, shown in _all_examples():
        words = command.split()[1:]
        searches = "optimize" in words or "--max-input" in words
        if (
            any(word.startswith("example:") for word in words)
            and "|" not in command
            and not searches
            and command not in RUN_ELSEWHERE
        ):
            found.append((command, shown))
    return found


# A shared-corpus model by its file name, as ../shared/models holds it.
CORPUS_FILE = re.compile(r"^(?:mlperf_tiny|tflite_micro)__\w+\.tflite$")
# The README's short names of corpus files: the name tflite-micro's repository gives them.
CORPUS_SHORT = {"person_detect.tflite": "tflite_micro__person_detect.tflite"}


def corpus_console_examples() -> list[tuple[str, list[str]]]:
    """(command, lines shown) for every console example of a shared-corpus model by its file
    name (`mlperf_tiny__vww_96_int8.tflite`, `person_detect.tflite` for tflite_micro's), its
    `optimize` included (person_detect's split: under a minute), no input-size search."""
    found = []
    for command, shown in _all_examples():
        words = command.split()[1:]
        if (
            any(CORPUS_FILE.match(word) or word in CORPUS_SHORT for word in words)
            and "--max-input" not in words
            and "|" not in command
        ):
            found.append((command, shown))
    return found


def all_console_examples() -> list[tuple[str, list[str]]]:
    """(command, lines shown) for every console example of the README that shows lines."""
    return _all_examples()


def _all_examples() -> list[tuple[str, list[str]]]:
    found = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(), re.S):
        lines = block.splitlines()
        for index, line in enumerate(lines):
            if not line.startswith("$ arenalens "):
                continue
            shown = []
            for following in lines[index + 1 :]:
                if following.startswith("$ "):
                    break
                shown.append(following)
            if shown:
                found.append((line[2:].split("  #", 1)[0].strip(), shown))
    return found


def lines_not_printed(shown: list[str], printed: str) -> list[str]:
    """The README lines (each piece between `...` elisions) the printed text does not contain,
    compared without whitespace and table rules so that line wrapping (a table cell's too) and
    column padding do not count."""
    real = _squashed(printed)
    return [
        line
        for line in shown
        for piece in re.split(r"\.\.\.|…", line)
        if _squashed(piece) and _squashed(piece) not in real
    ]


def _squashed(text: str) -> str:
    return re.sub(r"[\s│┃]+", "", text)
