"""Held-out models for XNNPACK's rewrite of a reduction of a square
(runtimes/litert/xnnpack_workspace.py: _sum_squares, from XNNPACK's
optimize_common_subgraphs_reduce_sum_to_square), drawn after that rule was committed; measured
by `python -m tests.litert_heap_measure --only xnn9_square_` into tests/data/litert_heap.json.

Each seed draws one float graph: an input of rank 2-4, a square of it (SQUARE, or a MUL of the
input by itself, sometimes with a fused RELU, which puts a clamp between the square and its
reader), a reduction of the square (SUM or MEAN, which XNNPACK rewrites; sometimes REDUCE_MAX,
which it does not) over one or two axes, with or without kept dimensions, sometimes a second
reader of the square (it then stays) or the square as a graph output, and sometimes the RMS
normalisation's tail (a scale, an epsilon, RSQRT and a product with the input).
"""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, blockwise_quantization
from tests.litert_cases import _single


def square_reduce_case(seed: int) -> bytes:
    """One drawn model (see the module docstring); the same bytes for the same seed."""
    rng = random.Random(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        rank = rng.choice([2, 3, 4])
        shape = [rng.choice([1, 2, 4])] + [rng.choice([16, 32, 64, 128]) for _ in range(rank - 1)]
        x = g.add_tensor("x", shape)
        square = g.add_tensor("square", shape)
        kind = rng.choice(["SQUARE", "MUL", "MUL", "MUL_RELU"])
        if kind == "SQUARE":
            g.add_operator("SQUARE", [x], [square])
        else:
            activation = 1 if kind == "MUL_RELU" else 0
            g.add_operator(
                "MUL", [x, x], [square], options={"fused_activation_function": activation}
            )
        axes = sorted(rng.sample(range(1, rank), rng.choice([1, 2]) if rank > 2 else 1))
        keep = rng.random() < 0.5
        reduced_shape = [1 if axis in axes else dim for axis, dim in enumerate(shape)]
        if not keep:
            reduced_shape = [dim for axis, dim in enumerate(shape) if axis not in axes]
        axes_tensor = g.add_constant("axes", np.array(axes, dtype=np.int32))
        reduced = g.add_tensor("reduced", reduced_shape)
        reduction = rng.choice(["SUM", "MEAN", "MEAN", "SUM", "REDUCE_MAX"])
        g.add_operator(reduction, [square, axes_tensor], [reduced], options={"keep_dims": keep})
        outputs = [reduced]
        if keep and rng.random() < 0.6:
            scale = g.add_constant("scale", np.array(1.0 / 64, dtype=np.float32))
            epsilon = g.add_constant("epsilon", np.array(1e-6, dtype=np.float32))
            scaled, shifted, root = (g.add_tensor(n, reduced_shape) for n in ("s", "e", "r"))
            g.add_operator("MUL", [reduced, scale], [scaled])
            g.add_operator("ADD", [scaled, epsilon], [shifted])
            g.add_operator("RSQRT", [shifted], [root])
            normalised = g.add_tensor("normalised", shape)
            g.add_operator("MUL", [x, root], [normalised])
            outputs = [normalised]
        draw = rng.random()
        if draw < 0.2:
            other = g.add_tensor("other", shape)
            g.add_operator("TANH", [square], [other])
            outputs.append(other)
        elif draw < 0.3:
            outputs.append(square)
        return [x], outputs

    return _single(build)


def blockwise_fully_connected_case(seed: int) -> bytes:
    """One drawn float graph with FULLY_CONNECTEDs whose weights are int4 in blockwise
    quantization (runtimes/litert/xnnpack_blockwise.py), drawn after that rule was committed and
    measured by `python -m tests.litert_heap_measure --only xnn9_blockwise_`: an input of 1-4
    rows (rank 2 or 3, keep_num_dims drawn), one or two such operators in a chain (sometimes a
    float bias, sometimes a fused RELU or a TANH between), output channels of 64-256 (some
    not multiples of 64), depths of 64-512, blocks of 32, 64 or 128 dividing the depth, fp16
    scales, no zero points."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        rows = rng.choice([1, 1, 2, 4])
        depth = rng.choice([64, 128, 256, 512])
        rank3 = rng.random() < 0.5
        shape = [1, rows, depth] if rank3 else [rows, depth]
        x = g.add_tensor("x", shape)
        current, current_shape = x, shape
        for layer in range(rng.choice([1, 1, 2])):
            channels = rng.choice([64, 128, 256, 192, 96])
            block = rng.choice([32, 32, 64, 128])
            block = block if depth % block == 0 else 32
            nibbles = weights_rng.integers(-8, 8, (channels, depth)).astype(np.int8)
            packed = ((nibbles[:, 1::2] & 0x0F) << 4 | (nibbles[:, 0::2] & 0x0F)).astype(np.uint8)
            scale_values = weights_rng.uniform(0.01, 0.05, (channels, depth // block))
            scales = g.add_constant(f"scales{layer}", scale_values.astype(np.float16))
            weights = g.add_tensor(
                f"w{layer}",
                [channels, depth],
                "INT4",
                data=packed.tobytes(),
                quantization=blockwise_quantization(scales, -1, block),
            )
            inputs = [current, weights]
            if rng.random() < 0.4:
                bias = weights_rng.uniform(-1, 1, channels).astype(np.float32)
                inputs.append(g.add_constant(f"b{layer}", bias))
            keep = rank3 and rng.random() < 0.7
            out_shape = [*current_shape[:-1], channels] if keep else [rows, channels]
            output = g.add_tensor(f"y{layer}", out_shape)
            activation = 1 if rng.random() < 0.3 else 0
            options = {
                "keep_num_dims": keep,
                "asymmetric_quantize_inputs": True,
                "fused_activation_function": activation,
            }
            g.add_operator("FULLY_CONNECTED", inputs, [output], options=options, version=6)
            current, current_shape, depth = output, out_shape, channels
            if rng.random() < 0.3:
                squashed = g.add_tensor(f"t{layer}", out_shape)
                g.add_operator("TANH", [current], [squashed])
                current = squashed
        return [x], [current]

    return _single(build)


def signature_case(seed: int) -> bytes:
    """One drawn model of 2-4 signatures, each its own float subgraph that nothing calls
    (runtimes/litert/xnnpack_subgraphs.py: the delegate builds their kernels, allocate_tensors()
    prepares subgraph 0 only), drawn after that rule was committed and measured by
    `python -m tests.litert_heap_measure --only xnn9_signatures_`: each subgraph a chain of 1-4
    of FULLY_CONNECTED, CONV_2D (3×3, SAME), ADD of a constant, MUL by itself, TANH, SOFTMAX
    and MEAN over the channels, on an input of 1-2 images or rows."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)
    model = ModelBuilder()
    for index in range(rng.choice([2, 3, 3, 4])):
        g = model.add_subgraph(f"signature{index}")
        spatial = rng.random() < 0.5
        channels = rng.choice([4, 8, 16])
        shape = [1, rng.choice([8, 16]), rng.choice([8, 16]), channels] if spatial else [2, 32]
        x = current = g.add_tensor("x", shape)
        for step in range(rng.randint(1, 4)):
            opcode = rng.choice(["FULLY_CONNECTED", "CONV_2D", "ADD", "MUL", "TANH", "SOFTMAX"])
            if opcode == "CONV_2D" and not spatial:
                opcode = "FULLY_CONNECTED"
            width = shape[-1]
            if opcode == "FULLY_CONNECTED":
                columns = rng.choice([8, 16, 64])
                weights = weights_rng.uniform(-1, 1, (columns, width)).astype(np.float32)
                w = g.add_constant(f"w{step}", weights)
                rows = int(np.prod(shape[:-1]))  # keep_num_dims off: a 2-D output
                shape, spatial = [rows, columns], False
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("FULLY_CONNECTED", [current, w, -1], [out])
            elif opcode == "CONV_2D":
                filters = rng.choice([4, 8, 16])
                kernel = weights_rng.uniform(-1, 1, (filters, 3, 3, width)).astype(np.float32)
                w = g.add_constant(f"w{step}", kernel)
                shape = [*shape[:-1], filters]
                out = g.add_tensor(f"t{step}", shape)
                options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
                g.add_operator("CONV_2D", [current, w, -1], [out], options=options)
            elif opcode == "ADD":
                constant = g.add_constant(
                    f"c{step}", np.array(rng.uniform(0.5, 2.0), dtype=np.float32)
                )
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("ADD", [current, constant], [out])
            elif opcode == "MUL":
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("MUL", [current, current], [out])
            else:
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator(
                    opcode, [current], [out], options={"beta": 1.0} if opcode == "SOFTMAX" else {}
                )
            current = out
        g.set_inputs([x])
        g.set_outputs([current])
        model.add_signature(f"run{index}", g)
    return model.build()


def biased_signature_case(seed: int) -> bytes:
    """One drawn model of 2-4 signatures, each its own subgraph, drawn after the partition
    left a convolution without a bias to the builtin kernel (heap_xnnpack._BIASED: XNNPACK's
    VisitConv2DNode / VisitDepthwiseConv2DNode take one only with a bias tensor) and measured
    by `python -m tests.litert_heap_measure --only xnn10_signatures_`. Each subgraph a chain
    of 1-4 of float CONV_2D (3×3 or 1×1, SAME) and DEPTHWISE_CONV_2D (3×3), each with a bias
    or, outside subgraph 0 (whose builtin Prepare would fail), sometimes none,
    FULLY_CONNECTED, ADD of a constant and TANH on an image of 4-16 channels."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)
    model = ModelBuilder()
    for index in range(rng.choice([2, 3, 3, 4])):
        g = model.add_subgraph(f"signature{index}")
        channels = rng.choice([4, 8, 16])
        shape = [1, rng.choice([8, 16]), rng.choice([8, 16]), channels]
        x = current = g.add_tensor("x", shape)
        spatial = True
        for step in range(rng.randint(1, 4)):
            opcode = rng.choice(
                ["CONV_2D", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "TANH"]
            )
            if not spatial and opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                opcode = "FULLY_CONNECTED"
            width = shape[-1]
            biased = index == 0 or rng.random() < 0.5
            if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                depthwise = opcode == "DEPTHWISE_CONV_2D"
                filters = width if depthwise else rng.choice([4, 8, 16])
                size = 3 if depthwise or rng.random() < 0.7 else 1
                layout = (1, size, size, filters) if depthwise else (filters, size, size, width)
                kernel = weights_rng.uniform(-1, 1, layout).astype(np.float32)
                w = g.add_constant(f"w{step}", kernel)
                bias = -1
                if biased:
                    values = weights_rng.uniform(-1, 1, (filters,)).astype(np.float32)
                    bias = g.add_constant(f"b{step}", values)
                shape = [*shape[:-1], filters]
                out = g.add_tensor(f"t{step}", shape)
                options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
                if depthwise:
                    options["depth_multiplier"] = 1
                g.add_operator(opcode, [current, w, bias], [out], options=options)
            elif opcode == "FULLY_CONNECTED":
                columns = rng.choice([8, 16, 64])
                weights = weights_rng.uniform(-1, 1, (columns, width)).astype(np.float32)
                w = g.add_constant(f"w{step}", weights)
                shape, spatial = [int(np.prod(shape[:-1])), columns], False
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("FULLY_CONNECTED", [current, w, -1], [out])
            elif opcode == "ADD":
                constant = g.add_constant(
                    f"c{step}", np.array(rng.uniform(0.5, 2.0), dtype=np.float32)
                )
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("ADD", [current, constant], [out])
            else:
                out = g.add_tensor(f"t{step}", shape)
                g.add_operator("TANH", [current], [out])
            current = out
        g.set_inputs([x])
        g.set_outputs([current])
        model.add_signature(f"run{index}", g)
    return model.build()
