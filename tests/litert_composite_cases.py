"""STABLEHLO_COMPOSITE models and hybrid convolutions for the LiteRT heap (session 6's
held-out `composite6_*` and `hybrid6_*` in tests/litert_heap_measure.py). A composite: a main
subgraph whose one operator is a composite, and its decomposition subgraph, a random chain of
float element-wise operators. The builtin kernel (stablehlo_composite.cc) prepares and
allocates the decomposition subgraph in its own Prepare; arenalens counts that kernel with its
upper bounds and says the figure is an estimate."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from arenalens.tflite.builder import ModelBuilder

_STEPS = ("RELU", "TANH", "LOGISTIC", "ADD")


def composite(seed: int) -> bytes:
    """A composite over a chain of 1-4 element-wise operators of random shape (the same bytes
    for the same seed). LiteRT's parser requires the composite's attributes: an empty-ish
    flexbuffer map."""
    rng = np.random.default_rng(6600 + seed)
    shape = [1, int(rng.integers(2, 24)), int(rng.integers(2, 24)), int(rng.integers(1, 17))]
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", shape)
    y = main.add_tensor("y", shape)
    options = {
        "name": "odml.arenalens_test",
        "decomposition_subgraph_index": 1,
        "version": 1,
        "composite_attributes": list(flexbuffers.Dumps({"seed": seed})),
        "composite_attributes_format": 1,
    }
    main.add_operator(
        "STABLEHLO_COMPOSITE", [x], [y], options=options, options_type="StableHLOCompositeOptions"
    )
    main.set_inputs([x])
    main.set_outputs([y])
    decomposition = builder.add_subgraph("decomposition")
    current = decomposition.add_tensor("a", shape)
    first = current
    for index in range(int(rng.integers(1, 5))):
        step = _STEPS[int(rng.integers(len(_STEPS)))]
        out = decomposition.add_tensor(f"t{index}", shape)
        inputs = [current, current] if step == "ADD" else [current]
        decomposition.add_operator(step, inputs, [out])
        current = out
    decomposition.set_inputs([first])
    decomposition.set_outputs([current])
    return builder.build()


def hybrid_conv(seed: int) -> bytes:
    """A hybrid CONV_2D (float input, int8 filter) drawn at random for kernel_gemm.hybrid_gemm
    (session 6's held-out `hybrid6_*`): output channels 1-12 (a multiple of 4 or not), one
    scale, several equal scales or distinct ones, grouped (2 groups) or not, kernel 1-3,
    stride 1-2."""
    from arenalens.tflite.builder import quantization

    rng = np.random.default_rng(6700 + seed)
    rows = int(rng.integers(1, 13))
    groups = 2 if rng.integers(3) == 0 else 1
    depth = int(rng.integers(1, 7))
    kernel, stride = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    size = int(rng.integers(kernel + 2, 14))
    rows = rows + rows % groups  # divisible by the groups
    kind = int(rng.integers(3))  # 0: one scale, 1: several equal, 2: distinct
    scales = [0.02] if kind == 0 else [0.02] * rows
    if kind == 2:
        scales = list(np.linspace(0.01, 0.05, rows))
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, size, size, depth * groups])
    weights = graph.add_constant(
        "w",
        rng.integers(-127, 128, (rows, kernel, kernel, depth)).astype(np.int8),
        "INT8",
        quantization=quantization(scales, 0, axis=0),
    )
    bias = graph.add_constant("b", rng.standard_normal(rows).astype(np.float32))
    out = -(-size // stride)
    y = graph.add_tensor("y", [1, out, out, rows])
    graph.add_operator(
        "CONV_2D",
        [x, weights, bias],
        [y],
        options={"stride_w": stride, "stride_h": stride, "padding": "SAME"},
    )
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


def grouped_hybrid_conv(seed: int) -> bytes:
    """A grouped hybrid CONV_2D (float input, int8 filter, one scale per output channel, equal
    or distinct) drawn at random after prepare/conv.py gave every grouped hybrid filter the
    per-channel temporaries (session 6's `hybrid6c_*`): 2-4 groups, 1-6 input and 1-4 output
    channels per group, batch 1-2, kernel 1-3, stride 1-2, dilation 2 at stride 1, SAME or
    VALID padding."""
    from arenalens.tflite.builder import quantization

    rng = np.random.default_rng(6800 + seed)
    groups, depth = int(rng.integers(2, 5)), int(rng.integers(1, 7))
    rows = groups * int(rng.integers(1, 5))
    batches = int(rng.integers(1, 3))
    kernel, stride = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    dilation = 2 if stride == 1 and kernel > 1 and rng.integers(3) == 0 else 1
    reach = (kernel - 1) * dilation + 1
    size = int(rng.integers(reach + 1, 14))
    padding = "SAME" if rng.integers(2) == 0 else "VALID"
    distinct = bool(rng.integers(2))
    scales = list(np.linspace(0.01, 0.05, rows)) if distinct else [0.02] * rows
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [batches, size, size, depth * groups])
    weights = graph.add_constant(
        "w",
        rng.integers(-127, 128, (rows, kernel, kernel, depth)).astype(np.int8),
        "INT8",
        quantization=quantization(scales, 0, axis=0),
    )
    bias = graph.add_constant("b", rng.standard_normal(rows).astype(np.float32))
    out = -(-size // stride) if padding == "SAME" else -(-(size - reach + 1) // stride)
    y = graph.add_tensor("y", [batches, out, out, rows])
    options = {"stride_w": stride, "stride_h": stride, "padding": padding}
    if dilation > 1:
        options |= {"dilation_wfactor": dilation, "dilation_hfactor": dilation}
    graph.add_operator("CONV_2D", [x, weights, bias], [y], options=options)
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


# What a composite's options table leaves out (session 7, `composite_options`): the parser's
# checks (flatbuffer_conversions.cc ParseStablehloComposite) refuse the absent ones and accept
# the empty ones.
COMPOSITE_OPTION_CASES = (
    "complete",
    "no_attributes",
    "empty_attributes",
    "no_name",
    "empty_name",
    "no_options",
)


def composite_options(case: str) -> bytes:
    """A composite (one RELU decomposed) whose options table is complete, lacks or empties its
    `composite_attributes` or its `name`, or is absent (`COMPOSITE_OPTION_CASES`)."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", [1, 4, 4, 2])
    y = main.add_tensor("y", [1, 4, 4, 2])
    options: dict[str, object] = {
        "name": "odml.arenalens_test",
        "decomposition_subgraph_index": 1,
        "version": 1,
        "composite_attributes": list(flexbuffers.Dumps({"case": case})),
        "composite_attributes_format": 1,
    }
    if case == "no_attributes":
        del options["composite_attributes"]
    elif case == "empty_attributes":
        options["composite_attributes"] = []
    elif case == "no_name":
        del options["name"]
    elif case == "empty_name":
        options["name"] = ""
    if case == "no_options":
        main.add_operator("STABLEHLO_COMPOSITE", [x], [y])
    else:
        main.add_operator(
            "STABLEHLO_COMPOSITE",
            [x],
            [y],
            options=options,
            options_type="StableHLOCompositeOptions",
        )
    main.set_inputs([x])
    main.set_outputs([y])
    decomposition = builder.add_subgraph("decomposition")
    a = decomposition.add_tensor("a", [1, 4, 4, 2])
    b = decomposition.add_tensor("b", [1, 4, 4, 2])
    decomposition.add_operator("RELU", [a], [b])
    decomposition.set_inputs([a])
    decomposition.set_outputs([b])
    return builder.build()


_STEPS7 = ("RELU", "TANH", "LOGISTIC", "ADD", "MUL", "FULLY_CONNECTED", "SUB")


def composite7(seed: int) -> bytes:
    """Session 7's held-out composites (`composite7_*`), drawn after heap_invoke replayed a
    composite's first Eval: rank 2 to 4 data, one or two inputs, a decomposition of 1-5 float
    steps (element-wise, or a FULLY_CONNECTED with constant weights over the last dimension),
    a builtin operator before or after the composite or none, and one draw in three a second
    composite calling the same decomposition (its arena committed again)."""
    rng = np.random.default_rng(7800 + seed)
    rank = int(rng.integers(2, 5))
    shape = [1, *(int(rng.integers(2, 12)) for _ in range(rank - 1))]
    two = bool(rng.integers(2))
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", shape)
    inputs = [x, main.add_tensor("x2", shape)] if two else [x]
    first = inputs[0]
    if rng.integers(3) == 0:
        first = main.add_tensor("before", shape)
        main.add_operator("RELU6", [inputs[0]], [first])
    options = {
        "name": "odml.arenalens_test7",
        "decomposition_subgraph_index": 1,
        "version": 1,
        "composite_attributes": list(flexbuffers.Dumps({"seed": seed})),
        "composite_attributes_format": 1,
    }
    y = main.add_tensor("y", shape)
    composite_inputs = [first, *inputs[1:]]
    main.add_operator(
        "STABLEHLO_COMPOSITE",
        composite_inputs,
        [y],
        options=options,
        options_type="StableHLOCompositeOptions",
    )
    out = y
    if rng.integers(3) == 0:
        again = main.add_tensor("again", shape)
        main.add_operator(
            "STABLEHLO_COMPOSITE",
            [y, *inputs[1:]],
            [again],
            options=options,
            options_type="StableHLOCompositeOptions",
        )
        out = again
    if rng.integers(3) == 0:
        after = main.add_tensor("after", shape)
        main.add_operator("TANH", [out], [after])
        out = after
    main.set_inputs(inputs)
    main.set_outputs([out])
    decomposition = builder.add_subgraph("decomposition")
    a = decomposition.add_tensor("a", shape)
    parameters = [a, decomposition.add_tensor("b", shape)] if two else [a]
    current = a
    for index in range(int(rng.integers(1, 6))):
        step = _STEPS7[int(rng.integers(len(_STEPS7)))]
        result = decomposition.add_tensor(f"t{index}", shape)
        if step == "FULLY_CONNECTED":
            depth = shape[-1]
            weights = decomposition.add_constant(
                f"w{index}", rng.standard_normal((depth, depth)).astype(np.float32)
            )
            options7 = {"keep_num_dims": True}
            decomposition.add_operator(step, [current, weights], [result], options=options7)
        elif step in ("ADD", "MUL", "SUB"):
            other = parameters[-1] if two else current
            decomposition.add_operator(step, [current, other], [result])
        else:
            decomposition.add_operator(step, [current], [result])
        current = result
    decomposition.set_inputs(parameters)
    decomposition.set_outputs([current])
    return builder.build()


_STEPS8 = ("RELU", "TANH", "LOGISTIC", "ADD", "MUL", "FULLY_CONNECTED", "SUB", "CONV_2D")


def _decomposition8(
    builder: ModelBuilder, rng: np.random.Generator, shape: list[int], name: str, nested: int
) -> None:
    """A decomposition subgraph of 1-5 float steps over `shape` (element-wise, a
    FULLY_CONNECTED over the last dimension, a 1×1 CONV_2D on rank 4), and, `nested` >= 0, a
    composite calling subgraph `nested` among them."""
    graph = builder.add_subgraph(name)
    a = graph.add_tensor("a", shape)
    current = a
    steps = int(rng.integers(1, 6))
    nested_at = int(rng.integers(steps)) if nested >= 0 else -1
    for index in range(steps):
        result = graph.add_tensor(f"t{index}", shape)
        if index == nested_at:
            options = {
                "name": "odml.arenalens_inner8",
                "decomposition_subgraph_index": nested,
                "version": 1,
                "composite_attributes": list(flexbuffers.Dumps({"inner": index})),
                "composite_attributes_format": 1,
            }
            graph.add_operator(
                "STABLEHLO_COMPOSITE", [current], [result], options=options,
                options_type="StableHLOCompositeOptions",
            )  # fmt: skip
            current = result
            continue
        step = _STEPS8[int(rng.integers(len(_STEPS8)))]
        depth = shape[-1]
        if step == "CONV_2D" and len(shape) != 4:
            step = "RELU"
        if step == "FULLY_CONNECTED":
            weights = graph.add_constant(
                f"w{index}", rng.standard_normal((depth, depth)).astype(np.float32)
            )
            graph.add_operator(step, [current, weights], [result], options={"keep_num_dims": True})
        elif step == "CONV_2D":
            filters = graph.add_constant(
                f"f{index}", rng.standard_normal((depth, 1, 1, depth)).astype(np.float32)
            )
            bias = graph.add_constant(f"b{index}", rng.standard_normal(depth).astype(np.float32))
            options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
            graph.add_operator(step, [current, filters, bias], [result], options=options)
        elif step in ("ADD", "MUL", "SUB"):
            graph.add_operator(step, [current, a], [result])
        else:
            graph.add_operator(step, [current], [result])
        current = result
    graph.set_inputs([a])
    graph.set_outputs([current])


def composite8(seed: int) -> bytes:
    """Session 8's held-out composites under XNNPACK (`composite8_*`), drawn after
    runtimes/litert/xnnpack_subgraphs.py replayed the delegate on every decomposition subgraph:
    rank 2-4 float data, one to three composites in a row in the main subgraph (one or two
    distinct decompositions, a second call of the same one), a decomposition that itself
    calls a nested composite (one draw in three), 1×1 CONV_2D among the steps, builtin
    operators before and after or none."""
    rng = np.random.default_rng(8600 + seed)
    rank = int(rng.integers(2, 5))
    shape = [1, *(int(rng.integers(2, 10)) for _ in range(rank - 1))]
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", shape)
    current = x
    if rng.integers(3) == 0:
        before = main.add_tensor("before", shape)
        main.add_operator("RELU6", [x], [before])
        current = before
    distinct = int(rng.integers(1, 3))
    nested = bool(rng.integers(3) == 0)
    calls = max(int(rng.integers(1, 4)), distinct)  # every decomposition called
    for call in range(calls):
        target = 1 + call % distinct
        options = {
            "name": f"odml.arenalens_test8_{target}",
            "decomposition_subgraph_index": target,
            "version": 1,
            "composite_attributes": list(flexbuffers.Dumps({"seed": seed, "call": call})),
            "composite_attributes_format": 1,
        }
        result = main.add_tensor(f"y{call}", shape)
        main.add_operator(
            "STABLEHLO_COMPOSITE", [current], [result], options=options,
            options_type="StableHLOCompositeOptions",
        )  # fmt: skip
        current = result
    if rng.integers(3) == 0:
        after = main.add_tensor("after", shape)
        main.add_operator("TANH", [current], [after])
        current = after
    main.set_inputs([x])
    main.set_outputs([current])
    inner = 1 + distinct if nested else -1
    for target in range(1, distinct + 1):
        _decomposition8(builder, rng, shape, f"decomposition{target}", inner if target == 1 else -1)
    if nested:
        _decomposition8(builder, rng, shape, "inner", -1)
    return builder.build()
