"""A sample of tests/litert_random_graphs.py's seeds on the real wheel: every arena offset and
high-water mark as predicted (the full campaign: `python -m tests.litert_random_graphs 0 300`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.litert_random_graphs import disagreements, random_graph

# Seeds whose graphs hold folded shape arithmetic, REDUCE_PROD's noop or a folded fft_length.
SAMPLE = (4, 17, 121, 130, 153, 187)


def test_random_graphs_are_deterministic() -> None:
    assert random_graph(121) == random_graph(121)
    assert random_graph(121) != random_graph(122)


@pytest.mark.runtime
@pytest.mark.parametrize("seed", SAMPLE)
def test_random_graph_matches_the_wheel(seed: int, tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    assert disagreements(seed, tmp_path) == []
