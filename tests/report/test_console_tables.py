"""Long tables skip rich's layout engine (`format_table`) and must print exactly as rich would."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arenalens.report.console import FAST_TABLE_ROWS, format_table, render_text


def rich_text(table: Table, color: bool = False) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=120, force_terminal=color, no_color=not color).print(table)
    return buffer.getvalue()


def buffers_table(rows: int, **options: object) -> Table:
    table = Table(title=f"arena 'head': {rows} buffers", **options)  # type: ignore[arg-type]
    for column in ("index", "name", "bytes", "first", "last", "offset"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for index in range(rows):
        name = f"[red]conv_{index}[/red]" if index % 3 == 0 else Text(f"tensor [{index}]")
        table.add_row(str(index), name, f"{index * 16:,}", str(index), str(index + 2), "0")
    return table


@pytest.mark.parametrize(
    "options",
    [{}, {"title_justify": "left"}, {"show_header": False}, {"title_justify": "right"}],
)
def test_format_table_matches_rich(options: dict[str, object]) -> None:
    table = buffers_table(5, **options)
    assert format_table(table, color=False) == rich_text(table)


def test_long_tables_take_the_fast_path_and_print_the_same() -> None:
    table = buffers_table(FAST_TABLE_ROWS + 100)
    assert render_text([table], color=False) == rich_text(table)


def test_cells_on_one_line_and_escaped_markup_shown_as_text() -> None:
    table = Table(title="t")
    table.add_column("name")
    table.add_row("two\nlines")
    table.add_row("\\[script]")
    text = format_table(table, color=False)
    assert text is not None
    assert "two lines" in text and "[script]" in text


def test_tables_it_cannot_format_fall_back_to_rich() -> None:
    table = Table(show_lines=True)
    table.add_column("a")
    table.add_row("x")
    assert format_table(table, color=False) is None
    nested = Table()
    nested.add_column("a")
    nested.add_row(Table())
    assert format_table(nested, color=False) is None
