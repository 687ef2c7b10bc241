"""Signal-processing custom kernels: SignalRfft, SignalIrfft, SignalFftAutoScale, SignalEnergy,
SignalFilterBank*, SignalPCAN, SignalWindow → their setup allocations and refusals, and the
helpers `signal_streams` (the kernels that keep streaming state) shares.

Sources: tflite-micro signal/micro/kernels/<op>.cc and signal/src/ (rfft_*.cc, irfft_*.cc, the
kissfft wrappers). No builtin data; options are flexbuffer maps read by position in key order
(the canonical maps the converter writes; `custom_int` reads them by name, which agrees), except
`T`, which RFFT, IRFFT and OVERLAP_ADD read by name to pick a variant. Every buffer goes through
AllocatePersistentBuffer (Init: the params struct, FFT state, work areas).

Several Init functions do not check their allocation (RFFT's state, FILTER_BANK's work area,
STACKER's state): on an arena too small for it, setup still succeeds and Invoke crashes. The
rules give every allocation, so the predicted minimum is the smallest arena from which setup
always keeps them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.runtimes.tflm.abi import Struct, struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import UNARY, rank
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true

SIGNAL_SOURCES = "signal/micro/kernels/"

_ENERGY_PARAMS = struct("TFLMSignalEnergyParams", ("end_index", "int32"), ("start_index", "int32"))
_FILTER_BANK_PARAMS = struct(
    "TFLMSignalFilterBankParams",
    (
        "config",
        struct(
            "FilterbankConfig",
            ("num_channels", "int32"),
            ("channel_frequency_starts", "pointer"),
            ("channel_weight_starts", "pointer"),
            ("channel_widths", "pointer"),
            ("weights", "pointer"),
            ("unweights", "pointer"),
            ("output_scale", "int32"),
            ("input_correction_bits", "int32"),
        ),
    ),
    ("work_area", "pointer"),
)
_LOG_PARAMS = struct(
    "TFLMSignalLogParams", ("input_correction_bits", "int"), ("output_scale", "int")
)
_SPECTRAL_SUBTRACTION_PARAMS = struct(
    "TFLMSignalSpectralSubtractionParams",
    (
        "config",
        struct(
            "SpectralSubtractionConfig",
            ("num_channels", "int32"),
            ("smoothing", "uint32"),
            ("one_minus_smoothing", "uint32"),
            ("min_signal_remaining", "uint32"),
            ("alternate_smoothing", "uint32"),
            ("alternate_one_minus_smoothing", "uint32"),
            ("smoothing_bits", "uint32"),
            ("spectral_subtraction_bits", "uint32"),
            ("clamping", "bool"),
        ),
    ),
    ("noise_estimate", "pointer"),
    ("noise_estimate_size", "size_t"),
)
_IRFFT_PARAMS = struct(
    "TfLiteAudioFrontendIrfftParams",
    ("fft_length", "int32"),
    ("input_size", "int32"),
    ("input_length", "int32"),
    ("output_length", "int32"),
    ("fft_type", "enum"),  # TfLiteType
    ("state", "pointer"),
)
_IRFFT_FLOAT_STATE = struct("IrfftFloatState", ("fft_length", "int32"), ("cfg", "pointer"))
_PCAN_PARAMS = struct("TfLitePcanParams", ("snr_shift", "int"))
_RFFT_PARAMS = struct(
    "TfLiteAudioFrontendRfftParams",
    ("fft_length", "int32"),
    ("input_size", "int32"),
    ("input_length", "int32"),
    ("output_length", "int32"),
    ("fft_type", "enum"),  # TfLiteType
    ("work_area", "pointer"),
    ("scratch_buffer_index", "int"),
    ("state", "pointer"),
)
_WINDOW_PARAMS = struct("TFLMSignalWindowParams", ("shift", "int32"), ("input_size", "int32"))

# The schema TensorType `T` names (RFFT, IRFFT, OVERLAP_ADD) → (TfLite type, element bytes,
# kiss_fft complex bytes: fixed16 pairs for int16, fixed32 or float pairs otherwise).
_FFT_TYPES = {7: ("INT16", 2, 4), 2: ("INT32", 4, 8), 0: ("FLOAT32", 4, 8)}


def kiss_fftr_state_bytes(fft_length: int, complex_bytes: int, pointer_bytes: int = 8) -> int:
    """kiss_fftr_alloc's need: the real-FFT header (three pointers), a complex FFT of half the
    length (nfft, inverse, factors[64], one twiddle per point), and the super twiddles. An odd
    length makes kiss_fftr_alloc return before it sets the size: 0."""
    if fft_length % 2:
        return 0
    half = fft_length // 2
    complex_state = 4 + 4 + 4 * 64 + complex_bytes * half
    return 3 * pointer_bytes + complex_state + complex_bytes * (half * 3 // 2)


@dataclass(frozen=True, slots=True)
class Slot:
    """One tensor a Prepare fetches, and what it checks on it (None: not checked)."""

    role: str  # "in" | "out"
    position: int
    dtype: str | None
    rank: int | None = None
    name: str = "input"  # the kernel's variable name, for messages


def signal_temps(
    context: base.KernelContext, file: str, arity: tuple[int, int], *slots: Slot
) -> tuple[list[base.Event], list[base.Event]]:
    """(temp tensors for each slot in order, the first failing count, rank or type check)."""
    for what, have, want in (
        ("NumInputs", len(context.operator.inputs), arity[0]),
        ("NumOutputs", len(context.operator.outputs), arity[1]),
    ):
        if have != want:
            return [], [not_equal(file, f"{what}(node)", str(want), have, want)]
    found: list[base.Event] = []
    for slot in slots:
        found += base.temps(context, (slot.role, slot.position))
    for slot in slots:
        tensor = (
            context.input(slot.position) if slot.role == "in" else context.output(slot.position)
        )
        if tensor is None:
            return found, [not_true(file, f"{slot.name} != nullptr")]
        if slot.rank is not None and rank(tensor) != slot.rank:
            condition = f"NumDimensions({slot.name})"
            return found, [not_equal(file, condition, str(slot.rank), rank(tensor), slot.rank)]
        if slot.dtype is not None and tensor.dtype.name != slot.dtype:
            expected = _TYPE_ENUMS.get(slot.dtype, slot.dtype)
            refusal = not_equal(file, f"{slot.name}->type", expected, tensor.dtype.name, slot.dtype)
            return found, [refusal]
    return found, []


_TYPE_ENUMS = {
    "INT16": "kTfLiteInt16",
    "INT32": "kTfLiteInt32",
    "UINT32": "kTfLiteUInt32",
    "UINT64": "kTfLiteUInt64",
    "BOOL": "kTfLiteBool",
}


def params_init(layout: Struct) -> base.RuleFunction:
    """An Init that allocates its params struct only."""

    def init(context: base.KernelContext) -> base.Events:
        return [base.Persistent(context.sizeof(layout), "params")]

    return init


def fft_type(
    context: base.KernelContext, file: str, accepted: tuple[int, ...]
) -> tuple[str, int, int] | base.Refusal:
    """The variant option `T` picks (read by name; absent reads 0 = FLOAT32), or the crash an
    unknown one causes: Init returns null and Prepare dereferences it."""
    number = context.custom_int("T")
    if number not in accepted:
        return base.Refusal(
            f"{file}: T = {number} is not one of the kernel's types: Init returns null and "
            "Prepare dereferences it (setup crashes)"
        )
    return _FFT_TYPES[number]


# -- FFTs ------------------------------------------------------------------------------------


def _rfft_init(context: base.KernelContext) -> base.Events:
    # The params, then the kiss_fftr state (unchecked: a failure leaves setup working).
    file = SIGNAL_SOURCES + "rfft.cc"
    variant = fft_type(context, file, (7, 2, 0))
    if isinstance(variant, base.Refusal):
        return [variant]
    _, _, complex_bytes = variant
    state = kiss_fftr_state_bytes(
        context.custom_int("fft_length"), complex_bytes, context.build.pointer_bytes
    )
    return [
        base.Persistent(context.sizeof(_RFFT_PARAMS), "params"),
        base.Persistent(state, "kiss_fftr state"),
    ]


def _irfft_init(context: base.KernelContext) -> base.Events:
    # The params, then the state: the kiss_fftr state, behind an IrfftFloatState for float.
    file = SIGNAL_SOURCES + "irfft.cc"
    variant = fft_type(context, file, (7, 2, 0))
    if isinstance(variant, base.Refusal):
        return [variant]
    dtype, _, complex_bytes = variant
    state = kiss_fftr_state_bytes(
        context.custom_int("fft_length"), complex_bytes, context.build.pointer_bytes
    )
    if dtype == "FLOAT32":
        state += context.sizeof(_IRFFT_FLOAT_STATE)
    return [
        base.Persistent(context.sizeof(_IRFFT_PARAMS), "params"),
        base.Persistent(state, "kiss_fftr state"),
    ]


def _fft_prepare(file: str, *, scratch: bool) -> base.RuleFunction:
    """RFFT / IRFFT Prepare: input and output of the same rank and of type T; RFFT then asks
    for a work area of fft_length elements of T."""

    def prepare(context: base.KernelContext) -> base.Events:
        variant = fft_type(context, file, (7, 2, 0))
        if isinstance(variant, base.Refusal):
            return []  # the Init refusal already says why
        dtype, element_bytes, _ = variant
        found, refused = signal_temps(
            context, file, (1, 1), Slot("in", 0, None), Slot("out", 0, None, name="output")
        )
        if refused:
            return [*found, *refused]
        if rank(context.input(0)) != rank(context.output(0)):
            return [
                *found,
                not_equal(
                    file,
                    "NumDimensions(input)",
                    "NumDimensions(output)",
                    rank(context.input(0)),
                    rank(context.output(0)),
                ),
            ]
        for name, have in (("input", context.input_type(0)), ("output", context.output_type(0))):
            if have != dtype:
                return [*found, not_equal(file, f"{name}->type", "TfLiteTypeEnum", have, dtype)]
        if scratch:
            found.append(
                base.Scratch(context.custom_int("fft_length") * element_bytes, "rfft work area")
            )
        return found

    return prepare


# -- the rest: fixed tensors, small params ---------------------------------------------------


def _fixed_slots(file: str, arity: tuple[int, int], *slots: Slot) -> base.RuleFunction:
    """A Prepare that fetches and checks fixed tensors and allocates nothing else."""

    def prepare(context: base.KernelContext) -> base.Events:
        found, refused = signal_temps(context, SIGNAL_SOURCES + file, arity, *slots)
        return [*found, *refused]

    return prepare


def _filter_bank_init(context: base.KernelContext) -> base.Events:
    # The params, then a uint64 work area of num_channels + 1 (unchecked, like RFFT's state).
    channels = context.custom_int("num_channels")
    return [
        base.Persistent(context.sizeof(_FILTER_BANK_PARAMS), "params"),
        base.Persistent(8 * (channels + 1), "filter bank work area"),
    ]


def _spectral_subtraction_init(context: base.KernelContext) -> base.Events:
    # The params, then a uint32 noise estimate per channel.
    channels = context.custom_int("num_channels")
    return [
        base.Persistent(context.sizeof(_SPECTRAL_SUBTRACTION_PARAMS), "params"),
        base.Persistent(4 * channels, "noise estimate"),
    ]


def _window(context: base.KernelContext) -> base.Events:
    # Input (rank >= 1), weights (rank 1), output (the input's rank); all int16.
    file = SIGNAL_SOURCES + "window.cc"
    found, refused = signal_temps(
        context,
        file,
        (2, 1),
        Slot("in", 0, None),
        Slot("in", 1, None, name="weights"),
        Slot("out", 0, None, name="output"),
    )
    if refused:
        return [*found, *refused]
    checks = [
        (rank(context.input(0)) < 1, not_true(file, "NumDimensions(input) >= 1")),
        (
            rank(context.input(1)) != 1,
            not_equal(file, "NumDimensions(weights)", "1", rank(context.input(1)), 1),
        ),
        (
            rank(context.input(0)) != rank(context.output(0)),
            not_equal(
                file,
                "NumDimensions(input)",
                "NumDimensions(output)",
                rank(context.input(0)),
                rank(context.output(0)),
            ),
        ),
    ]
    for name, have in (
        ("input", context.input_type(0)),
        ("weights", context.input_type(1)),
        ("output", context.output_type(0)),
    ):
        checks.append(
            (have != "INT16", not_equal(file, f"{name}->type", "kTfLiteInt16", have, "INT16"))
        )
    for failed, refusal in checks:
        if failed:
            return [*found, refusal]
    return found


def signal_rule(
    name: str,
    source: str,
    init: base.RuleFunction,
    prepare: base.RuleFunction,
    takes: base.Operands = UNARY,
) -> base.KernelRule:
    """A signal-library kernel's rule (`takes`: its operands, one input and output unless
    given): none of them lets its output overlap an input."""
    return base.KernelRule(
        f"CUSTOM:{name}",
        SIGNAL_SOURCES + source,
        None,
        init,
        prepare,
        operands=takes,
        access=base.NoOverlap("signal-library kernel: custom layouts, some keep state"),
    )


def _no_init(context: base.KernelContext) -> base.Events:
    return ()


RULES = (
    signal_rule(
        "SignalEnergy",
        "energy.cc",
        params_init(_ENERGY_PARAMS),
        _fixed_slots(
            "energy.cc", (1, 1), Slot("in", 0, "INT16", 1), Slot("out", 0, "UINT32", 1, "output")
        ),
    ),
    signal_rule(
        "SignalFftAutoScale",
        "fft_auto_scale_kernel.cc, fft_auto_scale_common.cc",
        _no_init,
        _fixed_slots(
            "fft_auto_scale_common.cc",
            (1, 2),
            Slot("in", 0, "INT16", 1),
            Slot("out", 0, "INT16", 1, "output"),
            Slot("out", 1, "INT32", 0, "scale_bit"),
        ),
        base.operands("input", outputs=(2, 2)),
    ),
    signal_rule(
        "SignalFilterBank",
        "filter_bank.cc",
        _filter_bank_init,
        _fixed_slots(
            "filter_bank.cc",
            (6, 1),
            Slot("in", 0, "UINT32", 1),
            *(Slot("in", position, "INT16", 1) for position in range(1, 6)),
            Slot("out", 0, "UINT64", 1, "output"),
        ),
        base.operands(
            "input",
            "weights",
            "unweights",
            "channel_frequency_starts",
            "channel_weight_starts",
            "channel_widths",
        ),
    ),
    signal_rule(
        "SignalFilterBankLog",
        "filter_bank_log.cc",
        params_init(_LOG_PARAMS),
        _fixed_slots(
            "filter_bank_log.cc",
            (1, 1),
            Slot("in", 0, "UINT32", 1),
            Slot("out", 0, "INT16", 1, "output"),
        ),
    ),
    signal_rule(
        "SignalFilterBankSpectralSubtraction",
        "filter_bank_spectral_subtraction.cc",
        _spectral_subtraction_init,
        _fixed_slots(
            "filter_bank_spectral_subtraction.cc",
            (1, 2),
            Slot("in", 0, "UINT32", 1),
            Slot("out", 0, "UINT32", 1, "output"),
            Slot("out", 1, "UINT32", 1, "noise_estimate"),
        ),
        base.operands("input", outputs=(2, 2)),
    ),
    signal_rule(
        "SignalFilterBankSquareRoot",
        "filter_bank_square_root.cc, filter_bank_square_root_common.cc",
        _no_init,
        _fixed_slots(
            "filter_bank_square_root_common.cc",
            (2, 1),
            Slot("in", 0, "UINT64", 1),
            Slot("in", 1, "INT32", 0, "scale_bits"),
            Slot("out", 0, "UINT32", 1, "output"),
        ),
        base.operands("input", "scale_bits"),
    ),
    signal_rule(
        "SignalIrfft",
        "irfft.cc",
        _irfft_init,
        _fft_prepare(SIGNAL_SOURCES + "irfft.cc", scratch=False),
    ),
    signal_rule(
        "SignalPCAN",
        "pcan.cc",
        params_init(_PCAN_PARAMS),
        _fixed_slots(
            "pcan.cc",
            (3, 1),
            Slot("in", 0, "UINT32", 1),
            Slot("in", 1, "UINT32", 1, "noise_estimate"),
            Slot("in", 2, "INT16", 1, "gain_lut"),
            Slot("out", 0, "UINT32", 1, "output"),
        ),
        base.operands("input", "noise_estimate", "gain_lut"),
    ),
    signal_rule(
        "SignalRfft", "rfft.cc", _rfft_init, _fft_prepare(SIGNAL_SOURCES + "rfft.cc", scratch=True)
    ),
    signal_rule(
        "SignalWindow",
        "window.cc",
        params_init(_WINDOW_PARAMS),
        _window,
        base.operands("input", "weights"),
    ),
)
