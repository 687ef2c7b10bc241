"""Which conformance cases each ESP probe build measures, and why the others are not needed.

esp-tflite-micro v1.3.8 builds TFLM with `-DESP_NN` and replaces exactly seven kernel sources by
its own (`CMakeLists.txt`: `list(REMOVE_ITEM srcs_kernels add.cc conv.cc depthwise_conv.cc
fully_connected.cc mul.cc pooling.cc softmax.cc)` and the files of
`tensorflow/lite/micro/kernels/esp_nn/`); `ESP_NN` appears nowhere else in its sources. What the
seven do at setup (docs/esp-nn.md):

* ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, FULLY_CONNECTED: Init and Prepare are TFLM's reference
  ones (only Eval calls esp-nn), so they set up alike on every ESP build, rv32-reference (TFLM's
  reference files) included;
* CONV_2D, DEPTHWISE_CONV_2D, SOFTMAX: their own OpData and checks, and for int8 (int8 → int8 for
  SOFTMAX) one scratch buffer sized by esp-nn, whose size function is the only thing the ESP-NN
  builds (chip path, esp-nn release) differ in.

So on every build but the full one, a case is measured when its setup can differ from the full
build's by construction: CONV_2D, DEPTHWISE_CONV_2D and SOFTMAX with an int8 input on every
build, and with any input on rv32-reference (reference kernels there). Every other case sets up
the same on all of them; `SAMPLE_EVERY` samples that claim on every build, and
`test_esp_variants.py` checks the sample measured the same everywhere. The sample is chosen by a
hash of each case's id, so a case added to any family leaves every other case's membership (and
the caches) as they are.

    python -m tests.conformance.measure --target esp32s3-esp-nn --stale                 # all
    python -m tests.conformance.measure --target esp-generic-opt --variant-cases --stale  # share
"""

from __future__ import annotations

import hashlib

from tests.conformance.cases import Case, all_cases
from tests.conformance.targets import ESP_FULL, ESP_TARGET_NAMES

# The build that measures every case (the others measure the plain allocator only).
FULL = ESP_FULL
# The build with TFLM's reference kernels in place of the seven ESP-NN ones.
REFERENCE = "rv32-reference"
# The operators whose kernels esp-tflite-micro replaces (pooling.cc registers both pools).
ESP_NN_OPERATORS = frozenset(
    {
        "ADD",
        "AVERAGE_POOL_2D",
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "FULLY_CONNECTED",
        "MAX_POOL_2D",
        "MUL",
        "SOFTMAX",
    }
)
# Those of them with their own Init/Prepare, and an esp-nn scratch buffer for int8 inputs.
OWN_SETUP = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "SOFTMAX"})
# About one case in this many of the rest is sampled on every build.
SAMPLE_EVERY = 24


def differs_by_construction(case: Case, target: str) -> bool:
    """Whether the case's setup on this build can differ from the full build's."""
    if target == FULL or case.opcode not in OWN_SETUP:
        return target == FULL
    return target == REFERENCE or case.dtype == "INT8"


def sampled(case: Case) -> bool:
    """Whether the case is in the sample: a property of its id alone (not of its position among
    the cases, which every new case would shift), about one in SAMPLE_EVERY."""
    digest = hashlib.sha256(case.id.encode()).digest()
    return int.from_bytes(digest[:4], "big") % SAMPLE_EVERY == 0


def sample_cases(target: str) -> list[Case]:
    """The sampled cases among those this build does not otherwise measure: each family,
    operator outside ESP-NN, ESP-NN operator without its own setup and non-int8 ESP-NN
    convolution gets some."""
    return [
        case for case in all_cases() if not differs_by_construction(case, target) and sampled(case)
    ]


def variant_cases(target: str) -> list[Case]:
    """The cases an ESP probe build measures: every case on FULL; elsewhere those whose setup
    can differ by construction, and the sample of the rest."""
    if target not in ESP_TARGET_NAMES:
        raise ValueError(f"{target} is not an ESP probe build")
    sampled = {case.id for case in sample_cases(target)} if target != FULL else set()
    return [
        case for case in all_cases() if differs_by_construction(case, target) or case.id in sampled
    ]
