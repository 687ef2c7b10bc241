"""Control flow: IF, WHILE, CALL_ONCE → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): if.cc, while.cc, call_once.cc. Each Init
allocates an OpData of two ints (IF, WHILE: the subgraph indices; CALL_ONCE: the index and a
has_run flag). Their Prepare only checks the called subgraphs' arity; IF alone fetches a temp
tensor (its condition). The subgraphs' own operators are prepared in subgraph order like any
other (micro_interpreter_graph.cc — PrepareSubgraphs), and CALL_ONCE runs its init subgraph at
the first Invoke, which allocates nothing more.
"""

from __future__ import annotations

from arenalens.ir import Model
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import elements, op_data
from arenalens.runtimes.tflm.kernels.refusals import TFLITE_TYPES, not_equal, not_true

_IF_PARAMS = struct(
    "TfLiteIfParams", ("then_subgraph_index", "int"), ("else_subgraph_index", "int")
)
_IF_OP_DATA = struct("OpData", ("then_subgraph_index", "int"), ("else_subgraph_index", "int"))
_WHILE_PARAMS = struct(
    "TfLiteWhileParams", ("cond_subgraph_index", "int"), ("body_subgraph_index", "int")
)
_WHILE_OP_DATA = struct("OpData", ("cond_subgraph_index", "int"), ("body_subgraph_index", "int"))
_CALL_ONCE_PARAMS = struct("TfLiteCallOnceParams", ("init_subgraph_index", "int"))
_CALL_ONCE_OP_DATA = struct("OpData", ("init_subgraph_index", "int"), ("has_run", "bool"))


def _arity(model: Model, index: int, role: str) -> int:
    """NumSubgraphInputs / NumSubgraphOutputs of a (valid) subgraph index."""
    subgraph = model.subgraphs[index]
    return len(subgraph.inputs if role == "inputs" else subgraph.outputs)


def _past_subgraphs(context: base.KernelContext, file: str, *options: str) -> list[base.Event]:
    """`TF_LITE_ENSURE(context, op_data-><option> < graph_info.NumSubgraphs())` for each subgraph
    index option, in order: the first that fails (signed: a negative index passes here)."""
    count = len(context.model.subgraphs)
    for option in options:
        if context.option(option) >= count:
            return [not_true(file, f"op_data->{option} < graph_info.NumSubgraphs()")]
    return []


def _if(context: base.KernelContext) -> base.Events:
    # The condition only (a quantized condition pays its quantization copies too).
    file = "if.cc"
    operator = context.operator
    if not operator.inputs:
        return [not_true(file, "node->inputs->size > 0")]
    found = base.temps(context, ("in", 0))
    return [*found, *_if_checks(context, file)]


def _if_checks(context: base.KernelContext, file: str) -> list[base.Event]:
    condition = context.input(0)
    if condition is None:
        return [not_true(file, "cond != nullptr")]
    if condition.dtype.name != "BOOL":
        number = TFLITE_TYPES.get(condition.dtype.name)
        return [not_equal(file, "cond->type", "kTfLiteBool", number, 6)]
    if elements(condition) != 1:
        return [not_equal(file, "NumElements(cond)", "1", elements(condition), 1)]
    then_index = context.option("then_subgraph_index")
    # Indices are compared signed: a negative else index passes (and crashes at Invoke).
    refused = _past_subgraphs(context, file, "then_subgraph_index", "else_subgraph_index")
    if refused:
        return refused
    if then_index < 0:
        return [
            base.Refusal(
                f"{file}: negative then_subgraph_index {then_index}: TFLM reads out of bounds"
            )
        ]
    inputs = len(context.operator.inputs) - 1
    outputs = len(context.operator.outputs)
    # Only the then branch's arity is checked.
    for role, have in (("inputs", inputs), ("outputs", outputs)):
        want = _arity(context.model, then_index, role)
        if have != want:
            name = "NumSubgraphInputs" if role == "inputs" else "NumSubgraphOutputs"
            return [
                not_equal(
                    file,
                    f"num_{role}",
                    f"graph_info.{name}(op_data->then_subgraph_index)",
                    have,
                    want,
                )
            ]
    return []


def _while(context: base.KernelContext) -> base.Events:
    # No temp tensors: only the subgraphs' arity is checked.
    file = "while.cc"
    cond_index = context.option("cond_subgraph_index")
    body_index = context.option("body_subgraph_index")
    refused = _past_subgraphs(context, file, "cond_subgraph_index", "body_subgraph_index")
    if refused:
        return refused
    if min(cond_index, body_index) < 0:
        return [base.Refusal(f"{file}: negative subgraph index: TFLM reads out of bounds")]
    inputs, outputs = len(context.operator.inputs), len(context.operator.outputs)
    for name, want in (
        (
            "graph_info.NumSubgraphInputs(op_data->cond_subgraph_index)",
            _arity(context.model, cond_index, "inputs"),
        ),
        (
            "graph_info.NumSubgraphInputs(op_data->body_subgraph_index)",
            _arity(context.model, body_index, "inputs"),
        ),
        ("num_outputs", outputs),
    ):
        if inputs != want:
            return [not_equal(file, "num_inputs", name, inputs, want)]
    body_outputs = _arity(context.model, body_index, "outputs")
    if outputs != body_outputs:
        return [
            not_equal(
                file,
                "num_outputs",
                "graph_info.NumSubgraphOutputs(op_data->body_subgraph_index)",
                outputs,
                body_outputs,
            )
        ]
    return []


def _call_once(context: base.KernelContext) -> base.Events:
    # No temp tensors; the init subgraph runs at the first Invoke.
    file = "call_once.cc"
    if context.operator.inputs:
        return [not_true(file, "NumInputs(node) == 0")]
    if context.operator.outputs:
        return [not_true(file, "NumOutputs(node) == 0")]
    if context.option("init_subgraph_index") >= len(context.model.subgraphs):
        return [not_true(file, "op_data->init_subgraph_index < graph_info.NumSubgraphs()")]
    return []


RULES = (
    base.KernelRule(
        "IF",
        "if.cc",
        _IF_PARAMS,
        op_data(_IF_OP_DATA),
        _if,
        access=base.NoOverlap("control flow: the subgraphs read the inputs"),
        operands=base.operands("condition", "input*", outputs=(0, None)),
    ),
    base.KernelRule(
        "WHILE",
        "while.cc",
        _WHILE_PARAMS,
        op_data(_WHILE_OP_DATA),
        _while,
        access=base.NoOverlap("control flow: the subgraphs read the inputs"),
        operands=base.operands("input*", outputs=(0, None)),
    ),
    base.KernelRule(
        "CALL_ONCE",
        "call_once.cc",
        _CALL_ONCE_PARAMS,
        op_data(_CALL_ONCE_OP_DATA),
        _call_once,
        access=base.NoOverlap("control flow"),
        operands=base.operands(outputs=(0, 0)),
    ),
)
