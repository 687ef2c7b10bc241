"""Golden cases: (name, CLI arguments) over built-in examples and synthetic models → stored outputs.

A refactor must not change any of these outputs; a feature that changes them on purpose regenerates
them (`python -m tests.golden.regenerate`) and the diff is reviewed in the commit.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arenalens.cli import main
from arenalens.examples import EXAMPLES
from tests import tflm_synthetic
from tests.fixtures.bank_models import BANK_MODELS

DATA = Path(__file__).resolve().parent / "data"
# Where synthetic models are written while a case runs; outputs name it as this placeholder.
MODEL_DIR_PLACEHOLDER = "<models>"

# Synthetic models that reach runtime rules the examples do not (scratch, variables, control
# flow, offline plans, custom ops).
SYNTHETIC: dict[str, Callable[[], bytes]] = {
    "add_n_int8": tflm_synthetic.add_n_int8,
    "mirror_pad": tflm_synthetic.mirror_pad,
    "mean_int8": tflm_synthetic.reduce("MEAN", "INT8"),
    "softmax_int16": tflm_synthetic.softmax_int16,
    "transpose_conv_int8": tflm_synthetic.transpose_conv_int8,
    "fully_connected_per_channel": tflm_synthetic.fully_connected_per_channel,
    "conv_int4": tflm_synthetic.conv_int4,
    "if_with_unreachable_subgraph": tflm_synthetic.if_with_unreachable_subgraph,
    "offline_planned_chain": tflm_synthetic.offline_planned_chain,
    "svdf_with_variable_state": tflm_synthetic.svdf_with_variable_state,
    "detection_postprocess": tflm_synthetic.detection_postprocess,
    "resource_variables_mixed": tflm_synthetic.resource_variables_mixed,
    "resource_variable_in_while_body": tflm_synthetic.resource_variable_in_while_body,
    **dict(BANK_MODELS),
}

# Commands whose output is compared, per model; {model} is replaced by the model argument.
COMMANDS: dict[str, tuple[str, ...]] = {
    "plan-tflm": ("plan", "{model}", "--json"),
    "plan-cortex-m7-cmsis-nn": (
        "plan",
        "{model}",
        "--cpu",
        "cortex-m7",
        "--kernels",
        "cmsis-nn",
        "--json",
    ),
    "plan-litert": ("plan", "{model}", "--runtime", "litert", "--json"),
    "plan-ascii": ("plan", "{model}", "--ascii"),
    "diagnose": ("diagnose", "{model}", "--json"),
    "report": ("report", "{model}", "--json"),
    "export-csv": ("export", "{model}", "--format", "csv"),
    "export-c-header": ("export", "{model}", "--format", "c-header"),
    "export-minimalloc": ("export", "{model}", "--format", "minimalloc", "--with-offsets"),
    "check-nucleo-h743zi": ("check", "{model}", "--target", "nucleo-h743zi"),
    "check-nucleo-h743zi-json": ("check", "{model}", "--target", "nucleo-h743zi", "--json"),
    "check-esp32-s3-n8r8": ("check", "{model}", "--target", "esp32-s3-devkitc-1-n8r8"),
}
# The synthetic models are small single-purpose graphs: the TFLM plan, diagnose and the C header
# cover what they are for.
SYNTHETIC_COMMANDS = ("plan-tflm", "diagnose", "export-c-header")
# The models sized for boards with several RAM banks: their placement, text and JSON.
BANK_COMMANDS = ("check-nucleo-h743zi", "check-nucleo-h743zi-json", "check-esp32-s3-n8r8")

# Keys whose values are wall-clock measurements, never stable between runs.
_TIMING_KEY = re.compile(r"(^|_)(seconds|time|elapsed)$|_seconds_|^timing")


@dataclass(frozen=True)
class GoldenCase:
    """One stored output: a command on a model."""

    name: str
    model: str  # example:NAME or a synthetic model's name
    command: str

    @property
    def path(self) -> Path:
        """Where its output is stored."""
        return DATA / f"{self.name}.txt"


def golden_cases() -> list[GoldenCase]:
    """Every golden case, in a stable order."""
    cases = [
        GoldenCase(f"{name}.{command}", f"example:{name}", command)
        for name in sorted(EXAMPLES)
        for command in COMMANDS
        if command not in BANK_COMMANDS
    ]
    banks = dict(BANK_MODELS)
    cases.extend(
        GoldenCase(f"{name}.{command}", name, command)
        for name in sorted(SYNTHETIC)
        for command in (BANK_COMMANDS if name in banks else SYNTHETIC_COMMANDS)
    )
    return cases


@contextlib.contextmanager
def _model_argument(model: str, folder: Path) -> Iterator[str]:
    if model.startswith("example:"):
        yield model
        return
    path = folder / f"{model}.tflite"
    if not path.exists():
        path.write_bytes(SYNTHETIC[model]())
    yield str(path)


def run_case(case: GoldenCase, folder: Path) -> str:
    """Run one case's command in-process → its normalised output (exit code, stdout, stderr)."""
    with _model_argument(case.model, folder) as argument:
        argv = [part.replace("{model}", argument) for part in COMMANDS[case.command]]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(argv)
    text = f"exit {code}\n--- stdout\n{stdout.getvalue()}--- stderr\n{stderr.getvalue()}"
    return normalise(text.replace(str(folder), MODEL_DIR_PLACEHOLDER))


def normalise(text: str) -> str:
    """Drop wall-clock values from JSON output so the rest can be compared byte for byte."""
    head, separator, rest = text.partition("--- stdout\n")
    body, separator2, tail = rest.partition("--- stderr\n")
    stripped = body.strip()
    if stripped.startswith(("{", "[")):
        with contextlib.suppress(ValueError):
            body = json.dumps(_without_timing(json.loads(stripped)), indent=2) + "\n"
    return head + separator + body + separator2 + tail


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: ("<time>" if _TIMING_KEY.search(str(key)) else _without_timing(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_timing(item) for item in value]
    return value
