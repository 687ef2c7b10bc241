"""Analyses for report tests: the real pipeline, and a hand-checkable tensor-only stand-in.

`analysis_for` runs `pipeline.analyze`. `tensor_only_analysis` builds a TFLM-like head by hand
(planned tensors, sizes rounded to 16, TFLM lifetimes, no kernel scratch, a chosen tail) and plans
it with `naive` plus a small first-fit planner defined here: tests that check numbers by hand use
it, so a change in the runtime rules does not move their expected values.
"""

from __future__ import annotations

from types import MappingProxyType

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.ir import Model
from arenalens.pipeline import Analysis, ArenaResult
from arenalens.planning.checker import check_plan
from arenalens.planning.problem import Buffer, Plan, Problem, align_up, arena_size
from arenalens.planning.registry import run_planner
from arenalens.runtimes import MemoryBudget
from arenalens.runtimes.tflm.lifetimes import tflm_planned, tflm_timeline
from arenalens.tflite.reader import load_model


def first_fit_plan(problem: Problem, name: str = "first_fit") -> Plan:
    """Largest first, lowest offset that fits among live-together buffers (a test planner)."""
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[int, int] = {}
    for buffer in sorted(problem.buffers, key=lambda b: (-b.size, b.id)):
        busy = sorted((o, o + b.size) for o, b in placed if b.conflicts_with(buffer))
        cursor = 0
        for low, high in busy:
            if low >= cursor + buffer.size:
                break
            cursor = max(cursor, high)
        offsets[buffer.id] = cursor
        placed.append((cursor, buffer))
    check_plan(problem, offsets)
    return Plan(
        planner=name, offsets=MappingProxyType(offsets), arena_size=arena_size(problem, offsets)
    )


def tensor_only_arena(model: Model) -> ArenaProblem:
    """Model → the TFLM head with tensors only (no scratch), sizes rounded to 16."""
    timeline = tflm_timeline(model)
    buffers: list[Buffer] = []
    planned: dict[int, PlannedBuffer] = {}
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            if not tflm_planned(tensor):
                continue
            lifetime = timeline.of(subgraph.index, tensor.index)
            buffer_id = len(buffers)
            buffers.append(
                Buffer(buffer_id, lifetime.first, lifetime.last, align_up(tensor.nbytes, 16))
            )
            planned[buffer_id] = PlannedBuffer(
                id=buffer_id,
                kind=BufferKind.TENSOR,
                subgraph=subgraph.index,
                tensor=tensor.index,
                operator=None,
                name=tensor.name,
                nbytes=tensor.nbytes,
            )
    return ArenaProblem(
        name="head",
        problem=Problem(tuple(buffers)),
        buffers=MappingProxyType(planned),
        steps=timeline.steps,
        runtime_planner="naive",
    )


def tensor_only_analysis(model: Model | str | bytes, *, tail_bytes: int = 0) -> Analysis:
    """Model → an Analysis of the tensor-only TFLM head; the chosen plan is first-fit."""
    if not isinstance(model, Model):
        model = load_model(model)
    arena = tensor_only_arena(model)
    naive = run_planner("naive", arena.problem)
    chosen = first_fit_plan(arena.problem)
    result = ArenaResult(arena=arena, plan=chosen, runtime_plan=naive, given_naive_plan=naive)
    budget = MemoryBudget(
        required_bytes=chosen.arena_size + tail_bytes,
        parts=MappingProxyType({"head": chosen.arena_size, "tail": tail_bytes}),
    )
    return Analysis(
        model=model,
        runtime="tflm",
        planner=chosen.planner,
        timeline=tflm_timeline(model),
        arenas=(result,),
        budget=budget,
        runtime_budget=budget,
    )


def synthetic_model(
    blocks: int, *, name: str = "synthetic", renames: dict[int, str] | None = None
) -> Model:
    """A residual int8 network of `blocks` blocks (4 operators, 4 activations each), built in IR.

    Each block: conv → depthwise conv → conv → add(skip); channel counts vary with the block
    index so sizes differ. Filters and biases are constants (outside the arena) without data.
    Activations carry a per-tensor quantization, as in a real int8 network (TFLM's ADD refuses
    int8 tensors without one). `renames` replaces tensor names by index (tests use it for
    hostile names).
    """
    from arenalens.ir import DTYPES_BY_NAME, Operator, Quantization, Subgraph, Tensor, TensorKind

    tensors: list[Tensor] = []
    operators: list[Operator] = []

    def tensor(label: str, shape: tuple[int, ...], kind: TensorKind, dtype: str = "INT8") -> int:
        label = (renames or {}).get(len(tensors), label)
        constant = kind is TensorKind.CONSTANT
        tensors.append(
            Tensor(
                index=len(tensors),
                name=label,
                shape=shape,
                shape_signature=shape,
                dtype=DTYPES_BY_NAME[dtype],
                buffer=0,
                has_data=constant,
                is_variable=False,
                kind=kind,
                is_input=kind is TensorKind.INPUT,
                is_output=kind is TensorKind.OUTPUT,
                quantization=Quantization(scale=0.05, zero_point=0, channel_count=1, axis=0),
            )
        )
        return len(tensors) - 1

    def operator(opcode: str, inputs: tuple[int, ...], output: int) -> None:
        operators.append(
            Operator(
                index=len(operators),
                opcode=opcode,
                builtin_code=0,
                raw_builtin_code=0,
                custom_code=None,
                version=1,
                inputs=inputs,
                outputs=(output,),
                intermediates=(),
            )
        )

    side = 24
    x = tensor("input", (1, side, side, 8), TensorKind.INPUT)
    # (opcode, inputs, output, filter shape, layer name); filters and biases get indices after
    # every activation, so activation indices (and `renames`) do not depend on them.
    layers: list[tuple[str, tuple[int, ...], int, tuple[int, ...], str]] = []
    for block in range(blocks):
        channels = 8 + 8 * (block % 5)
        wide = channels * 2
        kind = TensorKind.INTERMEDIATE
        a = tensor(f"block_{block}/expand/Relu", (1, side, side, wide), kind)
        layers.append(("CONV_2D", (x,), a, (wide, 1, 1, 8), f"block_{block}/expand"))
        b = tensor(f"block_{block}/depthwise/Relu", (1, side, side, wide), kind)
        layers.append(("DEPTHWISE_CONV_2D", (a,), b, (1, 3, 3, wide), f"block_{block}/depthwise"))
        c = tensor(f"block_{block}/project/BiasAdd", (1, side, side, 8), kind)
        layers.append(("CONV_2D", (b,), c, (8, 1, 1, wide), f"block_{block}/project"))
        last = block == blocks - 1
        y = tensor(f"block_{block}/add", (1, side, side, 8), TensorKind.OUTPUT if last else kind)
        layers.append(("ADD", (x, c), y, (), ""))  # the skip
        x = y
    for opcode, inputs, output, filter_shape, layer in layers:
        if not filter_shape:
            operator(opcode, inputs, output)
            continue
        # Quantized constant filter and int32 bias, as TFLM's convolutions require; constants
        # live outside the arena, so only their quantization reaches the tail.
        out_channels = filter_shape[-1] if opcode == "DEPTHWISE_CONV_2D" else filter_shape[0]
        weights = tensor(f"{layer}/weights", filter_shape, TensorKind.CONSTANT)
        bias = tensor(f"{layer}/bias", (out_channels,), TensorKind.CONSTANT, "INT32")
        operator(opcode, (*inputs, weights, bias), output)
    subgraph = Subgraph(
        index=0,
        name="main",
        tensors=tuple(tensors),
        operators=tuple(operators),
        inputs=(0,),
        outputs=(x,),
    )
    return Model(
        source=f"{name}.tflite",
        version=3,
        description="synthetic residual network",
        subgraphs=(subgraph,),
        buffers=(),
        metadata=(),
        signature_defs=(),
        offline_plan=None,
        file_bytes=0,
    )


def runtime_available(runtime: str) -> bool:
    """True when the runtime's rules module is on this branch."""
    from arenalens.errors import UsageError
    from arenalens.runtimes import get_runtime

    try:
        get_runtime(runtime)
    except (ImportError, UsageError):
        return False
    return True


def analysis_for(model: Model | str | bytes, runtime: str = "tflm") -> Analysis:
    """The real pipeline's Analysis when the runtime is here; for TFLM before its rules landed,
    the tensor-only stand-in."""
    from arenalens.pipeline import analyze

    if runtime_available(runtime):
        return analyze(model, runtime=runtime)
    if runtime != "tflm":
        raise RuntimeError(f"runtime {runtime} is not available")
    return tensor_only_analysis(model)
