"""Lines made without rich print as rich prints them: the plain text of `Styled` lines and `Grid`s
(a check's verdict printed to a pipe: no rich imported) equals rich's own rendering of the Text
and Table they stand for, at any width, or they are handed to rich."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from arenalens.report.console import render_text
from arenalens.report.styled import (
    ONE_CELL,
    Grid,
    GridColumn,
    Styled,
    Verbatim,
    plain_text,
    styled,
)

# Characters arenalens writes, others rich lays out differently (wide, combining, tabs, control
# codes, non-ASCII whitespace, markup), and many spaces (runs of them wrap and crop).
_CHARACTERS = st.sampled_from(
    [*"abcXYZ019_-./:,()%=+", *ONE_CELL, " ", " ", " ", "[", "]", "é", "中", "\t", "\n", "\u00a0"]
)
_WORDS = st.text(_CHARACTERS, max_size=30)
_STYLES = st.sampled_from(["", "bold", "dim", "bold red", "yellow"])


def _reference(lines: list[Styled | Grid | Verbatim], *, color: bool, width: int) -> str:
    """rich's rendering: the Text and Table each line stands for."""
    rich_lines = [line if isinstance(line, Verbatim) else line.__rich__() for line in lines]
    return render_text(rich_lines, color=color, width=width)


def test_every_one_cell_character_is_one_cell_and_no_space_for_rich() -> None:
    for character in ONE_CELL:
        assert cell_len(character) == 1, character
        assert not character.isspace(), character


@settings(max_examples=400, deadline=None)
@given(
    runs=st.lists(st.tuples(_WORDS, _STYLES), min_size=1, max_size=6),
    width=st.integers(min_value=4, max_value=70),
)
def test_styled_lines_print_as_rich_prints_them(runs: list[tuple[str, str]], width: int) -> None:
    line = Styled(tuple(runs))
    assert render_text([line], color=False, width=width) == _reference(
        [line], color=False, width=width
    )
    assert render_text([line], color=True, width=width) == _reference(
        [line], color=True, width=width
    )


@settings(max_examples=300, deadline=None)
@given(
    justify=st.lists(st.sampled_from(["left", "right"]), min_size=1, max_size=4),
    data=st.data(),
    width=st.integers(min_value=10, max_value=90),
)
def test_grids_print_as_rich_prints_them(
    justify: list[str], data: st.DataObject, width: int
) -> None:
    columns = tuple(
        GridColumn(justify=how, style="bold" if index == 0 else "")
        for index, how in enumerate(justify)
    )
    cell = st.text(_CHARACTERS.filter(lambda c: c not in "\t\n"), max_size=25)
    rows = data.draw(
        st.lists(st.tuples(*(cell for _ in columns)), min_size=1, max_size=5), label="rows"
    )
    grid = Grid(columns, tuple(rows))
    assert render_text([grid], color=False, width=width) == _reference(
        [grid], color=False, width=width
    )


def test_a_verdict_s_lines_print_without_rich_and_as_rich_prints_them() -> None:
    """The shapes a check prints: runs, a numbers grid, a verbatim command."""
    lines: list[Styled | Grid | Verbatim] = [
        Styled((("kTensorArenaSize = ", "bold"), ("1,156 B", "bold cyan"), (" (1.13 KiB)", ""))),
        styled("FITS  hello_world on ST NUCLEO-F401RE (Cortex-M4F 84 MHz): 88,956 B to spare"),
        Grid(
            (
                GridColumn(style="bold"),
                GridColumn("right"),
                GridColumn("right", "dim"),
                GridColumn(),
            ),
            (
                ("needs", "1,156 B", "1.13 KiB", "TFLM, planner tflm_greedy"),
                ("available", "90,112 B", "88 KiB", "nucleo-f401re: largest block − reserve"),
                ("needs", "—", "", "TFLM cannot run this model: no size works"),
            ),
        ),
        Verbatim("   arenalens optimize model.tflite --overlap --split"),
    ]
    drawn = [line for line in lines if not isinstance(line, Verbatim)]
    assert plain_text(drawn, 80) is None  # the grid is wider than 80: rich shrinks it
    for width in (80, 120, 200):
        assert (plain_text(drawn, width) is None) == (width < 100)
        for color in (False, True):
            assert render_text(lines, color=color, width=width) == _reference(
                lines, color=color, width=width
            )


def test_a_grid_cell_is_text_not_markup() -> None:
    # A name in a cell (a tensor's, a path) may read like a rich tag: drawn as written, not
    # parsed (a '[/]' made rich raise MarkupError; found by the property test above).
    grid = Grid((GridColumn(), GridColumn("right")), (("[/]", "[bold]x[/bold]"), ("a", "b")))
    lines = render_text([grid], color=False, width=40).splitlines()
    assert lines[0].split() == ["[/]", "[bold]x[/bold]"]
    assert "[/]" in render_text([grid], color=True, width=40)
