"""jsontext: JSON for people and scripts, the same document back, one line per table row."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens import jsontext

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(documents)
def test_the_text_parses_to_the_same_document(document: Any) -> None:
    text = jsontext.to_json(document)
    assert text.endswith("\n")
    assert json.loads(text) == document


@settings(max_examples=100, deadline=None)
@given(documents)
def test_a_line_is_what_the_standard_encoder_writes(document: Any) -> None:
    # The reused C encoder writes what json.dumps with the same options writes.
    standard = json.dumps(document, ensure_ascii=False, separators=(", ", ": "))
    assert jsontext._compact(document) == standard


def test_a_table_has_one_line_per_row() -> None:
    rows = [{"name": f'tensor "{n}"', "bytes": n, "first": None, "dims": [1, n]} for n in range(3)]
    text = jsontext.to_json({"tensors": rows, "empty": []})
    assert text.splitlines() == [
        "{",
        '  "tensors": [',
        '    {"name": "tensor \\"0\\"", "bytes": 0, "first": null, "dims": [1, 0]},',
        '    {"name": "tensor \\"1\\"", "bytes": 1, "first": null, "dims": [1, 1]},',
        '    {"name": "tensor \\"2\\"", "bytes": 2, "first": null, "dims": [1, 2]}',
        "  ],",
        '  "empty": []',
        "}",
    ]
