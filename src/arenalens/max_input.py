"""Input resolution search: model + available bytes → the largest input height x width that fits.

The model's one image input (NHWC, or NCHW as PyTorch exports write it) keeps its batch, channels
and aspect ratio; only its height (and the width that keeps the ratio) change. At each height the
shapes of every tensor are propagated by the real LiteRT interpreter (`litert_shapes`, as
`--input-shape` does) and the model is planned again under the chosen runtime's rules; the number
compared is the one to declare (`declared.py`).

A few heights around the model's own (1/4 to 2x) are planned first, for the table and the HTML
chart; then a binary search between the largest that fits and the smallest that does not (up to
4x the model's own, at most 4,096): the arena grows with the input, so the heights that fit lie
below a threshold. Some heights the graph cannot take (a fixed pooling window or RESHAPE): below
every fitting height such a refusal means "too small", above one it counts as "too big", so the
answer is never a shape the model refuses, though it may then be below the true largest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arenalens.errors import ArenalensError, RuntimeUnavailableError, UsageError
from arenalens.ir import Model

MAX_SCALE = 4  # search up to 4x the model's own height
MAX_SIDE = 4096
# Heights (as fractions of the model's own) always planned for the curve.
CURVE_FRACTIONS = ((1, 4), (1, 2), (3, 4), (1, 1), (3, 2), (2, 1))


@dataclass(frozen=True, slots=True)
class InputSize:
    """One input shape tried: the bytes to declare at it, or why the graph refused it."""

    shape: tuple[int, ...]
    required_bytes: int | None  # None: the graph cannot take this shape
    fits: bool
    error: str = ""


@dataclass(frozen=True)
class InputSearch:
    """The largest input that fits, and every size planned on the way (by height)."""

    input_name: str
    input_index: int
    original_shape: tuple[int, ...]
    height_axis: int
    available_bytes: int
    largest: InputSize | None  # None: not even a 1-pixel-high input fits
    sizes: tuple[InputSize, ...]  # every height planned, sorted by height


@dataclass(frozen=True, slots=True)
class ImageInput:
    """The image input being resized: its index, name, shape and which axes are H and W."""

    index: int
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


def image_input(model: Model) -> ImageInput:
    """The model's one image input; UsageError when there is none, or several."""
    main = model.subgraphs[0]
    found = []
    for tensor in main.inputs:
        if tensor < 0 or main.tensors[tensor].has_data:
            continue
        shape = main.tensors[tensor].shape
        axes = _image_axes(shape)
        if axes is not None:
            found.append(ImageInput(tensor, main.tensors[tensor].name, shape, *axes))
    if len(found) != 1:
        what = "no image input" if not found else f"{len(found)} image inputs"
        raise UsageError(
            f"{model.source}: --max-input needs exactly one image input (rank 4, NHWC or NCHW "
            f"with 1, 3 or 4 channels); this model has {what}"
        )
    return found[0]


def _bracket(tried: dict[int, InputSize], *, cap: int) -> tuple[int | None, int, int]:
    """From the heights planned so far → (largest fitting height or None, low, high): the
    largest fitting height lies in [low, high). low is the largest fitting height, else the
    largest refused height below the smallest too-big one (0 if none); high is the smallest
    too-big height above low, else cap + 1."""
    fitting = [h for h, size in tried.items() if size.fits]
    too_big = [h for h, size in tried.items() if size.required_bytes is not None and not size.fits]
    if fitting:
        low = max(fitting)
        above = [h for h in too_big if h > low]
        return low, low, min(above) if above else cap + 1
    high = min(too_big) if too_big else cap + 1
    refused_below = [h for h, size in tried.items() if size.required_bytes is None and h < high]
    return None, max(refused_below, default=0), high


def _image_axes(shape: tuple[int, ...]) -> tuple[int, int] | None:
    if len(shape) != 4:
        return None
    if shape[3] in (1, 3, 4) and shape[1] >= 2 and shape[2] >= 2:
        return 1, 2
    if shape[1] in (1, 3, 4) and shape[2] >= 2 and shape[3] >= 2:
        return 2, 3
    return None


def search_max_input(
    model: Model,
    *,
    available_bytes: int,
    required_at: Callable[[Model], int],
) -> InputSearch:
    """Model + bytes available + (resized model → bytes to declare) → the largest input height
    whose number fits, with the sizes planned on the way."""
    from arenalens.runtimes.litert.shapes import resize_model_inputs  # noqa: PLC0415 - extra

    image = image_input(model)
    original_height = image.shape[image.height_axis]
    tried: dict[int, InputSize] = {}

    def size_at(height: int) -> InputSize:
        if height not in tried:
            shape = image.at_height(height)
            try:
                resized = resize_model_inputs(model, {image.index: shape})
                required = required_at(resized)
            except RuntimeUnavailableError:
                raise  # no interpreter: no size can be tried, say so instead
            except ArenalensError as error:
                tried[height] = InputSize(shape, None, fits=False, error=str(error))
            else:
                tried[height] = InputSize(shape, required, fits=required <= available_bytes)
        return tried[height]

    for numerator, denominator in CURVE_FRACTIONS:
        size_at(max(1, original_height * numerator // denominator))
    best, low, high = _bracket(tried, cap=min(MAX_SIDE, MAX_SCALE * original_height))
    while high - low > 1:
        middle = (low + high) // 2
        size = size_at(middle)
        if size.fits:
            best = low = middle
        elif size.required_bytes is not None or best is not None:
            high = middle  # too big; a refusal above a fitting size counts as too big too
        else:
            low = middle  # refused below every fitting size: too small for the graph
    return InputSearch(
        input_name=image.name,
        input_index=image.index,
        original_shape=image.shape,
        height_axis=image.height_axis,
        available_bytes=available_bytes,
        largest=None if best is None else tried[best],
        sizes=tuple(tried[height] for height in sorted(tried)),
    )
