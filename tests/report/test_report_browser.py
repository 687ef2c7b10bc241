"""The HTML report in a real browser: headless Chromium driven by Playwright.

Checks what a user does in the first ten seconds: the page loads with no console errors and no
network requests, hovering a memory-map rectangle names the tensor and its bytes, clicking a table
row highlights that tensor in the memory map, the planner switch changes the arena shown, and a
tensor named `<script>alert(1)</script>` is shown as text. Screenshots go to test-artifacts/.

Chromium comes from the system (Debian's `chromium`, installed by .ci/run); Playwright never
downloads a browser. Set ARENALENS_CHROMIUM to use another binary.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arenalens.builds.build import HOST
from arenalens.builds.kernel_paths import overlap_rules
from arenalens.report.build import build_report
from arenalens.report.data import FindingRow, InputSizeRow, MemoryReport
from arenalens.report.html_page import render_html
from arenalens.units import format_bytes_short
from tests.conftest import REPO_ROOT
from tests.report_helpers import analysis_for, synthetic_model

pytestmark = pytest.mark.browser

HOSTILE_NAME = "<script>alert(1)</script>"
ARTIFACTS = REPO_ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A page opened in a new tab must keep rendering: no throttled timers or animation frames.
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
]


def _chromium_path() -> str | None:
    configured = os.environ.get("ARENALENS_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (skips with the reason when Playwright or Chromium is missing)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install 'arenalens[dev]')")
    executable = _chromium_path()
    if executable is None:
        pytest.skip("chromium not found (apt-get install chromium, or set ARENALENS_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _reports() -> list[MemoryReport]:
    model = synthetic_model(6, name="residual6", renames={5: HOSTILE_NAME})
    bigger = synthetic_model(8, name="residual8")
    first = build_report(analysis_for(model), budget=64 * 1024)
    guided = replace(
        first,
        next_steps=("Declare kTensorArenaSize = 1 B: it fits.",),
        findings=(
            FindingRow("planner-waste", "warning", "model", HOSTILE_NAME, "run optimize", 512),
        ),
        input_sizes=tuple(
            InputSizeRow((1, h, h, 3), h, 1000 * h, 1000 * h <= 64 * 1024) for h in (16, 32, 64)
        ),
        max_input=(1, 32, 32, 3),
        input_name="input",
    )
    return [guided, build_report(analysis_for(bigger))]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[MemoryReport]]:
    reports = _reports()
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(reports), encoding="utf-8")
    return path, reports


class PageWatch:
    """A loaded page with everything it logged, requested or opened as a dialog."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.set_default_timeout(10_000)
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("dialog", self._dialog)
        self.url = path.as_uri()
        self.page.goto(self.url)
        self.page.wait_for_function("window.arenalens !== undefined")

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.console.append(f"{message.type}: {message.text}")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def settle(self) -> None:
        """Render every view now (the viewer otherwise waits for an animation frame, which a
        busy machine may delay)."""
        self.page.evaluate("window.arenalens.redraw()")


@pytest.fixture
def watch(
    browser: Any, report_file: tuple[Path, list[MemoryReport]], request: pytest.FixtureRequest
) -> Iterator[PageWatch]:
    watched = PageWatch(browser, report_file[0])
    failures = request.session.testsfailed
    yield watched
    if request.session.testsfailed > failures:  # keep what the page showed when it failed
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"failed-{request.node.name}.png"
        watched.page.screenshot(path=str(path), full_page=True)
    watched.page.close()


def test_loads_without_console_errors_or_network_requests(watch: PageWatch) -> None:
    watch.settle()
    watch.page.click("#mode-compare")
    watch.settle()
    watch.page.click("#mode-report")
    watch.settle()
    assert watch.console == []
    assert watch.requests == [watch.url]  # the page itself, nothing else
    ARTIFACTS.mkdir(exist_ok=True)
    watch.page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)


def test_hovering_a_rectangle_shows_its_name_and_bytes(
    watch: PageWatch, report_file: tuple[Path, list[MemoryReport]]
) -> None:
    arena = report_file[1][0].primary
    largest = max(range(len(arena.buffers)), key=lambda i: (arena.buffers[i].size, -i))
    watch.settle()
    center = watch.page.evaluate(f"window.arenalens.rectCenter({largest})")
    watch.page.mouse.move(center["x"], center["y"])
    tooltip = watch.page.locator("#tooltip")
    tooltip.wait_for(state="visible")
    text = tooltip.inner_text()
    assert arena.buffers[largest].name in text
    assert f"{arena.buffers[largest].nbytes:,} B" in text
    assert format_bytes_short(arena.buffers[largest].size) in text


def test_clicking_a_table_row_highlights_the_tensor_in_the_memory_map(watch: PageWatch) -> None:
    watch.settle()
    from playwright.sync_api import expect

    row = watch.page.locator("#app .vtable").first.locator(".vrow").nth(2)
    index = int(row.get_attribute("data-index") or "-1")
    row.click()
    watch.settle()
    expect(watch.page.locator("#memory-map canvas")).to_have_attribute("data-selected", str(index))
    expect(watch.page.locator("#lifetimes canvas")).to_have_attribute("data-selected", str(index))
    expect(row).to_have_class(re.compile(r"\bselected\b"))
    name = watch.page.evaluate(f"window.arenalens.state().selected === {index}")
    assert name is True


def test_planner_switch_changes_the_arena_size(
    watch: PageWatch, report_file: tuple[Path, list[MemoryReport]]
) -> None:
    plans = report_file[1][0].primary.plans
    assert plans[0].arena_size != plans[-1].arena_size
    watch.settle()
    shown = watch.page.inner_text("#card-arena .value")
    assert shown == format_bytes_short(plans[0].arena_size)
    from playwright.sync_api import expect

    watch.page.click(f'#planners button[data-planner="{plans[-1].planner}"]')
    watch.settle()
    expect(watch.page.locator("#card-arena .value")).to_have_text(
        format_bytes_short(plans[-1].arena_size)
    )
    canvas = watch.page.locator("#memory-map canvas")
    expect(canvas).to_have_attribute("data-planner", plans[-1].planner)


def test_a_script_tag_in_a_tensor_name_renders_as_text(watch: PageWatch) -> None:
    from playwright.sync_api import expect

    watch.page.fill("#tensor-filter", "alert")
    watch.settle()
    rows = watch.page.locator("#app .vtable").first.locator(".vrow:visible")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(HOSTILE_NAME)
    rows.first.click()
    watch.settle()
    expect(watch.page.locator("#details-name")).to_have_text(HOSTILE_NAME)
    assert watch.page.evaluate("document.scripts.length") == 2  # the data block and the viewer
    assert watch.dialogs == []
    assert watch.console == []


def test_compare_mode_shows_both_views(
    watch: PageWatch, report_file: tuple[Path, list[MemoryReport]]
) -> None:
    left, right = report_file[1]
    watch.page.click("#mode-compare")
    watch.settle()
    totals = watch.page.inner_text("#compare-totals")
    assert format_bytes_short(left.primary.plans[0].arena_size) in totals
    assert format_bytes_short(right.primary.plans[0].arena_size) in totals
    ARTIFACTS.mkdir(exist_ok=True)
    watch.page.screenshot(path=str(ARTIFACTS / "report-compare.png"), full_page=True)
    assert watch.console == []


def test_budget_field_takes_sizes_and_flags_nonsense(watch: PageWatch) -> None:
    watch.page.fill("#budget", "10MiB")
    watch.settle()
    assert watch.page.evaluate("window.arenalens.state().budget") == 10 * 1024 * 1024
    assert watch.page.inner_text("#card-fit .value") == "fits"
    assert watch.page.inner_text("#budget-message") == "= 10,485,760 B"
    watch.page.fill("#budget", "lots")
    watch.settle()
    assert "invalid" in (watch.page.get_attribute("#budget", "class") or "")
    # The box says it cannot read the text, instead of silently keeping the old budget.
    assert "can't read 'lots'" in watch.page.inner_text("#budget-message")
    assert watch.page.evaluate("window.arenalens.state().budget") == 10 * 1024 * 1024
    watch.page.fill("#budget", "1KB")
    watch.settle()
    assert watch.page.inner_text("#budget-message") == "= 1,024 B"
    assert watch.page.inner_text("#card-fit .value").startswith("over by")


def test_the_number_to_declare_is_the_first_card(
    watch: PageWatch, report_file: tuple[Path, list[MemoryReport]]
) -> None:
    report = report_file[1][0]
    watch.settle()
    first = watch.page.locator(".cards .card").first
    assert first.get_attribute("id") == "card-declare"
    assert first.locator(".label").inner_text().lower() == "ktensorarenasize"
    assert first.locator(".value").inner_text() == format_bytes_short(report.required_bytes)
    note = first.locator(".note").inner_text()
    assert f"{report.required_bytes:,} B" in note and "inside the tensor arena" in note
    # A plan other than the runtime's: its number, and that it applies after optimize.
    other = next(p for p in report.primary.plans if not p.is_runtime)
    watch.page.click(f'#planners button[data-planner="{other.planner}"]')
    watch.settle()
    assert "applies after `arenalens optimize" in first.locator(".note").inner_text()
    assert f"--planner {other.planner}" in first.locator(".note").inner_text()


def test_what_to_do_next_lists_steps_and_findings_as_text(watch: PageWatch) -> None:
    watch.settle()
    panel = watch.page.locator("#next-steps")
    assert "Declare kTensorArenaSize" in panel.inner_text()
    assert HOSTILE_NAME in panel.locator(".finding").first.inner_text()
    assert "saves 512 B" in panel.inner_text()
    assert watch.dialogs == []


def test_arena_against_input_size_is_plotted(watch: PageWatch) -> None:
    watch.settle()
    panel = watch.page.locator("#input-sizes")
    assert "largest that fits: input=1x32x32x3" in panel.inner_text()
    assert panel.locator("canvas").get_attribute("aria-label") == "arena against input size"
    assert watch.console == []


def test_clicking_an_operator_lists_what_it_reads_and_writes(watch: PageWatch) -> None:
    watch.settle()
    watch.page.locator("#ops .vrow").nth(2).click()
    watch.settle()
    state = watch.page.evaluate("window.arenalens.state()")
    assert state["step"] == 2
    details = watch.page.inner_text("#details")
    assert "step 2" in details and "reads" in details and "writes" in details


def test_dragging_on_the_live_chart_zooms_every_view(watch: PageWatch) -> None:
    watch.settle()
    # "What to do next" sits above the charts: bring the chart into the viewport first.
    watch.page.locator("#live-bytes canvas").scroll_into_view_if_needed()
    box = watch.page.locator("#live-bytes canvas").bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    watch.page.mouse.move(box["x"] + box["width"] * 0.3, y)
    watch.page.mouse.down()
    watch.page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    watch.page.mouse.up()
    watch.settle()
    zoom = watch.page.evaluate("window.arenalens.state().zoom")
    assert zoom is not None and zoom[0] < zoom[1]
    watch.page.click("text=reset zoom")
    watch.settle()
    assert watch.page.evaluate("window.arenalens.state().zoom") is None
    assert watch.console == []


def test_the_viewer_formats_bytes_and_percentages_as_the_terminal_does(watch: PageWatch) -> None:
    from arenalens.report.terminal import _percent

    generator = random.Random(0)
    sizes = [0, 1, 1023, 1024, 1152, 1536, 2047, 1048575, 1048576, 1179648, 5 * 1024**3]
    sizes += [generator.randrange(1, 1 << scale) for scale in range(4, 34) for _ in range(20)]
    shown = watch.page.evaluate("(values) => values.map(window.arenalens.format.bytes)", sizes)
    assert shown == [format_bytes_short(size) for size in sizes]
    pairs = [(49, 400), (1, 8), (0, 5), (5, 0), (2, 3), (1, 1600)]
    pairs += [(generator.randrange(0, 10**6), generator.randrange(1, 10**6)) for _ in range(300)]
    percent = "(pairs) => pairs.map(([part, all]) => window.arenalens.format.percent(part, all))"
    shown = watch.page.evaluate(percent, pairs)
    assert shown == [_percent(part, whole) for part, whole in pairs]


def test_overlap_plan_draws_shared_bytes_and_both_bounds(browser: Any, tmp_path: Path) -> None:
    from arenalens.examples import example_bytes
    from arenalens.pipeline import analyze

    analysis = analyze(example_bytes("vww_mobilenet_v1"), overlap=overlap_rules(HOST, "reference"))
    report = build_report(analysis)
    arena = report.primary
    assert arena.overlap_lower_bound is not None
    shared = arena.shared_regions(arena.plans[0])
    assert shared
    path = tmp_path / "overlap.html"
    path.write_text(render_html([report]), encoding="utf-8")
    watched = PageWatch(browser, path)
    try:
        watched.settle()
        from playwright.sync_api import expect

        canvas = watched.page.locator("#memory-map canvas")
        expect(canvas).to_have_attribute("data-shared", str(len(shared)))
        note = watched.page.inner_text("#card-bound .note")
        assert format_bytes_short(arena.overlap_lower_bound) in note and "sharing no bytes" in note
        assert watched.page.inner_text("#card-bound .value") == format_bytes_short(
            arena.overlap_lower_bound
        )
        assert "output written over the input" in watched.page.inner_text(".legend")
        assert watched.console == []
        ARTIFACTS.mkdir(exist_ok=True)
        watched.page.screenshot(path=str(ARTIFACTS / "report-overlap.png"), full_page=True)
    finally:
        watched.page.close()


def test_the_fit_card_shows_where_each_part_goes_on_a_board_with_banks(
    browser: Any, tmp_path: Path
) -> None:
    """`report --target` on a board with several RAM banks: the fit card gives check's placement
    (two banks, each part's bytes and bank), not "over by" the largest bank."""
    import arenalens
    from arenalens.pipeline import analyze
    from arenalens.report.guidance import with_guidance
    from tests.fixtures.bank_models import TWO_BANKS

    model = tmp_path / "two_banks.tflite"
    model.write_bytes(TWO_BANKS[1]())
    verdict = arenalens.check(str(model), target="nucleo-h743zi")
    report = with_guidance(
        build_report(analyze(str(model), build="cortex-m7/cmsis-nn")), verdict=verdict
    )
    path = tmp_path / "banks.html"
    path.write_text(render_html([report]), encoding="utf-8")
    watched = PageWatch(browser, path)
    try:
        watched.settle()
        assert watched.page.inner_text("#card-fit .value") == "fits in 2 banks"
        note = watched.page.inner_text("#card-fit .note")
        assert "to spare" in note
        assert "persistent 260,528 B in sram1-3 (on-chip)" in note
        assert "non-persistent 400,000 B in axi-sram (on-chip)" in note
        assert watched.console == []
        assert watched.requests == [watched.url]  # self-contained
    finally:
        watched.page.close()
