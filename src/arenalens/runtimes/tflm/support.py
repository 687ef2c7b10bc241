"""Can TFLM set this model up: model → the reasons its setup fails whatever the arena size."""

from collections.abc import Mapping
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.tensor_bytes import TFLM_ELEMENT_BYTES, tflm_tensor_bytes

# Kernels that refuse float activations with int8 weights ("hybrid" models), and the input slot
# that holds the weights (the activation input is 0, or 2 for TRANSPOSE_CONV).
_HYBRID_WEIGHTS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "FULLY_CONNECTED": (0, 1),
        "CONV_2D": (0, 1),
        "DEPTHWISE_CONV_2D": (0, 1),
        "TRANSPOSE_CONV": (2, 1),
        "SVDF": (0, 1),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": (0, 2),
    }
)


def _kernel_refusals(subgraph: Subgraph, operator: Operator, label: str) -> list[str]:
    """Prepare-time refusals of the reference kernels that depend only on tensor types."""
    if operator.opcode == "CUSTOM:ethos-u":
        return [f"{label}: the tflite_micro pip package has no ethos-u kernel (device builds do)"]
    slots = _HYBRID_WEIGHTS.get(operator.opcode)
    if slots is None or max(slots) >= len(operator.inputs):
        return []
    activation, weights = (operator.inputs[slot] for slot in slots)
    if activation < 0 or weights < 0:
        return []
    types = (subgraph.tensors[activation].dtype.name, subgraph.tensors[weights].dtype.name)
    if types[0] == "FLOAT32" and types[1] in ("INT8", "INT4", "UINT8"):
        return [f"{label}: float32 input with {types[1]} weights: hybrid models are not supported"]
    return []


def setup_failures(model: Model) -> list[str]:
    """Reasons TFLM's setup would fail on this model whatever the arena size (§2.1-2.2)."""
    found: list[str] = []
    for subgraph in model.subgraphs:
        where = f"subgraph {subgraph.index}"
        unsized = [t for t in subgraph.tensors if t.dtype.name not in TFLM_ELEMENT_BYTES]
        if unsized:
            tensor = unsized[0]
            found.append(
                f"TFLM cannot size tensor {tensor.index} '{tensor.name}' of {where} "
                f"({tensor.dtype.name}): setup fails"
            )
        for operator in subgraph.operators:
            label = f"operator {operator.index} ({operator.opcode}) of {where}"
            found.extend(_kernel_refusals(subgraph, operator, label))
            for index in operator.outputs:
                shape = subgraph.tensors[index].shape if index >= 0 else ()
                if shape != (0,) and any(dim <= 0 for dim in shape):
                    found.append(
                        f"{label} has output {index} with shape {list(shape)}: "
                        "'Dynamic tensors are not supported'"
                    )
            for index in operator.intermediates:
                if index >= 0 and tflm_tensor_bytes(subgraph.tensors[index]) != 0:
                    found.append(
                        f"{label} has a non-empty intermediate tensor {index}: "
                        "'Does not support intermediate tensor with non-zero size'"
                    )
    found.extend(resource_variables(model).failures)
    return found
