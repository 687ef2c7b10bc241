"""What each operator keeps in the tail: model + build → its NodeAndRegistration, its parsed
options and every persistent buffer its kernel allocates in Init and Prepare, from the setup
replay (resource variables included), each in the order the kernel allocates it.

The tail rules of `diagnose` read these (which operator keeps most, which kernels keep
per-channel arrays); they are the same allocations the budget's tail is made of
(`tail_parts`), before the tail's 16-byte alignment steps.
"""

from __future__ import annotations

from arenalens.builds.build import Build
from arenalens.ir import Model, Operator, Subgraph
from arenalens.planning.problem import align_up
from arenalens.records import record
from arenalens.runtimes.tflm.kernels.base import Persistent
from arenalens.runtimes.tflm.setup import setups_with_resources
from arenalens.runtimes.tflm.setup_layout import layout_for


@record(slots=True)
class OperatorPersistent:
    """One operator's persistent bytes on one build, as its kernel allocates them."""

    subgraph: Subgraph
    operator: Operator
    node_bytes: int  # its NodeAndRegistration
    options_bytes: int | None  # its parsed builtin options, aligned (None: it has none)
    # (what, bytes) of every persistent buffer of its Init, then its Prepare, in order.
    persistent: tuple[tuple[str, int], ...]


def operator_persistent(model: Model, build: Build) -> tuple[OperatorPersistent, ...]:
    """Every operator's persistent bytes, in setup order."""
    node_bytes = layout_for(build).node_and_registration
    found = []
    for setup in setups_with_resources(model, build):
        options = None
        if setup.builtin_data is not None:
            size, alignment = setup.builtin_data
            options = align_up(size, alignment)
        persistent = tuple(
            (event.what, event.nbytes)
            for event in (*setup.init, *setup.prepare)
            if isinstance(event, Persistent)
        )
        view = setup.context
        found.append(
            OperatorPersistent(view.subgraph, view.operator, node_bytes, options, persistent)
        )
    return tuple(found)


__all__ = ["OperatorPersistent", "operator_persistent"]
