"""LiteRT Prepare replay: model → each subgraph's tensors and temporaries after Init and Prepare."""

from __future__ import annotations

from dataclasses import dataclass, field

from arenalens.errors import ModelError
from arenalens.ir import Model, Subgraph
from arenalens.runtimes.litert.lifetimes import LITERT_INPLACE_FLAGS
from arenalens.runtimes.litert.prepare.first_check import first_check, zero_ways
from arenalens.runtimes.litert.prepare.folding import folded_values
from arenalens.runtimes.litert.prepare.registry import KERNEL_RULES
from arenalens.runtimes.litert.prepare.state import (
    Allocation,
    NodeContext,
    PreparedSubgraph,
    PrepareStatus,
    RuntimeNode,
    RuntimeTensor,
    TensorState,
    WorkGraph,
)

_CONTROL_FLOW_CHILD_INPUTS_CUSTOM = ("IF", "STABLEHLO_COMPOSITE", "STABLEHLO_CASE")

# ---------------------------------------------------------------------------------------------
# The simulation.


@dataclass
class _SubgraphRun:
    graph: WorkGraph
    contexts: list[NodeContext] = field(default_factory=list)
    dynamic: list[bool] = field(default_factory=list)
    chunks: list[tuple[int, int]] = field(default_factory=list)
    planning_state: tuple[TensorState, ...] = ()
    prepared: bool = False
    init_added: list[int] = field(default_factory=list)  # AddTensors in each node's Init
    prepare_added: dict[int, int] = field(default_factory=dict)  # ... in its Prepare
    eval_dynamic: dict[int, str] = field(default_factory=dict)  # IF / WHILE: why, by position
    first_check: dict[int, bool] = field(default_factory=dict)  # WHILE: its first check, known
    zero_way: dict[int, bool] = field(default_factory=dict)  # IF / WHILE: with zero inputs
    zero_turns: dict[int, tuple[bool, ...]] = field(default_factory=dict)  # IF: both, in order


def prepare_model(model: Model) -> tuple[PreparedSubgraph, ...]:
    """Model → every subgraph as LiteRT's planner sees it after Prepare."""
    runs = [_SubgraphRun(WorkGraph(model, subgraph)) for subgraph in model.subgraphs]
    for run in runs:
        _run_init(run)
    allocated = {0}
    _prepare_subgraph(model, runs, 0, allocated)
    for index, run in enumerate(runs):
        if not run.prepared:
            # Not reached by allocate_tensors(): prepared when a SignatureRunner or CALL_ONCE
            # allocates it; planned the same way then.
            _prepare_subgraph(model, runs, index, allocated, reached=False)
    ways = zero_ways([(run.graph, run.contexts) for run in runs])
    for (index, position), taken in ways.items():
        if len(taken) == 1:
            runs[index].zero_way[position] = taken[0]
        elif runs[index].contexts[position].operator.opcode == "IF":
            runs[index].zero_turns[position] = taken
    return tuple(_freeze(run, index, index in allocated) for index, run in enumerate(runs))


def _run_init(run: _SubgraphRun) -> None:
    """Init of every node in operator order: kernels that add tensors in Init do so now."""
    for position, operator in enumerate(run.graph.subgraph.operators):
        op_data: dict[str, int] = {}
        rule = KERNEL_RULES.get(operator.opcode)
        run.init_added.append(rule.init_tensors if rule is not None else 0)
        if rule is not None and rule.init_tensors:
            op_data["scratch"] = run.graph.add_tensors(rule.init_tensors)
        run.contexts.append(NodeContext(run.graph, position, operator, op_data))


def _prepare_subgraph(
    model: Model,
    runs: list[_SubgraphRun],
    index: int,
    allocated: set[int],
    *,
    reached: bool = True,
) -> None:
    run = runs[index]
    if run.prepared:
        return
    run.prepared = True
    if reached:
        allocated.add(index)
    first = 0
    for ctx in run.contexts:
        before = len(run.graph.tensors)
        status = _prepare_node(model, runs, ctx, allocated)
        run.prepare_added[ctx.position] = len(run.graph.tensors) - before
        dynamic = status == PrepareStatus.OUTPUT_SHAPE_NOT_KNOWN or any(
            run.graph.tensors[t].allocation == Allocation.DYNAMIC for t in ctx.outputs if t >= 0
        )
        run.dynamic.append(dynamic)
        if dynamic:
            run.chunks.append((first, ctx.position))
            if len(run.chunks) == 1:
                run.planning_state = tuple(t.state() for t in run.graph.tensors)
            first = ctx.position + 1
    if first < len(run.contexts) or not run.chunks:
        run.chunks.append((first, max(len(run.contexts) - 1, 0)))
        if len(run.chunks) == 1:
            run.planning_state = tuple(t.state() for t in run.graph.tensors)
    if len(run.chunks) > 1:
        run.graph.note(
            f"subgraph {index}: planned in {len(run.chunks)} chunks (dynamic outputs at nodes "
            f"{', '.join(str(last) for _, last in run.chunks[:-1])}); later chunks are planned at "
            f"Invoke with data-dependent shapes, predicted here from the flatbuffer shapes"
        )


def _prepare_node(
    model: Model, runs: list[_SubgraphRun], ctx: NodeContext, allocated: set[int]
) -> PrepareStatus:
    opcode = ctx.operator.opcode
    rule = KERNEL_RULES.get(opcode)
    if opcode.startswith("CUSTOM:") and rule is None:
        ctx.graph.note(f"node {ctx.position} {opcode}: custom op assumed to add no temporaries")
    if opcode in ("IF", "WHILE", *_CONTROL_FLOW_CHILD_INPUTS_CUSTOM):
        _prepare_control_flow(model, runs, ctx, allocated)
    status = PrepareStatus.OK
    if rule is None:
        return status
    if rule.prepare is not None:
        try:
            status = rule.prepare(ctx) or PrepareStatus.OK
        except ModelError:
            raise
        except (IndexError, KeyError, ValueError, TypeError, ZeroDivisionError) as error:
            # The rules read shapes and options as the kernels do, after the kernels' own
            # TF_LITE_ENSURE checks (rank 4, matching channels ...); a node that fails those,
            # the real Prepare refuses too: the model is the problem, so say so.
            raise ModelError(
                model.source,
                f"subgraph {ctx.graph.subgraph.index} node {ctx.position} ({opcode}): inputs or "
                f"options this kernel's Prepare would refuse ({type(error).__name__}: {error})",
            ) from None
    if rule.always_dynamic or any(
        slot < len(ctx.inputs) and not ctx.is_constant_or_persistent(slot)
        for slot in rule.shape_inputs
    ):
        for slot in range(len(ctx.outputs)):
            ctx.set_dynamic_output(slot)
        return status
    if rule.always_folds or _folds(ctx, rule.folding_inputs):
        ctx.set_persistent_ro_output()
    output = ctx.output()
    if output is not None:
        # Folded here (by the generic rule or the kernel's own prepare): its integers, for a
        # later Prepare that reads them.
        output.values = folded_values(ctx)
    return status


def _folds(ctx: NodeContext, slots: tuple[int, ...]) -> bool:
    if not slots:
        return False
    if slots == (-1,):
        slots = tuple(range(len(ctx.inputs)))
    return all(ctx.is_constant_or_persistent(slot) for slot in slots)


def _prepare_control_flow(
    model: Model, runs: list[_SubgraphRun], ctx: NodeContext, allocated: set[int]
) -> None:
    """*if.cc / while.cc — Prepare*: branch (and WHILE cond) subgraphs drop unused inputs
    (*Subgraph::RemoveUnusedInputs*); branch and body inputs other than resources / variants
    become Custom (cond inputs stay in cond's arena); a WHILE pass-through whose output nobody
    reads is removed from the node; each child is allocated right away."""
    opcode = ctx.operator.opcode
    children = [c for c in ctx.operator.called_subgraphs if 0 <= c < len(runs)]
    for position, child in enumerate(children):
        child_graph = runs[child].graph
        is_body = opcode == "WHILE" and position == 1
        is_cond = opcode == "WHILE" and position == 0
        if not is_body:
            _remove_unused_inputs(model.subgraphs[child], child_graph)
        if is_body:
            _drop_unread_pass_throughs(ctx, model.subgraphs[child], child_graph)
        if not is_cond:
            for tensor in child_graph.inputs:
                if tensor >= 0 and child_graph.tensors[tensor].dtype not in ("RESOURCE", "VARIANT"):
                    child_graph.tensors[tensor].allocation = Allocation.CUSTOM
        _prepare_subgraph(model, runs, child, allocated)
    if opcode not in ("IF", "WHILE") or len(children) != 2:
        return
    if opcode == "WHILE":
        first = first_check(ctx, runs[children[0]].contexts)
        if first is not None:
            runs[ctx.graph.subgraph.index].first_check[ctx.position] = first
    why = _eval_dynamic(opcode, [runs[child] for child in children])
    if why:
        runs[ctx.graph.subgraph.index].eval_dynamic[ctx.position] = why
        ctx.graph.note(
            f"node {ctx.position} {opcode}: its outputs are dynamic ({why}): no arena address; "
            "Eval_dynamic resizes and copies them on the heap at every run"
        )
        for slot, tensor in enumerate(ctx.outputs):
            if tensor >= 0:
                ctx.set_dynamic_output(slot)


def _eval_dynamic(opcode: str, children: list[_SubgraphRun]) -> str:
    """Why an IF's or WHILE's Prepare sets every output of the node dynamic (SetTensorToDynamic:
    no arena address; Eval_dynamic resizes and copies them at every run), '' when it does not.
    *while.cc Prepare_impl*: the body's HasDynamicTensors, or a body output of other dims than
    its input (a scalar one way and [1] the other excepted: total_elements == 1); the
    condition's dynamic output changes nothing. *if.cc Prepare*: either branch's
    HasDynamicTensors, or an output whose dims differ between the branches."""
    if opcode == "WHILE":
        body = children[1]
        if _has_dynamic_tensors(body):
            return "its body has dynamic tensors"
        pairs = zip(body.graph.inputs, body.graph.subgraph.outputs, strict=False)
        for given, taken in pairs:
            before, after = _dims(body, given), _dims(body, taken)
            if before == after:
                continue
            if (before[0] if before else 0) + (after[0] if after else 0) == 1:
                continue
            return "its body reshapes a loop value"
        return ""
    if any(_has_dynamic_tensors(branch) for branch in children):
        return "a branch has dynamic tensors"
    then, otherwise = children
    pairs = zip(then.graph.subgraph.outputs, otherwise.graph.subgraph.outputs, strict=False)
    if any(_dims(then, a) != _dims(otherwise, b) for a, b in pairs):
        return "its branches give outputs of different shapes"
    return ""


def _has_dynamic_tensors(run: _SubgraphRun) -> bool:
    """*Subgraph::HasDynamicTensors* after its AllocateTensors: a dynamic subgraph output
    (PrepareOpsStartingAt looks at them first), or a node whose Prepare left an output dynamic
    (a dynamic temporary does not count)."""
    outputs = run.graph.subgraph.outputs
    return any(run.dynamic) or any(
        0 <= t < len(run.graph.tensors) and run.graph.tensors[t].allocation == Allocation.DYNAMIC
        for t in outputs
    )


def _dims(run: _SubgraphRun, index: int) -> tuple[int, ...]:
    tensor = run.graph.tensors[index] if 0 <= index < len(run.graph.tensors) else None
    return tuple(tensor.shape or ()) if tensor is not None else ()


def _remove_unused_inputs(subgraph: Subgraph, graph: WorkGraph) -> None:
    """Inputs no node reads and no output names become -1, with 0 bytes."""
    used = {t for op in subgraph.operators for t in op.inputs if t >= 0}
    used.update(t for t in subgraph.outputs if t >= 0)
    for slot, tensor in enumerate(graph.inputs):
        if tensor >= 0 and tensor not in used:
            graph.tensors[tensor].nbytes_override = 0
            graph.inputs[slot] = -1


def _drop_unread_pass_throughs(ctx: NodeContext, body: Subgraph, graph: WorkGraph) -> None:
    """WHILE: a body input passed straight to the same output, whose WHILE output nobody in the
    parent reads, is not copied back: the node loses that output."""
    parent = ctx.graph.subgraph
    read = [t for op in parent.operators for t in op.inputs if t >= 0]
    read += [t for t in parent.outputs if t >= 0]
    for slot, (body_input, body_output) in enumerate(zip(body.inputs, body.outputs, strict=False)):
        if body_input != body_output or slot >= len(ctx.outputs) or ctx.outputs[slot] < 0:
            continue
        if ctx.outputs[slot] in read or graph.tensors[body_input].dtype in (
            "STRING",
            "RESOURCE",
            "VARIANT",
        ):
            continue
        ctx.outputs[slot] = -1


def _freeze(run: _SubgraphRun, index: int, allocated: bool) -> PreparedSubgraph:
    graph = run.graph
    subgraph = graph.subgraph
    tensors = tuple(
        RuntimeTensor(
            index=i,
            name=t.name or (f"<{t.role}>" if t.role else f"<runtime tensor {i}>"),
            dtype=t.dtype,
            shape=t.shape,
            nbytes=t.nbytes,
            allocation=t.allocation,
            is_variable=t.is_variable,
            owner=t.owner,
            role=t.role,
        )
        for i, t in enumerate(graph.tensors)
    )
    nodes = tuple(
        RuntimeNode(
            position=ctx.position,
            operator=ctx.operator.index,
            opcode=ctx.operator.opcode,
            inputs=tuple(ctx.inputs),
            outputs=tuple(ctx.outputs),
            temporaries=tuple(t for t in ctx.temporaries),
            inplace_flags=LITERT_INPLACE_FLAGS.get(ctx.operator.opcode, 0),
            dynamic_output=run.dynamic[ctx.position] if ctx.position < len(run.dynamic) else False,
            eval_dynamic=run.eval_dynamic.get(ctx.position, ""),
            first_check=run.first_check.get(ctx.position),
            zero_way=run.zero_way.get(ctx.position),
            zero_turns=run.zero_turns.get(ctx.position, ()),
        )
        for ctx in run.contexts
    )
    planning = run.planning_state
    # Tensors added after PlanAllocations (later chunks) were unknown to it: pad with NONE.
    missing = len(tensors) - len(planning)
    planning = planning + tuple(TensorState(0, Allocation.MEM_NONE) for _ in range(missing))
    return PreparedSubgraph(
        index=index,
        tensors=tensors,
        nodes=nodes,
        inputs=tuple(graph.inputs),
        outputs=tuple(subgraph.outputs),
        variables=tuple(i for i, t in enumerate(subgraph.tensors) if t.is_variable),
        chunks=tuple(run.chunks),
        planning_state=planning,
        model_tensor_count=len(subgraph.tensors),
        allocated_by_allocate_tensors=allocated,
        notes=tuple(graph.notes),
        init_added=tuple(run.init_added),
        prepare_added=tuple(run.prepare_added.get(ctx.position, 0) for ctx in run.contexts),
    )
