"""Issue 27's models, remade with the examples' layer builder: MobileNetV2 (width 0.35) at
96x96 and 160x160, the models a user brings to a NUCLEO-F429ZI or an ESP32-S3, and
MobileNetV3-small at 224x224 for an STM32F746, which fit at full size only after a rewrite
(`--overlap`, `--split`); with `example:mobilenet_v1_224` on an STM32F746, issue 27's cases.
Beside them, one case for each other rung that fits first (offline plan, reorder + in-place,
overlap), so the path check → optimize as printed → check is proven on every rung.

    python -m tests.ladder_cases [CASE ...]           # re-run the cases (all) as a user would
    python -m tests.ladder_cases --device [CASE ...]  # the issue's written models under QEMU

The climb through the remedy ladder takes 5-40 s of CPU a case (the split search), so what the
commands answered is cached in tests/data/ladder_cases.json with each model's sha256 and its
figures as given (which tests/test_ladder_cases.py recomputes, so a cache older than the code
fails): `check --target BOARD` (the ladder, the steps), the first step's `optimize` run as
printed (the real wheel's proof of identical outputs), `check` of the model it wrote on the
same board, and the case's own view (`--max-input`, `--target all`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arenalens.examples.layers import Activation, Int8Network

CACHE = Path(__file__).resolve().parent / "data" / "ladder_cases.json"
# The models the first step writes for the four cases, set up by the real runtime under
# QEMU: TFLM 90b983c with CMSIS-NN for the Cortex-M7 (../shared/tools/cortex-m) and the
# Cortex-M4 (built with its kit: LOCAL_PROBES), esp-tflite-micro v1.3.8 with ESP-NN for the
# ESP32-S3 (../shared/tools/esp): `python -m tests.ladder_cases --device [CASE ...]`.
DEVICE_CACHE = Path(__file__).resolve().parent / "data" / "ladder_cases_device.json"
DEVICE_TARGETS = {
    "mobilenet_v1_224": "cortex-m7-cmsis-nn",
    "mobilenet_v3_small_224": "cortex-m7-cmsis-nn",
    # The NUCLEO-F429ZI's own core: TFLM 90b983c with CMSIS-NN for the Cortex-M4 (DSP extension,
    # FPv4-SP), a probe built here (LOCAL_PROBES).
    "mobilenet_v2_035_96": "cortex-m4-cmsis-nn",
    "mobilenet_v2_035_160": "esp32s3-esp-nn",
}
DEVICE_CASES = tuple(DEVICE_TARGETS)
# Probes that ../shared/tools/cortex-m does not carry, built with its kit from this folder (the
# sources and builds go to .cortexm/, which git ignores): `probe.elf` (run through the shared
# run.py with the target added: its QEMU machine, and the 16 MiB of big RAM the kit's linker
# script gives it) and `probe_outputs.elf` (run_outputs.py --elf): the written model must
# compute the original's outputs at the figure, on the seeds OUTPUT_SEEDS.
LOCAL_PROBES = Path(
    os.environ.get(
        "ARENALENS_CORTEX_M_LOCAL_PROBES",
        Path(__file__).resolve().parents[1] / ".cortexm" / "build",
    )
)
LOCAL_TARGETS = {"cortex-m4-cmsis-nn": "mps2-an386"}
LOCAL_REMAKE = (
    "MIRROR=<bare git mirrors> bash ../shared/tools/cortex-m/build/build.sh {target} && "
    "bash ../shared/tools/cortex-m/build/build_outputs.sh {target}"
)
OUTPUT_SEEDS = "1-3"

# MobileNetV2's inverted residual blocks: (expansion, channels, repeats, first stride).
MOBILENET_V2_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _width(channels: float) -> int:
    """Channels at a width multiplier, rounded to a multiple of 8 as Keras' MobileNetV2 does."""
    rounded = max(8, int(channels + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * channels else rounded


def mobilenet_v2(side: int, width: float = 0.35, classes: int = 10) -> bytes:
    """MobileNetV2 at `width` on a side x side x 3 int8 image → `classes` scores."""
    net = Int8Network(seed=side, description=f"MobileNetV2-{width} {side}x{side} int8")
    image = net.input("input", (1, side, side, 3), (0.0, 1.0))
    x = net.conv2d(image, "conv_0", channels=_width(32 * width), stride=2)
    for number, (expansion, channels, repeats, first_stride) in enumerate(MOBILENET_V2_BLOCKS):
        for repeat in range(repeats):
            stride = first_stride if repeat == 0 else 1
            name = f"block_{number}_{repeat}"
            inner = x
            if expansion != 1:
                inner = net.conv2d(
                    x, f"{name}/expand", channels=x.shape[3] * expansion, kernel=(1, 1)
                )
            inner = net.depthwise_conv2d(inner, f"{name}/depthwise", stride=stride)
            out = net.conv2d(
                inner,
                f"{name}/project",
                channels=_width(channels * width),
                kernel=(1, 1),
                activation="NONE",
                output_range=(-4.0, 4.0),
            )
            if stride == 1 and out.shape == x.shape:
                out = net.add(x, out, f"{name}/add", activation="NONE", output_range=(-6.0, 6.0))
            x = out
    x = net.conv2d(x, "conv_last", channels=1280, kernel=(1, 1))
    pooled = net.global_average(x, "global_average")
    flat = net.reshape(pooled, "flatten", (1, x.shape[3]))
    logits = net.fully_connected(flat, "logits", units=classes)
    return net.build([image], [net.softmax(logits, "softmax")])


# MobileNetV3-small's bottlenecks as Keras' MobileNetV3Small stacks them: (kernel, expanded
# channels, output channels, squeeze-and-excite, activation, stride).
MOBILENET_V3_SMALL_BLOCKS = (
    (3, 16, 16, True, "RELU", 2),
    (3, 72, 24, False, "RELU", 2),
    (3, 88, 24, False, "RELU", 1),
    (5, 96, 40, True, "HARD_SWISH", 2),
    (5, 240, 40, True, "HARD_SWISH", 1),
    (5, 240, 40, True, "HARD_SWISH", 1),
    (5, 120, 48, True, "HARD_SWISH", 1),
    (5, 144, 48, True, "HARD_SWISH", 1),
    (5, 288, 96, True, "HARD_SWISH", 2),
    (5, 576, 96, True, "HARD_SWISH", 1),
    (5, 576, 96, True, "HARD_SWISH", 1),
)


def mobilenet_v3_small(
    side: int = 224, classes: int = 10, *, squeeze_pool: str = "mean", squeeze_dense: str = "conv"
) -> bytes:
    """MobileNetV3-small (width 1.0, Keras' layout) on a side x side x 3 int8 image → `classes`
    scores, written as the converter writes it (`layers.py`): hard-swish as HARD_SWISH,
    squeeze-and-excite as MEAN (or AVERAGE_POOL_2D), 1x1 CONV_2D (or FULLY_CONNECTED), hard
    sigmoid and a broadcast MUL, PAD before each stride-2 depthwise convolution."""
    net = Int8Network(seed=300 + side, description=f"MobileNetV3-small {side}x{side} int8")
    image = net.input("input", (1, side, side, 3), (-1.0, 1.0))
    stem = net.conv2d(image, "stem", channels=16, stride=2, activation="NONE")
    x = net.hard_swish(stem, "stem/hard_swish")
    for number, (kernel, expanded, channels, excite, activation, stride) in enumerate(
        MOBILENET_V3_SMALL_BLOCKS
    ):
        x = _v3_block(
            net,
            x,
            f"block_{number}",
            kernel=kernel,
            expanded=expanded,
            channels=channels,
            excite=(squeeze_pool, squeeze_dense) if excite else None,
            activation=activation,
            stride=stride,
        )
    last = net.hard_swish(
        net.conv2d(x, "last_conv", channels=576, kernel=(1, 1), activation="NONE"),
        "last_conv/hard_swish",
    )
    pooled = net.global_average(last, "global_average")
    head = net.hard_swish(
        net.conv2d(pooled, "head", channels=1024, kernel=(1, 1), activation="NONE"),
        "head/hard_swish",
    )
    logits = net.conv2d(head, "logits", channels=classes, kernel=(1, 1), activation="NONE")
    flat = net.reshape(logits, "flatten", (1, classes))
    return net.build([image], [net.softmax(flat, "softmax")])


def _v3_block(
    net: Int8Network,
    x: Activation,
    name: str,
    *,
    kernel: int,
    expanded: int,
    channels: int,
    excite: tuple[str, str] | None,
    activation: str,
    stride: int,
) -> Activation:
    """One MobileNetV3 bottleneck: expand (1x1) → depthwise (k x k) → squeeze-and-excite →
    project (1x1), with a residual ADD when shapes allow."""

    def activate(tensor: Activation, where: str) -> Activation:
        if activation == "HARD_SWISH":
            return net.hard_swish(tensor, f"{where}/hard_swish")
        return tensor

    fused = "RELU" if activation == "RELU" else "NONE"
    inner = x
    if expanded != x.shape[3]:
        inner = activate(
            net.conv2d(x, f"{name}/expand", channels=expanded, kernel=(1, 1), activation=fused),
            f"{name}/expand",
        )
    padding = "SAME"
    if stride == 2:
        # Keras' correct_pad: (k//2 - 1, k//2) on an even side, k//2 on both on an odd one.
        rows = (kernel // 2 - 1 + inner.shape[1] % 2, kernel // 2)
        cols = (kernel // 2 - 1 + inner.shape[2] % 2, kernel // 2)
        inner = net.pad(inner, f"{name}/pad", rows=rows, cols=cols)
        padding = "VALID"
    inner = activate(
        net.depthwise_conv2d(
            inner,
            f"{name}/depthwise",
            kernel=(kernel, kernel),
            stride=stride,
            padding=padding,
            activation=fused,
        ),
        f"{name}/depthwise",
    )
    if excite is not None:
        pool, dense = excite
        inner = net.squeeze_excite(
            inner,
            f"{name}/squeeze_excite",
            squeeze=_width(expanded / 4),
            pool=pool,
            dense=dense,
        )
    out = net.conv2d(
        inner,
        f"{name}/project",
        channels=channels,
        kernel=(1, 1),
        activation="NONE",
        output_range=(-4.0, 4.0),
    )
    if stride == 1 and out.shape == x.shape:
        out = net.add(x, out, f"{name}/add", activation="NONE", output_range=(-6.0, 6.0))
    return out


@dataclass(frozen=True)
class Case:
    """A model, the check a user ran on it, the rung of the ladder expected to fit first, and the
    view the user had of it."""

    name: str  # the model's name; with a suffix after '@' for another check of the same model
    options: tuple[str, ...]  # `check MODEL OPTIONS`
    first_fit: str  # the remedy of the first rung that fits
    make: Callable[[], bytes] | None = None  # None: the example of that name
    view: tuple[str, ...] = ()  # the check the issue quoted: ("--max-input",), ("--target", "all")

    @property
    def model(self) -> str:
        """The model's name (the case's without its suffix)."""
        return self.name.partition("@")[0]

    @property
    def argument(self) -> str:
        """The model as the commands name it (a file in the working folder, or the example)."""
        return f"example:{self.model}" if self.make is None else f"{self.model}.tflite"

    @property
    def board(self) -> str | None:
        """The --target the check names (None: a budget)."""
        options = list(self.options)
        return options[options.index("--target") + 1] if "--target" in options else None

    def data(self) -> bytes:
        """The model's bytes."""
        if self.make is None:
            from arenalens.examples import example_bytes

            return example_bytes(self.model)
        return self.make()


CASES = (
    # The issue's: each fits its board at full size only split (and with overlaps).
    Case("mobilenet_v1_224", ("--target", "stm32f746"), "split"),
    Case("mobilenet_v3_small_224", ("--target", "stm32f746"), "split", mobilenet_v3_small),
    Case(
        "mobilenet_v2_035_96",
        ("--target", "nucleo-f429zi"),
        "split",
        lambda: mobilenet_v2(96),
        ("--target", "all"),
    ),
    Case(
        "mobilenet_v2_035_160",
        ("--target", "esp32-s3-devkitc-1"),
        "split",
        lambda: mobilenet_v2(160),
        ("--max-input",),
    ),
    # The other rungs, each first to fit on a board or budget: the NUCLEO-F429ZI case
    # without the firmware's reserve (where --overlap alone fits, as the issue saw), a branchy
    # model that another operator order fits, a ResNet that overlaps fit.
    Case(
        "mobilenet_v2_035_96@no-reserve",
        ("--target", "nucleo-f429zi", "--reserve", "0"),
        "overlap",
        lambda: mobilenet_v2(96),
    ),
    Case("vww_mobilenet_v1", ("--target", "nucleo-f401re"), "offline plan"),
    Case("branchy_inception", ("--budget", "32KB", "--cpu", "cortex-m7"), "reorder + in-place"),
    Case("resnet8_cifar", ("--budget", "48KB", "--cpu", "cortex-m4"), "overlap"),
)


def run_json(*argv: str) -> tuple[int, dict[str, Any]]:
    """`arenalens ARGV --json` in this process: its exit code and document."""
    from arenalens.cli import main as cli_main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main([*argv, "--json"])
    document: dict[str, Any] = json.loads(out.getvalue())
    return code, document


def _check_record(document: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "verdict", "fits", "fits_after_optimize", "required_bytes", "available_bytes",
        "best_case_bytes", "optimized_required_bytes", "remedies", "after_optimize",
        "headroom_bytes", "placement",
    )  # fmt: skip
    record = {key: document[key] for key in keys}
    record["steps"] = [step["text"] for step in document["next_steps"]]
    record["commands"] = [step["command"] for step in document["next_steps"]]
    return record


def measure(case: Case) -> dict[str, Any]:
    """Run the case as a user would, in a fresh folder: check, the first step as printed, check
    of what it wrote, and the case's own view."""
    data = case.data()
    record: dict[str, Any] = {
        "options": list(case.options),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            if case.make is not None:
                Path(case.argument).write_bytes(data)
            _, checked = run_json("check", case.argument, *case.options)
            record["check"] = _check_record(checked)
            words = shlex.split(checked["next_steps"][0]["command"])
            code, optimized = run_json(*words[1:])
            record["optimize"] = {
                "command": shlex.join(words),
                "exit_code": code,
                "written": optimized["written"],
                "new_required_bytes": optimized["new_required_bytes"],
                "outputs_identical": (optimized.get("real_tflm") or {}).get("outputs_identical"),
            }
            then = shlex.split(checked["next_steps"][1]["command"])
            _, rechecked = run_json(*then[1:])
            record["written_check"] = {"command": shlex.join(then), **_check_record(rechecked)}
            if case.view == ("--max-input",):
                _, searched = run_json("check", case.argument, *case.options, *case.view)
                record["max_input"] = {
                    key: searched[key]
                    for key in (
                        "input_shape",
                        "max_input_shape",
                        "max_input_after_optimize_shape",
                        "max_input_after_optimize_required_bytes",
                    )
                } | {"commands": [step["command"] for step in searched["next_steps"]]}
            if case.view == ("--target", "all"):
                _, boards = run_json("check", case.argument, *case.view)
                row = next(row for row in boards["boards"] if row["board"] == case.board)
                record["target_all"] = row
        finally:
            os.chdir(here)
    return record


def measure_device(case: Case) -> dict[str, Any]:
    """The case's first step run as printed, and the model it writes measured on its probe."""
    from tests.device_core import measure as measure_on_probe

    command = json.loads(CACHE.read_text())["cases"][case.name]["optimize"]["command"]
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            if case.make is not None:
                Path(case.argument).write_bytes(case.data())
            _, optimized = run_json(*shlex.split(command)[1:])
            written = Path("optimized.tflite")
            target = DEVICE_TARGETS[case.name]
            local = target in LOCAL_TARGETS
            figures = measure_on_probe(written, target, _local_runner(target) if local else ())
            digest = hashlib.sha256(written.read_bytes()).hexdigest()
            outputs = (
                _same_outputs(Path(case.argument), written, target, figures["min_arena_plain"])
                if local
                else {}
            )
        finally:
            os.chdir(here)
    record = {
        "command": command,
        "target": target,
        "new_required_bytes": optimized["new_required_bytes"],
        "sha256": digest,
        **{key: figures[key] for key in ("loads", "head", "tail", "min_arena", "min_arena_plain")},
        **outputs,
    }
    if local:
        elfs = [LOCAL_PROBES / target / name for name in ("probe.elf", "probe_outputs.elf")]
        record["probe"] = {
            "elf_sha256": hashlib.sha256(elfs[0].read_bytes()).hexdigest(),
            "outputs_elf_sha256": hashlib.sha256(elfs[1].read_bytes()).hexdigest(),
            "qemu_machine": LOCAL_TARGETS[target],
            "remake": LOCAL_REMAKE.format(target=target),
        }
    return record


def _local_runner(target: str) -> tuple[str, ...]:
    """The command that runs the shared run.py on a probe built here (LOCAL_PROBES)."""
    from tests.conformance.targets import PROBES

    elf = LOCAL_PROBES / target / "probe.elf"
    if not elf.is_file():
        raise RuntimeError(f"no {target} probe at {elf}: {LOCAL_REMAKE.format(target=target)}")
    entry = (LOCAL_TARGETS[target], str(elf), 16 << 20)
    code = (
        f"import sys; sys.path.insert(0, {str(PROBES)!r}); import run; "
        f"run.TARGETS[{target!r}] = {entry!r}; sys.exit(run.main())"
    )
    return (sys.executable, "-c", code)


def _same_outputs(original: Path, written: Path, target: str, arena: int) -> dict[str, Any]:
    """Both models invoked on the output probe built here, on the same seeded inputs: the
    original at a roomy arena, the written one at exactly `arena` bytes. Each seed's output
    hashes (FNV-1a 64) must be equal."""
    import subprocess

    from tests.conformance.targets import PROBES

    elf = LOCAL_PROBES / target / "probe_outputs.elf"
    hashes = []
    for path, size in ((original, ()), (written, ("--arena", str(arena)))):
        done = subprocess.run(
            [
                sys.executable, str(PROBES / "run_outputs.py"), str(path), "--target", target,
                "--elf", str(elf), *size, "--seeds", OUTPUT_SEEDS, "--no-trace", "--brief",
            ],
            capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        found = json.loads(done.stdout)
        if found.get("status") != "ok":
            raise RuntimeError(f"{path.name} on {target}: {found.get('detail', found)}")
        hashes.append(
            {
                seed: [output["fnv"] for output in run["outputs"]]
                for seed, run in sorted(found["seeds"].items())
            }
        )
    return {
        "output_seeds": OUTPUT_SEEDS,
        "output_fnv": hashes[1],
        "outputs_identical": hashes[0] == hashes[1],
    }


def main_device(names: list[str]) -> int:
    """Measure the written models of the cases named (all the device cases when none) on their
    probes, keeping the others' records."""
    if unknown := set(names) - set(DEVICE_CASES):
        print(f"no device case: {', '.join(sorted(unknown))} (cases: {', '.join(DEVICE_CASES)})")
        return 2
    found = json.loads(DEVICE_CACHE.read_text())["cases"] if DEVICE_CACHE.is_file() else {}
    for case in CASES:
        if case.name in DEVICE_CASES and (not names or case.name in names):
            found[case.name] = measure_device(case)
            target = found[case.name]["target"]
            print(f"{case.name}: {found[case.name]['min_arena_plain']:,} B on {target}")
    document = {"remake": "python -m tests.ladder_cases --device [CASE ...]", "cases": found}
    DEVICE_CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


def main(names: list[str]) -> int:
    """Re-run the cases named (all when none) and rewrite their records in the cache."""
    if names[:1] == ["--device"]:
        return main_device(names[1:])
    known = {case.name for case in CASES}
    if unknown := set(names) - known:
        print(f"no such case: {', '.join(sorted(unknown))} (cases: {', '.join(sorted(known))})")
        return 2
    cases = json.loads(CACHE.read_text())["cases"] if names and CACHE.is_file() else {}
    for case in CASES:
        if names and case.name not in names:
            continue
        cases[case.name] = measure(case)
        check = cases[case.name]["check"]
        print(f"{case.name} {shlex.join(case.options)}: {check['verdict']}; {check['commands'][0]}")
    document = {"remake": "python -m tests.ladder_cases [CASE ...]", "cases": cases}
    CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
