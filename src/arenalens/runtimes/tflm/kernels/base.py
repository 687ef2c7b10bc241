"""Kernel rules: operator + TFLM build → the allocations its Init and Prepare make, in order.

During `AllocateTensors` TFLM parses each operator's builtin options into a `TfLite*Params` struct
in the tail, runs every kernel's Init (OpData in the tail), then every kernel's Prepare, which may
take temporary `TfLiteTensor` views of its inputs and outputs, temporary buffers, more persistent
buffers (per-channel arrays, lookup tables) and scratch buffers planned in the head. A rule lists
those calls as events, in the order the kernel source makes them, so that the setup replay
(`setup`) and the head arena (`arena`) see exactly what the real runtime does. It also lists what
makes the kernel refuse the operator (`Refusal`): setup fails, or Invoke does.

A rule reads the operator through `KernelContext` (its tensors, options and the `Build`), and
computes struct sizes from field lists (`abi.Struct`), so one rule serves the 64-bit wheel and
32-bit devices alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arenalens.builds.build import Build
from arenalens.errors import ModelError
from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.tflm.abi import Struct
from arenalens.tflite.custom_options import custom_options
from arenalens.units import format_bytes_exact

# TFLM fails a Prepare that requests more than this (kMaxScratchBuffersPerOp, micro_allocator.cc).
MAX_SCRATCH_PER_OPERATOR = 12

SETUP = "setup"  # AllocateTensors fails: the model cannot be set up
INVOKE = "invoke"  # setup succeeds, Invoke fails


@dataclass(frozen=True, slots=True)
class TempField:
    """A member of one of the kernel's live temp TfLiteTensors that Prepare reads after it wrote
    a persistent buffer: `name` is a TfLiteTensor member ("dims", "type", "data", "bytes",
    "params", ...) or "affine.<member>" of its TfLiteAffineQuantization ("affine.scale",
    "affine.quantized_dimension")."""

    name: str
    temp: int | None = None  # which temp, by fetch order in this Prepare (0 first); None: each
    # None: any overwrite breaks setup; otherwise only these new values do (the read tolerates
    # the others), decided from `OverTemps.content`.
    breaks_on: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class OverTemps:
    """How a persistent buffer a kernel fills in Prepare, while its temp TfLiteTensors are live,
    can break setup (`temp_overlap`). AllocatePersistentBuffer checks the head, not the temp end,
    so the buffer may lie on those temps; setup fails only when a written byte lands on a temp
    member read afterwards: always the ones DeallocateTempTfLiteTensor reads (quantization type
    and params, the affine zero_point pointer), plus `keep`."""

    # Byte ranges [start, end) written before the temps are released; None: the whole buffer.
    ranges: tuple[tuple[int, int], ...] | None = None
    keep: tuple[TempField, ...] = ()
    # The buffer itself is read again later in setup (a dims copy): DeallocateTempTfLiteTensor's
    # own writes (quantization, data, dims of every temp) must not land on it.
    read_later: bool = False
    content: bytes = b""  # the bytes written from offset 0, when a `breaks_on` needs them
    live_from: int = 0  # temps fetched before this one were already released


@dataclass(frozen=True, slots=True)
class Persistent:
    """`AllocatePersistentBuffer(nbytes)`: tail, 16-aligned, kept for the model's life."""

    nbytes: int
    what: str
    # Filled in Prepare while the kernel's temp tensors are live, and what of them Prepare reads
    # afterwards (`OverTemps()`: the whole buffer, nothing beyond DeallocateTempTfLiteTensor's
    # reads); None: not written before they are released (or only at Eval).
    written: OverTemps | None = None


@dataclass(frozen=True, slots=True)
class TempTensor:
    """`AllocateTempInputTensor` / `AllocateTempOutputTensor` / `...IntermediateTensor`: a
    TfLiteTensor struct (and its quantization copy) in temp memory until Prepare ends."""

    tensor: Tensor


@dataclass(frozen=True, slots=True)
class TempBytes:
    """`AllocateTempBuffer(nbytes, alignment)`: temp memory until Prepare ends."""

    nbytes: int
    alignment: int


@dataclass(frozen=True, slots=True)
class Scratch:
    """`RequestScratchBufferInArena(nbytes)`: a head buffer, live while the operator runs."""

    nbytes: int
    label: str


@dataclass(frozen=True, slots=True)
class OutputShape:
    """Prepare rewrites an output's dims (`CreateWritableTensorDimsWithCopy`, after a
    `Persistent` copy of them): TFLM plans the output, and checks it for dynamic dims, with this
    shape instead of the flatbuffer's (the planner reads the eval tensors after Prepare)."""

    position: int
    shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Refusal:
    """The kernel refuses this operator: setup fails (`SETUP`) or Invoke does (`INVOKE`)."""

    reason: str
    phase: str = SETUP


@dataclass(frozen=True, slots=True)
class Estimate:
    """The rule is not exact for this case: the bytes may be off by up to `margin_bytes`."""

    reason: str
    margin_bytes: int


Event = Persistent | TempTensor | TempBytes | Scratch | OutputShape | Refusal | Estimate


@dataclass(frozen=True, slots=True)
class Fixed:
    """A struct size known only as measured on the 64-bit wheel (bytes, alignment): used as is on
    every build, an upper bound where pointers shrink. Rules should move to a `Struct`."""

    nbytes: int
    alignment: int


@dataclass(frozen=True, slots=True)
class KernelContext:
    """One operator of one model, seen by the kernel of one build."""

    model: Model
    subgraph: Subgraph
    operator: Operator
    build: Build

    @property
    def opcode(self) -> str:
        """The operator's name (CUSTOM:<name> for custom operators)."""
        return self.operator.opcode

    def input(self, position: int) -> Tensor | None:
        """Input tensor at position, or None when omitted (-1) or absent."""
        inputs = self.operator.inputs
        if position >= len(inputs) or inputs[position] < 0:
            return None
        return self.subgraph.tensors[inputs[position]]

    def output(self, position: int) -> Tensor | None:
        """Output tensor at position, or None when absent."""
        outputs = self.operator.outputs
        if position >= len(outputs) or outputs[position] < 0:
            return None
        return self.subgraph.tensors[outputs[position]]

    def input_type(self, position: int) -> str:
        """Type name of an input ('' when omitted)."""
        tensor = self.input(position)
        return "" if tensor is None else tensor.dtype.name

    def output_type(self, position: int) -> str:
        """Type name of an output ('' when absent)."""
        tensor = self.output(position)
        return "" if tensor is None else tensor.dtype.name

    def input_element_bytes(self, position: int, default: int) -> int:
        """Element size of an input, or default when it is omitted or unsized."""
        tensor = self.input(position)
        size = None if tensor is None else tensor.dtype.element_bytes
        return default if size is None else size

    def option(self, name: str, default: int = 0) -> int:
        """An integer builtin option, with a default when the model leaves it out."""
        value = self.operator.options.get(name, default)
        return int(value) if isinstance(value, int | bool) else default

    def options(self) -> dict[str, Any]:
        """The custom operator's flexbuffer options ({} when none or unreadable)."""
        found = custom_options(self.model, self.subgraph.index, self.operator.position_in_file)
        return found if isinstance(found, dict) else {}

    def custom_int(self, key: str, default: int = 0) -> int:
        """One integer custom option."""
        value = self.options().get(key, default)
        return int(value) if isinstance(value, int | bool) else default

    def sizeof(self, layout: Struct) -> int:
        """sizeof(struct) on this build."""
        return layout.size(self.build.abi, self.build.features)

    def checked_size(self, nbytes: int, what: str) -> int:
        """nbytes of a kernel allocation, or ModelError when the model's shapes make it negative
        (the kernel's Prepare would reject those shapes before allocating)."""
        if nbytes < 0:
            raise ModelError(
                self.model.source,
                f"{self.label()}: its tensor shapes give the kernel's {what} a negative size "
                f"({format_bytes_exact(nbytes)})",
            )
        return nbytes

    def label(self) -> str:
        """'subgraph S operator K (OPCODE)', for messages."""
        return f"subgraph {self.subgraph.index} operator {self.operator.index} ({self.opcode})"


Events = Sequence[Event]
RuleFunction = Callable[[KernelContext], Events]


def no_events(context: KernelContext) -> Events:
    """Init or Prepare that allocates nothing."""
    return ()


def inputs_then_outputs(context: KernelContext) -> Events:
    """The common Prepare: a temp tensor for every present input, then every output."""
    found: list[Event] = []
    for position in range(len(context.operator.inputs)):
        tensor = context.input(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    for position in range(len(context.operator.outputs)):
        tensor = context.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


def temps(context: KernelContext, *slots: tuple[str, int]) -> list[Event]:
    """Temp tensors for ("in" | "out", position) slots, in order, skipping omitted ones."""
    found: list[Event] = []
    for role, position in slots:
        tensor = context.input(position) if role == "in" else context.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


@dataclass(frozen=True)
class KernelRule:
    """One registered kernel: its source, parsed options, and its Init and Prepare events."""

    opcode: str
    source: str  # kernel file(s) under tflite-micro tensorflow/lite/micro/kernels/
    builtin_data: Struct | Fixed | None = None
    init: RuleFunction = no_events
    prepare: RuleFunction = inputs_then_outputs
    # False while the rule still holds numbers fitted on one build (see `Fixed`).
    derived: bool = True
    # The change of TFLM's history (builds/tflm.py) from which the Python op resolver (the
    # wheel's, the probes') registers the kernel; None: every covered release registers it.
    registered_from: str | None = field(default=None, kw_only=True)

    def builtin_bytes(self, context: KernelContext) -> tuple[int, int] | None:
        """(size, alignment) of the parsed options on this build; None for custom operators."""
        data = self.builtin_data
        if data is None or context.operator.is_custom:
            return None
        if isinstance(data, Fixed):
            return data.nbytes, data.alignment
        return data.layout(context.build.abi, context.build.features)


def rule_table(*rules: KernelRule) -> dict[str, KernelRule]:
    """Rules → a table by opcode; two rules for one opcode is a bug."""
    table: dict[str, KernelRule] = {}
    for rule in rules:
        if rule.opcode in table:
            raise ValueError(f"two kernel rules for {rule.opcode}")
        table[rule.opcode] = rule
    return table
