"""One call's XNNPACK nodes built once (xnnpack_node_builds): the same nodes as building them
each time, the same figures through the functions that take them, and a call's builds never
used for another model."""

from __future__ import annotations

import pytest

from arenalens.ir import Model
from arenalens.runtimes.litert import heap_build, heap_xnnpack, xnnpack_objects
from arenalens.runtimes.litert.isa import HOST
from arenalens.runtimes.litert.xnnpack_node_builds import NodeBuilds, subset_nodes
from arenalens.runtimes.litert.xnnpack_workspace import _nodes
from arenalens.tflite.reader import parse_model
from tests.litert_fusion_cases import unary_chain_model


def _model(seed: int) -> Model:
    return parse_model(unary_chain_model(seed), f"chain{seed}")


def _subsets(model: Model) -> list[heap_xnnpack.NodeSubset]:
    subgraph = model.subgraphs[0]
    split = heap_xnnpack.partition(subgraph, model)
    return [s for s in heap_xnnpack.node_subsets(subgraph, split.delegated) if s.delegated]


@pytest.mark.parametrize("seed", range(12))
def test_built_once_and_the_same_as_built_each_time(seed: int) -> None:
    model = _model(seed)
    subgraph, builds = model.subgraphs[0], NodeBuilds(model)
    for subset in _subsets(model):
        boundary = set(subset.inputs) | set(subset.outputs)
        for fuse in (True, False):
            first = subset_nodes(subgraph, subset, model, builds, fuse=fuse)
            assert subset_nodes(subgraph, subset, model, builds, fuse=fuse) is first
            assert first == _nodes(subgraph, subset.operators, boundary, model, fuse=fuse)
    objects = xnnpack_objects.delegate_objects(model, NodeBuilds(model))
    assert objects == xnnpack_objects.delegate_objects(model)
    shared = NodeBuilds(model)
    with_builds = heap_build.replayed_moment(model, 1 << 20, 4096, HOST, shared)
    assert with_builds == heap_build.replayed_moment(model, 1 << 20, 4096, HOST)


def test_another_models_builds_are_not_used() -> None:
    model, other = _model(1), _model(2)
    builds = NodeBuilds(other)
    subgraph = model.subgraphs[0]
    for subset in _subsets(model):
        boundary = set(subset.inputs) | set(subset.outputs)
        nodes = subset_nodes(subgraph, subset, model, builds)
        assert nodes == _nodes(subgraph, subset.operators, boundary, model)
    assert not builds.built
