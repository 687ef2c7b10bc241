"""STABLEHLO_COMPOSITE models for the LiteRT heap (session 6's held-out `composite6_*` in
tests/litert_heap_measure.py): a main subgraph whose one operator is a composite, and its
decomposition subgraph, a random chain of float element-wise operators. The builtin kernel
(stablehlo_composite.cc) prepares and allocates the decomposition subgraph in its own Prepare;
arenalens counts that kernel with its upper bounds and says the figure is an estimate."""

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
