"""Cases for the signal family: the Signal* custom kernels (kernels/signal_library.py).

Each kernel at the frame, channel and FFT sizes that change its buffers (circular buffers per
outer row, FFT states for each `T`, work areas per channel), and with a refused type. RFFT,
FILTER_BANK and STACKER states large enough that an arena too small for them would still "set
up" (their Init ignores the failed allocation): the measured minimum is the size from which
every allocation succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tests.conformance.cases import Case
from tests.conformance.models import Const, In, Op, Out, single_op

# Schema TensorType numbers the kernels' `T` option holds.
_T = {"INT16": 7, "INT32": 2, "FLOAT32": 0, "INT8": 9}


def _signal(
    name: str,
    inputs: Sequence[In | Const],
    outputs: Sequence[Out],
    options: Mapping[str, Any],
) -> Callable[[], bytes]:
    op = Op(f"CUSTOM:{name}", inputs, outputs, custom=dict(options))
    return lambda: single_op(op)


def _case(name: str, dtype: str, variant: str, build: Callable[[], bytes]) -> Case:
    return Case(f"CUSTOM:{name}.{dtype}.{variant}", f"CUSTOM:{name}", dtype, build)


def _int16(shape: Sequence[int]) -> In:
    return In(shape, "INT16", None)


def _delay_cases() -> list[Case]:
    def build(rows: int, frame: int, delay: int, dtype: str = "INT16") -> Callable[[], bytes]:
        shape = (rows, frame)
        return _signal(
            "SignalDelay",
            [In(shape, dtype, None)],
            [Out(shape, dtype, None)],
            {"delay_length": delay},
        )

    return [
        _case("SignalDelay", "INT16", "rows1_frame40_delay5", build(1, 40, 5)),
        _case("SignalDelay", "INT16", "rows2_frame40_delay5", build(2, 40, 5)),
        _case("SignalDelay", "INT16", "rows3_frame40_delay0", build(3, 40, 0)),
        _case("SignalDelay", "INT16", "rows2_frame1_delay3", build(2, 1, 3)),
        _case("SignalDelay", "FLOAT32", "refused_type", build(1, 40, 5, "FLOAT32")),
    ]


def _framer_cases() -> list[Case]:
    def build(
        rows: int,
        samples: int,
        size: int,
        step: int,
        *,
        prefill: bool = False,
        dtype: str = "INT16",
    ) -> Callable[[], bytes]:
        frames = samples // step if step else 1
        return _signal(
            "SignalFramer",
            [In((rows, samples), dtype, None)],
            [Out((rows, frames, size), dtype, None), Out((), "BOOL", None)],
            {"frame_size": size, "frame_step": step, "prefill": prefill},
        )

    return [
        _case("SignalFramer", "INT16", "rows1_400_160", build(1, 160, 400, 160, prefill=True)),
        _case("SignalFramer", "INT16", "rows2_400_160", build(2, 160, 400, 160)),
        _case("SignalFramer", "INT16", "rows1_64_32", build(1, 64, 64, 32, prefill=True)),
        _case("SignalFramer", "INT16", "rows3_5_2", build(3, 4, 5, 2)),
        _case("SignalFramer", "INT16", "refused_step", build(1, 100, 64, 32)),
        _case("SignalFramer", "FLOAT32", "refused_type", build(1, 64, 64, 32, dtype="FLOAT32")),
    ]


def _overlap_add_cases() -> list[Case]:
    def build(
        dtype: str, rows: int, frame: int, step: int, t: str | None = None
    ) -> Callable[[], bytes]:
        return _signal(
            "SignalOverlapAdd",
            [In((rows, 3, frame), dtype, None)],
            [Out((rows, 3 * step), dtype, None)],
            {"T": _T[t or dtype], "frame_step": step},
        )

    return [
        _case("SignalOverlapAdd", "INT16", "rows1_frame400", build("INT16", 1, 400, 160)),
        _case("SignalOverlapAdd", "INT16", "rows2_frame7", build("INT16", 2, 7, 3)),
        _case("SignalOverlapAdd", "FLOAT32", "rows3_frame400", build("FLOAT32", 3, 400, 160)),
        _case("SignalOverlapAdd", "FLOAT32", "rows1_frame7", build("FLOAT32", 1, 7, 3)),
        _case("SignalOverlapAdd", "INT32", "refused_t", build("INT32", 1, 400, 160)),
    ]


def _stacker_cases() -> list[Case]:
    def build(channels: int, left: int, right: int, dtype: str = "INT16") -> Callable[[], bytes]:
        return _signal(
            "SignalStacker",
            [In((channels,), dtype, None)],
            [Out((channels * (left + right + 1),), dtype, None), Out((), "BOOL", None)],
            {
                "num_channels": channels,
                "stacker_left_context": left,
                "stacker_right_context": right,
                "stacker_step": 1,
            },
        )

    return [
        _case("SignalStacker", "INT16", "channels40_context0", build(40, 0, 0)),
        _case("SignalStacker", "INT16", "channels40_context3", build(40, 2, 1)),
        _case("SignalStacker", "INT16", "channels200_context3", build(200, 2, 1)),
        _case("SignalStacker", "FLOAT32", "refused_type", build(40, 0, 0, "FLOAT32")),
    ]


def _fft_cases(name: str) -> list[Case]:
    forward = name == "SignalRfft"

    def build(
        dtype: str, length: int, *, rows: int = 0, t: str | None = None, other: str | None = None
    ) -> Callable[[], bytes]:
        real, spectrum = (length - 32 if forward else length), length + 2
        before, after = (real, spectrum) if forward else (spectrum, real)
        lead = (rows,) if rows else ()
        return _signal(
            name,
            [In((*lead, before), dtype, None)],
            [Out((*lead, after), other or dtype, None)],
            {"T": _T[t or dtype], "fft_length": length},
        )

    found = [
        _case(name, dtype, f"length{length}", build(dtype, length))
        for dtype in ("INT16", "INT32", "FLOAT32")
        for length in (64, 512)
    ]
    found += [
        _case(name, "INT16", "rows3_length512", build("INT16", 512, rows=3)),
        _case(name, "FLOAT32", "odd_length63", build("FLOAT32", 63)),
        _case(name, "INT8", "refused_t", build("INT8", 64)),
        _case(name, "FLOAT32", "refused_type_not_t", build("FLOAT32", 64, t="INT16")),
    ]
    if forward:
        found.append(_case(name, "INT32", "length1024", build("INT32", 1024)))
    return found


def _filter_bank_cases() -> list[Case]:
    def build(channels: int, input_type: str = "UINT32") -> Callable[[], bytes]:
        weights = [Const(np.zeros(316, np.int16), "INT16") for _ in range(2)]
        per_channel = [Const(np.zeros(channels + 1, np.int16), "INT16") for _ in range(3)]
        return _signal(
            "SignalFilterBank",
            [In((257,), input_type, None), *weights, *per_channel],
            [Out((channels,), "UINT64", None)],
            {"num_channels": channels},
        )

    return [
        _case("SignalFilterBank", "UINT32", f"channels{channels}", build(channels))
        for channels in (8, 40, 1000)
    ] + [_case("SignalFilterBank", "INT32", "refused_type", build(40, "INT32"))]


_SPECTRAL = {
    "alternate_one_minus_smoothing": 15401,
    "alternate_smoothing": 983,
    "clamping": False,
    "min_signal_remaining": 819,
    "one_minus_smoothing": 15975,
    "smoothing": 409,
    "smoothing_bits": 10,
    "spectral_subtraction_bits": 14,
}


def _small_cases() -> list[Case]:
    def spectral(channels: int, dtype: str = "UINT32") -> Callable[[], bytes]:
        return _signal(
            "SignalFilterBankSpectralSubtraction",
            [In((channels,), dtype, None)],
            [Out((channels,), "UINT32", None), Out((channels,), "UINT32", None)],
            {**_SPECTRAL, "num_channels": channels},
        )

    return [
        _case(
            "SignalEnergy",
            "INT16",
            "bins257",
            _signal(
                "SignalEnergy",
                [_int16((514,))],
                [Out((257,), "UINT32", None)],
                {"end_index": 241, "start_index": 5},
            ),
        ),
        _case(
            "SignalEnergy",
            "INT16",
            "refused_output_type",
            _signal(
                "SignalEnergy",
                [_int16((514,))],
                [Out((257,), "INT32", None)],
                {"end_index": 241, "start_index": 5},
            ),
        ),
        _case(
            "SignalFftAutoScale",
            "INT16",
            "length480",
            _signal(
                "SignalFftAutoScale",
                [_int16((480,))],
                [Out((480,), "INT16", None), Out((), "INT32", None)],
                {},
            ),
        ),
        _case(
            "SignalFftAutoScale",
            "INT16",
            "refused_scale_rank",
            _signal(
                "SignalFftAutoScale",
                [_int16((480,))],
                [Out((480,), "INT16", None), Out((1,), "INT32", None)],
                {},
            ),
        ),
        _case(
            "SignalFilterBankLog",
            "UINT32",
            "channels40",
            _signal(
                "SignalFilterBankLog",
                [In((40,), "UINT32", None)],
                [Out((40,), "INT16", None)],
                {"input_correction_bits": 3, "output_scale": 64},
            ),
        ),
        _case(
            "SignalFilterBankLog",
            "INT32",
            "refused_type",
            _signal(
                "SignalFilterBankLog",
                [In((40,), "INT32", None)],
                [Out((40,), "INT16", None)],
                {"input_correction_bits": 3, "output_scale": 64},
            ),
        ),
        _case("SignalFilterBankSpectralSubtraction", "UINT32", "channels40", spectral(40)),
        _case("SignalFilterBankSpectralSubtraction", "UINT32", "channels13", spectral(13)),
        _case(
            "SignalFilterBankSpectralSubtraction", "INT32", "refused_type", spectral(40, "INT32")
        ),
        _case(
            "SignalFilterBankSquareRoot",
            "UINT64",
            "channels40",
            _signal(
                "SignalFilterBankSquareRoot",
                [In((40,), "UINT64", None), In((), "INT32", None)],
                [Out((40,), "UINT32", None)],
                {},
            ),
        ),
        _case(
            "SignalFilterBankSquareRoot",
            "UINT32",
            "refused_type",
            _signal(
                "SignalFilterBankSquareRoot",
                [In((40,), "UINT32", None), In((), "INT32", None)],
                [Out((40,), "UINT32", None)],
                {},
            ),
        ),
        _case(
            "SignalPCAN",
            "UINT32",
            "channels40",
            _signal(
                "SignalPCAN",
                [
                    In((40,), "UINT32", None),
                    In((40,), "UINT32", None),
                    Const(np.zeros(125, np.int16), "INT16"),
                ],
                [Out((40,), "UINT32", None)],
                {"snr_shift": 6},
            ),
        ),
        _case(
            "SignalPCAN",
            "UINT32",
            "refused_lut_type",
            _signal(
                "SignalPCAN",
                [
                    In((40,), "UINT32", None),
                    In((40,), "UINT32", None),
                    Const(np.zeros(125, np.int32), "INT32"),
                ],
                [Out((40,), "UINT32", None)],
                {"snr_shift": 6},
            ),
        ),
        _case(
            "SignalWindow",
            "INT16",
            "rank2",
            _signal(
                "SignalWindow",
                [_int16((1, 480)), Const(np.zeros(480, np.int16), "INT16")],
                [Out((1, 480), "INT16", None)],
                {"shift": 12},
            ),
        ),
        _case(
            "SignalWindow",
            "INT16",
            "rank1",
            _signal(
                "SignalWindow",
                [_int16((400,)), Const(np.zeros(400, np.int16), "INT16")],
                [Out((400,), "INT16", None)],
                {"shift": 12},
            ),
        ),
        _case(
            "SignalWindow",
            "FLOAT32",
            "refused_type",
            _signal(
                "SignalWindow",
                [In((1, 480), "FLOAT32", None), Const(np.zeros(480, np.int16), "INT16")],
                [Out((1, 480), "FLOAT32", None)],
                {"shift": 12},
            ),
        ),
    ]


CASES = (
    *_delay_cases(),
    *_framer_cases(),
    *_overlap_add_cases(),
    *_stacker_cases(),
    *_fft_cases("SignalRfft"),
    *_fft_cases("SignalIrfft"),
    *_filter_bank_cases(),
    *_small_cases(),
)
