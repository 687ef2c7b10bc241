"""Spatial bands: a region → its operators run once per band of output rows, with the halo each
band's windows need, then joined by one CONCATENATION along the height axis.

Per band, the rows every tensor must hold are found backwards from the result's band (a window
of k rows at stride s needs (n - 1) * s + dilated k input rows for n output rows; PAD and
elementwise operators map rows one to one); a tensor several operators read holds the hull of
what they need, and each reader that needs less gets a STRIDED_SLICE. Where a window hangs over
the image border (height or width), TFLM's implicit padding becomes an explicit PAD (the input's
zero point; the int8 minimum before max pooling) and the kernel runs with VALID padding: the same
bytes (`operators.py` says why). A band's rows are computed by every band whose halo covers them:
the extra MACs are reported.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from arenalens.ir import Operator, Subgraph
from arenalens.split.operators import INT8_MIN, VALID, PadFill, RowRule
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

# TFLM's CONCATENATION takes at most this many inputs (concatenation.cc kMaxInputNum).
MAX_CONCAT_INPUTS = 10
_HEIGHT = 1

Rows = tuple[int, int]


def band_bounds(height: int, parts: int) -> tuple[Rows, ...]:
    """Rows [0, height) → `parts` bands as equal as rows allow (larger bands first)."""
    base, extra = divmod(height, parts)
    bounds: list[Rows] = []
    start = 0
    for index in range(parts):
        stop = start + base + (1 if index < extra else 0)
        bounds.append((start, stop))
        start = stop
    return tuple(bounds)


def split_bands(rules: Rules, region: Region, parts: int) -> RegionSplit | str:
    """A region → the operators that compute its result in `parts` bands of rows, or why not."""
    subgraph = rules.subgraph
    result = subgraph.tensors[region.result]
    height = result.shape[_HEIGHT]
    if parts < 2:
        return "a split needs at least two bands"
    if parts > MAX_CONCAT_INPUTS:
        return f"TFLM's CONCATENATION joins at most {MAX_CONCAT_INPUTS} tensors"
    if parts > height:
        return f"{result.name} has {height} rows, fewer than {parts} bands"
    row_rules = [rules.rows[i] for i in region.operators]
    checked: list[RowRule] = []
    for rule in row_rules:
        if isinstance(rule, str):
            return rule
        checked.append(rule)
    operators: list[PartOperator] = []
    outputs: list[TensorRef] = []
    for band, rows in enumerate(band_bounds(height, parts)):
        needs = _needs(subgraph, region, checked, rows)
        if isinstance(needs, str):
            return f"band {band}: {needs}"
        emitted = _emit_band(rules, region, checked, needs, band)
        if isinstance(emitted, str):
            return f"band {band}: {emitted}"
        band_operators, output = emitted
        operators.extend(band_operators)
        outputs.append(output)
    operators.append(concatenation(outputs, region, _HEIGHT, result.nbytes))
    original = sum(_macs(subgraph, subgraph.operators[i]) for i in region.operators)
    return RegionSplit(SplitKind.BANDS, region, parts, tuple(operators), original)


def _needs(
    subgraph: Subgraph, region: Region, rules: Sequence[RowRule], rows: Rows
) -> dict[int, Rows] | str:
    """The rows each tensor the region writes must hold for one band of the result."""
    needs: dict[int, Rows] = {region.result: rows}
    for rule in reversed(rules):
        operator = subgraph.operators[rule.operator]
        output = operator.outputs[0]
        if output not in needs:
            return f"operator {rule.operator}'s output is not needed by the band"
        start, stop = needs[output]
        for tensor in rule.activations:
            if tensor == region.source:
                continue
            height = subgraph.tensors[tensor].shape[_HEIGHT]
            first, last = rule.reads(start, stop)
            clipped = (max(first, 0), min(last, height))
            if clipped[0] >= clipped[1]:
                return f"operator {rule.operator} reads only padding"
            held = needs.get(tensor)
            needs[tensor] = (
                clipped if held is None else (min(held[0], clipped[0]), max(held[1], clipped[1]))
            )
    return needs


def _emit_band(
    rules: Rules,
    region: Region,
    row_rules: Sequence[RowRule],
    needs: dict[int, Rows],
    band: int,
) -> tuple[list[PartOperator], TensorRef] | str:
    """One band's operators: slices and pads of each input, then the kernel on the band."""
    subgraph = rules.subgraph
    source = subgraph.tensors[region.source]
    # Tensor → (what holds its band, the rows that holds).
    held: dict[int, tuple[TensorRef, Rows]] = {
        region.source: (region.source, (0, source.shape[_HEIGHT]))
    }
    emitted: list[PartOperator] = []
    for rule in row_rules:
        operator = subgraph.operators[rule.operator]
        output_index = operator.outputs[0]
        output = subgraph.tensors[output_index]
        start, stop = needs[output_index]
        inputs: list[TensorRef] = list(operator.inputs)
        padded: tuple[int, int] = (0, 0)
        for position, tensor in enumerate(operator.inputs):
            if tensor not in rule.activations:
                continue
            height = subgraph.tensors[tensor].shape[_HEIGHT]
            first, last = rule.reads(start, stop)
            clipped = (max(first, 0), min(last, height))
            if clipped[0] >= clipped[1]:
                return f"operator {rule.operator} reads only padding"
            holder, rows = held[tensor]
            if rows != clipped:
                sliced = _slice(
                    subgraph,
                    tensor,
                    holder,
                    rows=rows,
                    wanted=clipped,
                    band=band,
                    reader=rule.operator,
                )
                emitted.append(sliced)
                holder = sliced.outputs[0]
            padded = (clipped[0] - first, last - clipped[1])
            if rule.rows is not None:
                pad = _explicit_pad(subgraph, rule, tensor, holder, rows=padded, band=band)
                if isinstance(pad, str):
                    return pad
                if pad is not None:
                    emitted.append(pad)
                    holder = pad.outputs[0]
            inputs[position] = holder
        part = Part(
            f"{output.name}/band{band}",
            (output.shape[0], stop - start, *output.shape[2:]),
            like=output_index,
        )
        compute = _compute(subgraph, rule, operator, tuple(inputs), output=part, padded=padded)
        if compute is None:
            # A PAD that pads nothing in this band: its band is its input's.
            held[output_index] = (inputs[0], (start, stop))
            continue
        emitted.append(compute)
        held[output_index] = (part, (start, stop))
    result, _ = held[region.result]
    if isinstance(result, int):
        return "the band computes nothing"
    return emitted, result


def _slice(
    subgraph: Subgraph,
    tensor: int,
    holder: TensorRef,
    *,
    rows: Rows,
    wanted: Rows,
    band: int,
    reader: int,
) -> PartOperator:
    """STRIDED_SLICE of rows `wanted` out of `holder`, which holds rows `rows` of `tensor`."""
    original = subgraph.tensors[tensor]
    shape = (original.shape[0], rows[1] - rows[0], *original.shape[2:])
    begin = (0, wanted[0] - rows[0], 0, 0)
    end = (shape[0], wanted[1] - rows[0], shape[2], shape[3])
    name = f"{original.name}/band{band}/rows{wanted[0]}-{wanted[1]}"
    part = Part(name, (shape[0], wanted[1] - wanted[0], *shape[2:]), like=tensor)
    return PartOperator(
        "STRIDED_SLICE",
        (
            holder,
            _int32s(f"{name}/begin", begin),
            _int32s(f"{name}/end", end),
            _int32s("split/strides", (1, 1, 1, 1)),
        ),
        (part,),
        (),
        origin=reader,
        role=Role.SLICE,
        copied=part.nbytes,
        version=2,
    )


def _explicit_pad(
    subgraph: Subgraph,
    rule: RowRule,
    tensor: int,
    holder: TensorRef,
    *,
    rows: tuple[int, int],
    band: int,
) -> PartOperator | str | None:
    """The PAD (or PADV2) that makes a window's implicit padding explicit, None when the band
    needs none."""
    assert rule.rows is not None and rule.cols is not None
    original = subgraph.tensors[tensor]
    output = subgraph.tensors[subgraph.operators[rule.operator].outputs[0]]
    width = original.shape[2]
    left = rule.cols.before
    right = max(0, (output.shape[2] - 1) * rule.cols.stride + rule.cols.effective - width - left)
    if rows == (0, 0) and left == 0 and right == 0:
        return None
    if rule.fill is PadFill.NONE:
        return (
            f"{rule.opcode} (operator {rule.operator}) would need explicit padding, and it "
            "divides by the number of points inside the image"
        )
    padded_width = width + left + right
    valid_width = (padded_width - rule.cols.effective) // rule.cols.stride + 1
    if valid_width != output.shape[2]:
        return f"operator {rule.operator}: padded width gives {valid_width} columns"
    source_rows = _rows_of(holder, original.shape[_HEIGHT])
    name = f"{original.name}/band{band}/padded{rule.operator}"
    part = Part(
        name,
        (original.shape[0], source_rows + rows[0] + rows[1], padded_width, original.shape[3]),
        like=tensor,
    )
    paddings = _int32s(f"{name}/paddings", (0, 0, rows[0], rows[1], left, right, 0, 0), (4, 2))
    inputs: tuple[TensorRef, ...] = (holder, paddings)
    opcode = "PAD"
    if rule.fill is PadFill.INT8_MIN:
        opcode = "PADV2"
        value = Part("split/int8_min", (1,), like=tensor, data=struct.pack("<b", INT8_MIN))
        inputs = (holder, paddings, value)
    return PartOperator(
        opcode,
        inputs,
        (part,),
        (),
        origin=rule.operator,
        role=Role.PAD,
        copied=part.nbytes,
        version=2,
    )


def _compute(
    subgraph: Subgraph,
    rule: RowRule,
    operator: Operator,
    inputs: tuple[TensorRef, ...],
    *,
    output: Part,
    padded: tuple[int, int],
) -> PartOperator | None:
    """The original kernel on the band (VALID padding for windows), or None for a PAD that has
    nothing to pad in this band."""
    options = dict(operator.options)
    if rule.rows is not None:
        options["padding"] = VALID
        weights = subgraph.tensors[operator.inputs[1]].shape if len(operator.inputs) > 1 else ()
        return PartOperator(
            rule.opcode,
            inputs,
            (output,),
            tuple(sorted(options.items())),
            origin=rule.operator,
            role=Role.COMPUTE,
            macs=macs_of(rule.opcode, output.shape, weights),
            version=operator.version,
        )
    if rule.opcode == "PAD":
        n, (top, bottom), w, c = rule.paddings
        top, bottom = padded
        values = (*n, top, bottom, *w, *c)
        if not any(values):
            return None
        paddings = _int32s(f"{output.name}/paddings", values, (4, 2))
        return PartOperator(
            "PAD",
            (inputs[0], paddings),
            (output,),
            (),
            origin=rule.operator,
            role=Role.COMPUTE,
            copied=output.nbytes,
            version=2,
        )
    return PartOperator(
        rule.opcode,
        inputs,
        (output,),
        tuple(sorted(options.items())),
        origin=rule.operator,
        role=Role.COMPUTE,
        version=operator.version,
    )


def _rows_of(holder: TensorRef, height: int) -> int:
    return holder.shape[_HEIGHT] if isinstance(holder, Part) else height


def _int32s(name: str, values: Sequence[int], shape: tuple[int, ...] | None = None) -> Part:
    """A constant int32 tensor."""
    return Part(
        name,
        shape if shape is not None else (len(values),),
        like=None,
        dtype="INT32",
        data=struct.pack(f"<{len(values)}i", *values),
    )


def _macs(subgraph: Subgraph, operator: Operator) -> int:
    if operator.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        return 0
    output = subgraph.tensors[operator.outputs[0]].shape
    return macs_of(operator.opcode, output, subgraph.tensors[operator.inputs[1]].shape)
