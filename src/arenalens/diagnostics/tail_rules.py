"""Tail rules: what keeps the most persistent bytes under TFLM, and what would give them back.

The tail (runtime structs, kernel data, variables) is often most of `kTensorArenaSize` on a
small model, and no planner can shrink it: only a different model can. These rules say which
part, operator and kernel buffer costs the most (`tail`), and what would cost less, with the
bytes computed from the same rules the budget uses:

* `tail-fusion`: activations and reshapes the converter can fold into the operator before them;
  the saving is the budget of the rewritten model, replayed in full (head and tail).
* `tail-per-channel`: the multiplier and shift arrays kernels keep per output channel, from the
  kernel rules: a narrower layer, or per-tensor FULLY_CONNECTED weights, needs fewer.
* `tail-variables`: variable tensors and resource variables kept in the tail, at their element
  type's size: a smaller type would need less.

Each says whether it changes the model's results: only folding an activation whose output keeps
its input's quantization (or a float one), or a reshape, computes exactly the same outputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from types import MappingProxyType

from arenalens.builds.build import Build
from arenalens.diagnostics.context import DiagnoseContext
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.errors import ArenalensError
from arenalens.ir import DTYPES_BY_NAME, Model, Operator, Subgraph, Tensor, check_model
from arenalens.planning.problem import align_up
from arenalens.records import record
from arenalens.runtimes import MemoryBudget
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.sections import ArenaSection
from arenalens.units import format_bytes_exact

TOP_OPERATORS = 3  # operators named by the `tail` finding
TOP_LAYERS = 3  # layers named by a `tail-per-channel` finding
# Above this many operators the rewritten model is not planned again (one more full analysis).
REPLAN_MAX_OPERATORS = 2000
# Variables checked one by one for an int8 state when not all of them take it.
INT8_CHECKS = 16

# A TFLite builtin TFLM registers no kernel for (so no rule says it), which every layer that
# applies a fused activation applies in its place: its ActivationFunctionType value.
_FUSED_ONLY = {"RELU_N1_TO_1": 2}
_NO_ACTIVATION = 0  # ActivationFunctionType.NONE
_PER_CHANNEL = ("per-channel multipliers", "per-channel shifts")
# Element types a variable could be stored in instead, smallest first.
_SMALLER_TYPES = {"FLOAT32": ("INT8", 1), "INT32": ("INT8", 1), "INT16": ("INT8", 1)}


def _tflm(context: DiagnoseContext, *, runs: bool = True) -> tuple[Model, Build] | None:
    """The model and TFLM build the analysis planned, or None when these rules do not apply:
    another runtime, or (runs) a model the build cannot run, whose bytes are moot (the
    cannot-run finding leads)."""
    analysis = context.analysis
    if context.runtime != "tflm" or analysis is None or analysis.build is None:
        return None
    if runs and not analysis.budget.runs:
        return None
    return context.model, analysis.build


def _tail_section(context: DiagnoseContext) -> ArenaSection | None:
    analysis = context.analysis
    if analysis is None:
        return None
    return next((s for s in analysis.budget.sections if s.name == "tail"), None)


# ---------------------------------------------------------------------------------------------
# What the tail is made of


@record(slots=True)
class OperatorTail:
    """What one operator keeps in the tail: its node, options and kernel buffers."""

    subgraph: int
    operator: int
    opcode: str
    items: tuple[tuple[str, int], ...]  # (what, bytes), largest first

    @property
    def nbytes(self) -> int:
        """Its bytes in the tail (each kernel buffer rounded to the tail's 16-byte steps)."""
        return sum(nbytes for _, nbytes in self.items)


def operator_tails(model: Model, build: Build) -> tuple[OperatorTail, ...]:
    """Every operator's persistent bytes, from the kernel rules and the build's struct sizes:
    its NodeAndRegistration, its parsed options, what its kernel allocates in Init and Prepare
    (resource variables included), largest first."""
    micro = tflm_runtime()
    found = []
    for kept in micro.operator_persistent(model, build):
        items: dict[str, int] = {"node (NodeAndRegistration)": kept.node_bytes}
        if kept.options_bytes is not None:
            items["options"] = kept.options_bytes
        for what, nbytes in kept.persistent:
            items[what] = items.get(what, 0) + align_up(nbytes, micro.data_alignment)
        found.append(
            OperatorTail(
                kept.subgraph.index,
                kept.operator.index,
                kept.operator.opcode,
                tuple(sorted(items.items(), key=lambda item: (-item[1], item[0]))),
            )
        )
    return tuple(sorted(found, key=lambda t: (-t.nbytes, t.subgraph, t.operator)))


def tail(context: DiagnoseContext) -> Iterator[Finding]:
    """The tail's share of the number to declare, its parts, and the operators that keep most."""
    if (found := _tflm(context)) is None or (section := _tail_section(context)) is None:
        return
    model, build = found
    analysis = context.analysis
    assert analysis is not None
    total = analysis.budget.required_bytes
    parts = sorted(section.parts, key=lambda part: -part.nbytes)
    listed = ", ".join(f"{part.name} {format_bytes_exact(part.nbytes)}" for part in parts[:4])
    operators = operator_tails(model, build)[:TOP_OPERATORS]
    named = "; ".join(
        f"operator {t.operator} ({t.opcode}) {format_bytes_exact(t.nbytes)}: "
        + ", ".join(f"{what} {nbytes:,}" for what, nbytes in t.items[:3])
        for t in operators
    )
    share = 100 * section.nbytes / total if total else 0.0
    yield Finding(
        rule="tail",
        severity=Severity.INFO,
        location=Location(),
        message=f"the tail (persistent data) is {format_bytes_exact(section.nbytes)}, "
        f"{share:.0f}% of kTensorArenaSize ({format_bytes_exact(total)}): {listed}"
        + (f"; the operators that keep the most: {named}" if named else ""),
        fix="no plan shrinks the tail, only the model: fewer operators and tensors, fewer "
        "output channels, smaller variables (the tail-* findings say which, with their bytes)",
        details=MappingProxyType(
            {
                "tail_bytes": section.nbytes,
                "required_bytes": total,
                "parts": {part.name: part.nbytes for part in section.parts},
                "operators": [
                    {
                        "subgraph": t.subgraph,
                        "operator": t.operator,
                        "opcode": t.opcode,
                        "bytes": t.nbytes,
                        "items": dict(t.items),
                    }
                    for t in operators
                ],
            }
        ),
    )


# ---------------------------------------------------------------------------------------------
# Per-channel arrays


def tail_per_channel(context: DiagnoseContext) -> Iterator[Finding]:
    """Per-channel multiplier and shift arrays: those a kernel keeps only for per-channel
    weights (FULLY_CONNECTED's: per-tensor ones need none), and those it keeps whatever the
    weights' quantization (the convolutions': one entry per output channel)."""
    if (found := _tflm(context)) is None:
        return
    model, build = found
    layers = _per_channel_layers(model, build)
    if not layers:
        return
    # What the kernels keep with every weight tensor per-tensor: the arrays that go are the
    # weights' (their rules say so), the rest the layer's width.
    remaining = {
        layer.key for layer in _per_channel_layers(_per_tensor_weights(model, layers), build)
    }
    weights = [layer for layer in layers if layer.key not in remaining]
    widths = [layer for layer in layers if layer.key in remaining]
    if weights:
        yield _per_tensor_finding(weights)
    if widths and (finding := _convolution_finding(widths)) is not None:
        yield finding


def _per_channel_layers(model: Model, build: Build) -> list[_Layer]:
    """Every operator whose kernel keeps per-channel arrays, with those allocations."""
    found = []
    for kept in tflm_runtime().operator_persistent(model, build):
        arrays = tuple((what, nbytes) for what, nbytes in kept.persistent if what in _PER_CHANNEL)
        if arrays:
            found.append(_Layer(kept.subgraph, kept.operator, arrays))
    return found


def _per_tensor_weights(model: Model, layers: Sequence[_Layer]) -> Model:
    """The model with these layers' per-channel weight tensors quantized per tensor."""
    chosen: dict[int, set[int]] = {}
    for layer in layers:
        rule = tflm_runtime().kernel_rule(layer.operator.opcode)
        if rule is None:
            continue
        for slot, tensor in enumerate(layer.operator.inputs):
            if tensor >= 0 and rule.operands.role(slot) == "filter":
                chosen.setdefault(layer.subgraph.index, set()).add(tensor)
    subgraphs = []
    for subgraph in model.subgraphs:
        indices = chosen.get(subgraph.index, set())
        tensors = tuple(
            t._replace(quantization=t.quantization._replace(channel_count=1))
            if t.index in indices and t.quantization is not None
            else t
            for t in subgraph.tensors
        )
        subgraphs.append(replace(subgraph, tensors=tensors) if indices else subgraph)
    return replace(model, subgraphs=tuple(subgraphs))


@record(slots=True)
class _Layer:
    """A layer whose kernel keeps per-channel arrays, and those arrays' allocations."""

    subgraph: Subgraph
    operator: Operator
    arrays: tuple[tuple[str, int], ...]  # (what, bytes) of each per-channel array

    @property
    def key(self) -> tuple[int, int]:
        """(subgraph, operator)."""
        return self.subgraph.index, self.operator.index

    @property
    def channels(self) -> int:
        """Entries per array: the output channels (the weights' quantized dimension)."""
        return self.arrays[0][1] // 4

    def bytes_at(self, channels: int) -> int:
        """What its arrays take in the tail at that many channels (16-byte tail steps)."""
        return sum(align_up(4 * channels, tflm_runtime().data_alignment) for _ in self.arrays)

    def describe(self) -> str:
        """'operator 3 (CONV_2D) 64 channels 512 B'."""
        return (
            f"operator {self.operator.index} ({self.operator.opcode}) {self.channels} channels "
            f"{format_bytes_exact(self.bytes_at(self.channels))}"
        )


def _largest_first(layers: Sequence[_Layer]) -> list[_Layer]:
    return sorted(
        layers,
        key=lambda layer: (
            -layer.bytes_at(layer.channels),
            layer.subgraph.index,
            layer.operator.index,
        ),
    )


def _layers_text(ordered: Sequence[_Layer]) -> str:
    """The largest layers described, and how many more there are."""
    more = len(ordered) - TOP_LAYERS
    return ", ".join(layer.describe() for layer in ordered[:TOP_LAYERS]) + (
        f", and {more} more" if more > 0 else ""
    )


def _location(layer: _Layer) -> Location:
    outputs = tuple(t for t in layer.operator.outputs if t >= 0)
    return Location(layer.subgraph.index, layer.operator.index, outputs)


def _per_channel_finding(
    layers: Sequence[_Layer], message: str, fix: str, saving_bytes: int, **details: int
) -> Finding:
    """A tail-per-channel finding about these layers, at the largest: `message` ends with them
    ("... (LAYERS)"), `details` adds to their count and bytes."""
    ordered = _largest_first(layers)
    nbytes = sum(layer.bytes_at(layer.channels) for layer in layers)
    return Finding(
        rule="tail-per-channel",
        severity=Severity.INFO,
        location=_location(ordered[0]),
        message=message.replace("LAYERS", _layers_text(ordered)),
        fix=fix,
        saving_bytes=saving_bytes,
        details=MappingProxyType({"layers": len(layers), "bytes": nbytes, **details}),
    )


def _per_tensor_finding(layers: Sequence[_Layer]) -> Finding:
    nbytes = sum(layer.bytes_at(layer.channels) for layer in layers)
    keeps = "keeps" if len(layers) == 1 else "keep"
    message = (
        f"{_count(len(layers), 'layer', 'layers')} with per-channel weight quantization {keeps} "
        f"{format_bytes_exact(nbytes)} of per-channel multipliers and shifts (LAYERS); with "
        "per-tensor weights their kernel keeps none"
    )
    fix = (
        "convert these layers with per-tensor weight quantization (TFLiteConverter, for dense "
        "layers: `converter._experimental_disable_per_channel_quantization_for_dense_layers = "
        "True`); this changes the model's results: check its accuracy"
    )
    return _per_channel_finding(layers, message, fix, nbytes)


def _convolution_finding(layers: Sequence[_Layer]) -> Finding | None:
    nbytes = sum(layer.bytes_at(layer.channels) for layer in layers)
    halved = sum(layer.bytes_at((layer.channels + 1) // 2) for layer in layers)
    if halved >= nbytes:
        return None  # arrays this small take one 16-byte tail step at half the width too
    message = (
        f"{_count(len(layers), 'layer keeps', 'layers keep')} {format_bytes_exact(nbytes)} of "
        "per-channel multipliers and shifts, 8 B per output channel whatever the weights' "
        "quantization (LAYERS)"
    )
    fix = (
        "narrower layers keep fewer (pruning filters, a smaller width multiplier): at half the "
        f"filters in every layer (width multiplier 0.5) they take {format_bytes_exact(halved)}, "
        "and the weights and activations shrink too; this changes the model: retrain or "
        "fine-tune, then check its accuracy"
    )
    return _per_channel_finding(layers, message, fix, nbytes - halved, bytes_at_half_width=halved)


# ---------------------------------------------------------------------------------------------
# Variables


def _with_int8(model: Model, chosen: Sequence[tuple[int, Tensor]]) -> Model:
    """The model with these (subgraph, tensor) stored as int8."""
    narrow = DTYPES_BY_NAME["INT8"]
    by_subgraph: dict[int, set[int]] = {}
    for subgraph_index, tensor in chosen:
        by_subgraph.setdefault(subgraph_index, set()).add(tensor.index)
    subgraphs = tuple(
        replace(
            subgraph,
            tensors=tuple(
                t._replace(dtype=narrow) if t.index in by_subgraph[subgraph.index] else t
                for t in subgraph.tensors
            ),
        )
        if subgraph.index in by_subgraph
        else subgraph
        for subgraph in model.subgraphs
    )
    return replace(model, subgraphs=subgraphs)


def _int8_states(
    model: Model, build: Build, wide: Sequence[tuple[int, Tensor]]
) -> list[tuple[int, Tensor]]:
    """The variables whose kernels still accept the model with them stored as int8 (no more
    reasons to refuse it than it has now): all at once when they do, else one by one, the
    largest first, up to a bound (each check walks every kernel rule)."""
    refused = len(tflm_runtime().support(model, build).obstacles)
    if len(tflm_runtime().support(_with_int8(model, wide), build).obstacles) <= refused:
        return list(wide)
    largest = sorted(
        wide, key=lambda pair: (-tflm_runtime().tensor_bytes(pair[1]), pair[0], pair[1].index)
    )
    return [
        pair
        for pair in largest[:INT8_CHECKS]
        if len(tflm_runtime().support(_with_int8(model, [pair]), build).obstacles) <= refused
    ]


def tail_variables(context: DiagnoseContext) -> Iterator[Finding]:
    """Variable tensors and resource variables stored wider than int8."""
    if (found := _tflm(context)) is None:
        return
    model, build = found
    # An offline-planned variable lives in the head, not the tail.
    wide = [
        (subgraph.index, tensor)
        for subgraph in model.subgraphs
        for tensor in subgraph.tensors
        if tensor.is_variable and model.offline_plan is None and tensor.dtype.name in _SMALLER_TYPES
    ]
    # A state whose kernel refuses int8 (an int8 LSTM's int16 cell state) must stay as it is.
    candidates: list[tuple[int, Tensor, str]] = [
        (subgraph, tensor, "variable tensor")
        for subgraph, tensor in (_int8_states(model, build, wide) if wide else [])
    ]
    # A float resource variable: an int8 conversion of the whole model stores it as int8.
    for shared_name, tensor in tflm_runtime().resource_variable_tensors(model):
        if tensor.dtype.name == "FLOAT32":
            candidates.append((-1, tensor, f"resource variable '{shared_name}'"))
    if not candidates:
        return
    now = smaller = 0
    for _, tensor, _ in candidates:
        _, element_bytes = _SMALLER_TYPES[tensor.dtype.name]
        now += align_up(tflm_runtime().tensor_bytes(tensor), tflm_runtime().data_alignment)
        smaller += align_up(
            max(tensor.element_count * element_bytes, 0), tflm_runtime().data_alignment
        )
    variables = [(s, t) for s, t, kind in candidates if kind == "variable tensor"]
    names = ", ".join(
        f"'{tensor.name or tensor.index}' {tensor.dtype.name}" for _, tensor, _ in candidates[:4]
    )
    more = f" and {len(candidates) - 4} more" if len(candidates) > 4 else ""
    location = (
        Location(
            variables[0][0], None, tuple(t.index for s, t in variables if s == variables[0][0])
        )
        if variables
        else Location()
    )
    yield Finding(
        rule="tail-variables",
        severity=Severity.INFO,
        location=location,
        message=f"{_count(len(candidates), 'variable keeps', 'variables keep')} "
        f"{format_bytes_exact(now)} in the tail across every Invoke ({names}{more}); stored as "
        f"int8 {'it' if len(candidates) == 1 else 'they'} would take {format_bytes_exact(smaller)}",
        fix="quantize the state to int8 (quantization-aware training of the stateful layers, "
        "or an int8 conversion with a representative dataset); this changes the model's "
        "results: check its accuracy",
        saving_bytes=now - smaller,
        details=MappingProxyType(
            {"variables": len(candidates), "bytes": now, "bytes_as_int8": smaller}
        ),
    )


# ---------------------------------------------------------------------------------------------
# Fusion


@record(slots=True)
class Fold:
    """One operator the converter can fold into the one before it: `removed` goes, `kept` writes
    its output (with `activation` fused, or as the merged reshape)."""

    subgraph: int
    kept: int
    removed: int
    activation: int | None  # the fused_activation_function code, None for a reshape merge
    exact: bool  # computes bit-identical outputs

    def describe(self, model: Model) -> str:
        """'operator 4 (RELU) into operator 3 (CONV_2D)'."""
        operators = model.subgraphs[self.subgraph].operators
        gone, kept = operators[self.removed], operators[self.kept]
        return f"operator {gone.index} ({gone.opcode}) into operator {kept.index} ({kept.opcode})"


def foldable(model: Model) -> tuple[Fold, ...]:
    """Standalone activations after an operator that takes a fused one, and reshapes of a
    reshape, whose intermediate tensor nothing else reads and the model does not return."""
    found = []
    for subgraph in model.subgraphs:
        claimed: set[int] = set()
        for operator in subgraph.operators:
            fold = _fold(subgraph, operator)
            if fold is not None and not {fold.kept, fold.removed} & claimed:
                claimed |= {fold.kept, fold.removed}
                found.append(fold)
    return tuple(found)


def _fold(subgraph: Subgraph, operator: Operator) -> Fold | None:
    if (
        len(operator.inputs) < 1
        or len(operator.outputs) != 1
        or operator.inputs[0] < 0
        or operator.outputs[0] < 0
    ):
        return None
    middle = operator.inputs[0]
    producer_index = subgraph.producers.get(middle)
    if producer_index is None or producer_index >= operator.index:
        return None
    producer = subgraph.operators[producer_index]
    if (
        subgraph.consumers.get(middle, ()) != (operator.index,)
        or middle in subgraph.outputs
        or len(producer.outputs) != 1
    ):
        return None
    code = _fused_code(operator.opcode)
    kept_rule = tflm_runtime().kernel_rule(producer.opcode)
    if code is not None and kept_rule is not None and kept_rule.applies_fused_activation:
        if producer.options.get("fused_activation_function", _NO_ACTIVATION) != _NO_ACTIVATION:
            return None
        source, result = subgraph.tensors[middle], subgraph.tensors[operator.outputs[0]]
        exact = source.dtype.name == "FLOAT32" or source.quantization == result.quantization
        return Fold(subgraph.index, producer.index, operator.index, code, exact)
    removed_rule = tflm_runtime().kernel_rule(operator.opcode)
    if (
        operator.opcode == producer.opcode
        and removed_rule is not None
        and removed_rule.absolute_shape
    ):
        return Fold(subgraph.index, producer.index, operator.index, None, True)
    return None


def _fused_code(opcode: str) -> int | None:
    """The fused_activation_function value a layer applies in this operator's place, if any."""
    rule = tflm_runtime().kernel_rule(opcode)
    return rule.as_fused_activation if rule is not None else _FUSED_ONLY.get(opcode)


def folded(model: Model, folds: Sequence[Fold]) -> Model:
    """The model with every fold applied: the removed operator and the tensor between the two
    gone, the kept one writing the removed one's output (a merged reshape takes the second
    reshape's shape operand and options). Tensors and operators are renumbered; each operator
    keeps its position in the file for what reads the file (custom options)."""
    by_subgraph: dict[int, list[Fold]] = {}
    for fold in folds:
        by_subgraph.setdefault(fold.subgraph, []).append(fold)
    subgraphs = list(model.subgraphs)
    for index, chosen in by_subgraph.items():
        subgraphs[index] = _folded_subgraph(model.subgraphs[index], chosen)
    return replace(model, subgraphs=tuple(subgraphs))


def _folded_subgraph(subgraph: Subgraph, folds: Sequence[Fold]) -> Subgraph:
    operators = subgraph.operators
    removed = {fold.removed for fold in folds}
    dropped: set[int] = set()
    changed: dict[int, Operator] = {}
    for fold in folds:
        gone, kept = operators[fold.removed], operators[fold.kept]
        middle, output = gone.inputs[0], gone.outputs[0]
        dropped.add(middle)
        if fold.activation is not None:
            options = {**kept.options, "fused_activation_function": fold.activation}
            changed[fold.kept] = kept._replace(outputs=(output,), options=MappingProxyType(options))
        else:
            inputs = (kept.inputs[0], *gone.inputs[1:])
            changed[fold.kept] = kept._replace(
                inputs=inputs, outputs=(output,), options=gone.options
            )
    kept_operators = [changed.get(op.index, op) for op in operators if op.index not in removed]
    used = {t for op in kept_operators for t in (*op.inputs, *op.outputs, *op.intermediates)}
    # The merged reshape's first shape operand goes too, when nothing else reads it.
    for fold in folds:
        for tensor in operators[fold.kept].inputs[1:]:
            if tensor >= 0 and tensor not in used and tensor not in subgraph.inputs:
                dropped.add(tensor)
    kept_tensors = [t for t in subgraph.tensors if t.index not in dropped]
    position = {tensor.index: new for new, tensor in enumerate(kept_tensors)}

    def renumbered(indices: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(position[i] if i >= 0 else i for i in indices)

    return replace(
        subgraph,
        tensors=tuple(t._replace(index=position[t.index]) for t in kept_tensors),
        operators=tuple(
            op._replace(
                index=new,
                inputs=renumbered(op.inputs),
                outputs=renumbered(op.outputs),
                intermediates=renumbered(op.intermediates),
                file_index=op.position_in_file,
            )
            for new, op in enumerate(kept_operators)
        ),
        inputs=renumbered(subgraph.inputs),
        outputs=renumbered(subgraph.outputs),
    )


def tail_fusion(context: DiagnoseContext) -> Iterator[Finding]:
    """Operators the converter can fold away, with what the rewritten model declares. On a
    model the build cannot run, only when folding makes it run (a standalone activation TFLM
    has no kernel for, which the layer before applies as a fused one)."""
    if (found := _tflm(context, runs=False)) is None:
        return
    model, build = found
    folds = foldable(model)
    if not folds:
        return
    analysis = context.analysis
    assert analysis is not None
    before = analysis.budget
    after = _replanned(context, folds, build)
    saving: int | None = None
    tail_saving: int | None = None
    if not before.runs:
        if after is None:
            return  # folding does not make it run either: the cannot-run finding says why
        outcome = (
            f"TFLM cannot run the model as it is, but folded it runs on this build and "
            f"declares kTensorArenaSize = {format_bytes_exact(after.required_bytes)}"
        )
    elif after is None:
        outcome = "what it saves is not computed (the rewritten model could not be planned)"
    else:
        saving = before.required_bytes - after.required_bytes
        if saving <= 0:
            return
        tail_saving = before.parts.get("tail_at_minimum", 0) - after.parts.get("tail_at_minimum", 0)
        outcome = (
            f"kTensorArenaSize would drop by {format_bytes_exact(saving)}"
            f" (the tail by {format_bytes_exact(tail_saving)})"
        )
    exact = all(fold.exact for fold in folds)
    listed = "; ".join(fold.describe(model) for fold in folds[:4])
    more = f"; and {len(folds) - 4} more" if len(folds) > 4 else ""
    results = (
        "the outputs stay bit-identical (float, or the activation keeps its input's "
        "quantization; a reshape only renames the bytes)"
        if exact
        else "an activation that requantizes is folded: the outputs may differ in the last "
        "quantization step; check the model's accuracy"
    )
    first = folds[0]
    yield Finding(
        rule="tail-fusion",
        severity=Severity.WARNING if exact and after is not None else Severity.INFO,
        location=Location(first.subgraph, first.removed),
        message=f"{_count(len(folds), 'operator can', 'operators can')} be folded into the one "
        f"before {'it' if len(folds) == 1 else 'them'} ({listed}"
        f"{more}): each costs a node, options, kernel data and an eval tensor for the tensor "
        f"between them; {outcome}",
        fix="convert again letting the converter fuse them (TFLiteConverter fuses a RELU, RELU6 "
        "or RELU_N1_TO_1 after a convolution, dense, pooling or elementwise layer, and "
        f"consecutive reshapes, unless something stops it); {results}",
        saving_bytes=saving,
        details=MappingProxyType(
            {
                "folds": [
                    {"subgraph": f.subgraph, "kept": f.kept, "removed": f.removed, "exact": f.exact}
                    for f in folds
                ],
                "runs_folded": after is not None,
                "required_bytes_folded": None if after is None else after.required_bytes,
                "tail_saving_bytes": tail_saving,
            }
        ),
    )


def _replanned(
    context: DiagnoseContext, folds: Sequence[Fold], build: Build
) -> MemoryBudget | None:
    """The rewritten model's budget, planned in full on the build; None when it cannot be
    planned or the build cannot run it."""
    from arenalens.pipeline import analyze  # noqa: PLC0415 - the rules run inside a pipeline

    model = context.model
    analysis = context.analysis
    if analysis is None or model.offline_plan is not None:
        return None  # an offline plan's offsets are per tensor: no longer valid
    if model.operator_count > REPLAN_MAX_OPERATORS:
        return None
    try:
        rewritten = folded(model, folds)
        check_model(rewritten)
        after = analyze(rewritten, runtime="tflm", build=build, planner=analysis.planner).budget
    except (ArenalensError, ValueError):  # ValueError: a planner limit no arena size meets
        return None
    return after if after.runs else None


def _count(count: int, one: str, many: str) -> str:
    """'1 layer keeps', '3 layers keep'."""
    return f"{count} {one if count == 1 else many}"
