"""Control flow: IF, WHILE, CALL_ONCE → their setup allocations (if.cc, while.cc, call_once.cc).

Their Prepare only checks the branch subgraphs' arity; the subgraphs' own operators are prepared
in subgraph order like any other (micro_interpreter_graph.cc — PrepareSubgraphs).
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import Fixed, KernelRule, no_events
from arenalens.runtimes.tflm.kernels.common import op_data

RULES = (
    # CALL_ONCE runs its init subgraph at Invoke, not during setup.
    KernelRule("CALL_ONCE", "call_once.cc", Fixed(4, 4), op_data(8), no_events, derived=False),
    KernelRule("IF", "if.cc", Fixed(8, 4), op_data(8), derived=False),
    KernelRule("WHILE", "while.cc", Fixed(8, 4), op_data(8), no_events, derived=False),
)
