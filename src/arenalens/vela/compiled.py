"""A Vela-compiled model → its NPU operators: the NPU each command stream was compiled for and the
tensors the Ethos-U driver addresses.

Vela replaces each part of the graph it can run on the NPU by one `ethos-u` custom operator whose
inputs are, in order (TFLM's `kernels/ethos_u/ethosu.cc` names them): the command stream, the
model's read-only data (weights, biases, lookup tables: `read_only`), the arena scratch
(`scratch`), the fast scratch (`scratch_fast`; the same tensor as `scratch` unless the model was
compiled for Dedicated_Sram), then the operator's inputs; its outputs follow. The kernel hands the
driver base addresses 0 (read-only data), 1 (scratch), 2 (fast scratch), then inputs and outputs.

The command stream tensor holds the driver's payload (ethos-u-core-driver `ethosu_driver.c`,
`ethosu_invoke_async`): the FourCC "COP1", then driver actions, among them OPTIMIZER_CONFIG whose
CONFIG word (product in bits 28-31, log2 MACs per cycle in bits 0-3) the driver compares with the
NPU's own register before running anything ("NPU config mismatch").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from arenalens.builds.npu import Npu, npu_for_config
from arenalens.ir import Model, Subgraph, Tensor
from arenalens.vela import NPU_OPCODE as NPU_OPCODE  # noqa: PLC0414
from arenalens.vela import is_vela_compiled as is_vela_compiled  # noqa: PLC0414

FOURCC = 0x31504F43  # "COP1" as the driver reads it (little-endian)
# Driver action commands (ethosu_driver.c `enum DRIVER_ACTION_e`).
OPTIMIZER_CONFIG = 0x01
COMMAND_STREAM = 0x02
NOP = 0x05
# Input positions of the ethos-u operator.
COMMAND_STREAM_INPUT = 0
READ_ONLY_INPUT = 1
SCRATCH_INPUT = 2
SCRATCH_FAST_INPUT = 3


@dataclass(frozen=True, slots=True)
class CompiledFor:
    """The OPTIMIZER_CONFIG fields of a command stream: what the driver compares."""

    product: int
    log2_macs: int

    @property
    def npu(self) -> Npu | None:
        """The configuration as Vela's --accelerator-config names it (None: none arenalens
        knows)."""
        return npu_for_config(self.product, self.log2_macs)

    @property
    def name(self) -> str:
        found = self.npu
        if found is not None:
            return found.name
        return f"product {self.product}, 2^{self.log2_macs} MACs"


@dataclass(frozen=True, slots=True)
class NpuOperator:
    """One ethos-u operator of a compiled model."""

    subgraph: int
    operator: int
    compiled_for: CompiledFor | None  # None: the payload has no readable OPTIMIZER_CONFIG
    payload_problem: str  # why the driver rejects the payload at Invoke ('' when it would not)
    read_only: Tensor | None
    scratch: Tensor | None
    scratch_fast: Tensor | None

    @property
    def dedicated_fast_scratch(self) -> bool:
        """True when the fast scratch is a tensor of its own (Dedicated_Sram): the driver is
        then given a separate fast memory for it."""
        return (
            self.scratch_fast is not None
            and self.scratch is not None
            and self.scratch_fast.index != self.scratch.index
        )


def npu_operators(model: Model) -> tuple[NpuOperator, ...]:
    """Every ethos-u operator of the model, in subgraph and operator order."""
    return tuple(
        _npu_operator(model, subgraph, position)
        for subgraph in model.subgraphs
        for position, operator in enumerate(subgraph.operators)
        if operator.opcode == NPU_OPCODE
    )


def _input(subgraph: Subgraph, inputs: tuple[int, ...], position: int) -> Tensor | None:
    if position >= len(inputs) or not 0 <= inputs[position] < len(subgraph.tensors):
        return None
    return subgraph.tensors[inputs[position]]


def _npu_operator(model: Model, subgraph: Subgraph, position: int) -> NpuOperator:
    operator = subgraph.operators[position]
    stream = _input(subgraph, operator.inputs, COMMAND_STREAM_INPUT)
    payload = b""
    if stream is not None and stream.has_data:
        payload = model.buffer_bytes(stream.buffer)
    compiled_for, problem = read_payload(payload)
    return NpuOperator(
        subgraph=subgraph.index,
        operator=position,
        compiled_for=compiled_for,
        payload_problem=problem,
        read_only=_input(subgraph, operator.inputs, READ_ONLY_INPUT),
        scratch=_input(subgraph, operator.inputs, SCRATCH_INPUT),
        scratch_fast=_input(subgraph, operator.inputs, SCRATCH_FAST_INPUT),
    )


def read_payload(payload: bytes) -> tuple[CompiledFor | None, str]:
    """The driver's payload → (its OPTIMIZER_CONFIG, why the driver rejects it or ''). Walks the
    driver actions as `ethosu_invoke_async` does, bounded by the payload's length."""
    if len(payload) < 4 or struct.unpack_from("<I", payload)[0] != FOURCC:
        return None, "Custom Operator Payload is not 'COP1' (not a Vela command stream)"
    if len(payload) % 4:
        return None, f"custom_data_size={len(payload):#x} not a multiple of 4"
    words = struct.unpack(f"<{len(payload) // 4}I", payload)
    found: CompiledFor | None = None
    index = 1
    while index < len(words):
        command = words[index] & 0xFF
        if command == OPTIMIZER_CONFIG and index + 2 < len(words):
            config = words[index + 1]
            found = CompiledFor(product=config >> 28, log2_macs=config & 0xF)
            index += 3
        elif command == COMMAND_STREAM:
            length = ((words[index] >> 8) & 0xFF) << 16 | words[index] >> 16
            index += 1 + length
        elif command == NOP:
            index += 1
        else:
            return found, f"UNSUPPORTED driver_action_command: {command}"
    return found, ""
