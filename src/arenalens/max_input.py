"""Input resolution search: model + available bytes → which input sizes the network accepts, and
the largest of them that fits.

The model's one image input (NHWC, or NCHW as PyTorch exports write it) keeps its batch, channels
and aspect ratio; only its height (and the width that keeps the ratio) change. At each height the
shapes of every tensor are propagated by the real LiteRT interpreter (`litert_shapes`, as
`--input-shape` does) and the model is planned again under the chosen runtime's rules; the number
compared is the one to declare (`declared.py`).

Two limits are told apart, because they have different fixes:

* the *network's*: heights the graph or the runtime refuses (a fixed pooling window or RESHAPE
  takes a range of sizes; a kernel may refuse a shape). The accepted heights are found as one
  interval around the model's own height (the usual causes refuse everything below and above
  it), each end found by bisection; the search looks up to 4x the model's own height (at most
  4,096 pixels), and says when the network accepts more than that.
* *memory's*: within the accepted interval the arena grows with the input, so the heights that fit
  lie below a threshold, found by bisection too.

A few heights around the model's own (1/4 to 2x) are always planned, for the table and the HTML
chart. The answer is never a size the network refuses, and never the network's limit presented
as memory's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from arenalens.errors import ArenalensError, RuntimeUnavailableError, UsageError
from arenalens.image_inputs import image_inputs
from arenalens.ir import Model
from arenalens.planning.problem import missing_extra_text
from arenalens.units import format_bytes_exact

MAX_SCALE = 4  # search up to 4x the model's own height
MAX_SIDE = 4096
# Heights (as fractions of the model's own) always planned for the curve.
CURVE_FRACTIONS = ((1, 4), (1, 2), (3, 4), (1, 1), (3, 2), (2, 1))


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


def image_input(model: Model) -> ImageInput:
    """The model's one image input; UsageError when there is none, or several."""
    found = image_inputs(model)
    if len(found) != 1:
        what = "no image input" if not found else f"{len(found)} image inputs"
        raise UsageError(
            f"{model.source}: --max-input needs exactly one image input (rank 4, NHWC or NCHW "
            f"with 1, 3 or 4 channels); this model has {what}"
        )
    position, index, (height_axis, width_axis) = found[0]
    tensor = model.subgraphs[0].tensors[index]
    return ImageInput(index, position, tensor.name, tensor.shape, height_axis, width_axis)


@dataclass(frozen=True, slots=True)
class InputSize:
    """One input shape tried: the bytes to declare at it, or why it was refused."""

    shape: tuple[int, ...]
    required_bytes: int | None  # None: the graph or the runtime refuses this shape
    fits: bool
    error: str = ""
    # An optimized size: the install command of the extra whose exact search its plan went
    # without, above its lower bound (`Optimization.missing_extra`; '' none).
    missing_extra: str = ""

    @property
    def accepted(self) -> bool:
        """True when the network takes this shape (it has a number to declare)."""
        return self.required_bytes is not None


@dataclass(frozen=True)
class InputSearch:
    """The sizes the network accepts, the largest that fits, and every size planned (by height)."""

    input_name: str
    input_index: int  # the input's tensor index in subgraph 0
    input_position: int  # its position among the model's inputs (what --input-shape N names)
    original_shape: tuple[int, ...]
    height_axis: int
    available_bytes: int
    largest: InputSize | None  # None: no accepted size fits
    sizes: tuple[InputSize, ...]  # every height planned, sorted by height
    smallest_accepted: InputSize | None = None  # None: the network refuses every size tried
    largest_accepted: InputSize | None = None
    # True when the largest accepted size is the search's own limit (the network may take more).
    accepts_beyond: bool = False
    # The largest size that fits once `arenalens optimize` has written its plan for that size,
    # when that is larger than `largest` (its required_bytes: the optimized model's number).
    largest_after_optimize: InputSize | None = None
    # The `arenalens optimize` options that rewrite reaches `largest_after_optimize` with (the
    # remedy ladder's rung: () for the offline plan alone).
    after_optimize_options: tuple[str, ...] = ()
    # The install command of the extra whose exact search could change that answer ('' none):
    # the size found, or the next one up that did not fit, was planned without it above its
    # lower bound (`InputSize.missing_extra`): with it the size may be larger, or its number lower.
    after_optimize_missing_extra: str = ""
    # Why no other size could be sized at all (LiteRT, which propagates shapes, cannot load the
    # model): then nothing is said about the network's limits or memory's.
    unavailable: str = ""

    @property
    def memory_limits(self) -> bool:
        """True when memory, not the network, stops the input from growing: some accepted size
        does not fit."""
        return any(size.accepted and not size.fits for size in self.sizes)

    def limit_text(self) -> str:
        """Why the largest size that fits is the largest: memory, the network, or the search,
        which stopped with every size tried fitting (larger ones may fit too)."""
        if self.memory_limits:
            return "memory is the limit"
        if self.accepts_beyond:
            return "the search's limit: every size tried fits, and larger ones may too"
        return "the network's own limit: every size it accepts fits"

    def accepted_text(self) -> str:
        """'the network accepts 1x65x65x3 to 1x191x191x3' (or up to at least the search's
        limit)."""
        low, high = self.smallest_accepted, self.largest_accepted
        if low is None or high is None:
            return "the network or the runtime refuses every input size tried"
        first = "x".join(str(d) for d in low.shape)
        last = "x".join(str(d) for d in high.shape)
        if self.accepts_beyond:
            return f"the network accepts {first} up to at least {last} (the search stops there)"
        return f"the network accepts {first} to {last}"

    def none_fits_text(self) -> str:
        """When no size fits as it is: what the smallest needs, and what is left (a rewrite that
        fits, whose step follows, or only a smaller network)."""
        smallest = self.smallest_accepted
        needs = format_bytes_exact(smallest.required_bytes or 0) if smallest else "?"
        after = self.largest_after_optimize
        if after is None:
            # Without the exact search the rewrites' numbers may be higher than it makes them.
            missing = self.after_optimize_missing_extra
            return (
                f"{self.accepted_text()}, and none of them fits: the smallest needs {needs}, so "
                "only a smaller network (or a larger board) helps"
                + (f" (rewritten: {missing_extra_text(missing)})" if missing else "")
            )
        rewritten = (
            "its own size fits (the first step)"
            if after.shape == self.original_shape
            else "a larger one fits"
        )
        return (
            f"{self.accepted_text()}; none fits as it is (the smallest needs {needs}); "
            f"rewritten, {rewritten}"
        )


def search_max_input(
    model: Model,
    *,
    available_bytes: int,
    required_at: Callable[[Model], int],
    optimized_at: Callable[[Model], InputSize | None] | None = None,
    optimize_options: tuple[str, ...] = (),
    optimize_up_to_own: bool = False,
) -> InputSearch:
    """Model + bytes available + (resized model → bytes to declare, raising ArenalensError when
    the runtime refuses it) → the heights the network accepts and the largest that fits; with
    `optimized_at` (resized model → the number `optimize` with `optimize_options` reaches there,
    as an InputSize whose shape is not read),
    also the largest that fits after `arenalens optimize`, searched up to the model's own height
    when `optimize_up_to_own` (a split is costly to search: the model's own size first)."""
    from arenalens.runtimes.litert.shapes import (  # noqa: PLC0415 - extra
        ShapesUnavailableError,
        require_shape_propagation,
        resize_model_inputs,
    )

    image = image_input(model)
    original_height = image.shape[image.height_axis]
    cap = min(MAX_SIDE, MAX_SCALE * original_height)
    tried: dict[int, InputSize] = {}
    try:
        require_shape_propagation(model)
    except ShapesUnavailableError as error:
        unsized = _result(image, available_bytes, tried, best=None, low=None, high=None, cap=cap)
        return replace(unsized, unavailable=str(error))

    def size_at(height: int) -> InputSize:
        if height not in tried:
            shape = image.at_height(height)
            try:
                # By position: a tensor index or a name may be taken for something else.
                resized = resize_model_inputs(model, {image.position: shape})
                required = required_at(resized)
            except RuntimeUnavailableError:
                raise  # no interpreter: no size can be tried, say so instead
            except ArenalensError as error:
                tried[height] = InputSize(shape, None, fits=False, error=str(error))
            else:
                tried[height] = InputSize(shape, required, fits=required <= available_bytes)
        return tried[height]

    for numerator, denominator in CURVE_FRACTIONS:
        size_at(max(1, min(cap, original_height * numerator // denominator)))
    accepted = [height for height, size in tried.items() if size.accepted]
    if not accepted:
        return _result(image, available_bytes, tried, best=None, low=None, high=None, cap=cap)
    low = _edge(size_at, inside=min(accepted), outside=0)
    high = _edge(size_at, inside=max(accepted), outside=cap + 1)
    best = _largest_fitting(size_at, low, high)
    found = _result(image, available_bytes, tried, best=best, low=low, high=high, cap=cap)
    if optimized_at is None or best == high:
        return found
    after_high = min(high, original_height) if optimize_up_to_own else high
    if best is not None and best >= after_high:
        return found
    after, missing_extra = _largest_after_optimize(
        lambda height: optimized_size(height, size_at, image, model, optimized_at),
        above=low - 1 if best is None else best,
        high=after_high,
        available_bytes=available_bytes,
        top_first=optimize_up_to_own,
    )
    return replace(
        found,
        largest_after_optimize=after,
        after_optimize_options=tuple(optimize_options),
        after_optimize_missing_extra=missing_extra,
    )


def optimized_size(
    height: int,
    size_at: Callable[[int], InputSize],
    image: ImageInput,
    model: Model,
    optimized_at: Callable[[Model], InputSize | None],
) -> InputSize | None:
    """The size at this height with the number `optimize` reaches there (None: refused, or
    optimize has no answer)."""
    from arenalens.runtimes.litert.shapes import resize_model_inputs  # noqa: PLC0415 - extra

    if not size_at(height).accepted:
        return None
    shape = image.at_height(height)
    try:
        optimized = optimized_at(resize_model_inputs(model, {image.position: shape}))
    except RuntimeUnavailableError:
        raise
    except ArenalensError:
        return None
    if optimized is None:
        return None
    return replace(optimized, shape=shape)


def _largest_after_optimize(
    optimized: Callable[[int], InputSize | None],
    *,
    above: int,
    high: int,
    available_bytes: int,
    top_first: bool = False,
) -> tuple[InputSize | None, str]:
    """The largest height in (above, high] whose optimized number fits (it grows with the input),
    and the extra whose exact search could change it ('' none: `after_optimize_missing_extra`):
    steps of 1, 2, 4, ... up from `above` until one does not fit, then bisection; None when not
    even the next height does. Small steps first: sizes near the as-is answer are cheap to
    optimize, and the answer is usually among them; `top_first` tries `high` first."""
    sizes: dict[int, InputSize | None] = {}

    def fits(height: int) -> bool:
        sizes[height] = size = optimized(height)
        return size is not None and (size.required_bytes or 0) <= available_bytes

    if top_first and high > above and fits(high):
        return sizes[high], _missing_extra(sizes, high, high + 1)
    fitting, too_big, step = above, high + 1, 1
    while fitting + step < too_big:
        if not fits(fitting + step):
            too_big = fitting + step
            break
        fitting = fitting + step
        step *= 2
    while too_big - fitting > 1:
        middle = (fitting + too_big) // 2
        if fits(middle):
            fitting = middle
        else:
            too_big = middle
    return sizes.get(fitting), _missing_extra(sizes, fitting, too_big)


def _missing_extra(sizes: dict[int, InputSize | None], fitting: int, too_big: int) -> str:
    """The extra the largest size that fits, or the first too big, went without ('' none):
    with it the number at the one may be lower, or the other fit."""
    for height in (fitting, too_big):
        size = sizes.get(height)
        if size is not None and size.missing_extra:
            return size.missing_extra
    return ""


def _edge(size_at: Callable[[int], InputSize], *, inside: int, outside: int) -> int:
    """The accepted height nearest `outside` (0 below every height, cap + 1 above): bisection
    between an accepted height and a refused one (or the end of the range)."""
    step = 1 if outside > inside else -1
    end = outside - step  # the last height in range on that side
    if (end - inside) * step <= 0:
        return inside
    if size_at(end).accepted:
        return end
    refused = end
    while abs(refused - inside) > 1:
        middle = (inside + refused) // 2
        if size_at(middle).accepted:
            inside = middle
        else:
            refused = middle
    return inside


def _largest_fitting(size_at: Callable[[int], InputSize], low: int, high: int) -> int | None:
    """The largest height in [low, high] that fits (the arena grows with the input)."""
    if not size_at(low).fits:
        return None
    if size_at(high).fits:
        return high
    fitting, too_big = low, high
    while too_big - fitting > 1:
        middle = (fitting + too_big) // 2
        size = size_at(middle)
        if size.fits:
            fitting = middle
        elif size.accepted:
            too_big = middle
        else:
            # A refused height inside the accepted interval: count it as too big, so the answer
            # is always a size the network takes.
            too_big = middle
    return fitting


def _result(
    image: ImageInput,
    available_bytes: int,
    tried: dict[int, InputSize],
    *,
    best: int | None,
    low: int | None,
    high: int | None,
    cap: int,
) -> InputSearch:
    return InputSearch(
        input_name=image.name,
        input_index=image.index,
        input_position=image.position,
        original_shape=image.shape,
        height_axis=image.height_axis,
        available_bytes=available_bytes,
        largest=None if best is None else tried[best],
        sizes=tuple(tried[height] for height in sorted(tried)),
        smallest_accepted=None if low is None else tried[low],
        largest_accepted=None if high is None else tried[high],
        accepts_beyond=high == cap,
    )
