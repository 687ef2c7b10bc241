"""Refusal messages: every kernel rule words a failed TF_LITE_ENSURE as TFLM prints it, file path
first (the line left out), checked against what the Cortex-M builds printed."""

from __future__ import annotations

import re

import pytest

from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true, source_path
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.reader import parse_model
from tests.conformance.cases import all_cases
from tests.conformance.measure import load
from tests.conformance.targets import TARGETS

TARGET = "cortex-m7-reference"
# Refusals measured on the device whose message shows the file and line whole, one per way the
# rules word them: layout and control flow (they had a helper of their own), cumsum, batch_matmul
# (also had its own), an ENSURE_EQ with values.
MEASURED = (
    "DEPTH_TO_SPACE.FLOAT32.refused_block0",
    "CALL_ONCE.FLOAT32.refused_input",
    "IF.INT32.refused_condition_type",
    "CUMSUM.FLOAT32.int64_axis_refused",
    "BATCH_MATMUL.FLOAT32.rank1_refused",
    "CEIL.FLOAT32.other_shape",
    "MUL.INT16.zero_point",
)


def test_a_kernel_file_is_printed_from_the_sources_root() -> None:
    assert source_path("add.cc") == "tensorflow/lite/micro/kernels/add.cc"
    assert source_path("cmsis_nn/conv.cc") == "tensorflow/lite/micro/kernels/cmsis_nn/conv.cc"
    assert source_path("signal/micro/kernels/rfft.cc") == "signal/micro/kernels/rfft.cc"
    kernel_util = "tensorflow/lite/kernels/kernel_util.cc"
    assert source_path(kernel_util) == kernel_util


def test_ensure_and_ensure_eq_read_as_tflm_prints_them() -> None:
    assert not_true("if.cc", "cond != nullptr").reason == (
        "tensorflow/lite/micro/kernels/if.cc cond != nullptr was not true."
    )
    assert not_equal("if.cc", "cond->type", "kTfLiteBool", 2, 6).reason == (
        "tensorflow/lite/micro/kernels/if.cc cond->type != kTfLiteBool (2 != 6)"
    )
    assert not_equal("a.cc", "x", "y", 1, 2, phase="invoke").phase == "invoke"


@pytest.mark.parametrize("case_id", MEASURED)
def test_refusal_matches_what_the_device_printed(case_id: str) -> None:
    measured = load(TARGET)["cases"][case_id]
    assert not measured["loads"]
    # The probe keeps the log's tail: "...<file>.cc:<line> <message> | Node ... failed to prepare".
    printed = measured["error"].split(" | Node")[0]
    assert re.search(r"\.cc:\d+ ", printed), printed
    without_line = re.sub(r"(\.cc):\d+ ", r"\1 ", printed)
    case = next(case for case in all_cases() if case.id == case_id)
    found = support(parse_model(case.model(), "case"), TARGETS[TARGET].predicted)
    reason = found.obstacles[0].reason
    assert reason.endswith(without_line), (reason, printed)
