"""Which conformance cases each ESP probe build measures, and why the others are not needed.

esp-tflite-micro v1.3.8 builds TFLM with `-DESP_NN` and replaces exactly seven kernel sources by
its own (`CMakeLists.txt`: `list(REMOVE_ITEM srcs_kernels add.cc conv.cc depthwise_conv.cc
fully_connected.cc mul.cc pooling.cc softmax.cc)` and the files of
`tensorflow/lite/micro/kernels/esp_nn/`); `ESP_NN` appears nowhere else in its sources. The
esp-nn library those kernels call is the only thing the ESP builds differ in (its chip path and
release decide the scratch sizes); `rv32-reference` compiles TFLM's reference files for the same
seven instead. Every other kernel, the allocator and the interpreter are the same source built
for the same ABI on every ESP probe, so a case of any other operator measures the same on all of
them: `esp32s3-esp-nn` measures every case, each other ESP build the cases of the ESP-NN
operators and a sample of the rest (`SAMPLE_EVERY`), and
`test_esp_variants.py` checks that the sample measured the same everywhere.

    python -m tests.conformance.measure --target esp32s3-esp-nn                 # every case
    python -m tests.conformance.measure --target esp-generic-opt --variant-cases  # its selection
"""

from __future__ import annotations

from tests.conformance.cases import Case, all_cases
from tests.conformance.targets import ESP_TARGET_NAMES

# The build that measures every case.
FULL = "esp32s3-esp-nn"
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
# One operator in this many of the others (by name) is sampled on every ESP build (its first case).
SAMPLE_EVERY = 5


def sample_operators() -> tuple[str, ...]:
    """The operators outside ESP-NN whose first case every ESP build measures."""
    others = sorted({case.opcode for case in all_cases()} - ESP_NN_OPERATORS)
    return tuple(others[::SAMPLE_EVERY])


def sample_cases() -> list[Case]:
    """The first case of every sampled operator."""
    chosen: dict[str, Case] = {}
    sampled = set(sample_operators())
    for case in all_cases():
        if case.opcode in sampled:
            chosen.setdefault(case.opcode, case)
    return list(chosen.values())


def variant_cases(target: str) -> list[Case]:
    """The cases an ESP probe build measures: every case on FULL; elsewhere the ESP-NN
    operators' cases and the sample."""
    if target not in ESP_TARGET_NAMES:
        raise ValueError(f"{target} is not an ESP probe build")
    if target == FULL:
        return list(all_cases())
    sampled = {case.id for case in sample_cases()}
    return [case for case in all_cases() if case.opcode in ESP_NN_OPERATORS or case.id in sampled]
