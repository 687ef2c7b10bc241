"""The LiteRT interpreter's heap (`runtimes/litert/heap.py`, as `heap_document` writes it) →
terminal tables: one per delegate, each part with when it is taken and its bytes, then what is
live after setup, after the first invoke and at the peak; `plan` and `report` show them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from arenalens.litert_memory import threads_words
from arenalens.units import format_bytes_exact, format_bytes_short

DELEGATE_LABELS = {"xnnpack": "with XNNPACK (LiteRT's default)", "none": "builtin kernels only"}
PHASE_LABELS = {
    "setup": "setup",
    "first_invoke": "first invoke, kept",
    "transient": "first invoke, freed",
}
TOTALS = (
    ("after setup", "after_setup_bytes"),
    ("after the first invoke", "after_first_invoke_bytes"),
    ("peak", "peak_bytes"),
)


def heap_tables(heaps: Sequence[Mapping[str, Any]]) -> list[Table | Text]:
    """Every delegate's heap as a table, with the estimate's words under it."""
    shown: list[Table | Text] = []
    for heap in heaps:
        shown.append(heap_table(heap))
        words = "" if heap["exact"] else str(heap["estimate"] or "")
        if words:
            # The ways' words say what the figures are themselves (heap_ways.ways_words).
            label = "" if words.startswith("sizing figures:") else "estimate: "
            shown.append(Text(f"{label}{words}", style="yellow"))
        for note in heap.get("notes", ()):
            shown.append(Text(f"note: {note}", style="dim"))
    return shown


def heap_table(heap: Mapping[str, Any]) -> Table:
    """One delegate's heap: its parts, then the totals after setup, first invoke and peak."""
    label = DELEGATE_LABELS.get(heap["delegate"], heap["delegate"])
    table = Table(
        title=f"LiteRT interpreter heap, {label}{threads_words(heap['threads'])} "
        f"({heap['machine']})",
        title_justify="left",
        header_style="bold",
    )
    table.add_column("part")
    table.add_column("taken", no_wrap=True)
    table.add_column("bytes", justify="right")
    table.add_column("", justify="right")
    table.add_column("how sure", no_wrap=True)
    for part in heap["parts"]:
        if not part["bytes"]:
            continue
        table.add_row(
            part["name"],
            PHASE_LABELS.get(part["phase"], part["phase"]),
            format_bytes_exact(part["bytes"]),
            format_bytes_short(part["bytes"]),
            "exact" if part["exact"] else "allowance" if part.get("allowance") else "estimate",
        )
    table.add_section()
    for title, key in TOTALS:
        table.add_row(
            Text(title, style="bold"),
            "",
            Text(format_bytes_exact(heap[key]), style="bold cyan"),
            format_bytes_short(heap[key]),
            "",
        )
    return table
