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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, NamedTuple

from arenalens.analysis.inplace import InPlace, NotInPlace

# Operand specs are runtime-neutral (diagnose reads LiteRT's too); the rules import them here.
from arenalens.analysis.operands import Operands as Operands  # noqa: PLC0414
from arenalens.analysis.operands import operands as operands  # noqa: PLC0414
from arenalens.builds.build import REFERENCE, Build
from arenalens.errors import ModelError
from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.records import quick_init, record
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels.families import Families
from arenalens.tflite.custom_options import custom_options
from arenalens.units import format_bytes_exact

# TFLM fails a Prepare that requests more than this (kMaxScratchBuffersPerOp, micro_allocator.cc).
MAX_SCRATCH_PER_OPERATOR = 12

SETUP = "setup"  # AllocateTensors fails: the model cannot be set up
INVOKE = "invoke"  # setup succeeds, Invoke fails


@record(slots=True)
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


@record(slots=True)
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


class Persistent(NamedTuple):
    """`AllocatePersistentBuffer(nbytes)`: tail, 16-aligned, kept for the model's life."""

    nbytes: int
    what: str
    # Filled in Prepare while the kernel's temp tensors are live, and what of them Prepare reads
    # afterwards (`OverTemps()`: the whole buffer, nothing beyond DeallocateTempTfLiteTensor's
    # reads); None: not written before they are released (or only at Eval).
    written: OverTemps | None = None


# A temp tensor view (`AllocateTempInputTensor` / `AllocateTempOutputTensor` /
# `...IntermediateTensor`: a TfLiteTensor struct and its quantization copy in temp memory until
# Prepare ends) is the fetched `Tensor` itself among a rule's events, not a record of its own:
# a check reads only its quantization (what the struct costs), and the setup sequence writes its
# messages when a report asks.
TempTensor = Tensor


# Temp tensor views fetched one after another, nothing else allocated between them, are one
# event: the plain tuple of the fetched tensors, in fetch order (no other event is an exact
# tuple: the records are NamedTuples). Most events were temp tensors (463 of mobilenet_v2's 653:
# a convolution fetches 7, in two runs), and every stage that walks the events pays per event;
# `temp_tensors`, `temps` and `inputs_then_outputs` make runs. (`type(event) is TempTensors`.)
TempTensors: type[tuple[Tensor, ...]] = tuple

# The kernels' other frequent events from a tuple of all their fields in one C call (a
# NamedTuple's own constructor is a Python function): every convolution's setup makes two
# per-channel arrays and a scratch buffer.
new_persistent = partial(tuple.__new__, Persistent)  # from (nbytes, what, written)


def temp_tensors(*tensors: Tensor | None) -> list[Event]:
    """A temp tensor view of each tensor given, in order, skipping absent (None) ones: one run
    (`TempTensors`; none when every one is absent)."""
    # (By identity: `None in tensors` would compare the memo's watched views, a noted read.)
    for tensor in tensors:
        if tensor is None:  # some absent (rare): a run of the others
            present = tuple([tensor for tensor in tensors if tensor is not None])
            return [present] if present else []
    return [tensors]  # type: ignore[list-item]  # (none is None)


def fetched_temps(events: Iterable[Event]) -> list[Tensor]:
    """The tensors a phase's events fetch as temp views, in fetch order (single or in runs)."""
    found: list[Tensor] = []
    for event in events:
        if type(event) is TempTensors:
            found.extend(event)
        elif type(event) is TempTensor:
            found.append(event)
    return found


class TempBytes(NamedTuple):
    """`AllocateTempBuffer(nbytes, alignment)`: temp memory until Prepare ends."""

    nbytes: int
    alignment: int


class Scratch(NamedTuple):
    """`RequestScratchBufferInArena(nbytes)`: a head buffer, live while the operator runs."""

    nbytes: int
    label: str


new_scratch = partial(tuple.__new__, Scratch)  # from (nbytes, label)


@quick_init
@dataclass(frozen=True, slots=True)
class OutputShape:
    """Prepare rewrites an output's dims (`CreateWritableTensorDimsWithCopy`, after a
    `Persistent` copy of them): TFLM plans the output, and checks it for dynamic dims, with this
    shape instead of the flatbuffer's (the planner reads the eval tensors after Prepare)."""

    position: int
    shape: tuple[int, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Refusal:
    """The kernel refuses this operator: setup fails (`SETUP`) or Invoke does (`INVOKE`)."""

    reason: str
    phase: str = SETUP
    # What to change when converting the model so that the check holds ("": the reason says it,
    # or the cause is no conversion setting).
    fix: str = ""


@record(slots=True)
class ScratchNumberAtLeast:
    """Eval checks the model-wide number of the operator's first scratch request
    (`TFLITE_DCHECK_GE(buffer_idx, minimum)`): the setups (`setups`), which count the requests of
    every operator before this one, turn it into `refusal(count)` when there are fewer than
    `minimum`, and drop it otherwise."""

    minimum: int
    refusal: Callable[[int], Refusal]


@quick_init
@dataclass(frozen=True, slots=True)
class Estimate:
    """The rule is not exact for this case: the bytes may be off by up to `margin_bytes`."""

    reason: str
    margin_bytes: int


Event = (
    Persistent
    | TempTensor  # the Tensor itself
    | tuple[Tensor, ...]  # TempTensors
    | TempBytes
    | Scratch
    | OutputShape
    | Refusal
    | Estimate
    | ScratchNumberAtLeast
)


@record(slots=True)
class Fixed:
    """A struct size known only as measured on the 64-bit wheel (bytes, alignment): used as is on
    every build, an upper bound where pointers shrink. Rules should move to a `Struct`."""

    nbytes: int
    alignment: int


class KernelContext(NamedTuple):
    """One operator of one model, seen by the kernel of one build.

    A NamedTuple, made with `new_context`: the setups make one per operator per check, and a
    tuple is made at a third of a frozen dataclass's cost."""

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
        return int(value) if isinstance(value, int) else default  # bool too

    def options(self) -> dict[str, Any]:
        """The custom operator's flexbuffer options ({} when none or unreadable)."""
        found = custom_options(self.model, self.subgraph.index, self.operator.position_in_file)
        return found if isinstance(found, dict) else {}

    def custom_int(self, key: str, default: int = 0) -> int:
        """One integer custom option."""
        value = self.options().get(key, default)
        return int(value) if isinstance(value, int) else default  # bool too

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


# A KernelContext from (model, subgraph, operator, build) in one C call (its own constructor is a
# Python function).
new_context = partial(tuple.__new__, KernelContext)


Events = Sequence[Event]
RuleFunction = Callable[[KernelContext], Events]
# (operator, the input slots holding the input, the output position) → the minimal
# offset(input) - offset(output) that keeps every later read intact, or None where the trace
# does not apply to these shapes (the operator then gets no overlap).
DistanceFunction = Callable[[KernelContext, frozenset[int], int], "int | None"]


@record(slots=True)
class AccessOrder:
    """The order a kernel writes its output and reads its data inputs, as far as letting the
    output start below a dying input goes (`access_order` builds the traces, `overlap` pairs the
    tensors): the access pattern reports name, the loops' sources, the input slots that may be
    overlapped (None: every one; shape, axis and parameter inputs never), the distance."""

    pattern: str
    source: str  # the kernel and reference/*.h files whose loops the trace follows
    data_inputs: tuple[int, ...] | None
    distance: DistanceFunction


@record(slots=True)
class NoOverlap:
    """The kernel's output may never share bytes with an input, and why (it re-reads its input,
    keeps state, writes before it reads, or nobody has traced its loops)."""

    reason: str


@record(slots=True)
class AccessByPath:
    """A library kernel whose loops depend on the operator (its types, shapes, the core's code
    path): `choose` gives the order of the path this operator takes, or None where the library
    runs the reference kernel's code for it (CMSIS-NN's float paths)."""

    choose: Callable[[KernelContext], AccessOrder | NoOverlap | None]


Access = AccessOrder | NoOverlap | AccessByPath


def no_events(context: KernelContext) -> Events:
    """Init or Prepare that allocates nothing."""
    return ()


# Init functions whose events depend on the build alone, not on the operator (`common.op_data`:
# one struct): the setups run each once per kernel and build, not once per operator.
BUILD_ONLY_INITS: set[RuleFunction] = {no_events}


def inputs_then_outputs(context: KernelContext) -> Events:
    """The common Prepare: a temp tensor for every present input, then every output (one run)."""
    tensors = context.subgraph.tensors
    operator = context.operator
    fetched = tuple(
        [tensors[index] for index in (*operator.inputs, *operator.outputs) if index >= 0]
    )
    return [fetched] if fetched else []


def temps(context: KernelContext, *slots: tuple[str, int]) -> list[Event]:
    """Temp tensors for ("in" | "out", position) slots, in order, skipping omitted ones: one
    `TempTensors` run (none when every one is omitted)."""
    # `KernelContext.input` / `output` inlined: every kernel rule calls this, per operator.
    inputs, outputs = context.operator.inputs, context.operator.outputs
    tensors = context.subgraph.tensors
    found: list[Tensor] = []
    for role, position in slots:
        indices = inputs if role == "in" else outputs
        if position < len(indices) and indices[position] >= 0:
            found.append(tensors[indices[position]])
    return [tuple(found)] if found else []


def default_resolver_method(opcode: str) -> str:
    """TFLM's usual resolver method name: 'DEPTHWISE_CONV_2D' → 'AddDepthwiseConv2D' (a word
    starting with a digit, '2D', keeps its case)."""
    words = opcode.split("_")
    return "Add" + "".join(w if w[:1].isdigit() else w[:1].upper() + w[1:].lower() for w in words)


@dataclass(frozen=True)
class KernelRule:
    """One registered kernel: its source, parsed options, its Init and Prepare events, the
    tensors it takes (`operands`) and the order it reads and writes them (`access`: whether its
    output may slide over an input)."""

    opcode: str
    source: str  # kernel file(s) under tflite-micro tensorflow/lite/micro/kernels/
    builtin_data: Struct | Fixed | None = None
    init: RuleFunction = no_events
    prepare: RuleFunction = inputs_then_outputs
    # False while the rule still holds numbers fitted on one build (see `Fixed`).
    derived: bool = True
    # Every kernel says them: the tensors it takes, and the order its loops read and write them
    # (traced, or why its output never overlaps an input).
    operands: Operands = field(kw_only=True)
    access: Access = field(kw_only=True)
    # Whether `optimize --inplace` may put its output over an input only it reads (None: never).
    inplace: InPlace | NotInPlace | None = field(default=None, kw_only=True)
    # Prepare points every output at memory the kernel owns (TFLM plans only tensors whose data
    # pointer is still null after Prepare: micro_allocation_info.cc, `needs_allocating`).
    binds_outputs: bool = field(default=False, kw_only=True)
    # What the converter may fold (diagnose's tail-fusion). `applies_fused_activation`: Prepare
    # computes an output range from the fused_activation_function option and Eval clamps to it.
    # `as_fused_activation`: the schema's ActivationFunctionType value a layer applies in this
    # kernel's place, with the same range (CalculateActivationRangeQuantized). `absolute_shape`:
    # the output's shape comes from the operator's own operands whatever its input's, so two in
    # a row are one.
    applies_fused_activation: bool = field(default=False, kw_only=True)
    as_fused_activation: int | None = field(default=None, kw_only=True)
    absolute_shape: bool = field(default=False, kw_only=True)
    # None: the wheel's PythonOpsResolver (python_ops_resolver.cc) and the probes' firmware
    # register it; else why they do not (only other builds do; the rule says what they allocate).
    unregistered: str | None = field(default=None, kw_only=True)
    library: str = field(default=REFERENCE, kw_only=True)  # whose kernel: Build.kernels names
    # A library's kernel embeds the reference one (`variant`): the rule it was made from.
    reference: KernelRule | None = field(default=None, kw_only=True, repr=False, compare=False)
    # The change of TFLM's history (builds/tflm.py) from which the Python op resolver (the
    # wheel's, the probes') registers the kernel; None: every covered release registers it.
    registered_from: str | None = field(default=None, kw_only=True)
    # The `MicroMutableOpResolver` method that registers it (micro_mutable_op_resolver.h), where
    # it is not "Add" + the opcode in camel case (AddPadV2, AddSvdf, ...; `resolver_method`).
    resolver: str | None = field(default=None, kw_only=True)

    @property
    def resolver_method(self) -> str:
        """'CONV_2D' → 'AddConv2D': the method a firmware's resolver calls for this kernel."""
        return self.resolver or default_resolver_method(self.opcode)

    def builtin_bytes(self, context: KernelContext) -> tuple[int, int] | None:
        """(size, alignment) of the parsed options on this build; None for custom operators."""
        data = self.builtin_data
        if data is None or context.operator.is_custom:
            return None
        if isinstance(data, Fixed):
            return data.nbytes, data.alignment
        return data.layout(context.build.abi, context.build.features)


def stateless(
    opcode: str,
    source: str,
    prepare: RuleFunction,
    access: Access,
    operands: Operands,
    **facts: Any,
) -> KernelRule:
    """A kernel that keeps nothing from setup but its tensors: its operator has no builtin options
    (flatbuffer_conversions.cc stores no `TfLite*Params`: `builtin_data` stays nullptr) and its
    Init allocates nothing (most register a null Init: `RegisterOp(nullptr, Prepare, Eval)`), so
    Prepare's events are all it allocates. `facts`: the rule's other fields, as `KernelRule`."""
    return KernelRule(
        opcode, source, None, no_events, prepare, access=access, operands=operands, **facts
    )


def variant(reference: KernelRule, *, library: str, source: str, **changes: Any) -> KernelRule:
    """A kernel library's kernel for the reference kernel's operator: the reference rule with
    only what differs replaced (its Init, Prepare, access order, ...), as TFLM's
    `cmsis_nn/conv.cc` embeds `OpDataConv` and calls the reference Prepare helpers. What is not
    replaced (builtin data, operands, ...) is the reference kernel's; a kernel the library
    replaces runs its own loops, so its variant states its own `access`."""
    if reference.library != REFERENCE:
        raise ValueError(f"{reference.opcode}: a variant embeds a reference rule")
    return replace(reference, source=source, library=library, reference=reference, **changes)


@record()
class OptimizedKernels:
    """A kernel library TFLM builds with `OPTIMIZED_KERNEL_DIR=<dir>`: the operators whose
    kernel it takes from that directory (`replaces`) and arenalens's rule for each (`rules`,
    every one a `variant` of the reference rule). An operator it replaces without a rule here
    keeps the reference rule, as an estimate (`registry.stands_in`)."""

    name: str  # as `Build.kernels` spells it
    title: str
    replaces: frozenset[str]
    rules: Mapping[str, KernelRule]


def library_kernels(
    name: str,
    title: str,
    replaces: Iterable[str],
    package: str,
    families: Mapping[str, tuple[str, ...]],
) -> OptimizedKernels:
    """A kernel library's `OptimizedKernels`: the operators it replaces, and the rules of its
    package's modules in one read-only table, each module imported when first used."""
    return OptimizedKernels(name, title, frozenset(replaces), Families(package, families))


def rule_table(*rules: KernelRule) -> dict[str, KernelRule]:
    """Rules → a table by opcode; two rules for one opcode is a bug."""
    table: dict[str, KernelRule] = {}
    for rule in rules:
        if rule.opcode in table:
            raise ValueError(f"two kernel rules for {rule.opcode}")
        table[rule.opcode] = rule
    return table
