"""HTML report: MemoryReports → one self-contained page (no network, no CDN) as a string.

The page embeds the report document as JSON in `<script type="application/json">` and a small
hand-written viewer (`assets/viewer/*.js`, joined into one script by report/viewer.py, and
`assets/report.css`: linked memory map, lifetimes, live bytes, tensor table, op list, planner
switch, compare mode). They are hand-written because no offline charting library ships with
Python, and a CDN would break the "opens offline" promise.

Safety: model-derived text (tensor and op names, descriptions) reaches the page only as escaped
HTML in the static header, or inside the JSON, where `<`, `>`, `&`, U+2028 and U+2029 are written
as `\\uXXXX` escapes so no name can close the script element; the viewer only ever assigns names
to `textContent`. A Content-Security-Policy allows exactly the page's own script and style (by
hash) and no connections, so even a bug could not load or send anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence
from functools import cache
from importlib import resources

from arenalens.declared import Status
from arenalens.report.data import MemoryReport, report_document
from arenalens.report.labels import declared_qualifier
from arenalens.report.viewer import viewer_script
from arenalens.units import format_bytes_exact, format_bytes_short

# Characters that must not appear raw inside an inline <script> block: '<' and '>' could form
# '</script>' or '<!--', '&' keeps the text unambiguous for XHTML readers, and U+2028/U+2029 are
# line terminators in older JavaScript engines.
# No replacement holds a character another one replaces, so the order does not matter.
_SCRIPT_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def script_safe_json(document: object) -> str:
    """Any JSON-ready value → compact JSON that can sit inside an HTML <script> element."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # One str.replace per character, not str.translate with a mapping: translate looks each
    # character up in the dict (about 1 µs each), replace scans in C; a page of many arenas
    # (a hostile model of 500 subgraphs) carries hundreds of megabytes of JSON.
    for character, escape in _SCRIPT_ESCAPES:
        if character in text:
            text = text.replace(character, escape)
    return text


@cache
def _asset(name: str) -> str:
    return resources.files("arenalens.report").joinpath("assets", name).read_text("utf-8")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html(reports: Sequence[MemoryReport], *, tool: str = "arenalens") -> str:
    """Reports (one, or two to compare) → the complete HTML page as a string."""
    if not reports:
        raise ValueError("render_html needs at least one report")
    script = viewer_script()
    style = _asset("report.css")
    data = script_safe_json(report_document(reports, tool=tool))
    policy = "; ".join(
        (
            "default-src 'none'",
            f"script-src {_csp_hash(script)}",
            f"style-src {_csp_hash(style)}",
            "img-src data:",
            "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )
    first = reports[0]
    names = " vs ".join(report.model for report in reports)
    return "\n".join(
        (
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            f'<meta name="generator" content="{html.escape(tool)}">',
            f"<title>{html.escape(names)} — arenalens memory report</title>",
            f"<style>{style}</style>",
            "</head>",
            "<body>",
            _static_header(first, names),
            '<main id="app" aria-live="polite"></main>',
            '<noscript><p class="noscript">The interactive views need JavaScript. '
            "The summary above holds the key numbers.</p></noscript>",
            f'<script type="application/json" id="arenalens-data">{data}</script>',
            f"<script>{script}</script>",
            "</body>",
            "</html>",
            "",
        )
    )


def _static_header(report: MemoryReport, names: str) -> str:
    """The header as static HTML, so the key numbers read even without JavaScript."""
    arena = report.primary
    plan = arena.plans[0] if arena.plans else None
    facts = []
    declared = report.declared
    if declared is not None and declared.status is Status.CANNOT_RUN:
        facts.append(f"{declared.symbol}: none, the runtime cannot run this model")
        facts.extend(declared.reasons[:3])
    elif declared is not None and declared.status is Status.WRONG_OUTPUTS:
        facts.append(f"{declared.symbol}: none, the model's offline plan would corrupt tensors")
        facts.extend(declared.reasons[:1])
    elif declared is not None:
        qualifier = declared_qualifier(declared.status)
        facts.append(
            f"{declared.symbol} = {format_bytes_exact(declared.required_bytes)}"
            + (f" ({qualifier})" if qualifier else "")
        )
    verdict = report.verdict
    if verdict is not None and verdict.answer is not None:
        where = f" on {verdict.where}" if verdict.where else ""
        facts.append(f"{verdict.answer.value}{where}")
    if plan is not None:
        facts.append(f"arena {format_bytes_short(plan.arena_size)} with {plan.planner}")
    facts.append(f"lower bound {format_bytes_short(arena.lower_bound)}")
    if arena.overlap_lower_bound is not None:
        facts.append(f"{format_bytes_short(arena.overlap_lower_bound)} with overlaps")
    facts.append(f"{len(arena.buffers)} buffers, {report.operator_count} operators")
    facts.append(f"runtime {report.runtime}")
    if report.build is not None and not report.build.is_host:
        facts.append(f"build {report.build.name}")
    return (
        '<header class="page-header">'
        '<div class="brand">arenalens</div>'
        f'<h1 id="title">{html.escape(names)}</h1>'
        f'<p class="subtitle" id="static-summary">{html.escape(" · ".join(facts))}</p>'
        "</header>"
    )
