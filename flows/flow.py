"""A flow: one path a user walks through the CLI, drawn at random from (campaign seed, index).

Model (built-in example or generated) × `--input-shape` × build (the host wheel, a Cortex-M core
and kernel library, or a board) × maybe `optimize` with its flags first × a command on the result
(`check`, `report`, `export`, `diagnose`), at another input size sometimes, with a budget drawn
around the model's own number; then the steps the command suggests, run as printed. Flow n depends
only on (seed, n), so any flow replays alone.
"""

from __future__ import annotations

import importlib
import random
import shlex
from dataclasses import dataclass

from flows.models import Subject, random_subject

# Builds a flow asks for: the host wheel (every claim checked), and Cortex-M builds (checked on
# the QEMU probes for a sample; their optimized models always on the wheel too).
HOST_BUILD: tuple[str, ...] = ()
DEVICE_BUILDS: tuple[tuple[str, ...], ...] = (
    ("--cpu", "cortex-m7", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m7"),
    ("--cpu", "cortex-m3", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m55", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m55"),
    ("--cpu", "cortex-m4", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m33"),
    ("--kernels", "cmsis-nn"),
)
# Boards: their core's build (CMSIS-NN), or the host figure marked an estimate (ESP32 family).
BOARDS = (
    "nucleo-f401re",
    "stm32f746",
    "nucleo-h743zi",
    "nrf52840-dk",
    "arduino-nano-33-ble",
    "raspberry-pi-pico",
    "bluepill-f103c8",
    "esp32-s3-devkitc-1",
    "esp32-devkitc",
    "esp32-c3-devkitm-1",
)
# `--wide` (`python -m flows --wide`): paths the default draw does not walk. Boards whose arena
# may go to several RAM banks (placement, the two-buffer split of their headers), and LiteRT:
# Linux devices (their ISA and core) and `--runtime litert` with a budget, each with the options
# users give it (--delegate, --isa, --threads, --reserve); export and diagnose are given the
# board as users type it (--target).
BANK_BOARDS = (
    "stm32f746g-disco",
    "stm32f769i-disco",
    "stm32h747i-disco",
    "arduino-portenta-h7",
    "teensy-41",
    "mimxrt1060-evk",
    "esp32-s3-eye",
    "esp-eye",
    "seeed-xiao-esp32s3",
    "kit-pse84-eval",
)
LINUX_DEVICES = (
    "raspberry-pi-zero-2-w",
    "raspberry-pi-4-b-2gb",
    "raspberry-pi-5-4gb",
    "coral-dev-board",
    "pixel-7a",
)
LITERT_HOST = ("--runtime", "litert")
# `--builds` (`python -m flows --builds`): builds the default draw does not take. The host wheel of
# other TFLM releases (each judged on that release's own wheel, `oracle.OldWheels`), a core built
# from TFLM of another month, ESP32 chips with ESP-NN's releases or its ANSI C path, and Ethos-U:
# a board with an NPU or --cpu with --npu, the model compiled by `arenalens vela` first most of
# the time (its reproduce command then runs as printed).
RELEASE_MONTHS = ("2025-02", "2025-06", "2025-10", "2026-03", "2026-07")
ESP_CHIPS = ("esp32", "esp32s3", "esp32c3", "esp32p4")
ESP_KERNELS = ("esp-nn", "esp-nn-ansi", "esp-nn@1.1.1", "esp-nn@1.2.0", "esp-nn@1.2.3")
NPU_BUILDS: tuple[tuple[str, ...], ...] = (
    ("--target", "corstone-300-fvp"),
    ("--target", "grove-vision-ai-v2"),
    ("--target", "ek-ra8p1"),
    ("--target", "corstone-300-u65-fvp"),
    ("--target", "corstone-320-fvp"),
    ("--cpu", "cortex-m55", "--npu", "ethos-u55-128"),
    ("--cpu", "cortex-m55", "--npu", "ethos-u65-512"),
    ("--cpu", "cortex-m85", "--npu", "ethos-u85-256"),
)
ISAS = ("x86-64-avx512", "x86-64-v3", "x86-64-v2", "arm64", "arm64-dotprod", "arm64-i8mm", "armv7")
RESERVES = ("0", "64KB", "1MB", "100MB")
COMMANDS = ("check", "report", "export", "diagnose")
# optimize's flags, each drawn on its own (`--split` joins them where the CLI has it).
OPTIMIZE_FLAGS = ("--reorder", "--inplace", "--overlap")
# A budget as a multiple of the model's own number: short, just short, exactly, just over, roomy.
BUDGET_RATIOS = (0.5, 0.9, 0.999, 1.0, 1.02, 1.3, 3.0)


@dataclass(frozen=True)
class Flow:
    """One path: what to run, in order; `walk.walk_flow` runs it and judges every claim."""

    seed: int
    index: int
    subject: Subject
    build: tuple[str, ...]  # --cpu/--kernels, --target BOARD, or () for the host wheel
    shape: tuple[str, ...]  # --input-shape values of the first command
    optimize: tuple[str, ...] | None  # optimize's flags, or None when the flow does not optimize
    command: str  # check | report | export | diagnose
    later_shape: tuple[str, ...]  # --input-shape of the command after optimize
    budget_ratio: float | None  # None: no budget (or the board's)
    options: tuple[str, ...]  # the command's own options: --max-input, --overlap, --format ...
    follow_steps: bool
    wide: bool = False  # drawn with `--wide`'s paths (its replay needs --wide too)
    families: tuple[str, ...] = ()  # drawn among these families only (its replay names them)
    builds: bool = False  # drawn with `--builds`' builds (its replay needs --builds too)
    vela: bool = False  # the model is compiled by `arenalens vela` for the build's NPU first

    @property
    def litert(self) -> bool:
        """A LiteRT path: `--runtime litert` or a Linux device."""
        return is_litert(self.build)

    @property
    def replay_command(self) -> str:
        """The command that walks this flow alone: the same draw needs the same families and
        --wide."""
        words = ["python", "-m", "flows", "--replay", str(self.index), "--seed", str(self.seed)]
        for family in self.families:
            words += ["--family", family]
        words += ["--wide"] if self.wide else []
        return shlex.join(words + (["--builds"] if self.builds else []))

    @property
    def label(self) -> str:
        return f"flow {self.seed}:{self.index}"

    def describe(self) -> str:
        """One line: the model recipe and the options, for tables and repros."""
        parts = [self.subject.recipe] + (["vela"] if self.vela else [])
        if self.shape:
            parts.append("shape " + ",".join(self.shape))
        parts.append(" ".join(self.build) or "host")
        if self.optimize is not None:
            parts.append("optimize " + (" ".join(self.optimize) or "(plain)"))
        parts.append(self.command + ("" if not self.options else " " + shlex.join(self.options)))
        if self.later_shape != self.shape:
            parts.append("then shape " + (",".join(self.later_shape) or "as written"))
        if self.budget_ratio is not None:
            parts.append(f"budget x{self.budget_ratio}")
        return "; ".join(parts)


def is_litert(build: tuple[str, ...]) -> bool:
    return build == LITERT_HOST or (build[:1] == ("--target",) and build[1] in LINUX_DEVICES)


def random_flow(
    seed: int,
    index: int,
    *,
    families: tuple[str, ...] = (),
    split: bool = False,
    wide: bool = False,
    builds: bool = False,
) -> Flow:
    """Flow `index` of the campaign `seed` (`split`: optimize has --split to draw; `wide`: the
    paths of `--wide` too, `builds`: `--builds`' builds, each drawn from its own stream, so a
    flow without them is the same)."""
    rng = random.Random(f"flows:{seed}:{index}")
    subject = random_subject(rng, families)
    build = _build(rng)
    if wide:
        build = _wide_build(random.Random(f"flows-wide:{seed}:{index}"), build)
    vela = False
    if builds:
        builds_rng = random.Random(f"flows-builds:{seed}:{index}")
        build = _other_build(builds_rng, build)
        vela = "--npu" in build or build in NPU_BUILDS
        vela = vela and not subject.placeholder and builds_rng.random() < 0.7
    shape = _shape(rng, subject, required=False)
    optimize: tuple[str, ...] | None = None
    later_shape = shape
    # optimize writes TFLM's plans: under `--runtime litert` it has no such option (on a Linux
    # device it refuses, a path walked).
    if rng.random() < 0.45 and build != LITERT_HOST:
        flags = OPTIMIZE_FLAGS + (("--split",) if split else ())
        optimize = tuple(flag for flag in flags if rng.random() < 0.35)
        if subject.placeholder and not shape and rng.random() < 0.8:
            shape = _shape(rng, subject, required=True)
        # The written model is at `shape`; sometimes asked about at another size (its plan
        # belongs to its own), sometimes at no size named.
        roll = rng.random()
        later_shape = (
            () if roll < 0.6 else (_shape(rng, subject, required=True) if roll < 0.8 else shape)
        )
    if vela:  # Vela compiles the model at its own size; the compiled model is asked as written
        shape, later_shape = (), ()
    command = rng.choice(COMMANDS)
    budget_ratio: float | None = None
    options: tuple[str, ...] = ()
    on_board = bool(build) and build[0] == "--target"
    if command in ("check", "report"):
        if not on_board and (command == "check" or rng.random() < 0.6):
            budget_ratio = rng.choice(BUDGET_RATIOS)
        wants_budget = on_board or budget_ratio is not None
        if wants_budget and subject.input_name and rng.random() < 0.12:
            options += ("--max-input",)
        if command == "report" and rng.random() < 0.3:
            options += ("--overlap",)
    elif command == "export":
        options = rng.choice((("--format", "c-header", "-o", "arena.h"), ("--format", "json")))
    if wide and is_litert(build) and command in ("check", "report"):
        options += _litert_options(random.Random(f"flows-litert:{seed}:{index}"), on_board)
    elif wide and is_litert(build) and command == "export" and "c-header" in options:
        # The header carries the app's memory for its delegate, ISA and threads (no reserve).
        options += _litert_options(random.Random(f"flows-litert:{seed}:{index}"), False)
    return Flow(
        seed=seed,
        index=index,
        subject=subject,
        build=build,
        shape=shape,
        optimize=optimize,
        command=command,
        later_shape=later_shape,
        budget_ratio=budget_ratio,
        options=options,
        follow_steps=rng.random() < 0.7,
        wide=wide,
        families=families,
        builds=builds,
        vela=vela,
    )


def litert_flows(
    seed: int, count: int, families: tuple[str, ...] = (), *, start: int = 0, split: bool = False
) -> tuple[Flow, ...]:
    """The first `count` flows of the `--wide` campaign `seed` from `start` that take a LiteRT
    path, each with its own index (`--replay N --wide` walks it alone): a LiteRT sample."""
    picked: list[Flow] = []
    index = start
    while len(picked) < count:
        flow = random_flow(seed, index, families=families, split=split, wide=True)
        if flow.litert:
            picked.append(flow)
        index += 1
    return tuple(picked)


def _wide_build(rng: random.Random, build: tuple[str, ...]) -> tuple[str, ...]:
    """`--wide`: a third of the flows take a bank board or a LiteRT path instead."""
    roll = rng.random()
    if roll < 0.15:
        return ("--target", rng.choice(BANK_BOARDS))
    if roll < 0.25:
        return ("--target", rng.choice(LINUX_DEVICES))
    if roll < 0.35:
        return LITERT_HOST
    return build


def _other_build(rng: random.Random, build: tuple[str, ...]) -> tuple[str, ...]:
    """`--builds`: half the flows take another TFLM release, kernel library or an Ethos-U NPU."""
    # The wheels measured held out (their environments are made there); imported by name so mypy
    # does not check tests/conformance through it.
    wheels: tuple[str, ...] = importlib.import_module("tests.tflm_upstream_builds").WHEELS
    roll = rng.random()
    if roll < 0.15:
        return ("--tflm", rng.choice(wheels))
    if roll < 0.22:
        return ("--tflm", rng.choice(RELEASE_MONTHS))
    if roll < 0.3:
        core = rng.choice(DEVICE_BUILDS)
        return (*core, "--tflm", rng.choice(RELEASE_MONTHS)) if "--cpu" in core else core
    if roll < 0.38:
        return ("--cpu", rng.choice(ESP_CHIPS), "--kernels", rng.choice(ESP_KERNELS))
    if roll < 0.5:
        return rng.choice(NPU_BUILDS)
    return build


def _litert_options(rng: random.Random, on_device: bool) -> tuple[str, ...]:
    """What users give a LiteRT check: the delegate their app runs, the ISA, threads, and on a
    device the RAM the OS and the rest of the app keep."""
    options: tuple[str, ...] = ()
    if rng.random() < 0.35:
        options += ("--delegate", "none")
    if rng.random() < 0.3:
        options += ("--isa", rng.choice(ISAS))
    if rng.random() < 0.15:
        options += ("--threads", rng.choice(("2", "4")))
    if on_device and rng.random() < 0.3:
        options += ("--reserve", rng.choice(RESERVES))
    return options


def _build(rng: random.Random) -> tuple[str, ...]:
    roll = rng.random()
    if roll < 0.55:
        return HOST_BUILD
    if roll < 0.8:
        return rng.choice(DEVICE_BUILDS)
    return ("--target", rng.choice(BOARDS))


def _shape(rng: random.Random, subject: Subject, *, required: bool) -> tuple[str, ...]:
    """An --input-shape value the subject takes (or, rarely, one it may refuse); none at all
    half the time unless `required`."""
    if not subject.sizes or (not required and rng.random() < 0.5):
        return ()
    return (rng.choice(subject.sizes),)
