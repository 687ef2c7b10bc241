"""Channel groups: a CONV_2D and the per-channel operators after it → the chain run once per
group of output channels, joined by one CONCATENATION along the channel axis.

Each group's convolution reads the whole input with the group's filter rows, bias entries and
per-channel scales (sliced from the original, so each output channel is computed by the same
kernel arithmetic from the same numbers); a per-tensor quantized filter keeps its one scale. A
depthwise convolution after it takes the group's channels of its filter, bias and scales. No MAC
is computed twice; the sliced weights are new constants in the file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arenalens.ir import Model, Operator, Subgraph
from arenalens.split.bands import MAX_CONCAT_INPUTS, band_bounds
from arenalens.split.parts import (
    Part,
    PartOperator,
    Region,
    RegionSplit,
    Role,
    SplitKind,
    TensorRef,
    concatenation,
    macs_of,
)
from arenalens.split.regions import Rules
from arenalens.tflite.builder import QuantizationSpec
from arenalens.tflite.reader import read_quantization_scales, read_quantization_zero_points

_CHANNELS = 3
_NUMPY: dict[str, np.dtype[Any]] = {
    "INT8": np.dtype("i1"),
    "INT32": np.dtype("<i4"),
    "INT64": np.dtype("<i8"),
}


def split_channels(rules: Rules, region: Region, parts: int) -> RegionSplit | str:
    """A region (a CONV_2D, then per-channel operators) → its operators per channel group."""
    model, subgraph = rules.model, rules.subgraph
    head = subgraph.operators[region.first]
    channels = subgraph.tensors[head.outputs[0]].shape[_CHANNELS]
    if parts < 2:
        return "a split needs at least two channel groups"
    if parts > MAX_CONCAT_INPUTS:
        return f"TFLM's CONCATENATION joins at most {MAX_CONCAT_INPUTS} tensors"
    if parts > channels:
        return f"the convolution has {channels} output channels, fewer than {parts} groups"
    for index in region.operators:
        for tensor in subgraph.operators[index].inputs[1:]:
            if tensor >= 0 and subgraph.tensors[tensor].is_constant:
                dtype = subgraph.tensors[tensor].dtype.name
                if index != region.first and subgraph.operators[index].opcode == "PAD":
                    continue
                if dtype not in _NUMPY:
                    return f"operator {index} has {dtype} constants (only int8/int32/int64 sliced)"
    operators: list[PartOperator] = []
    outputs: list[TensorRef] = []
    for start, stop in band_bounds(channels, parts):
        source: TensorRef = region.source
        low, high = start, stop
        for index in region.operators:
            operator = subgraph.operators[index]
            if operator.opcode == "DEPTHWISE_CONV_2D":
                multiplier = int(operator.options.get("depth_multiplier", 1)) or 1
                low, high = low * multiplier, high * multiplier
            compute = _group_operator(model, subgraph, operator, source, (low, high))
            operators.append(compute)
            source = compute.outputs[0]
        outputs.append(source)
    result = subgraph.tensors[region.result]
    operators.append(concatenation(outputs, region, _CHANNELS, result.nbytes))
    original = sum(
        macs_of(
            subgraph.operators[i].opcode,
            subgraph.tensors[subgraph.operators[i].outputs[0]].shape,
            subgraph.tensors[subgraph.operators[i].inputs[1]].shape
            if len(subgraph.operators[i].inputs) > 1
            else (),
        )
        for i in region.operators
    )
    return RegionSplit(SplitKind.CHANNELS, region, parts, tuple(operators), original)


def _group_operator(
    model: Model,
    subgraph: Subgraph,
    operator: Operator,
    source: TensorRef,
    channels: tuple[int, int],
) -> PartOperator:
    """One operator on channels [low, high) of its output."""
    low, high = channels
    output = subgraph.tensors[operator.outputs[0]]
    inputs: list[TensorRef] = [source, *operator.inputs[1:]]
    weights_shape: tuple[int, ...] = ()
    if operator.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        axis = 0 if operator.opcode == "CONV_2D" else 3
        weights = _sliced(model, subgraph, operator.inputs[1], axis=axis, channels=channels)
        inputs[1] = weights
        weights_shape = weights.shape
        if len(operator.inputs) > 2 and operator.inputs[2] >= 0:
            inputs[2] = _sliced(model, subgraph, operator.inputs[2], axis=0, channels=channels)
    part = Part(
        f"{output.name}/channels{low}-{high}",
        (*output.shape[:3], high - low),
        like=operator.outputs[0],
    )
    options: dict[str, Any] = dict(operator.options)
    return PartOperator(
        operator.opcode,
        tuple(inputs),
        (part,),
        tuple(sorted(options.items())) if options else (),
        origin=operator.index,
        role=Role.COMPUTE,
        macs=macs_of(operator.opcode, part.shape, weights_shape),
        version=operator.version,
    )


def _sliced(
    model: Model,
    subgraph: Subgraph,
    tensor_index: int,
    *,
    axis: int,
    channels: tuple[int, int],
) -> Part:
    """Channels [low, high) of a constant along `axis`, with its per-channel quantization."""
    low, high = channels
    tensor = subgraph.tensors[tensor_index]
    values: np.ndarray[Any, Any] = np.frombuffer(
        model.buffer_bytes(tensor.buffer), dtype=_NUMPY[tensor.dtype.name]
    )
    values = values.reshape(tensor.shape)
    taken = np.take(values, range(low, high), axis=axis)
    scales = read_quantization_scales(model, subgraph.index, tensor_index)
    quantization: QuantizationSpec | None = None
    like: int | None = tensor_index
    if len(scales) > 1:
        zero_points = read_quantization_zero_points(model, subgraph.index, tensor_index)
        quantization = QuantizationSpec(
            tuple(scales[low:high]),
            tuple(zero_points[low:high])
            if len(zero_points) == len(scales)
            else (0,) * (high - low),
            tensor.quantization.axis if tensor.quantization is not None else axis,
        )
        like = None
    return Part(
        f"{tensor.name}/channels{low}-{high}",
        tuple(int(d) for d in taken.shape),
        like=like,
        dtype=tensor.dtype.name,
        data=np.ascontiguousarray(taken).tobytes(),
        quantization=quantization,
    )
