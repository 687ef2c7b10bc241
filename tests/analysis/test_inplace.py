"""In-place aliasing: which operators qualify, and how buffers merge."""

from __future__ import annotations

import numpy as np

from arenalens import load_model
from arenalens.analysis.arena_problem import BufferKind
from arenalens.analysis.inplace import InPlace, find_aliases, merge_aliases
from arenalens.builds.build import HOST
from arenalens.runtimes import get_runtime
from arenalens.runtimes.tflm.kernels.registry import LIBRARIES, REFERENCE_KERNELS, inplace_of
from arenalens.tflite.builder import ModelBuilder
from tests.fixtures.optimize_models import residual_add_model


def test_every_kernel_that_states_an_in_place_fact_gives_its_reason() -> None:
    # Generated from the TFLM registry: every rule, reference or a library's variant.
    variants = [rule for kernels in LIBRARIES.values() for rule in kernels.rules.values()]
    rules = [*REFERENCE_KERNELS.values(), *variants]
    stated = [rule for rule in rules if rule.inplace is not None]
    assert stated and all(rule.inplace and rule.inplace.reason.strip() for rule in stated)
    for rule in stated:
        if isinstance(rule.inplace, InPlace):
            assert all(rule.operands.role(slot) for slot in rule.inplace.inputs), rule.opcode


def _chain_model() -> bytes:
    """x → RELU → a; a → ADD(a, b) with b a second input; → RESHAPE → SOFTMAX; plus traps."""
    builder = ModelBuilder(description="aliasing rules")
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", (1, 8))
    y = main.add_tensor("y", (1, 8))
    a = main.add_tensor("a", (1, 8))
    b = main.add_tensor("b", (1, 8))
    total = main.add_tensor("total", (1, 8))
    flat = main.add_tensor("flat", (8,))
    probabilities = main.add_tensor("probabilities", (8,))
    shared = main.add_tensor("shared", (1, 8))
    twice = main.add_tensor("twice", (1, 8))
    broadcast = main.add_tensor("broadcast", (1, 8))
    row = main.add_tensor("row", (1, 1))
    shape = main.add_constant("shape", np.array([8], np.int32))
    main.add_operator("RELU", [x], [a])  # 0: x is a graph input → no alias
    main.add_operator("RELU", [y], [b])  # 1: same
    main.add_operator("ADD", [a, b], [total])  # 2: a and b read here only → alias over a
    main.add_operator("RESHAPE", [total, shape], [flat])  # 3: alias over total
    main.add_operator("SOFTMAX", [flat], [probabilities])  # 4: not safe
    main.add_operator("RELU", [y], [shared])  # 5
    main.add_operator("MUL", [shared, shared], [twice])  # 6: reads `shared` alone → alias
    main.add_operator("RELU", [y], [row])  # 7
    main.add_operator("ADD", [twice, row], [broadcast])  # 8: broadcasting → no alias
    main.set_inputs([x, y])
    main.set_outputs([probabilities, broadcast])
    return builder.build()


def test_find_aliases_applies_every_rule() -> None:
    model = load_model(_chain_model())
    aliases = find_aliases(model, inplace_of)
    found = {(alias.operator, alias.input, alias.output) for alias in aliases}
    assert found == {(2, 2, 4), (3, 4, 5), (6, 7, 8)}


def test_merge_aliases_unions_lifetimes_and_keeps_tensor_names() -> None:
    model = load_model(residual_add_model())
    arena = get_runtime("tflm").arenas(model, HOST)[0]
    aliases = find_aliases(model, inplace_of)
    assert [alias.opcode for alias in aliases] == ["ADD"]
    merged = merge_aliases(arena, aliases)
    assert len(merged.problem.buffers) == len(arena.problem.buffers) - 1
    alias = aliases[0]
    holder = merged.buffer_for_tensor(0, alias.output)
    assert holder is not None and holder.kind is BufferKind.TENSOR
    assert holder.tensor == alias.input and alias.output in holder.aliases
    before = arena.problem.lower_bound()
    assert merged.problem.lower_bound() == before * 2 // 3  # three live tensors become two
