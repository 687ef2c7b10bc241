"""Images: valid PNG and SVG with the expected titles and axis labels, for every real model."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest

from arenalens.report.build import build_report
from arenalens.report.data import MemoryReport
from arenalens.report.images import (
    IMAGE_KINDS,
    byte_unit,
    plain,
    render_image,
    render_images,
    tensor_label,
)
from tests.conftest import SHARED_MODELS, shared_params
from tests.report_helpers import analysis_for, synthetic_model, tensor_only_analysis

pytest.importorskip("matplotlib", reason="images need matplotlib (extra 'images')")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG = "{http://www.w3.org/2000/svg}"
EXPECTED_TEXT = {
    "memory_map": ("Memory map", "arena offset", "step (operator that runs)", "lower bound"),
    "lifetimes": ("Lifetimes", "step", "buffer size"),
    "live_bytes": ("Live bytes per step", "live bytes", "lower bound", "peak"),
    "peak_tensors": ("Live at the peak", "bytes"),
}


def _png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_SIGNATURE)
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _png_text_chunks(data: bytes) -> list[bytes]:
    chunks, position = [], 8
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        if kind in (b"tEXt", b"iTXt", b"zTXt"):
            chunks.append(data[position + 8 : position + 8 + length])
        position += 12 + length
    return chunks


def _svg_text(data: bytes) -> str:
    root = ElementTree.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return " ".join("".join(node.itertext()) for node in root.iter(f"{SVG}text"))


def _check_images(report: MemoryReport) -> None:
    images = render_images(report)
    assert sorted(images) == sorted(f"{k}.{f}" for k in IMAGE_KINDS for f in ("png", "svg"))
    for kind in IMAGE_KINDS:
        width, height = _png_size(images[f"{kind}.png"])
        assert 600 < width < 4000 and 300 < height < 4000
        assert _png_text_chunks(images[f"{kind}.png"]) == []  # no software / date metadata
        text = _svg_text(images[f"{kind}.svg"])
        for expected in EXPECTED_TEXT[kind]:
            assert expected in text, (kind, expected)
        assert report.model in text


@pytest.mark.parametrize("name", shared_params())
def test_images_of_every_real_model(name: str) -> None:
    report = build_report(analysis_for(SHARED_MODELS / name), budget=64 * 1024)
    _check_images(report)


def test_images_are_deterministic() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(3)), budget=30000)
    assert render_images(report) == render_images(report)


def test_svg_has_no_date_and_escapes_hostile_names() -> None:
    hostile = "$\\frac{1}{0}$ <b>&amp"
    report = build_report(tensor_only_analysis(synthetic_model(2, renames={2: hostile})))
    svg = render_image(report, "lifetimes", image_format="svg")  # labels every tensor
    assert b"<dc:date>" not in svg
    ElementTree.fromstring(svg)  # still well-formed XML
    assert hostile in _svg_text(svg)


def test_large_model_renders_quickly_enough_and_stays_small(tmp_path: Path) -> None:
    report = build_report(tensor_only_analysis(synthetic_model(500)))  # 2,001 buffers
    svg = render_image(report, "memory_map", image_format="svg")
    assert len(svg) < 400_000  # rectangles are rasterized above DENSE_BUFFERS
    (tmp_path / "map.svg").write_bytes(svg)


def test_helpers() -> None:
    assert byte_unit(100).name == "B"
    assert byte_unit(100 * 1024).name == "KiB"
    assert byte_unit(3 * 1024 * 1024).name == "MiB"
    assert plain("a$b") == "a\\$b"
    assert tensor_label("model/activation_12/Relu;model/bn/x", 40) == "model/activation_12/Relu"
    assert tensor_label("model/activation_12/Relu", 14) == "activation_12"
    assert tensor_label("model/activation_12/Relu", 8) == "…tion_12"
    with pytest.raises(ValueError, match="unknown image kind"):
        render_image(build_report(tensor_only_analysis(synthetic_model(1))), "pie")


def test_label_lines() -> None:
    from arenalens.report.images import label_lines

    assert label_lines("block_1/depthwise", 20, 1) == ["block_1/depthwise"]
    assert label_lines("block_1/depthwise", 10, 3) == ["block_1", "depthwise"]
    assert label_lines("block_1/depthwise", 8, 1) == ["block_1"]
    assert label_lines("activation_12", 8, 2) == ["…tion_12"]
    assert label_lines("x", 8, 0) == []


def test_the_memory_map_image_shows_the_whole_arena() -> None:
    """kws on a Cortex-M7 with CMSIS-NN: the strip names the head and the tail, the map draws
    the tail's parts as bands above the head, and the budget far above is named, not drawn."""
    from arenalens.examples import example_bytes
    from arenalens.pipeline import analyze
    from arenalens.units import format_bytes_short

    report = build_report(analyze(example_bytes("kws_ds_cnn"), build="cortex-m7/cmsis-nn"))
    report = replace(report, budget=64 * 1024)
    text = _svg_text(render_image(report, "memory_map", image_format="svg"))
    head, *_, tail = report.sections
    assert f"head {format_bytes_short(head.nbytes)}" in text
    assert f"tail {format_bytes_short(tail.nbytes)}" in text
    largest = max(tail.parts, key=lambda part: part.nbytes)
    assert f"tail: {largest.name}" in text
    assert f"kTensorArenaSize {format_bytes_short(report.required_bytes)}" in text
    assert "budget 64 KiB (above the scale)" in text


def test_a_small_head_is_drawn_zoomed_under_the_whole_arena_strip() -> None:
    """fc_autoencoder on the wheel: a 768 B head in a 4.5 KiB arena; the map zooms into the
    head (no tail bands over it) while the strip still shows every section to scale."""
    from arenalens.examples import example_bytes
    from arenalens.pipeline import analyze

    report = build_report(analyze(example_bytes("fc_autoencoder")))
    text = _svg_text(render_image(report, "memory_map", image_format="svg"))
    assert [section.name for section in report.sections] == ["head", "setup", "tail"]
    assert "tail " in text and "tail: " not in text


def test_labels_escape_what_the_font_cannot_draw() -> None:
    from arenalens.report.image_style import plain

    assert plain("conv\t1\x1b[31m\u202e$") == "conv\\x091\\x1b[31m\\u202e\\$"
    assert plain("line one\nline two") == "line one\nline two"  # a label's own lines stay


def test_hostile_names_draw_without_a_missing_glyph(recwarn: pytest.WarningsRecorder) -> None:
    from fuzz.hostile import HOSTILE_NAMES

    from arenalens.pipeline import analyze
    from tests.test_robustness import hostile_named_model

    for name in HOSTILE_NAMES[4:7]:  # control characters, a bidi override, mathtext
        render_images(build_report(analyze(hostile_named_model(name))))
    assert [str(w.message) for w in recwarn] == []


def test_nothing_live_at_the_peak_draws_without_a_warning(recwarn: pytest.WarningsRecorder) -> None:
    """A model with no buffer in its arena (a fuzzed one): every image draws without a warning.
    Equal y-limits made matplotlib warn, in the peak chart and then in the lifetimes chart (the
    fuzz campaign's hypothesis test failed on each, one session apart): one empty row each."""
    model = synthetic_model(0)
    empty = replace(model.subgraphs[0], tensors=(), inputs=(), outputs=())
    report = build_report(tensor_only_analysis(replace(model, subgraphs=(empty,))))
    assert report.primary.peak is not None and report.primary.peak.live_bytes == 0
    assert render_image(report, "peak_tensors", image_format="svg")
    assert render_images(report)
    assert [str(warning.message) for warning in recwarn] == []
