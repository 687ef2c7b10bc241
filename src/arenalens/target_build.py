"""Options → the build a figure is for: `build_from_options` is the one place a build is made from
what a command line or a Python call says (a build or its name, a board preset, --cpu /
--kernels / --npu, --tflm, the runtime); `target_build` is a board preset's."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from arenalens.builds.build import (
    ESP_NN_RELEASE,
    HOST,
    NAMED_BY_BOARD,
    Build,
    as_build,
    at_tflm,
    build_flags,
    cpu_named,
    device_build,
    overlap_flags,
    select_build,
    with_npu,
)
from arenalens.errors import UsageError
from arenalens.memo import kept_by_identity

if TYPE_CHECKING:
    from arenalens.builds.kernel_paths import OverlapRules
    from arenalens.targets import Target

# Why a preset implies the kernels it does (printed by --list-targets).
KERNELS_WHY = (
    "A Cortex-M preset implies its core and CMSIS-NN kernels: TFLM's Cortex-M builds take them "
    "with OPTIMIZED_KERNEL_DIR=cmsis_nn, as the Arduino library and most vendor SDKs do; give "
    "--kernels reference for a build with TFLM's reference kernels, or --cpu to name another "
    "core. An ESP32-family preset implies its chip and ESP-NN kernels: Espressif's "
    f"esp-tflite-micro always links them, with the newest esp-nn ({ESP_NN_RELEASE}) unless "
    "the project pins one (--kernels esp-nn@1.2.0) or sets ESP-NN to ANSI C (--kernels "
    "esp-nn-ansi). Other cores (GD32V's and K210's RISC-V) have no 32-bit model yet: their "
    "figure is the x86-64 wheel's, "
    "which is at or above what a 32-bit build of TFLM's reference kernels needs but does not "
    "count vendor kernels' scratch, so it is an estimate."
)


def default_runtime(target: Target | None) -> str:
    """The runtime a question is for when none is named: LiteRT on a Linux device (what runs
    there), TFLite Micro everywhere else."""
    return "litert" if target is not None and target.runs_linux else "tflm"


def runtime_runs_on(runtime: str, target: Target | None) -> None:
    """UsageError for a runtime the target does not run: TFLM on a Linux device, LiteRT on a
    microcontroller."""
    if target is None:
        return
    if target.runs_linux and runtime == "tflm":
        raise UsageError(
            f"{target.name} runs {target.os}: TFLite Micro is for microcontrollers; use "
            "--runtime litert (the interpreter and its XNNPACK delegate)"
        )
    if not target.runs_linux and runtime != "tflm":
        raise UsageError(
            f"{target.name} is a microcontroller: LiteRT runs on Linux-class devices (see "
            f"`arenalens check --list-targets`); drop --runtime {runtime} (TFLite Micro runs "
            "there) or --target (a LiteRT figure needs no board)"
        )


def build_from_options(
    *,
    build: Build | str | None = None,
    target: Target | None = None,
    cpu: str | None = None,
    kernels: str | None = None,
    npu: str | None = None,
    tflm: str | None = None,
    runtime: str = "tflm",
) -> Build:
    """What was asked → the build the figures are for: a build (or its name) given whole, else a
    board preset's (with --cpu / --kernels / --npu winning over it), else --cpu / --kernels /
    --npu alone, else the x86-64 wheel; each at the --tflm release. A runtime other than TFLM has
    one build, the host's: a TFLM release or a device build is refused for it."""
    if runtime != "tflm" and tflm is not None:
        raise UsageError(f"--tflm selects a TFLite Micro release; --runtime {runtime} has none")
    if build is not None:
        chosen = as_build(build)
        return chosen if tflm is None else at_tflm(chosen, tflm)
    if target is not None and runtime == "tflm":
        return target_build(target, cpu=cpu, kernels=kernels, tflm=tflm, npu=npu)
    chosen = select_build(cpu, kernels, tflm, npu)
    if runtime != "tflm" and not chosen.is_host:
        raise UsageError(
            f"--cpu / --kernels select a TFLite Micro build; --runtime {runtime} has none"
        )
    return chosen


def target_build(
    target: Target,
    *,
    cpu: str | None = None,
    kernels: str | None = None,
    tflm: str | None = None,
    npu: str | None = None,
) -> Build:
    """A preset and any --cpu / --kernels / --tflm / --npu given with it → the TFLM build to
    predict: the options win, then the preset's core, default kernels (named by the board) and
    NPU; the host wheel for a core without a 32-bit model; at the --tflm release."""
    if cpu is None and kernels is None and tflm is None and npu is None:
        return _board_build(target)
    build = _preset_build(target, cpu=cpu, kernels=kernels)
    npu = npu or target.npu
    if npu is not None:
        build = with_npu(build, npu)
    return build if tflm is None else at_tflm(build, tflm)


@kept_by_identity()
def _board_build(target: Target) -> Build:
    """A preset's own build, made once per target in a process: a search loop checks every
    candidate against the same board."""
    build = _preset_build(target, cpu=None, kernels=None)
    return build if target.npu is None else with_npu(build, target.npu)


def _preset_build(target: Target, *, cpu: str | None, kernels: str | None) -> Build:
    if cpu is not None:
        if kernels is not None:
            return device_build(cpu, kernels)
        if target.kernels is None or target.kernels not in cpu_named(cpu).libraries:
            return device_build(cpu)
        return device_build(cpu, target.kernels, named_by=NAMED_BY_BOARD)
    if target.build_cpu is None or target.kernels is None:
        if kernels is not None:
            raise UsageError(
                f"--kernels: {target.name} has a {target.cpu} core, which arenalens has no "
                f"32-bit model of; give --cpu to choose a Cortex-M core or an ESP32 chip"
            )
        return HOST
    if kernels is not None:
        return device_build(target.build_cpu, kernels)
    return device_build(target.build_cpu, target.kernels, named_by=NAMED_BY_BOARD)


def rewrite_rules(
    build: Build, *, kernels: str | None = None, target: Target | None = None
) -> OverlapRules:
    """The kernel code paths an `optimize --overlap` plan must hold on and the builds its number
    must hold on (`kernel_paths.overlap_rules`), as the selected build says them: the library the
    user named (carried by the build when a core or board names it), else every library the chip
    may run. Two things no build carries: `kernels` without a core (the wheel's figures, that
    library's access orders) and a board preset's core without a 32-bit model (its vendor's
    kernels too). `optimize`, `check`'s remedy ladder and the Python API ask here, so the number
    a step promises is the one its command reaches."""
    from arenalens.builds.kernel_paths import overlap_rules  # noqa: PLC0415 - only for rewrites

    if not build.is_host:
        return overlap_rules(build)
    if kernels is None and target is not None and target.kernels is None:
        return overlap_rules(build, chip=target.chip or target.name)
    return overlap_rules(build, kernels)


def board_options(target: Target | None, build: Build | None, *, overlap: bool = False) -> str:
    """The options of a suggested TFLM command that select `build` again: the board as typed
    when one was asked (alone when the build is the board's own: `optimize --cpu cortex-m55`
    would plan for the core's reference build, not the board's CMSIS-NN one), with --cpu /
    --kernels when the user chose another build for it; without a board, `build_flags`
    (`overlap_flags` for `optimize --overlap`, --kernels only when the user named them)."""
    flags = (overlap_flags if overlap else build_flags)(build)
    if target is None:
        return flags
    named = f" --target {shlex.quote(target.name)}"
    if target_build(target).name == (HOST if build is None else build).name:
        return named
    return named + (flags or " --cpu host")
