"""A model's image inputs: which inputs are images (rank 4, NHWC or NCHW with 1, 3 or 4
channels) and their height and width axes. Every check counts them (`--max-input` is suggested
for a model with exactly one); `max_input.py` makes the one it resizes a record (`ImageInput`),
there rather than here because a check only counts them (a class costs its command's start-up
~4 M instructions)."""

from __future__ import annotations

from arenalens.ir import Model


def image_inputs(model: Model) -> tuple[tuple[int, int, tuple[int, int]], ...]:
    """The model's image inputs: (position among its inputs, tensor index, (height axis, width
    axis)) of each rank-4 input, NHWC or NCHW with 1, 3 or 4 channels."""
    main = model.subgraphs[0]
    found = []
    positions = [tensor for tensor in main.inputs if tensor >= 0]
    for position, tensor in enumerate(positions):
        if main.tensors[tensor].has_data:
            continue
        axes = image_axes(main.tensors[tensor].shape)
        if axes is not None:
            found.append((position, tensor, axes))
    return tuple(found)


def image_axes(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(height axis, width axis) of an image-like rank-4 shape: NHWC, or NCHW (PyTorch exports)
    when the channel count (1, 3 or 4) sits in axis 1; None for anything else."""
    if len(shape) != 4:
        return None
    if shape[3] in (1, 3, 4) and shape[1] >= 2 and shape[2] >= 2:
        return 1, 2
    if shape[1] in (1, 3, 4) and shape[2] >= 2 and shape[3] >= 2:
        return 2, 3
    return None
