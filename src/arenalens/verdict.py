"""The verdict: one model under one runtime and build, and optionally one budget → every answer a
user asks first, computed once, so that no two views can disagree.

Does the runtime run it (CANNOT RUN, each distinct reason once, with the operators it hits and
what to change in the conversion)? Would its offline plan corrupt tensors at these shapes or on
this build (CANNOT RUN CORRECTLY)? Is the input size known (INPUT SHAPE UNKNOWN)? Only then is
there a number, and only then does it fit, fit after `arenalens optimize`, or not, by how much and
on which build. The next steps follow from the same answer: commands that run as printed, with
the user's model path, input shapes and build options, and a step that promises bytes only when
running it yields them. The terminal lines, the HTML cards (through the report document), the
JSON documents, the Python API (`arenalens.check`) and the exit code all read this object.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from functools import cached_property, partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from arenalens.builds.build import NAMED_BY_USER, Build, build_document, kernels_flag
from arenalens.cannot_run import Refusal
from arenalens.declared import DeclaredArena, StatusAnswers
from arenalens.effort import OPTIMIZE_EFFORT
from arenalens.fit import FitCheck, check_fit, with_ladder
from arenalens.ir import Model
from arenalens.next_steps import Asked, Step, Steps
from arenalens.plan_validity import PlanConflict
from arenalens.records import record
from arenalens.target_build import build_from_options, default_runtime, rewrite_rules
from arenalens.targets import Target, target_document
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the CLI runs the pipeline and the search; the verdict only reads them
    from arenalens.max_input import InputSearch
    from arenalens.pipeline import Analysis
    from arenalens.placement import BoardPlacement
    from arenalens.vela.memory import NpuMemory

EXIT_OK = 0
EXIT_NOT_OK = 1
CHECK_SCHEMA_VERSION = 3
# The steps' commands name no model (it came from bytes) and repeat no option.
NOTHING_ASKED = Asked()


class Answer(enum.StrEnum):
    """The one-word answer, most blocking first."""

    CANNOT_RUN = "CANNOT RUN"
    CANNOT_RUN_CORRECTLY = "CANNOT RUN CORRECTLY"
    INPUT_SHAPE_UNKNOWN = "INPUT SHAPE UNKNOWN"
    FITS = "FITS"
    FITS_TIGHT = "FITS, TIGHT"
    FITS_ESTIMATE = "FITS (estimate)"
    FITS_AFTER_OPTIMIZE = "FITS AFTER OPTIMIZE"
    DOES_NOT_FIT = "DOES NOT FIT"


# Answers that leave no number to declare: every step that presumes one is left out.
NO_NUMBER = frozenset({Answer.CANNOT_RUN, Answer.CANNOT_RUN_CORRECTLY, Answer.INPUT_SHAPE_UNKNOWN})


@record()
class Verdict(StatusAnswers):
    """Everything the first screen of any command says about one model, and the exit code."""

    model: str  # display name
    source: str  # the file it was read from ('<bytes>' ...)
    argument: str  # the model as the user gave it (commands name it); '' when unknown
    runtime: str
    build: Build | None  # None for a runtime without builds
    declared: DeclaredArena
    fit: FitCheck | None = None  # with a budget or a board
    input_shapes: tuple[str, ...] = ()  # the --input-shape values the figures are for
    placeholders: tuple[str, ...] = ()  # inputs whose real size is unknown
    search: InputSearch | None = None  # --max-input
    optimized_bytes: int | None = None  # the number after `arenalens optimize`, when computed
    # The extra whose exact search that number's plan went without ('' none: Plan.missing_extra).
    optimized_missing_extra: str = ""
    assumptions: tuple[str, ...] = ()
    # A Vela-compiled model's NPU memories (TFLM); where they go on the board is `fit.npu`.
    npu_memory: NpuMemory | None = None
    # What the user asked, as the steps' commands repeat it: made when the steps are first read
    # (it reads the model's inputs; a check in a search loop reads only the answer).
    asked_of: Callable[[], Asked] = field(default=lambda: NOTHING_ASKED, repr=False, compare=False)

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        """What to do next, as commands that run as printed: made when first read (the
        terminal, `as_dict`, `next_steps`), from the answers below."""
        return Steps(self, self.asked_of()).all()

    # -- the answers -------------------------------------------------------------------------
    @property
    def refusals(self) -> tuple[Refusal, ...]:
        """Why it cannot run: one per distinct reason, with its operators and fix."""
        return self.declared.refusals

    @property
    def conflicts(self) -> tuple[PlanConflict, ...]:
        """Why its offline plan does not hold."""
        return self.declared.conflicts

    @cached_property
    def answer(self) -> Answer | None:
        """The one-word answer; None when no budget was asked and nothing blocks a number (asked
        by every view and step: worked out once)."""
        if not self.runs:
            return Answer.CANNOT_RUN
        if not self.plan_holds:
            return Answer.CANNOT_RUN_CORRECTLY
        if not self.shape_known:
            return Answer.INPUT_SHAPE_UNKNOWN
        fit = self.fit
        if fit is None:
            return None
        if fit.fits:
            if self.declared.is_estimate:
                return Answer.FITS_ESTIMATE
            return Answer.FITS_TIGHT if fit.tight else Answer.FITS
        if fit.fits_after_optimize:
            return Answer.FITS_AFTER_OPTIMIZE
        return Answer.DOES_NOT_FIT

    @property
    def has_number(self) -> bool:
        """True when the number to declare means what it says."""
        return self.answer not in NO_NUMBER

    @property
    def required_bytes(self) -> int | None:
        """The number to declare (TFLM: kTensorArenaSize); None when there is none."""
        return self.declared.required_bytes if self.has_number else None

    @property
    def parts(self) -> Mapping[str, int]:
        """The number's parts by name (TFLM: head, tail, setup); empty when there is none."""
        if not self.has_number:
            return MappingProxyType({})
        return MappingProxyType({part.name: part.nbytes for part in self.declared.parts})

    @property
    def fits(self) -> bool:
        """True when a budget was asked and the number fits it."""
        return self.answer in (Answer.FITS, Answer.FITS_TIGHT, Answer.FITS_ESTIMATE)

    @property
    def npu_short(self) -> bool:
        """True when the arena fits but the NPU's other pieces (fast memory, SRAM weights) do
        not fit beside it, or the driver refuses the fast memory firmware gives."""
        fit = self.fit
        return fit is not None and self.has_number and fit.headroom_bytes >= 0 and not fit.npu_fits

    @property
    def fits_after_optimize(self) -> bool | None:
        """Whether it fits after `arenalens optimize` (True when it fits already; None when
        unknown; False without a budget or a number)."""
        if self.fit is None or not self.has_number:
            return False
        return self.fit.fits_after_optimize

    @property
    def headroom_bytes(self) -> int | None:
        """Available minus required (negative: short); None without a budget or a number."""
        if self.fit is None or not self.has_number:
            return None
        # Placed in the board's banks: the least any of its buffers leaves in its bank.
        return self.fit.spare_bytes

    @property
    def next_steps(self) -> tuple[str, ...]:
        """The steps as sentences, each with the command it names."""
        return tuple(step.line for step in self.steps)

    @property
    def exit_code(self) -> int:
        """0 when the answer is good (fits, or a number without a budget), 1 otherwise."""
        answer = self.answer
        return EXIT_OK if answer is None or self.fits else EXIT_NOT_OK

    @property
    def where(self) -> str:
        """'ST NUCLEO-F746ZG (Cortex-M7 216 MHz)' or '320KB = 327,680 B', with the reserve."""
        fit = self.fit
        if fit is None:
            return ""
        kept = ""
        if fit.reserve_bytes:
            whose = "reserved"
            if fit.reserve_is_default:
                linux = fit.target is not None and fit.target.runs_linux
                whose = "kept for the OS and the app" if linux else "kept for its firmware"
            kept = f"{format_bytes_exact(fit.reserve_bytes)} {whose}"
        if fit.target is not None:
            return f"{fit.target.title} ({'; '.join(p for p in (fit.target.core, kept) if p)})"
        if fit.budget_text and not fit.budget_text.isdigit():
            text = f"{fit.budget_text} = {format_bytes_exact(fit.budget_bytes)}"
        else:
            text = format_bytes_exact(fit.budget_bytes)
        return f"{text} ({kept})" if kept else text

    def as_dict(self) -> dict[str, Any]:
        """The `check --json` document (and `arenalens.check(...).as_dict()`)."""
        fit = self.fit
        document: dict[str, Any] = {
            "schema": "arenalens.check",
            "schema_version": CHECK_SCHEMA_VERSION,
            "model": self.model,
            "file": self.source,
            "runtime": self.runtime,
            "build": build_document(self.build),
            "planner": self.declared.planner,
            "verdict": None if self.answer is None else self.answer.value,
            "runs": self.runs,
            "plan_holds": self.plan_holds,
            "shape_known": self.shape_known,
            "fits": self.fits,
            "fits_after_optimize": self.fits_after_optimize,
            "required_bytes": self.required_bytes,
            "parts": dict(self.parts),
            "declare": self.declared.as_dict(),
            "cannot_run": [refusal.as_dict() for refusal in self.refusals],
            "plan_conflicts": [conflict.as_dict() for conflict in self.conflicts],
            "input_shapes": list(self.input_shapes),
            "budget_bytes": None if fit is None else fit.budget_bytes,
            "budget_text": None if fit is None else fit.budget_text or None,
            "reserve_bytes": None if fit is None else fit.reserve_bytes,
            # 'firmware': the target's usual firmware's share (targets.json); 'given': --reserve.
            "reserve_from": None if fit is None else _reserve_from(fit),
            "margin_bytes": None if fit is None else fit.margin_bytes,
            "available_bytes": None if fit is None else fit.available_bytes,
            "headroom_bytes": self.headroom_bytes,
            # On a board with RAM banks, where the headroom is counted: the block (the bank of
            # the buffer with the least to spare when placed) and what it offers, so that
            # headroom = headroom_available_bytes - the bytes put there.
            "headroom_block": None
            if fit is None or fit.spare_block is None or not self.has_number
            else fit.spare_block.name,
            "headroom_available_bytes": None
            if fit is None or not self.has_number
            else fit.spare_available_bytes,
            "best_case_bytes": None if fit is None or not self.has_number else fit.best_case_bytes,
            "optimized_required_bytes": self.optimized_bytes if self.has_number else None,
            # The extra whose exact search could change that number or whether a rewrite fits
            # (with it: lower, or fitting); None: none was missing (`Ladder.missing_extra`).
            "optimized_missing_extra": self.optimized_missing_extra or None
            if self.has_number
            else None,
            # The remedy ladder: each rewrite tried, in order, up to the first that fits.
            "remedies": (
                fit.ladder.as_list() if fit is not None and fit.ladder and self.has_number else []
            ),
            # The check of the model the first fitting rung writes (what `check` of it says).
            "after_optimize": None
            if fit is None or fit.written is None or not self.has_number
            else written_document(fit.written),
            "target": None if fit is None or fit.target is None else target_document(fit.target),
            "placement": None
            if fit is None or fit.placement is None or not self.has_number
            else _placement_document(fit.placement),
            "next_steps": [step.as_dict() for step in self.steps],
            "assumptions": list(self.assumptions),
        }
        if self.npu_memory is not None:  # a Vela-compiled model (as plan's document has it)
            document["npu_memory"] = self._npu_document()
        if self.search is not None:
            document.update(input_search_document(self.search, counts=self.has_number))
        return document

    def _npu_document(self) -> dict[str, Any] | None:
        """The NPU memories (None without an ethos-u operator) and, against a board or budget,
        where each SRAM piece goes (`fit`) and the driver's refusal of the fast memory given."""
        if self.npu_memory is None:
            return None
        document: dict[str, Any] = self.npu_memory.document(self.required_bytes)
        npu = None if self.fit is None else self.fit.npu
        if npu is not None:
            document["fit"] = npu.as_dict()
            if npu.fast_memory_given is not None:
                document["fast_memory_refusal"] = npu.refusal
        return document


def written_document(fit: FitCheck) -> dict[str, Any]:
    """The check of a written model, as the promise of the step that writes it states it: its
    answer, number, what it leaves and where it goes."""
    if not fit.fits:
        answer = Answer.DOES_NOT_FIT
    elif fit.declared.is_estimate:
        answer = Answer.FITS_ESTIMATE
    else:
        answer = Answer.FITS_TIGHT if fit.tight else Answer.FITS
    return {
        "verdict": answer.value,
        "required_bytes": fit.required_bytes,
        "available_bytes": fit.available_bytes,
        "spare_bytes": fit.spare_bytes,
        "margin_bytes": fit.margin_bytes,
        "placement": None if fit.placement is None else _placement_document(fit.placement),
    }


def _reserve_from(fit: FitCheck) -> str:
    return "firmware" if fit.reserve_is_default else "given"


def input_search_document(search: InputSearch, *, counts: bool = True) -> dict[str, Any]:
    """The --max-input keys of the check document (no largest size when the number at the
    model's own size means nothing: it cannot run, correctly, or at a known size)."""
    largest = search.largest if counts else None
    after = search.largest_after_optimize if counts else None

    def shape(size: Any) -> list[int] | None:
        return None if size is None else list(size.shape)

    return {
        "max_input_name": search.input_name,
        "max_input_shape": shape(largest),
        "max_input_required_bytes": None if largest is None else largest.required_bytes,
        # The largest that fits once `optimize` wrote its plan for that size (when larger).
        "max_input_after_optimize_shape": shape(after),
        "max_input_after_optimize_required_bytes": None if after is None else after.required_bytes,
        # The extra whose exact search could change that answer (a larger size may fit with it,
        # or its number be lower); None: none was missing.
        "max_input_after_optimize_missing_extra": search.after_optimize_missing_extra or None
        if counts
        else None,
        "input_shape": list(search.original_shape),
        # Why no other size could be sized (LiteRT cannot load the model); None when searched.
        "max_input_unavailable": search.unavailable or None,
        "accepted_input_shapes": {
            "smallest": shape(search.smallest_accepted),
            "largest": shape(search.largest_accepted),
            "searched_up_to": shape(search.largest_accepted) if search.accepts_beyond else None,
        },
        "input_sizes": [
            {
                "shape": list(size.shape),
                "required_bytes": size.required_bytes,
                "fits": size.fits,
                "error": size.error or None,
            }
            for size in search.sizes
        ],
    }


def board_row(verdict: Verdict) -> dict[str, Any]:
    """One board of `check --target all --json`: needs, available, fits, fits after optimize."""
    fit = verdict.fit
    assert fit is not None and fit.target is not None
    fitting = verdict.has_number and not verdict.fits and fit.ladder is not None
    rung = fit.ladder.first_fit if fitting and fit.ladder is not None else None
    return {
        "board": fit.target.name,
        "title": fit.target.title,
        "core": fit.target.core,
        "cpu": fit.target.cpu,
        "build": None if fit.build is None else fit.build.name,
        "needs_bytes": verdict.required_bytes,
        "needs_for": fit.declared.device,
        "status": fit.declared.status.value,
        "available_bytes": fit.available_bytes,
        "headroom_bytes": verdict.headroom_bytes,
        # Where the headroom is counted (check --json's keys): the bank and what it offers.
        "headroom_block": None
        if fit.spare_block is None or not verdict.has_number
        else fit.spare_block.name,
        "headroom_available_bytes": fit.spare_available_bytes if verdict.has_number else None,
        "fits": verdict.fits,
        "fits_after_optimize": verdict.fits_after_optimize,
        # The rung of the remedy ladder that fits (the table's "yes: split + overlap").
        "after_optimize": None if rung is None else rung.as_dict(),
        # The extra whose exact search could change fits_after_optimize or that rung (the
        # table's "*"); None: none was missing.
        "missing_extra": verdict.optimized_missing_extra or None
        if verdict.has_number and not verdict.fits
        else None,
        "verdict": None if verdict.answer is None else verdict.answer.value,
        # A Vela-compiled model: whether its SRAM pieces have a place in the NPU's banks.
        "npu_memory_fits": None if fit.npu is None else fit.npu.fits,
        # On a board with several RAM banks: where each part goes (`check --json`'s placement).
        "placement": None
        if fit.placement is None or not verdict.has_number
        else _placement_document(fit.placement),
        "source": fit.target.source,
    }


# ---------------------------------------------------------------------------------------------
# Making one


def make_verdict(
    declared: DeclaredArena,
    *,
    model: str,
    source: str,
    build: Build | None,
    asked: Asked = NOTHING_ASKED,
    asked_of: Callable[[], Asked] | None = None,
    fit: FitCheck | None = None,
    optimized_bytes: int | None = None,
    optimized_missing_extra: str = "",
    search: InputSearch | None = None,
    placeholders: Sequence[str] = (),
    assumptions: Sequence[str] = (),
    npu_memory: NpuMemory | None = None,
) -> Verdict:
    """The answers → a Verdict; its next steps follow from them when first read, with what the
    user asked (`asked_of()` when given, else `asked`)."""
    if fit is not None:
        declared = fit.declared
        if optimized_bytes is None:
            optimized_bytes = fit.optimized_bytes
            optimized_missing_extra = fit.optimized_missing_extra
    if declared.is_process_memory:
        # LiteRT's memory on a device: its delegate, threads and ISA, not the arena budget's
        # (builtin kernels, one thread, x86-64), are what the figure assumes.
        from arenalens.litert_memory import memory_assumptions  # noqa: PLC0415 - LiteRT only

        assumptions = memory_assumptions(declared)
    return Verdict(
        model=model,
        source=source,
        argument=asked.argument,
        runtime=declared.runtime,
        build=build,
        declared=declared,
        fit=fit,
        input_shapes=asked.input_shapes,
        placeholders=tuple(placeholders),
        search=search,
        optimized_bytes=optimized_bytes,
        optimized_missing_extra=optimized_missing_extra,
        assumptions=tuple(assumptions),
        npu_memory=npu_memory,
        asked_of=partial(_same, asked) if asked_of is None else asked_of,
    )


def _same(asked: Asked) -> Asked:
    return asked


def verdict_for(
    analysis: Analysis,
    *,
    asked: Asked = NOTHING_ASKED,
    fit: FitCheck | None = None,
    optimized_bytes: int | None = None,
    optimized_missing_extra: str = "",
    search: InputSearch | None = None,
    name: str | None = None,
    declared: DeclaredArena | None = None,
) -> Verdict:
    """An Analysis (and the fit check, optimize's number, the input search) → its Verdict;
    `declared` the figure when it is not the analysis's own (LiteRT's memory on a device)."""
    from arenalens.analysis.placeholders import placeholder_inputs  # noqa: PLC0415
    from arenalens.declared import declared_arena  # noqa: PLC0415
    from arenalens.vela import is_vela_compiled  # noqa: PLC0415

    model = analysis.model
    memory = None
    if analysis.runtime == "tflm" and is_vela_compiled(model):
        from arenalens.vela.memory import npu_memory  # noqa: PLC0415 - Vela-compiled models only

        memory = npu_memory(model)
    build = analysis.budget.build
    npu = build.npu.name if build is not None and build.npu is not None else None
    if declared is None:
        declared = declared_arena(analysis) if fit is None else fit.declared
    return make_verdict(
        declared,
        model=name or model.name,
        source=model.source,
        build=analysis.budget.build,
        asked=asked,
        asked_of=partial(
            _asked_of_model,
            asked,
            model,
            runtime=analysis.runtime,
            npu_uncompiled=npu if npu and memory is None else None,
        ),
        fit=fit,
        optimized_bytes=optimized_bytes,
        optimized_missing_extra=optimized_missing_extra,
        search=search,
        placeholders=[tensor.name for tensor in placeholder_inputs(model)],
        assumptions=analysis.budget.assumptions,
        npu_memory=memory,
    )


def _asked_of_model(
    asked: Asked, model: Model, *, runtime: str, npu_uncompiled: str | None
) -> Asked:
    """What the user asked, with what the steps read of the model: its image inputs (--max-input
    takes one), the NPU it runs without, the inputs given another size than the file's."""
    from arenalens.analysis.placeholders import resized_inputs  # noqa: PLC0415
    from arenalens.image_inputs import image_inputs  # noqa: PLC0415

    return replace(
        asked,
        image_inputs=len(image_inputs(model)) if model.subgraphs else 0,
        npu_uncompiled=npu_uncompiled,
        resized=resized_inputs(model) if asked.input_shapes and runtime == "tflm" else (),
    )


# ---------------------------------------------------------------------------------------------
# The Python API


def check(
    model: Model | str | os.PathLike[str] | bytes,
    *,
    target: str | Target | None = None,
    budget: int | str | None = None,
    reserve: int | str | None = None,
    build: Build | str | None = None,
    tflm: str | None = None,
    runtime: str | None = None,
    delegate: str | None = None,
    threads: int = 1,
    isa: str = "",
    input_shapes: Mapping[str | int, Sequence[int]] | Sequence[str] | None = None,
    planner: str | None = None,
    resource_variables: int | None = None,
    fast_memory: int | str | None = None,
    weights_in_sram: bool = False,
) -> Verdict:
    """What `arenalens check` answers, as a Verdict: does the model run, correctly, at a known
    input size, what to declare (`required_bytes`, `parts`), does it fit the budget or board
    (`fits`, `fits_after_optimize`) and what to do next (`next_steps`).

    `target` is a board or chip preset (its core and CMSIS-NN kernels choose the build unless
    `build` says otherwise); `tflm` the TFLM release that build compiles, as `--tflm` takes it
    (a tflite-micro version, a date like '2025-08', a commit); `budget` bytes or a size text
    ('320KB'); `reserve` what the firmware keeps (default: a target's usual firmware's share,
    nothing off a budget); `resource_variables` the MicroResourceVariables table the firmware
    creates; `input_shapes` {input name or position: shape} or ['NAME=1x128x128x3', ...].
    Without target or budget the verdict has a number and no fit answer (`answer` is None); when
    it does not fit, `fit.ladder` holds the rewrites tried, as `check` prints them. For a
    Vela-compiled model the answer counts the NPU's other SRAM pieces too (`npu_memory`, `fit.npu`):
    `fast_memory` is the fast_memory_size firmware hands `ethosu_init` (default: what the model
    needs) and `weights_in_sram` says it was compiled with Sram_Only.
    `runtime` is 'tflm' or 'litert' (default: LiteRT on a Linux-class target, else TFLM); under
    LiteRT the figure is the model file and the interpreter's peak heap with `delegate`
    ('xnnpack', LiteRT's default, or 'none') and `threads` threads
    (Interpreter(num_threads=...)) on `isa` (as `--isa` takes it; default: a Linux-class
    target's, else the machine the heap was measured on)."""
    from arenalens.pipeline import analyze  # noqa: PLC0415
    from arenalens.targets import get_target  # noqa: PLC0415
    from arenalens.tflite.reader import load_model  # noqa: PLC0415
    from arenalens.units import parse_size  # noqa: PLC0415

    if isinstance(model, str) and model.startswith(EXAMPLE_PREFIX):
        # 'example:NAME' names a built-in example, as on the command line.
        from arenalens.examples import example_bytes  # noqa: PLC0415
        from arenalens.tflite.reader import parse_model  # noqa: PLC0415

        loaded = parse_model(example_bytes(model[len(EXAMPLE_PREFIX) :]), model)
    else:
        loaded = model if isinstance(model, Model) else load_model(model)
    argument = _argument_of(model, loaded)
    shapes: dict[str | int, tuple[int, ...]] = {}
    shape_texts: list[str] = []
    if isinstance(input_shapes, Mapping):
        for key, shape in input_shapes.items():
            shapes[key] = tuple(shape)
            shape_texts.append(f"{key}=" + "x".join(str(d) for d in shape))
    elif input_shapes:
        from arenalens.runtimes.litert.shapes import parse_input_shape  # noqa: PLC0415

        for text in input_shapes:
            name, shape = parse_input_shape(text)
            shapes[name] = shape
            shape_texts.append(text)
    if shapes:
        from arenalens.runtimes.litert.shapes import resize_model_inputs  # noqa: PLC0415

        loaded = resize_model_inputs(loaded, shapes)
    preset = get_target(target) if isinstance(target, str) else target
    if runtime is None:
        runtime = default_runtime(preset)
    chosen = build_from_options(build=build, target=preset, tflm=tflm, runtime=runtime)
    if resource_variables is not None:
        # The MicroResourceVariables table the firmware creates (`--resource-variables`).
        chosen = replace(chosen, resource_variables=resource_variables)
    analysis = analyze(loaded, runtime=runtime, build=chosen, planner=planner)
    core = _asked_core(chosen if build is not None else None)
    asked = Asked(
        argument=argument,
        input_shapes=tuple(shape_texts),
        runtime=runtime,
        delegate=delegate,
        threads=threads,
        isa=isa,
        cpu=core[0],
        kernels=core[1],
    )
    if preset is None and budget is None:
        return verdict_for(analysis, asked=asked)
    fit = check_fit(
        analysis,
        budget_bytes=None if budget is None else _bytes(budget, parse_size),
        target=preset if budget is None else None,
        reserve_bytes=None if reserve is None else _bytes(reserve, parse_size),
        budget_text=budget if isinstance(budget, str) else "",
        fast_memory_bytes=None if fast_memory is None else _bytes(fast_memory, parse_size),
        weights_in_sram=weights_in_sram,
        delegate=delegate,
        threads=threads,
        isa=isa,
    )
    if planner is None and analysis.build is not None and fit.optimize_decides:
        # The ladder's rules only when it climbs (`with_ladder`): a fitting check needs none.
        rules = rewrite_rules(analysis.build, target=preset if budget is None else None)
        fit = with_ladder(fit, loaded, build=analysis.build, rules=rules, effort=OPTIMIZE_EFFORT)
    return verdict_for(analysis, asked=asked, fit=fit)


EXAMPLE_PREFIX = "example:"


def _asked_core(build: Build | None) -> tuple[str | None, str | None]:
    """A build the caller named → the --cpu and --kernels a command line names it with, as the
    CLI's Asked holds them (its steps then keep the core: `check --target all --cpu X`); none
    for a target's or the host's build."""
    if build is None or build.cpu is None:
        return None, None
    named = build.kernels_named_by == NAMED_BY_USER
    return build.cpu, kernels_flag(build) if named else None


def _argument_of(given: object, model: Model) -> str:
    """The model as a command names it: the path given, or the file a Model was read from."""
    if isinstance(given, str | os.PathLike):
        return os.fspath(given)
    source = model.source
    return "" if not source or source.startswith("<") else source


def _bytes(value: int | str, parse: Any) -> int:
    return value if isinstance(value, int) else int(parse(value))


def _placement_document(found: BoardPlacement) -> dict[str, object]:
    """A board's bank placement → its JSON (placement.py is loaded with any placement)."""
    from arenalens.placement import placement_document  # noqa: PLC0415 - several banks only

    return placement_document(found)
