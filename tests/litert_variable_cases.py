"""Held-out resource-variable models for the LiteRT heap (builtin and XNNPACK), drawn after
runtimes/litert/heap_resources.py and the variables' XNNPACK partition were committed
(2f8f334); measured by `python -m tests.litert_heap_measure --only var7_` into
tests/data/litert_heap.json.

Each seed draws one float or int8 streaming model: 1-4 VAR_HANDLEs (sometimes a name longer
than std::string's inline 15 characters, sometimes two handles of one name, sometimes one
nothing uses), each used variable assigned before it is read (so the builtin kernels run it
too), then 2-7 steps: read a variable (mostly of its shape; sometimes of rank 0 or another
shape, which the delegate leaves to the builtin kernel) and add or multiply it in, apply an
activation, a fully connected layer (float), or assign the running value to a variable again.
"""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_cases import _single

SCALE = 0.05


def variable_heap_model(seed: int) -> bytes:
    """One drawn model (see the module docstring); the same bytes for the same seed."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        int8 = rng.random() < 0.35
        width = rng.choice([4, 8, 16, 32])
        batch = rng.choice([1, 1, 2])

        def tensor(name: str, shape: list[int], scale: float = SCALE) -> int:
            if int8:
                return g.add_tensor(name, shape, "INT8", quantization=quantization(scale, 0))
            return g.add_tensor(name, shape)

        shape = [batch, width]
        current = tensor("x", shape)
        inputs, extra_outputs = [current], []
        names: list[str] = []
        for number in range(rng.randint(1, 4)):
            if names and rng.random() < 0.2:
                name = names[-1]  # a second handle of one variable
            elif rng.random() < 0.25:
                name = f"streaming_state_variable_{number}"  # over 15 characters
            else:
                name = f"v{number}"
            names.append(name)
        handles = []
        for number, name in enumerate(names):
            handle = g.add_tensor(f"h{number}/handle", [1], "RESOURCE")
            g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
            handles.append(handle)
        used = handles if len(handles) == 1 or rng.random() < 0.6 else handles[:-1]
        for handle in used:
            g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
        for step in range(rng.randint(2, 7)):
            handle = rng.choice(used)
            draw = rng.random()
            if draw < 0.45:
                other = rng.random()
                read_shape = shape if other < 0.8 else ([] if other < 0.9 else [batch * width])
                read = tensor(f"read{step}", read_shape)
                g.add_operator("READ_VARIABLE", [handle], [read])
                if read_shape == shape:
                    combined = tensor(f"sum{step}", shape)
                    opcode = "ADD" if int8 or rng.random() < 0.7 else "MUL"
                    g.add_operator(opcode, [current, read], [combined])
                    current = combined
                else:
                    extra_outputs.append(read)
            elif draw < 0.65:
                if int8:
                    activated = tensor(f"act{step}", shape, 1 / 128)
                    g.add_operator(rng.choice(["TANH", "RELU"]), [current], [activated])
                else:
                    activated = tensor(f"act{step}", shape)
                    g.add_operator(rng.choice(["RELU", "TANH", "LOGISTIC"]), [current], [activated])
                current = activated
            elif draw < 0.8 and not int8:
                weights = g.add_constant(
                    f"w{step}", weights_rng.standard_normal((width, width)).astype(np.float32)
                )
                dense = tensor(f"dense{step}", shape)
                g.add_operator("FULLY_CONNECTED", [current, weights, -1], [dense])
                current = dense
            else:
                g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
        return inputs, [current, *extra_outputs]

    return _single(build)


# Reads before and after the variable is made (runtimes/litert/variable_order.py): the builtin
# kernels fail the first invoke on a READ_VARIABLE no ASSIGN_VARIABLE has made the variable for.


def read_order_model(case: str, dtype: str = "FLOAT32") -> bytes:
    """One [1, 4] variable 'state' of `dtype` (FLOAT32, INT8 or INT32) added to the input:
    'read_first' reads it, then assigns the sum (fails with the builtin kernels);
    'assign_first' assigns the input, then reads it; 'call_once' zeroes it in a CALL_ONCE
    init subgraph, then reads it as 'read_first' does; 'other_name' reads 'state' after
    assigning a second variable 'other' (fails); 'container' reads 'state' in container 'c'
    after assigning 'state' without a container (two variables: fails)."""
    quantized = quantization(SCALE, 0) if dtype == "INT8" else None
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    init = builder.add_subgraph("init") if case == "call_once" else None

    def handle(graph: SubgraphBuilder, name: str, container: str = "") -> int:
        tensor = graph.add_tensor(f"{container}{name}/handle", [1], "RESOURCE")
        options = {"shared_name": name} | ({"container": container} if container else {})
        graph.add_operator("VAR_HANDLE", [], [tensor], options=options)
        return tensor

    x = main.add_tensor("x", [1, 4], dtype, quantization=quantized)
    if init is not None:
        main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
        zeros = init.add_constant("zeros", np.zeros((1, 4), dtype.lower()), quantization=quantized)
        init.add_operator("ASSIGN_VARIABLE", [handle(init, "state"), zeros], [])
    state = handle(main, "state", "c" if case == "container" else "")
    if case == "assign_first":
        main.add_operator("ASSIGN_VARIABLE", [state, x], [])
    elif case == "other_name":
        main.add_operator("ASSIGN_VARIABLE", [handle(main, "other"), x], [])
    elif case == "container":
        main.add_operator("ASSIGN_VARIABLE", [handle(main, "state"), x], [])
    read = main.add_tensor("read", [1, 4], dtype, quantization=quantized)
    main.add_operator("READ_VARIABLE", [state], [read])
    total = main.add_tensor("total", [1, 4], dtype, quantization=quantized)
    main.add_operator("ADD", [x, read], [total])
    if case != "assign_first":
        main.add_operator("ASSIGN_VARIABLE", [state, total], [])
    main.set_inputs([x])
    main.set_outputs([total])
    return builder.build()


def scalar_read_model(order: tuple[str, ...]) -> bytes:
    """A float [1, 4] variable 's' read into a rank-0 tensor (the XNNPACK delegate leaves the
    read to the builtin kernel) and assigned RELU(x), the steps ('read', 'relu', 'assign') in
    `order`: a read before the assignment fails with the builtin kernels; under XNNPACK the
    delegate proxies 's' (the assignment is taken) and the read finds the variable."""
    builder = ModelBuilder()
    g = builder.add_subgraph("main")
    x = g.add_tensor("x", [1, 4])
    handle = g.add_tensor("s/handle", [1], "RESOURCE")
    g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "s"})
    read, y = g.add_tensor("read", []), g.add_tensor("y", [1, 4])
    for step in order:
        if step == "read":
            g.add_operator("READ_VARIABLE", [handle], [read])
        elif step == "relu":
            g.add_operator("RELU", [x], [y])
        else:
            g.add_operator("ASSIGN_VARIABLE", [handle, y], [])
    g.set_inputs([x])
    g.set_outputs([y, read])
    return builder.build()


def replan_model(seed: int) -> bytes:
    """A held-out streaming chain for the first invoke's re-plan (runtimes/litert/heap_replan.py,
    drawn after it was written): float or int8, 1-3 variables assigned the input, then 6-14
    steps, one or more of them a READ_VARIABLE into a rank-0 tensor (a graph output the rest
    does not read: Prepare stops there and the first invoke plans what follows), the others
    reads of the variable's shape added or multiplied in, activations, fully connected layers
    (float; int8 with per-channel weights, whose Prepare keeps requantization vectors), an int8
    SOFTMAX (a lookup table kept by Prepare) and assignments of the running value."""
    rng = random.Random(seed)
    weights_rng = np.random.default_rng(seed)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        int8 = rng.random() < 0.4
        width = rng.choice([8, 16, 32, 64])
        shape = [rng.choice([1, 1, 2]), width]

        def tensor(name: str, tensor_shape: list[int], scale: float = SCALE, zero: int = 0) -> int:
            if int8:
                return g.add_tensor(
                    name, tensor_shape, "INT8", quantization=quantization(scale, zero)
                )
            return g.add_tensor(name, tensor_shape)

        current = tensor("x", shape)
        inputs, extra_outputs = [current], []
        handles = []
        for number in range(rng.randint(1, 3)):
            handle = g.add_tensor(f"h{number}/handle", [1], "RESOURCE")
            g.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": f"state{number}"})
            g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
            handles.append(handle)
        steps = rng.randint(6, 14)
        scalar_steps = {rng.randint(1, steps - 3)} | {
            step for step in range(steps - 1) if rng.random() < 0.12
        }
        for step in range(steps):
            handle = rng.choice(handles)
            draw = rng.random()
            if step in scalar_steps:
                read = tensor(f"scalar{step}", [])
                g.add_operator("READ_VARIABLE", [handle], [read])
                extra_outputs.append(read)
            elif draw < 0.35:
                read = tensor(f"read{step}", shape)
                g.add_operator("READ_VARIABLE", [handle], [read])
                combined = tensor(f"sum{step}", shape)
                opcode = "ADD" if int8 or rng.random() < 0.6 else "MUL"
                g.add_operator(opcode, [current, read], [combined])
                current = combined
            elif draw < 0.55:
                activated = tensor(f"act{step}", shape, 1 / 128)
                opcodes = ["TANH", "RELU"] if int8 else ["RELU", "TANH", "LOGISTIC"]
                g.add_operator(rng.choice(opcodes), [current], [activated])
                current = activated
            elif draw < 0.75:
                dense = tensor(f"dense{step}", shape)
                values = weights_rng.standard_normal((width, width)).astype(np.float32)
                if int8:
                    scales = np.linspace(0.01, 0.03, width)
                    weights = g.add_constant(
                        f"w{step}",
                        weights_rng.integers(-127, 128, (width, width), dtype=np.int8),
                        "INT8",
                        quantization=quantization(scales, 0),
                    )
                else:
                    weights = g.add_constant(f"w{step}", values)
                g.add_operator("FULLY_CONNECTED", [current, weights, -1], [dense])
                current = dense
            elif draw < 0.85 and int8:
                soft = tensor(f"softmax{step}", shape, 1 / 256, -128)
                g.add_operator("SOFTMAX", [current], [soft], options={"beta": 1.0})
                current = soft
            else:
                g.add_operator("ASSIGN_VARIABLE", [handle, current], [])
        return inputs, [current, *extra_outputs]

    return _single(build)
