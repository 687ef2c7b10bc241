"""XNNPACK's operator-data slots (runtimes/litert/xnnpack_slots.py) against the 2.3.0 wheel:
each runtime's operator-data and value array requests, read off the wheel's allocations
(tests/litert_runtime_arrays.py, tests/data/litert_runtime_arrays.json: its `command` remakes
it). Until session 13 a node the fusions cleared always kept its slot; a later pass's clean-up
compacts them (var11_1102 / _1107 / _1110, var12_1203 / _1205: 1-4 slots over)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.runtimes.litert import xnnpack_objects
from arenalens.runtimes.litert.heap_xnnpack import node_subsets, partition
from arenalens.runtimes.litert.xnnpack_custom import as_xnnpack_builtins
from arenalens.tflite.reader import parse_model
from tests.litert_heap_measure import held_out_model
from tests.litert_runtime_arrays import ARRAYS, model_bytes

CACHE = json.loads(ARRAYS.read_text())


def test_the_cache_says_how_to_remake_it() -> None:
    assert CACHE["command"].startswith("python -m tests.litert_runtime_arrays --only ")
    listed = CACHE["command"].split(" --only ", 1)[1].split(",")
    assert all(any(part in name for part in listed) for name in CACHE["models"])
    assert sum(name.startswith(("var11_", "var12_")) for name in CACHE["models"]) >= 40


@pytest.mark.parametrize("name", sorted(CACHE["models"]))
def test_runtime_arrays_are_the_wheels(name: str, tmp_path: Path) -> None:
    data = model_bytes(name, tmp_path)
    if data is None:
        pytest.skip("the shared models are not here")
    model = as_xnnpack_builtins(parse_model(data, name))
    requests = xnnpack_objects.runtime_array_requests(model)
    assert requests is not None
    assert [list(pair) for pair in requests] == CACHE["models"][name]


def _kernel_counts(seed: int) -> list[tuple[int, int]]:
    model = as_xnnpack_builtins(parse_model(held_out_model("replan", seed), f"var11_{seed}"))
    subgraph = model.subgraphs[0]
    subsets = node_subsets(subgraph, partition(subgraph, model).delegated)
    return [
        xnnpack_objects.runtime_counts(subgraph, subset, model)
        for subset in subsets
        if subset.delegated
    ]


def test_a_clean_up_compacts_the_cleared_nodes() -> None:
    """var11_1102's first kernel: 3 variable reads fused into their consumers (cleared), then
    its RELU merged into the FULLY_CONNECTED: optimize_common_subgraphs' clean-up leaves 9 of
    the 13 nodes (the wheel: 2,160 B of operator data). var11_1110's: the fused reads make a
    `mul(x, x)` a square, 6 slots."""
    assert _kernel_counts(1102)[0] == (9, 27)
    assert _kernel_counts(1110)[0] == (6, 20)


def test_without_a_clean_up_a_fused_copy_keeps_its_slot() -> None:
    """var11_1102's second kernel: its variable read fused into the ADD, nothing after the
    fusions changes: the read's node stays in the array (4 slots for 3 nodes, 960 B)."""
    assert _kernel_counts(1102)[1] == (4, 11)
