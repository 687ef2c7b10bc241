"""Shape rules: unknown (-1) dimensions, which make a runtime resize tensors and re-plan.

TFLM plans from the FlatBuffer `shape` and never resizes; an operator output whose `shape` has a
dimension <= 0 fails Prepare ("Dynamic tensors are not supported"). LiteRT re-plans after
`resize_tensor_input`, keeping the first lifetimes, and moves data-dependent outputs to the heap
(docs/runtime-rules.md §T2, §L1).
"""

from __future__ import annotations

from collections.abc import Iterator

from arenalens.diagnostics.context import DiagnoseContext, tensor_name
from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.ir import Subgraph, Tensor


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def dynamic_shape(context: DiagnoseContext) -> Iterator[Finding]:
    """Subgraph inputs with -1 in shape_signature, then other dynamic tensors, per subgraph."""
    for subgraph in context.model.subgraphs:
        dynamic_inputs = [
            subgraph.tensors[t]
            for t in subgraph.inputs
            if t >= 0 and subgraph.tensors[t].has_dynamic_dims
        ]
        for tensor in dynamic_inputs:
            yield _dynamic_input_finding(context, subgraph, tensor)
        inner = tuple(
            t.index
            for t in subgraph.tensors
            if t.has_dynamic_dims
            and not t.has_data
            and t.index not in subgraph.inputs
            and not _follows_inputs(t, dynamic_inputs)
        )
        if inner:
            yield _dynamic_inner_finding(context, subgraph, inner)


def _follows_inputs(tensor: Tensor, dynamic_inputs: list[Tensor]) -> bool:
    """A -1 in the batch position alongside a -1-batch input: the same unknown, reported once.
    With an input whose other dimensions are unknown too, any -1 may come from it."""
    if any(any(d < 0 for d in t.shape_signature[1:]) for t in dynamic_inputs):
        return True
    batch_inputs = [t for t in dynamic_inputs if t.shape_signature[:1] == (-1,)]
    return (
        bool(batch_inputs)
        and tensor.shape_signature[:1] == (-1,)
        and (sum(1 for d in tensor.shape_signature if d < 0) == 1)
    )


def _dynamic_input_finding(context: DiagnoseContext, subgraph: Subgraph, tensor: Tensor) -> Finding:
    name = tensor_name(context.model, subgraph.index, tensor.index)
    shape, signature = _dims(tensor.shape), _dims(tensor.shape_signature)
    example = "x".join(str(d if d > 0 else 1) for d in tensor.shape) or "1"
    if subgraph.index == 0 and any(d < 0 for d in tensor.shape_signature[1:]):
        return _placeholder_finding(context, tensor, name, shape, signature)
    if context.runtime == "tflm":
        severity = Severity.INFO
        effect = (
            f"TFLM plans with shape {shape} and never resizes, so the plan holds only for inputs "
            f"of exactly that shape"
        )
    else:
        severity = Severity.WARNING
        effect = (
            f"LiteRT plans for shape {shape}; an application that calls resize_tensor_input "
            "re-plans at allocate_tensors (the arena only grows, lifetimes keep their first "
            "values), so this plan no longer describes memory use"
        )
    return Finding(
        rule="dynamic-shape",
        severity=severity,
        location=Location(subgraph.index, None, (tensor.index,)),
        message=f"input {name} has shape_signature {signature} (-1 = unknown until run time); "
        f"{effect}",
        fix=f"convert with a fixed input shape (a concrete batch size in the Keras Input / "
        f"concrete function), or see the arena at the shape you will run with: "
        f"--input-shape '{tensor.name}={example}'",
        details={"shape": list(tensor.shape), "shape_signature": list(tensor.shape_signature)},
    )


def _placeholder_finding(
    context: DiagnoseContext, tensor: Tensor, name: str, shape: str, signature: str
) -> Finding:
    """An unknown dimension other than the batch: the stored shape is only a placeholder."""
    # A template for the real shape: known dimensions kept, the batch 1, unknown ones named.
    template = "x".join(
        str(d) if d > 0 else ("1" if position == 0 else f"<size of dim {position}>")
        for position, d in enumerate(tensor.shape_signature)
    )
    return Finding(
        rule="dynamic-shape",
        severity=Severity.WARNING,
        location=Location(0, None, (tensor.index,)),
        message=f"input {name} has shape_signature {signature}: the size the application feeds "
        f"is unknown to the model, and every arena size here is for the stored placeholder "
        f"shape {shape}, which the application will most likely not feed",
        fix=f"plan at the real size: --input-shape '{tensor.name}={template}' (the size your "
        "application feeds), or convert with a fixed input shape",
        details={
            "shape": list(tensor.shape),
            "shape_signature": list(tensor.shape_signature),
            "placeholder": True,
        },
    )


def _dynamic_inner_finding(
    context: DiagnoseContext, subgraph: Subgraph, inner: tuple[int, ...]
) -> Finding:
    first = subgraph.tensors[inner[0]]
    producer = subgraph.producers.get(first.index)
    effect = (
        "TFLM ignores shape_signature and plans the `shape` values"
        if context.runtime == "tflm"
        else "LiteRT may make such outputs Dynamic (heap memory outside the arena, allocated at "
        "Invoke) and then plans the rest of the graph in chunks around them"
    )
    return Finding(
        rule="dynamic-shape",
        severity=Severity.INFO if context.runtime == "tflm" else Severity.WARNING,
        location=Location(subgraph.index, producer, inner),
        message=f"{len(inner)} non-constant tensor(s) have -1 dimensions not explained by a "
        f"dynamic input, first {tensor_name(context.model, subgraph.index, first.index)} "
        f"{_dims(first.shape_signature)} (data-dependent shapes); {effect}",
        fix="replace data-dependent operators (WHERE, NON_MAX_SUPPRESSION, dynamic RESHAPE) "
        "with fixed-size forms, or give their outputs a fixed maximum size",
        details={"count": len(inner)},
    )


def dynamic_tensor_unsupported(context: DiagnoseContext) -> Iterator[Finding]:
    """TFLM: operator outputs whose `shape` has a dimension <= 0 fail Prepare."""
    if context.runtime != "tflm":
        return
    for subgraph in context.model.subgraphs:
        for op in subgraph.operators:
            bad = tuple(
                t for t in op.outputs if t >= 0 and _unsupported_shape(subgraph.tensors[t].shape)
            )
            if not bad:
                continue
            tensor = subgraph.tensors[bad[0]]
            yield Finding(
                rule="dynamic-tensor-unsupported",
                severity=Severity.ERROR,
                location=Location(subgraph.index, op.index, bad),
                message=f"operator {op.index} ({op.opcode}) of subgraph {subgraph.index} writes "
                f"{tensor_name(context.model, subgraph.index, tensor.index)} with shape "
                f"{_dims(tensor.shape)}; TFLM fails Prepare with 'Dynamic tensors are not "
                "supported'",
                fix="convert with fixed shapes (set the batch and every unknown dimension "
                "before conversion) so every `shape` entry is positive",
                details={"shape": list(tensor.shape)},
            )


def _unsupported_shape(shape: tuple[int, ...]) -> bool:
    """A dimension <= 0, except the legacy scalar shape [0] (docs/runtime-rules.md §T2)."""
    if shape == (0,):
        return False
    return any(d <= 0 for d in shape)
