"""The pieces of a split: new tensors (`Part`), the operators that compute the parts, a region's
split and its extra work.

Operators refer to tensors as an original index (`int`: weights, the region's input and output)
or a `Part`. Parts are values: two equal parts are one tensor (the shared strides of every
STRIDED_SLICE, for one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from arenalens.tflite.builder import QuantizationSpec


class SplitKind(StrEnum):
    """How a region is cut."""

    BANDS = "bands"  # spatial bands of rows, each with its halo
    CHANNELS = "channels"  # groups of output channels


class Role(StrEnum):
    """What an operator of a split does."""

    COMPUTE = "compute"  # the original kernel on a part
    SLICE = "slice"  # STRIDED_SLICE: a band of rows (with its halo) out of a tensor
    PAD = "pad"  # PAD / PADV2: the padding the kernel did itself, made explicit
    CONCAT = "concat"  # CONCATENATION: the parts of the result, joined


@dataclass(frozen=True, slots=True)
class Part:
    """A tensor the split creates: an activation part (`data` None) or a constant."""

    name: str
    shape: tuple[int, ...]
    like: int | None  # the original tensor whose quantization it shares (None: its own)
    dtype: str = "INT8"
    data: bytes | None = None
    quantization: QuantizationSpec | None = None

    @property
    def nbytes(self) -> int:
        """Bytes of the tensor (int8 activations: one per element)."""
        width = {"INT8": 1, "INT32": 4, "INT64": 8}[self.dtype]
        return math.prod(self.shape) * width


TensorRef = int | Part


@dataclass(frozen=True, slots=True)
class PartOperator:
    """One operator of a split: a builtin with every field of its options table."""

    opcode: str
    inputs: tuple[TensorRef, ...]
    outputs: tuple[TensorRef, ...]
    options: tuple[tuple[str, Any], ...]
    origin: int  # the original operator it computes (a part of), or the region's last one
    role: Role
    macs: int = 0  # multiply-accumulates (windowed operators)
    copied: int = 0  # bytes a copy operator writes
    version: int = 1


@dataclass(frozen=True, slots=True)
class Region:
    """Consecutive operators of one subgraph with one activation input and one output."""

    subgraph: int
    operators: tuple[int, ...]
    source: int  # the activation every part reads (a slice of, for bands)
    result: int  # the tensor the parts are joined into

    @property
    def first(self) -> int:
        """The region's first operator."""
        return self.operators[0]

    @property
    def last(self) -> int:
        """The region's last operator."""
        return self.operators[-1]


@dataclass(frozen=True)
class RegionSplit:
    """A region cut into `parts`: the operators that replace it and what they cost."""

    kind: SplitKind
    region: Region
    parts: int
    operators: tuple[PartOperator, ...]
    original_macs: int  # the region's operators, unsplit

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the split region."""
        return sum(op.macs for op in self.operators)

    @property
    def extra_macs(self) -> int:
        """MACs computed twice (rows of a halo computed by both bands next to it)."""
        return self.macs - self.original_macs

    @property
    def copied_bytes(self) -> int:
        """Bytes written by the slices, pads and concatenations the split adds."""
        return sum(op.copied for op in self.operators)

    @property
    def weight_bytes(self) -> int:
        """Constant bytes the split adds to the file (sliced weights, slice bounds, paddings)."""
        seen: set[Part] = set()
        for op in self.operators:
            seen.update(t for t in op.inputs if isinstance(t, Part) and t.data is not None)
        return sum(len(p.data or b"") for p in seen)

    def describe(self) -> str:
        """One line: what was cut, into how many parts."""
        ops = self.region.operators
        span = f"operators {ops[0]}-{ops[-1]}" if len(ops) > 1 else f"operator {ops[0]}"
        unit = "bands of rows" if self.kind is SplitKind.BANDS else "channel groups"
        return f"{span}: {self.parts} {unit}"


def concatenation(
    outputs: Sequence[TensorRef], region: Region, axis: int, result_bytes: int
) -> PartOperator:
    """The CONCATENATION that joins the parts' outputs into the region's result along `axis`."""
    return PartOperator(
        "CONCATENATION",
        tuple(outputs),
        (region.result,),
        (("axis", axis), ("fused_activation_function", 0)),
        origin=region.last,
        role=Role.CONCAT,
        copied=result_bytes,
        version=2,
    )


def macs_of(opcode: str, output_shape: tuple[int, ...], weights_shape: tuple[int, ...]) -> int:
    """Multiply-accumulates of a windowed operator writing `output_shape`."""
    elements = math.prod(output_shape)
    if opcode == "CONV_2D":
        return elements * math.prod(weights_shape[1:])
    if opcode == "DEPTHWISE_CONV_2D":
        return elements * weights_shape[1] * weights_shape[2]
    return 0
