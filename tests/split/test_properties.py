"""Property: any small int8 conv chain, split into any bands or channel groups the rules allow,
computes the same bytes on the real TFLM wheel."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arenalens import load_model
from arenalens.split.bands import split_bands
from arenalens.split.channels import split_channels
from arenalens.split.lowering import write_split
from arenalens.split.parts import Region, SplitKind
from arenalens.split.regions import Rules, region_of
from arenalens.split.schedule import SplitPlan
from tests.split import models
from tests.split.checks import assert_identical

LAYER = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["conv", "depthwise", "max_pool"]),
        "kernel": st.tuples(st.integers(1, 4), st.integers(1, 4)),
        "strides": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "dilation": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "padding": st.sampled_from([models.SAME, models.VALID]),
        "channels": st.integers(1, 6),
    }
)


def _chain(
    seed: int, size: tuple[int, int], layers: list[dict[str, object]], kind: SplitKind
) -> bytes | None:
    net = models.network(seed)
    x = models.image_input(net, (1, *size, 2))
    y = x
    for index, drawn in enumerate(layers):
        layer = dict(drawn)
        if kind is SplitKind.CHANNELS:
            # A channel group starts at a CONV_2D; per-channel operators follow it.
            if index == 0:
                layer["kind"] = "conv"
            elif layer["kind"] == "conv":
                layer["kind"] = "depthwise"
        kernel = layer["kernel"]
        strides = layer["strides"]
        dilation = layer["dilation"]
        padding = layer["padding"]
        assert isinstance(kernel, tuple) and isinstance(strides, tuple)
        assert isinstance(dilation, tuple) and isinstance(padding, str)
        effective = [(k - 1) * d + 1 for k, d in zip(kernel, dilation, strict=True)]
        if padding == models.VALID and any(
            e > s for e, s in zip(effective, y.shape[1:3], strict=True)
        ):
            return None
        if layer["kind"] == "conv":
            channels = layer["channels"]
            assert isinstance(channels, int)
            y = net.conv(
                y,
                f"c{index}",
                channels=channels,
                kernel=kernel,
                strides=strides,
                dilation=dilation,
                padding=padding,
            )
        elif layer["kind"] == "depthwise":
            y = net.depthwise(
                y, f"d{index}", kernel=kernel, strides=strides, dilation=dilation, padding=padding
            )
        else:
            y = net.max_pool(y, f"p{index}", pool=kernel, stride=strides[0], padding=padding)
        if min(y.shape[1:3]) < 1:
            return None
    return net.build([x], [y])


@pytest.mark.runtime
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    size=st.tuples(st.integers(4, 14), st.integers(3, 12)),
    layers=st.lists(LAYER, min_size=1, max_size=4),
    parts=st.integers(2, 5),
    kind=st.sampled_from([SplitKind.BANDS, SplitKind.CHANNELS]),
)
def test_any_allowed_split_is_bit_identical(
    seed: int,
    size: tuple[int, int],
    layers: list[dict[str, object]],
    parts: int,
    kind: SplitKind,
) -> None:
    pytest.importorskip("tflite_micro")
    data = _chain(seed, size, layers, kind)
    assume(data is not None)
    assert data is not None
    model = load_model(data)
    rules = Rules.of(model)
    last = len(model.subgraphs[0].operators) - 1
    region = region_of(rules, 0, last, kind)
    assert isinstance(region, Region), region
    cut = split_bands if kind is SplitKind.BANDS else split_channels
    split = cut(rules, region, parts)
    # Refused only for what the rules name: fewer rows/channels than parts, or a band of
    # nothing but padding.
    if isinstance(split, str):
        assert "fewer than" in split or "only padding" in split, split
        assume(False)
    assert not isinstance(split, str)
    written, _ = write_split(model, SplitPlan(0).with_split(split))
    assert_identical(data, written, seeds=(seed,))
