"""The LiteRT heap view of the HTML report (issue 32) in headless Chromium on a phone (390 px):
a page made by `arenalens report MODEL --target raspberry-pi-zero-2-w` shows the interpreter's
heap under each delegate (XNNPACK, the figure's, first), part by part with the totals after
setup, after the first invoke and at the peak, the fit card compares what check compares, a
tensor named `<script>` stays text, and nothing scrolls sideways. Screenshot:
test-artifacts/report-heap-phone.png."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.cli import main
from arenalens.tflite.builder import ModelBuilder
from tests.report.test_report_browser import (  # noqa: F401
    ARTIFACTS,
    HOSTILE_NAME,
    PageWatch,
    browser,
)

pytestmark = pytest.mark.browser


def _dense_model(path: Path) -> Path:
    """Two float FULLY_CONNECTED layers, the hidden activation named like a script tag."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    rng = np.random.default_rng(0)
    first = graph.add_tensor("input", (1, 64), "FLOAT32")
    hidden = graph.add_tensor(HOSTILE_NAME, (1, 128), "FLOAT32")
    output = graph.add_tensor("output", (1, 10), "FLOAT32")
    weights = graph.add_constant("w1", rng.standard_normal((128, 64)).astype(np.float32))
    bias = graph.add_constant("b1", np.zeros(128, np.float32))
    graph.add_operator("FULLY_CONNECTED", [first, weights, bias], [hidden])
    weights2 = graph.add_constant("w2", rng.standard_normal((10, 128)).astype(np.float32))
    graph.add_operator("FULLY_CONNECTED", [hidden, weights2, -1], [output])
    graph.set_inputs([first])
    graph.set_outputs([output])
    path.write_bytes(builder.build())
    return path


def test_the_heap_view_on_a_phone(
    browser: Any,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = _dense_model(tmp_path / "dense.tflite")
    page = tmp_path / "heap.html"
    arguments = ["report", str(model), "--target", "raspberry-pi-zero-2-w", "-o", str(page)]
    assert main([*arguments, "--no-findings", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)["reports"][0]
    heaps = document["interpreter_heap"]
    assert [heap["delegate"] for heap in heaps] == ["xnnpack", "none"]
    assert document["declare"]["process_memory"] is True
    watched = PageWatch(browser, page)
    try:
        watched.page.set_viewport_size({"width": 390, "height": 844})
        watched.settle()
        blocks = watched.page.locator("#heap .heap-delegate")
        assert blocks.count() == 2
        assert blocks.nth(0).get_attribute("data-delegate") == "xnnpack"
        for index, heap in enumerate(heaps):
            rows = blocks.nth(index).locator("tr.heap-part")
            assert rows.count() == sum(1 for part in heap["parts"] if part["bytes"])
            totals = blocks.nth(index).locator("tr.heap-total").all_inner_texts()
            assert f"{heap['peak_bytes']:,} B" in totals[-1]
            assert f"{heap['after_setup_bytes']:,} B" in totals[0]
        # The fit card compares what check does: the model file + XNNPACK's peak heap.
        declared = document["declare"]["required_bytes"]
        assert declared == model.stat().st_size + heaps[0]["peak_bytes"]
        assert watched.page.inner_text("#card-fit .value") == "fits"
        assert f"{declared:,} B" in watched.page.inner_text("#card-declare .note")
        # The hostile name is text in the buffer table, never markup; no dialog opened.
        assert watched.dialogs == []
        assert HOSTILE_NAME in watched.page.inner_text("body")
        # Nothing scrolls sideways on the phone: the heap table scrolls inside its box.
        width = watched.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390
        assert watched.console == []
        assert watched.requests == [watched.url]
        ARTIFACTS.mkdir(exist_ok=True)
        watched.page.screenshot(path=str(ARTIFACTS / "report-heap-phone.png"), full_page=True)
    finally:
        watched.page.close()


def test_the_ways_a_model_input_picks(
    browser: Any,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An IF whose branch is a model input's (if_state_case 12): under each delegate a table of
    both ways, their figures as --json has them, the one all-zero inputs take named."""
    from tests.litert_control_flow_heap_cases import if_state_case

    model = tmp_path / "if.tflite"
    model.write_bytes(if_state_case(12))
    page = tmp_path / "ways.html"
    assert main(["report", str(model), "--runtime", "litert", "-o", str(page), "--json"]) == 0
    heaps = json.loads(capsys.readouterr().out)["reports"][0]["interpreter_heap"]
    watched = PageWatch(browser, page)
    try:
        watched.settle()
        blocks = watched.page.locator("#heap .heap-delegate")
        for index, heap in enumerate(heaps):
            rows = blocks.nth(index).locator("tr.heap-way").all_inner_texts()
            assert len(rows) == len(heap["ways"]) == 2
            for row, way in zip(rows, heap["ways"], strict=True):
                assert f"{way['after_first_invoke_bytes']:,} B" in row
                assert f"{way['peak_bytes']:,} B" in row
                assert ("all-zero inputs" in row) is way["zero_inputs"]
            assert "IF at operator 1: then branch" in rows[0]
            note = blocks.nth(index).locator(".note").first.inner_text()
            assert heap["estimate"] in note
            if heap["delegate"] == "none":  # each way exact: the larger way's figures
                assert "sizing figures: the larger of the 2 ways" in note
        assert watched.console == []
    finally:
        watched.page.close()


def test_the_heap_says_its_threads(
    browser: Any,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With --threads 2 each delegate's heading says 2 threads, as plan's tables do."""
    model = _dense_model(tmp_path / "dense.tflite")
    page = tmp_path / "threads.html"
    arguments = ["report", str(model), "--runtime", "litert", "--threads", "2", "-o", str(page)]
    assert main([*arguments, "--no-findings"]) == 0
    capsys.readouterr()
    watched = PageWatch(browser, page)
    try:
        watched.settle()
        headings = watched.page.locator("#heap .heap-delegate h3").all_inner_texts()
        assert len(headings) == 2 and all(", 2 threads: peak" in text for text in headings)
        assert watched.console == []
    finally:
        watched.page.close()
