"""Walking one flow: its commands run through the CLI's Python entry (in-process), in a folder of
their own, and every claim they make is judged by the real runtime.

The path: the model (written to model.tflite, or `example:NAME`), maybe `optimize` with the flow's
flags first (the written model then is the subject, asked about at its own size or another), then
the flow's command on the subject (check, report, export or diagnose), then the steps it suggests,
run as printed (`steps.py`). What is judged (`claims.py` names each kind):

* every command: no internal error; bad input or usage in one line, exit 2;
* a verdict: its exit code, FITS / DOES NOT FIT against its budget, and its number or its CANNOT
  RUN on the real runtime (`judge.py`);
* an optimized model: the figure optimize printed is what check gives the written file, and at
  check's number the wheel computes the original's outputs, whatever build it was written for;
* the other views say what check says (`views.py`).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.api import api_agrees
from flows.claims import CONFIRMED, UNSAFE, WRONG, Claim
from flows.commands import (
    ANY_BUDGET,
    FITS_ANSWERS,
    OPTIMIZED,
    SHORT_ANSWERS,
    Ran,
    Verdict,
    budget_text,
    first_line,
    quoted_commands,
    run_cli,
)
from flows.flow import Flow
from flows.judge import Judge
from flows.npu import compile_for_npu
from flows.oracle import CortexM, LiteRTHeap, Wheel
from flows.steps import follow
from flows.views import agree, diagnose, export, text_agrees

# Search effort optimize gets in a flow (its own steps, run as printed, take the CLI's default).
OPTIMIZE_EFFORT = "2"


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
        litert: LiteRTHeap | None = None,
    ) -> None:
        self.flow = flow
        self.folder = folder
        self.judge = Judge(
            flow.subject.data,
            wheel=wheel,
            cortex_m=cortex_m,
            device_sample=device_sample,
            litert=litert,
        )
        self.result = FlowResult(flow, claims=self.judge.claims)
        self.model = ""  # the model argument of the first command

    # -- recording ------------------------------------------------------------------------------
    def claim(self, kind: str, outcome: str, command: str, detail: str = "") -> None:
        self.judge.claim(kind, outcome, command, detail)

    def run(self, *argv: str, suggested: bool = False) -> Ran:
        """Run a command; judge what every command must do (no crash; bad input in one line;
        the commands a refusal names instead run as printed)."""
        ran = run_cli(argv)
        self.result.commands.append(ran)
        if ran.code == 3 or "Traceback" in ran.err or "internal error" in ran.err:
            self.claim("no-crash", WRONG, ran.line, first_line(ran.err))
        elif ran.code == 2:
            lines = ran.err.strip().splitlines()
            outcome = CONFIRMED if len(lines) == 1 and lines[0].startswith("arenalens") else WRONG
            self.claim("one-line-error", outcome, ran.line, ran.err.strip()[:300])
            if not suggested:
                self.run_suggested(ran)
        return ran

    def run_suggested(self, refused: Ran) -> None:
        """A refusal's `arenalens ...` commands ('run: `arenalens check ... --kernels reference`
        or ...'), each as printed: it runs (exit 0 or 1)."""
        for command in quoted_commands(refused.err):
            done = self.run(*shlex.split(command)[1:], suggested=True)
            self.claim(
                "step-runs",
                CONFIRMED if done.code in (0, 1) else WRONG,
                command,
                f"named by a refusal; exit {done.code} {first_line(done.err)}",
            )

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
        if flow.vela:
            self.model = compile_for_npu(self) or self.model
            subject = self.model
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
            "--effort",
            OPTIMIZE_EFFORT,
            "--json",
        )
        before = len(self.result.commands)
        ran = self.run(*argv)
        if flow.subject.placeholder and not flow.shape:
            # The size is said unknown with --input-shape, or a refusal that comes first (optimize
            # on a LiteRT device: seed 1500301 flow 203) names the command that applies there,
            # which `run` ran as printed, and that one says it (INPUT SHAPE UNKNOWN, --input-shape).
            named = self.result.commands[before + 1 :]
            said = "--input-shape" in ran.err or (
                bool(named) and all("--input-shape" in done.out + done.err for done in named)
            )
            outcome = CONFIRMED if ran.code == 2 and said else WRONG
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
                data = self.model_data(self.model)
                build = document.get("build") or {}
                self.judge.cannot_run(ran.line, data, flow.shape, build)
            return False
        self.optimized(ran, document)
        return True

    def optimized(self, ran: Ran, document: dict[str, Any]) -> None:
        """A written model: what optimize said it declares is what check says; at that size the
        wheel computes the original's outputs (the host build), and at check's number on the
        host whatever build it was made for; on the QEMU sample, the device's too."""
        build = self.flow.build
        data = (self.folder / OPTIMIZED).read_bytes()
        promised = document.get("new_required_bytes")
        same_build = self.verdict_of(
            self.run("check", OPTIMIZED, *build, *self.budget_for(build), "--json")
        )
        if same_build is not None and promised is not None:
            self._declares(ran, document, promised, same_build)
        host = (
            same_build
            if not build
            else self.verdict_of(self.run("check", OPTIMIZED, "--budget", ANY_BUDGET, "--json"))
        )
        if host is None:
            return
        if host.required is not None:
            self.judge.number(
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
            self.judge.device_outputs(ran.line, data, same_build)

    def budget_for(self, build: Sequence[str]) -> tuple[str, ...]:
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
                *self.budget_for(build),
                "--json",
            )
        )
        budget: tuple[str, ...] = ()
        if flow.budget_ratio is not None:
            number = base.required if base is not None and base.required else 65536
            budget = ("--budget", budget_text(number, flow.budget_ratio, flow.index))
        asked = (subject, *self.shape_options(shape), *build, *budget)
        if flow.command == "check":
            if not budget and not on_board:
                budget = ("--budget", ANY_BUDGET)
                asked = (*asked, *budget)
            ran = self.run("check", *asked, *flow.options, "--json")
            verdict = self.verdict_of(ran)
            if verdict is not None:
                api_agrees(self, ran)
                text_agrees(self, ran, verdict)
                self.judge_verdict(ran, verdict, subject, shape)
                if flow.follow_steps:
                    follow(self, verdict.steps)
        elif flow.command == "report":
            ran = self.run("report", *asked, *flow.options, "--json")
            document = ran.document()
            if ran.code in (0, 1) and isinstance(document, dict):
                verdict = Verdict.of_report(document)
                self.judge_verdict(ran, verdict, subject, shape)
                text_agrees(self, ran, verdict)
                agree(self, ran, verdict, subject, shape, budget=budget)
                if flow.follow_steps:
                    follow(self, verdict.steps)
        elif flow.command == "export":
            export(self, subject, shape, base)
        else:
            diagnose(self, subject, shape, base)

    def _declares(
        self, ran: Ran, document: dict[str, Any], promised: int, same_build: Verdict
    ) -> None:
        """optimize's number is check's of the written model; for a plan made for every library
        the core may link (no --kernels), the largest of its figures per build, and its figure
        for check's build is check's (`kernel_paths.overlap_rules`)."""
        by_build = document.get("new_required_by_build") or {}
        checked = same_build.required
        if len(by_build) > 1:
            for_check = by_build.get(same_build.build.get("name"))
            right = promised == max(by_build.values()) and for_check == checked
            detail = (
                f"optimize says {promised:,} B, the largest of {by_build}; check of the written "
                f"model says {checked} ({same_build.answer})"
            )
        else:
            right = checked == promised
            detail = (
                f"optimize says {promised:,} B; check of the written model says "
                f"{checked} ({same_build.answer})"
            )
        self.claim("optimize-declares", CONFIRMED if right else WRONG, ran.line, detail)

    def verdict_of(self, ran: Ran) -> Verdict | None:
        document = ran.document()
        if ran.code not in (0, 1) or not isinstance(document, dict):
            return None
        if "reports" in document:
            return Verdict.of_report(document)
        return Verdict.of_check(document) if "verdict" in document else None

    def judge_verdict(self, ran: Ran, verdict: Verdict, subject: str, shape: Sequence[str]) -> None:
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
        if verdict.runtime == "litert":
            self.judge.litert_verdict(ran.line, data, shape, verdict, ran.argv)
        elif verdict.required is not None:
            self.judge.number(
                "sets-up-at-n", ran.line, data, shape, number=verdict.required, build=verdict.build
            )
        elif not verdict.runs:
            self.judge.cannot_run(ran.line, data, shape, verdict.build)

    def model_data(self, argument: str) -> bytes:
        if argument.startswith("example:"):
            from arenalens.examples import example_bytes

            return example_bytes(argument.removeprefix("example:"))
        return (self.folder / argument).read_bytes()
