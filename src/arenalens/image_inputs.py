"""A model's image inputs: which inputs are images (rank 4, NHWC or NCHW with 1, 3 or 4
channels), their height and width axes, and the shape at another height with the same aspect
ratio. Every check counts them (`--max-input` is suggested for a model with exactly one);
`max_input.py` searches over their heights."""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.errors import UsageError
from arenalens.ir import Model


@dataclass(frozen=True, slots=True)
class ImageInput:
    """The image input being resized: its tensor, position, name, shape and H and W axes."""

    index: int
    position: int
    name: str
    shape: tuple[int, ...]
    height_axis: int
    width_axis: int

    def at_height(self, height: int) -> tuple[int, ...]:
        """The input shape at this height, width keeping the aspect ratio (at least 1)."""
        original_height = self.shape[self.height_axis]
        width = max(1, round(self.shape[self.width_axis] * height / original_height))
        dims = list(self.shape)
        dims[self.height_axis], dims[self.width_axis] = height, width
        return tuple(dims)


def image_inputs(model: Model) -> tuple[ImageInput, ...]:
    """The model's image inputs (rank 4, NHWC or NCHW with 1, 3 or 4 channels)."""
    main = model.subgraphs[0]
    found = []
    positions = [tensor for tensor in main.inputs if tensor >= 0]
    for position, tensor in enumerate(positions):
        if main.tensors[tensor].has_data:
            continue
        shape = main.tensors[tensor].shape
        axes = image_axes(shape)
        if axes is not None:
            found.append(ImageInput(tensor, position, main.tensors[tensor].name, shape, *axes))
    return tuple(found)


def image_input(model: Model) -> ImageInput:
    """The model's one image input; UsageError when there is none, or several."""
    found = image_inputs(model)
    if len(found) != 1:
        what = "no image input" if not found else f"{len(found)} image inputs"
        raise UsageError(
            f"{model.source}: --max-input needs exactly one image input (rank 4, NHWC or NCHW "
            f"with 1, 3 or 4 channels); this model has {what}"
        )
    return found[0]


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
