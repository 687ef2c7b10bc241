"""The steps a command suggests, run as printed and held to their word.

Each step's command runs in the flow's folder, in order (an optimize step writes the file the next
step checks). What a step promises is checked on what running it gives: an optimize step saves at
least the bytes it says and declares at most the number it says, and the model it writes computes
the original's outputs on the wheel at its own number; "Then check the written model" after "which
fits" answers FITS; "the largest that fits is X, needing N B" is FITS at exactly N; and every
number a suggested check prints is judged like the first command's.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flows.claims import CONFIRMED, WRONG
from flows.commands import ANY_BUDGET, FITS_ANSWERS, build_words, first_line, option_values

if TYPE_CHECKING:  # the walk runs the steps; the steps use its runner and judge
    from flows.walk import Walk

_DECLARES = re.compile(r"declares ([\d,]+) B")
# What a remedy step promises the written model leaves: 'declares 193,048 B (44,520 B to spare
# in sram1; ...' (after a placement in banks: '(persistent ... in X, non-persistent ... in Y;
# 1,024 B to spare').
_LEAVES = re.compile(r"declares ([\d,]+) B \((?:[^();]*; )?([\d,]+) B to spare[^;]*")
_NEEDING = re.compile(r"needing ([\d,]+) B")


def follow(walk: Walk, steps: Sequence[dict[str, Any]]) -> None:
    """Run each step's command as printed, in order (an optimize step writes the file the
    next step checks), and judge what the step promised."""
    promise: dict[str, Any] | None = None  # the last optimize step's, for the check after it
    for step in steps:
        command = step.get("command")
        if not command:
            continue
        words = shlex.split(command)
        if words[:1] != ["arenalens"] or len(words) < 2:
            walk.claim("step-runs", WRONG, command, "not an arenalens command")
            continue
        if words[1] == "optimize":
            optimize_step(walk, step, words[1:])
            promise = step
            continue
        done = walk.run(*words[1:])
        outcome = CONFIRMED if done.code in (0, 1) else WRONG
        walk.claim("step-runs", outcome, command, f"exit {done.code} {first_line(done.err)}")
        if outcome is WRONG or words[1] != "check":
            continue
        check_step(walk, step, words[1:], promise)


def optimize_step(walk: Walk, step: dict[str, Any], words: list[str]) -> None:
    """An optimize a step suggests: it runs as printed (with --json, to read what it did),
    saves at least the bytes promised, declares exactly the number promised (the same search at
    the same effort), and the model it writes computes the original's outputs on the wheel at
    what check says it declares."""
    command = "arenalens " + shlex.join(words)
    done = walk.run(*words, "--json")
    document = done.document()
    if done.code not in (0, 1) or not isinstance(document, dict):
        walk.claim("step-runs", WRONG, command, f"exit {done.code} {first_line(done.err)}")
        return
    walk.claim("step-runs", CONFIRMED, command, f"exit {done.code}")
    saves = step.get("saves_bytes")
    declares = _DECLARES.search(step.get("text", ""))
    written = bool(document.get("written"))
    if saves is not None or declares is not None:
        saved = document.get("saved_bytes") or 0
        new = document.get("new_required_bytes")
        promised = int(declares.group(1).replace(",", "")) if declares else None
        kept = written and (saves is None or saved >= saves)
        kept = kept and (promised is None or new == promised)
        walk.claim(
            "step-promise",
            CONFIRMED if kept else WRONG,
            command,
            f"promised saves {saves} / declares {promised}; wrote={written}, saved {saved}, "
            f"declares {new}",
        )
    outputs = option_values(words, "-o")
    if written and outputs:
        optimized_after_step(walk, command, outputs[0], device_build=bool(build_words(words)))


def optimized_after_step(walk: Walk, command: str, output: str, *, device_build: bool) -> None:
    """The file an optimize step wrote, checked on the host: the wheel computes the original's
    outputs at its number (a plan for a device build may also answer CANNOT RUN CORRECTLY)."""
    data = (walk.folder / output).read_bytes()
    host = walk.verdict_of(walk.run("check", output, "--budget", ANY_BUDGET, "--json"))
    if host is not None and host.required is not None:
        walk.judge.number(
            "optimized-outputs", command, data, (), number=host.required, build=host.build
        )
    elif host is not None and host.runs and host.plan_holds and not device_build:
        walk.claim(
            "optimized-outputs", WRONG, command, f"check of the written model: {host.answer}"
        )


def check_step(
    walk: Walk, step: dict[str, Any], words: list[str], promise: dict[str, Any] | None = None
) -> None:
    """A check a step suggests: 'Then check the written model' after 'which fits' must say
    FITS, with what the optimize step promised it leaves (and TIGHT when it said so), and on a
    device build of the sample the written model computes the original's outputs at its number;
    'the largest that fits is X, needing N B' must be FITS at N."""
    text = step.get("text", "")
    ran = walk.run(*words, "--json")
    verdict = walk.verdict_of(ran)
    if verdict is None:
        return
    needing = _NEEDING.search(text)
    if "largest that fits" in text and needing:
        number = int(needing.group(1).replace(",", ""))
        kept = verdict.answer in FITS_ANSWERS and verdict.required == number
        walk.claim(
            "step-promise",
            CONFIRMED if kept else WRONG,
            step["command"],
            f"promised FITS at {number:,}; {verdict.answer} at {verdict.required}",
        )
    if text.startswith("Then check the written model"):
        kept = verdict.answer in FITS_ANSWERS
        walk.claim(
            "step-promise", CONFIRMED if kept else WRONG, step["command"], str(verdict.answer)
        )
        leaves = _LEAVES.search((promise or {}).get("text", ""))
        document = ran.document()
        if leaves is not None and isinstance(document, dict):
            declares, spare = (int(group.replace(",", "")) for group in leaves.group(1, 2))
            # The promise's figure holds on every library the core may link (--cpu alone): a
            # check for one of them may need less; what it leaves is then its own.
            if declares == verdict.required:
                tight = "FITS, TIGHT" in leaves.group(0)
                same = document.get("headroom_bytes") == spare and tight is (
                    verdict.answer == "FITS, TIGHT"
                )
                walk.claim(
                    "step-promise",
                    CONFIRMED if same else WRONG,
                    step["command"],
                    f"promised {spare:,} B to spare{' (TIGHT)' if tight else ''}; check says "
                    f"{document.get('headroom_bytes')} ({verdict.answer})",
                )
        if verdict.required is not None and not verdict.on_host and verdict.runtime == "tflm":
            walk.judge.device_outputs(step["command"], walk.model_data(words[1]), verdict)
    if verdict.runtime == "litert":
        shape = option_values(words, "--input-shape")
        data = walk.model_data(words[1])
        walk.judge.litert_verdict(step["command"], data, shape, verdict, words)
    elif verdict.required is not None:
        shape = option_values(words, "--input-shape")
        subject = words[1]
        walk.judge.number(
            "sets-up-at-n",
            step["command"],
            walk.model_data(subject),
            shape,
            number=verdict.required,
            build=verdict.build,
        )
