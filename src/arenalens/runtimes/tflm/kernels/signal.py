"""Signal-processing custom kernels (signal/micro/kernels/) → their setup allocations."""

from __future__ import annotations

from collections.abc import Callable

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    KernelContext,
    KernelRule,
    Persistent,
    Scratch,
    inputs_then_outputs,
)

_SIGNAL = "signal/micro/kernels/"


def kiss_fftr_state_bytes(fft_length: int, complex_bytes: int, pointer_bytes: int = 8) -> int:
    """kiss_fftr_alloc's need: real-FFT header, a complex FFT of half length, super twiddles."""
    half = fft_length // 2
    # kiss_fft_state: nfft, inverse, factors[64], then `half` twiddles.
    complex_state = 4 + 4 + 4 * 64 + complex_bytes * half
    return 3 * pointer_bytes + complex_state + complex_bytes * (half * 3 // 2)


def _init(sizes: Callable[[KernelContext], list[int]]) -> Callable[[KernelContext], Events]:
    def init(context: KernelContext) -> Events:
        return [Persistent(nbytes, "Init state") for nbytes in sizes(context)]

    return init


def _fixed(*sizes: int) -> Callable[[KernelContext], Events]:
    return _init(lambda context: list(sizes))


def _filter_bank(context: KernelContext) -> list[int]:
    # TFLMSignalFilterBankParams, then a uint64 work area of num_channels + 1 entries.
    return [64, 8 * (context.custom_int("num_channels") + 1)]


def _spectral_subtraction(context: KernelContext) -> list[int]:
    # TFLMSignalSpectralSubtractionParams, then a uint32 noise estimate per channel.
    return [56, 4 * context.custom_int("num_channels")]


def _rfft_state(context: KernelContext) -> list[int]:
    # TfLiteAudioFrontendRfftParams<T> (48 B), then the kiss_fftr state for fft_length.
    complex_bytes = 4 if context.input_type(0) == "INT16" else 8
    return [48, kiss_fftr_state_bytes(context.custom_int("fft_length"), complex_bytes)]


def _rfft_prepare(context: KernelContext) -> Events:
    fft_length = context.custom_int("fft_length")
    work = fft_length * context.input_element_bytes(0, 2)
    return [*inputs_then_outputs(context), Scratch(work, "rfft work area")]


def _signal(name: str, source: str, init: Callable[[KernelContext], Events]) -> KernelRule:
    return KernelRule(f"CUSTOM:{name}", _SIGNAL + source, None, init, derived=False)


RULES = (
    _signal("SignalEnergy", "energy.cc", _fixed(8)),
    _signal("SignalFftAutoScale", "fft_auto_scale_kernel.cc", _fixed()),
    _signal("SignalFilterBank", "filter_bank.cc", _init(_filter_bank)),
    _signal("SignalFilterBankLog", "filter_bank_log.cc", _fixed(8)),
    _signal(
        "SignalFilterBankSpectralSubtraction",
        "filter_bank_spectral_subtraction.cc",
        _init(_spectral_subtraction),
    ),
    _signal("SignalFilterBankSquareRoot", "filter_bank_square_root.cc", _fixed()),
    _signal("SignalPCAN", "pcan.cc", _fixed(4)),
    KernelRule(
        "CUSTOM:SignalRfft",
        _SIGNAL + "rfft.cc",
        None,
        _init(_rfft_state),
        _rfft_prepare,
        derived=False,
    ),
    _signal("SignalWindow", "window.cc", _fixed(8)),
)
