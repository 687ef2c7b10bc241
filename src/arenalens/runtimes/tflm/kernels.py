"""TFLM kernel memory: operator → the tail and temp allocations its parser, Init and Prepare make.

One row per kernel of the `tflite_micro` pip package (reference kernels, 64-bit host, built with
`USE_TFLM_COMPRESSION`), naming its source under tflite-micro `tensorflow/lite/micro/kernels/`:

* `builtin_data`: the parsed options struct (`TfLite*Params`), placed in the tail by
  *MicroBuiltinDataAllocator* with the struct's own alignment (*flatbuffer_conversions.cc*).
* `init_bytes`: the OpData the kernel's Init takes with `AllocatePersistentBuffer` (16-aligned,
  counted as "Persistent buffer data").
* `prepare`: what Prepare does, in order: temp TfLiteTensor structs (with their quantization
  copies) for the tensors it inspects, and further persistent buffers (per-channel multipliers and
  shifts, lookup tables, copied dims).

The sizes were read from the kernel sources and confirmed against the real interpreter: every
model of ../shared/models reproduces its printed tail and categories (tests/test_tflm_reference.py).
Kernels without a row get `DEFAULT_KERNEL`, an estimate, and the budget says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.scratch import OperatorView
from arenalens.tflite.custom_options import custom_options


@dataclass(frozen=True, slots=True)
class PersistentBytes:
    """A kernel's `AllocatePersistentBuffer(nbytes)` (tail, 16-aligned)."""

    nbytes: int
    what: str


@dataclass(frozen=True, slots=True)
class TempTensor:
    """A kernel's `AllocateTempInputTensor` / `AllocateTempOutputTensor` (temp, freed per op)."""

    tensor: Tensor


@dataclass(frozen=True, slots=True)
class TempBytes:
    """A kernel's `AllocateTempBuffer(nbytes, alignment)`."""

    nbytes: int
    alignment: int


KernelAllocation = PersistentBytes | TempTensor | TempBytes
PrepareFunction = Callable[[OperatorView], Sequence[KernelAllocation]]


@dataclass(frozen=True, slots=True)
class KernelMemoryUse:
    """What one operator allocates during setup."""

    builtin_data: tuple[int, int] | None  # (bytes, alignment) of its parsed options
    init: tuple[KernelAllocation, ...]
    prepare: tuple[KernelAllocation, ...]
    known: bool  # False when the kernel has no row and the default estimate was used


@dataclass(frozen=True, slots=True)
class KernelMemory:
    """One kernel's setup allocations (64-bit host)."""

    opcode: str
    kernel_file: str
    builtin_data: tuple[int, int] | None
    init_bytes: int | None
    prepare: PrepareFunction
    init_extra: Callable[[OperatorView], Sequence[int]] | None = None


def _inputs_then_outputs(view: OperatorView) -> list[KernelAllocation]:
    """The common Prepare: a temp tensor for every present input, then every output."""
    found: list[KernelAllocation] = []
    for position in range(len(view.operator.inputs)):
        tensor = view.input(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    for position in range(len(view.operator.outputs)):
        tensor = view.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


def _temps(view: OperatorView, *slots: tuple[str, int]) -> list[KernelAllocation]:
    """Temp tensors for ("in" | "out", position) slots, skipping omitted ones."""
    found: list[KernelAllocation] = []
    for role, position in slots:
        tensor = view.input(position) if role == "in" else view.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


def _channels(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not tensor.shape:
        return 0
    return tensor.shape[axis] if -len(tensor.shape) <= axis < len(tensor.shape) else 0


def _per_channel_count(tensor: Tensor | None) -> int:
    """Number of quantization scales (0 when unquantized)."""
    if tensor is None or tensor.quantization is None:
        return 0
    return tensor.quantization.channel_count


def _per_channel_arrays(channels: int) -> list[KernelAllocation]:
    return [
        PersistentBytes(4 * channels, "per-channel multipliers"),
        PersistentBytes(4 * channels, "per-channel shifts"),
    ]


def _fully_connected(view: OperatorView) -> list[KernelAllocation]:
    steps = _temps(view, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    # CalculateOpDataFullyConnected: per-channel arrays only for per-channel quantized weights.
    channels = _per_channel_count(view.input(1))
    if view.input_type(0) != "FLOAT32" and channels > 1:
        # The pip build (newer than the sources read) needs more temp memory here: measured
        # against the interpreter for 2..64 channels, 8 bytes per channel beyond the first two.
        steps.append(TempBytes(8 * (channels - 2), 4))
        steps.extend(_per_channel_arrays(channels))
    return steps


def _convolution(view: OperatorView) -> list[KernelAllocation]:
    # ConvPrepare: output, input, filter; per-channel arrays sized by the filter's dim 0 (conv)
    # or dim 3 (depthwise), whatever the types; then CalculateOpData fetches all four again.
    axis = 3 if view.operator.opcode == "DEPTHWISE_CONV_2D" else 0
    steps = _temps(view, ("out", 0), ("in", 0), ("in", 1))
    steps.extend(_per_channel_arrays(_channels(view.input(1), axis)))
    steps.extend(_temps(view, ("in", 0), ("in", 1), ("in", 2), ("out", 0)))
    return steps


def _transpose_conv(view: OperatorView) -> list[KernelAllocation]:
    # TransposeConvPrepare: output, input (#2), filter (#1); per-channel arrays (filter dim 0);
    # CalculateOpData fetches input, filter, bias, output again for non-float types.
    steps = _temps(view, ("out", 0), ("in", 2), ("in", 1))
    steps.extend(_per_channel_arrays(_channels(view.input(1), 0)))
    if view.input_type(2) != "FLOAT32":
        steps.extend(_temps(view, ("in", 2), ("in", 1), ("in", 3), ("out", 0)))
    return steps


def _softmax(view: OperatorView) -> list[KernelAllocation]:
    steps = _temps(view, ("in", 0), ("out", 0))
    if view.input_type(0) == "INT16":
        # Two int16 lookup tables of kInt16LUTArraySize (513) entries.
        steps.extend([PersistentBytes(2 * 513, "exp LUT"), PersistentBytes(2 * 513, "1/(1+x) LUT")])
    return steps


def _add_n(view: OperatorView) -> list[KernelAllocation]:
    # The float kernel keeps a scratch index in user_data; the int8 one takes its OpData here,
    # in Prepare, not in Init (add_n.cc).
    steps = _inputs_then_outputs(view)
    output = view.output(0)
    if output is not None and output.dtype.name == "INT8":
        steps.append(PersistentBytes(40, "OpData"))
    return steps


def _reduce_simple(view: OperatorView) -> list[KernelAllocation]:
    # reduce_common.cc PrepareSimple: input, axis, and the output only for int8 input.
    steps = _temps(view, ("in", 0), ("in", 1))
    if view.input_type(0) == "INT8":
        steps.extend(_temps(view, ("out", 0)))
    return steps


def _mean_or_sum(view: OperatorView) -> list[KernelAllocation]:
    # PrepareMeanOrSumHelper: input, output, axis; then PrepareSimple.
    return _temps(view, ("in", 0), ("out", 0), ("in", 1)) + _reduce_simple(view)


def _min_max_all(view: OperatorView) -> list[KernelAllocation]:
    # PrepareMinMaxHelper / PrepareAllHelper: PrepareSimple; then input, output, axis.
    return _reduce_simple(view) + _temps(view, ("in", 0), ("out", 0), ("in", 1))


def _read_variable(view: OperatorView) -> list[KernelAllocation]:
    # read_variable.cc Prepare checks the handle only.
    return _temps(view, ("in", 0))


def _assign_variable(view: OperatorView) -> list[KernelAllocation]:
    # assign_variable.cc Prepare reads the handle as an eval tensor and fetches only the value;
    # the variable's buffer, allocated here once per variable, is added by `tflm_setup`, since
    # it depends on the operators prepared before this one (`tflm_resources`).
    return _temps(view, ("in", 1))


def _comparison(view: OperatorView) -> list[KernelAllocation]:
    # comparisons.cc ComparisonsPrepare fetches both inputs, never the output.
    return _temps(view, ("in", 0), ("in", 1))


def _nothing(view: OperatorView) -> list[KernelAllocation]:
    return []


def _row(
    opcode: str,
    kernel_file: str,
    builtin_data: tuple[int, int] | None,
    init_bytes: int | None,
    prepare: PrepareFunction = _inputs_then_outputs,
) -> KernelMemory:
    return KernelMemory(opcode, kernel_file, builtin_data, init_bytes, prepare)


def _custom_row(
    opcode: str, kernel_file: str, init: Sequence[int] | Callable[[OperatorView], Sequence[int]]
) -> KernelMemory:
    """A custom kernel: no builtin options; Init allocates the given buffers in order."""

    def init_sizes(view: OperatorView) -> Sequence[int]:
        return init(view) if callable(init) else init

    return KernelMemory(opcode, kernel_file, None, None, _inputs_then_outputs, init_sizes)


def _custom_int(view: OperatorView, key: str) -> int:
    options = custom_options(view.model, view.subgraph.index, view.operator.position_in_file)
    value = options.get(key, 0) if isinstance(options, dict) else 0
    return int(value) if isinstance(value, int) else 0


def _signal_filter_bank(view: OperatorView) -> list[int]:
    # TFLMSignalFilterBankParams, then a uint64 work area of num_channels + 1 entries.
    return [64, 8 * (_custom_int(view, "num_channels") + 1)]


def _signal_spectral_subtraction(view: OperatorView) -> list[int]:
    # TFLMSignalSpectralSubtractionParams, then a uint32 noise estimate per channel.
    return [56, 4 * _custom_int(view, "num_channels")]


def _signal_rfft(view: OperatorView) -> list[int]:
    # TfLiteAudioFrontendRfftParams<T> (48 B), then the kiss_fftr state for fft_length.
    complex_bytes = 4 if view.input_type(0) == "INT16" else 8
    return [48, kiss_fftr_state_bytes(_custom_int(view, "fft_length"), complex_bytes)]


def kiss_fftr_state_bytes(fft_length: int, complex_bytes: int, pointer_bytes: int = 8) -> int:
    """kiss_fftr_alloc's need: real-FFT header, a complex FFT of half length, super twiddles."""
    half = fft_length // 2
    # kiss_fft_state: nfft, inverse, factors[64], then `half` twiddles.
    complex_state = 4 + 4 + 4 * 64 + complex_bytes * half
    return 3 * pointer_bytes + complex_state + complex_bytes * (half * 3 // 2)


_SIGNAL = "signal/micro/kernels/"
# comparisons.cc: no options; OpData is ComparisonParams (seven ints and a bool).
_COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")

KERNELS: Mapping[str, KernelMemory] = MappingProxyType(
    {
        row.opcode: row
        for row in (
            _row("ADD", "add.cc, add_common.cc", (8, 4), 60),
            _row("ADD_N", "add_n.cc", None, None, _add_n),
            _row("ARG_MAX", "arg_min_max.cc", (4, 4), None),
            # OpData { int scratch_index } exists in USE_TFLM_COMPRESSION builds only.
            _row("ASSIGN_VARIABLE", "assign_variable.cc", None, 4, _assign_variable),
            _row("AVERAGE_POOL_2D", "pooling.cc, pooling_common.cc", (40, 4), 32),
            # CALL_ONCE runs its init subgraph at Invoke, not during setup.
            _row("CALL_ONCE", "call_once.cc", (4, 4), 8, _nothing),
            _row("CAST", "cast.cc", (8, 4), None),
            _row("CONCATENATION", "concatenation.cc", (8, 4), 80),
            _row("CONV_2D", "conv.cc, conv_common.cc", (28, 4), 80, _convolution),
            _row("DEPTHWISE_CONV_2D", "depthwise_conv.cc", (28, 4), 80, _convolution),
            _row("DEQUANTIZE", "dequantize.cc, dequantize_common.cc", None, 32),
            _row("DIV", "div.cc", (4, 4), 28),
            _row("EXP", "exp.cc", None, None),
            _row("EXPAND_DIMS", "expand_dims.cc", None, None),
            _row("FULLY_CONNECTED", "fully_connected.cc", (32, 8), 72, _fully_connected),
            _row("GATHER", "gather.cc", (8, 4), 12),
            _row("HARD_SWISH", "hard_swish.cc, hard_swish_common.cc", None, 20),
            _row("IF", "if.cc", (8, 4), 8),
            _row("L2_NORMALIZATION", "l2norm.cc", (4, 4), 4),
            _row("LEAKY_RELU", "leaky_relu.cc, leaky_relu_common.cc", (4, 4), 24),
            _row("LOGISTIC", "logistic.cc, logistic_common.cc", None, 16),
            _row("MAXIMUM", "maximum_minimum.cc", None, None),
            _row("MAX_POOL_2D", "pooling.cc, pooling_common.cc", (40, 4), 32),
            _row("MEAN", "reduce.cc, reduce_common.cc", (1, 1), 44, _mean_or_sum),
            _row("MINIMUM", "maximum_minimum.cc", None, None),
            _row("MIRROR_PAD", "mirror_pad.cc", (4, 4), 20),
            _row("MUL", "mul.cc, mul_common.cc", (4, 4), 36),
            _row("PACK", "pack.cc", (8, 4), None),
            _row("PAD", "pad.cc, pad_common.cc", None, 56),
            _row("QUANTIZE", "quantize.cc, quantize_common.cc", None, 32),
            _row("READ_VARIABLE", "read_variable.cc", None, None, _read_variable),
            _row("REDUCE_ALL", "reduce.cc, reduce_common.cc", (1, 1), 44, _min_max_all),
            _row("REDUCE_MAX", "reduce.cc, reduce_common.cc", (1, 1), 44, _min_max_all),
            _row("REDUCE_MIN", "reduce.cc, reduce_common.cc", (1, 1), 44, _min_max_all),
            _row("RELU", "activations.cc, activations_common.cc", None, 28),
            _row("RELU6", "activations.cc, activations_common.cc", None, 8),
            _row("RESHAPE", "reshape.cc, reshape_common.cc", (36, 4), None),
            _row("RESIZE_NEAREST_NEIGHBOR", "resize_nearest_neighbor.cc", (2, 1), None),
            _row("SOFTMAX", "softmax.cc, softmax_common.cc", (4, 4), 80, _softmax),
            _row("SPLIT", "split.cc", (4, 4), None),
            _row("SQUEEZE", "squeeze.cc", (36, 4), None),
            _row("STRIDED_SLICE", "strided_slice.cc, strided_slice_common.cc", (24, 4), 84),
            _row("SUB", "sub.cc, sub_common.cc", (8, 4), 52),
            _row("SUM", "reduce.cc, reduce_common.cc", (1, 1), 44, _mean_or_sum),
            _row("SVDF", "svdf.cc, svdf_common.cc", (12, 4), 36),
            _row("TANH", "tanh.cc", None, 16),
            _row("TRANSPOSE", "transpose.cc, transpose_common.cc", None, None),
            _row("TRANSPOSE_CONV", "transpose_conv.cc", (20, 4), 88, _transpose_conv),
            _row("UNIDIRECTIONAL_SEQUENCE_LSTM", "unidirectional_sequence_lstm.cc", (16, 4), 688),
            _row("UNPACK", "unpack.cc", (8, 4), None),
            # TfLiteVarHandleParams: two string pointers; OpData: the resource id.
            _row("VAR_HANDLE", "var_handle.cc", (16, 8), 4, _nothing),
            # WHILE runs its subgraphs at Invoke; Prepare only checks their arity.
            _row("WHILE", "while.cc", (8, 4), 8, _nothing),
            *(_row(opcode, "comparisons.cc", None, 32, _comparison) for opcode in _COMPARISONS),
            _custom_row("CUSTOM:TFLite_Detection_PostProcess", "detection_postprocess.cc", [112]),
            _custom_row("CUSTOM:SignalEnergy", _SIGNAL + "energy.cc", [8]),
            _custom_row("CUSTOM:SignalFftAutoScale", _SIGNAL + "fft_auto_scale_kernel.cc", []),
            _custom_row("CUSTOM:SignalFilterBank", _SIGNAL + "filter_bank.cc", _signal_filter_bank),
            _custom_row("CUSTOM:SignalFilterBankLog", _SIGNAL + "filter_bank_log.cc", [8]),
            _custom_row(
                "CUSTOM:SignalFilterBankSpectralSubtraction",
                _SIGNAL + "filter_bank_spectral_subtraction.cc",
                _signal_spectral_subtraction,
            ),
            _custom_row(
                "CUSTOM:SignalFilterBankSquareRoot", _SIGNAL + "filter_bank_square_root.cc", []
            ),
            _custom_row("CUSTOM:SignalPCAN", _SIGNAL + "pcan.cc", [4]),
            _custom_row("CUSTOM:SignalRfft", _SIGNAL + "rfft.cc", _signal_rfft),
            _custom_row("CUSTOM:SignalWindow", _SIGNAL + "window.cc", [8]),
        )
    }
)

DEFAULT_KERNEL = KernelMemory("*", "(no row: estimate)", (32, 4), 64, _inputs_then_outputs)


def kernel_memory(view: OperatorView) -> KernelMemoryUse:
    """One operator → its builtin options, Init and Prepare allocations."""
    row = KERNELS.get(view.operator.opcode)
    known = row is not None
    kernel = row if row is not None else DEFAULT_KERNEL
    init: list[KernelAllocation] = []
    if kernel.init_bytes is not None:
        init.append(PersistentBytes(kernel.init_bytes, "OpData"))
    if kernel.init_extra is not None:
        init.extend(PersistentBytes(n, "Init state") for n in kernel.init_extra(view))
    builtin = None if view.operator.is_custom else kernel.builtin_data
    prepare = tuple(kernel.prepare(view))
    for allocation in (*init, *prepare):
        if isinstance(allocation, PersistentBytes):
            view.checked_size(allocation.nbytes, allocation.what)
        elif isinstance(allocation, TempBytes):
            view.checked_size(allocation.nbytes, "temporary buffer")
    return KernelMemoryUse(builtin, tuple(init), prepare, known)
