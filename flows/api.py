"""The Python API says what the CLI says: `arenalens.check` with the options a flow's check was
given, as a script would pass them, answers the document `check --json` printed, key for key
(the brief: a Python API that does what the CLI does)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flows.claims import CONFIRMED, WRONG
from flows.commands import Ran, option_values

if TYPE_CHECKING:  # the walk runs check; this module asks the API the same
    from flows.walk import Walk

# check's options the API takes as keyword arguments of the same meaning (text as typed).
KEYWORDS = {
    "--budget": "budget",
    "--target": "target",
    "--reserve": "reserve",
    "--tflm": "tflm",
    "--runtime": "runtime",
    "--delegate": "delegate",
    "--isa": "isa",
    "--planner": "planner",
    "--fast-memory": "fast_memory",
}
# Options with no API argument: a check given one is not compared.
CLI_ONLY = ("--max-input", "--all", "--jobs", "-j")


def api_keywords(words: Sequence[str]) -> dict[str, Any] | None:
    """check's argv (without `check MODEL`) → arenalens.check's keyword arguments, or None when
    it uses an option the API does not take."""
    if any(option in words for option in CLI_ONLY):
        return None
    keywords: dict[str, Any] = {
        name: option_values(words, option)[-1]
        for option, name in KEYWORDS.items()
        if option_values(words, option)
    }
    if option_values(words, "--threads"):
        keywords["threads"] = int(option_values(words, "--threads")[-1])
    if option_values(words, "--input-shape"):
        keywords["input_shapes"] = list(option_values(words, "--input-shape"))
    if option_values(words, "--resource-variables"):
        keywords["resource_variables"] = int(option_values(words, "--resource-variables")[-1])
    if "--weights-in-sram" in words:
        keywords["weights_in_sram"] = True
    cpu = option_values(words, "--cpu")
    kernels = option_values(words, "--kernels")
    npu = option_values(words, "--npu")
    if cpu:
        from arenalens import device_build

        tflm = keywords.pop("tflm", None)
        keywords["build"] = device_build(
            cpu[-1], kernels[-1] if kernels else None, tflm=tflm, npu=npu[-1] if npu else None
        )
    elif kernels or npu:
        return None  # (a board's core with other kernels or NPU: no API argument names it)
    return keywords


def api_agrees(walk: Walk, ran: Ran) -> None:
    """`arenalens.check(model, **options)` → the same document as `check --json` printed."""
    words = ran.argv
    document = ran.document()
    if ran.code not in (0, 1) or not isinstance(document, dict) or len(words) < 2:
        return
    keywords = api_keywords(words[2:])
    if keywords is None:
        return
    import arenalens

    try:
        answer = json.loads(json.dumps(arenalens.check(words[1], **keywords).as_dict()))
    except arenalens.ArenalensError as error:
        walk.claim("api-agrees", WRONG, ran.line, f"the API refuses: {error}"[:300])
        return
    differing = sorted(
        key for key in set(answer) | set(document) if answer.get(key) != document.get(key)
    )
    walk.claim(
        "api-agrees",
        WRONG if differing else CONFIRMED,
        ran.line,
        f"arenalens.check(..., {sorted(keywords)}) differs in {differing}" if differing else "",
    )
