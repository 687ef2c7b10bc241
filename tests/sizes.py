"""The size table of docs/architecture.md: every folder of the package → its source files and
lines, so that growth is seen when it happens. `python -m tests.sizes` rewrites the table;
`tests/test_architecture_doc.py` fails when a folder's size has moved by more than
`TOLERANCE` of the table's (or a folder came or went)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "arenalens"
DOCUMENT = ROOT / "docs" / "architecture.md"
START = "<!-- sizes: python -m tests.sizes -->"
END = "<!-- /sizes -->"
SOURCES = (".py", ".js")  # the package's code: Python and the HTML viewer's modules
# How far a folder may move before the table must be rewritten: a tenth of its lines (at least
# 100) or of its files (at least 2). Every landing need not touch the table; a folder that grew
# by a tenth is news.
TOLERANCE = 0.10
_ROW = re.compile(r"^\| `([^`]+)` \| (\d+) \| ([\d,]+) \|$")


@dataclass(frozen=True, slots=True)
class FolderSize:
    """One folder's own source files (not its subfolders') and their lines."""

    folder: str  # relative to src/arenalens, '.' for the package's own modules
    files: int
    lines: int


def measured() -> tuple[FolderSize, ...]:
    """Every folder of the package with source files, in path order."""
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        folder = path.parent.relative_to(PACKAGE).as_posix()
        counts = found.setdefault(folder, [0, 0])
        counts[0] += 1
        counts[1] += len(path.read_text(encoding="utf-8").splitlines())
    return tuple(FolderSize(folder, files, lines) for folder, (files, lines) in found.items())


def table(sizes: tuple[FolderSize, ...]) -> str:
    """The markdown table, with the total."""
    rows = ["| folder | files | lines |", "|---|---:|---:|"]
    rows += [f"| `{size.folder}` | {size.files} | {size.lines:,} |" for size in sizes]
    total = f"{sum(s.files for s in sizes)} files, {sum(s.lines for s in sizes):,} lines"
    return "\n".join(rows) + f"\n\nIn all: {total} (Python and the viewer's JavaScript)."


def documented() -> tuple[FolderSize, ...]:
    """The table as docs/architecture.md states it."""
    text = DOCUMENT.read_text(encoding="utf-8")
    block = text[text.index(START) : text.index(END)]
    found = []
    for line in block.splitlines():
        row = _ROW.match(line)
        if row:
            found.append(FolderSize(row[1], int(row[2]), int(row[3].replace(",", ""))))
    return tuple(found)


def moved(stated: FolderSize, now: FolderSize) -> bool:
    """True when a folder has moved past the tolerance since the table was written."""
    lines = abs(now.lines - stated.lines) > max(100, TOLERANCE * stated.lines)
    files = abs(now.files - stated.files) > max(2, TOLERANCE * stated.files)
    return lines or files


def rewrite() -> None:
    """Write today's sizes into docs/architecture.md."""
    text = DOCUMENT.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    DOCUMENT.write_text(
        text[:start] + "\n" + table(measured()) + "\n" + text[end:], encoding="utf-8"
    )


if __name__ == "__main__":
    rewrite()
