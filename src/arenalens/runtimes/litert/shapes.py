"""What-if input shapes: Model + {input: shape} → Model with every shape as LiteRT propagates it.

The real LiteRT interpreter does the propagation: `resize_tensor_input` on each named input, then
`allocate_tensors`, which runs every kernel's Prepare in execution order, then each model tensor's
shape is read back. That is the same machinery that resizes tensors on a device running LiteRT, and
for TFLM it tells what a model converted at that input shape would look like. `ai_edge_litert` is
imported lazily; without it this module raises RuntimeUnavailableError with the install hint.

The interpreter runs in a forked child (`runtimes/child.py`): some of LiteRT's Prepare checks abort
the process instead of failing (a quantization multiplier out of range, as an extreme activation
scale gives), and that must be a one-line error naming the model, not the end of arenalens.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import re
import signal
import struct
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from arenalens.errors import ArenalensError, RuntimeUnavailableError, UsageError
from arenalens.ir import MAX_TENSOR_BYTES, Model, Quantization, Subgraph
from arenalens.runtimes.child import run_in_child

INSTALL_HINT = "pip install 'arenalens[runtime]'"
# What every path that propagates shapes says without LiteRT (--input-shape, --max-input,
# --compare-input-shape): up front (`require_shape_interpreter`) and where the import fails.
SHAPES_UNAVAILABLE = (
    "--input-shape propagates shapes with the real LiteRT interpreter, which is not "
    f"installed: {INSTALL_HINT}"
)
_SHAPE_PATTERN = re.compile(r"^\s*\d+(\s*[x,]\s*\d+)*\s*$")
# A propagation that takes longer than this is treated as hung.
PROPAGATION_TIMEOUT_SECONDS = 120.0
# Tensor shapes by (subgraph, tensor), as the interpreter read them back.
Sizes = dict[tuple[int, int], tuple[int, ...]]


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """'input_1=1x128x128x3' (or '0=1,128,128,3') → ('input_1', (1, 128, 128, 3))."""
    name, separator, shape_text = text.rpartition("=")
    if not separator or not name.strip():
        raise UsageError(
            f"--input-shape '{text}': expected NAME=SHAPE, e.g. input_1=1x128x128x3 "
            "(NAME: an input tensor name, signature input name or input position)"
        )
    if not _SHAPE_PATTERN.match(shape_text):
        raise UsageError(
            f"--input-shape '{text}': shape '{shape_text}' is not dimensions joined by 'x' "
            "(e.g. 1x128x128x3)"
        )
    dims = tuple(int(d) for d in re.split(r"\s*[x,]\s*", shape_text.strip()))
    if any(d <= 0 for d in dims):
        raise UsageError(f"--input-shape '{text}': every dimension must be positive")
    return name.strip(), dims


def input_tensor_index(model: Model, key: str | int) -> int:
    """An input's tensor name, signature name or position (subgraph 0) → its tensor index."""
    main = model.subgraphs[0]
    inputs = [t for t in main.inputs if t >= 0]
    if isinstance(key, str):
        for tensor in inputs:
            if main.tensors[tensor].name == key:
                return tensor
        for signature in model.signature_defs:
            if signature.subgraph != 0:
                continue
            for name, tensor in signature.inputs:
                if name == key:
                    return tensor
        if not key.isdigit():
            raise UsageError(f"{model.source}: no input named '{key}' ({_describe_inputs(model)})")
        key = int(key)
    if not 0 <= key < len(inputs):
        raise UsageError(
            f"{model.source}: input position {key} is out of range ({_describe_inputs(model)})"
        )
    return inputs[key]


def _describe_inputs(model: Model) -> str:
    main = model.subgraphs[0]
    described = [
        f"{position}: '{main.tensors[t].name}' {list(main.tensors[t].shape)}"
        for position, t in enumerate(t for t in main.inputs if t >= 0)
    ]
    return "inputs: " + ", ".join(described) if described else "the model has no inputs"


def resize_model_inputs(model: Model, shapes: Mapping[str | int, Sequence[int]]) -> Model:
    """Model + {input: shape} → Model with every tensor's shape as LiteRT propagates it."""
    if not shapes:
        return model
    resized = {input_tensor_index(model, key): tuple(shape) for key, shape in shapes.items()}
    main = model.subgraphs[0]
    for tensor, shape in sorted(resized.items()):
        current = main.tensors[tensor].shape
        if len(shape) != len(current):
            raise UsageError(
                f"{model.source}: input '{main.tensors[tensor].name}' has rank "
                f"{len(current)} {list(current)}, the new shape {list(shape)} has rank "
                f"{len(shape)}"
            )
    sizes = _propagated_sizes(model, resized)
    subgraphs = [_read_shapes(model, subgraph, sizes) for subgraph in model.subgraphs]
    # The user fixed these inputs' shapes: their unknown dimensions are known now.
    main = subgraphs[0]
    fixed = tuple(
        tensor._replace(shape_signature=tensor.shape) if tensor.index in resized else tensor
        for tensor in main.tensors
    )
    subgraphs[0] = replace(main, tensors=fixed)
    return replace(model, subgraphs=tuple(subgraphs))


class ShapesUnavailableError(UsageError):
    """LiteRT, which propagates the shapes of a resized model, cannot load this model at all
    (TFLM may still run it at its own size): no other input size can be sized."""


def require_shape_interpreter() -> None:
    """RuntimeUnavailableError when the LiteRT interpreter that propagates shapes is missing: a
    look-up, not an import, so that a command asks before any work."""
    if importlib.util.find_spec("ai_edge_litert") is None:
        raise RuntimeUnavailableError(SHAPES_UNAVAILABLE)


def require_shape_propagation(model: Model) -> None:
    """ShapesUnavailableError when LiteRT cannot load the model, so no resize can be sized
    (RuntimeUnavailableError without LiteRT)."""
    _interpreter(model)


def _propagated_sizes(model: Model, resized: Mapping[int, tuple[int, ...]]) -> Sizes:
    """Every tensor's shape after LiteRT resized the inputs and ran every Prepare, from a child
    process; a LiteRT that refuses the shapes, or aborts, is a one-line UsageError."""
    wanted = ", ".join(
        f"'{model.subgraphs[0].tensors[t].name}'={'x'.join(map(str, s))}"
        for t, s in sorted(resized.items())
    )
    _interpreter_class()  # imported once here, so that each forked child starts with it
    payload, exit_code = run_in_child(
        _propagate, (model, dict(resized)), timeout_seconds=PROPAGATION_TIMEOUT_SECONDS
    )
    if payload is not None and isinstance(payload.get("error"), ArenalensError):
        raise payload["error"]
    # A refusal (or an abort; not a hang: that would be waited for twice) said again at the
    # model's own size.
    if (payload is None and exit_code is not None) or (payload and "litert" in payload):
        refusal = _ended(exit_code) if payload is None else str(payload["litert"])
        if refusal == _own_size_refusal(model):
            raise UsageError(
                f"{model.source}: LiteRT, which propagates the tensor shapes for input shape "
                f"{wanted}, refuses the model at its own size too, in the same words (its "
                f"builtin kernels): the refusal is the model's, not that size's: "
                f"{_first_message(refusal)} (check without --input-shape says whether it runs "
                "at its own size)"
            )
    if payload is None:
        raise UsageError(
            f"{model.source}: LiteRT, which propagates the tensor shapes for input shape "
            f"{wanted}, {_ended(exit_code)}: a check in one of its kernels' Prepare failed, so "
            "the model cannot be sized at that shape"
        )
    if "litert" in payload:
        raise UsageError(
            f"{model.source}: LiteRT cannot run the model with input shape {wanted}: "
            f"{payload['litert']}"
        )
    sizes: Sizes = payload["sizes"]
    return sizes


def _own_size_refusal(model: Model) -> str | None:
    """What LiteRT's builtin kernels say when they prepare the model at its own size (None: they
    prepare it). The same refusal at another size is the model's, not that size's: a check on
    quantization parameters (a fused RELU6 bound that overflows int32, a multiplier out of
    range) fails at every size, and shapes do not depend on those parameters."""
    payload, exit_code = run_in_child(
        _propagate, (model, {}), timeout_seconds=PROPAGATION_TIMEOUT_SECONDS
    )
    if payload is None:
        return _ended(exit_code)
    refusal = payload.get("litert")
    return None if refusal is None else str(refusal)


def _ended(exit_code: int | None) -> str:
    if exit_code is not None and exit_code < 0:
        try:
            return f"aborted ({signal.Signals(-exit_code).name})"
        except ValueError:
            return f"died on signal {-exit_code}"
    if exit_code is None:
        return f"did not finish in {PROPAGATION_TIMEOUT_SECONDS:.0f} s"
    return f"exited with code {exit_code}"


def _propagate(sender: Any, model: Model, resized: Mapping[int, tuple[int, ...]]) -> None:
    """In the child: resize, allocate (every Prepare), read every tensor's shape back."""
    # An abort is an expected outcome here; keep a parent's faulthandler from reporting it.
    faulthandler.disable()
    result: dict[str, Any]
    try:
        interpreter = _interpreter(model)
        for index, shape in sorted(resized.items()):
            interpreter.resize_tensor_input(index, list(shape), strict=False)
        interpreter.allocate_tensors()
        wrapper = interpreter._interpreter
        sizes: Sizes = {}
        for subgraph in model.subgraphs:
            for tensor in subgraph.tensors:
                try:
                    size = wrapper.TensorSize(tensor.index, subgraph.index)
                except (RuntimeError, ValueError):  # "Tensor with no shape found"
                    continue
                sizes[(subgraph.index, tensor.index)] = tuple(int(d) for d in size)
        result = {"sizes": sizes}
    except ArenalensError as error:
        result = {"error": error}
    except (RuntimeError, ValueError) as error:
        result = {"litert": str(error).strip().splitlines()[0] if str(error).strip() else "failed"}
    sender.send(result)
    sender.close()


def _interpreter_class() -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415 - optional extra
    except ImportError:
        raise RuntimeUnavailableError(SHAPES_UNAVAILABLE) from None
    return Interpreter


def _interpreter(model: Model) -> Any:
    try:
        from ai_edge_litert.interpreter import (  # noqa: PLC0415 - optional extra
            Interpreter,
            OpResolverType,
        )
    except ImportError:
        raise RuntimeUnavailableError(SHAPES_UNAVAILABLE) from None
    try:
        return Interpreter(
            model_content=_loadable_bytes(model),
            experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        )
    except (RuntimeError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else "failed"
        raise ShapesUnavailableError(
            f"{model.source}: another input shape needs LiteRT to propagate the tensor shapes, "
            f"and LiteRT cannot load the model: {_first_message(first_line)}"
        ) from None


def _loadable_bytes(model: Model) -> bytes:
    """The model's bytes with each out-of-range `quantized_dimension` set to the axis its scales
    describe, so LiteRT's loader accepts it for propagating shapes.

    LiteRT's InterpreterBuilder refuses a tensor whose quantized_dimension is not below its rank;
    TFLM never reads the field of a bias, and TOCO wrote 3 on rank-1 per-channel biases (TFLM's own
    person_detect), so TFLM runs models LiteRT will not load. Shapes do not depend on the field:
    the copy differs only in that inline int32 (same length, same weights and scales). A tensor
    whose scales match no single axis is left as it is, and LiteRT's refusal stands.
    """
    fixes = [
        (subgraph.index, tensor.index, axis)
        for subgraph in model.subgraphs
        for tensor in subgraph.tensors
        if (axis := _described_axis(tensor.shape, tensor.quantization)) is not None
    ]
    if not fixes:
        return bytes(model.data)
    from tflite.Model import Model as ModelTable  # noqa: PLC0415 - only for such models

    data = bytearray(model.data)
    root = ModelTable.GetRootAs(bytes(data), 0)
    for subgraph_index, tensor_index, axis in fixes:
        parameters = root.Subgraphs(subgraph_index).Tensors(tensor_index).Quantization()
        table = parameters._tab  # the generated accessors' table: position and field offsets
        struct.pack_into("<i", data, table.Pos + table.Offset(_QUANTIZED_DIMENSION_FIELD), axis)
    return bytes(data)


# The vtable offset of QuantizationParameters.quantized_dimension (field 6: 4 + 2 * 6).
_QUANTIZED_DIMENSION_FIELD = 16


def _described_axis(shape: tuple[int, ...], quantization: Quantization | None) -> int | None:
    """The in-range axis to write for a quantization LiteRT would refuse for its axis alone, or
    None (in range already, no quantization, a scalar, or scales that fit no single axis)."""
    if quantization is None or not shape or 0 <= quantization.axis < len(shape):
        return None
    if quantization.axis < 0:
        return None  # stored negative: not a TOCO quirk, LiteRT's refusal stands
    if quantization.channel_count == 1:
        return 0  # one scale: the axis is never read
    matching = [axis for axis, size in enumerate(shape) if size == quantization.channel_count]
    return matching[0] if len(matching) == 1 else None


def _first_message(text: str) -> str:
    """LiteRT's loader repeats its message once per tensor, without a separator: the first."""
    again = text.find(text[:24], 1) if len(text) > 48 else -1
    first = (text[:again] if again > 0 else text).rstrip(".")
    return _JOINED_SENTENCE.sub(". ", first)  # "... Was 3.Tensor 33 has ...": two reports


_JOINED_SENTENCE = re.compile(r"\.(?=[A-Z])")


def _read_shapes(model: Model, subgraph: Subgraph, sizes: Sizes) -> Subgraph:
    """One subgraph with each tensor's shape replaced by the interpreter's (when it has one)."""
    tensors = []
    for tensor in subgraph.tensors:
        shape = sizes.get((subgraph.index, tensor.index), tensor.shape)  # none: keep the file's
        if shape == tensor.shape:
            tensors.append(tensor)
            continue
        _check_bytes(model, subgraph, tensor.name, shape, tensor.dtype.element_bytes or 1)
        tensors.append(tensor._replace(shape=shape))
    return replace(subgraph, tensors=tuple(tensors))


def _check_bytes(
    model: Model, subgraph: Subgraph, name: str, shape: tuple[int, ...], element_bytes: int
) -> None:
    total = element_bytes
    for dim in shape:
        total *= max(dim, 0)
    if total > MAX_TENSOR_BYTES:
        raise UsageError(
            f"{model.source}: subgraph {subgraph.index} tensor '{name}' would have shape "
            f"{list(shape)}, too large to plan"
        )
