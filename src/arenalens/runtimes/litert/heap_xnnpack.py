"""Which operators LiteRT's default XNNPACK delegate takes, and what its runtimes keep beside
the packed weights and the workspace, from LiteRT's and XNNPACK's sources
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*, *tflite/graph_info.cc*; XNNPACK
*src/runtime.c*).

* **Partition**: the delegate takes each operator its `Visit*Node` accepts (the builtins it has
  no Visit*Node for never leave the builtin kernels); modelled here: the type checks of
  `_TAKES` and the static inputs of `_STATIC_INPUTS` (an operator whose acceptance is not
  modelled makes the figure an estimate). LiteRT groups the operators into subsets
  (`PartitionGraphIntoIndependentNodeSubsets`, greedy) and replaces each delegated subset with
  one delegate node: `delegated_view` is the model as LiteRT's planner then sees it.
* **Packed weights and indirection buffers**: `xnnpack_packing`.
* **Workspace**: `xnnpack_workspace`.
* **Runtime and operator objects**: an upper bound per runtime, operator and value
  (`objects_bound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.planning.registry import run_planner
from arenalens.runtimes.litert import glibc, rules
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.xnnpack_packing import WEIGHTED, constant_input

_FLOAT = ("FLOAT32",)
_QUANTIZED = ("INT8", "UINT8")
_FLOAT_OR_QUANTIZED = ("FLOAT32", "INT8", "UINT8")
# Every builtin the delegate has a Visit*Node for (xnnpack_delegate.cc: VisitNode's switch);
# it never takes another one.
_VISITED = frozenset(
    [
        "ABS",
        "ADD",
        "ASSIGN_VARIABLE",
        "AVERAGE_POOL_2D",
        "BATCH_MATMUL",
        "CEIL",
        "CONCATENATION",
        "CONV_2D",
        "COS",
        "DEPTH_TO_SPACE",
        "DEPTHWISE_CONV_2D",
        "DEQUANTIZE",
        "DIV",
        "ELU",
        "EXP",
        "EXPAND_DIMS",
        "FLOOR",
        "FULLY_CONNECTED",
        "GELU",
        "HARD_SWISH",
        "LEAKY_RELU",
        "LOG",
        "LOGISTIC",
        "MAX_POOL_2D",
        "MAXIMUM",
        "MEAN",
        "MINIMUM",
        "MUL",
        "NEG",
        "PAD",
        "PRELU",
        "QUANTIZE",
        "READ_VARIABLE",
        "REDUCE_MAX",
        "REDUCE_MIN",
        "RELU",
        "RELU6",
        "RELU_N1_TO_1",
        "RESHAPE",
        "RESIZE_BILINEAR",
        "ROUND",
        "RSQRT",
        "SIN",
        "SLICE",
        "SOFTMAX",
        "SPACE_TO_DEPTH",
        "SPLIT",
        "SQRT",
        "SQUARE",
        "SQUARED_DIFFERENCE",
        "STABLEHLO_COMPOSITE",
        "STRIDED_SLICE",
        "SUB",
        "SUM",
        "TANH",
        "TRANSPOSE",
        "TRANSPOSE_CONV",
        "VAR_HANDLE",
    ]
)
# Operators taken with these data input types (VisitUnaryNode, VisitBinaryNode, ...: their
# CheckTensorFloatType / CheckTensorFloatOrQUInt8Type checks), modelled here.
_TAKES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        [
            "ABS",
            "CEIL",
            "COS",
            "EXP",
            "FLOOR",
            "GELU",
            "HARD_SWISH",
            "LOG",
            "NEG",
            "RELU_N1_TO_1",
            "RELU",
            "RELU6",
            "ROUND",
            "RSQRT",
            "SIN",
            "SQRT",
            "SQUARE",
            "DIV",
            "MAXIMUM",
            "MINIMUM",
            "SQUARED_DIFFERENCE",
            "SOFTMAX",
            "AVERAGE_POOL_2D",
        ],
        _FLOAT,
    ),
    **dict.fromkeys(
        [
            "LOGISTIC",
            "TANH",
            "ADD",
            "MUL",
            "SUB",
            "CONCATENATION",
            "PAD",
            "TRANSPOSE",
            "SLICE",
            "EXPAND_DIMS",
            "RESHAPE",
            "MAX_POOL_2D",
            "MEAN",
            "SUM",
            "REDUCE_MAX",
            "REDUCE_MIN",
            "SPLIT",
            "CONV_2D",
            "DEPTHWISE_CONV_2D",
            "FULLY_CONNECTED",
        ],
        _FLOAT_OR_QUANTIZED,
    ),
    "ELU": ("FLOAT32", "INT8"),
    "DEQUANTIZE": _QUANTIZED,
    "QUANTIZE": _FLOAT_OR_QUANTIZED,
}
# Inputs past the data that must be constant for the delegate to take the operator
# (CheckTensorStaticAllocation / quasi-static tensors): their positions.
_STATIC_INPUTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(("PAD", "TRANSPOSE", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"), (1,)),
    "SLICE": (1, 2),
    "EXPAND_DIMS": (1,),
    "SPLIT": (0,),
}
# The data input of an operator whose first input is not its data.
_DATA_INPUT = {"SPLIT": 1}


@dataclass(frozen=True, slots=True)
class XnnpackPartition:
    """Which operators of a subgraph XNNPACK takes, and which of those are not modelled."""

    delegated: tuple[int, ...]  # operator indices, in execution order
    unmodelled: tuple[str, ...]  # opcodes whose acceptance by the delegate is not modelled


def _input_type(subgraph: Subgraph, operator: Operator) -> str:
    position = _DATA_INPUT.get(operator.opcode, 0)
    data = operator.inputs[position] if len(operator.inputs) > position else -1
    return subgraph.tensors[data].dtype.name if data >= 0 else ""


def _takes(subgraph: Subgraph, operator: Operator) -> bool | None:
    """True if the delegate takes the operator, False if it leaves it, None if not modelled."""
    if operator.opcode not in _VISITED:
        return False  # no Visit*Node: the builtin kernel runs it
    types = _TAKES.get(operator.opcode)
    if types is None:
        return None
    kind = _input_type(subgraph, operator)
    if kind not in types:
        return False
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if operator.opcode == "QUANTIZE" and (output is None or output.dtype.name not in _QUANTIZED):
        return False
    if operator.opcode == "SOFTMAX" and float(operator.options.get("beta", 1.0)) != 1.0:
        return False
    if operator.opcode == "SPLIT" and int(operator.options.get("num_splits", 0) or 0) < 2:
        # XNNPACK's even split has two or more outputs: the wheel leaves a one-way SPLIT to
        # the builtin kernel (measured on a generated graph, fresh_dag_3).
        return False
    for position in _STATIC_INPUTS.get(operator.opcode, ()):
        if constant_input(subgraph, operator.inputs, position) is None:
            return None  # a dynamic axis, shape or padding: not modelled
    if operator.opcode in WEIGHTED:
        weights = constant_input(subgraph, operator.inputs, 1)
        if weights is None or weights.dtype.name != kind:
            return None  # dynamic or hybrid weights: the delegate's rules are not modelled
    # A RESHAPE whose new shape is not static stays on the builtin kernel.
    shape = operator.inputs[1] if len(operator.inputs) > 1 else -1
    return not (
        operator.opcode == "RESHAPE" and shape >= 0 and not subgraph.tensors[shape].has_data
    )


def partition(subgraph: Subgraph) -> XnnpackPartition:
    """The operators XNNPACK takes from a subgraph (see the module docstring)."""
    delegated: list[int] = []
    unmodelled: set[str] = set()
    for operator in subgraph.operators:
        taken = _takes(subgraph, operator)
        if taken is None:
            unmodelled.add(operator.opcode)
        elif taken:
            delegated.append(operator.index)
    return XnnpackPartition(tuple(delegated), tuple(sorted(unmodelled)))


@dataclass(frozen=True, slots=True)
class NodeSubset:
    """One subset of LiteRT's partition: its operators, whether the delegate takes them, the
    tensors it reads from outside and those it hands on (each sorted, as Uniquefy leaves)."""

    operators: tuple[int, ...]
    delegated: bool
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def node_subsets(subgraph: Subgraph, delegated: Sequence[int]) -> list[NodeSubset]:
    """PartitionGraphIntoIndependentNodeSubsets (tflite/graph_info.cc), greedily: each subset
    takes, sweep after sweep over the execution plan, every ready operator of its kind (the
    first ready operator decides the kind); a tensor read by a later subset becomes an output
    of the subset that made it; graph outputs end their maker's outputs."""
    taken = set(delegated)
    always, not_ready = -2, -1
    epochs = [always] * len(subgraph.tensors)
    for operator in subgraph.operators:
        for tensor in operator.outputs:
            if tensor >= 0:
                epochs[tensor] = not_ready
    done = [False] * len(subgraph.operators)
    subsets: list[dict[str, list[int] | bool | None]] = []
    while True:
        subset: dict[str, list[int] | bool | None] = {
            "operators": [],
            "kind": None,
            "inputs": [],
            "outputs": [],
        }
        subsets.append(subset)
        epoch = len(subsets) - 1
        progress = True
        while progress:
            progress = False
            for operator in subgraph.operators:
                if done[operator.index] or any(
                    tensor >= 0 and epochs[tensor] == not_ready for tensor in operator.inputs
                ):
                    continue
                kind = operator.index in taken
                if subset["kind"] is None:
                    subset["kind"] = kind
                if subset["kind"] != kind:
                    continue
                done[operator.index] = True
                progress = True
                _list(subset, "operators").append(operator.index)
                for tensor in operator.outputs:
                    if tensor >= 0:
                        epochs[tensor] = epoch
                for tensor in operator.inputs:
                    if tensor >= 0 and epochs[tensor] != epoch:
                        _list(subset, "inputs").append(tensor)
                        if epochs[tensor] >= 0:
                            _list(subsets[epochs[tensor]], "outputs").append(tensor)
        if not subset["operators"]:
            subsets.pop()
            break
    for tensor in subgraph.outputs:
        if tensor >= 0 and epochs[tensor] >= 0:
            _list(subsets[epochs[tensor]], "outputs").append(tensor)
    return [
        NodeSubset(
            tuple(_list(subset, "operators")),
            bool(subset["kind"]),
            tuple(sorted(set(_list(subset, "inputs")))),
            tuple(sorted(set(_list(subset, "outputs")))),
        )
        for subset in subsets
    ]


def _list(subset: dict[str, list[int] | bool | None], key: str) -> list[int]:
    value = subset[key]
    assert isinstance(value, list)
    return value


def delegated_view(model: Model) -> Model | None:
    """The model as LiteRT's planner sees it once XNNPACK has taken its partitions
    (ReplaceNodeSubsetsWithDelegateKernels): the execution plan subset by subset, each
    delegated subset one delegate node reading its inputs (constants included) and writing
    its outputs. None when the partition is not modelled (several subgraphs, or an operator
    whose acceptance is not known)."""
    if len(model.subgraphs) != 1:
        return None
    subgraph = model.subgraphs[0]
    split = partition(subgraph)
    if split.unmodelled:
        return None
    if not split.delegated:
        return model  # the delegate takes nothing: the plan is the builtin kernels'
    operators: list[Operator] = []
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            for index in subset.operators:
                operators.append(replace(subgraph.operators[index], index=len(operators)))
            continue
        first = subgraph.operators[subset.operators[0]]
        operators.append(
            replace(
                first,
                index=len(operators),
                opcode=DELEGATE_OPCODE,
                custom_code=DELEGATE_OPCODE.removeprefix("CUSTOM:"),
                inputs=subset.inputs,
                outputs=subset.outputs,
                intermediates=(),
                options=MappingProxyType({}),
                file_index=None,
            )
        )
    return replace(model, subgraphs=(replace(subgraph, operators=tuple(operators)),))


def view_arena_sizes(view: Model) -> list[int]:
    """Each arena's high-water mark as LiteRT's planner (the replica) places the view."""
    return [
        run_planner(rules.RUNTIME_PLANNER, problem.problem).arena_size
        for problem in rules.arenas(view)
    ]


# Upper bounds of the runtime's and operators' own blocks, read off the wheel's traces
# (tests/litert_heap_trace.py): xnn_operator_data is 960 B per node; a convolution's or fully
# connected operator's object, parameters and microkernel tables are at most 1,928 B in 5-6
# blocks, each up to 32 B over its request when 64-aligned; the delegate kernel's node keeps
# about 100 B per operator; a runtime value is 60 B, and the delegate's subgraph may add one
# internal value per external one (channelwise weights, reshapes).
RUNTIME_BYTES = 1_024  # xnn_runtime, the delegate kernel's Subgraph object and its vectors
OPERATOR_DATA_BYTES = 960
OPERATOR_OBJECT_BYTES = 2_080
COPY_OBJECT_BYTES = 768  # a copy operator's object and parameters (2 blocks)
DELEGATE_NODE_BYTES = 128
VALUE_BYTES = 120


def objects_bound(subgraph: Subgraph, split: XnnpackPartition) -> int:
    """Runtime and operator objects of a subgraph's delegated partitions (an upper bound)."""
    total = 0
    for subset in node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            continue
        run = subset.operators
        tensors = {
            tensor
            for index in run
            for tensor in (*subgraph.operators[index].inputs, *subgraph.operators[index].outputs)
            if tensor >= 0
        }
        total += RUNTIME_BYTES + VALUE_BYTES * len(tensors)
        total += (OPERATOR_DATA_BYTES + OPERATOR_OBJECT_BYTES + DELEGATE_NODE_BYTES) * len(run)
        copies = sum(
            1
            for index in run
            if subgraph.operators[index].opcode == "FULLY_CONNECTED"
            and not keeps_dims(subgraph.operators[index])
        )
        total += (OPERATOR_DATA_BYTES + COPY_OBJECT_BYTES) * copies
    return total


def unmodelled_only(subgraph: Subgraph, split: XnnpackPartition) -> XnnpackPartition:
    """The operators whose acceptance by the delegate is not modelled, as a partition."""
    indices = tuple(
        operator.index for operator in subgraph.operators if operator.opcode in split.unmodelled
    )
    return XnnpackPartition(indices, split.unmodelled)


def keeps_dims(operator: Operator) -> bool:
    return bool(operator.options.get("keep_num_dims", False))


# The subgraph the delegate builds for a subset (xnnpack_delegate.cc: Subgraph::Create;
# XNNPACK src/subgraph.c): its values array starts at one value per tensor the subset uses
# (`external_value_ids`) and its nodes array empty; each grows to max(min(2n, n + 512), n + 64)
# when full (xnn_subgraph_reserve_values / _nodes). Both are freed once the runtime exists.
VALUE_STRUCT_BYTES = 224  # struct xnn_value
NODE_STRUCT_BYTES = 232  # struct xnn_node
SUBGRAPH_MAPS_BYTES = 1_024  # the delegate's tensor → value maps while it defines the nodes


def _grown(capacity: int, needed: int) -> int:
    while capacity < needed:
        capacity = max(min(2 * capacity, capacity + 512), capacity + 64)
    return capacity


def subgraph_bytes(model: Model) -> int:
    """The largest subset's XNNPACK subgraph while the delegate builds it (an upper bound:
    every input counted as a tensor it uses, three internal values per weighted operator
    and one per other operator)."""
    largest = 0
    for subgraph in model.subgraphs:
        split = partition(subgraph)
        for subset in node_subsets(subgraph, split.delegated):
            if not subset.delegated:
                continue
            operators = [subgraph.operators[index] for index in subset.operators]
            tensors = {
                tensor
                for operator in operators
                for tensor in (*operator.inputs, *operator.outputs)
                if tensor >= 0
            }
            copies = sum(
                1
                for operator in operators
                if operator.opcode == "FULLY_CONNECTED" and not keeps_dims(operator)
            )
            weighted = sum(1 for operator in operators if operator.opcode in WEIGHTED)
            internal = 3 * weighted + (len(operators) - weighted) + copies
            values = _grown(len(tensors), len(tensors) + internal)
            nodes = _grown(0, len(operators) + copies)
            largest = max(
                largest,
                glibc.usable(VALUE_STRUCT_BYTES * values)
                + glibc.usable(NODE_STRUCT_BYTES * nodes)
                + SUBGRAPH_MAPS_BYTES,
            )
    return largest
