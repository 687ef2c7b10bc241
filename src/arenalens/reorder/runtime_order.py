"""Reordering under one runtime's rules: model + runtime → a checked schedule of subgraph 0.

The bytes of each tensor are those the runtime's own primary arena gives it (TFLM: rounded to
16, kernel scratch as bytes live while its operator runs; LiteRT: inputs and outputs never freed,
temporaries likewise), so the peak a reorderer lowers is the runtime's busiest step. An operator
that runs other subgraphs counts their planned bytes while it runs.
"""

from __future__ import annotations

from types import MappingProxyType

from arenalens.analysis.arena_problem import BufferKind
from arenalens.builds.build import Build, as_build
from arenalens.effort import cap_setting
from arenalens.ir import Model, Tensor
from arenalens.reorder.registry import ReorderResult, run_reorderer
from arenalens.reorder.schedule import FILE_ORDER, Schedule, schedule_problem
from arenalens.runtimes import get_runtime

# Buffers that hold model tensors; the others (TFLM scratch, LiteRT temporaries) live only while
# their operator runs.
_MODEL_TENSORS = (BufferKind.TENSOR, BufferKind.VARIABLE)


def reorder_for_runtime(
    model: Model,
    runtime: str,
    *,
    reorderer: str = "auto",
    effort: float = 5.0,
    time_limit_s: float | None = None,
    build: Build | str | None = None,
) -> tuple[Schedule, ReorderResult]:
    """Model → (schedule of subgraph 0, reorder result) minimising that runtime's busiest step.

    The schedule is the file order unless the reorderer's order has a strictly lower peak (the
    order is checked by `run_reorderer`; `apply_schedule` checks it again on the model). `build`
    is the TFLM build whose scratch counts (None: the x86-64 wheel). `effort` bounds the search
    (`arenalens.effort`); `time_limit_s` is a user's wall-clock cap (None: none).
    """
    rules = get_runtime(runtime)
    arena = rules.arenas(model, as_build(build))[0]
    sizes: dict[int, int] = {}
    extra: dict[int, int] = {}
    nested: dict[int, int] = {}
    for planned in arena.buffers.values():
        size = arena.problem.by_id[planned.id].size
        if planned.subgraph != 0:
            nested[planned.subgraph] = nested.get(planned.subgraph, 0) + size
        elif planned.kind in _MODEL_TENSORS and planned.tensor is not None:
            for tensor in (planned.tensor, *planned.aliases):
                sizes[tensor] = size
        elif planned.operator is not None:
            extra[planned.operator] = extra.get(planned.operator, 0) + size
    for op in model.subgraphs[0].operators:
        for called in op.called_subgraphs:
            extra[op.index] = extra.get(op.index, 0) + nested.get(called, 0)

    def tensor_bytes(tensor: Tensor) -> int:
        return sizes.get(tensor.index, 0)

    problem = schedule_problem(
        model, 0, tensor_bytes=tensor_bytes, op_extra=extra, keep_inputs=runtime == "litert"
    )
    result = run_reorderer(reorderer, problem, effort=effort, **cap_setting(time_limit_s))
    if result.peak >= result.file_order_peak:
        return FILE_ORDER, result
    return Schedule(MappingProxyType({0: result.order})), result
