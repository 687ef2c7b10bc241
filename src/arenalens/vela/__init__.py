"""Arm's Vela compiler for Ethos-U NPUs: running it (`compiler.py`, the `npu` extra) and reading
what it wrote into a compiled model (`compiled.py`: the NPU it targets, its scratch tensors)."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from arenalens.memo import recent_by_identity

if TYPE_CHECKING:
    from arenalens.ir import Model

# The operator Vela compiles a graph into. Whether a model has one is asked of every model a
# check reads; the rest of this package loads only for those that do.
NPU_OPCODE = "CUSTOM:ethos-u"
_OPCODE = attrgetter("opcode")


@recent_by_identity()
def is_vela_compiled(model: Model) -> bool:
    """True when the model has at least one ethos-u operator."""
    # `in` over the opcodes scans in C, ~0.5 µs an operator: asked of every model a check reads,
    # by its fit and its verdict, so remembered (the model is frozen).
    return any(NPU_OPCODE in map(_OPCODE, subgraph.operators) for subgraph in model.subgraphs)
