"""LiteRT (TFLite CPU runtime) rules: model → its arenas, byte for byte, and a check against the
real interpreter.

Pipeline (docs/runtime-rules.md §L1–§L10): `litert.prepare` predicts the graph after Prepare
(allocation types, kernel temporaries, chunks), `litert_planner` replays ArenaPlanner's
lifetimes, in-place aliases and libstdc++-exact placement order, and the registered planner
`litert_arena` (SimpleMemoryArena) turns that order into offsets. Each subgraph has two arenas:
the arena (ArenaRw tensors) and the persistent arena (variables, persistent temporaries).

Assumptions: `ai_edge_litert` / TFLite on Linux x86-64 (libstdc++ hashing and sort), optimized
builtin kernels without delegates (`BUILTIN_WITHOUT_DEFAULT_DELEGATES`; XNNPACK would take most
tensors out of the arena), `num_threads` = 1, no `preserve_all_tensors`, no resizing. Limits of
the Prepare model are listed in `litert.prepare`; `verify` reports any disagreement per tensor.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.analysis.lifetimes import NEVER_FREED, Step, TensorLifetime, Timeline
from arenalens.errors import (
    ModelError,
    RuntimeRefusedError,
    RuntimeUnavailableError,
    UsageError,
)
from arenalens.ir import Model
from arenalens.planning.problem import Buffer, Plan, Problem
from arenalens.runtimes import MemoryBudget, Runtime
from arenalens.runtimes.litert.planner import ArenaOrder, plan_order
from arenalens.runtimes.litert.prepare.driver import prepare_model
from arenalens.runtimes.litert.prepare.state import Allocation, PreparedSubgraph
from arenalens.runtimes.litert.refusals import builtin_refusals
from arenalens.runtimes.sections import ArenaSection, laid_end_to_end, planned_parts
from arenalens.runtimes.verification import Prediction, VerifyResult, VerifyRow

if TYPE_CHECKING:
    from arenalens.analysis.overlap_pairs import OverlapPair
    from arenalens.builds.build import Build
    from arenalens.builds.kernel_paths import KernelPath

# kDefaultTensorAlignment / kDefaultArenaAlignment: every offset is a multiple of 64.
LITERT_ALIGNMENT = 64
RUNTIME_PLANNER = "litert_arena"
INSTALL_HINT = "pip install 'arenalens[runtime]'"
PROBE_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class LiteRtSubgraphPlan:
    """One subgraph: its prepared state and ArenaPlanner's decisions."""

    prepared: PreparedSubgraph
    order: ArenaOrder


_CACHE: dict[int, tuple[weakref.ref[Model], tuple[LiteRtSubgraphPlan, ...]]] = {}


def litert_plans(model: Model) -> tuple[LiteRtSubgraphPlan, ...]:
    """Model → per-subgraph prepared state and placement order (computed once per model)."""
    cached = _CACHE.get(id(model))
    if cached is not None and cached[0]() is model:
        return cached[1]
    plans = tuple(
        LiteRtSubgraphPlan(prepared, plan_order(prepared)) for prepared in prepare_model(model)
    )
    key = id(model)
    _CACHE[key] = (weakref.ref(model), plans)
    # Drop the entry with the model, so the cache never outlives what it describes.
    weakref.finalize(model, _CACHE.pop, key, None)
    return plans


# ---------------------------------------------------------------------------------------------
# Timeline and arenas


def litert_runtime_timeline(model: Model) -> Timeline:
    """Model → LiteRT lifetimes of every tensor, runtime temporaries included."""
    lifetimes: dict[tuple[int, int], TensorLifetime] = {}
    steps: list[Step] = []
    for plan in litert_plans(model):
        prepared, order = plan.prepared, plan.order
        for tensor in prepared.tensors:
            lifetimes[(prepared.index, tensor.index)] = TensorLifetime(
                prepared.index,
                tensor.index,
                order.alloc[tensor.index],
                order.dealloc[tensor.index],
                alias_of=order.aliases.get(tensor.index),
            )
        steps.extend(
            Step(node.position, prepared.index, node.operator, node.opcode)
            for node in prepared.nodes
        )
    return Timeline("litert", MappingProxyType(lifetimes), (), tuple(steps))


def arenas(model: Model, alignment: int | None = None) -> tuple[ArenaProblem, ...]:
    """Model → ArenaProblems: subgraph 0's arena, its persistent arena, then other subgraphs."""
    align = LITERT_ALIGNMENT if alignment is None else alignment
    problems: list[ArenaProblem] = []
    for plan in litert_plans(model):
        problems.append(arena_problem(plan, align, persistent=False))
        problems.append(arena_problem(plan, align, persistent=True))
    return tuple(problems)


def arena_problem(plan: LiteRtSubgraphPlan, alignment: int, *, persistent: bool) -> ArenaProblem:
    prepared, order = plan.prepared, plan.order
    placed = order.persistent_order if persistent else order.arena_order
    aliases_of: dict[int, list[int]] = {}
    for alias, root in sorted(order.aliases.items()):
        aliases_of.setdefault(root, []).append(alias)
    buffers = tuple(
        Buffer(
            id=tensor,
            start=order.alloc[tensor],
            end=NEVER_FREED if persistent else order.dealloc[tensor],
            size=prepared.tensors[tensor].nbytes,
        )
        for tensor in placed
    )
    planned = {
        tensor: _planned_buffer(prepared, tensor, tuple(aliases_of.get(tensor, ())))
        for tensor in placed
    }
    name = f"subgraph {prepared.index}" + (" persistent" if persistent else "")
    notes = list(prepared.notes) if not persistent else []
    if persistent:
        notes.append("persistent arena: the runtime packs these back to back in placement order")
    if not prepared.allocated_by_allocate_tensors:
        notes.append(
            f"subgraph {prepared.index} is not allocated by allocate_tensors() (signature or "
            f"CALL_ONCE subgraph): planned when it first runs"
        )
    if not persistent and order.tie_groups:
        notes.append(
            f"{len(order.tie_groups)} groups of equal-size tensors allocated at the same node; "
            f"their order follows LiteRT's hash sets and std::sort (libstdc++), reproduced exactly"
        )
    steps = tuple(
        Step(node.position, prepared.index, node.operator, node.opcode) for node in prepared.nodes
    )
    return ArenaProblem(
        name=name,
        problem=Problem(buffers=buffers, alignment=alignment, order=tuple(placed)),
        buffers=MappingProxyType(planned),
        steps=steps,
        runtime_planner=RUNTIME_PLANNER,
        notes=tuple(notes),
    )


def _planned_buffer(
    prepared: PreparedSubgraph, tensor_index: int, aliases: tuple[int, ...]
) -> PlannedBuffer:
    tensor = prepared.tensors[tensor_index]
    operator = None
    if tensor.owner is not None:
        kind = BufferKind.TEMPORARY
        operator = prepared.nodes[tensor.owner].operator
    elif tensor.is_variable:
        kind = BufferKind.VARIABLE
    else:
        kind = BufferKind.TENSOR
    return PlannedBuffer(
        id=tensor_index,
        kind=kind,
        subgraph=prepared.index,
        tensor=tensor_index,
        operator=operator,
        name=tensor.name,
        nbytes=tensor.nbytes,
        aliases=aliases,
    )


# The build the arena rules are checked on (the x86-64 wheel): `litert_memory.arenas_on_device`
# names a Linux device in its place.
CHECKED_BUILD = "num_threads = 1; Linux x86-64 libstdc++ build"


def budget(
    model: Model, arena_problems: Sequence[ArenaProblem], plans: Sequence[Plan]
) -> MemoryBudget:
    """Arenas + their plans → memory LiteRT allocates for them: the sum of every high-water mark."""
    parts = {arena.name: plan.arena_size for arena, plan in zip(arena_problems, plans, strict=True)}
    return MemoryBudget(
        required_bytes=sum(parts.values()),
        parts=MappingProxyType(parts),
        assumptions=(
            "LiteRT CPU runtime, optimized builtin kernels, no delegate (XNNPACK off)",
            CHECKED_BUILD,
            "each arena is its own heap block of its high-water mark (aligned_alloc, 64 B)",
        ),
        device="LiteRT CPU runtime, Linux x86-64",
        obstacles=builtin_refusals(model),
        sections_of=partial(_sections, tuple(arena_problems), tuple(plans)),
    )


def _sections(
    arena_problems: Sequence[ArenaProblem], plans: Sequence[Plan]
) -> tuple[ArenaSection, ...]:
    """Every arena end to end, each with its planned bytes and what its plan leaves unused."""
    return laid_end_to_end(
        [
            (
                arena.name,
                plan.arena_size,
                planned_parts(plan.arena_size, arena.problem.lower_bound()),
                _arena_meaning(arena.name),
            )
            for arena, plan in zip(arena_problems, plans, strict=True)
        ]
    )


def _arena_meaning(name: str) -> str:
    """What one LiteRT arena holds (each is its own heap block)."""
    if name.endswith("persistent"):
        return (
            "the subgraph's persistent arena, its own heap block: variables and persistent "
            "kernel temporaries, kept for the interpreter's lifetime"
        )
    return (
        "the subgraph's arena, its own heap block: activations and kernel temporaries, "
        "reused as they die (offsets aligned to 64 B)"
    )


# ---------------------------------------------------------------------------------------------
# Verification against the real interpreter


@dataclass(frozen=True, slots=True)
class RealTensor:
    """One tensor as the probe saw it."""

    subgraph: int
    index: int
    status: str  # ok | scalar | null | typeless | unsized (typed, no dims yet)
    address: int | None
    nbytes: int | None
    dtype: str | None = None  # numpy name ("float32"); None when typeless
    shape: tuple[int, ...] | None = None  # None when typeless or unsized


def require_litert_wheel() -> None:
    """RuntimeUnavailableError when the ai_edge_litert wheel `verify` runs is missing."""
    if importlib.util.find_spec("ai_edge_litert") is None:
        raise RuntimeUnavailableError(
            f"verifying against LiteRT needs the ai_edge_litert package: {INSTALL_HINT}"
        )


def probe_model(path: str | os.PathLike[str]) -> tuple[tuple[RealTensor, ...], ...]:
    """Model path → real tensors per subgraph, measured in a child process."""
    require_litert_wheel()
    package_root = Path(__file__).resolve().parents[3]  # the folder holding `arenalens`
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(package_root), *filter(None, [environment.get("PYTHONPATH")])]
    )
    try:
        completed = subprocess.run(  # fixed argv: our own probe module
            [sys.executable, "-m", "arenalens.runtimes.litert.probe", os.fspath(path)],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            env=environment,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelError(
            os.fspath(path),
            f"LiteRT did not set up this model within {PROBE_TIMEOUT_SECONDS} s",
        ) from None
    try:
        result: dict[str, Any] = json.loads(completed.stdout or "{}")
    except json.JSONDecodeError:
        result = {}
    if completed.returncode != 0 or "subgraphs" not in result:
        reason = result.get("error") or completed.stderr.strip()[-500:] or "no output"
        if str(reason).startswith("unavailable"):
            raise RuntimeUnavailableError(f"LiteRT probe: {reason}; {INSTALL_HINT}")
        # The real interpreter refusing the model (an unresolved custom op, a quantization it
        # rejects) or crashing is an answer about the model, not a bug of ours.
        if completed.returncode < 0:
            reason = f"the interpreter crashed (signal {-completed.returncode})"
        raise RuntimeRefusedError(
            os.fspath(path), f"LiteRT could not set up this model: {_first_line(str(reason))}"
        )
    return tuple(
        tuple(
            RealTensor(
                subgraph=int(subgraph["index"]),
                index=int(record["index"]),
                status=str(record["status"]),
                address=record.get("address"),
                nbytes=record.get("nbytes"),
                dtype=record.get("dtype"),
                shape=tuple(record["shape"]) if "shape" in record else None,
            )
            for record in subgraph["tensors"]
        )
        for subgraph in result["subgraphs"]
    )


def verify(
    path: str | os.PathLike[str],
    model: Model,
    arena_problems: Sequence[ArenaProblem],
    plans: Sequence[Plan],
) -> VerifyResult:
    """Model path + predicted arenas + LiteRT's own plans of them → predicted vs real arena
    sizes and tensor offsets."""
    return compare_with_real(model, arena_problems, plans, probe_model(path))


def compare_with_real(
    model: Model,
    arena_problems: Sequence[ArenaProblem],
    plans: Sequence[Plan],
    real: Sequence[Sequence[RealTensor]],
) -> VerifyResult:
    """Predicted arenas + plans + probe result → rows: each arena's size, each tensor's offset."""
    rows: list[VerifyRow] = []
    notes: list[str] = []
    subgraph_plans = litert_plans(model)
    for arena, plan in zip(arena_problems, plans, strict=True):
        if arena.problem.alignment != LITERT_ALIGNMENT:
            notes.append(
                f"{arena.name}: alignment {arena.problem.alignment} is not LiteRT's 64; "
                f"offsets cannot match"
            )
        subgraph = next(iter(arena.buffers.values())).subgraph if arena.buffers else None
        if subgraph is None or subgraph >= len(real):
            continue
        plan_info = subgraph_plans[subgraph]
        if not plan_info.prepared.allocated_by_allocate_tensors:
            # Planned when its signature runner or CALL_ONCE first runs: after
            # allocate_tensors() its tensors hold nothing to compare with.
            notes.append(f"{arena.name}: not allocated by allocate_tensors(); not compared")
            continue
        rows.extend(_compare_arena(arena, plan, plan_info, real[subgraph], notes))
    return VerifyResult(runtime="litert", rows=tuple(rows), notes=tuple(notes))


def _compare_arena(
    arena: ArenaProblem,
    plan: Plan,
    plan_info: LiteRtSubgraphPlan,
    real: Sequence[RealTensor],
    notes: list[str],
) -> list[VerifyRow]:
    prepared, order = plan_info.prepared, plan_info.order
    first_chunk = {t for t, chunk in order.chunk_of.items() if chunk == 0}
    predicted: dict[int, int] = {}
    for buffer_id, planned in arena.buffers.items():
        if buffer_id not in first_chunk:
            continue  # planned at Invoke, not by allocate_tensors()
        predicted[buffer_id] = plan.offsets[buffer_id]
        for alias in planned.aliases:
            predicted[alias] = plan.offsets[buffer_id]
    by_index = {t.index: t for t in real}
    visible = {
        t: by_index[t].address
        for t in predicted
        if t in by_index and by_index[t].address is not None
    }
    if not visible:
        if predicted:
            notes.append(f"{arena.name}: no predicted tensor has a readable address")
        return []
    real_base = min(address for address in visible.values() if address is not None)
    predicted_base = min(predicted[t] for t in visible)
    rows: list[VerifyRow] = []
    hidden = sorted(set(predicted) - set(visible))
    for tensor in sorted(predicted):
        name = prepared.tensors[tensor].name
        label = f"{arena.name} tensor {tensor} ({name})"
        record = by_index.get(tensor)
        address = visible.get(tensor)
        if address is None:
            status = record.status if record is not None else "missing"
            # 0-d tensors come back as copies: nothing to compare, nothing contradicted.
            comparable = status != "scalar"
            note = f"no address ({status})" if comparable else "0-d: no address from Python"
            rows.append(VerifyRow(label, predicted[tensor], None, not comparable, note=note))
            continue
        real_offset = address - real_base
        expected = predicted[tensor] - predicted_base
        rows.append(VerifyRow(label, expected, real_offset, expected == real_offset))
        real_bytes = record.nbytes if record is not None else None
        if real_bytes is not None and real_bytes != prepared.tensors[tensor].nbytes:
            rows.append(
                VerifyRow(
                    f"{label} bytes",
                    prepared.tensors[tensor].nbytes,
                    real_bytes,
                    False,
                    note="the runtime sized this tensor differently (Prepare recomputed its shape)",
                )
            )
    predicted_size = (
        max(
            plan.offsets[b] + arena.problem.by_id[b].size for b in arena.buffers if b in first_chunk
        )
        - predicted_base
    )
    sizes = {t: by_index[t].nbytes or 0 for t in visible if by_index[t].nbytes is not None}
    unsized = sorted(t for t in visible if t not in sizes)
    if unsized:
        # Python cannot read a resource tensor's byte count: the real extent of these
        # tensors is taken from the prediction (their offsets are still measured).
        notes.append(
            f"{arena.name}: byte counts of tensors {unsized[:8]} taken from the prediction "
            f"(Python cannot read them)"
        )
        sizes.update({t: prepared.tensors[t].nbytes for t in unsized})
    real_size = max(
        (address - real_base + sizes.get(t, 0) for t, address in visible.items() if address),
        default=0,
    )
    size_note = ""
    if hidden:
        size_note = f"tensors without a readable address: {hidden[:8]}"
    rows.insert(
        0,
        VerifyRow(
            f"{arena.name} size (high-water mark)",
            predicted_size,
            real_size,
            predicted_size == real_size,
            note=size_note,
        ),
    )
    # Real tensors inside this arena's address range that arenalens did not place here.
    placed_range = (real_base, real_base + real_size)
    for record in real:
        if record.index in predicted or record.address is None or record.nbytes in (None, 0):
            continue
        if placed_range[0] <= record.address < placed_range[1] and _is_unplanned(
            prepared, record.index
        ):
            rows.append(
                VerifyRow(
                    f"{arena.name} tensor {record.index} (unpredicted)",
                    None,
                    record.address - real_base,
                    False,
                    note="the runtime placed this tensor in the arena; arenalens did not",
                )
            )
    return rows


def _is_unplanned(prepared: PreparedSubgraph, tensor_index: int) -> bool:
    """True unless arenalens knows the tensor lives outside both arenas (constants, heap)."""
    if tensor_index >= len(prepared.tensors):
        return True
    allocation = prepared.tensors[tensor_index].allocation
    return allocation in (Allocation.ARENA_RW, Allocation.ARENA_RW_PERSISTENT, Allocation.MEM_NONE)


@dataclass(frozen=True, slots=True)
class LiteRtRuntime:
    """LiteRT as a `runtimes.Runtime`: the host interpreter only, one set of figures."""

    name: str = "litert"
    title: str = "LiteRT (TensorFlow Lite CPU runtime)"
    has_builds: bool = False
    default_alignment: int = LITERT_ALIGNMENT
    data_alignment: int = LITERT_ALIGNMENT
    plans_overlaps: bool = False

    def timeline(self, model: Model, build: Build) -> Timeline:
        """Model → LiteRT's lifetimes (the host's: LiteRT has no other build)."""
        return litert_runtime_timeline(model)

    def arenas(
        self, model: Model, build: Build, *, alignment: int | None = None
    ) -> tuple[ArenaProblem, ...]:
        """Model → every subgraph's arena and persistent arena."""
        return arenas(model, alignment)

    def budget(
        self, model: Model, arenas: Sequence[ArenaProblem], plans: Sequence[Plan], build: Build
    ) -> MemoryBudget:
        """Arenas + plans → the bytes LiteRT allocates."""
        return budget(model, arenas, plans)

    def overlaps(
        self, model: Model, arena: ArenaProblem, *, paths: Sequence[KernelPath]
    ) -> tuple[OverlapPair, ...]:
        """LiteRT plans its own arenas: no offline plan, so no overlap to plan."""
        raise UsageError("--overlap needs TFLM (--runtime tflm): LiteRT plans its own arenas")

    def verify(self, path: str, prediction: Prediction, *, min_arena: bool = False) -> VerifyResult:
        """The real interpreter's arenas and tensor offsets vs the prediction (the host build:
        LiteRT has no other)."""
        if min_arena:
            raise UsageError("--min-arena bisects TFLM's arena_size; LiteRT has no such size")
        return verify(path, prediction.model, prediction.arenas, prediction.plans)

    def require_interpreter(self) -> None:
        """RuntimeUnavailableError when the ai_edge_litert wheel `verify` runs is missing."""
        require_litert_wheel()


RUNTIME: Runtime = LiteRtRuntime()  # mypy checks the class against the protocol here

__all__ = [
    "LITERT_ALIGNMENT",
    "RUNTIME",
    "LiteRtSubgraphPlan",
    "RealTensor",
    "arenas",
    "budget",
    "compare_with_real",
    "litert_plans",
    "litert_runtime_timeline",
    "probe_model",
    "verify",
]


def _first_line(text: str) -> str:
    """The first non-empty line of an error, without the exception class name."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), text.strip())
    prefix, separator, rest = line.partition(": ")
    if separator and prefix.isidentifier() and prefix.endswith("Error"):
        line = rest
    limit = 200  # the interpreter repeats a message per tensor: one is enough
    return line if len(line) <= limit else line[: limit - 1] + "…"
