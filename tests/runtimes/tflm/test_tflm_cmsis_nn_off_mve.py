"""The CMSIS-NN convolution scratch sizes off MVE, made without the padding, the strides or the
dims (`buffers.convolve_wrapper_s8_off_mve`, `buffers.depthwise_wrapper_s8_off_mve`: what a
convolution's setup asks on a C or DSP core), against the wrappers given everything, for drawn
shapes and options: SAME and VALID, strides and dilations 0-4, odd option values, inconsistent
output shapes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arenalens.builds.build import ISA_DSP, ISA_ESP32S3, ISA_NONE
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers, conv
from arenalens.runtimes.tflm.kernels.cmsis_nn.buffers import Dims

OFF_MVE = (ISA_NONE, ISA_DSP, ISA_ESP32S3)
DRAWS = 4000
_ODD_VALUES: tuple[Any, ...] = (True, False, 2.0, None, "1")


def _option(draw: random.Random) -> Any:
    return draw.choice(_ODD_VALUES) if draw.random() < 0.05 else draw.randint(0, 4)


def _draw(draw: random.Random) -> tuple[Any, tuple[int, ...], int, int, int, tuple[int, ...]]:
    options = (_option(draw), _option(draw), _option(draw), _option(draw), draw.choice((0, 1)))
    channels = draw.choice((1, 2, 3, 4, 8, 16))
    source = (draw.choice((1, 1, 1, 2)), draw.randint(0, 12), draw.randint(0, 12), channels)
    filter_h, filter_w = draw.choice((1, 1, 2, 3, 3, 5)), draw.choice((1, 1, 2, 3, 3, 5))
    depth = draw.choice((channels, channels, channels * 2, 1, 16))
    output = (draw.choice((source[0], 1)), draw.randint(0, 12), draw.randint(0, 12), depth)
    return options, source, filter_h, filter_w, depth, output


@pytest.mark.parametrize("isa", OFF_MVE)
def test_convolution_buffer_off_mve_is_the_wrappers(isa: str) -> None:
    draw = random.Random(f"conv-{isa}")
    for _ in range(DRAWS):
        options, source, filter_h, filter_w, _, output = _draw(draw)
        filter_c = draw.choice((source[3], source[3], 1, 2))
        params = conv._conv_params(options, source, filter_h, filter_w, strided=True)
        full = buffers.convolve_wrapper_s8(
            isa, params, Dims(*source), Dims(1, filter_h, filter_w, filter_c), Dims(*output)
        )
        found = buffers.convolve_wrapper_s8_off_mve(
            isa, source[3], filter_h, filter_w, filter_c, dilated=conv._dilated(options)
        )
        assert found == full, (options, source, filter_h, filter_w, filter_c, output)


@pytest.mark.parametrize("isa", OFF_MVE)
def test_depthwise_buffer_off_mve_is_the_wrappers(isa: str) -> None:
    draw = random.Random(f"depthwise-{isa}")
    for _ in range(DRAWS):
        options, source, filter_h, filter_w, depth, output = _draw(draw)
        params = conv._conv_params(options, source, filter_h, filter_w, strided=False)
        source_dims = Dims(*source)
        kernel, output_dims = Dims(1, filter_h, filter_w, depth), Dims(source[0], *output[1:])
        full = buffers.depthwise_wrapper_s8(isa, params, source_dims, kernel, output_dims)
        assert conv._uninitialised_stride(isa, params, source_dims, kernel, output_dims) == []
        found = buffers.depthwise_wrapper_s8_off_mve(
            isa, source_dims, filter_h, filter_w, depth, dilated=conv._dilated(options)
        )
        assert found == full, (options, source, filter_h, filter_w, depth, output)
