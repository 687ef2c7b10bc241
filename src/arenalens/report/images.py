"""Images: MemoryReport → PNG / SVG bytes of the memory map, lifetimes, live bytes, peak tensors.

With `arena_image` (the whole arena drawn on the memory map), the only module that imports
matplotlib, lazily (extra `images`). It never touches pyplot's global
state: each chart is a `matplotlib.figure.Figure` drawn by the Agg or SVG backend, so charts can be
rendered from threads and tests. Output is deterministic: PNGs carry no software or date metadata,
SVGs no date, and SVG ids come from a fixed hash salt.

Byte axes are drawn in one binary unit picked per chart (B, KiB or MiB) so tick labels stay short.
Model-derived text is escaped for mathtext: a tensor named `$x$` is drawn as written.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from arenalens.errors import RuntimeUnavailableError
from arenalens.report.arena_image import (
    Mark,
    arena_marks,
    declared_symbol,
    draw_bands,
    draw_strip,
    on_scale,
    sections_end,
    shows_whole,
    whole_top,
)
from arenalens.report.data import ArenaReport, MemoryReport, PlanView
from arenalens.report.image_style import (
    ARENA_COLOR,
    BOUND_COLOR,
    BUDGET_COLOR,
    CHART_FONT,
    INK,
    MUTED,
    PALETTE,
    PEAK_COLOR,
    SHARED_COLOR,
    ByteUnit,
    byte_unit,
    fit_label,
    plain,
)
from arenalens.units import format_bytes_short

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

IMAGE_KINDS = ("memory_map", "lifetimes", "live_bytes", "peak_tensors")
IMAGE_FORMATS = ("png", "svg")
DPI = 150
SVG_HASH_SALT = "arenalens"

PEAK_BAR_LIMIT = 15
DENSE_BUFFERS = 300  # above this many rectangles: thin edges, rasterized in SVG
DENSE_STEPS = 300


def tensor_label(name: str, limit: int = 28) -> str:
    """A tensor name for a chart label: the first ';' part, shortened to fit limit characters.

    Tries the whole part, then its last two path parts (`activation_1/Relu`), then the layer
    (`activation_1`), keeping its tail when even that is too long (`…tion_12`): converters end
    names with the op (`Relu6`, `BiasAdd`), which alone says nothing about which tensor it is.
    """
    first = name.partition(";")[0] or "(unnamed)"
    parts = [p for p in first.split("/") if p] or [first]
    layer = parts[-2] if len(parts) > 1 else parts[-1]
    for candidate in (first, "/".join(parts[-2:]), layer):
        if len(candidate) <= limit:
            return candidate
    return "…" + layer[-max(limit - 1, 1) :]  # the tail tells layers apart: …tion_12


# ---------------------------------------------------------------------------------------------
# Rendering


def render_image(
    report: MemoryReport, kind: str, *, image_format: str = "png", planner: str | None = None
) -> bytes:
    """One chart of report → PNG or SVG bytes (planner: whose layout; default plans[0])."""
    if kind not in IMAGE_KINDS:
        raise ValueError(f"unknown image kind '{kind}' (known: {', '.join(IMAGE_KINDS)})")
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"unknown image format '{image_format}' (known: png, svg)")
    with _matplotlib_settings():
        figure = _FIGURES[kind](report, planner)
        return _figure_bytes(figure, image_format)


def render_images(
    report: MemoryReport,
    *,
    formats: Sequence[str] = IMAGE_FORMATS,
    planner: str | None = None,
) -> dict[str, bytes]:
    """Every chart in every format → {file name: bytes}, e.g. 'memory_map.png'."""
    return {
        f"{kind}.{image_format}": render_image(
            report, kind, image_format=image_format, planner=planner
        )
        for kind in IMAGE_KINDS
        for image_format in formats
    }


def _require_matplotlib() -> Any:
    try:
        import matplotlib  # noqa: PLC0415 - optional extra, imported on first use
    except ImportError:
        raise RuntimeUnavailableError(
            "images need matplotlib: pip install 'arenalens[images]'"
        ) from None
    return matplotlib


@contextmanager
def _matplotlib_settings() -> Iterator[None]:
    matplotlib = _require_matplotlib()
    settings = {
        "svg.hashsalt": SVG_HASH_SALT,
        "svg.fonttype": "none",  # text stays text: searchable, small, selectable
        "font.family": CHART_FONT,
        "font.size": 9,
        "axes.titlesize": 11,
        "axes.titleweight": "bold",
        "axes.titlelocation": "left",
        "axes.labelcolor": INK,
        "axes.edgecolor": "#c5ccd3",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "xtick.color": MUTED,
        "ytick.color": MUTED,
        "text.color": INK,
        "text.usetex": False,
        "path.simplify": True,
    }
    with matplotlib.rc_context(settings):
        yield


def _figure_bytes(figure: Figure, image_format: str) -> bytes:
    buffer = io.BytesIO()
    if image_format == "png":
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

        FigureCanvasAgg(figure)
        figure.savefig(
            buffer,
            format="png",
            dpi=DPI,
            metadata={"Software": None},
            bbox_inches="tight",
            pad_inches=0.2,
        )
    else:
        from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: PLC0415

        FigureCanvasSVG(figure)
        figure.savefig(
            buffer,
            format="svg",
            metadata={"Date": None, "Creator": None},
            bbox_inches="tight",
            pad_inches=0.2,
        )
    return buffer.getvalue()


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure  # noqa: PLC0415

    return Figure(figsize=(width, height), dpi=DPI, facecolor="white")


def _chosen(arena: ArenaReport, planner: str | None) -> PlanView:
    return arena.plan(planner) if planner else arena.plans[0]


def _title(axes: Axes, report: MemoryReport, what: str, subtitle: str, *, lift: float = 0) -> None:
    """Title and subtitle above the axes, `lift` points higher (over labels drawn above them)."""
    axes.set_title(plain(f"{what} — {report.model}"), pad=22 + lift)
    axes.annotate(
        plain(subtitle),
        xy=(0, 1),
        xycoords="axes fraction",
        xytext=(0, 4 + lift),
        textcoords="offset points",
        fontsize=8.5,
        color=MUTED,
        va="bottom",
    )


def _budget_room(report: MemoryReport) -> int | None:
    """Bytes of the budget left for the primary arena once the other parts are paid."""
    if report.budget is None:
        return None
    return report.budget - report.other_bytes


def _budget_label(report: MemoryReport) -> str:
    assert report.budget is not None
    label = f"budget {format_bytes_short(report.budget)}"
    if report.other_bytes:
        label += f"\n(minus {format_bytes_short(report.other_bytes)} outside this arena)"
    return label


# Longest operator name drawn on a chart: custom op names can be kilobytes long, and matplotlib's
# tight layout measured a 4,096-character tick label for over half a minute.
OPCODE_LABEL_LIMIT = 40


def _peak_label(arena: ArenaReport) -> str:
    peak = arena.peak
    if peak is None:
        return "no steps"
    opcode = fit_label(peak.opcode, OPCODE_LABEL_LIMIT)
    op = opcode if peak.operator is None else f"op {peak.operator} {opcode}"
    return f"step {peak.step}: {op}"


def _step_limits(arena: ArenaReport) -> tuple[int, int]:
    if not arena.steps:
        return 0, 1
    return arena.steps[0].step, arena.steps[-1].step


def _step_ticks(axes: Axes, arena: ArenaReport) -> None:
    """Label steps with their operator when few enough to read, else plain numbers."""
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    if 0 < len(arena.steps) <= 40:
        axes.set_xticks([s.step for s in arena.steps])
        axes.set_xticklabels(
            [plain(f"{s.step} {fit_label(s.opcode, OPCODE_LABEL_LIMIT)}") for s in arena.steps],
            rotation=90,
            fontsize=6.5,
        )
    else:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=12))


# ---------------------------------------------------------------------------------------------
# Memory map: steps × offsets, one rectangle per buffer


def memory_map_figure(report: MemoryReport, planner: str | None = None) -> Figure:
    """Report → the memory map: one rectangle per buffer over its steps and its bytes, under a
    to-scale strip of the whole arena; the map shows the whole arena too (the tail's parts and
    setup as bands) unless the plotted arena would be a smear at that scale, then it zooms in."""
    from matplotlib.collections import PolyCollection  # noqa: PLC0415

    arena = report.primary
    view = _chosen(arena, planner)
    sections = report.sections_with_view(arena, view)
    whole = shows_whole(report, arena, view)
    base = next(s.offset for s in whole if s.name == arena.name) if whole else 0
    marks = arena_marks(report)
    room = None if whole else _budget_room(report)
    data_top = max(view.arena_size, arena.lower_bound, 1)
    if whole:
        top = whole_top(whole, marks, near=True)
    else:
        top = max(data_top, room if room is not None and on_scale(data_top, room) else 0)
    unit = byte_unit(top)
    figure = _new_figure(11, 7.2 if sections else 6.2)
    if sections:
        grid = figure.add_gridspec(
            2, 1, height_ratios=(1, 9), left=0.08, right=0.80, top=0.86, bottom=0.17, hspace=0.42
        )
        strip, axes = figure.add_subplot(grid[0]), figure.add_subplot(grid[1])
        draw_strip(strip, report, view, arena)
    else:
        figure.subplots_adjust(left=0.08, right=0.80, top=0.88, bottom=0.2)
        strip = axes = figure.add_subplot()
    first_step, last_step = _step_limits(arena)
    dense = len(arena.buffers) > DENSE_BUFFERS
    polygons, colors, edges = [], [], []
    for i, row in enumerate(arena.buffers):
        if not row.size:
            continue
        low = unit.scale(base + view.offsets[i])
        high = unit.scale(base + view.offsets[i] + row.size)
        x0, x1 = row.first - 0.5, row.last + 0.5
        polygons.append(((x0, low), (x1, low), (x1, high), (x0, high)))
        colors.append(PALETTE[i % len(PALETTE)])
        # Few buffers: outline the ones that cross the budget; many: the shaded band says it.
        over = room is not None and view.offsets[i] + row.size > room and not dense
        edges.append(BUDGET_COLOR if over else "white")
    axes.add_collection(
        PolyCollection(
            polygons,
            facecolors=colors,
            edgecolors=edges,
            linewidths=0.2 if dense else 0.6,
            alpha=0.92,
            rasterized=dense,  # keeps SVGs of big models small; text and axes stay vector
        )
    )
    _draw_shared(axes, arena, view, unit, base)
    axes.set_xlim(first_step - 0.5, last_step + 0.5)
    axes.set_ylim(0, unit.scale(top) * 1.06)
    if whole:
        draw_bands(axes, whole, arena, unit)
    if room is not None and room < top * 1.06:
        axes.axhspan(unit.scale(room), unit.scale(top) * 1.06, color=BUDGET_COLOR, alpha=0.06, lw=0)
    arena_label = f"{arena.name} (planned buffers)" if whole else "arena size"
    axes.axhline(unit.scale(base + view.arena_size), color=ARENA_COLOR, lw=1.4, label=arena_label)
    axes.axhline(
        unit.scale(base + arena.lower_bound),
        color=BOUND_COLOR,
        lw=1.2,
        ls=":",
        label="lower bound (whole tensors)",
    )
    if arena.overlap_lower_bound is not None:
        axes.axhline(
            unit.scale(base + arena.overlap_lower_bound),
            color=BOUND_COLOR,
            lw=1.0,
            ls="-.",
            label="lower bound, with overlaps",
        )
    _budget_lines(
        axes,
        report,
        unit,
        top=top,
        room=room,
        marks=marks if whole else (),
        total=sections_end(whole) if whole else 0,
    )
    peak = arena.peak
    if peak is not None:
        _mark_peak(axes, peak.step, f"peak: {_peak_label(arena)}")
    _label_rectangles(figure, axes, arena, view, unit, base=base)
    axes.set_xlabel("step (operator that runs)")
    axes.set_ylabel(f"arena offset ({unit.name})")
    _step_ticks(axes, arena)
    axes.grid(axis="y", color="#e6e9ed", lw=0.6)
    axes.set_axisbelow(True)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    _side_facts(axes, report, view)
    _title(
        strip,
        report,
        "Memory map",
        f"{view.planner}: arena {format_bytes_short(view.arena_size)}, lower bound "
        f"{format_bytes_short(arena.lower_bound_for(view))}"
        + (" with overlaps" if arena.lower_bound_for(view) != arena.lower_bound else "")
        + f", {len(arena.buffers)} buffers in '{arena.name}' ({report.runtime})"
        + (f"; {declared_symbol(report)} by section above" if sections else ""),
        lift=20 if sections else 0,
    )
    return figure


def _budget_lines(
    axes: Axes,
    report: MemoryReport,
    unit: ByteUnit,
    *,
    top: int,
    room: int | None,
    marks: Sequence[Mark],
    total: int,
) -> None:
    """The number to declare and the budget and board marks over the whole arena, or the room
    the budget leaves this arena; a line above the scale is named in a note instead."""
    notes = []
    if marks or total:
        axes.axhline(
            unit.scale(total),
            color=INK,
            lw=1.2,
            label=f"{declared_symbol(report)} {format_bytes_short(total)}",
        )
    for mark in marks:
        if mark.nbytes > top * 1.06:
            notes.append(mark.label)
            continue
        axes.axhline(
            unit.scale(mark.nbytes), color=BUDGET_COLOR, lw=1.4, ls=mark.style, label=mark.label
        )
    if room is not None and room > top * 1.06:
        notes.append(_budget_label(report).replace("\n", " ") + f" = {format_bytes_short(room)}")
    elif room is not None:
        axes.axhline(
            unit.scale(room), color=BUDGET_COLOR, lw=1.4, ls="--", label=_budget_label(report)
        )
    for line, note in enumerate(notes):
        axes.text(
            0.01,
            0.98 - 0.05 * line,
            plain(f"↑ {note} (above the scale)"),
            transform=axes.transAxes,
            fontsize=7.5,
            color=BUDGET_COLOR,
            va="top",
            fontweight="bold",
        )


def _draw_shared(
    axes: Axes, arena: ArenaReport, view: PlanView, unit: ByteUnit, base: int = 0
) -> None:
    """Hatch the bytes an operator's output shares with the input it consumes (overlap plans):
    the step where both live, over the byte range they have in common."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    regions = arena.shared_regions(view)
    for position, (_, first, last, low, high) in enumerate(regions):
        axes.add_patch(
            Rectangle(
                (first - 0.5, unit.scale(base + low)),
                last - first + 1,
                unit.scale(high - low),
                facecolor="none",
                edgecolor=SHARED_COLOR,
                hatch="////",
                lw=0.8,
                zorder=3,
                label="output written over its consumed input" if position == 0 else None,
            )
        )


def _mark_peak(axes: Axes, step: int, label: str) -> None:
    """A shaded column at the peak step, labelled above the plot area."""
    axes.axvspan(step - 0.5, step + 0.5, color=PEAK_COLOR, alpha=0.09, lw=0, label=plain(label))


def _side_facts(axes: Axes, report: MemoryReport, view: PlanView) -> None:
    """Key numbers under the legend: what each plan needs."""
    arena = report.primary
    lines = ["arena by planner:"]
    for other in arena.plans[:8]:
        mark = "▸ " if other.planner == view.planner else "  "
        lines.append(f"{mark}{other.planner}: {format_bytes_short(other.arena_size)}")
    lines.append(f"  lower bound: {format_bytes_short(arena.lower_bound)}")
    if arena.overlap_lower_bound is not None:
        lines.append(f"  with overlaps: {format_bytes_short(arena.overlap_lower_bound)}")
    axes.text(
        1.02,
        0.35,
        plain("\n".join(lines)),
        transform=axes.transAxes,
        fontsize=7.5,
        color=MUTED,
        va="top",
        family="DejaVu Sans Mono",
    )


def _label_rectangles(
    figure: Figure, axes: Axes, arena: ArenaReport, view: PlanView, unit: ByteUnit, *, base: int = 0
) -> None:
    """Write a name (and size) inside each rectangle big enough to hold it (after the axes
    limits are set: they convert steps and bytes to points)."""
    width_points, height_points = _axes_size_points(figure, axes)
    x_low, x_high = axes.get_xlim()
    y_low, y_high = axes.get_ylim()
    steps_span = max(x_high - x_low, 1.0)
    bytes_span = max(y_high - y_low, 1e-9)
    fontsize = 6.5
    char_points, line_points = fontsize * 0.62, fontsize * 1.3
    for i, row in enumerate(arena.buffers):
        box_width = (row.last - row.first + 1) / steps_span * width_points
        box_height = unit.scale(row.size) / bytes_span * height_points
        line_count = int(box_height / line_points - 0.3)
        if line_count < 1 or box_width < char_points * 5:
            continue
        width_chars = max(4, int(box_width / char_points) - 1)
        lines = label_lines(row.label or row.name, width_chars, line_count)
        if len(lines) < line_count:
            lines.append(format_bytes_short(row.size))
        axes.text(
            (row.first + row.last) / 2,
            unit.scale(base + view.offsets[i] + row.size / 2),
            plain("\n".join(lines)),
            ha="center",
            va="center",
            fontsize=fontsize,
            linespacing=1.1,
            color="white",
            clip_on=True,
        )


def label_lines(label: str, width_chars: int, line_count: int) -> list[str]:
    """A short label → at most line_count lines of at most width_chars characters.

    `block_1/depthwise` becomes two lines when the box is tall and narrow; when its parts do
    not fit, the first part stays (it is the one that tells the tensor apart) and a single part
    keeps its tail (`…tion_12`).
    """
    if line_count < 1:
        return []
    if len(label) <= width_chars:
        return [label]
    parts = label.split("/")
    if 1 < len(parts) <= line_count and all(len(part) <= width_chars for part in parts):
        return parts
    return [fit_label(parts[0], width_chars)]


def _padded(arena: ArenaReport) -> tuple[float, float]:
    first, last = _step_limits(arena)
    return first - 0.5, last + 0.5


def _axes_size_points(figure: Figure, axes: Axes) -> tuple[float, float]:
    box = axes.get_position()
    width, height = figure.get_size_inches()
    return box.width * width * 72, box.height * height * 72


# ---------------------------------------------------------------------------------------------
# Lifetimes: one bar per buffer over its steps


def lifetime_figure(report: MemoryReport, planner: str | None = None) -> Figure:
    """Report → one horizontal bar per buffer from its first to its last step, coloured by size."""
    from matplotlib.collections import PolyCollection  # noqa: PLC0415

    del planner  # lifetimes do not depend on the layout
    arena = report.primary
    order = sorted(
        range(len(arena.buffers)), key=lambda i: (arena.buffers[i].first, arena.buffers[i].last, i)
    )
    count = len(order)
    show_names = 0 < count <= 60
    height = min(max(3.6, 1.4 + 0.17 * count), 14) if show_names else 6.2
    figure = _new_figure(11, height)
    figure.subplots_adjust(
        left=0.3 if show_names else 0.08, right=0.92, top=1 - 0.9 / height, bottom=1.25 / height
    )
    axes = figure.add_subplot()
    sizes = [max(arena.buffers[i].size, 1) for i in order]
    smallest, largest = min(sizes, default=1), max(sizes, default=1)
    color_of = _size_colors(figure, axes, smallest, max(largest, smallest + 1))
    half = 0.36 if count <= DENSE_BUFFERS else 0.5
    bars = []
    for y, i in enumerate(order):
        x0, x1 = arena.buffers[i].first - 0.4, arena.buffers[i].last + 0.4
        bars.append(((x0, y - half), (x1, y - half), (x1, y + half), (x0, y + half)))
    axes.add_collection(
        PolyCollection(
            bars,
            facecolors=[color_of(s) for s in sizes],
            linewidths=0,
            rasterized=count > DENSE_BUFFERS,
        )
    )
    peak = arena.peak
    if peak is not None:
        _mark_peak(axes, peak.step, f"peak: {_peak_label(arena)}")
        axes.legend(loc="upper right", frameon=False, fontsize=8)
    first_step, last_step = _step_limits(arena)
    axes.set_xlim(first_step - 0.5, last_step + 0.5)
    axes.set_ylim(max(count, 1) - 0.5, -0.5)  # no buffer: one empty row, not equal limits
    if show_names:
        axes.set_yticks(range(count))
        axes.set_yticklabels(
            [plain(tensor_label(arena.buffers[i].name, 40)) for i in order], fontsize=7
        )
    else:
        axes.set_ylabel(f"buffers ({count}), by first step")
        axes.set_yticks([])
    axes.set_xlabel("step")
    axes.grid(axis="x", color="#e6e9ed", lw=0.6)
    axes.set_axisbelow(True)
    _title(
        axes,
        report,
        "Lifetimes",
        f"{count} buffers in '{arena.name}' ({report.runtime} steps; both ends inclusive)",
    )
    return figure


def _size_colors(figure: Figure, axes: Axes, smallest: int, largest: int) -> Callable[[int], Any]:
    """A log colour scale for byte sizes, with its colour bar; returns size → colour."""
    from matplotlib import colormaps  # noqa: PLC0415
    from matplotlib.cm import ScalarMappable  # noqa: PLC0415
    from matplotlib.colors import LogNorm  # noqa: PLC0415
    from matplotlib.ticker import LogLocator, NullFormatter  # noqa: PLC0415

    norm = LogNorm(vmin=smallest, vmax=largest)
    cmap = colormaps["viridis"]
    colorbar = figure.colorbar(
        ScalarMappable(norm=norm, cmap=cmap), ax=axes, pad=0.015, fraction=0.025, aspect=30
    )
    colorbar.set_label("buffer size")
    # Powers of 4 (16 B, 64 B, ... 16 KiB) over a wide range; powers of 2 when it is narrow.
    base = 4 if largest / smallest >= 64 else 2
    colorbar.ax.yaxis.set_major_locator(LogLocator(base=base))
    colorbar.ax.yaxis.set_minor_locator(LogLocator(base=base, subs=()))
    colorbar.ax.yaxis.set_major_formatter(_bytes_formatter())
    colorbar.ax.yaxis.set_minor_formatter(NullFormatter())
    return lambda size: cmap(norm(size))


def _gap_text(arena_size: int, lower_bound: int) -> str:
    gap = arena_size - lower_bound
    if gap < 0:
        return "below the whole-tensor lower bound: fixed offsets share bytes on purpose"
    if gap == 0:
        return "equal to the lower bound: no plan of whole tensors can do better"
    return (
        f"{format_bytes_short(gap)} ({100 * gap / max(lower_bound, 1):.1f}%) above the lower bound"
    )


def _bytes_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415

    return FuncFormatter(lambda value, _position: format_bytes_short(int(value)))


# ---------------------------------------------------------------------------------------------
# Live bytes per step


def live_bytes_figure(report: MemoryReport, planner: str | None = None) -> Figure:
    """Report → bytes live at each step, with the lower bound, arena size, budget and peak op."""
    arena = report.primary
    view = _chosen(arena, planner)
    room = _budget_room(report)
    steps = [s.step for s in arena.steps]
    live = [s.live_bytes for s in arena.steps]
    top = max([*live, view.arena_size, room or 0, 1])
    unit = byte_unit(top)
    figure = _new_figure(11, 5.2)
    figure.subplots_adjust(left=0.08, right=0.80, top=0.86, bottom=0.24)
    axes = figure.add_subplot()
    scaled = [unit.scale(v) for v in live]
    dense = len(steps) > DENSE_STEPS
    axes.fill_between(steps, scaled, step="mid", color=PALETTE[0], alpha=0.25, lw=0)
    axes.step(
        steps, scaled, where="mid", color=PALETTE[0], lw=0.6 if dense else 1.6, label="live bytes"
    )
    axes.axhline(
        unit.scale(view.arena_size),
        color=ARENA_COLOR,
        lw=1.4,
        label=f"arena ({view.planner}) {format_bytes_short(view.arena_size)}",
    )
    axes.axhline(
        unit.scale(arena.lower_bound),
        color=BOUND_COLOR,
        lw=1.2,
        ls=":",
        label=f"lower bound {format_bytes_short(arena.lower_bound)}",
    )
    if room is not None:
        axes.axhline(
            unit.scale(room), color=BUDGET_COLOR, lw=1.4, ls="--", label=_budget_label(report)
        )
    peak = arena.peak
    if peak is not None:
        axes.plot([peak.step], [unit.scale(peak.live_bytes)], "o", color=PEAK_COLOR, ms=5, zorder=5)
        first_step, last_step = _step_limits(arena)
        right_half = peak.step > (first_step + last_step) / 2
        axes.annotate(
            plain(f"peak {format_bytes_short(peak.live_bytes)}\n{_peak_label(arena)}"),
            xy=(peak.step, unit.scale(peak.live_bytes)),
            xytext=(-14 if right_half else 14, -26),
            textcoords="offset points",
            ha="right" if right_half else "left",
            va="top",
            fontsize=8,
            color=PEAK_COLOR,
            fontweight="bold",
            arrowprops={"arrowstyle": "-", "color": PEAK_COLOR, "lw": 0.8},
            bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": PEAK_COLOR, "lw": 0.6},
        )
    first_step, last_step = _step_limits(arena)
    axes.set_xlim(first_step - 0.5, last_step + 0.5)
    axes.set_ylim(0, unit.scale(top) * 1.12)
    axes.set_xlabel("step (operator that runs)")
    axes.set_ylabel(f"live bytes ({unit.name})")
    _step_ticks(axes, arena)
    axes.grid(axis="y", color="#e6e9ed", lw=0.6)
    axes.set_axisbelow(True)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    _title(
        axes,
        report,
        "Live bytes per step",
        f"{view.planner}: arena {format_bytes_short(view.arena_size)}, "
        + _gap_text(view.arena_size, arena.lower_bound_for(view))
        + f" ({report.runtime}, '{arena.name}')",
    )
    return figure


# ---------------------------------------------------------------------------------------------
# Largest tensors live at the peak


def peak_tensors_figure(report: MemoryReport, planner: str | None = None) -> Figure:
    """Report → the largest buffers live at the peak step, as bars with bytes and share."""
    del planner  # what is live at the peak does not depend on the layout
    arena = report.primary
    peak = arena.peak
    live = list(arena.live_at(peak.step)) if peak is not None else []
    shown = live[:PEAK_BAR_LIMIT]
    rest = live[PEAK_BAR_LIMIT:]
    labels = [plain(tensor_label(arena.buffers[i].name, 44)) for i in shown]
    values = [arena.buffers[i].size for i in shown]
    colors = [PALETTE[i % len(PALETTE)] for i in shown]
    if rest:
        labels.append(f"{len(rest)} smaller buffers")
        values.append(sum(arena.buffers[i].size for i in rest))
        colors.append("#c5ccd3")
    count = max(len(values), 1)
    height = min(max(2.8, 1.5 + 0.36 * count), 9)
    figure = _new_figure(9, height)
    figure.subplots_adjust(left=0.34, right=0.88, top=1 - 0.85 / height, bottom=0.6 / height)
    axes = figure.add_subplot()
    total = peak.live_bytes if peak is not None else 0
    unit = byte_unit(max(values, default=1))
    axes.barh(range(len(values)), [unit.scale(v) for v in values], color=colors, height=0.66)
    axes.set_yticks(range(len(values)))
    axes.set_yticklabels(labels, fontsize=8)
    axes.set_ylim(count - 0.5, -0.5)  # no live buffer: one empty row, not equal limits
    for position, value in enumerate(values):
        share = f" ({100 * value / total:.0f}%)" if total else ""
        axes.text(
            unit.scale(value),
            position,
            f" {format_bytes_short(value)}{share}",
            va="center",
            fontsize=7.5,
            color=INK,
        )
    axes.set_xlim(0, unit.scale(max(values, default=1)) * 1.3)
    axes.set_xlabel(f"bytes ({unit.name})")
    axes.grid(axis="x", color="#e6e9ed", lw=0.6)
    axes.set_axisbelow(True)
    _title(
        axes,
        report,
        "Live at the peak",
        f"{format_bytes_short(total)} at {_peak_label(arena)}; {len(live)} buffers live",
    )
    return figure


_FIGURES: Mapping[str, Callable[[MemoryReport, str | None], Figure]] = {
    "memory_map": memory_map_figure,
    "lifetimes": lifetime_figure,
    "live_bytes": live_bytes_figure,
    "peak_tensors": peak_tensors_figure,
}
