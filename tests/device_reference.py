"""Device figures of real models: predicted vs measured on TFLM built for Cortex-M (QEMU) → per
target, which models are exact, over or under.

Two sets of measurements: the shared corpus (../shared/models/reference-cortex-m.json, measured
with the same probes) and the built-in examples (cached in tests/data/device_examples.json).

    python -m tests.device_reference                     # rewrite the pinned outcomes
    python -m tests.device_reference --measure-examples  # re-measure the examples first (~5 min)
    python -m tests.device_reference --measure-esp-examples  # the examples on the ESP probes

The ESP probes (../shared/tools/esp: esp-tflite-micro with ESP-NN on every chip path and esp-nn
release, and TFLM's reference kernels, on RV32) keep their examples in
tests/data/device_examples_esp.json; the corpus on them is ../shared/models/reference-esp.json.

The outcomes are pinned in tests/data/device_reference.json and
tests/runtimes/tflm/test_device_reference.py fails when one changes, so the set of exact models can
only grow on purpose: a kernel rule that makes a model exact updates the file in the same commit,
and a change that loses one is caught.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from arenalens.examples import EXAMPLES, example_bytes
from tests.conformance.predict import predict
from tests.conformance.targets import ESP_TARGET_NAMES, TARGETS
from tests.conftest import SHARED_MODELS

REFERENCE = SHARED_MODELS / "reference-cortex-m.json"
EXAMPLES_CACHE = Path(__file__).resolve().parent / "data" / "device_examples.json"
ESP_EXAMPLES_CACHE = Path(__file__).resolve().parent / "data" / "device_examples_esp.json"
EXPECTED = Path(__file__).resolve().parent / "data" / "device_reference.json"
EXAMPLE_PREFIX = "example:"
# The probe builds (tests/conformance/targets.py) the examples are measured on.
PROBE_TARGETS = (
    "cortex-m3-cmsis-nn",
    "cortex-m55-cmsis-nn",
    "cortex-m55-reference",
    "cortex-m7-cmsis-nn",
    "cortex-m7-reference",
)
# What is compared, as the reference file names it.
FIELDS = ("head", "tail", "min_arena", "tail_plain", "min_arena_plain")
EXACT = "exact"  # every field equal
REFUSED = "refused"  # both say TFLM cannot set the model up
OVER = "over"  # not exact, and the firmware arena (min_arena_plain) is not under-stated
UNDER = "under"  # the firmware arena is under-stated, or the model is wrongly refused
OUTCOMES = (EXACT, REFUSED, OVER, UNDER)


@cache
def corpus() -> dict[str, dict[str, Any]]:
    """reference-cortex-m.json's targets: {target: {model file: figures}} ({} when absent)."""
    if not REFERENCE.is_file():
        return {}
    targets: dict[str, dict[str, Any]] = json.loads(REFERENCE.read_text())["targets"]
    return targets


@cache
def examples() -> dict[str, dict[str, Any]]:
    """The built-in examples measured on the probes: {target: {'example:NAME': figures}}."""
    targets: dict[str, dict[str, Any]] = json.loads(EXAMPLES_CACHE.read_text())["targets"]
    return targets


def measured(target: str, model: str) -> dict[str, Any]:
    """The measurement of one model ('example:NAME' or a corpus file name) on one target."""
    source = examples() if model.startswith(EXAMPLE_PREFIX) else corpus()
    return source[target][model]


def model_bytes(model: str) -> bytes:
    """The model's bytes: a built-in example, or a corpus file."""
    if model.startswith(EXAMPLE_PREFIX):
        return example_bytes(model.removeprefix(EXAMPLE_PREFIX))
    return (SHARED_MODELS / model).read_bytes()


def measured_models() -> list[tuple[str, str]]:
    """Every (target, model) with a measurement: the examples always, the corpus when present."""
    pairs = {(target, model) for target, models in examples().items() for model in models}
    pairs |= {(target, model) for target, models in corpus().items() for model in models}
    return sorted(pairs)


def outcome(predicted: dict[str, Any], measured: dict[str, Any]) -> str:
    """One model on one target → exact, refused, over or under."""
    if not measured.get("loads"):
        return REFUSED if not predicted["loads"] else OVER
    if not predicted["loads"]:
        return UNDER
    if all(predicted.get(name) == measured[name] for name in FIELDS):
        return EXACT
    return UNDER if predicted["min_arena_plain"] < measured["min_arena_plain"] else OVER


@cache
def predicted(target: str, model: str) -> dict[str, Any]:
    """The prediction for one model on one target (cached per process)."""
    return predict(model_bytes(model), TARGETS[target])


def differences(target: str, model: str) -> dict[str, tuple[Any, Any]]:
    """Field → (predicted, measured) where they differ."""
    real = measured(target, model)
    mine = predicted(target, model)
    if not real.get("loads") or not mine["loads"]:
        return {"loads": (mine["loads"], real.get("loads"))}
    return {name: (mine.get(name), real[name]) for name in FIELDS if mine.get(name) != real[name]}


def outcomes(pairs: list[tuple[str, str]]) -> dict[str, dict[str, list[str]]]:
    """{target: {outcome: sorted models}} for the given (target, model) pairs."""
    found: dict[str, dict[str, list[str]]] = {}
    for target, model in pairs:
        lists = found.setdefault(target, {name: [] for name in OUTCOMES})
        lists[outcome(predicted(target, model), measured(target, model))].append(model)
    return found


def expected() -> dict[str, dict[str, list[str]]]:
    """The pinned outcomes."""
    pinned: dict[str, dict[str, list[str]]] = json.loads(EXPECTED.read_text())["targets"]
    return pinned


@cache
def esp_examples() -> dict[str, dict[str, Any]]:
    """The built-in examples measured on the ESP probes: {target: {'example:NAME': figures}}."""
    targets: dict[str, dict[str, Any]] = json.loads(ESP_EXAMPLES_CACHE.read_text())["targets"]
    return targets


def measure_examples(esp: bool = False) -> None:
    """Measure every built-in example on every (Cortex-M or ESP) probe build; rewrite that
    examples cache."""
    from tests.device_core import measure

    targets = ESP_TARGET_NAMES if esp else PROBE_TARGETS
    found: dict[str, dict[str, Any]] = {target: {} for target in targets}
    with tempfile.TemporaryDirectory() as folder:
        for name in sorted(EXAMPLES):
            path = Path(folder) / f"{name}.tflite"
            path.write_bytes(example_bytes(name))
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            for target in targets:
                figures = measure(path, target)
                found[target][EXAMPLE_PREFIX + name] = {"sha256": digest, **figures}
                print(f"{target} {name}: {figures['min_arena_plain']}", flush=True)
    if esp:
        about = (
            "The built-in examples on the ESP probes (../shared/tools/esp: esp-tflite-micro "
            "v1.3.8 with ESP-NN per chip path and esp-nn release, TFLM reference kernels on "
            "rv32-reference), head, tail, minimal arena with the recording allocator and the "
            "plain one. Remade by `python -m tests.device_reference --measure-esp-examples`."
        )
    else:
        about = (
            "The built-in examples on the Cortex-M probes (../shared/tools/cortex-m), as "
            "reference-cortex-m.json records the corpus. Remade by "
            "`python -m tests.device_reference --measure-examples`."
        )
    cache_file = ESP_EXAMPLES_CACHE if esp else EXAMPLES_CACHE
    cache_file.write_text(
        json.dumps({"about": about, "targets": found}, indent=1, sort_keys=True) + "\n"
    )
    examples.cache_clear()
    esp_examples.cache_clear()


def main(argv: list[str] | None = None) -> int:
    """Rewrite the pinned outcomes (after re-measuring the examples when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--measure-examples", action="store_true")
    parser.add_argument("--measure-esp-examples", action="store_true")
    args = parser.parse_args(argv)
    if args.measure_examples:
        measure_examples()
    if args.measure_esp_examples:
        measure_examples(esp=True)
        return 0
    if not corpus():
        print(f"no {REFERENCE}: the corpus outcomes cannot be pinned", file=sys.stderr)
        return 2
    found = outcomes(measured_models())
    document = {
        "about": "Outcome of every measured model per target (exact: head, tail, min_arena, "
        "tail_plain and min_arena_plain all equal; refused: both say TFLM cannot set it up; "
        "over: the firmware arena is not under-stated; under: it is). Rewritten by "
        "`python -m tests.device_reference`.",
        "targets": found,
    }
    EXPECTED.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    for target, lists in found.items():
        loads = sum(len(models) for name, models in lists.items() if name != REFUSED)
        print(
            f"{target}: {len(lists[EXACT])} of {loads} exact, {len(lists[OVER])} over, "
            f"{len(lists[UNDER])} under"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
