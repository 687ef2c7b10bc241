"""`inspect --json` agrees with reference.json's `structure` on every real model."""

from __future__ import annotations

import json

import pytest

from arenalens.cli import main
from tests.conftest import SHARED_MODELS, shared_params, shared_reference


@pytest.mark.parametrize("name", shared_params())
def test_inspect_json_matches_reference_structure(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = shared_reference()[name]["structure"]
    assert main(["inspect", str(SHARED_MODELS / name), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["subgraph_count"] == expected["subgraph_count"]
    assert document["tensor_count"] == expected["tensor_count"]
    assert document["operator_count"] == expected["operator_count"]
    assert document["op_histogram"] == expected["op_histogram"]
    assert document["custom_ops"] == expected["custom_ops"]
    assert [m["name"] for m in document["metadata"]] == expected["metadata"]
    assert len(document["signature_defs"]) == expected["signature_defs"]
    assert document["file_bytes"] == expected["file_bytes"]
    subgraph = document["subgraphs"][0]
    assert subgraph["inputs"] == expected["inputs"]
    assert subgraph["outputs"] == expected["outputs"]
    kinds = document["tensors_by_kind"]
    assert kinds["constant"] == expected["constant_tensors"]
    assert kinds["variable"] == expected["variable_tensors"]
    assert document["tensor_count"] - kinds["constant"] == expected["nonconst_tensors"]
    for summary, sub in zip(expected["subgraphs"], document["subgraphs"], strict=True):
        assert sub["name"] == summary["name"]
        assert sub["operators"] == summary["operators"]
        assert len(sub["tensors"]) == summary["tensors"]
        assert sub["op_histogram"] == summary["op_histogram"]
        nonconst = sum(t["bytes"] for t in sub["tensors"] if t["kind"] != "constant")
        assert nonconst == summary["nonconst_bytes_sum"]
