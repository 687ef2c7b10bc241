"""Report generation: time and size of every report output for a 2,000-tensor model.

Model: the generated U-Net-like graph (`tests/fixtures/synthetic.py`, skip connections give long
lifetimes) with 2,000 operators and 2,001 planned tensors, under TFLM rules.

Baseline, measured in the same run: exporting the same report as plain JSON (`report_document`
+ `json.dumps`), the cheapest way to hand the numbers to another tool. Ratios say how much more
the HTML page (which embeds that JSON plus the viewer), the terminal text and the images cost.
With --browser, it also opens the page in headless Chromium and times the first render and a
hover redraw (needs Playwright and Debian's chromium).

Run: python benchmarks/bench_report.py [--operators 2000] [--repeat 5] [--browser]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from arenalens.alternatives import default_planners, plan_alternatives
from arenalens.pipeline import analyze
from arenalens.report.build import build_report
from arenalens.report.data import MemoryReport, report_document
from arenalens.report.html_page import render_html
from arenalens.report.terminal import render_report_text
from arenalens.tflite.reader import parse_model
from arenalens.units import format_bytes_short
from benchkit import best_of, synthetic_model

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
]


def json_export(report: MemoryReport) -> str:
    """The baseline: the report's numbers as plain JSON."""
    return json.dumps(report_document([report]), ensure_ascii=False, separators=(",", ":"))


def image_row(report: MemoryReport) -> tuple[float, int] | None:
    """(seconds, bytes) for all charts as PNG and SVG, or None without matplotlib."""
    try:
        from arenalens.report.images import render_images
    except ImportError:
        return None
    started = time.perf_counter()
    try:
        images = render_images(report)
    except Exception as error:
        print(f"(images skipped: {error})", file=sys.stderr)
        return None
    return time.perf_counter() - started, sum(len(data) for data in images.values())


def browser_rows(page_text: str) -> list[tuple[str, float]]:
    """Open the page in headless Chromium: seconds to first render, and per hover redraw."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("(browser rows skipped: playwright not installed)", file=sys.stderr)
        return []
    if executable is None:
        print("(browser rows skipped: chromium not found)", file=sys.stderr)
        return []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_text(page_text, encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            started = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_function("window.arenalens !== undefined")
            page.evaluate("new Promise(requestAnimationFrame)")
            first_render = time.perf_counter() - started
            redraw = page.evaluate(REDRAW_TIMING)
            browser.close()
    return [("browser: load + first render", first_render), ("browser: redraw all views", redraw)]


# Select 40 different tensors in turn and time the redraw of every view (what a click or a
# hover costs), synchronously, without waiting for frames.
REDRAW_TIMING = """
() => {
  const count = 40;
  let total = 0;
  for (let k = 0; k < count; k++) {
    window.arenalens.select(k * 37 % 2000);
    total += window.arenalens.redraw();
  }
  return total / count / 1000;
}
"""


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operators", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--browser", action="store_true", help="also time the page in Chromium")
    args = parser.parse_args()
    model = parse_model(synthetic_model("unet", args.operators), "synthetic-unet")
    started = time.perf_counter()
    analysis = analyze(model, runtime="tflm")
    # Every default planner, as `arenalens report` shows them: the page embeds each layout.
    alternatives = plan_alternatives(analysis, default_planners("tflm"))
    analysis_seconds = time.perf_counter() - started
    report = build_report(analysis, alternatives=alternatives)
    buffers = len(report.primary.buffers)

    baseline = json_export(report)
    baseline_seconds = best_of(args.repeat, lambda: json_export(report))
    page = render_html([report])
    rows: list[tuple[str, float, int | None]] = [
        ("JSON export (baseline)", baseline_seconds, len(baseline.encode())),
        (
            "build report from analysis",
            best_of(args.repeat, lambda: build_report(analysis, alternatives=alternatives)),
            None,
        ),
        (
            "HTML page",
            best_of(args.repeat, lambda: render_html([report])),
            len(page.encode()),
        ),
        (
            "terminal text (20 rows)",
            best_of(args.repeat, lambda: render_report_text(report)),
            len(render_report_text(report).encode()),
        ),
    ]
    images = image_row(report)
    if images is not None:
        rows.append(("images (4 charts, PNG + SVG)", images[0], images[1]))

    table = Table(
        title=f"report outputs for a {args.operators:,}-operator model, {buffers:,} buffers, "
        f"{len(report.primary.plans)} plans (analysis and planning: {analysis_seconds:.2f} s, "
        "not counted)",
        title_justify="left",
    )
    for column in ("output", "seconds", "× baseline", "size", "× baseline size"):
        table.add_column(column, justify="left" if column == "output" else "right")
    baseline_bytes = len(baseline.encode())
    for label, seconds, size in rows:
        table.add_row(
            label,
            f"{seconds:.4f}",
            f"{seconds / baseline_seconds:.1f}",
            "-" if size is None else format_bytes_short(size),
            "-" if size is None else f"{size / baseline_bytes:.2f}",
        )
    if args.browser:
        for label, seconds in browser_rows(page):
            table.add_row(label, f"{seconds:.4f}", f"{seconds / baseline_seconds:.1f}", "-", "-")
    Console(width=110).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
