"""What to do next: a verdict → steps, each a sentence and the command it names, runnable as
printed.

The commands carry what the user asked: the model as typed, its `--input-shape`, the board or
`--cpu` / `--kernels` (`--target` only where the command takes it), the budget and reserve. A
step that promises bytes (what `optimize` writes declares) shows the figure computed as the
command computes it, and only when it saves something. No step presumes a number when there is
none: a model that cannot run gets the fix for each distinct reason, a plan that would corrupt
tensors the `optimize` that replaces it, an unknown input size the option that names it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from arenalens.builds.build import release_flag
from arenalens.cannot_run import Refusal
from arenalens.planning.problem import missing_extra_note, missing_extra_text
from arenalens.records import record
from arenalens.target_build import board_options
from arenalens.targets import Target
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # what the answers the steps read are made of
    from arenalens.builds.build import Build
    from arenalens.declared import DeclaredArena
    from arenalens.fit import FitCheck
    from arenalens.ladder import Rung
    from arenalens.max_input import InputSearch
    from arenalens.plan_validity import PlanConflict
    from arenalens.vela.memory import NpuMemory

# The file the suggested `optimize` writes, and the later steps read; the second name when the
# model is that file already (optimize never overwrites its input).
OPTIMIZED_FILE = "optimized.tflite"
OPTIMIZED_AGAIN_FILE = "optimized-again.tflite"


def optimized_file(model_path: str) -> str:
    """The file a suggested `arenalens optimize` of this model writes (in the command's folder)."""
    if model_path and os.path.abspath(model_path) == os.path.abspath(OPTIMIZED_FILE):
        return OPTIMIZED_AGAIN_FILE
    return OPTIMIZED_FILE


class Answers(Protocol):
    """What the steps read of a verdict (`verdict.Verdict` has it all; the verdict makes its
    steps, so this module names no verdict type: the dependency runs one way)."""

    @property
    def runtime(self) -> str: ...
    @property
    def build(self) -> Build | None: ...
    @property
    def declared(self) -> DeclaredArena: ...
    @property
    def fit(self) -> FitCheck | None: ...
    @property
    def placeholders(self) -> tuple[str, ...]: ...
    @property
    def search(self) -> InputSearch | None: ...
    @property
    def optimized_bytes(self) -> int | None: ...
    @property
    def optimized_missing_extra(self) -> str: ...
    @property
    def npu_memory(self) -> NpuMemory | None: ...
    @property
    def runs(self) -> bool: ...
    @property
    def plan_holds(self) -> bool: ...
    @property
    def shape_known(self) -> bool: ...
    @property
    def fits(self) -> bool: ...
    @property
    def npu_short(self) -> bool: ...
    @property
    def where(self) -> str: ...
    @property
    def refusals(self) -> tuple[Refusal, ...]: ...
    @property
    def conflicts(self) -> tuple[PlanConflict, ...]: ...


@record(slots=True)
class Step:
    """One thing to do next: a sentence, its command (runnable as printed), the bytes it saves."""

    text: str  # ends with ':' when a command follows
    command: str = ""
    saves_bytes: int | None = None

    @property
    def line(self) -> str:
        """The sentence with its command, as one line: 'Then check it: `arenalens check ...`'."""
        return f"{self.text} `{self.command}`" if self.command else self.text

    def as_dict(self) -> dict[str, Any]:
        """JSON form: the whole line, and the command alone."""
        return {"text": self.line, "command": self.command or None, "saves_bytes": self.saves_bytes}


@record()
class Asked:
    """What the user asked, for the commands the steps suggest: the model as typed, its input
    shapes, and the options that select the runtime and build."""

    argument: str = ""  # '' when the model came from bytes: steps then name no command
    input_shapes: tuple[str, ...] = ()
    runtime: str = "tflm"
    delegate: str | None = None  # LiteRT's --delegate as given (check commands repeat it)
    threads: int = 1  # LiteRT's --threads as given
    isa: str = ""  # LiteRT's --isa as given
    cpu: str | None = None  # --cpu / --kernels as given (with a --target they override it)
    kernels: str | None = None
    findings: int = 0  # error and warning findings of diagnose, when they were looked for
    overlap_required_bytes: int | None = None  # with --overlap: the number with that plan
    overlap_missing_extra: str = ""  # the extra its plan went without (`Plan.missing_extra`)
    image_inputs: int = 0  # the model's image inputs (--max-input needs exactly one)
    # Without a build: the largest number over the common MCU builds, and that build's name.
    device_bytes: tuple[int, str] | None = None
    # A model arenalens rewrote: the resolver lines and table its firmware needs.
    firmware: tuple[tuple[str, ...], str] | None = None
    # The build drives an Ethos-U NPU and the model is not Vela-compiled: it runs on the CPU alone.
    npu_uncompiled: str | None = None  # the NPU's name
    resized: tuple[str, ...] = ()  # TFLM: inputs sized otherwise than the file ("'x' 1x8")


# Rewrites whose validity depends on the kernel library's access order. Unless the user named a
# library, their optimize command names none, so the rewrite holds on every library the core may
# link, as the figure promised (with --kernels it could go further, valid for that one only).
_PER_LIBRARY_OPTIONS = ("--overlap", "--split", "--inplace")


def _per_library(options: Iterable[str]) -> bool:
    """True when an optimize command's options ask for a rewrite that holds per library."""
    return any(word in _PER_LIBRARY_OPTIONS for option in options for word in option.split())


class Steps:
    """The next steps of one verdict, as commands that run as printed."""

    def __init__(self, verdict: Answers, asked: Asked) -> None:
        self.verdict = verdict
        self.asked = asked
        self.model = shlex.quote(asked.argument) if asked.argument else ""
        self.output = optimized_file(asked.argument)

    # -- options the commands repeat ----------------------------------------------------------
    def _target(self) -> Target | None:
        fit = self.verdict.fit
        return None if fit is None else fit.target

    def build_options(self, *, board: bool = True, overlap: bool = False) -> str:
        """The options that select the same build again: the board (for the commands that take
        --target, unless `board` is False) or --cpu / --kernels (for `optimize --overlap`,
        --kernels only when the user named the library: `overlap_flags`)."""
        if self.asked.runtime != "tflm":
            target = self._target()
            named = f" --target {shlex.quote(target.name)}" if target and board else ""
            return f" --runtime {self.asked.runtime}{named}"
        return board_options(self._target() if board else None, self.verdict.build, overlap=overlap)

    def shape_options(self) -> str:
        return "".join(f" --input-shape {shlex.quote(shape)}" for shape in self.asked.input_shapes)

    def budget_options(self, *, npu: bool = True, reserve: bool = True) -> str:
        """--target or --budget, and --reserve unless `reserve` is False, as asked (for check
        commands), and the NPU's options unless `npu` is False."""
        fit = self.verdict.fit
        if fit is None:
            return ""
        if fit.target is not None:
            text = ""  # build_options names the board
        else:
            text = f" --budget {shlex.quote(fit.budget_text or str(fit.budget_bytes))}"
        if reserve:
            text += self.reserve_options()
        return text + self.delegate_option() + (self.npu_options() if npu else "")

    def reserve_options(self) -> str:
        """--reserve as asked when it is not the default (a board's firmware share; 0 for a
        budget), --reserve 0 on a board included: the next command answers for the same bytes."""
        fit = self.verdict.fit
        default = 0 if fit is None or fit.target is None else fit.target.reserve_bytes
        if fit is None or fit.reserve_is_default or fit.reserve_bytes == default:
            return ""
        return f" --reserve {fit.reserve_bytes}"

    def delegate_option(self) -> str:
        """--delegate, --threads and --isa as asked (LiteRT's check commands)."""
        delegate = f" --delegate {self.asked.delegate}" if self.asked.delegate else ""
        threads = f" --threads {self.asked.threads}" if self.asked.threads != 1 else ""
        return delegate + threads + (f" --isa {self.asked.isa}" if self.asked.isa else "")

    def npu_options(self, fast_memory: int | None = None) -> str:
        """--fast-memory and --weights-in-sram as asked (a Vela model), or another fast size."""
        fit = self.verdict.fit
        npu = None if fit is None else fit.npu
        if npu is None:
            return ""
        given = npu.fast_memory_given if fast_memory is None else fast_memory
        text = "" if given is None else f" --fast-memory {given}"
        return text + (" --weights-in-sram" if npu.weights_in_sram else "")

    def command(self, verb: str, *options: str, model: str | None = None) -> str:
        argument = self.model if model is None else model
        if verb == "diagnose" and self.asked.delegate:  # its cannot-run verdict is the delegate's
            options += (f" --delegate {self.asked.delegate}",)
        return f"arenalens {verb} {argument}" + "".join(options)

    def all_boards_command(self) -> str:
        """`check --target all`: each board with its core's build (or --cpu's), TFLM as asked."""
        options = " --target all"
        if self.asked.runtime != "tflm":
            options += f" --runtime {self.asked.runtime}{self.delegate_option()}"
        elif self.asked.cpu and self.verdict.npu_memory is None:
            # (A Vela-compiled model runs only with the NPU each board implies: no --cpu.)
            options += f" --cpu {self.asked.cpu}"
            if self.asked.kernels:
                options += f" --kernels {self.asked.kernels}"
        if self.asked.runtime == "tflm":
            options += release_flag(self.verdict.build)
        fit = self.verdict.fit
        if fit is not None and fit.npu is not None and fit.npu.weights_in_sram:
            options += " --weights-in-sram"
        return self.command("check", self.shape_options(), options)

    def optimize_command(
        self, *more: str, per_library: bool = False, shapes: str | None = None
    ) -> str:
        """`optimize` with the shapes (as asked, or `shapes`), the build and on a board the
        reserve (its fit verdict); `per_library`: the build as the user named it (--kernels only
        when they did), as the remedy ladder computes every rung."""
        return self.command(
            "optimize",
            self.shape_options() if shapes is None else shapes,
            self.build_options(overlap=per_library or _per_library(more)),
            self.reserve_options() if self._target() is not None else "",
            f" -o {self.output}",
            *more,
        )

    # -- the steps --------------------------------------------------------------------------
    def all(self) -> tuple[Step, ...]:
        verdict = self.verdict
        if not verdict.runs:
            return self.cannot_run()
        if not verdict.plan_holds:
            return self.cannot_run_correctly()
        if not verdict.shape_known:
            return self.shape_unknown()
        steps = self.with_resized(self.with_number())
        steps.extend(self.firmware_step())
        fit = verdict.fit
        if fit is not None and fit.ladder is not None and fit.ladder.fits:
            steps.extend(self.input_search())  # the model's own size first, then other sizes
        else:
            steps[1:1] = self.input_search()  # the answer to --max-input, right after the verdict
        steps = self.with_findings(steps)
        return tuple(step for step in steps if self.model or not step.command)

    def cannot_run(self) -> tuple[Step, ...]:
        """One step per distinct fix, naming the operators it is for; no number."""
        by_fix: dict[str, list[Refusal]] = {}
        for refusal in self.verdict.refusals:
            by_fix.setdefault(refusal.fix, []).append(refusal)
        if not by_fix:
            runtime = "TFLM" if self.verdict.runtime == "tflm" else "LiteRT"
            return (Step(f"{runtime} cannot run this model, whatever the arena."),)
        return tuple(
            Step(_sentence(f"{'; '.join(r.where() for r in refusals)}: {fix}"))
            for fix, refusals in by_fix.items()
        )

    def cannot_run_correctly(self) -> tuple[Step, ...]:
        steps, kinds = [], [conflict.kind for conflict in self.verdict.conflicts]
        for conflict in self.verdict.conflicts:
            if conflict.kind == "split":  # no plan for this file helps: the original is needed
                return (Step(_sentence(f"This file cannot be resized: {conflict.fix}")),)
            if conflict.kind == "build" and "shapes" not in kinds:  # else one optimize does both
                steps.append(
                    Step(
                        "The offline plan does not hold on this build: plan it again with "
                        "overlaps right on it (the written model replaces the plan; without "
                        "--kernels they hold on every kernel library the core may run):",
                        self.optimize_command(" --overlap"),
                    )
                )
            elif conflict.kind != "build":
                what = "the input size given" if self.asked.input_shapes else "its tensor sizes"
                steps.append(
                    Step(
                        f"The model's offline plan does not hold for {what}, so no size is safe "
                        "to declare: plan it again for this size (the written model replaces "
                        "the plan; check that file then):",
                        self.optimize_command(),
                    )
                )
        return tuple(steps)

    def shape_unknown(self) -> tuple[Step, ...]:
        names = ", ".join(f"'{name}'" for name in self.verdict.placeholders) or "an input"
        example = self.verdict.placeholders[0] if self.verdict.placeholders else "NAME"
        return (
            Step(
                f"The size of {names} is unknown to the model (-1 in its shape_signature), so "
                "every figure is for a stored placeholder: give the size your application feeds "
                f"with --input-shape '{example}=SHAPE' on check, report or optimize (the number "
                "of samples, or the image height and width, it really reads)."
            ),
        )

    def with_resized(self, steps: list[Step]) -> list[Step]:
        """TFLM runs a file's shapes: a model sized otherwise needs `optimize` to write it."""
        shapes, fit = ", ".join(self.asked.resized), self.verdict.fit
        if not shapes or (fit and not fit.fits) or any("optimize" in s.command for s in steps):
            return steps
        text = f"TFLM runs the input size the model's file states ({shapes}), not the one given:"
        text += " write the model at that size, the file this figure is for, to flash it:"
        return [*steps[:1], Step(text, self.optimize_command()), *steps[1:]]

    def with_number(self) -> list[Step]:
        verdict = self.verdict
        fit = verdict.fit
        declared = verdict.declared
        number = format_bytes_exact(declared.required_bytes)
        device = declared.device or "this build"
        estimate = " (an estimate: measure it on the device)" if declared.is_estimate else ""
        steps: list[Step] = []
        optimized = verdict.optimized_bytes
        saves = None if optimized is None else declared.required_bytes - optimized
        if fit is None and self.asked.device_bytes is not None:
            largest, build = self.asked.device_bytes
            steps.append(
                Step(
                    f"{number} is for the 64-bit host (the x86-64 tflite_micro wheel), not a "
                    f"microcontroller: firmware built for one needs up to "
                    f"{format_bytes_exact(largest)} ({build}, the largest over the common MCU "
                    "builds). Name yours with --target or --cpu, or see every board's number:",
                    self.all_boards_command(),
                )
            )
            steps.extend(self.optimize_step(saves))
            return steps
        if fit is None and declared.is_process_memory:
            steps.append(Step(f"Budget {number} of RAM for the model: {device}{estimate}."))
        elif fit is None:
            steps.append(Step(f"Declare {declared.symbol} = {number} for {device}{estimate}."))
        if fit is None:
            steps.extend(self.optimize_step(saves))
            steps.append(
                Step(
                    "See which Linux devices it fits:"
                    if declared.is_process_memory
                    else "See which boards it fits, each with its own core's number:",
                    self.all_boards_command(),
                )
            )
            return steps
        placement = None if fit.placement is None else fit.placement.best
        if verdict.fits:
            if placement is not None and placement.kind != "one arena":
                declare = (
                    f"Give TFLM its memory in {len(placement.uses)} buffers, as the code above "
                    f"does{estimate}: {placement.summary()}."
                )
            elif placement is not None:
                use = placement.uses[0]
                declare = (
                    f"Declare {declared.symbol} = {number}{estimate} in {use.block.name}, as "
                    f"the code above does: {format_bytes_exact(use.spare_bytes)} to spare there."
                )
            elif declared.is_process_memory:
                spare = format_bytes_exact(fit.headroom_bytes)
                declare = (
                    f"Budget {number} of RAM for the model under LiteRT{estimate}: it fits "
                    f"{verdict.where} with {spare} to spare."
                )
            else:
                spare = format_bytes_exact(fit.headroom_bytes)
                declare = (
                    f"Declare {declared.symbol} = {number}{estimate}: it fits {verdict.where} "
                    f"with {spare} to spare."
                )
            steps.append(Step(declare))
            if fit.tight:
                steps.append(self.tight_step())
            steps.extend(self.optimize_step(saves))
            steps.extend(self.external_step())
            steps.extend(self.npu_step())
            return steps
        if verdict.npu_short:
            return self.npu_short_steps()
        short = format_bytes_exact(-fit.headroom_bytes)
        ladder = fit.ladder
        if fit.fits_after_optimize and ladder is not None and ladder.first_fit is not None:
            return [*steps, *self.remedy_steps(ladder.first_fit, short), *self.reserve_step()]
        if ladder is not None and len(ladder.rungs) > 1:
            from arenalens.ladder import rung_title, rungs_text  # noqa: PLC0415 - with any ladder

            best = ladder.best
            still = format_bytes_exact(best.required_bytes - fit.available_bytes)
            # The one note of the verdict (`Ladder.missing_extra`): any rung may fit with the extra.
            tried = rungs_text(ladder) + missing_extra_note(verdict.optimized_missing_extra)
            steps.append(
                Step(
                    f"It does not fit {verdict.where}: {short} short as it is, and no rewrite "
                    f"arenalens makes fits at this size (the best, {rung_title(best)}, declares "
                    f"{format_bytes_exact(best.required_bytes)}, {still} short; tried: {tried})."
                )
            )
        elif declared.is_process_memory:
            steps.append(Step(f"It does not fit {verdict.where}: {short} short."))
        else:
            steps.append(
                Step(
                    f"It does not fit {verdict.where}: {short} short, and even a plan of whole "
                    f"tensors at their lower bound needs {format_bytes_exact(fit.best_case_bytes)}."
                )
            )
        steps.extend(self.reserve_step())
        steps.extend(self.builtin_kernels_step())
        if self.verdict.search is None and self.asked.image_inputs == 1:
            steps.append(
                Step(
                    "Find the largest input size that fits:",
                    self.command(
                        "check",
                        self.shape_options(),
                        self.build_options(),
                        self.budget_options(),
                        " --max-input",
                    ),
                )
            )
        steps.append(
            Step(
                "Or pick a Linux device it fits:"
                if declared.is_process_memory
                else "Or pick a board it fits:",
                self.all_boards_command(),
            )
        )
        steps.append(
            Step(
                "Or shrink the model (diagnose says what each change saves):",
                self.command("diagnose", self.shape_options(), self.build_options()),
            )
        )
        return steps

    def builtin_kernels_step(self) -> list[Step]:
        """LiteRT with XNNPACK that does not fit: the builtin kernels hold no repacked weights,
        indirection buffers or workspace of their own; their figure is checked as printed."""
        declared = self.verdict.declared
        if not declared.is_process_memory or self.asked.delegate == "none":
            return []
        fit = self.verdict.fit
        if not self.model or fit is None:
            return []
        options = (
            ""
            if fit.target is not None
            else f" --budget {shlex.quote(fit.budget_text or str(fit.budget_bytes))}"
        )
        default = fit.target.reserve_bytes if fit.target is not None else 0
        if not fit.reserve_is_default and fit.reserve_bytes != default:
            options += f" --reserve {fit.reserve_bytes}"
        # --threads and --isa as asked (this step names its own --delegate).
        options += self.delegate_option().removeprefix(f" --delegate {self.asked.delegate}")
        return [
            Step(
                "XNNPACK repacks the weights into its own heap; the builtin kernels "
                "(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES) hold less, and run slower:",
                self.command(
                    "check",
                    self.shape_options(),
                    self.build_options(),
                    options,
                    " --delegate none",
                ),
            )
        ]

    def firmware_step(self) -> list[Step]:
        """A model arenalens rewrote: what its firmware must register (and the table size)."""
        if self.asked.firmware is None:
            return []
        lines, table = self.asked.firmware
        count = len(lines) - 1
        names = ", ".join(line.removeprefix("resolver.").removesuffix("();") for line in lines[1:])
        text = (
            f"This model was rewritten by arenalens: the firmware's op resolver must register "
            f"its {count} operators ({lines[0].strip()} with {names})"
        )
        if table:
            text += f", and the figure assumes {table}"
        return [Step(text + ".")]

    def tight_step(self) -> Step:
        """FITS, TIGHT: the margin, and the reserve to state when the board's is not the app's."""
        fit = self.verdict.fit
        assert fit is not None
        margin = format_bytes_exact(fit.margin_bytes)
        text = (
            f"That is under the {fit.margin_percent}% margin ({margin}): a larger stack, a "
            "driver or the next library release may take it; measure what your firmware keeps "
            "(its map file) and check with it:"
        )
        return Step(text, self.reserve_command())

    def reserve_command(self) -> str:
        """The check again with --reserve for the user to fill in."""
        fit = self.verdict.fit
        assert fit is not None
        reserve = fit.reserve_bytes or 0
        return self.command(
            "check",
            self.shape_options(),
            self.build_options(),
            self.budget_options(reserve=False),
            f" --reserve {reserve}",
        )

    def reserve_step(self) -> list[Step]:
        """When only the board's default reserve makes it not fit: say so, with --reserve."""
        fit = self.verdict.fit
        if (
            fit is None
            or not fit.reserve_is_default
            or fit.headroom_bytes + fit.reserve_taken_bytes < 0
        ):
            return []
        assert fit.target is not None and fit.target.firmware is not None
        firmware = fit.target.firmware
        # The shortfall comes off the reserve byte for byte only where all of it shares the
        # arena's block (on a board whose firmware keeps it in another bank, it does not).
        most = fit.reserve_bytes + fit.headroom_bytes
        at_most = (
            f"at most {format_bytes_exact(most)}, "
            if fit.reserve_taken_bytes == fit.reserve_bytes
            else ""
        )
        return [
            Step(
                f"It fits only if the firmware keeps {at_most}less "
                f"than the {format_bytes_exact(fit.reserve_bytes)} {fit.target.name}'s usual "
                f"firmware ({firmware.title}: {firmware.parts_text()}) is assumed to keep: "
                "measure what yours keeps (its map file) and give it with --reserve:",
                self.reserve_command(),
            )
        ]

    def remedy_steps(self, rung: Rung, short: str) -> list[Step]:
        """The rewrite that fits the budget at this size, its cost, then the new file's check."""
        fit = self.verdict.fit
        assert fit is not None
        room = fit.room_after(rung.required_bytes)  # the written model's check says it
        declared = self.verdict.declared.required_bytes
        overlap = "--overlap" in rung.options
        return [
            Step(
                f"It is {short} short as it is; rewritten with {rung.words} it fits "
                f"at this size: it declares {format_bytes_exact(rung.required_bytes)} ({room}; "
                f"{rung.cost}{missing_extra_note(self.verdict.optimized_missing_extra)}):",
                # The ladder computed the rung on the build as asked: without --kernels named,
                # on every library the core may link (held-out flow 600401:57: the step named
                # `--kernels reference`, whose optimize declared 125,236 B, not the 125,288 B
                # promised).
                self.optimize_command(*(f" {option}" for option in rung.options), per_library=True),
                declared - rung.required_bytes,
            ),
            Step(
                "Then check the written model:",
                self.command(
                    "check",
                    self.build_options(overlap=overlap and not self._target()),
                    self.budget_options(),
                    model=self.output,
                ),
            ),
        ]

    def npu_step(self) -> list[Step]:
        """On a build with an Ethos-U NPU, a model Vela has not compiled runs on the CPU alone:
        `optimize --vela` compiles it and writes the fastest setting that fits."""
        npu = self.asked.npu_uncompiled
        if npu is None or self.asked.runtime != "tflm":
            return []
        return [
            Step(
                f"The {npu} NPU runs only what Vela compiled (this figure is the CPU's alone); "
                "compile for it and write the fastest Vela setting that fits (extra 'npu'):",
                self.optimize_command(" --vela"),
            )
        ]

    def optimize_step(self, saves: int | None) -> list[Step]:
        """`optimize` lowers the number: shown only when running it does (computed as it
        does), and the `--overlap` plan when one was asked for."""
        verdict = self.verdict
        steps = []
        if verdict.runtime == "tflm" and saves is not None and saves > 0:
            after = format_bytes_exact(verdict.declared.required_bytes - saves)
            note = missing_extra_note(verdict.optimized_missing_extra)
            steps.append(
                Step(
                    f"Optimized, it declares {after} ({format_bytes_exact(saves)} less{note}):",
                    self.optimize_command(),
                    saves,
                )
            )
        overlap = self.asked.overlap_required_bytes
        best = verdict.declared.required_bytes - (saves or 0)
        if verdict.runtime == "tflm" and overlap is not None and overlap < best:
            kernels = ""
            extra = self.asked.overlap_missing_extra
            missing = f" ({missing_extra_text(extra)})" if extra else ""
            if (verdict.build is None or verdict.build.is_host) and self.asked.kernels:
                kernels = f" --kernels {self.asked.kernels}"
            steps.append(
                Step(
                    f"With outputs sliding over the inputs they consume it declares "
                    f"{format_bytes_exact(overlap)}, written only if the real TFLM interpreter "
                    f"computes bit-identical outputs with that plan{missing}:",
                    self.optimize_command(" --overlap" + kernels),
                    verdict.declared.required_bytes - overlap,
                )
            )
        return steps

    def external_step(self) -> list[Step]:
        """Placed with its activations in external RAM (PSRAM, SDRAM) while the board has
        on-chip RAM: a rewrite that needs less may bring them on-chip, which `optimize` on the
        board says (it prefers such a rewrite and names the move)."""
        from arenalens.blocks import largest_block  # noqa: PLC0415
        from arenalens.targets import EXTERNAL  # noqa: PLC0415

        fit = self.verdict.fit
        if fit is None or fit.target is None or fit.placement is None:
            return []
        best = fit.placement.best
        if best is None or best.activations.block.speed != EXTERNAL:
            return []
        on_chip = largest_block(fit.target, fit.reserve_bytes, on_chip=True)
        if on_chip is None or on_chip.available_bytes <= 0:
            return []
        activations = best.activations
        size = format_bytes_exact(activations.nbytes)
        return [
            Step(
                f"Its activations run from {activations.block.name} (external RAM): rewritten "
                f"to need less, its {activations.part} part ({size}) may move on-chip "
                f"({on_chip.name} holds {format_bytes_exact(on_chip.available_bytes)}); "
                "optimize on this board says "
                "whether it does:",
                self.optimize_command(" --overlap --split"),
            )
        ]

    def npu_short_steps(self) -> list[Step]:
        """The arena fits, the NPU's other SRAM (or fast memory the driver refuses) does not."""
        from arenalens.report.npu_memory import npu_shortfall  # noqa: PLC0415 - its words

        fit = self.verdict.fit
        assert fit is not None and fit.npu is not None
        npu = fit.npu
        spare = format_bytes_exact(fit.headroom_bytes)
        steps = [
            Step(
                f"The arena fits {self.verdict.where} ({spare} to spare), but the model does "
                f"not: {npu_shortfall(npu)}."
            )
        ]
        if npu.refusal:
            needed = npu.memory.fast_memory_bytes
            steps.append(
                Step(
                    f"Give ethosu_init() at least {format_bytes_exact(needed)} of fast memory "
                    "(its fast_memory_size), then check again:",
                    self.command(
                        "check",
                        self.shape_options(),
                        self.build_options(),
                        self.budget_options(npu=False),
                        self.npu_options(fast_memory=needed),
                    ),
                )
            )
            return steps
        steps.append(
            Step(
                "Compile the model from before Vela again with a setting that needs less SRAM: "
                "`arenalens vela` with this board or budget lists each setting's arena, fast "
                "memory and SRAM weights and marks the fastest that fits (extra 'npu')."
            )
        )
        steps.append(Step("Or pick a board it fits:", self.all_boards_command()))
        return steps

    def input_search(self) -> list[Step]:
        search = self.verdict.search
        if search is None:
            return []
        if search.unavailable:
            return [Step(f"No other input size can be sized: {search.unavailable}.")]
        accepted = search.accepted_text()
        largest = search.largest
        if largest is None:
            smallest = search.smallest_accepted
            if smallest is None:
                return [Step(f"{_capital(accepted)}.")]
            return [Step(f"{_capital(search.none_fits_text())}."), *self.after_optimize(search)]
        name = search.input_name or str(search.input_position)
        value = f"{name}=" + "x".join(str(d) for d in largest.shape)
        limit = search.limit_text()
        steps = [
            Step(
                f"{_capital(accepted)}; within that, the largest that fits is {value} ({limit}), "
                f"needing {format_bytes_exact(largest.required_bytes or 0)}:",
                self.command(
                    "check",
                    f" --input-shape {shlex.quote(value)}",
                    self.build_options(),
                    self.budget_options(),
                ),
            )
        ]
        return steps + self.after_optimize(search)

    def after_optimize(self, search: InputSearch) -> list[Step]:
        """The larger input that fits once `optimize` writes its plan for that size."""
        after = search.largest_after_optimize
        if after is None:
            return []
        if after.shape == search.original_shape:
            return []  # the remedy step already gets the model's own size onto the board
        name = search.input_name or str(search.input_position)
        value = f"{name}=" + "x".join(str(d) for d in after.shape)
        options = search.after_optimize_options
        # The search rewrote each size with the ladder's rules (`rewrite_rules`: without
        # --kernels named, on every library the core may link), so its command names the build
        # as the rungs' do (seed 1000801 flow 54: `--kernels reference` declared 11,752 B, not the
        # 11,900 B promised for every library).
        command = self.optimize_command(
            *(f" {option}" for option in options),
            per_library=True,
            shapes=f" --input-shape {shlex.quote(value)}",
        )
        how = f"optimize {' '.join(options)}" if options else "optimize (offline plan)"
        return [
            Step(
                f"Optimized for its size ({how}, the best rewrite that applies), a larger input "
                f"fits: {value} declares {format_bytes_exact(after.required_bytes or 0)} after "
                f"(then check {self.output}, a model of that size"
                f"{missing_extra_note(search.after_optimize_missing_extra)}):",
                command,
            )
        ]

    def with_findings(self, steps: list[Step]) -> list[Step]:
        """The steps and diagnose's findings to fix (named by a step that already runs diagnose)."""
        count = self.asked.findings
        if not count:
            return steps
        findings = "finding" if count == 1 else "findings"
        command = self.command("diagnose", self.shape_options(), self.build_options())
        for index, step in enumerate(steps):
            if step.command == command:
                # 'Or shrink the model (why):' → 'Or shrink the model, and fix ... (why):'
                text, paren, why = step.text.removesuffix(":").partition(" (")
                also = f", and fix its {count} error / warning {findings}"
                steps[index] = replace(step, text=f"{text}{also}{paren}{why}:")
                return steps
        fix = f"Fix the {count} error / warning {findings} (diagnose explains each):"
        return [*steps, Step(fix, command)]


def _capital(text: str) -> str:
    """The text with its first letter in upper case, to start a sentence."""
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    """A fix → a sentence: capitalised, ending with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", ")")) else text + "."
