"""Errors arenalens raises on purpose: each names the object and the problem in one line."""

from __future__ import annotations


class ArenalensError(Exception):
    """Base class: the CLI turns any of these into a one-line message and exit code 2."""


class ModelError(ArenalensError, ValueError):
    """A .tflite file that cannot be read or fails the model checker."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class RuntimeRefusedError(ModelError):
    """The real interpreter refused to set the model up (a kernel's Prepare check, an operator
    it has no kernel for, an abort): an answer about the model, which `verify` holds the
    prediction to (CANNOT RUN, or a number the runtime contradicts)."""


class PlanError(ArenalensError, ValueError):
    """A planner result that breaks an invariant (overlap, alignment, bounds)."""


class UsageError(ArenalensError, ValueError):
    """A bad option value or combination, found before any work is done."""


class UnplacedValueError(UsageError):
    """Option values that name no state arenalens models, with the nearest options that do: the
    message names them (`--tflm 0.dev20261012203412 (with it)`), and the CLI prints the user's
    own command again with each (the option's value replaced, or the option added), runnable as
    printed."""

    def __init__(
        self, reason: str, instead: tuple[tuple[str, str, str], ...], ask: str = "name one"
    ) -> None:
        self.reason = reason
        # (option, value, what choosing it means), the one to try first first.
        self.instead = instead
        self.ask = ask
        super().__init__(
            f"{reason}; {ask}: "
            + " or ".join(f"{option} {value} ({meaning})" for option, value, meaning in instead)
        )


class RuntimeUnavailableError(ArenalensError, RuntimeError):
    """A feature needs an optional extra (real runtimes, OR-Tools, matplotlib) that is missing."""


class OutputError(ArenalensError, OSError):
    """A file arenalens was asked to write cannot be written there (a missing or read-only
    folder, a full disk): bad input, like a file it cannot read."""
