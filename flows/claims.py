"""Claims and their judgements: what a flow's commands said, and what the real runtime answered.

Every judgement is one `Claim`: its kind, what it is about (the command that made it), and the
outcome:

* **confirmed**: the real runtime (or the command run as printed) agrees;
* **unsafe**: following the claim breaks firmware: a number N at which the runtime does not set
  the model up, a model that runs but computes other outputs at the size it says to declare, a
  number for a model the runtime refuses, a C header declaring less than the verdict;
* **wrong**: false but not dangerous: CANNOT RUN for a model the runtime runs, a suggested command
  that does not run as printed or gives less than it promised, two views of one verdict that
  disagree, an exit code other than the verdict's, an internal error;
* **noted**: a figure that is neither (the number is not the smallest that works: minimality is a
  separate figure, never a safety one);
* **unchecked**: no judge for it here (a Cortex-M build outside the QEMU sample).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONFIRMED = "confirmed"
UNSAFE = "unsafe"
WRONG = "wrong"
NOTED = "noted"
UNCHECKED = "unchecked"
OUTCOMES = (CONFIRMED, UNSAFE, WRONG, NOTED, UNCHECKED)
FAILURES = (UNSAFE, WRONG)

# The kinds, in the order tables list them, with what each judges.
KINDS = {
    "sets-up-at-n": "host: the model sets up and runs on the wheel in exactly the number's bytes",
    "outputs-at-n": "host: at that size it computes what the original computes (bit-identical)",
    "device-sets-up-at-n": "Cortex-M sample: real TFLM under QEMU sets up at the number",
    "device-outputs-at-n": "Cortex-M sample: an optimized model's outputs at the number, on QEMU",
    "device-two-buffers": "Cortex-M sample: a header's two buffers set the model up on QEMU",
    "minimal": "host: 16 bytes below the number the wheel fails (noted when it does not)",
    "litert-heap": "LiteRT: the real interpreter's peak heap is not above the figure's",
    "figure-for": "LiteRT: the figure names the delegate, threads and ISA asked",
    "cannot-run": "CANNOT RUN: the runtime refuses the model at any size",
    "optimized-outputs": "an optimized model computes the original's outputs at what it declares",
    "optimize-declares": "optimize's figure is what check says of the written model",
    "vela-declares": "arenalens vela's arena for its chosen setting is check's of what it wrote",
    "refuses-unknown-size": "optimize refuses an input of unknown size without --input-shape",
    "budget-answer": "FITS / DOES NOT FIT agree with the number and the budget",
    "exit-code": "the exit code is the verdict's",
    "views-agree": "report, export and diagnose say what check says",
    "text-agrees": "check's text has its --json's exit code, answer, number and steps",
    "api-agrees": "arenalens.check with the same options gives check --json's document",
    "step-runs": "a suggested command runs as printed (exit 0 or 1)",
    "step-promise": "a suggested command gives what its step promises (bytes, FITS, a size)",
    "no-crash": "no internal error, no traceback",
    "one-line-error": "bad input or usage: one line on stderr, exit 2",
}


@dataclass(frozen=True)
class Claim:
    """One claim a flow met and how the judge ruled."""

    kind: str
    outcome: str
    command: str  # the command line that made the claim
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "outcome": self.outcome,
            "command": self.command,
            "detail": self.detail,
        }
