"""Walking one flow: its commands run through the CLI's Python entry (in-process), in a folder of
their own, and every claim they make is judged by the real runtime.

What is judged (flows/claims.py names each kind):

* a number N to declare, on the host build: the wheel sets the model up in exactly N bytes and
  computes there what the original computes (bit-identical, seeded random inputs); 16 bytes below,
  it should fail (minimality, noted apart);
* CANNOT RUN: the wheel refuses the model at a roomy arena;
* an optimized model: on the wheel, at what `check` says it declares, the original's outputs; the
  figure optimize printed is the one `check` gives the written file;
* FITS / DOES NOT FIT against the budget, and the exit code, are the verdict's;
* report, export and diagnose say what check says (the verdict, the C header's size, CANNOT RUN);
* every suggested command (a verdict's steps, a diagnose finding's fix) runs as printed and gives
  what it promises: the bytes an optimize step saves, the FITS a check step announces.

Cortex-M builds: their numbers are checked on the QEMU probes for a sample of flows (set up at N
with the plain allocator; an optimized model's output hashes at N); an optimized model written for
a device build is always checked on the wheel too, since it may meet the reference kernels.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arenalens.cli import main
from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.runtimes.litert.shapes import parse_input_shape, resize_model_inputs
from arenalens.tflite.reader import parse_model
from arenalens.tflite.rewriter import model_bytes
from flows.claims import CONFIRMED, NOTED, UNCHECKED, UNSAFE, WRONG, Claim
from flows.flow import Flow
from flows.oracle import CortexM, Outputs, Wheel

OPTIMIZED = "optimized.tflite"
# Planning time optimize gets in a flow (its own steps, run as printed, take the CLI's default).
OPTIMIZE_SECONDS = "2"
# A check with this budget only asks for the number.
ANY_BUDGET = "1GB"
FITS_ANSWERS = ("FITS", "FITS (estimate)")
SHORT_ANSWERS = ("DOES NOT FIT", "FITS AFTER OPTIMIZE")
# Cortex-M probes' RAM is 16 MiB (Cortex-M3/M7); an original run there as the outputs' reference.
DEVICE_REFERENCE_ARENA = 4 << 20
Shapes = tuple[tuple[int, ...], ...]  # a model's input shapes, in input order
_DECLARES = re.compile(r"declares ([\d,]+) B")
_NEEDING = re.compile(r"needing ([\d,]+) B")


@dataclass(frozen=True)
class Ran:
    """One command as it ran: argv (without the program), exit code, outputs, seconds."""

    argv: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds: float

    @property
    def line(self) -> str:
        return "arenalens " + shlex.join(self.argv)

    def document(self) -> Any:
        text = self.out.strip()
        if not text.startswith(("{", "[")):
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return None


def run_cli(argv: Sequence[str]) -> Ran:
    """The CLI's entry in-process: argv → exit code and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code if isinstance(exit_.code, int) else 2
    return Ran(tuple(argv), code, out.getvalue(), err.getvalue(), time.perf_counter() - started)


@dataclass
class Verdict:
    """The verdict fields a document shows (check's document, or a report's verdict)."""

    answer: str | None
    runs: bool
    plan_holds: bool
    shape_known: bool
    required: int | None
    available: int | None
    build: dict[str, Any]
    steps: list[dict[str, Any]]

    @classmethod
    def of_check(cls, document: dict[str, Any]) -> Verdict:
        return cls(
            document["verdict"],
            document["runs"],
            document["plan_holds"],
            document["shape_known"],
            document["required_bytes"],
            document["available_bytes"],
            document["build"] or {},
            document["next_steps"],
        )

    @classmethod
    def of_report(cls, document: dict[str, Any]) -> Verdict:
        report = document["reports"][0]
        verdict = report["verdict"]
        return cls(
            verdict["verdict"],
            verdict["runs"],
            verdict["plan_holds"],
            verdict["shape_known"],
            verdict["required_bytes"],
            verdict["available_bytes"],
            report["build"] or {},
            verdict["steps"],
        )

    @property
    def on_host(self) -> bool:
        return bool(self.build.get("name", "host") == "host")

    @property
    def exit_code(self) -> int:
        return 0 if self.answer is None or self.answer in FITS_ANSWERS else 1

    def same_answer(self, other: Verdict) -> bool:
        mine = (self.answer, self.runs, self.plan_holds, self.shape_known, self.required)
        theirs = (other.answer, other.runs, other.plan_holds, other.shape_known, other.required)
        return mine == theirs


@dataclass
class FlowResult:
    """What one flow ran and every claim it judged."""

    flow: Flow
    claims: list[Claim] = field(default_factory=list)
    commands: list[Ran] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""  # a failure of the harness itself (never counted as arenalens')

    @property
    def failures(self) -> list[Claim]:
        return [claim for claim in self.claims if claim.outcome in (UNSAFE, WRONG)]


class Walk:
    """One flow's walk in its folder; `claims` fills as it goes."""

    def __init__(
        self,
        flow: Flow,
        folder: Path,
        *,
        wheel: Wheel,
        cortex_m: CortexM | None = None,
        device_sample: bool = False,
    ) -> None:
        self.flow = flow
        self.folder = folder
        self.wheel = wheel
        self.cortex_m = cortex_m if cortex_m is not None and cortex_m.available else None
        self.device_sample = device_sample
        self.result = FlowResult(flow)
        self._references: dict[Shapes, tuple[Outputs, list[Any]] | None] = {}
        self._judged: set[tuple[str, int, str]] = set()
        self.model = ""  # the model argument of the first command

    # -- recording ------------------------------------------------------------------------------
    def claim(self, kind: str, outcome: str, command: str, detail: str = "") -> None:
        self.result.claims.append(Claim(kind, outcome, command, detail))

    def run(self, *argv: str) -> Ran:
        """Run a command; judge what every command must do (no crash; bad input in one line)."""
        ran = run_cli(argv)
        self.result.commands.append(ran)
        if ran.code == 3 or "Traceback" in ran.err or "internal error" in ran.err:
            self.claim("no-crash", WRONG, ran.line, _first_line(ran.err))
        elif ran.code == 2:
            lines = ran.err.strip().splitlines()
            outcome = CONFIRMED if len(lines) == 1 and lines[0].startswith("arenalens") else WRONG
            self.claim("one-line-error", outcome, ran.line, ran.err.strip()[:300])
        return ran

    # -- the walk -------------------------------------------------------------------------------
    def walk(self) -> FlowResult:
        flow = self.flow
        started = time.perf_counter()
        if flow.subject.argument:
            self.model = flow.subject.argument
        else:
            (self.folder / "model.tflite").write_bytes(flow.subject.data)
            self.model = "model.tflite"
        subject, shape = self.model, flow.shape
        if flow.optimize is not None:
            written = self.optimize(flow.optimize)
            if written:
                subject, shape = OPTIMIZED, flow.later_shape
        self.command(subject, shape)
        self.result.seconds = time.perf_counter() - started
        return self.result

    def shape_options(self, shape: Sequence[str]) -> tuple[str, ...]:
        return tuple(word for value in shape for word in ("--input-shape", value))

    # -- optimize -------------------------------------------------------------------------------
    def optimize(self, flags: tuple[str, ...]) -> bool:
        flow = self.flow
        argv = (
            "optimize",
            self.model,
            *self.shape_options(flow.shape),
            *flow.build,
            *flags,
            "-o",
            OPTIMIZED,
            "--time-limit",
            OPTIMIZE_SECONDS,
            "--json",
        )
        ran = self.run(*argv)
        if flow.subject.placeholder and not flow.shape:
            outcome = CONFIRMED if ran.code == 2 and "--input-shape" in ran.err else WRONG
            self.claim("refuses-unknown-size", outcome, ran.line, ran.err.strip()[:200])
            return False
        document = ran.document()
        if ran.code not in (0, 1) or not isinstance(document, dict):
            return False
        written = bool(document.get("written"))
        if written != (self.folder / OPTIMIZED).is_file():
            self.claim("optimize-declares", WRONG, ran.line, f"written={written}, file differs")
            return False
        if not written:
            if "cannot run" in " ".join(document.get("notes", ())).lower():
                self.cannot_run(ran, self.model_data(self.model), flow.shape, _host(document))
            return False
        self.optimized(ran, document, flow.shape)
        return True

    def optimized(self, ran: Ran, document: dict[str, Any], shape: Sequence[str]) -> None:
        """A written model: what optimize said it declares is what check says; at that size the
        wheel computes the original's outputs (the host build), and at check's number on the
        host whatever build it was made for; on the QEMU sample, the device's too."""
        build = self.flow.build
        data = (self.folder / OPTIMIZED).read_bytes()
        promised = document.get("new_required_bytes")
        same_build = self.verdict_of(
            self.run("check", OPTIMIZED, *build, *self._budget_for(build), "--json")
        )
        if same_build is not None and promised is not None:
            if same_build.required == promised:
                self.claim("optimize-declares", CONFIRMED, ran.line)
            else:
                self.claim(
                    "optimize-declares",
                    WRONG,
                    ran.line,
                    f"optimize says {promised:,} B; check of the written model says "
                    f"{same_build.required} ({same_build.answer})",
                )
        host = (
            same_build
            if not build
            else self.verdict_of(self.run("check", OPTIMIZED, "--budget", ANY_BUDGET, "--json"))
        )
        if host is None:
            return
        if host.required is not None:
            self.number(
                "optimized-outputs", ran.line, data, (), number=host.required, build=host.build
            )
        elif host.runs and host.plan_holds and not build:
            self.claim(
                "optimized-outputs",
                WRONG,
                ran.line,
                f"written for the host, but check of it answers {host.answer}",
            )
        if build and same_build is not None and same_build.required is not None:
            self.device_outputs(ran.line, data, same_build, shape)

    def _budget_for(self, build: Sequence[str]) -> tuple[str, ...]:
        return () if build and build[0] == "--target" else ("--budget", ANY_BUDGET)

    # -- the command ----------------------------------------------------------------------------
    def command(self, subject: str, shape: tuple[str, ...]) -> None:
        flow = self.flow
        build = flow.build
        on_board = bool(build) and build[0] == "--target"
        base = self.verdict_of(
            self.run(
                "check",
                subject,
                *self.shape_options(shape),
                *build,
                *self._budget_for(build),
                "--json",
            )
        )
        budget: tuple[str, ...] = ()
        if flow.budget_ratio is not None:
            number = base.required if base is not None and base.required else 65536
            budget = ("--budget", _budget_text(number, flow.budget_ratio, flow.index))
        asked = (subject, *self.shape_options(shape), *build, *budget)
        if flow.command == "check":
            if not budget and not on_board:
                budget = ("--budget", ANY_BUDGET)
                asked = (*asked, *budget)
            ran = self.run("check", *asked, *flow.options, "--json")
            verdict = self.verdict_of(ran)
            if verdict is not None:
                self.judge(ran, verdict, subject, shape)
                if flow.follow_steps:
                    self.follow(ran, verdict.steps, subject, shape)
        elif flow.command == "report":
            ran = self.run("report", *asked, *flow.options, "--json")
            document = ran.document()
            if ran.code in (0, 1) and isinstance(document, dict):
                verdict = Verdict.of_report(document)
                self.judge(ran, verdict, subject, shape)
                self.agree(ran, verdict, subject, shape, budget)
                if flow.follow_steps:
                    self.follow(ran, verdict.steps, subject, shape)
        elif flow.command == "export":
            self.export(subject, shape, base)
        else:
            self.diagnose(subject, shape, base)

    def verdict_of(self, ran: Ran) -> Verdict | None:
        document = ran.document()
        if ran.code not in (0, 1) or not isinstance(document, dict):
            return None
        if "reports" in document:
            return Verdict.of_report(document)
        return Verdict.of_check(document) if "verdict" in document else None

    def judge(self, ran: Ran, verdict: Verdict, subject: str, shape: Sequence[str]) -> None:
        """A verdict: its exit code, its budget answer, its number or its CANNOT RUN."""
        outcome = CONFIRMED if ran.code == verdict.exit_code else WRONG
        self.claim("exit-code", outcome, ran.line, f"exit {ran.code}, verdict {verdict.answer}")
        if verdict.available is not None and verdict.required is not None:
            fits = verdict.required <= verdict.available
            if verdict.answer in FITS_ANSWERS or verdict.answer in SHORT_ANSWERS:
                right = fits == (verdict.answer in FITS_ANSWERS)
                self.claim(
                    "budget-answer",
                    CONFIRMED if right else WRONG,
                    ran.line,
                    f"{verdict.answer}: needs {verdict.required}, {verdict.available} available",
                )
        data = self.model_data(subject)
        if verdict.required is not None:
            self.number(
                "sets-up-at-n", ran.line, data, shape, number=verdict.required, build=verdict.build
            )
        elif not verdict.runs:
            self.cannot_run(ran, data, shape, verdict.on_host)

    # -- a number, a refusal: the real runtime --------------------------------------------------
    def number(
        self,
        kind: str,
        command: str,
        data: bytes,
        shape: Sequence[str],
        *,
        number: int,
        build: dict[str, Any],
    ) -> None:
        """`number` bytes, declared for `build`: on the host, the wheel sets the model (at the
        shapes asked) up there and computes the original's outputs."""
        if build.get("name", "host") != "host":
            self.device_number(command, data, shape, number, build)
            return
        at_shape = _at_shapes(data, shape)
        if at_shape is None:
            return  # the size was refused before any claim was made
        subject_bytes, model = at_shape
        key = (hashlib.sha256(subject_bytes).hexdigest(), number, kind)
        if key in self._judged:
            return
        self._judged.add(key)
        reference = self.reference(_input_shapes(model))
        inputs = reference[1] if reference is not None else self.wheel.inputs(model)
        at_number = self.wheel.run(subject_bytes, number, inputs)
        setup_kind = "sets-up-at-n"
        if not at_number.ok:
            roomy = self.wheel.roomy(subject_bytes, inputs)
            why = (
                f"the wheel fails at {number:,} B ({at_number.error})"
                if roomy.ok
                else f"the wheel refuses the model at any size ({roomy.error}) yet a number "
                f"({number:,} B) was given"
            )
            self.claim(setup_kind, UNSAFE, command, why)
            return
        self.claim(setup_kind, CONFIRMED, command, f"{number:,} B")
        output_kind = "outputs-at-n" if kind == "sets-up-at-n" else kind
        if reference is None or not reference[0].ok:
            error = "its size was refused" if reference is None else reference[0].error
            self.claim(output_kind, NOTED, command, f"the original does not run: {error}")
        elif at_number.same_as(reference[0]):
            self.claim(output_kind, CONFIRMED, command, f"{number:,} B")
        else:
            self.claim(
                output_kind, UNSAFE, command, f"other outputs than the original at {number:,} B"
            )
        if number > 16:
            below = self.wheel.run(subject_bytes, number - 16, inputs)
            self.claim(
                "minimal",
                CONFIRMED if not below.ok else NOTED,
                command,
                "" if not below.ok else f"also sets up at {number - 16:,} B",
            )

    def reference(self, shapes: Shapes) -> tuple[Outputs, list[Any]] | None:
        """The original model with these input shapes, without any offline plan, at a roomy
        arena: what every model of the flow at those shapes must compute (and its inputs)."""
        if shapes not in self._references:
            original = self.original_at(shapes)
            if original is None:
                self._references[shapes] = None
            else:
                data, model = original
                inputs = self.wheel.inputs(model)
                self._references[shapes] = (self.wheel.roomy(data, inputs), inputs)
        return self._references[shapes]

    def original_at(self, shapes: Shapes) -> tuple[bytes, Model] | None:
        """The flow's original model resized to these input shapes (by position), no plan."""
        model = parse_model(self.flow.subject.data, "original")
        if shapes != _input_shapes(model):
            try:
                model = resize_model_inputs(model, dict(enumerate(shapes)))
            except ArenalensError:
                return None
        data = model_bytes(model, drop_offline_plan=True)
        return data, parse_model(data, "original")

    def cannot_run(self, ran: Ran, data: bytes, shape: Sequence[str], on_host: bool) -> None:
        """CANNOT RUN: on the host, the wheel refuses it at a roomy arena."""
        at_shape = _at_shapes(data, shape)
        if at_shape is None:
            return
        subject_bytes, model = at_shape
        if not on_host:
            self.device_cannot_run(ran, subject_bytes)
            return
        roomy = self.wheel.roomy(subject_bytes, self.wheel.inputs(model))
        if roomy.ok:
            self.claim("cannot-run", WRONG, ran.line, "the wheel sets it up and invokes it")
        else:
            self.claim("cannot-run", CONFIRMED, ran.line, roomy.error[:200])

    # -- Cortex-M, on the QEMU sample ----------------------------------------------------------
    def device_target(self, build: dict[str, Any]) -> str | None:
        if self.cortex_m is None or not self.device_sample:
            return None
        return self.cortex_m.target_for(build)

    def device_number(
        self, command: str, data: bytes, shape: Sequence[str], number: int, build: dict[str, Any]
    ) -> None:
        target = self.device_target(build)
        if target is None or self.cortex_m is None:
            self.claim("device-sets-up-at-n", UNCHECKED, command, str(build.get("name")))
            return
        at_shape = _at_shapes(data, shape)
        if at_shape is None:
            return
        run = self.cortex_m.sets_up(at_shape[0], target, number)
        outcome = CONFIRMED if run.ok else UNSAFE
        self.claim(
            "device-sets-up-at-n", outcome, command, f"{target} at {number:,} B: {run.status}"
        )

    def device_outputs(
        self, command: str, data: bytes, verdict: Verdict, shape: Sequence[str]
    ) -> None:
        """An optimized model on its own device build: output hashes at its number equal the
        original's (at a roomy arena), on the output probe."""
        target = self.device_target(verdict.build)
        if target is None or self.cortex_m is None or verdict.required is None:
            return
        from flows.oracle import CORTEX_M_OUTPUT_TARGETS

        if target not in CORTEX_M_OUTPUT_TARGETS or verdict.required >= DEVICE_REFERENCE_ARENA:
            return
        written = _at_shapes(data, ())
        original = None if written is None else self.original_at(_input_shapes(written[1]))
        if original is None:
            return
        before = self.cortex_m.outputs(original[0], target, DEVICE_REFERENCE_ARENA)
        after = self.cortex_m.outputs(data, target, verdict.required)
        if not before.ok:
            self.claim("device-outputs-at-n", NOTED, command, f"original: {before.status}")
        elif after.ok and after.hashes == before.hashes:
            self.claim("device-outputs-at-n", CONFIRMED, command, target)
        else:
            self.claim(
                "device-outputs-at-n",
                UNSAFE,
                command,
                f"{target} at {verdict.required:,} B: {after.status}, outputs differ",
            )

    def device_cannot_run(self, ran: Ran, data: bytes) -> None:
        document = ran.document()
        build = document.get("build") if isinstance(document, dict) else None
        if not isinstance(build, dict):
            reports = document.get("reports") if isinstance(document, dict) else None
            build = reports[0].get("build") if reports else None
        target = self.device_target(build or {})
        if target is None or self.cortex_m is None:
            self.claim("cannot-run", UNCHECKED, ran.line, "a device build outside the sample")
            return
        from flows.oracle import CORTEX_M_OUTPUT_TARGETS

        if target not in CORTEX_M_OUTPUT_TARGETS:
            self.claim("cannot-run", UNCHECKED, ran.line, f"{target} has no output probe")
            return
        run = self.cortex_m.outputs(data, target, DEVICE_REFERENCE_ARENA, seeds="1")
        runs = run.ok and all("invoke failed" not in hashes for hashes in run.hashes.values())
        outcome = WRONG if runs else CONFIRMED
        self.claim("cannot-run", outcome, ran.line, f"{target}: {run.status}")

    # -- the other views ------------------------------------------------------------------------
    def agree(
        self,
        ran: Ran,
        verdict: Verdict,
        subject: str,
        shape: Sequence[str],
        budget: tuple[str, ...],
    ) -> None:
        """report's verdict is check's with the same options."""
        flow = self.flow
        on_board = bool(flow.build) and flow.build[0] == "--target"
        if not budget and not on_board:
            return  # report without a budget has no fit answer; check needs one
        options = [o for o in flow.options if o == "--max-input"]
        check = self.verdict_of(
            self.run(
                "check",
                subject,
                *self.shape_options(shape),
                *flow.build,
                *budget,
                *options,
                "--json",
            )
        )
        if check is None:
            return
        agrees = check.same_answer(verdict)
        self.claim(
            "views-agree",
            CONFIRMED if agrees else WRONG,
            ran.line,
            ""
            if agrees
            else f"report: {verdict.answer} {verdict.required}; "
            f"check: {check.answer} {check.required}",
        )

    def export(self, subject: str, shape: Sequence[str], base: Verdict | None) -> None:
        flow = self.flow
        build = tuple(word for word in flow.build) if flow.build[:1] != ("--target",) else ()
        if flow.build[:1] == ("--target",) and base is not None:
            build = _build_flags(base.build)
        ran = self.run("export", subject, *self.shape_options(shape), *build, *flow.options)
        if base is None or ran.code not in (0, 1):
            return
        if "c-header" in flow.options:
            header = self.folder / "arena.h"
            if base.required is None:
                right = ran.code == 1 and not header.exists()
                detail = "a header for a model without a number" if not right else ""
                self.claim("views-agree", CONFIRMED if right else WRONG, ran.line, detail)
                return
            declared = _header_size(header.read_text()) if header.exists() else None
            if declared is None:
                self.claim("views-agree", WRONG, ran.line, "no arena size in the header")
            elif declared < base.required:
                self.claim(
                    "views-agree", UNSAFE, ran.line, f"header {declared} < check {base.required}"
                )
            elif declared != base.required:
                self.claim(
                    "views-agree", WRONG, ran.line, f"header {declared} != check {base.required}"
                )
            else:
                self.claim("views-agree", CONFIRMED, ran.line)
                data = self.model_data(subject)
                self.number(
                    "sets-up-at-n", ran.line, data, shape, number=declared, build=base.build
                )
            return
        document = ran.document()
        if not isinstance(document, dict):
            self.claim("views-agree", WRONG, ran.line, "export --format json printed no document")
            return
        # The same answer to "does it run", and the same number when there is one.
        same: tuple[Any, ...] = (document.get("runs"),)
        expected: tuple[Any, ...] = (base.runs,)
        if base.required is not None:
            same += (document.get("required_bytes"),)
            expected += (base.required,)
        self.claim(
            "views-agree",
            CONFIRMED if same == expected else WRONG,
            ran.line,
            "" if same == expected else f"export {same}, check {expected}",
        )

    def diagnose(self, subject: str, shape: Sequence[str], base: Verdict | None) -> None:
        flow = self.flow
        build = flow.build if flow.build[:1] != ("--target",) else ()
        if flow.build[:1] == ("--target",) and base is not None:
            build = _build_flags(base.build)
        ran = self.run("diagnose", subject, *self.shape_options(shape), *build, "--json")
        document = ran.document()
        if base is None or ran.code not in (0, 1) or not isinstance(document, dict):
            return
        findings = document.get("findings", [])
        refused = any(finding["rule"] == "cannot-run" for finding in findings)
        right = refused == (not base.runs)
        self.claim(
            "views-agree",
            CONFIRMED if right else WRONG,
            ran.line,
            "" if right else f"cannot-run finding {refused}, check runs={base.runs}",
        )
        if not flow.follow_steps:
            return
        for finding in findings:
            text = f"{finding.get('message', '')} {finding.get('fix', '')}"
            for command in _quoted_commands(text):
                steps = [
                    {"command": command, "saves_bytes": finding.get("saving_bytes"), "text": text}
                ]
                if finding["rule"] not in ("planner-waste", "overlap-savings"):
                    steps[0]["saves_bytes"] = None
                self.follow(ran, steps, subject, shape)

    # -- the steps ------------------------------------------------------------------------------
    def follow(
        self, ran: Ran, steps: Sequence[dict[str, Any]], subject: str, shape: Sequence[str]
    ) -> None:
        """Run each step's command as printed, in order (an optimize step writes the file the
        next step checks), and judge what the step promised."""
        before = self.verdict_of(ran)
        for step in steps:
            command = step.get("command")
            if not command:
                continue
            words = shlex.split(command)
            if words[:1] != ["arenalens"] or len(words) < 2:
                self.claim("step-runs", WRONG, command, "not an arenalens command")
                continue
            if words[1] == "optimize":
                self.optimize_step(ran, step, words[1:], before)
                continue
            done = self.run(*words[1:])
            outcome = CONFIRMED if done.code in (0, 1) else WRONG
            self.claim("step-runs", outcome, command, f"exit {done.code} {_first_line(done.err)}")
            if outcome is WRONG or words[1] != "check":
                continue
            self.check_step(step, done, words[1:])

    def optimize_step(
        self, ran: Ran, step: dict[str, Any], words: list[str], before: Verdict | None
    ) -> None:
        command = "arenalens " + shlex.join(words)
        done = self.run(*words, "--json")
        document = done.document()
        if done.code not in (0, 1) or not isinstance(document, dict):
            self.claim("step-runs", WRONG, command, f"exit {done.code} {_first_line(done.err)}")
            return
        self.claim("step-runs", CONFIRMED, command, f"exit {done.code}")
        saves = step.get("saves_bytes")
        declares = _DECLARES.search(step.get("text", ""))
        written = bool(document.get("written"))
        if saves is not None or declares is not None:
            saved = document.get("saved_bytes") or 0
            new = document.get("new_required_bytes")
            promised = int(declares.group(1).replace(",", "")) if declares else None
            kept = written and (saves is None or saved >= saves)
            kept = kept and (promised is None or (new is not None and new <= promised))
            self.claim(
                "step-promise",
                CONFIRMED if kept else WRONG,
                command,
                f"promised saves {saves} / declares {promised}; wrote={written}, saved {saved}, "
                f"declares {new}",
            )
        if written:
            shape = _option_values(words, "--input-shape")
            build = _build_words(words)
            self.optimized_after_step(command, document, shape, build)

    def optimized_after_step(
        self, command: str, document: dict[str, Any], shape: Sequence[str], build: tuple[str, ...]
    ) -> None:
        data = (self.folder / OPTIMIZED).read_bytes()
        host = self.verdict_of(self.run("check", OPTIMIZED, "--budget", ANY_BUDGET, "--json"))
        if host is not None and host.required is not None:
            self.number(
                "optimized-outputs", command, data, (), number=host.required, build=host.build
            )
        elif host is not None and host.runs and host.plan_holds and not build:
            self.claim(
                "optimized-outputs", WRONG, command, f"check of the written model: {host.answer}"
            )

    def check_step(self, step: dict[str, Any], done: Ran, words: list[str]) -> None:
        """A check a step suggests: 'Then check the written model' after 'which fits' must say
        FITS; 'the largest that fits is X, needing N B' must be FITS at N."""
        text = step.get("text", "")
        verdict = self.verdict_of(self.run(*words, "--json"))
        if verdict is None:
            return
        needing = _NEEDING.search(text)
        if "largest that fits" in text and needing:
            number = int(needing.group(1).replace(",", ""))
            kept = verdict.answer in FITS_ANSWERS and verdict.required == number
            self.claim(
                "step-promise",
                CONFIRMED if kept else WRONG,
                step["command"],
                f"promised FITS at {number:,}; {verdict.answer} at {verdict.required}",
            )
        if text.startswith("Then check the written model"):
            kept = verdict.answer in FITS_ANSWERS
            self.claim(
                "step-promise", CONFIRMED if kept else WRONG, step["command"], str(verdict.answer)
            )
        if verdict.required is not None:
            shape = _option_values(words, "--input-shape")
            subject = words[1]
            self.number(
                "sets-up-at-n",
                step["command"],
                self.model_data(subject),
                shape,
                number=verdict.required,
                build=verdict.build,
            )

    # -- files ----------------------------------------------------------------------------------
    def model_data(self, argument: str) -> bytes:
        if argument.startswith("example:"):
            from arenalens.examples import example_bytes

            return example_bytes(argument.removeprefix("example:"))
        return (self.folder / argument).read_bytes()


# ---------------------------------------------------------------------------------------------
# Helpers


def _input_shapes(model: Model) -> Shapes:
    subgraph = model.subgraphs[0]
    return tuple(tuple(subgraph.tensors[index].shape) for index in subgraph.inputs)


def _at_shapes(
    data: bytes, shape: Sequence[str], *, drop_plan: bool = False
) -> tuple[bytes, Model] | None:
    """Model bytes with its inputs resized to the --input-shape values (shapes propagated by the
    real LiteRT interpreter, as the CLI does): the file the claim is about. None when the size
    is refused."""
    model = parse_model(data, "flow")
    if shape:
        try:
            model = resize_model_inputs(model, dict(parse_input_shape(text) for text in shape))
        except ArenalensError:
            return None
    resized = model_bytes(model, drop_offline_plan=drop_plan)
    return resized, parse_model(resized, "flow")


def _budget_text(number: int, ratio: float, index: int) -> str:
    """A budget near `ratio` times the number: in bytes, or in KB as a datasheet writes it."""
    nbytes = max(1, math.floor(number * ratio))
    if index % 2:
        return str(nbytes)
    return f"{max(1, nbytes // 1024)}KB"


def _header_size(text: str) -> int | None:
    found = re.search(r"#define \w+_ARENA_SIZE (\d+)u", text)
    return int(found.group(1)) if found else None


def _build_flags(build: dict[str, Any]) -> tuple[str, ...]:
    """A build's --cpu / --kernels (for commands that take no --target)."""
    from arenalens.builds.build import build_flags

    return tuple(shlex.split(build_flags(build)))


def _build_words(words: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    for option in ("--cpu", "--kernels", "--target"):
        found += [option, *_option_values(words, option)[:1]] if option in words else []
    return tuple(found)


def _option_values(words: Sequence[str], option: str) -> tuple[str, ...]:
    return tuple(words[i + 1] for i, word in enumerate(words[:-1]) if word == option)


def _quoted_commands(text: str) -> list[str]:
    return [part for part in text.split("`")[1::2] if part.startswith("arenalens ")]


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def _host(document: dict[str, Any]) -> bool:
    build = document.get("build") or {}
    return bool(build.get("name", "host") == "host")


def folder_for(base: Path, flow: Flow) -> Path:
    folder = base / f"flow-{flow.index}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def inside(folder: Path) -> Any:
    """Run with `folder` as the working directory (the steps write optimized.tflite there)."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(previous)
