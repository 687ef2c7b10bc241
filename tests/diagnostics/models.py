"""Small models built with arenalens' own builder, each made to trigger (or not) one rule."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arenalens.ir import OFFLINE_PLAN_METADATA, Model, OfflinePlan
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from arenalens.tflite.offline_plan import encode_offline_plan
from arenalens.tflite.reader import load_model

# int8 activations: scale 0.1, zero point 0.
ACTIVATION = quantization(0.1, 0)


def conv(
    graph: SubgraphBuilder,
    source: int,
    channels: int,
    name: str,
    *,
    stride: int = 1,
    bias: bool = True,
    activation: str = "NONE",
) -> int:
    """A 1x1 (or strided) int8 CONV_2D from source → a new tensor with `channels` channels,
    quantized as TFLM's kernel requires (affine weights; bias scale = input x weight scale)."""
    batch, height, width, depth = graph.shape(source)
    weights = graph.add_constant(
        f"{name}/w",
        np.ones((channels, 1, 1, depth), dtype=np.int8),
        quantization=quantization(0.1, 0),
    )
    inputs = [source, weights]
    if bias:
        inputs.append(
            graph.add_constant(
                f"{name}/b",
                np.zeros((channels,), dtype=np.int32),
                quantization=quantization(0.01, 0),
            )
        )
    out_height, out_width = -(-height // stride), -(-width // stride)
    output = graph.add_tensor(
        name, (batch, out_height, out_width, channels), "INT8", quantization=ACTIVATION
    )
    options = {"stride_h": stride, "stride_w": stride, "fused_activation_function": activation}
    graph.add_operator("CONV_2D", inputs, [output], options=options)
    return output


def chain(
    size: int = 8, channels: Sequence[int] = (8, 16, 8)
) -> tuple[ModelBuilder, SubgraphBuilder]:
    """input [1,size,size,3] → 1x1 convs with the given channels → output; nothing odd."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    current = graph.add_tensor("input", (1, size, size, 3), "INT8", quantization=ACTIVATION)
    graph.set_inputs([current])
    for index, count in enumerate(channels):
        current = conv(graph, current, count, f"conv{index}")
    graph.set_outputs([current])
    return builder, graph


def load(builder: ModelBuilder) -> Model:
    """Builder → checked Model (non-strict, as the CLI loads)."""
    return load_model(builder.build())


def with_offline_plan(builder: ModelBuilder, offsets: Sequence[int]) -> ModelBuilder:
    """Attach an OfflineMemoryAllocation with these offsets (all subgraphs, in order)."""
    plan = OfflinePlan(version=0, subgraph_count=len(builder.subgraphs), offsets=tuple(offsets))
    builder.add_metadata(OFFLINE_PLAN_METADATA, encode_offline_plan(plan))
    return builder


def tensor_count(builder: ModelBuilder) -> int:
    """Tensors over all subgraphs."""
    return sum(len(graph.tensors) for graph in builder.subgraphs)
