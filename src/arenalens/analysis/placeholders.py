"""Placeholder input shapes: model → main inputs whose stored shape only stands in for a size known
at run time.

A converter that leaves a dimension unknown writes -1 in `shape_signature` and some placeholder
(often 1) in `shape`. Both runtimes plan the stored `shape` until told otherwise, so a plan of
such a model describes the placeholder, not the audio clip or image the application feeds. An
unknown *batch* (the first dimension) is the usual exception: the stored 1 is what a
microcontroller runs. Any other unknown dimension makes every size a guess until the user gives
the real shape (`--input-shape`), which also fixes the signature.
"""

from __future__ import annotations

from arenalens.ir import Model, Tensor


def placeholder_inputs(model: Model) -> tuple[Tensor, ...]:
    """Inputs of subgraph 0 with an unknown (-1) dimension other than the batch."""
    if not model.subgraphs:
        return ()
    main = model.subgraphs[0]
    found: list[Tensor] = []
    # Plain loops: a check asks twice (declare, verdict) and two generators per input cost
    # more than the few dims they walk.
    for index in main.inputs:
        if index >= 0:
            tensor = main.tensors[index]
            for dim in tensor.shape_signature[1:]:
                if dim < 0:
                    found.append(tensor)
                    break
    return tuple(found)


def placeholder_text(tensor: Tensor) -> str:
    """One sentence naming the input, its signature and the shape planned instead."""
    signature = "x".join(str(d) for d in tensor.shape_signature)
    stored = "x".join(str(d) for d in tensor.shape)
    return (
        f"input '{tensor.name}' has unknown dimensions (shape_signature {signature}); the plan is "
        f"for its stored placeholder shape {stored}, not the size the application will feed: "
        f"give --input-shape '{tensor.name}=<shape>' with that size"
    )


def resized_inputs(model: Model) -> tuple[str, ...]:
    """Inputs of subgraph 0 planned at a size the model's file does not state (given with
    --input-shape): another shape than the stored one, or a placeholder's size made known; as
    "'image' 1x48x48x3" (the file's shape). TFLM runs the shapes a file stores, so a figure for
    these is a figure for the file written at them. Empty for a model without file bytes or
    planned as stored."""
    if not model.subgraphs or not len(model.data):
        return ()
    from arenalens.tflite.reader import parse_model  # noqa: PLC0415 - only with --input-shape

    stored = parse_model(model.data, model.source).subgraphs[0].tensors
    main = model.subgraphs[0]
    return tuple(
        f"'{main.tensors[index].name}' {'x'.join(str(d) for d in stored[index].shape)}"
        for index in main.inputs
        if index >= 0
        and (
            stored[index].shape != main.tensors[index].shape
            or _unknown(stored[index]) != _unknown(main.tensors[index])
        )
    )


def _unknown(tensor: Tensor) -> bool:
    return any(d < 0 for d in tensor.shape_signature[1:])
