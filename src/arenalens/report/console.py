"""Rich renderables → text, with or without colour (renderers return strings; the CLI prints)."""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console, RenderableType


def render_text(renderables: Iterable[RenderableType], *, color: bool, width: int = 120) -> str:
    """Renderables → one string; ANSI colours only when color is True."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="truecolor" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for renderable in renderables:
        console.print(renderable)
    return buffer.getvalue()


def format_bytes(nbytes: int | float) -> str:
    """Bytes → short human text with binary units: 512 B, 1.5 KiB, 2.25 MiB."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            if unit == "B":
                return f"{int(value)} B"
            return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"
        value /= 1024
    return f"{value} GiB"  # pragma: no cover - loop always returns


def format_shape(shape: Iterable[int]) -> str:
    """(1, 96, 96, 3) → '1x96x96x3'; a scalar → 'scalar'."""
    dims = list(shape)
    return "x".join(str(d) for d in dims) if dims else "scalar"


def short_name(name: str, limit: int = 48) -> str:
    """A tensor name cut for a table cell: the first ';'-joined part, then its tail, marked '…'.

    Converters join every fused op's name with ';' (`model/act/Relu;model/bn/...;model/conv`);
    the first part names the tensor. Paths keep their tail, the most specific part.
    """
    first, _, rest = name.partition(";")
    if len(first) > limit:
        return "…" + first[-(limit - 1) :]
    if rest:
        return first + "…" if len(first) < limit else first[: limit - 1] + "…"
    return first
