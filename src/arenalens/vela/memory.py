"""A Vela-compiled model + its TFLM arena → every memory the board must give the NPU, and Vela's
own "Total SRAM used" beside them, with the difference explained.

What the board provides for an Ethos-U model (TFLM's `kernels/ethos_u/ethosu.cc`, the Ethos-U
core driver's `ethosu_invoke_async`):

* the **tensor arena** (`kTensorArenaSize`): TFLM plans Vela's `scratch` and `scratch_fast`
  tensors at the offsets Vela wrote (both at 0), with the CPU operators' tensors, the kernel's two
  base-address scratch buffers and TFLM's tail; arenalens' TFLM budget gives it exactly;
* the **fast memory** (Dedicated_Sram only, where `scratch_fast` is a tensor of its own): the
  buffer firmware gives `ethosu_init(..., fast_memory, fast_memory_size, ...)`; the driver then
  points base address 2 at it instead of the arena's copy, after checking that
  `fast_memory_size` is at least the fast scratch's size ("Fast memory area too small" otherwise).
  The arena still holds its copy of the fast scratch, unused once the driver redirects; giving
  those bytes back would mean shrinking the tensor the driver's size check reads, so arenalens
  only says how many they are (`arena_fast_copy_bytes`);
* the **model's read-only data** (weights, biases, lookup tables, the command stream), which the
  NPU reads from the .tflite in place: in SRAM when compiled with Sram_Only, where Vela's SRAM
  figure does not count it.

Vela's "Total SRAM used" is the `scratch` tensor (Shared_Sram, Sram_Only) or the `scratch_fast`
tensor (Dedicated_Sram); it cannot know TFLM's own structures, so the arena is larger by TFLM's
tail, the kernel's scratch buffers, and the CPU operators' tensors outside Vela's scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.ir import Model, Tensor
from arenalens.vela.compiled import NpuOperator, npu_operators


@dataclass(frozen=True, slots=True)
class NpuMemory:
    """The memories an Ethos-U model needs besides what TFLM's figures already count."""

    npu_operators: int
    compiled_for: tuple[str, ...]  # the NPU configurations the command streams are for
    dedicated_sram: bool  # the fast scratch is a tensor of its own (compiled for Dedicated_Sram)
    scratch_bytes: int  # Vela's arena scratch (the largest over the NPU operators)
    fast_scratch_bytes: int  # its fast scratch (== scratch_bytes unless dedicated)
    # The fast memory ethosu_init must be given (Dedicated_Sram; 0 otherwise): the driver checks
    # fast_memory_size >= this before every inference.
    fast_memory_bytes: int
    # Bytes of the arena only the fast scratch's copy occupies (Dedicated_Sram): unused while the
    # driver is given its fast memory.
    arena_fast_copy_bytes: int
    read_only_bytes: int  # weights, biases and tables the NPU reads from the model
    command_stream_bytes: int
    vela_sram_bytes: int  # what Vela prints as "Total SRAM used"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "npu_operators": self.npu_operators,
            "compiled_for": list(self.compiled_for),
            "memory_mode": "Dedicated_Sram" if self.dedicated_sram else "Shared_Sram or Sram_Only",
            "scratch_bytes": self.scratch_bytes,
            "fast_scratch_bytes": self.fast_scratch_bytes,
            "fast_memory_bytes": self.fast_memory_bytes,
            "arena_fast_copy_bytes": self.arena_fast_copy_bytes,
            "read_only_bytes": self.read_only_bytes,
            "command_stream_bytes": self.command_stream_bytes,
            "vela_sram_bytes": self.vela_sram_bytes,
        }

    def document(self, required_bytes: int | None) -> dict[str, object]:
        """JSON-ready, with how far the arena to declare is above Vela's SRAM figure (None:
        no number to declare)."""
        found = self.as_dict()
        found["arena_over_vela_sram_bytes"] = (
            None if required_bytes is None else required_bytes - self.vela_sram_bytes
        )
        return found


def npu_memory(model: Model) -> NpuMemory | None:
    """The model's NPU memories; None when it has no ethos-u operator."""
    operators = npu_operators(model)
    if not operators:
        return None
    scratch = max(_nbytes(op.scratch) for op in operators)
    fast = max(_nbytes(op.scratch_fast) for op in operators)
    dedicated = any(op.dedicated_fast_scratch for op in operators)
    read_only = _distinct_bytes(model, operators, "read_only")
    streams = _distinct_bytes(model, operators, "command_stream")
    names = sorted({op.compiled_for.name for op in operators if op.compiled_for is not None})
    return NpuMemory(
        npu_operators=len(operators),
        compiled_for=tuple(names),
        dedicated_sram=dedicated,
        scratch_bytes=scratch,
        fast_scratch_bytes=fast,
        fast_memory_bytes=fast if dedicated else 0,
        arena_fast_copy_bytes=_fast_copy_bytes(model, operators) if dedicated else 0,
        read_only_bytes=read_only,
        command_stream_bytes=streams,
        vela_sram_bytes=fast if dedicated else scratch,
    )


def fast_memory_refusal(memory: NpuMemory, fast_memory_size: int) -> str:
    """The driver's refusal when firmware gives it less fast memory than the model's fast
    scratch ('' when it is enough, or the model was not compiled for Dedicated_Sram)."""
    if not memory.dedicated_sram or fast_memory_size >= memory.fast_memory_bytes:
        return ""
    return (
        f"Fast memory area too small. fast_memory_size={fast_memory_size}, "
        f"base_addr_size={memory.fast_memory_bytes} (the Ethos-U driver refuses every inference)"
    )


def _nbytes(tensor: Tensor | None) -> int:
    return 0 if tensor is None else tensor.nbytes


def _distinct_bytes(model: Model, operators: tuple[NpuOperator, ...], role: str) -> int:
    """Bytes of the distinct tensors in one role (operators share the read-only tensor)."""
    seen: dict[tuple[int, int], int] = {}
    for op in operators:
        if role == "read_only":
            tensor = op.read_only
        else:
            inputs = model.subgraphs[op.subgraph].operators[op.operator].inputs
            index = inputs[0] if inputs else -1
            tensors = model.subgraphs[op.subgraph].tensors
            tensor = tensors[index] if 0 <= index < len(tensors) else None
        if tensor is not None:
            seen[(op.subgraph, tensor.index)] = tensor.nbytes
    return sum(seen.values())


def _fast_copy_bytes(model: Model, operators: tuple[NpuOperator, ...]) -> int:
    """Bytes of the arena covered by a fast scratch tensor and by no other tensor Vela placed
    (its offline plan; the fast scratch lives from the model's start to its end, so no tensor
    TFLM plans online shares its bytes)."""
    plan = model.offline_plan
    if plan is None:
        return 0
    covered = 0
    for subgraph in {op.subgraph for op in operators}:
        fast_tensors = {
            op.scratch_fast.index
            for op in operators
            if op.subgraph == subgraph and op.scratch_fast is not None and op.dedicated_fast_scratch
        }
        intervals: list[tuple[int, int]] = []
        fast_ranges: list[tuple[int, int]] = []
        for tensor in model.subgraphs[subgraph].tensors:
            offset = plan.offsets[model.tensor_offset_index(subgraph, tensor.index)]
            if offset < 0 or tensor.has_data:
                continue
            span = (offset, offset + tensor.nbytes)
            (fast_ranges if tensor.index in fast_tensors else intervals).append(span)
        covered += _length(fast_ranges) - _length(_intersections(fast_ranges, intervals))
    return covered


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(span for span in spans if span[1] > span[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in _merged(spans))


def _intersections(
    first: list[tuple[int, int]], second: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    return [
        (max(a, c), min(b, d))
        for a, b in _merged(first)
        for c, d in _merged(second)
        if min(b, d) > max(a, c)
    ]
