"""HTML report without a browser: self-contained, deterministic, safe with hostile names."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from arenalens.report.build import build_report
from arenalens.report.html_page import render_html, script_safe_json
from tests.report_helpers import synthetic_model, tensor_only_analysis

HOSTILE = "</script><script>alert(1)</script><!-- \u2028 & \u2029"


def _page(**renames: str) -> str:
    model = synthetic_model(3, renames={int(k[1:]): v for k, v in renames.items()})
    return render_html([build_report(tensor_only_analysis(model), budget=40000)])


def _data(page: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="arenalens-data">(.*?)</script>', page)
    assert match is not None
    document: dict[str, object] = json.loads(match.group(1))
    return document


def test_script_safe_json_escapes_what_could_end_the_script() -> None:
    text = script_safe_json({"name": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"name": HOSTILE}


def test_hostile_names_never_appear_raw() -> None:
    page = _page(t1=HOSTILE)
    assert HOSTILE not in page
    assert page.count("<script") == 2  # the data block and the viewer, nothing injected
    assert page.count("</script>") == 2
    names = _data(page)["reports"][0]["arenas"][0]["buffers"]["name"]  # type: ignore[index]
    assert HOSTILE in names


def test_hostile_model_name_is_escaped_in_the_static_header() -> None:
    report = build_report(tensor_only_analysis(synthetic_model(1)), name='<img src=x onerror="a">')
    page = render_html([report])
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=&quot;a&quot;&gt;" in page


def test_self_contained_no_urls_and_a_strict_content_security_policy() -> None:
    page = _page()
    assert not re.search(r"(?:src|href)\s*=", page, re.IGNORECASE)
    assert "http://" not in page and "https://" not in page and "//cdn" not in page
    assert "@import" not in page and "url(" not in page
    policy = re.search(r'Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "default-src 'none'" in policy.group(1)
    assert "connect-src 'none'" in policy.group(1)
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy.group(1)  # the viewer is the only script allowed


def test_same_input_same_bytes() -> None:
    assert _page() == _page()


def test_two_reports_for_compare_mode() -> None:
    left = build_report(tensor_only_analysis(synthetic_model(2)), name="left")
    right = build_report(tensor_only_analysis(synthetic_model(4)), name="right")
    page = render_html([left, right])
    assert "<title>left vs right" in page
    assert [r["model"] for r in _data(page)["reports"]] == ["left", "right"]  # type: ignore[attr-defined]


def test_needs_a_report() -> None:
    with pytest.raises(ValueError, match="at least one"):
        render_html([])
