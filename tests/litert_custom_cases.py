"""Generated models with the custom operators LiteRT's XNNPACK delegate takes
(runtimes/litert/xnnpack_custom.py): MediaPipe's Convolution2DTransposeBias,
MaxPoolingWithArgmax2D and MaxUnpooling2D, and odml.scaled_dot_product_attention, alone and
beside builtin operators, drawn from a seed. The builtin resolver registers none of them, so the
wheel runs them only with XNNPACK; a pooling whose indices are not float32 fails with XNNPACK
too. Measured with the wheel (`python -m tests.litert_heap_measure --only xnn6_custom`) after
the rules were written."""

from __future__ import annotations

import random
import struct

import numpy as np
from flatbuffers import flexbuffers

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

_SAME, _VALID = 1, 2  # TfLitePadding


def _pool_options(padding: int, size: int) -> bytes:
    """TfLitePoolParams: padding, stride width and height, filter width and height, activation."""
    return struct.pack("<6i", padding, size, size, size, size, 0)


def _deconvolution(g: SubgraphBuilder, x: int, draw: random.Random, shape: list[int]) -> int:
    weights = np.random.default_rng(draw.randint(0, 1 << 30))
    kernel, stride = draw.choice(((2, 2), (3, 2), (3, 1), (4, 2))), draw.choice((1, 2))
    kernel_size, stride = kernel[0], kernel[1]
    padding = draw.choice((_SAME, _VALID))
    channels = draw.choice((4, 8, 16))
    _, height, width, depth = shape
    if padding == _SAME:
        out_h, out_w = height * stride, width * stride
    else:
        out_h, out_w = (height - 1) * stride + kernel_size, (width - 1) * stride + kernel_size
    filters = g.add_constant(
        f"dw{x}",
        (weights.standard_normal((channels, kernel_size, kernel_size, depth)) * 0.1).astype(
            np.float32
        ),
    )
    bias = g.add_constant(f"db{x}", weights.standard_normal(channels).astype(np.float32))
    y = g.add_tensor(f"deconv{x}", [1, out_h, out_w, channels])
    g.add_operator(
        "CUSTOM:Convolution2DTransposeBias",
        [x, filters, bias],
        [y],
        custom_options=struct.pack("<3i", padding, stride, stride),
    )
    return y


def custom_case(seed: int) -> bytes:
    """One draw: a float CONV_2D or none, then a transposed convolution, an argmax pooling and
    its unpooling (indices float32, or int32 in one draw of six), or an attention."""
    draw = random.Random(seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    size, depth = draw.choice((4, 6, 8)), draw.choice((2, 4, 8))
    x = g.add_tensor("x", [1, size, size, depth])
    data, shape = x, [1, size, size, depth]
    if draw.random() < 0.5:
        weights = np.random.default_rng(seed)
        filters = g.add_constant(
            "cw", (weights.standard_normal((depth, 3, 3, depth)) * 0.1).astype(np.float32)
        )
        bias = g.add_constant("cb", weights.standard_normal(depth).astype(np.float32))
        data = g.add_tensor("conv", shape)
        options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
        g.add_operator("CONV_2D", [x, filters, bias], [data], options=options)
    kind = draw.choice(("deconvolution", "pooling", "attention"))
    if kind == "deconvolution":
        out = _deconvolution(g, data, draw, shape)
    elif kind == "pooling":
        index_type = "INT32" if draw.random() < 1 / 6 else "FLOAT32"
        pooled = [1, size // 2, size // 2, depth]
        values = g.add_tensor("values", pooled)
        indices = g.add_tensor("indices", pooled, index_type)
        pool = _pool_options(draw.choice((_SAME, _VALID)), 2)
        g.add_operator("CUSTOM:MaxPoolingWithArgmax2D", [data], [values, indices],
                       custom_options=pool)  # fmt: skip
        out = g.add_tensor("unpooled", shape)
        g.add_operator("CUSTOM:MaxUnpooling2D", [values, indices], [out], custom_options=pool)
    else:
        heads, head_dim = draw.choice((1, 2)), draw.choice((4, 8))
        steps = size
        tensors = [g.add_tensor(name, [1, steps, heads, head_dim]) for name in "qkv"]
        inputs = list(tensors)
        if draw.random() < 0.5:
            inputs.append(g.add_tensor("mask", [1, 1, steps, steps]))
        builder = flexbuffers.Builder()
        with builder.Map():
            builder.Key("is_causal")
            builder.Bool(False)
        out = g.add_tensor("attention", [1, steps, heads, head_dim])
        g.add_operator(
            "CUSTOM:odml.scaled_dot_product_attention",
            inputs,
            [out],
            custom_options=bytes(builder.Finish()),
        )
        g.set_inputs(inputs if data == x else [x, *inputs])
        g.set_outputs([out] if data == x else [data, out])
        return model.build()
    g.set_inputs([x])
    g.set_outputs([out])
    return model.build()


def deconvolution_case(seed: int) -> bytes:
    """Session 7's held-out custom transposed convolutions (`xnn7_deconvolution_*`), drawn after
    heap.py replayed a taken Convolution2DTransposeBias as the TRANSPOSE_CONV XNNPACK defines
    and xnnpack_custom.takes checked its paddings: input 2-10 rows and columns (not square),
    1-8 input and 1-24 output channels, kernel 1-5 (not square), stride 1-3 each way, SAME or
    VALID (SAME at strides over the kernel among them: the delegate refuses those), batch 1-2;
    a float CONV_2D before it or none, a RELU or an ADD of the input's upsampling after it or
    none, and one draw in four two of them in a row."""
    draw = random.Random(7700 + seed)
    weights = np.random.default_rng(7700 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    batch, height, width = draw.choice((1, 1, 2)), draw.randint(2, 10), draw.randint(2, 10)
    depth = draw.randint(1, 8)
    x = g.add_tensor("x", [batch, height, width, depth])
    data = x
    if draw.random() < 0.3:
        filters = g.add_constant(
            "cw", (weights.standard_normal((depth, 3, 3, depth)) * 0.1).astype(np.float32)
        )
        bias = g.add_constant("cb", weights.standard_normal(depth).astype(np.float32))
        data = g.add_tensor("conv", [batch, height, width, depth])
        options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
        g.add_operator("CONV_2D", [x, filters, bias], [data], options=options)
    shape = [batch, height, width, depth]
    for step in range(2 if draw.random() < 0.25 else 1):
        kernel = (draw.randint(1, 5), draw.randint(1, 5))
        stride = (draw.randint(1, 3), draw.randint(1, 3))
        padding = draw.choice((_SAME, _VALID))
        channels = draw.randint(1, 24)
        if padding == _SAME:
            out_h, out_w = shape[1] * stride[0], shape[2] * stride[1]
        else:
            out_h = (shape[1] - 1) * stride[0] + kernel[0]
            out_w = (shape[2] - 1) * stride[1] + kernel[1]
        filters = g.add_constant(
            f"dw{step}",
            (weights.standard_normal((channels, *kernel, shape[3])) * 0.1).astype(np.float32),
        )
        bias = g.add_constant(f"db{step}", weights.standard_normal(channels).astype(np.float32))
        shape = [batch, out_h, out_w, channels]
        out = g.add_tensor(f"deconv{step}", shape)
        g.add_operator(
            "CUSTOM:Convolution2DTransposeBias",
            [data, filters, bias],
            [out],
            custom_options=struct.pack("<3i", padding, stride[1], stride[0]),
        )
        data = out
    after = draw.choice(("none", "relu", "add"))
    if after == "relu":
        out = g.add_tensor("relu", shape)
        g.add_operator("RELU", [data], [out])
        data = out
    elif after == "add":
        other = g.add_tensor("other", shape)
        out = g.add_tensor("sum", shape)
        g.add_operator("ADD", [data, other], [out])
        g.set_inputs([x, other])
        g.set_outputs([out])
        return model.build()
    g.set_inputs([x])
    g.set_outputs([data])
    return model.build()


def pooling_case(seed: int) -> bytes:
    """Session 7's held-out MediaPipe poolings (`xnn7_pooling_*`), drawn after their XNNPACK
    heap was replayed (xnnpack_objects: pooling blocks, indirection buffers): input 2-12 rows
    and columns, 1-16 channels, batch 1-2, a 2×2 or 3×3 window (filter = stride), SAME or
    VALID for the argmax pooling, the unpooling VALID (the wheel refuses SAME) or left out,
    float32 indices (int32 in one draw of eight: XNNPACK has no value for them), a CONV_2D or
    a RELU before it or none, and one draw in four a second argmax pooling after."""
    draw = random.Random(7900 + seed)
    weights = np.random.default_rng(7900 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    batch, depth = draw.choice((1, 1, 2)), draw.randint(1, 16)
    height, width = draw.randint(2, 12), draw.randint(2, 12)
    shape = [batch, height, width, depth]
    x = g.add_tensor("x", shape)
    data = x
    before = draw.choice(("none", "conv", "relu"))
    if before == "conv":
        filters = g.add_constant(
            "cw", (weights.standard_normal((depth, 3, 3, depth)) * 0.1).astype(np.float32)
        )
        bias = g.add_constant("cb", weights.standard_normal(depth).astype(np.float32))
        data = g.add_tensor("conv", shape)
        options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
        g.add_operator("CONV_2D", [x, filters, bias], [data], options=options)
    elif before == "relu":
        data = g.add_tensor("relu", shape)
        g.add_operator("RELU", [x], [data])
    outputs = []
    for stage in range(2 if draw.random() < 0.25 else 1):
        size = draw.choice((2, 3))
        padding = draw.choice((_SAME, _VALID))
        _, rows, columns, _ = shape
        if padding == _SAME:
            pooled = [batch, -(-rows // size), -(-columns // size), depth]
        else:
            pooled = [batch, rows // size, columns // size, depth]
        if min(pooled[1:3]) < 1:
            break
        index_type = "INT32" if draw.random() < 1 / 8 else "FLOAT32"
        values = g.add_tensor(f"values{stage}", pooled)
        indices = g.add_tensor(f"indices{stage}", pooled, index_type)
        g.add_operator(
            "CUSTOM:MaxPoolingWithArgmax2D",
            [data],
            [values, indices],
            custom_options=_pool_options(padding, size),
        )
        unpool = padding == _VALID and draw.random() < 0.7
        if unpool:
            restored = [batch, pooled[1] * size, pooled[2] * size, depth]
            out = g.add_tensor(f"unpooled{stage}", restored)
            g.add_operator(
                "CUSTOM:MaxUnpooling2D",
                [values, indices],
                [out],
                custom_options=_pool_options(_VALID, size),
            )
            data, shape = out, restored
        else:
            outputs.append(indices)
            data, shape = values, pooled
    g.set_inputs([x])
    g.set_outputs([data, *outputs])
    return model.build()


def attention_case(seed: int) -> bytes:
    """Session 8's held-out attentions (`sdpa8_*`), drawn after runtimes/litert/
    xnnpack_attention.py replayed the delegate's nodes for odml.scaled_dot_product_attention:
    batch 1-2 (1 with one key head: the delegate's fully connected path assumes it), 1-4
    query heads and as many key heads or one, head size 2-16, 2-12 query steps and 2-12 keys
    (not equal), a mask or none; the options' `scale` and `logit_cap` a float, an integer (not
    a float: the delegate ignores it) or absent; a float FULLY_CONNECTED making the query
    before it or none, a RELU on its output after it or none."""
    draw = random.Random(8800 + seed)
    weights = np.random.default_rng(8800 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    heads = draw.randint(1, 4)
    key_heads = draw.choice((1, heads))
    batch = 1 if key_heads == 1 else draw.choice((1, 2))
    depth, steps, keys = draw.randint(2, 16), draw.randint(2, 12), draw.randint(2, 12)
    query_shape = [batch, steps, heads, depth]
    key_shape = [batch, keys, key_heads, depth]
    inputs = []
    if draw.random() < 0.3:
        x = g.add_tensor("x", query_shape)
        inputs.append(x)
        filters = g.add_constant(
            "fw", (weights.standard_normal((depth, depth)) * 0.1).astype(np.float32)
        )
        query = g.add_tensor("q", query_shape)
        g.add_operator("FULLY_CONNECTED", [x, filters], [query], options={"keep_num_dims": True})
    else:
        query = g.add_tensor("q", query_shape)
        inputs.append(query)
    key, value = g.add_tensor("k", key_shape), g.add_tensor("v", key_shape)
    inputs += [key, value]
    operands = [query, key, value]
    if draw.random() < 0.5:
        mask = g.add_tensor("mask", [1, 1, steps, keys])
        inputs.append(mask)
        operands.append(mask)
    builder = flexbuffers.Builder()
    with builder.Map():
        for name in ("scale", "logit_cap"):
            kind = draw.choice(("float", "int", "absent"))
            if kind == "float":
                builder.Key(name)
                builder.Float(draw.uniform(0.05, 30.0))
            elif kind == "int":
                builder.Key(name)
                builder.Int(draw.randint(1, 30))
        builder.Key("is_causal")
        builder.Bool(draw.random() < 0.5)
    out = g.add_tensor("attention", query_shape)
    g.add_operator(
        "CUSTOM:odml.scaled_dot_product_attention",
        operands,
        [out],
        custom_options=bytes(builder.Finish()),
    )
    if draw.random() < 0.3:
        after = g.add_tensor("relu", query_shape)
        g.add_operator("RELU", [out], [after])
        out = after
    g.set_inputs(inputs)
    g.set_outputs([out])
    return model.build()


def attention_composite_case(seed: int) -> bytes:
    """Session 8's held-out attention composites (`sdpa8c_*`): a STABLEHLO_COMPOSITE named
    odml.scaled_dot_product_attention (attributes: `scale` a float or absent, `logit_cap`
    a float in one draw of four), drawn after xnnpack_attention.composite_taken; its
    decomposition computes the attention from builtin operators (transposes, two
    BATCH_MATMULs, a SOFTMAX; the mask unused), which the builtin kernel runs and which the
    delegate partitions without ever preparing. Shapes as attention_case; a RELU after or
    none."""
    draw = random.Random(8900 + seed)
    model = ModelBuilder()
    g = model.add_subgraph("main")
    heads = draw.randint(1, 4)
    key_heads = draw.choice((1, heads))
    batch = 1 if key_heads == 1 else draw.choice((1, 2))
    depth, steps, keys = draw.randint(2, 16), draw.randint(2, 12), draw.randint(2, 12)
    query_shape = [batch, steps, heads, depth]
    key_shape = [batch, keys, key_heads, depth]
    query, key, value = (
        g.add_tensor("q", query_shape),
        g.add_tensor("k", key_shape),
        g.add_tensor("v", key_shape),
    )
    operands = [query, key, value]
    masked = draw.random() < 0.5
    if masked:
        operands.append(g.add_tensor("mask", [1, 1, steps, keys]))
    attributes: dict[str, object] = {"is_causal": draw.random() < 0.5}
    if draw.random() < 0.6:
        attributes["scale"] = draw.uniform(0.05, 2.0)
    if draw.random() < 0.25:
        attributes["logit_cap"] = draw.uniform(5.0, 50.0)
    out = g.add_tensor("attention", query_shape)
    options = {
        "name": "odml.scaled_dot_product_attention",
        "decomposition_subgraph_index": 1,
        "version": 1,
        "composite_attributes": list(flexbuffers.Dumps(attributes)),
        "composite_attributes_format": 1,
    }
    g.add_operator(
        "STABLEHLO_COMPOSITE", operands, [out], options=options,
        options_type="StableHLOCompositeOptions",
    )  # fmt: skip
    if draw.random() < 0.3:
        after = g.add_tensor("relu", query_shape)
        g.add_operator("RELU", [out], [after])
        out = after
    g.set_inputs(operands)
    g.set_outputs([out])
    d = model.add_subgraph("decomposition")
    q, k, v = (
        d.add_tensor(n, s) for n, s in (("q", query_shape), ("k", key_shape), ("v", key_shape))
    )
    parameters = [q, k, v]
    if masked:
        parameters.append(d.add_tensor("mask", [1, 1, steps, keys]))
    perm = d.add_constant("perm", np.array([0, 2, 1, 3], dtype=np.int32))
    tq = d.add_tensor("tq", [batch, heads, steps, depth])
    tk = d.add_tensor("tk", [batch, key_heads, keys, depth])
    tv = d.add_tensor("tv", [batch, key_heads, keys, depth])
    d.add_operator("TRANSPOSE", [q, perm], [tq])
    d.add_operator("TRANSPOSE", [k, perm], [tk])
    logits = d.add_tensor("logits", [batch, heads, steps, keys])
    d.add_operator("BATCH_MATMUL", [tq, tk], [logits], options={"adj_y": True})
    probabilities = d.add_tensor("probabilities", [batch, heads, steps, keys])
    d.add_operator("SOFTMAX", [logits], [probabilities], options={"beta": 1.0})
    d.add_operator("TRANSPOSE", [v, perm], [tv])
    product = d.add_tensor("product", [batch, heads, steps, depth])
    d.add_operator("BATCH_MATMUL", [probabilities, tv], [product])
    result = d.add_tensor("result", query_shape)
    d.add_operator("TRANSPOSE", [product, perm], [result])
    d.set_inputs(parameters)
    d.set_outputs([result])
    return model.build()


def grouped_attention_case(seed: int) -> bytes:
    """Session 8's held-out grouped attentions (`sdpa8g_*`), drawn after xnnpack_attention
    replayed grouped heads: 4, 6 or 8 query heads over 2-4 key heads dividing them (fewer than
    the query's), batch 1-2, head size 2-16, 2-12 query steps and keys, a mask or none, a
    float `scale` or none, a float `logit_cap` in one draw of four; the custom operator, or
    one draw in three the composite (its decomposition the transposes, two BATCH_MATMULs and
    a SOFTMAX over the grouped heads, as attention_composite_case's)."""
    draw = random.Random(9100 + seed)
    heads = draw.choice((4, 6, 8))
    key_heads = draw.choice([count for count in (2, 3, 4) if heads % count == 0 and count < heads])
    batch = draw.choice((1, 2))
    depth, steps, keys = draw.randint(2, 16), draw.randint(2, 12), draw.randint(2, 12)
    query_shape = [batch, steps, heads, depth]
    key_shape = [batch, keys, key_heads, depth]
    model = ModelBuilder()
    g = model.add_subgraph("main")
    operands = [
        g.add_tensor(n, s) for n, s in (("q", query_shape), ("k", key_shape), ("v", key_shape))
    ]
    if draw.random() < 0.5:
        operands.append(g.add_tensor("mask", [1, 1, steps, keys]))
    attributes: dict[str, object] = {"is_causal": False}
    if draw.random() < 0.6:
        attributes["scale"] = draw.uniform(0.05, 2.0)
    if draw.random() < 0.25:
        attributes["logit_cap"] = draw.uniform(5.0, 50.0)
    out = g.add_tensor("attention", query_shape)
    composite = draw.random() < 1 / 3
    if composite:
        options = {
            "name": "odml.scaled_dot_product_attention",
            "decomposition_subgraph_index": 1,
            "version": 1,
            "composite_attributes": list(flexbuffers.Dumps(attributes)),
            "composite_attributes_format": 1,
        }
        g.add_operator(
            "STABLEHLO_COMPOSITE", operands, [out], options=options,
            options_type="StableHLOCompositeOptions",
        )  # fmt: skip
    else:
        g.add_operator(
            "CUSTOM:odml.scaled_dot_product_attention", operands, [out],
            custom_options=bytes(flexbuffers.Dumps(attributes)),
        )  # fmt: skip
    g.set_inputs(operands)
    g.set_outputs([out])
    if composite:
        # The decomposition: each key head repeated for its group (a BATCH_MATMUL broadcasts
        # batch dimensions only), here by reading the grouped query as [B, Nk, N/Nk * T, H].
        d = model.add_subgraph("decomposition")
        q, k, v = (
            d.add_tensor(n, s) for n, s in (("q", query_shape), ("k", key_shape), ("v", key_shape))
        )
        parameters = [q, k, v, *(d.add_tensor("mask", [1, 1, steps, keys]) for _ in operands[3:])]
        perm = d.add_constant("perm", np.array([0, 2, 1, 3], dtype=np.int32))
        tq = d.add_tensor("tq", [batch, heads, steps, depth])
        d.add_operator("TRANSPOSE", [q, perm], [tq])
        grouped_shape = [batch, key_heads, heads // key_heads * steps, depth]
        shape = d.add_constant("grouped", np.array(grouped_shape, dtype=np.int32))
        gq = d.add_tensor("gq", grouped_shape)
        d.add_operator("RESHAPE", [tq, shape], [gq])
        tk, tv = (d.add_tensor(n, [batch, key_heads, keys, depth]) for n in ("tk", "tv"))
        d.add_operator("TRANSPOSE", [k, perm], [tk])
        d.add_operator("TRANSPOSE", [v, perm], [tv])
        logits = d.add_tensor("logits", [*grouped_shape[:3], keys])
        d.add_operator("BATCH_MATMUL", [gq, tk], [logits], options={"adj_y": True})
        probabilities = d.add_tensor("probabilities", [*grouped_shape[:3], keys])
        d.add_operator("SOFTMAX", [logits], [probabilities], options={"beta": 1.0})
        product = d.add_tensor("product", grouped_shape)
        d.add_operator("BATCH_MATMUL", [probabilities, tv], [product])
        heads_shape = d.add_constant(
            "heads", np.array([batch, heads, steps, depth], dtype=np.int32)
        )
        ungrouped = d.add_tensor("ungrouped", [batch, heads, steps, depth])
        d.add_operator("RESHAPE", [product, heads_shape], [ungrouped])
        result = d.add_tensor("result", query_shape)
        d.add_operator("TRANSPOSE", [ungrouped, perm], [result])
        d.set_inputs(parameters)
        d.set_outputs([result])
    return model.build()
