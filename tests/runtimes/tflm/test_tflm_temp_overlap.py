"""Kernel buffers written over their own live temp tensors (runtimes/tflm/temp_overlap.py): member
offsets by hand from the headers, failing start ranges by hand, and the whole replay against
fit patterns measured on the tflite_micro wheel (setup is not monotone in the arena size)."""

from __future__ import annotations

from arenalens.builds.abi import ILP32, LP64
from arenalens.planning.registry import run_planner
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import plan_facts
from arenalens.runtimes.tflm.kernels.base import OverTemps, TempField
from arenalens.runtimes.tflm.setup import setup_sequence, setups_with_resources
from arenalens.runtimes.tflm.setup_layout import HOST_64
from arenalens.runtimes.tflm.setup_replay import minimal_arena_size, replay
from arenalens.runtimes.tflm.structs import (
    TEMP_AFFINE_PART,
    TEMP_TENSOR_PART,
    TF_LITE_AFFINE_QUANTIZATION,
    TF_LITE_TENSOR,
)
from arenalens.runtimes.tflm.temp_overlap import resolve
from arenalens.tflite.reader import parse_model
from tests.conformance.cases.nn.recurrent import batch_matmul, lstm


def test_tflite_tensor_members_by_hand() -> None:
    # common.h, TF_LITE_STATIC_MEMORY; Arm EABI enums are one byte (-fshort-enums).
    lp64 = {
        "quantization.type": (0, 4),
        "quantization.params": (8, 8),
        "params": (16, 8),
        "data": (24, 8),
        "dims": (32, 8),
        "bytes": (40, 8),
        "type": (48, 4),
        "allocation_type": (52, 4),
        "is_variable": (56, 1),
    }
    ilp32 = {
        "quantization.type": (0, 1),
        "quantization.params": (4, 4),
        "params": (8, 8),
        "data": (16, 4),
        "dims": (20, 4),
        "bytes": (24, 4),
        "type": (28, 1),
        "allocation_type": (29, 1),
        "is_variable": (30, 1),
    }
    for abi, table, size in ((LP64, lp64, 64), (ILP32, ilp32, 32)):
        assert TF_LITE_TENSOR.size(abi) == size
        assert {name: TF_LITE_TENSOR.member(name, abi) for name in table} == table
    assert TF_LITE_AFFINE_QUANTIZATION.member("zero_point", LP64) == (8, 8)
    assert TF_LITE_AFFINE_QUANTIZATION.member("quantized_dimension", ILP32) == (8, 4)


def test_written_buffer_fails_on_what_dealloc_reads() -> None:
    # One quantized temp: TfLiteTensor at 0, its affine struct at 64 (LP64). A fully written
    # 16-byte buffer breaks quantization.type [0,4), .params [8,16) and affine zero_point [72,80).
    hazard = resolve(OverTemps(), 16, LP64)
    temps = [(0, {TEMP_TENSOR_PART: (0, 64), TEMP_AFFINE_PART: (64, 88)})]
    assert hazard.failing_starts(temps, 16) == ((-15, 15), (57, 79))
    # Written only in [8, 16): a start must bring those bytes onto a read member.
    partial = resolve(OverTemps(ranges=((8, 16),)), 16, LP64)
    assert partial.failing_starts(temps, 16) == ((-15, 7), (57, 71))


def test_kept_members_belong_to_one_temp_or_all() -> None:
    # ILP32, two unquantized temps at 0 and 32: dims is [20,24) of each.
    temps: list[tuple[int, dict[str, tuple[int, int]]]] = [
        (0, {TEMP_TENSOR_PART: (0, 32)}),
        (1, {TEMP_TENSOR_PART: (32, 64)}),
    ]
    second = resolve(OverTemps(keep=(TempField("dims", 1),)), 4, ILP32)
    # Dealloc reads [0,1) and [4,8) of both temps, plus the second temp's dims [52,56).
    assert second.failing_starts(temps, 4) == ((-3, 7), (29, 39), (49, 55))
    released = resolve(OverTemps(live_from=1), 4, ILP32)
    assert released.failing_starts(temps, 4) == ((29, 39),)


def test_a_buffer_read_later_must_not_lie_under_deallocs_writes() -> None:
    # read_later: DeallocateTempTfLiteTensor writes quantization.type/.params, data and dims
    # (LP64 [0,16) and [24,40)); an 8-byte dims copy never written while temps live.
    hazard = resolve(OverTemps(ranges=(), read_later=True), 8, LP64)
    assert hazard.failing_starts([(0, {TEMP_TENSOR_PART: (0, 64)})], 8) == ((-7, 15), (17, 39))


def test_an_overwritten_type_breaks_only_wider_types() -> None:
    # EMBEDDING_LOOKUP's dims copy [rank 2, 3, 8] (words 1 and 2 written while the temps live)
    # may land on the output's `type` (LP64 [48,52)); `NumElements * TfLiteTypeGetSize(type) <=
    # bytes` only fails for types wider than the real float32.
    content = b"".join(word.to_bytes(4, "little") for word in (2, 3, 8))
    wider = frozenset({4, 8, 11, 12, 13})  # int64, complex64, float64, complex128, uint64
    over = OverTemps(
        ranges=((4, 12),), keep=(TempField("type", 0, breaks_on=wider),), content=content
    )
    failing = resolve(over, 12, LP64).failing_starts([(0, {TEMP_TENSOR_PART: (0, 64)})], 4)
    # Start 44 puts 3 (kTfLiteUInt8) on `type`: harmless; start 40 puts 8 (kTfLiteComplex64).
    assert (40, 40) in failing
    assert not any(low <= 44 <= high for low, high in failing)
    # Without the value test any overwrite of `type` fails.
    plain = OverTemps(ranges=((4, 12),), keep=(TempField("type", 0),))
    assert resolve(plain, 12, LP64).failing_starts([(0, {TEMP_TENSOR_PART: (0, 64)})], 4)[-1] == (
        37,
        47,
    )


def _host_fits(data: bytes, sizes: range) -> tuple[list[bool], int]:
    model = parse_model(data, "case")
    arena = arenas(model)[0]
    plan = run_planner("tflm_greedy", arena.problem)
    setups = setups_with_resources(model)
    sequence = setup_sequence(model, plan_facts(model, arena, plan, setups=setups), HOST_64, setups)
    return [replay(sequence, n, HOST_64).fits for n in sizes], minimal_arena_size(sequence)


def test_batch_matmul_int8_fit_pattern_is_the_wheels() -> None:
    # Measured on the wheel (tflm_probe at every size, tests.conformance case
    # BATCH_MATMUL.INT8.plain): fits at 1224..1239, SIGSEGV at 1240..1255 (the output dims copy
    # lands on the output's affine struct), fits from 1256 on.
    data = batch_matmul((1, 4, 6), (1, 6, 5), (1, 4, 5), "INT8")()
    fits, minimum = _host_fits(data, range(1208, 1290))
    expected = [False] * 16 + [True] * 16 + [False] * 16 + [True] * 34
    assert fits == expected
    assert minimum == 1256


def test_per_channel_lstm_fit_pattern_is_the_wheels() -> None:
    # Measured on the wheel (UNIDIRECTIONAL_SEQUENCE_LSTM.INT8.per_channel): 16 per-channel arrays
    # over 16 live temps; fits at 3992..4007 and 4024..4039, from 4056 on.
    data = lstm("INT8", per_channel=True)()
    fits, minimum = _host_fits(data, range(3976, 4080))
    expected = [False] * 16 + ([True] * 16 + [False] * 16) * 2 + [True] * 24
    assert fits == expected
    assert minimum == 4056
