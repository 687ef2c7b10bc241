"""Kernel access-order rules: hand-checked distances, and each rule proven on the real TFLM.

The runtime tests write a model whose output starts exactly the rule's distance below its input
(an offline plan, as `optimize --overlap` writes) and compare every output bit for bit with the
unoptimized model over random inputs. Where the kernel reads that last byte, one element less
must change the outputs: the distance is then not only safe but tight.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from arenalens.builds.build import HOST, REFERENCE
from arenalens.builds.kernel_paths import ESP_NN_PATH, KNOWN_PATHS, REFERENCE_PATH, KernelPath
from arenalens.examples.layers import Int8Network
from arenalens.optimization import prove_outputs
from arenalens.runtimes.tflm.access_order import Trace, distance_of
from arenalens.runtimes.tflm.kernels.base import AccessByPath, AccessOrder, KernelContext, NoOverlap
from arenalens.runtimes.tflm.kernels.registry import LIBRARIES, library_rule, registered_opcodes
from arenalens.runtimes.tflm.overlap import overlap_distance
from tests import overlap_cases as cases
from tests.conformance.cases import case_by_id


def _libraries() -> list[str]:
    return [REFERENCE, *LIBRARIES]


@pytest.mark.parametrize("library", _libraries())
def test_every_registered_kernel_says_how_its_output_may_overlap(library: str) -> None:
    # Generated from the registry: every kernel a build registers, with the rule that build uses.
    for opcode in sorted(registered_opcodes()):
        rule = library_rule(opcode, library)
        assert rule is not None, opcode
        access = rule.access
        assert isinstance(access, AccessOrder | NoOverlap | AccessByPath), opcode
        if isinstance(access, NoOverlap):
            assert access.reason.strip(), opcode
        if isinstance(access, AccessOrder):
            assert access.pattern and access.source, opcode


def test_the_overlap_code_paths_cover_the_registry_libraries() -> None:
    # Every library a build may select has code paths an overlap plan is judged on: the host's
    # (reference, CMSIS-NN on every path) and ESP-NN's. Each has rules: whether a loop is traced
    # is what its library's rules say, operator by operator (build_records.json names the package
    # and restates nothing).
    paths = {path.kernels for path in KNOWN_PATHS} | {ESP_NN_PATH.kernels}
    assert sorted(paths) == sorted(_libraries())
    assert ESP_NN_PATH.has_rules and all(path.has_rules for path in KNOWN_PATHS)


def test_esp_nn_refuses_its_int8_loops_and_runs_the_reference_ones_for_float() -> None:
    """esp-tflite-micro's kernels/esp_nn/ call esp-nn (untraced) for int8 only; a float
    convolution runs TFLM's reference loop, so ESP-NN allows the reference kernel's distance."""
    int8 = _distance(
        cases.int8_conv(kernel=1, stride=1, channels=8, padding="VALID"), paths=(ESP_NN_PATH,)
    )
    assert int8.distance is None and "esp-nn's int8 loops not analysed" in int8.reason
    float_conv = cases.float_conv(kernel=3, stride=1)
    reference = _distance(float_conv).distance
    assert reference is not None
    assert _distance(float_conv, paths=(ESP_NN_PATH,)).distance == reference
    assert _distance(float_conv, paths=(REFERENCE_PATH, ESP_NN_PATH)).distance == reference


def _distance(data: bytes, *, slot: int = 0, paths: tuple[KernelPath, ...] = (REFERENCE_PATH,)):
    model = cases.load(data)
    subgraph = model.subgraphs[0]
    op = subgraph.operators[0]
    view = KernelContext(model, subgraph, op, HOST)
    return overlap_distance(view, op.inputs[slot], op.outputs[0], paths)


def test_hand_checked_distances() -> None:
    # 1x1 convolution, 4 -> 8 channels over 81 pixels: writing channel 6 of the last pixel comes
    # before that pixel's 4 input bytes are read again: D = 8*80 + 7 - 4*80 = |input| + 3 + ... :
    # k - R + 1 = (8p + 6) - 4p + 1 at p = 80 → 327.
    assert (
        _distance(cases.int8_conv(kernel=1, stride=1, channels=8, padding="VALID")).distance == 327
    )
    # 3x3 depthwise, stride 1, SAME, 9 wide, 8 channels: (W + 1) * C = 80.
    assert _distance(cases.int8_depthwise(stride=1)).distance == 80
    # Same-index elementwise with equal element sizes: in place (0).
    assert _distance(cases.float_unary("RELU")).distance == 0
    # int8 -> float32 on 120 elements: the output ends where the input ends, less one element
    # step: 3 * 119 = 357.
    assert _distance(cases.int8_unary("DEQUANTIZE", "FLOAT32")).distance == 357
    # PAD: 1 row + 2 columns of padding before the first element: (1*8*4 + 2*4) * 4 bytes of
    # output come first, plus one element of depth padding per pixel before the last one read.
    assert _distance(cases.float_pad()).distance == 380


def test_nothing_for_whole_input_readers_and_non_data_inputs() -> None:
    net_fc = _fully_connected_model()
    answer = _distance(net_fc)
    assert answer.distance is None and "re-reads the whole input" in answer.reason
    pad = _distance(cases.float_pad(), slot=1)  # the paddings tensor
    assert pad.distance is None


def _fully_connected_model() -> bytes:
    net = Int8Network(seed=1, description="fc")
    x = net.input("x", (1, 32), (-4.0, 4.0))
    return net.build([x], [net.fully_connected(x, "fc", units=8)])


def test_float_and_bool_may_not_alias() -> None:
    answer = _distance(cases.float_binary("LESS", output_type="BOOL"))
    assert answer.distance is None and "alias" in answer.reason


def test_trace_semantics() -> None:

    # Two events: write byte 0 then read byte 5; the output must start 0 - 5 + 1 = -4 below.
    trace = Trace(np.array([0, -1], np.int64), np.array([0, 5], np.int64))
    assert distance_of(trace, 10) == -4
    # A memcpy chunk reading [0, 4) while writing [0, 4): its own source must stay clear.
    chunk = Trace(np.array([3], np.int64), np.array([0], np.int64), reads_may_follow_write=True)
    assert distance_of(chunk, 4) == 4
    # No later reads at all: every placement is safe.
    assert distance_of(Trace(np.array([3], np.int64), np.array([0], np.int64)), 4) == -4


def _by_path(data: bytes) -> dict[str, int | None]:
    return {path.name: _distance(data, paths=(path,)).distance for path in KNOWN_PATHS}


def test_cmsis_nn_rules_differ_where_the_kernels_do() -> None:
    # arm_nn_mat_mult_nt_t_s8 walks output-channel pairs outermost on C and DSP (the whole input
    # re-read per pair), 4 input rows at a time on MVE: larger distances than the reference loop.
    one_by_one = _by_path(cases.int8_conv(kernel=1, stride=1, channels=8, padding="VALID"))
    assert one_by_one == {
        "reference": 327,
        "cmsis-nn/none": 646,
        "cmsis-nn/dsp": 646,
        "cmsis-nn/mve": 335,
    }
    # arm_convolve_s8 copies the windows of 2 (4 on MVE) pixels before writing them: it reads
    # earlier than the reference loop, so its output may start closer.
    three = _by_path(cases.int8_conv(kernel=3, stride=1, channels=8))
    assert three["reference"] == 367 and three["cmsis-nn/dsp"] == 360
    # A plan for every path takes the largest, each path asked with its own build (Helium walks
    # the image once per 124-channel block: its distance alone is larger).
    wide = cases.int8_depthwise(stride=1, shape=(1, 5, 5, 130))
    assert _distance(wide, paths=KNOWN_PATHS).distance == max(_by_path(wide).values()) == 3120
    assert _by_path(wide)["cmsis-nn/dsp"] == 780
    every = _distance(cases.int8_conv(kernel=3, stride=1, channels=8), paths=KNOWN_PATHS)
    assert every.distance == 367
    # arm_max_pool_s8 memcpys the window's first pixel into the output pixel (source and
    # destination may not overlap), then compares the rest into it.
    max_pool = _by_path(cases.int8_pool("MAX_POOL_2D", pool=3, stride=1, padding="SAME"))
    assert max_pool["reference"] == 60 and max_pool["cmsis-nn/none"] == 66
    # Float kernels are the reference ones in a CMSIS-NN build.
    float_conv = cases.float_conv(kernel=3, stride=1)
    assert _distance(float_conv, paths=KNOWN_PATHS) == _distance(float_conv)
    # PADV2 runs arm_pad_s8 for int8 as PAD does: whole rows by memcpy.
    padv2 = case_by_id("PADV2.INT8.constant").model()
    assert _distance(padv2).distance == 176
    assert set(_by_path(padv2).values()) == {176, 208}  # rows by memcpy: source kept clear


# (id, model, input slot, one element less must break the outputs)
RUNTIME_CASES: list[tuple[str, Callable[[], bytes], int, bool]] = [
    ("conv-3x3-int8", lambda: cases.int8_conv(kernel=3, stride=1, channels=8), 0, True),
    (
        "conv-1x1-int8",
        lambda: cases.int8_conv(kernel=1, stride=1, channels=8, padding="VALID"),
        0,
        True,
    ),
    ("conv-3x3-stride2-int8", lambda: cases.int8_conv(kernel=3, stride=2, channels=6), 0, True),
    ("conv-dilated-float", lambda: cases.float_conv(kernel=3, stride=1, dilation=2), 0, True),
    ("conv-grouped-float", lambda: cases.float_conv(kernel=3, stride=1, groups=2), 0, True),
    ("depthwise-int8", lambda: cases.int8_depthwise(stride=1), 0, True),
    ("depthwise-stride2-int8", lambda: cases.int8_depthwise(stride=2), 0, True),
    (
        "depthwise-multiplier2-float",
        lambda: cases.float_depthwise(multiplier=2, stride=1),
        0,
        True,
    ),
    (
        "average-pool-int8",
        lambda: cases.int8_pool("AVERAGE_POOL_2D", pool=2, stride=2, padding="VALID"),
        0,
        True,
    ),
    (
        "max-pool-int8",
        lambda: cases.int8_pool("MAX_POOL_2D", pool=3, stride=1, padding="SAME"),
        0,
        True,
    ),
    ("l2-pool-float", cases.float_l2_pool, 0, True),
    ("add-int8", cases.int8_add, 0, True),
    ("add-int8-second-input", cases.int8_add, 1, True),
    ("mul-broadcast-float", lambda: cases.float_binary("MUL", broadcast=True), 0, True),
    ("sub-float", lambda: cases.float_binary("SUB"), 1, True),
    ("maximum-float", lambda: cases.float_binary("MAXIMUM"), 0, True),
    ("less-int8-to-bool", lambda: cases.int8_compare("LESS"), 0, True),
    ("relu-float", lambda: cases.float_unary("RELU"), 0, True),
    ("tanh-float", lambda: cases.float_unary("TANH"), 0, True),
    ("exp-float", lambda: cases.float_unary("EXP"), 0, True),
    ("logistic-int8", lambda: cases.int8_unary("LOGISTIC"), 0, True),
    ("quantize-int8", lambda: cases.int8_unary("QUANTIZE"), 0, True),
    ("dequantize-int8-to-float", lambda: cases.int8_unary("DEQUANTIZE", "FLOAT32"), 0, True),
    ("cast-int8-to-int32", lambda: cases.int8_unary("CAST", "INT32"), 0, True),
    ("softmax-int8", cases.int8_softmax, 0, True),
    ("softmax-float", cases.float_softmax, 0, True),
    ("log-softmax-float", lambda: cases.float_softmax("LOG_SOFTMAX"), 0, True),
    ("pad-float", cases.float_pad, 0, True),
    ("padv2-float", lambda: cases.float_pad("PADV2"), 0, True),
    ("transpose-float", cases.float_transpose, 0, True),
    # memcpy chunks and the strided-slice bound are safe, not tight: glibc copies forward.
    ("concatenation-channels", lambda: cases.float_concatenation(3), 0, False),
    ("concatenation-columns-second", lambda: cases.float_concatenation(2), 1, False),
    ("split", lambda: cases.float_split("SPLIT"), 1, True),
    ("split-v", lambda: cases.float_split("SPLIT_V"), 0, True),
    ("unpack", lambda: cases.float_split("UNPACK"), 0, True),
    ("pack", cases.float_pack, 0, True),
    ("strided-slice", cases.float_strided_slice, 0, False),
]


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("make", "slot", "tight"),
    [pytest.param(make, slot, tight, id=name) for name, make, slot, tight in RUNTIME_CASES],
)
def test_rule_is_bit_exact_on_real_tflm(make: Callable[[], bytes], slot: int, tight: bool) -> None:
    pytest.importorskip("tflite_micro")

    data = make()
    model = cases.load(data)
    placed = cases.place_overlap(data, input_slot=slot)
    subgraph = model.subgraphs[0]
    source = subgraph.tensors[subgraph.operators[0].inputs[slot]]
    target = subgraph.tensors[placed.pair.output_tensor]
    # The output really shares bytes with the input it reads.
    assert -source.nbytes < placed.distance < target.nbytes
    proof = prove_outputs(data, placed.data, model, invocations=2, seed=1)
    assert proof.identical, proof.detail
    if tight:
        element = source.dtype.element_bytes or 1
        closer = cases.place_overlap(data, input_slot=slot, short_by=element)
        broken = prove_outputs(data, closer.data, model, invocations=2, seed=1)
        assert not broken.identical, "one element closer still computes the same outputs"
