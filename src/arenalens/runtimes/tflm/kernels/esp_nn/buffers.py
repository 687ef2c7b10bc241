"""ESP-NN scratch sizes: (chip path, esp-nn release, tensor dims, parameters) → the bytes each of
esp-nn's `esp_nn_get_*_scratch_size` functions returns, which esp-tflite-micro's ESP-NN kernels
request as scratch (when the size is positive).

Sources: espressif/esp-nn at 1.1.2 (596b0840), 1.2.0 (b859e50b), 1.2.1 (6e2e716), 1.2.2 (d2fb624)
and 1.2.3 (d45b843c): include/esp_nn.h (which header a build includes), esp_nn_esp32s3.h,
esp_nn_esp32p4.h, esp_nn_generic_opt.h, esp_nn_ansi_c.h (which function each name maps to),
src/convolution/esp_nn_conv_{esp32s3,esp32p4,opt,ansi}.c,
src/convolution/esp_nn_depthwise_conv_{s8_esp32s3,esp32p4,opt,ansi}.c,
src/softmax/esp_nn_softmax_{s8_esp32s3,s8_esp32p4,opt,ansi}.c. docs/esp-nn.md lists them.

The chip path is the build's (`esp_nn.h`): with `CONFIG_NN_OPTIMIZED` (the default), the ESP32-S3
and ESP32-P4 get their own functions and every other chip the generic optimised C; with
`CONFIG_NN_ANSI_C`, ANSI C on any chip. esp-nn reads every dimension, padding and stride into a
`uint16_t` and computes in 32-bit `int` (`_u16`, `_int`), as here.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.builds.build import (
    ISA_ESP32P4,
    ISA_ESP32S3,
    ISA_ESP_ANSI,
    ISA_ESP_GENERIC,
    Build,
)
from arenalens.builds.records import LibraryRelease

# The chip paths (`Build.isa` of an ESP-NN build).
S3 = ISA_ESP32S3
P4 = ISA_ESP32P4
GENERIC = ISA_ESP_GENERIC
ANSI = ISA_ESP_ANSI
PATHS = (S3, P4, GENERIC, ANSI)

# The changes between esp-nn releases these sizes follow (`build_records.json`, esp-nn's
# "changes"): a size asks `library.release.has(KEY)`, never compares versions.
DEPTHWISE_INT16_GAP_32 = "depthwise-int16-gap-32"  # 1.2.0, esp-nn PR #37 (dd785b0)
S3_CONV_IM2COL = "s3-conv-im2col"  # 1.2.1
S3_DEPTHWISE_TILED = "s3-depthwise-tiled"  # 1.2.1
S3_CONV_MARGIN_64 = "s3-conv-margin-64"  # 1.2.3 (d17c031)
P4_CONV = "p4-conv"  # 1.2.3


# esp_nn_depthwise_conv_s8_esp32s3.c (1.2.1 on): padded inputs above this are tiled in strips,
# int16 copies above the next one in row tiles.
S3_DEPTHWISE_FULL_INPUT_LIMIT = 40 * 1024
S3_DEPTHWISE_INT16_LIMIT = 48 * 1024
# esp_nn_conv_esp32p4.c (1.2.3): L1D_BUDGET, the bytes its padded path keeps in the data cache.
P4_L1D_BUDGET = 32768


@dataclass(frozen=True, slots=True)
class EspNn:
    """The esp-nn a firmware links: its chip path and release."""

    path: str  # S3 | P4 | GENERIC | ANSI
    release: LibraryRelease


def esp_nn_of(build: Build) -> EspNn:
    """The esp-nn an ESP-NN build links: its chip path (`Build.isa`) and release; ValueError for
    a build that names neither."""
    if build.isa not in PATHS or build.library_release is None:
        raise ValueError(f"{build.name}: no esp-nn code path ({build.isa})")
    return EspNn(build.isa, build.library_release)


@dataclass(frozen=True, slots=True)
class Dims:
    """data_dims_t as esp-tflite-micro fills it: width, height, channels."""

    width: int
    height: int
    channels: int


@dataclass(frozen=True, slots=True)
class Window:
    """The conv_params_t / dw_conv_params_t fields the size functions read: TFLM's computed
    padding (not its offsets), strides and the depth multiplier."""

    pad_width: int
    pad_height: int
    stride_width: int
    stride_height: int
    multiplier: int = 1


def _u16(value: int) -> int:
    """A value read into a uint16_t."""
    return value & 0xFFFF


def _int(value: int) -> int:
    """A 32-bit int result (two's complement wrap, as the compiled code gives)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) & ~(multiple - 1)


def conv_scratch_bytes(
    library: EspNn,
    source: Dims,
    kernel: Dims,
    result: Dims,
    window: Window,
) -> int:
    """esp_nn_get_conv_scratch_size on this path and release."""
    path, release = library.path, library.release
    if path in (GENERIC, ANSI):
        return 0  # esp_nn_get_conv_scratch_size_opt / _ansi
    if path == P4:
        if release.has(P4_CONV):
            return _conv_p4(source, kernel, result, window)
        return _conv_first(source, kernel, result, window)
    if not release.has(S3_CONV_IM2COL):
        return _conv_first(source, kernel, result, window)
    # 1.2.1 added the im2col path and the edge and filter-alignment terms; 1.2.3 (d17c031) raised
    # the margin for the assembly's accesses from 32 to 64.
    margin = 64 if release.has(S3_CONV_MARGIN_64) else 32
    return _conv_s3(source, kernel, result, window, margin)


def _conv_1x1(source: Dims, result: Dims, margin: int) -> int:
    """1x1, unpadded, stride 1 (S3 and P4 alike): the filter at channels rounded to 8, a
    transpose buffer from 8 pixels on, an input copy when channels are not a multiple of 8."""
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    channels8 = _round_up(channels, 8)
    transpose = 0 if width * height < 8 else 2 * (8 * channels8)
    input_copy = width * height * channels8 if channels % 8 else 0
    return _int(input_copy + channels8 * _u16(result.channels) + transpose + margin)


def _is_1x1(kernel: Dims, window: Window) -> bool:
    return (
        _u16(kernel.width) == 1
        and _u16(kernel.height) == 1
        and _u16(window.pad_width) == 0
        and _u16(window.pad_height) == 0
        and _u16(window.stride_width) == 1
        and _u16(window.stride_height) == 1
    )


def _padded(window: Window) -> bool:
    return _u16(window.pad_width) != 0 or _u16(window.pad_height) != 0


def _padded_input(source: Dims, window: Window) -> int:
    """The input copy with TFLM's padding on both sides (0 when unpadded)."""
    if not _padded(window):
        return 0
    width, height = _u16(source.width), _u16(source.height)
    pad_w, pad_h = _u16(window.pad_width), _u16(window.pad_height)
    return _int((width + 2 * pad_w) * (height + 2 * pad_h) * _u16(source.channels))


def _conv_first(source: Dims, kernel: Dims, result: Dims, window: Window) -> int:
    """esp_nn_get_conv_scratch_size_esp32s3 up to 1.2.0 (and _esp32p4 up to 1.2.2): the 1x1
    path, else the padded input, the filter at channels rounded to 16 and an int32 per output
    channel."""
    if _is_1x1(kernel, window):
        return _conv_1x1(source, result, 32)
    out_channels = _u16(result.channels)
    channels16 = _round_up(_u16(source.channels), 16)
    filter_copy = _u16(kernel.width) * _u16(kernel.height) * channels16 * out_channels
    return _int(_padded_input(source, window) + filter_copy + 32 + out_channels * 4)


def _conv_s3(source: Dims, kernel: Dims, result: Dims, window: Window, margin: int) -> int:
    """esp_nn_get_conv_scratch_size_esp32s3 from 1.2.1: the 1x1 path; the im2col path (a filter
    row under 16 bytes, a window of 16 or more); else the padded input, the filter at channels
    rounded to 16 and again at rows rounded to 16, the input with right/bottom edge padding when
    the output reaches past it, and an int32 per output channel."""
    if _is_1x1(kernel, window):
        return _conv_1x1(source, result, margin)
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    kernel_w, kernel_h = _u16(kernel.width), _u16(kernel.height)
    out_channels = _u16(result.channels)
    row = _int(kernel_w * channels)
    window_length = _int(kernel_w * kernel_h * channels)
    if row < 16 and window_length >= 16:
        aligned = _round_up(window_length, 16)
        return _int(out_channels * 4 + 16 + out_channels * aligned + 16 + aligned + margin)
    filter_copy = kernel_w * kernel_h * _round_up(channels, 16) * out_channels
    filter_alignment = ((row + 15) // 16) * 16 * kernel_h * out_channels
    stride_w, stride_h = _u16(window.stride_width), _u16(window.stride_height)
    # output_dims->width/height are read as int32, not uint16.
    pad_right = max(0, _int(result.width * stride_w + kernel_w - 1) - width)
    pad_bottom = max(0, _int(result.height * stride_h + kernel_h - 1) - height)
    edge = (width + pad_right) * (height + pad_bottom) * channels if pad_right or pad_bottom else 0
    return _int(
        _padded_input(source, window)
        + filter_copy
        + filter_alignment
        + edge
        + margin
        + out_channels * 4
    )


def _conv_p4(source: Dims, kernel: Dims, result: Dims, window: Window) -> int:
    """esp_nn_get_conv_scratch_size_esp32p4 from 1.2.3: 1x1 under 16 channels (filter sums, a
    16-channel filter, a padded pixel), else the 1x1 path; the direct unpadded path; im2col (one
    window); tiny unpadded windows at a padded channel count; padded tiny windows whole, or in
    row tiles when they exceed the L1 budget."""
    margin = 32
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    kernel_w, kernel_h = _u16(kernel.width), _u16(kernel.height)
    out_channels = _u16(result.channels)
    if _is_1x1(kernel, window):
        if channels < 16:
            return _int(out_channels * 4 + 16 * out_channels + 32 + margin)
        return _conv_1x1(source, result, margin)
    accumulators = out_channels * 4
    channels16 = _round_up(channels, 16)
    if not _padded(window) and kernel_w * channels >= 16:
        return _int(kernel_w * kernel_h * channels16 * out_channels + margin + accumulators)
    window_length = _int(kernel_w * kernel_h * channels)
    if window_length >= 16:
        return _int(accumulators + window_length + margin)
    spread = _round_up((16 + kernel_w - 1) // kernel_w, 16)
    if not _padded(window):
        filter_copy = kernel_w * kernel_h * spread * out_channels
        return _int(accumulators + filter_copy + width * height * spread + margin)
    pad_w, pad_h = _u16(window.pad_width), _u16(window.pad_height)
    padded_width = width + 2 * pad_w
    whole = _int(padded_width * (height + 2 * pad_h) * channels)
    if _int(whole + accumulators) <= P4_L1D_BUDGET:
        filter_copy = kernel_w * kernel_h * channels16 * out_channels
        return _int(whole + filter_copy + margin + accumulators)
    tile_channels, filter_copy = channels, 0
    if kernel_w * channels < 16:
        tile_channels = spread
        filter_copy = _int(kernel_w * kernel_h * spread * out_channels)
    row_bytes = _int(padded_width * tile_channels)
    budget = _int(P4_L1D_BUDGET - accumulators - filter_copy)
    tile = 1
    stride_h = _u16(window.stride_height)
    if budget > 0 and _int(kernel_h * row_bytes) <= budget:
        tile = _c_div(budget - kernel_h * row_bytes, _int(stride_h * row_bytes)) + 1
        tile = min(tile, result.height)
    rows = (tile - 1) * stride_h + kernel_h + 2 * pad_h
    return _int(rows * row_bytes + filter_copy + margin + accumulators)


def depthwise_scratch_bytes(
    library: EspNn,
    source: Dims,
    kernel: Dims,
    result: Dims,
    window: Window,
) -> int:
    """esp_nn_get_depthwise_conv_scratch_size on this path and release (0 but on the S3)."""
    path, release = library.path, library.release
    if path != S3:
        return 0  # _opt, _ansi, and the P4's (its own from 1.2.3 returns 0 too)
    if release.has(S3_DEPTHWISE_TILED):
        return _depthwise_s3(source, kernel, result, window)
    # esp-nn PR #37 (dd785b0, in 1.2.0): the int16 copies need 32 bytes of alignment gap, 1.1.x
    # asked for 16 and wrote past them.
    gap = 32 if release.has(DEPTHWISE_INT16_GAP_32) else 16
    return _depthwise_first(source, kernel, result, window, gap)


def _edge_pad(
    source: Dims, result: Dims, window: Window, kernel_w: int, kernel_h: int
) -> tuple[int, int]:
    """The S3 3x3 paths' padding: twice TFLM's when it pads, else how far the output's
    windows reach past the input (ow·sw + fw − 1 − W, uint16 output sizes here)."""
    pad_w, pad_h = _u16(window.pad_width), _u16(window.pad_height)
    if pad_w or pad_h:
        return pad_w * 2, pad_h * 2
    stride_w, stride_h = _u16(window.stride_width), _u16(window.stride_height)
    return (
        _u16(result.width) * stride_w + kernel_w - 1 - _u16(source.width),
        _u16(result.height) * stride_h + kernel_h - 1 - _u16(source.height),
    )


def _depthwise_first(source: Dims, kernel: Dims, result: Dims, window: Window, gap: int) -> int:
    """esp_nn_get_depthwise_conv_scratch_size_esp32s3 up to 1.2.0."""
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    kernel_w, kernel_h = _u16(kernel.width), _u16(kernel.height)
    multiplier = _u16(window.multiplier)
    filter_size = _int(kernel_w * kernel_h * channels * multiplier)
    int16_copies = _int(2 * (filter_size + width * height * channels) + gap)
    if multiplier == 1 and channels % 8 == 0 and kernel_w == 3 and kernel_h == 3:
        if channels % 16:
            return int16_copies
        pad_width, pad_height = _edge_pad(source, result, window, kernel_w, kernel_h)
        if pad_width or pad_height:
            return _int(filter_size + (width + pad_width) * (height + pad_height) * channels + 16)
        return _int(filter_size + 16)
    if multiplier % 4 == 0:
        return int16_copies
    return 32


def _depthwise_s3(source: Dims, kernel: Dims, result: Dims, window: Window) -> int:
    """esp_nn_get_depthwise_conv_scratch_size_esp32s3 from 1.2.1 (the same through 1.2.3)."""
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    kernel_w, kernel_h = _u16(kernel.width), _u16(kernel.height)
    multiplier = _u16(window.multiplier)
    out_w, out_h = _u16(result.width), _u16(result.height)
    filter_size = _int(kernel_w * kernel_h * channels * multiplier)
    input_size = _int(width * height * channels)
    if multiplier == 1 and channels % 8 == 0:
        if kernel_w == 3 and kernel_h == 3:
            return _depthwise_s3_3x3(source, result, window, filter_size, input_size)
        int16_copies = _int(2 * (filter_size + input_size))
        if int16_copies <= S3_DEPTHWISE_INT16_LIMIT:
            return _int(int16_copies + 32)
        return _int(2 * filter_size + 2 * width * kernel_h * channels + 32)
    if multiplier == 1 and channels > 3:
        # Channels padded to 8: int16 filter and input copies, an int8 output copy and the bias,
        # shift and multiplier arrays, each start rounded to 16 (size_t arithmetic), + 16.
        channels8 = _round_up(channels, 8)
        input_start = _round_up(kernel_w * kernel_h * channels8 * 2, 16)
        output_start = _round_up(input_start + width * height * channels8 * 2, 16)
        arrays_start = _round_up(output_start + out_w * out_h * channels8, 16)
        return _int(arrays_start + 3 * channels8 * 4 + 16)
    if multiplier % 4 == 0:
        return _int(2 * (filter_size + input_size) + 32)
    return 32


def _depthwise_s3_3x3(
    source: Dims, result: Dims, window: Window, filter_size: int, input_size: int
) -> int:
    """The 3x3 multiplier-1 branch of the S3 depthwise size from 1.2.1 (channels % 8 == 0)."""
    width, height, channels = _u16(source.width), _u16(source.height), _u16(source.channels)
    if channels % 16 == 0:
        pad_width, pad_height = _edge_pad(source, result, window, 3, 3)
        if not (pad_width or pad_height):
            return _int(filter_size + 16)
        whole = _int((width + pad_width) * (height + pad_height) * channels)
        if whole <= S3_DEPTHWISE_FULL_INPUT_LIMIT:
            return _int(filter_size + whole + 16)
        return _int(filter_size + (width + pad_width) * 3 * channels + 16)
    if channels >= 12:
        channels16 = _round_up(channels, 16)
        stride_w, stride_h = _u16(window.stride_width), _u16(window.stride_height)
        out_w, out_h = _u16(result.width), _u16(result.height)
        pad_w = _u16(window.pad_width) * 2 + max(0, out_w * stride_w + 2 - width)
        pad_h = _u16(window.pad_height) * 2 + max(0, out_h * stride_h + 2 - height)
        padded_input = (width + pad_w) * (height + pad_h) * channels16
        return _int(9 * channels16 + padded_input + out_w * out_h * channels16 + 64)
    return _int(2 * (filter_size + input_size) + 32)


def softmax_scratch_bytes(library: EspNn, width: int) -> int:
    """esp_nn_get_softmax_scratch_size(width, height): an int32 per element of a row on every
    optimised path and release, nothing in ANSI C. `width` is what esp-tflite-micro passes,
    the input's dims[1] (an int32, not narrowed)."""
    if library.path == ANSI:
        return 0
    return _int(width * 4)


def _c_div(numerator: int, denominator: int) -> int:
    """C integer division: truncates toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient
