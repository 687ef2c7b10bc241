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
    return tuple(
        main.tensors[index]
        for index in main.inputs
        if index >= 0 and any(d < 0 for d in main.tensors[index].shape_signature[1:])
    )


def placeholder_text(tensor: Tensor) -> str:
    """One sentence naming the input, its signature and the shape planned instead."""
    signature = "x".join(str(d) for d in tensor.shape_signature)
    stored = "x".join(str(d) for d in tensor.shape)
    return (
        f"input '{tensor.name}' has unknown dimensions (shape_signature {signature}); the plan is "
        f"for its stored placeholder shape {stored}, not the size the application will feed: "
        f"give --input-shape '{tensor.name}=<shape>' with that size"
    )
