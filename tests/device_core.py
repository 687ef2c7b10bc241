"""Models that exercise what TFLM allocates outside kernels on 32-bit builds, and their figures
measured on the Cortex-M probes (cached in tests/data/device_core.json).

Each model uses kernels whose bytes do not depend on the build (RELU, ADD_N, IF: no options struct
that changes size, one int-only OpData) and varies one thing the runtime itself allocates: the
allocator objects (recording vs plain), eval tensors and node structs (operator count), the
TfLiteTensor copies of inputs and outputs and their quantization (count, int8, per-channel),
scratch-request records and handles (ADD_N), a variable buffer, several subgraphs.

    python -m tests.device_core        # re-measure every model on the probes (about 3 minutes)
    python -m tests.device_core --esp  # the same on the ESP probe (data/device_core_esp.json)

On the ESP probes (esp-tflite-micro, RV32 ILP32 with int-sized enums, ../shared/tools/esp) one
build is enough: these kernels are not ESP-NN's, so every ESP build compiles the same source.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, quantization
from tests import tflm_synthetic
from tests.conformance.targets import PROBES
from tests.conformance.targets import TARGETS as PROBE_BUILDS

CACHE = Path(__file__).resolve().parent / "data" / "device_core.json"
# A reference build, a CMSIS-NN build without DSP, and one with MVE: the core must not depend on
# the kernel library or the instruction set.
TARGETS = ("cortex-m7-reference", "cortex-m3-cmsis-nn", "cortex-m55-cmsis-nn")
ESP_CACHE = Path(__file__).resolve().parent / "data" / "device_core_esp.json"
ESP_TARGETS = ("esp32s3-esp-nn",)
FIELDS = ("head", "tail", "min_arena", "tail_plain", "min_arena_plain")
INT8 = quantization(0.05, -3)


def relu_chain(count: int, dtype: str = "FLOAT32", *, width: int = 16) -> Callable[[], bytes]:
    """count RELUs in a row: one more eval tensor and node struct each."""

    def build() -> bytes:
        q = INT8 if dtype == "INT8" else None
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        tensor = first = graph.add_tensor("x0", [1, width], dtype, quantization=q)
        for index in range(count):
            result = graph.add_tensor(f"x{index + 1}", [1, width], dtype, quantization=q)
            graph.add_operator("RELU", [tensor], [result])
            tensor = result
        graph.set_inputs([first])
        graph.set_outputs([tensor])
        return builder.build()

    return build


def many_inputs_and_outputs(inputs: int, outputs: int, dtype: str) -> Callable[[], bytes]:
    """ADD_N over `inputs` graph inputs (one scratch request), then `outputs` RELUs of its sum,
    each a graph output: the input and output TfLiteTensor copies and pointer arrays."""

    def build() -> bytes:
        q = INT8 if dtype == "INT8" else None
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        sources = [
            graph.add_tensor(f"in{i}", [1, 4, 8], dtype, quantization=q) for i in range(inputs)
        ]
        total = graph.add_tensor("sum", [1, 4, 8], dtype, quantization=q)
        graph.add_operator("ADD_N", sources, [total])
        results = []
        for index in range(outputs):
            result = graph.add_tensor(f"out{index}", [1, 4, 8], dtype, quantization=q)
            graph.add_operator("RELU", [total], [result])
            results.append(result)
        graph.set_inputs(sources)
        graph.set_outputs(results)
        return builder.build()

    return build


def per_channel_io(channels: int) -> bytes:
    """RELU whose int8 input and output carry `channels` scales: the persistent zero-point arrays
    of the I/O tensor copies grow by 4 bytes per channel."""
    spec: QuantizationSpec = quantization([0.05] * channels, 0, axis=1)
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, channels], "INT8", quantization=spec)
    result = graph.add_tensor("y", [1, channels], "INT8", quantization=spec)
    graph.add_operator("RELU", [source], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


def with_variable() -> bytes:
    """ADD_N of an input and a variable tensor: the variable's buffer goes to the tail."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 20])
    state = graph.add_tensor("state", [1, 20], is_variable=True)
    result = graph.add_tensor("y", [1, 20])
    graph.add_operator("ADD_N", [source, state], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


MODELS: dict[str, Callable[[], bytes]] = {
    "relu1_f32": relu_chain(1),
    "relu3_f32": relu_chain(3),
    "relu8_i8": relu_chain(8, "INT8"),
    "relu1_f32_wide": relu_chain(1, width=200),
    "io_3x2_f32": many_inputs_and_outputs(3, 2, "FLOAT32"),
    "io_2x3_i8": many_inputs_and_outputs(2, 3, "INT8"),
    "per_channel_io_9": lambda: per_channel_io(9),
    "variable": with_variable,
    "if_three_subgraphs": tflm_synthetic.if_with_unreachable_subgraph,
}


def measure(path: Path, target: str, runner: Sequence[str] = ()) -> dict[str, Any]:
    """The probe's figures as reference-cortex-m.json records them: head, tail and minimal arena
    with the recording allocator (and its categories), tail and minimal arena with the plain
    one. One `run.py --min-arena` bisection per allocator. `runner`: the command that runs
    run.py (default: the target's run.py in its probes' folder)."""
    if not runner:
        runner = (sys.executable, str((PROBE_BUILDS[target].probes or PROBES) / "run.py"))
    command = [*runner, str(path), "--target", target]
    runs: dict[str, dict[str, Any]] = {}
    for allocator in ("recording", "plain"):
        completed = subprocess.run(
            [*command, "--min-arena", "--allocator", allocator, "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        try:
            found: dict[str, Any] = json.loads(completed.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"{shlex.join(runner)}: {completed.stderr.strip()[-300:]}") from None
        if found.get("status") != "ok":
            raise RuntimeError(f"{path.name} on {target}: {found.get('detail', found)}")
        runs[allocator] = found
    recording, plain = runs["recording"], runs["plain"]
    return {
        "loads": True,
        "head": recording["head"],
        "tail": recording["tail"],
        "min_arena": recording["min_arena"],
        "tail_plain": plain["tail"],
        "min_arena_plain": plain["min_arena"],
        "categories": {
            name: {key: value[key] for key in ("used", "requested", "count")}
            for name, value in sorted(recording["categories"].items())
        },
    }


def cached(esp: bool = False) -> dict[str, dict[str, Any]]:
    """{target: {model: figures}} as measured on the Cortex-M probes (or the ESP one)."""
    targets: dict[str, dict[str, Any]] = json.loads((ESP_CACHE if esp else CACHE).read_text())[
        "targets"
    ]
    return targets


def main(argv: list[str] | None = None) -> int:
    """Measure every model on every target (or, with --esp, the ESP target) and rewrite the
    cache."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--esp", action="store_true", help="measure on the ESP probe instead")
    args = parser.parse_args(argv)
    targets, cache = (ESP_TARGETS, ESP_CACHE) if args.esp else (TARGETS, CACHE)
    tools = (
        "ESP probe (../shared/tools/esp)"
        if args.esp
        else "Cortex-M probes (../shared/tools/cortex-m)"
    )
    remake = "python -m tests.device_core" + (" --esp" if args.esp else "")
    found: dict[str, dict[str, Any]] = {target: {} for target in targets}
    with tempfile.TemporaryDirectory() as folder:
        for name, build in MODELS.items():
            path = Path(folder) / f"{name}.tflite"
            path.write_bytes(build())
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            for target in targets:
                found[target][name] = {"sha256": digest, **measure(path, target)}
                print(f"{target} {name}: {found[target][name]['min_arena_plain']}")
    document = {
        "about": f"Figures of tests/device_core.py's models on the {tools}. Remade by `{remake}`.",
        "targets": found,
    }
    cache.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
