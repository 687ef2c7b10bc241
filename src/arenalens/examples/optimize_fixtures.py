"""Small models that exercise `optimize`: state variables read too early, a peak on an ADD.

Not in the `EXAMPLES` registry (they exist to test and measure reordering and in-place
aliasing, not to show the tool); tests and benchmarks build them by calling these functions.

* `streaming_state_model`: a streaming keyword-spotting shape. Each layer keeps the last frames
  of its input in a resource variable: READ_VARIABLE the state, CONCATENATE it with the new frame,
  keep the newest frames as the next state (STRIDED_SLICE → ASSIGN_VARIABLE) and run a
  FULLY_CONNECTED on the window. Like converted streaming models, every state is read at the
  start, so all states are live together; reading each state just before its layer runs cuts the
  peak. A CALL_ONCE subgraph zeroes the states on the first invoke.
* `residual_add_model`: int8 conv → conv → ADD(shortcut, conv) → conv, whose busiest step is the
  ADD (both inputs and the output live); writing the ADD output over its second input removes one
  of the three.
"""

from __future__ import annotations

import numpy as np

from arenalens.examples.layers import Int8Network
from arenalens.tflite.builder import ModelBuilder

STREAMING_SEED = 7
RESIDUAL_SEED = 11


def streaming_state_model(
    *, layers: int = 4, frame: int = 32, history: int = 8, width: int = 32
) -> bytes:
    """Layer count and sizes → float32 streaming model bytes with one resource state per layer."""
    rng = np.random.default_rng(STREAMING_SEED)
    builder = ModelBuilder(description="streaming model: states read at the start")
    main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
    x = main.add_tensor("frame", (1, 1, frame))
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    features = [frame] + [width] * (layers - 1)
    handles = []
    for k in range(layers):
        handle = main.add_tensor(f"state_{k}/handle", (1,), "RESOURCE")
        main.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": f"state_{k}"})
        handles.append(handle)
    reads = []
    for k, handle in enumerate(handles):
        value = main.add_tensor(f"state_{k}/read", (1, history, features[k]))
        main.add_operator("READ_VARIABLE", [handle], [value])
        reads.append(value)
    current = x
    for k in range(layers):
        size = features[k]
        window = main.add_tensor(f"layer_{k}/window", (1, history + 1, size))
        main.add_operator("CONCATENATION", [reads[k], current], [window], options={"axis": 1})
        newest = main.add_tensor(f"layer_{k}/next_state", (1, history, size))
        begin = main.add_constant(f"layer_{k}/begin", np.array([0, 1, 0], np.int32))
        end = main.add_constant(f"layer_{k}/end", np.array([1, history + 1, size], np.int32))
        strides = main.add_constant(f"layer_{k}/strides", np.array([1, 1, 1], np.int32))
        main.add_operator("STRIDED_SLICE", [window, begin, end, strides], [newest])
        main.add_operator("ASSIGN_VARIABLE", [handles[k], newest], [])
        flat_shape = (1, (history + 1) * size)
        shape = main.add_constant(f"layer_{k}/flat_shape", np.array(flat_shape, np.int32))
        flat = main.add_tensor(f"layer_{k}/flat", flat_shape)
        main.add_operator("RESHAPE", [window, shape], [flat], options={"new_shape": flat_shape})
        weights = rng.normal(0.0, 0.1, size=(width, flat_shape[1])).astype(np.float32)
        kernel = main.add_constant(f"layer_{k}/weights", weights)
        dense = main.add_tensor(f"layer_{k}/dense", (1, width))
        main.add_operator(
            "FULLY_CONNECTED",
            [flat, kernel, -1],
            [dense],
            options={"fused_activation_function": "RELU"},
        )
        frame_shape = main.add_constant(f"layer_{k}/frame_shape", np.array([1, 1, width], np.int32))
        current = main.add_tensor(f"layer_{k}/output", (1, 1, width))
        main.add_operator(
            "RESHAPE", [dense, frame_shape], [current], options={"new_shape": (1, 1, width)}
        )
    main.set_inputs([x])
    main.set_outputs([current])
    for k in range(layers):
        handle = init.add_tensor(f"state_{k}/handle", (1,), "RESOURCE")
        zeros = init.add_constant(
            f"state_{k}/zeros", np.zeros((1, history, features[k]), np.float32)
        )
        init.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": f"state_{k}"})
        init.add_operator("ASSIGN_VARIABLE", [handle, zeros], [])
    builder.add_signature("serving_default", main)
    return builder.build()


def residual_add_model() -> bytes:
    """Nothing → int8 model whose peak is a residual ADD (input 16×16×8, 16 channels inside)."""
    net = Int8Network(seed=RESIDUAL_SEED, description="residual block with the peak on ADD")
    image = net.input("input", (1, 16, 16, 8), (-1.0, 1.0))
    shortcut = net.conv2d(image, "expand", channels=16, kernel=(1, 1))
    branch = net.conv2d(shortcut, "conv", channels=16, kernel=(3, 3))
    total = net.add(shortcut, branch, "residual_add")
    out = net.conv2d(total, "project", channels=8, kernel=(1, 1))
    return net.build([image], [out])
