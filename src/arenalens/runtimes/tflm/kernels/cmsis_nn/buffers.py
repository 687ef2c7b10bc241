"""CMSIS-NN scratch sizes: (code path, tensor dims, parameters) → the bytes each of CMSIS-NN's
`*_get_buffer_size` functions returns, which the TFLM kernels request as scratch.

Sources: ARM-software/CMSIS-NN 4ab83cc3 (the probes' version), Source/ConvolutionFunctions/
arm_convolve_get_buffer_sizes_s8.c / _s16.c, arm_depthwise_conv_get_buffer_sizes_s8.c / _s4.c,
arm_transpose_conv_get_buffer_sizes_s8.c, FullyConnectedFunctions/
arm_fully_connected_get_buffer_sizes_s8.c / _s16.c, SVDFunctions/arm_svdf_get_buffer_sizes_s8.c,
PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c / _s16.c, Include/arm_nnsupportfunctions.h.

The code path is the compiler's (`Include/arm_nn_math_types.h`): `ARM_MATH_MVEI` when
`__ARM_FEATURE_MVE` is set ("mve"), else `ARM_MATH_DSP` when `__ARM_FEATURE_DSP` is ("dsp"), else
pure C ("none"). Every function tests MVE first, so a core with both (Cortex-M55) takes MVE.

Compiler: GCC (arm-none-eabi-gcc, what TFLM's makefile and the probes use). armclang 6.1+ differs
in two places, both noted where they apply: the DSP 1x1 fast convolution asks for `4·C` bytes
(GCC: 0), and the MVE depthwise kernel converts a one-input-channel depthwise to a convolution
only above 8 output channels (GCC: above 1).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from arenalens.builds.build import ISA_DSP, ISA_MVE

# arm_nn_compiler.h: CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD, GCC value
# (armclang: 8).
ONE_INPUT_CHANNEL_CONVERSION_ABOVE = 1
# arm_nnsupportfunctions.h: channels the MVE depthwise kernel processes per block.
CH_IN_BLOCK_MVE = 124
# arm_nnsupportfunctions.h: input channels above which a transpose convolution reverses.
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16


class Dims(NamedTuple):
    """cmsis_nn_dims: batch, height, width, channels."""

    n: int
    h: int
    w: int
    c: int


# Dims from (n, h, w, c), e.g. a rank-4 shape as it is, in one C call (the NamedTuple's own
# constructor is a Python function; every convolution's setup makes four or five).
dims_of = partial(tuple.__new__, Dims)


class ConvParams(NamedTuple):
    """The fields of cmsis_nn_conv_params (and _dw_conv_params) the size functions read.
    `stride_w` None: the caller never set it (TFLM's depthwise Prepare leaves it uninitialised)."""

    stride_w: int | None
    stride_h: int | None
    pad_w: int
    pad_h: int
    dilation_w: int
    dilation_h: int


conv_params_of = partial(tuple.__new__, ConvParams)  # from all six fields, in one C call


def _c_div(numerator: int, denominator: int) -> int:
    """C integer division: truncates toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def _c_mod(numerator: int, denominator: int) -> int:
    return numerator - _c_div(numerator, denominator) * denominator


def is_convolve_1x1(params: ConvParams, source: Dims, kernel: Dims) -> bool:
    """arm_nn_is_convolve_1x1: unpadded, 1x1, undilated, not grouped."""
    return (
        params.pad_w == 0
        and params.pad_h == 0
        and kernel.w == 1
        and kernel.h == 1
        and params.dilation_w == 1
        and params.dilation_h == 1
        and source.c == kernel.c
    )


def is_convolve_1_x_n(params: ConvParams, source: Dims, kernel: Dims) -> bool:
    """arm_nn_is_convolve_1_x_n: one input row, one filter row, stride·C a multiple of 4.
    An unset stride reads as not 1xN, which is what the GCC probes did (undefined behaviour)."""
    if params.stride_w is None:
        return False
    return (
        source.h == 1
        and params.dilation_w == 1
        and kernel.h == 1
        and (params.stride_w * source.c) % 4 == 0
        and source.c == kernel.c
    )


def convolve_s8(isa: str, source: Dims, kernel: Dims) -> int:
    """arm_convolve_s8_get_buffer_size: two im2col columns of int16 (C / DSP), four 16-lane
    int8 columns (MVE)."""
    if isa == ISA_MVE:
        return convolve_s8_mve(source, kernel)
    return _im2col_columns(kernel.w * kernel.h * source.c)


def _im2col_columns(columns: int) -> int:
    """arm_convolve_s8_get_buffer_size off MVE: two im2col columns of `columns` int16 each,
    rounded up to a multiple of 4."""
    aligned = columns + (-columns) % 4
    return 2 * aligned * 2


def convolve_s8_mve(source: Dims, kernel: Dims) -> int:
    """arm_convolve_s8_get_buffer_size_mve."""
    return 4 * -(-source.c * kernel.w * kernel.h // 16) * 16


def convolve_1_x_n_s8_mve(params: ConvParams, source: Dims, kernel: Dims, output: Dims) -> int:
    """arm_convolve_1_x_n_s8_get_buffer_size_mve: the padded edge columns; the generic size when
    the padding does not split the output into edges and a middle."""
    stride = params.stride_w or 0
    total_pad = (output.w - 1) * stride + kernel.w - source.w
    asymmetric = _c_mod(total_pad, 2)
    right = max(1, _c_div(params.pad_w + asymmetric + stride - 1, stride))
    right = right if params.pad_w + asymmetric != 0 else 0
    left = max(1, _c_div(params.pad_w + stride - 1, stride)) if params.pad_w != 0 else 0
    middle = max(output.w - (right + left), 0)
    if right + middle + left != output.w:
        return convolve_s8_mve(source, kernel)
    pad_left = params.pad_w * source.c
    pad_right = right * source.c if asymmetric else pad_left
    elements_left = kernel.w * source.c
    elements_right = elements_left - source.c
    return max(elements_left + pad_left, elements_right + pad_right)


def convolve_1x1_s8_fast(isa: str, source: Dims) -> int:
    """arm_convolve_1x1_s8_fast_get_buffer_size: 0 under GCC on every path (armclang, DSP
    without MVE: 2·C int16)."""
    return 0


def convolve_wrapper_s8(
    isa: str, params: ConvParams, source: Dims, kernel: Dims, output: Dims
) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size (also used for int4 filters by TFLM): 1x1 (fast
    or strided), 1xN, or the generic im2col convolution."""
    if is_convolve_1x1(params, source, kernel):
        stride_one = params.stride_w == 1 and params.stride_h == 1
        return convolve_1x1_s8_fast(isa, source) if stride_one else 0
    if is_convolve_1_x_n(params, source, kernel):
        if isa == ISA_MVE:
            return convolve_1_x_n_s8_mve(params, source, kernel, output)
        return convolve_s8(isa, source, kernel)
    return convolve_s8(isa, source, kernel)


def convolve_wrapper_s8_off_mve(
    isa: str, source_c: int, kernel_h: int, kernel_w: int, kernel_c: int, *, dilated: bool
) -> int:
    """`convolve_wrapper_s8` on any path but MVE's, from what it reads there: neither the
    padding nor the strides decide (`dilated`: either dilation is not 1). Its 1x1 test reads a
    padding that is 0 for every 1x1 filter, dilated or not (ComputePaddingHeightWidth's total
    is at most the effective filter size - 1, which is 0), and a 1x1 convolution asks for 0
    bytes at any stride (`convolve_1x1_s8_fast` under GCC; strided: none); the 1xN test then
    takes the generic size off MVE too. What a convolution's setup asks on a C or DSP core,
    without the padding, the strides or the dims (tests: the same answers as the wrapper)."""
    if kernel_w == 1 and kernel_h == 1 and not dilated and source_c == kernel_c:
        return 0
    return _im2col_columns(kernel_w * kernel_h * source_c)


def convolve_wrapper_s16(isa: str, source: Dims, kernel: Dims) -> int:
    """arm_convolve_wrapper_s16_get_buffer_size: every shape, stride and dilation (1x1 too)."""
    columns = source.c * kernel.w * kernel.h
    if isa == ISA_MVE:
        return 4 * -(-columns // 8) * 8 * 2
    return 2 * columns * 2


def depthwise_s8_opt(isa: str, source: Dims, kernel: Dims) -> int:
    """arm_depthwise_conv_s8_opt_get_buffer_size (C: none)."""
    if isa == ISA_MVE:
        return 4 * CH_IN_BLOCK_MVE * kernel.w * kernel.h
    if isa == ISA_DSP:
        return source.c * kernel.w * kernel.h * 2
    return 0


def depthwise_one_input_channel_mve(
    params: ConvParams, source: Dims, kernel: Dims, output: Dims
) -> int:
    """arm_deptwise_conv_s8_one_in_ch_get_buffer_size_mve: the depthwise runs as a convolution
    with filter {n=O, h, w, c=1}, plus a copy of the reordered filter."""
    as_conv = Dims(kernel.c, kernel.h, kernel.w, kernel.n)
    size = convolve_wrapper_s8(ISA_MVE, params, source, as_conv, output)
    return size + kernel.c * kernel.h * kernel.w * kernel.n


def converts_one_input_channel(isa: str, source: Dims, output: Dims) -> bool:
    """MVE runs a depthwise with one input channel and several outputs as a convolution."""
    return isa == ISA_MVE and source.c == 1 and output.c > ONE_INPUT_CHANNEL_CONVERSION_ABOVE


def depthwise_wrapper_s8(
    isa: str, params: ConvParams, source: Dims, kernel: Dims, output: Dims
) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size: the optimised kernel's buffer when the
    depthwise is 1:1, unbatched and undilated (C / DSP: not for 3x3 with padding <= 1)."""
    if converts_one_input_channel(isa, source, output):
        return depthwise_one_input_channel_mve(params, source, kernel, output)
    if source.c == output.c and source.n == 1 and params.dilation_w == 1 and params.dilation_h == 1:
        if (
            isa != ISA_MVE
            and kernel.w == 3
            and kernel.h == 3
            and params.pad_h <= 1
            and params.pad_w <= 1
        ):
            return 0
        return depthwise_s8_opt(isa, source, kernel)
    return 0


def depthwise_wrapper_s8_off_mve(
    isa: str, source: Dims, kernel_h: int, kernel_w: int, output_c: int, *, dilated: bool
) -> int:
    """`depthwise_wrapper_s8` on any path but MVE's, without the padding (`dilated`: either
    dilation is not 1): its `pad <= 1` test is reached only undilated, where a 3x3 filter's
    padding is at most 1 (ComputePaddingHeightWidth's total is at most the effective filter
    size - 1, 2), so a 1:1 unbatched undilated 3x3 depthwise asks for 0 bytes whatever its
    padding (tests: the same answers as the wrapper)."""
    if source.c == output_c and source.n == 1 and not dilated:
        if kernel_w == 3 and kernel_h == 3:
            return 0
        return depthwise_s8_opt(isa, source, Dims(1, kernel_h, kernel_w, output_c))
    return 0


def depthwise_wrapper_s4(
    isa: str, params: ConvParams, source: Dims, kernel: Dims, output: Dims
) -> int:
    """arm_depthwise_conv_wrapper_s4_get_buffer_size: the s4 optimised kernel uses the DSP size
    even on the pure-C path; no one-input-channel conversion."""
    if source.c == output.c and source.n == 1 and params.dilation_w == 1 and params.dilation_h == 1:
        if isa == ISA_MVE:
            return 4 * CH_IN_BLOCK_MVE * kernel.w * kernel.h
        return source.c * kernel.w * kernel.h * 2
    return 0


def fully_connected_s8(isa: str, kernel: Dims) -> int:
    """arm_fully_connected_s8_get_buffer_size: MVE keeps an int32 kernel sum per output
    (`kernel.c` = output depth in TFLM's call)."""
    return kernel.c * 4 if isa == ISA_MVE else 0


def fully_connected_s16(isa: str, kernel: Dims) -> int:
    """arm_fully_connected_s16_get_buffer_size: none on any path."""
    return 0


def svdf_s8(isa: str, weights_feature: Dims) -> int:
    """arm_svdf_s8_get_buffer_size: MVE keeps an int32 kernel sum per filter."""
    return weights_feature.n * 4 if isa == ISA_MVE else 0


def avgpool(isa: str, channels: int) -> int:
    """arm_avgpool_s8/s16_get_buffer_size: DSP (without MVE) accumulates in int32 per channel."""
    return channels * 4 if isa == ISA_DSP else 0


def reverses_transpose_conv(stride_w: int, stride_h: int, source: Dims) -> bool:
    """A transpose convolution with strides <= 2 and more than 16 input channels runs as a
    convolution over the upsampled input with a reversed filter."""
    return stride_w <= 2 and stride_h <= 2 and source.c > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv_s8(
    isa: str, strides: tuple[int, int], source: Dims, kernel: Dims, output: Dims
) -> int:
    """arm_transpose_conv_s8_get_buffer_size: the reverse convolution's im2col buffer, else
    int32 accumulators for `max(fh, sh)` output rows (CMSIS-NN uses stride_h in the width term
    too: `max(fw, sh)`). `strides` is (w, h)."""
    stride_w, stride_h = strides
    if reverses_transpose_conv(stride_w, stride_h, source):
        upsampled = Dims(source.n, source.h * stride_h, source.w * stride_w, source.c)
        return convolve_s8(isa, upsampled, kernel)
    row = ((source.w - 1) * stride_w + max(kernel.w, stride_h)) * output.c
    return row * max(kernel.h, stride_h) * 4


def transpose_conv_s8_reverse(stride_w: int, stride_h: int, source: Dims, kernel: Dims) -> int:
    """arm_transpose_conv_s8_get_reverse_conv_buffer_size: the reversed filter (0 otherwise)."""
    if reverses_transpose_conv(stride_w, stride_h, source):
        return source.c * kernel.w * kernel.h * kernel.n
    return 0
