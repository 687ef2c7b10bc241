"""Which float tensors of the primary subgraph hold only zeros when every model input is zeros
(the wheel measurement's inputs): what decides whether a FULLY_CONNECTED's EvalHybridDense
makes its int4 filter's int8 copy (fully_connected.cc: `IsZeroVector` over the whole input
returns before it), for the all-zero-inputs way (heap_ways).

A forward walk over the operators in order, three values per float tensor: all zeros (True),
some element not zero (False), not known (absent). Model inputs are zeros; a constant is read;
a weighted operator on a zero input writes its activation of its bias (a constant); an element-
wise operator of zeros writes its activation of zero; operators that move, pick or pool their
input's elements keep zeros zeros (and, where they keep every element, non-zeros non-zeros, as
x + 0, x + x and x times non-zero constants do without an activation); LOGISTIC, EXP, COS and
SOFTMAX are taken as never all zeros. Anything else (a variable, an integer or quantized
tensor, a weighted operator of a non-zero input, an operator not listed) is not known, and the
way that reads it is not claimed exact. Only "all zeros" skips a copy, so a "not zeros" taken
wrongly errs high, never under.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence

from arenalens.ir import Model, Operator, Subgraph

# ActivationFunctionType (the schema): NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT.
_ACTIVATIONS: dict[int, Callable[[float], float]] = {
    0: lambda v: v,
    1: lambda v: max(0.0, v),
    2: lambda v: min(1.0, max(-1.0, v)),
    3: lambda v: min(6.0, max(0.0, v)),
    4: math.tanh,
    5: lambda v: 1.0 if math.copysign(1.0, v) < 0 else 0.0,
}
_WEIGHTED = frozenset({"FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D"})
_ELEMENTWISE = frozenset({"ADD", "SUB", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"})
# f(0) == 0, element by element or by moving, picking, pooling or reducing the first input's
# elements (the rest are shapes, axes, indices or paddings of zero).
_KEEPS_ZEROS = frozenset(
    {
        "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "TANH", "LEAKY_RELU", "HARD_SWISH",
        "GELU", "ELU", "SIN", "SQUARE", "SQRT", "NEG", "ABS", "RESHAPE", "SQUEEZE",
        "EXPAND_DIMS", "TRANSPOSE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "TILE", "BROADCAST_TO",
        "PAD", "MIRROR_PAD", "SLICE", "STRIDED_SLICE", "GATHER", "AVERAGE_POOL_2D",
        "MAX_POOL_2D", "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "RESIZE_BILINEAR",
        "RESIZE_NEAREST_NEIGHBOR", "L2_NORMALIZATION", "SPLIT", "SPLIT_V", "UNPACK",
        "REVERSE_V2",
    }
)  # fmt: skip
# Of those, the ones whose output holds every input element (a non-zero stays).
_KEEPS_ELEMENTS = frozenset(
    {
        "NEG", "ABS", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "DEPTH_TO_SPACE",
        "SPACE_TO_DEPTH", "TILE", "BROADCAST_TO", "PAD", "MIRROR_PAD", "REVERSE_V2",
    }
)  # fmt: skip
# f(0) != 0: logistic 0.5, exp 1, softmax 1/n, cos 1.
_NEVER_ZERO_OF_ZEROS = frozenset({"LOGISTIC", "EXP", "SOFTMAX", "COS"})
_JOINS = frozenset({"CONCATENATION", "PACK"})


def zero_tensors(model: Model) -> dict[int, bool]:
    """The primary subgraph's float tensors by index → all zeros (True) or not (False) when
    every model input is zeros; a tensor not known is absent."""
    if not model.subgraphs:
        return {}
    subgraph = model.subgraphs[0]
    known: dict[int, bool] = {}
    for tensor in subgraph.tensors:
        if tensor.dtype.name != "FLOAT32" or tensor.is_variable:
            continue
        if tensor.index in subgraph.inputs:
            known[tensor.index] = True
        elif tensor.has_data:
            values = _floats(model, subgraph, tensor.index)
            if values is not None:
                known[tensor.index] = all(value == 0.0 for value in values)
    for operator in subgraph.operators:
        states = _outputs(model, subgraph, operator, known)
        for output, state in zip(operator.outputs, states, strict=False):  # () not known
            if state is not None and output >= 0 and _float(subgraph, output):
                known.setdefault(output, state)
    return known


def _outputs(
    model: Model, subgraph: Subgraph, operator: Operator, known: dict[int, bool]
) -> Sequence[bool | None]:
    """Each output's state (None: not known)."""
    opcode, inputs = operator.opcode, operator.inputs
    floats = [known.get(i) if i >= 0 and _float(subgraph, i) else None for i in inputs]
    count = len(operator.outputs)
    activation = _ACTIVATIONS.get(int(operator.options.get("fused_activation_function", 0)))
    if opcode in _WEIGHTED:
        if len(inputs) < 2 or floats[0] is not True or activation is None:
            return ()
        bias = inputs[2] if len(inputs) > 2 else -1
        if bias < 0:
            return (activation(0.0) == 0.0,)
        values = _floats(model, subgraph, bias) if subgraph.tensors[bias].has_data else None
        if values is None:
            return ()
        return (all(activation(value) == 0.0 for value in values),)
    if opcode in _ELEMENTWISE or opcode == "MUL":
        if len(floats) != 2 or activation is None:
            return ()
        zero = activation(0.0) == 0.0
        if opcode == "MUL" and True in floats:
            return (zero,)
        if floats == [True, True]:
            return (zero,)
        plain = _keeps_nonzero(operator)
        if opcode in ("ADD", "SUB") and True in floats and False in floats:
            return (False,) if plain else ()  # x + 0, 0 - x: every element of x
        if opcode == "ADD" and inputs[0] == inputs[1] and floats[0] is False:
            return (False,) if plain else ()  # x + x
        if opcode == "MUL" and floats[0] is False and _nonzero_constant(model, subgraph, inputs[1]):
            return (False,) if plain else ()  # x times constants none of which is zero
        return ()
    data = next((state for state in floats if state is not None), None)
    if opcode in _KEEPS_ZEROS:
        if data is True:
            return (True,) * count
        return (False,) * count if data is False and opcode in _KEEPS_ELEMENTS else ()
    if opcode in _NEVER_ZERO_OF_ZEROS:
        # Of zeros: not zeros. Of anything else: not all zeros either unless every element
        # lies below about -88 (exp underflows); counted as not zeros, which errs high.
        return (False,) if data is not None else ()
    if opcode in _JOINS and floats and all(state is not None for state in floats):
        if all(floats):
            return (activation is not None and activation(0.0) == 0.0,)
        return (False,) if activation is not None and _keeps_nonzero(operator) else ()
    return ()


def _keeps_nonzero(operator: Operator) -> bool:
    """No fused activation (one could clamp a non-zero to zero)."""
    return int(operator.options.get("fused_activation_function", 0)) == 0


def _nonzero_constant(model: Model, subgraph: Subgraph, index: int) -> bool:
    """A constant float tensor none of whose values is zero."""
    if not (_float(subgraph, index) and subgraph.tensors[index].has_data):
        return False
    values = _floats(model, subgraph, index)
    return values is not None and all(value != 0.0 for value in values)


def _float(subgraph: Subgraph, index: int) -> bool:
    return 0 <= index < len(subgraph.tensors) and subgraph.tensors[index].dtype.name == "FLOAT32"


def _floats(model: Model, subgraph: Subgraph, index: int) -> tuple[float, ...] | None:
    """A constant float tensor's values (None when its buffer is shorter than its shape)."""
    tensor = subgraph.tensors[index]
    if not 0 <= tensor.buffer < len(model.buffers):
        return None
    raw = model.buffer_bytes(tensor.buffer)
    count = tensor.element_count
    if count < 0 or len(raw) < 4 * count:
        return None
    return struct.unpack(f"<{count}f", raw[: 4 * count])
