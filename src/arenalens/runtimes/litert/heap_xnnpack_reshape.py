"""An XNNPACK delegate kernel that the first invoke prepares, not allocate_tensors(): its node
comes after a rank-0 READ_VARIABLE, where Prepare stopped its chunk (heap_replan). What its
Prepare makes then, from *tflite/delegates/xnnpack/xnnpack_delegate.cc* (`Subgraph::Prepare`:
xnn_reshape_external_value per input, `xnn_reshape_runtime`, then `ResizeTensor` of each output
with a new dims array) and XNNPACK's *src/runtime.c* and *src/memory-planner.c*
(`xnn_reshape_runtime` plans memory on a runtime's first reshape: `xnn_plan_memory`).

In order (the 2.3.0 wheel's trace of var11_1101 under XNNPACK, its second and third kernels):

1. `xnn_init_value_allocation_tracker`: one usage record (32 B) per runtime value and per
   operator, held until the plan is done;
2. `xnn_plan_value_allocation_tracker`: a pointer (8 B) per id from the first value it plans
   to the last operator (every operator's workspace id is tracked, sized or not: the runtime's
   values and operators less the first planned id), and a live block (16 B) per record of
   nonzero size (a `malloc(0)` when none), both freed before the workspace is made. The ids
   are the delegate's (Subgraph::Create): `xnn_create_subgraph` reserves one id per tensor the
   kernel defines, the externals take the lowest in tensor order, the other tensors new ones
   after the reserved ids in tensor order, then the values its nodes add. Exact where the first
   workspace value is one of the kernel's tensors, or where there is none (the first
   operator's workspace id); where it is a value the nodes add, counted from the first such id
   possible: an upper bound of this moment, the only one (`KernelReshape.scratch_exact`);
3. `initialize_workspace_values`: where the plan's end plus 2 × XNN_EXTRA_BYTES exceeds the
   delegate's shared workspace, a new 64-aligned block is taken, then the old one freed;
4. the tracker freed; each output's dims made anew by ResizeTensor, the old array freed.

The runtime and its operators were created at the kernel's Init (setup); its Invoke is
heap_invoke's. After setup the shared workspace holds the plans of the kernels allocate_tensors()
prepared only. Operators' own reshape-time blocks (an average pooling's or reduction's buffers,
a convolution's or pooling's indirection buffer) are not replayed at this point: a kernel with
one keeps the re-plan's bound (`KernelReshape.replayed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import glibc, xnnpack_packing
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.heap_xnnpack import (
    NodeSubset,
    keeps_dims,
    node_subsets,
    partition,
)
from arenalens.runtimes.litert.isa import IsaProfile, largest_request
from arenalens.runtimes.litert.xnnpack_attention import is_attention
from arenalens.runtimes.litert.xnnpack_objects import (
    external_tensors,
    int8_fully_connected,
    kernel_tensors,
    reshape_bytes,
    runtime_counts,
)
from arenalens.runtimes.litert.xnnpack_workspace import (
    binary_activation,
    dynamically_quantized,
    hybrid_batch_matmul,
    resource_rewrites,
    subset_plan,
    subset_workspace,
    transposes_a,
)

USAGE_RECORD_BYTES = 32  # struct xnn_usage_record
SORTED_USAGE_BYTES = 8  # a pointer per planned id
MEMORY_BLOCK_BYTES = 16  # struct memory_block: start and end
_CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D")


@dataclass(frozen=True, slots=True)
class KernelReshape:
    """One delegate kernel's first reshape: its plan's workspace request (the largest over the
    ISA's configurations; 0: nothing to plan), its runtime's values and operators, the ids its
    planner sorts and the records it places (the module's step 2), its outputs' ranks, whether
    nothing else is made then, and whether the ids are exact (else an upper bound)."""

    workspace: int
    records: int
    planned: int
    placed: int
    output_ranks: tuple[int, ...]
    replayed: bool
    scratch_exact: bool = True
    # Its convolutions' and max poolings' indirection buffers (usable bytes, kept), made by
    # their reshape before the plan (runtime.c xnn_reshape_runtime: every operator's reshape,
    # then xnn_plan_memory), and whether each is modelled (`_indirection_blocks`).
    # `replayed` is False where there is any: heap_replan keeps its bound; a CALL_ONCE's init
    # replays them (heap_call_once).
    indirection: tuple[int, ...] = ()
    indirection_modelled: bool = False
    # Its other reshape-time blocks (xnnpack_objects.reshape_bytes: an average pooling's zero
    # and indirection buffers, a reduction's zero buffer, a resize's indirection, a dynamically
    # quantized convolution's 8 B), kept: counted in setup's objects for a kernel
    # allocate_tensors() or the first invoke prepares, taken by a CALL_ONCE init's first Eval
    # (heap_call_once; setup's objects leave them out, xnnpack_objects.delegate_objects).
    operator_blocks: int = 0

    def steps(self, workspace: int) -> tuple[tuple[int, ...], int]:
        """(usable-byte steps: positive taken, negative freed; the shared workspace's request
        after it) of its Prepare on a workspace of `workspace` bytes (the module's steps;
        the indirection buffers first)."""
        usage = glibc.usable(USAGE_RECORD_BYTES * self.records)
        sorted_usage = glibc.usable(SORTED_USAGE_BYTES * self.planned)
        steps = [*self.indirection, usage]
        if self.planned:  # else nothing to plan: no scratch
            blocks = glibc.usable(MEMORY_BLOCK_BYTES * self.placed)
            steps += [sorted_usage, blocks, -sorted_usage, -blocks]
        if self.workspace > workspace:
            steps += [xnnpack_packing.aligned_block(self.workspace)]
            steps += [-xnnpack_packing.aligned_block(workspace)]
            workspace = self.workspace
        steps += [-usage]
        for rank in self.output_ranks:
            dims = glibc.usable(4 + 4 * rank)
            steps += [dims, -dims]
        return tuple(step for step in steps if step), workspace


def kernel_reshapes(
    model: Model, view: Model, isa: IsaProfile, threads: int = 1, index: int = 0
) -> Mapping[int, KernelReshape]:
    """Subgraph `index`'s delegate kernels by their operator index in the delegated `view`
    (the k-th delegate node is the k-th delegated subset), with `isa`'s configurations and
    `threads`."""
    subgraph = model.subgraphs[index]
    split = partition(subgraph, model)
    subsets = [subset for subset in node_subsets(subgraph, split.delegated) if subset.delegated]
    kernels = [op.index for op in view.subgraphs[index].operators if op.opcode == DELEGATE_OPCODE]
    found = {}
    for kernel, subset in zip(kernels, subsets, strict=True):
        nodes, values = runtime_counts(subgraph, subset, model)
        workspace = isa.largest_bound(partial(subset_workspace, subgraph, subset, model, threads))
        first, exact = _first_planned_id(model, subgraph, subset, values)
        plans = [subset_plan(subgraph, subset, model, threads, t) for t in isa.bounding_tiles]
        indirection = _indirection_blocks(subgraph, subset, isa)
        found[kernel] = KernelReshape(
            workspace,
            nodes + values,
            max(nodes + values - first, 0) if nodes else 0,
            max(plan.placed for plan in plans),
            tuple(len(subgraph.tensors[tensor].shape) for tensor in subset.outputs),
            not _reshape_blocks(model, subgraph, subset, isa),
            exact and len({plan.placed for plan in plans}) == 1,
            indirection or (),
            indirection is not None,
            reshape_bytes(subgraph, subset, model),
        )
    return MappingProxyType(found)


def _indirection_blocks(
    subgraph: Subgraph, subset: NodeSubset, isa: IsaProfile
) -> tuple[int, ...] | None:
    """Each indirection buffer the kernel's reshape makes, in operator order (None: one not
    modelled), as heap_xnnpack_setup counts them in a prepared subgraph: a convolution's
    64-aligned (src/operators/convolution-nhwc.c reshape_igemm / reshape_dwconv:
    xnn_allocate_simd_memory), a transposed convolution's and a max pooling's malloc'd
    (deconvolution-nhwc.c, max-pooling-nhwc.c: xnn_reallocate_memory)."""
    blocks = []
    for index in subset.operators:
        operator = subgraph.operators[index]
        if operator.opcode in xnnpack_packing.POOLING:
            window = xnnpack_packing.pooling_indirection(subgraph, operator)
            blocks.append(glibc.usable(window) if window else 0)
        elif operator.opcode in (*_CONVOLUTIONS, "TRANSPOSE_CONV"):
            request = largest_request(xnnpack_packing.indirection_request, subgraph, operator, isa)
            if request is None:
                return None
            if operator.opcode == "TRANSPOSE_CONV":
                blocks.append(glibc.usable(request) if request else 0)
            else:
                blocks.append(xnnpack_packing.aligned_block(request))
    return tuple(block for block in blocks if block)


def _first_planned_id(
    model: Model, subgraph: Subgraph, subset: NodeSubset, values: int
) -> tuple[int, bool]:
    """(the XNNPACK id of the first value xnn_plan_memory tracks, whether it is exact): the
    lowest workspace value among the kernel's tensors (after the reserved ids, in tensor order
    among the non-externals), else the first operator's workspace id (`values`), else, where
    only the nodes add workspace values, the first id they take: exact when every value they
    add is one (none static, none cleared), else a bound."""
    plan = subset_plan(subgraph, subset, model)
    tensors = kernel_tensors(subgraph, subset)
    externals = external_tensors(subgraph, subset, tensors)
    others = [tensor for tensor in tensors if tensor not in externals]
    if plan.first_tensor is not None and plan.first_tensor in others:
        return len(tensors) + others.index(plan.first_tensor), True
    if plan.added or plan.first_tensor is not None:
        first = len(tensors) + len(others)
        if plan.first_tensor is None and plan.added == values - first:
            return first, True
        if plan.first_tensor is None and plan.first_added is not None:
            position = _added_position(subgraph, subset, plan.first_added, values - first)
            if position is not None:
                return first + position, True
        return first, False
    return values, True


def _added_position(subgraph: Subgraph, subset: NodeSubset, rank: int, added: int) -> int | None:
    """Where the `rank`-th value the nodes add of their own (xnnpack_workspace._nodes' order)
    stands among every value the delegate's visits define after the kernel's tensors, static
    ones included, or None where the visits are not all listed here. xnnpack_delegate.cc
    VisitFullyConnectedNode defines, in order, the 2-D reshape of an input whose dimensions it
    does not keep, the dynamically quantized input of a hybrid one and the int8 weights'
    channel-wise value (static: never planned); a binary operator's fused activation, the value
    its clamp copies from (xnn_insert_clamp_node); each write of a resource variable after its
    first, a value of its own (xnnpack_workspace.resource_rewrites), where no other kind is."""
    defined: list[bool] = []  # per value in id order: numbered by _nodes (else static, fused)
    for index in subset.operators:
        operator = subgraph.operators[index]
        if operator.opcode == "FULLY_CONNECTED":
            if not keeps_dims(operator):
                defined.append(True)
            if dynamically_quantized(subgraph, operator):
                defined.append(False)  # packed inline by the GEMM: never a workspace value
            if int8_fully_connected(subgraph, operator):
                defined.append(False)
        elif binary_activation(operator):
            defined.append(True)
        elif _unlisted_values(subgraph, operator):
            return None
    rewrites = resource_rewrites(subgraph, subset.operators)
    if rewrites and defined:
        return None  # both kinds: their relative order is not listed here
    defined += [True] * rewrites
    if len(defined) != added:
        return None
    numbered = [position for position, fresh in enumerate(defined) if fresh]
    return numbered[rank] if rank < len(numbered) else None


def _unlisted_values(subgraph: Subgraph, operator: Operator) -> bool:
    """An operator whose visit defines values _added_position does not list."""
    return (
        transposes_a(operator)
        or hybrid_batch_matmul(subgraph, operator)
        or dynamically_quantized(subgraph, operator)
        or is_attention(operator)
    )


def setup_workspace(reshapes: Mapping[int, KernelReshape], later: frozenset[int]) -> int:
    """The shared workspace's request after allocate_tensors(): the largest plan of the kernels
    it prepared (those not in `later`, the view operators the first invoke prepares)."""
    kept = (kernel.workspace for index, kernel in reshapes.items() if index not in later)
    return max(kept, default=0)


def _reshape_blocks(model: Model, subgraph: Subgraph, subset: NodeSubset, isa: IsaProfile) -> bool:
    """Whether its reshape makes blocks of an operator's own (not replayed at the re-plan)."""
    if reshape_bytes(subgraph, subset, model):
        return True
    for index in subset.operators:
        operator = subgraph.operators[index]
        if operator.opcode in xnnpack_packing.POOLING or operator.opcode == "TRANSPOSE_CONV":
            return True
        if operator.opcode in _CONVOLUTIONS:
            request = largest_request(xnnpack_packing.indirection_request, subgraph, operator, isa)
            if request != 0:  # an indirection buffer, or one not modelled
                return True
    return False
