"""Running models on the real TFLM interpreter: bytes + inputs → printed head and output arrays.

`optimize` proves its rewrites with this: the rewritten model must report the predicted head
and compute bit-identical outputs (same inputs, several invocations so that stateful models carry
their state forward). Like `tflm_probe`, every run happens in a forked child, with C-level fd 2
captured for `print_allocations()`, so a crash is a result and not the end of arenalens;
`tflite_micro` is imported in the child only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arenalens.ir import Model, Tensor
from arenalens.runtimes.child import run_in_child
from arenalens.runtimes.tflm.probe import parse_allocations, reported, require_tflite_micro

RUN_TIMEOUT_SECONDS = 300.0
# Integer inputs are drawn over their whole range, floats from a unit normal (`random_inputs`).
_FLOAT_TYPES = ("FLOAT32", "FLOAT16", "FLOAT64")


@dataclass(frozen=True)
class RunResult:
    """What one child run saw: setup ok, head, outputs per invocation, and the log."""

    ok: bool
    head: int | None
    tail: int | None
    outputs: tuple[tuple[np.ndarray[Any, Any], ...], ...]  # per invocation, per output
    log: str
    error: str = ""


def random_inputs(
    model: Model, *, invocations: int = 3, seed: int = 0, non_negative: bool = False
) -> list[list[np.ndarray[Any, Any]]]:
    """Model → per invocation, one random array per input of subgraph 0 (seeded).

    `non_negative`: real values of at least 0 (a quantized input at or above its zero point),
    for models whose kernels refuse other values at Invoke: TFLM's quantized RSQRT fails on an
    input below its zero point ("Rsqrt is only defined for positive values", elementwise.cc)."""
    generator = np.random.default_rng(seed)
    subgraph = model.subgraphs[0]
    runs: list[list[np.ndarray[Any, Any]]] = []
    for _ in range(invocations):
        arrays: list[np.ndarray[Any, Any]] = []
        for tensor_index in subgraph.inputs:
            tensor = subgraph.tensors[tensor_index]
            dtype = np.dtype(_numpy_type(tensor.dtype.name))
            shape = tensor.shape or (1,)
            if tensor.dtype.name in _FLOAT_TYPES:
                array = generator.standard_normal(shape).astype(dtype)
                array = np.abs(array) if non_negative else array
            elif dtype == np.bool_:
                array = generator.integers(0, 2, shape).astype(np.bool_)
            else:
                info = np.iinfo(dtype)
                low = _lowest_non_negative(tensor, info) if non_negative else int(info.min)
                array = generator.integers(low, info.max, shape, endpoint=True, dtype=dtype)
            arrays.append(array)
        runs.append(arrays)
    return runs


def _lowest_non_negative(tensor: Tensor, info: np.iinfo[Any]) -> int:
    """The smallest stored value whose real value is not negative: the zero point of a
    quantized tensor (clamped to the type), 0 otherwise."""
    quantization = tensor.quantization
    low = quantization.zero_point if quantization and quantization.zero_point is not None else 0
    return min(max(low, int(info.min)), int(info.max))


def _numpy_type(name: str) -> str:
    return {
        "FLOAT32": "float32",
        "FLOAT16": "float16",
        "FLOAT64": "float64",
        "INT8": "int8",
        "UINT8": "uint8",
        "INT16": "int16",
        "UINT16": "uint16",
        "INT32": "int32",
        "UINT32": "uint32",
        "INT64": "int64",
        "UINT64": "uint64",
        "BOOL": "bool",
    }.get(name, "int8")


def run_model(
    data: bytes,
    inputs: Sequence[Sequence[np.ndarray[Any, Any]]],
    *,
    output_count: int,
    arena_size: int | None = None,
) -> RunResult:
    """Model bytes + inputs per invocation → head, tail and outputs, from a child process."""
    require_tflite_micro()
    size = arena_size if arena_size is not None else default_arena_size(len(data))
    arrays = [[np.asarray(a) for a in run] for run in inputs]
    payload, exit_code = run_in_child(
        _child_main, (data, arrays, output_count, size), timeout_seconds=RUN_TIMEOUT_SECONDS
    )
    if payload is None:
        return RunResult(False, None, None, (), "", f"child exited with code {exit_code}")
    log = str(payload.get("log", ""))
    head, tail, _, _ = parse_allocations(log)
    outputs = tuple(tuple(run) for run in payload.get("outputs", ()))
    return RunResult(bool(payload.get("ok")), head, tail, outputs, log, payload.get("error", ""))


def default_arena_size(file_bytes: int) -> int:
    """A generous arena: four times the file, at least 1 MiB, at most 64 MiB."""
    return min(64 << 20, max(1 << 20, 4 * file_bytes))


def _child_main(
    sender: Any,
    data: bytes,
    inputs: list[list[np.ndarray[Any, Any]]],
    output_count: int,
    arena_size: int,
) -> None:
    """In the child: capture fd 2, build, print allocations, invoke, send outputs back."""
    result: dict[str, Any] = {"ok": False, "outputs": []}
    with reported(result):
        from tflite_micro import runtime  # noqa: PLC0415 - optional extra, child only

        interpreter = runtime.Interpreter.from_bytes(data, arena_size=arena_size)
        interpreter.print_allocations()
        for run in inputs:
            for position, array in enumerate(run):
                interpreter.set_input(array, position)
            interpreter.invoke()
            result["outputs"].append(
                [np.array(interpreter.get_output(i)) for i in range(output_count)]
            )
        result["ok"] = True
    sender.send(result)
    sender.close()


def same_outputs(first: RunResult, second: RunResult) -> bool:
    """True when both runs succeeded and every output of every invocation is bit-identical."""
    if not (first.ok and second.ok) or len(first.outputs) != len(second.outputs):
        return False
    for run_a, run_b in zip(first.outputs, second.outputs, strict=True):
        if len(run_a) != len(run_b):
            return False
        for a, b in zip(run_a, run_b, strict=True):
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                return False
    return True
