"""The other views of one verdict: report, export and diagnose say what check says.

* report's verdict (answer, runs, plan holds, shape known, the number) is check's with the same
  model, input shapes, build and budget;
* export's C header declares check's number (more would waste, less is unsafe) and none at all for
  a model without a number; its JSON says the same "runs" and number;
* diagnose has a cannot-run finding exactly when check says CANNOT RUN, and every command its
  findings name runs as printed and saves what the finding says (planner-waste, overlap-savings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flows.claims import CONFIRMED, UNSAFE, WRONG
from flows.commands import (
    Ran,
    Verdict,
    build_flags_of,
    header_size,
    header_split,
    quoted_commands,
)
from flows.steps import follow

if TYPE_CHECKING:  # the walk shows each view; the views use its runner and judge
    from flows.walk import Walk


def agree(
    walk: Walk,
    ran: Ran,
    verdict: Verdict,
    subject: str,
    shape: Sequence[str],
    *,
    budget: tuple[str, ...],
) -> None:
    """report's verdict is check's with the same options."""
    flow = walk.flow
    on_board = bool(flow.build) and flow.build[0] == "--target"
    if not budget and not on_board:
        return  # report without a budget has no fit answer; check needs one
    # check takes report's options but --overlap (--max-input, LiteRT's --delegate, --isa ...).
    options = [o for o in flow.options if o != "--overlap"]
    check = walk.verdict_of(
        walk.run(
            "check",
            subject,
            *walk.shape_options(shape),
            *flow.build,
            *budget,
            *options,
            "--json",
        )
    )
    if check is None:
        return
    agrees = check.same_answer(verdict)
    walk.claim(
        "views-agree",
        CONFIRMED if agrees else WRONG,
        ran.line,
        ""
        if agrees
        else f"report: {verdict.answer} {verdict.required}; check: {check.answer} {check.required}",
    )


# The statuses that give a number to declare (declared.Status.gives_a_number).
NUMBERED = ("exact", "estimate")


def typed_build(walk: Walk, base: Verdict | None) -> tuple[str, ...]:
    """The build options export and diagnose are given: the board as users type it (`--wide`;
    a Linux device is LiteRT's there too), else the board's core and kernels as check named
    them."""
    flow = walk.flow
    if flow.wide or flow.build[:1] != ("--target",):
        return flow.build
    return build_flags_of(base.build) if base is not None else ()


def export(walk: Walk, subject: str, shape: Sequence[str], base: Verdict | None) -> None:
    flow = walk.flow
    build = typed_build(walk, base)
    ran = walk.run("export", subject, *walk.shape_options(shape), *build, *flow.options)
    if base is None or ran.code not in (0, 1):
        return
    if base.runtime == "litert" and "c-header" in flow.options:
        _litert_header(walk, ran, subject, shape)
        return
    if base.runtime == "litert":
        # export's plan document says whether LiteRT runs the model under the delegate it is
        # given (XNNPACK by default), as check with that delegate says it (the flow's check);
        # its builtin kernels' heap is the one check --delegate none counts.
        asked = walk.run(
            "check",
            subject,
            *walk.shape_options(shape),
            *flow.build,
            *walk.budget_for(flow.build),
            "--delegate",
            "none",
            "--json",
        )
        builtin = walk.verdict_of(asked)
        if builtin is not None:
            _litert_export(walk, ran, builtin, base)
            data = walk.model_data(subject)
            walk.judge.litert_verdict(asked.line, data, shape, builtin, asked.argv)
        return
    if "c-header" in flow.options:
        header = walk.folder / "arena.h"
        if base.required is None:
            right = ran.code == 1 and not header.exists()
            detail = "a header for a model without a number" if not right else ""
            walk.claim("views-agree", CONFIRMED if right else WRONG, ran.line, detail)
            return
        declared = header_size(header.read_text()) if header.exists() else None
        if declared is None:
            walk.claim("views-agree", WRONG, ran.line, "no arena size in the header")
        elif declared < base.required:
            walk.claim(
                "views-agree", UNSAFE, ran.line, f"header {declared} < check {base.required}"
            )
        elif declared != base.required:
            walk.claim(
                "views-agree", WRONG, ran.line, f"header {declared} != check {base.required}"
            )
        else:
            walk.claim("views-agree", CONFIRMED, ran.line)
            data = walk.model_data(subject)
            walk.judge.number(
                "sets-up-at-n", ran.line, data, shape, number=declared, build=base.build
            )
            split = header_split(header.read_text())
            if split is not None:
                walk.judge.device_two_buffers(ran.line, data, shape, split, base.build)
        return
    document = ran.document()
    if not isinstance(document, dict):
        walk.claim("views-agree", WRONG, ran.line, "export --format json printed no document")
        return
    # The same answer to "does it run", and the same number when there is one.
    same: tuple[Any, ...] = (document.get("runs"),)
    expected: tuple[Any, ...] = (base.runs,)
    if base.required is not None:
        same += (document.get("required_bytes"),)
        expected += (base.required,)
    walk.claim(
        "views-agree",
        CONFIRMED if same == expected else WRONG,
        ran.line,
        "" if same == expected else f"export {same}, check {expected}",
    )
    _compare(walk, subject, shape, build, base)


def _compare(
    walk: Walk, subject: str, shape: Sequence[str], build: Sequence[str], base: Verdict
) -> None:
    """compare leads with check's answer: CANNOT RUN, no number, or check's number; exit 1
    when there is no number to trust (flows6: it printed planner tables and exited 0)."""
    ran = walk.run(
        "compare", subject, *walk.shape_options(shape), *build, "--planners", "naive", "--json"
    )
    document = ran.document()
    if ran.code not in (0, 1) or not isinstance(document, dict):
        return
    declare = document.get("declare") or {}
    number = declare.get("required_bytes") if declare.get("status") in NUMBERED else None
    seen = (declare.get("status") != "cannot-run", number, ran.code)
    expected = (base.runs, base.required, 0 if base.required is not None else 1)
    walk.claim(
        "views-agree",
        CONFIRMED if seen == expected else WRONG,
        ran.line,
        "" if seen == expected else f"compare (runs, number, exit) {seen}, check {expected}",
    )


def _litert_header(walk: Walk, ran: Ran, subject: str, shape: Sequence[str]) -> None:
    """A LiteRT header carries what check with the same delegate, ISA and threads says the app
    needs, written only where check gives a number, and nothing a TFLM build would take for
    its arena (no kTensorArenaSize, no <PREFIX>_ARENA_SIZE)."""
    flow = walk.flow
    litert = tuple(flow.options[flow.options.index("-o") + 2 :])
    asked = walk.run(
        "check",
        subject,
        *walk.shape_options(shape),
        *flow.build,
        *walk.budget_for(flow.build),
        *litert,
        "--json",
    )
    check = walk.verdict_of(asked)
    if check is None:
        return
    header = walk.folder / "arena.h"
    text = header.read_text() if header.exists() else ""
    found = re.search(r"#define \w+_LITERT_MEMORY_BYTES (\d+)u", text)
    memory = int(found.group(1)) if found else None
    if check.required is None:
        right, detail = not header.exists(), "a header for a model without a number"
    elif header_size(text) is not None or "kTensorArenaSize" in text:
        right, detail = False, "a LiteRT header declares a TFLM arena"
    elif memory is not None and memory < check.required:
        walk.claim("views-agree", UNSAFE, ran.line, f"header memory {memory} < {check.required}")
        return
    else:
        right, detail = memory == check.required, f"header memory {memory} != {check.required}"
    walk.claim("views-agree", CONFIRMED if right else WRONG, ran.line, "" if right else detail)


def _litert_export(walk: Walk, ran: Ran, base: Verdict, delegated: Verdict) -> None:
    if "c-header" in walk.flow.options:
        # A header only where check gives a number (not for an input of unknown size).
        written = (walk.folder / "arena.h").exists()
        numbered = base.required is not None
        right = written == numbered
        detail = "" if right else f"header written {written}, check's number {base.required}"
    else:
        document = ran.document()
        runs = document.get("runs") if isinstance(document, dict) else None
        right = runs == delegated.runs
        detail = "" if right else f"export runs={runs}, check runs={delegated.runs}"
        # The builtin kernels' heap it documents is the one check counts (on a Linux device,
        # for its ISA: flows6 found the x86-64 heap exported for an arm64 Pi).
        heaps = document.get("interpreter_heap") or [] if isinstance(document, dict) else []
        peak = next((heap["peak_bytes"] for heap in heaps if heap["delegate"] == "none"), None)
        if right and base.heap_peak is not None and peak != base.heap_peak:
            right = False
            detail = f"export's builtin heap peak {peak}, check's {base.heap_peak}"
    walk.claim("views-agree", CONFIRMED if right else WRONG, ran.line, detail)


def diagnose(walk: Walk, subject: str, shape: Sequence[str], base: Verdict | None) -> None:
    flow = walk.flow
    build = typed_build(walk, base)
    ran = walk.run("diagnose", subject, *walk.shape_options(shape), *build, "--json")
    document = ran.document()
    if base is None or ran.code not in (0, 1) or not isinstance(document, dict):
        return
    findings = document.get("findings", [])
    # An error: the runtime as check judges it (LiteRT with XNNPACK); a warning-level one is a
    # refusal of the builtin kernels alone, for an operator XNNPACK takes.
    refused = any(
        finding["rule"] == "cannot-run" and finding["severity"] == "error" for finding in findings
    )
    right = refused == (not base.runs)
    walk.claim(
        "views-agree",
        CONFIRMED if right else WRONG,
        ran.line,
        "" if right else f"cannot-run finding {refused}, check runs={base.runs}",
    )
    if not flow.follow_steps:
        return
    for finding in findings:
        text = f"{finding.get('message', '')} {finding.get('fix', '')}"
        # planner-waste and overlap-savings promise what their optimize saves.
        saves = finding["rule"] in ("planner-waste", "overlap-savings")
        steps = [
            {
                "command": command,
                "saves_bytes": finding.get("saving_bytes") if saves else None,
                "text": text,
            }
            for command in quoted_commands(text)
        ]
        follow(walk, steps)


def text_agrees(walk: Walk, ran: Ran, verdict: Verdict) -> None:
    """check's or report's text says what its --json says (`verdict`, read from it): the same
    exit code, the answer, the number (as '24,272 B') and every step's command (wrapping
    aside)."""
    if ran.code not in (0, 1):
        return
    text = walk.run(*[word for word in ran.argv if word != "--json"], "--no-color")
    flat = "".join(text.out.split())
    missing = [] if text.code == ran.code else [f"exit {text.code} (--json: {ran.code})"]
    if verdict.answer and "".join(str(verdict.answer).split()) not in flat:
        missing.append(str(verdict.answer))
    if verdict.required is not None:
        number = f"{verdict.required:,}B"
        missing += [] if number in flat else [number]
    for step in verdict.steps or ():
        command = step.get("command")
        if command and "".join(command.split()) not in flat:
            missing.append(command)
    walk.claim(
        "text-agrees",
        WRONG if missing else CONFIRMED,
        text.line,
        f"the text lacks {missing}" if missing else "",
    )
