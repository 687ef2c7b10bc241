"""Reading Vela's output: the driver payload's NPU configuration, its refusals, and the NPU
memories of compiled models (cached compilations of tests/data/ethos_u/models)."""

from __future__ import annotations

import struct

import pytest

from arenalens.builds.build import build_named, device_build, select_build
from arenalens.builds.npu import npu_named
from arenalens.errors import UsageError
from arenalens.tflite.reader import parse_model
from arenalens.vela.compiled import read_payload
from arenalens.vela.memory import fast_memory_refusal, npu_memory
from tests.ethos_u.cases import MODELS

COP1 = 0x31504F43


def _payload(config: int, stream_words: int = 2) -> bytes:
    words = [COP1, 0x00100001, config, 0x10066001, 0x5, 0x5, 0x5]
    words += [0x02 | (stream_words << 16), *([0] * stream_words)]
    return struct.pack(f"<{len(words)}I", *words)


def test_the_payload_says_which_npu_the_command_stream_is_for() -> None:
    found, problem = read_payload(_payload((1 << 28) | (48 << 8) | 9))
    assert problem == "" and found is not None and found.name == "ethos-u65-512"
    found, _ = read_payload(_payload((2 << 28) | 8))
    assert found is not None and found.name == "ethos-u85-256"


def test_a_payload_the_driver_rejects_is_said() -> None:
    assert "COP1" in read_payload(b"\0" * 16)[1]
    assert "multiple of 4" in read_payload(struct.pack("<I", COP1) + b"\0\0")[1]
    assert "UNSUPPORTED" in read_payload(struct.pack("<2I", COP1, 0x09))[1]


def test_npu_builds_are_named_parsed_and_refused_where_no_npu_can_be() -> None:
    build = device_build("cortex-m55", npu="u55-128")
    assert build.name == "cortex-m55/reference+ethos-u55-128"
    assert (build_named(build.name).name, build_named(build.name).npu) == (build.name, build.npu)
    assert build_named("cortex-m55/reference+ethos-u65-256@2025-08").npu == npu_named("u65-256")
    with pytest.raises(UsageError, match="needs --cpu"):
        select_build(None, None, None, "ethos-u55-128")
    with pytest.raises(UsageError, match="Cortex-M core"):
        device_build("esp32s3", npu="ethos-u55-128")
    with pytest.raises(UsageError, match="unknown NPU"):
        npu_named("ethos-u99")


def _memory(case: str) -> object:
    return npu_memory(parse_model((MODELS / f"{case}.tflite").read_bytes(), case))


def test_dedicated_sram_needs_a_fast_memory_and_leaves_a_copy_in_the_arena() -> None:
    memory = _memory("example-kws_ds_cnn@u65-256-dedicated")
    assert memory is not None
    # scratch_fast 22,080 B at offset 0 over scratch (496 B) and the input (490 B): 21,584 B
    # of the arena hold only the fast scratch's copy.
    assert (memory.fast_memory_bytes, memory.arena_fast_copy_bytes) == (22080, 21584)
    assert memory.vela_sram_bytes == 22080 and memory.compiled_for == ("ethos-u65-256",)
    assert fast_memory_refusal(memory, 22080) == ""
    assert "Fast memory area too small" in fast_memory_refusal(memory, 22079)


def test_shared_sram_has_no_fast_memory_and_vela_counts_the_scratch() -> None:
    memory = _memory("quant-3@u55-128")
    assert memory is not None
    assert (memory.npu_operators, memory.fast_memory_bytes, memory.dedicated_sram) == (2, 0, False)
    assert memory.vela_sram_bytes == memory.scratch_bytes
