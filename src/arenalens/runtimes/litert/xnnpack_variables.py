"""Which resource-variable operators LiteRT's XNNPACK delegate takes, from its sources
(*tflite/delegates/xnnpack/xnnpack_delegate.cc*, v2.2.0 and later: variable support is always
on, the `TFLITE_XNNPACK_DELEGATE_FLAG_VARIABLE_OPERATORS` flag and `handle_variable_ops` only
log that they are deprecated).

* **READ_VARIABLE / ASSIGN_VARIABLE** (`VisitReadVariableNode`, `VisitAssignVariableNode`):
  the value read or assigned passes `CheckTensorFloatOrQUInt8Type` (float, or signed 8-bit
  with one scale; unsigned 8-bit only with the delegate's QU8 flag, off by default), a read's
  output has a rank (a rank-0 output stays on the builtin kernel), and the value becomes the
  resource's proxy (`ResourceInfo::AddProxyValue`): the first one taken fixes its type and
  shape, a later one of another type or shape is left to the builtin kernel, and none is taken
  before a VAR_HANDLE has named the resource.
* **VAR_HANDLE** (`VisitVarHandleNode`): always refused on the first pass ("we don't know the
  type of this variable yet"); once every node is visited, `PrepareOpsToDelegate` appends the
  VAR_HANDLE of each resource that got a proxy value. A handle nothing reads or assigns, or
  whose every access was refused, stays on the builtin kernel.

LiteRT's greedy partition then puts the taken handles, which read nothing, in the first
delegated subset: a delegate kernel with no XNNPACK node (a VAR_HANDLE materialises nothing)
whose outputs are the resource tensors (the 2.3.0 wheel: xcase_resource_variables, three
delegate kernels). partition() takes what `taken` names; what the kernels then hold is
replayed: each read and assignment a copy node (xnnpack_workspace; fused into its reader or
writer where the value between is internal), the delegate's resource and name maps
(xnnpack_objects), each variable made at the first kernel's first invoke, shaped as its proxy
(heap_resources).
"""

from __future__ import annotations

from arenalens.ir import Operator, Subgraph, Tensor

OPCODES = frozenset(("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"))
_CONTROL_FLOW = frozenset(("IF", "WHILE", "CALL_ONCE"))


def side_effect(subgraph: Subgraph, operator: Operator) -> bool:
    """An operator reading or writing a resource tensor, or an IF, WHILE or CALL_ONCE (whose
    subgraphs may: Subgraph::OpMightHaveSideEffect; LiteRT's partition chains them,
    heap_xnnpack.node_subsets)."""
    return operator.opcode in _CONTROL_FLOW or any(
        subgraph.tensors[tensor].dtype.name == "RESOURCE"
        for tensor in (*operator.inputs, *operator.outputs)
        if tensor >= 0
    )


def _value(subgraph: Subgraph, operator: Operator) -> Tensor | None:
    """The tensor a read writes or an assignment reads (the resource's proxy candidate)."""
    if operator.opcode == "READ_VARIABLE":
        index = operator.outputs[0] if operator.outputs else -1
    else:
        index = operator.inputs[1] if len(operator.inputs) > 1 else -1
    return subgraph.tensors[index] if index >= 0 else None


def _value_type_fits(tensor: Tensor) -> bool | None:
    """CheckTensorFloatOrQUInt8Type with the default options; None where not modelled."""
    kind = tensor.dtype.name
    if kind in ("FLOAT32", "FLOAT16"):
        return True
    if kind == "INT8":
        quantization = tensor.quantization
        return (
            quantization is not None and quantization.channel_count == 1 and not quantization.axis
        )
    return None if kind == "UINT8" else False


def taken(subgraph: Subgraph) -> frozenset[int] | None:
    """The indices of the variable operators the delegate takes, or None when one's
    acceptance is not modelled (an unsigned 8-bit value)."""
    found = _visit(subgraph)
    return None if found is None else found[0]


def proxies(subgraph: Subgraph) -> dict[int, Tensor]:
    """Resource tensor → its proxy value (ResourceInfo::GetProxyValue), for the resources the
    delegate takes; empty when acceptance is not modelled."""
    found = _visit(subgraph)
    return {} if found is None else found[1]


def proxied_read(subgraph: Subgraph, index: int) -> bool:
    """Operator `index` is a READ_VARIABLE whose resource the delegate proxies: even when the
    read stays with the builtin kernel (a rank-0 read), the delegate kernel holding the
    resource's VAR_HANDLE has made the variable before it runs."""
    read = subgraph.operators[index]
    return (
        read.opcode == "READ_VARIABLE" and bool(read.inputs) and read.inputs[0] in proxies(subgraph)
    )


def _visit(subgraph: Subgraph) -> tuple[frozenset[int], dict[int, Tensor]] | None:
    handles: dict[int, int] = {}  # resource tensor -> the VAR_HANDLE naming it
    proxied: dict[int, Tensor] = {}  # resource tensor -> its proxy value
    chosen: set[int] = set()
    for operator in subgraph.operators:
        if operator.opcode == "VAR_HANDLE":
            if operator.outputs and operator.outputs[0] >= 0:
                handles[operator.outputs[0]] = operator.index
            continue
        if operator.opcode not in ("READ_VARIABLE", "ASSIGN_VARIABLE") or not operator.inputs:
            continue
        resource = operator.inputs[0]
        value = _value(subgraph, operator)
        if value is None or resource not in handles:
            continue
        if operator.opcode == "READ_VARIABLE" and not value.shape:
            continue  # an unranked or scalar read stays on the builtin kernel
        fits = _value_type_fits(value)
        if fits is None:
            return None
        proxy = proxied.setdefault(resource, value) if fits else None
        if proxy is not None and (proxy.dtype, proxy.shape) == (value.dtype, value.shape):
            chosen.add(operator.index)
    chosen.update(handles[resource] for resource in proxied)
    return frozenset(chosen), proxied


def quantization_failures(subgraph: Subgraph) -> tuple[tuple[int, int, int], ...]:
    """Taken reads and assignments whose 8-bit value is quantized otherwise than the
    resource's proxy, as (operator, resource tensor, value tensor). The delegate's first
    pass accepts them (ResourceInfo::AddProxyValue compares type and shape only); defining
    the copy then fails (xnn_define_copy: xnn_subgraph_check_quantization_parameter_matches),
    "failed to delegate ASSIGN_VARIABLE node", so the delegate kernel's Prepare and
    allocate_tensors() fail. Measured on the 2.3.0 wheel: var7_3, var7_4 and var7_8 of
    tests/litert_variable_cases.py, each at the node named here."""
    found = _visit(subgraph)
    if found is None:
        return ()
    chosen, proxied = found
    failures = []
    for operator in subgraph.operators:
        if operator.index not in chosen or operator.opcode == "VAR_HANDLE":
            continue
        value = _value(subgraph, operator)
        proxy = proxied.get(operator.inputs[0])
        if value is None or proxy is None or value.dtype.name not in ("INT8", "UINT8"):
            continue
        if _quantization(value) != _quantization(proxy):
            failures.append((operator.index, operator.inputs[0], value.index))
    return tuple(failures)


def _quantization(tensor: Tensor) -> tuple[float, int] | None:
    """The scale (as the float32 XNNPACK is given) and zero point of a one-scale tensor."""
    import struct  # noqa: PLC0415

    quantization = tensor.quantization
    if quantization is None or quantization.scale is None:
        return None
    scale = struct.unpack("<f", struct.pack("<f", float(quantization.scale)))[0]
    return scale, int(quantization.zero_point or 0)
