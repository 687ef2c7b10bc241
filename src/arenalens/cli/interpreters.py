"""The real interpreters (the `runtime` extra) a command's options make it run, required before
any work: without the wheel, the refusal the path would give after planning comes first, with
the same one-line message and exit code 2 (`optimize --split` planned for up to two minutes, and
`check --max-input` sized the model and climbed its remedy ladder, before stopping with it).

One table says which path runs which interpreter; each requirement is the runtime's own check,
so the message is the one its deep path raises."""

from __future__ import annotations

import argparse
from collections.abc import Callable

# Options that propagate shapes with the real LiteRT interpreter, on every command that has them.
SHAPE_OPTIONS = ("input_shape", "max_input", "compare_input_shape")
# Options whose plans `optimize` keeps only once real TFLM computes bit-identical outputs with
# them (what makes --no-verify a usage error with them).
PROOF_OPTIONS = ("inplace", "overlap", "split")


def require_interpreters(command: str, args: argparse.Namespace) -> None:
    """Raise the RuntimeUnavailableError of the first interpreter this command's path runs that
    is not installed; nothing when none is missing."""
    for requirement in _requirements(command, args):
        requirement()


def _requirements(command: str, args: argparse.Namespace) -> tuple[Callable[[], None], ...]:
    """The checks of the interpreters this command with these options runs."""
    requirements: list[Callable[[], None]] = []
    if any(getattr(args, option, None) for option in SHAPE_OPTIONS):
        requirements.append(_shape_interpreter)
    proves = command == "optimize" and not args.no_verify  # with it, theirs is a usage error
    if proves and any(getattr(args, option, False) for option in PROOF_OPTIONS):
        requirements.append(_proof_interpreter)
    if command == "verify":
        requirements.append(lambda: _verify_interpreter(args.runtime))
    return tuple(requirements)


def _shape_interpreter() -> None:
    from arenalens.runtimes.litert.shapes import require_shape_interpreter  # noqa: PLC0415

    require_shape_interpreter()


def _proof_interpreter() -> None:
    from arenalens.runtimes.door import tflm_runtime  # noqa: PLC0415

    tflm_runtime().require_proof()


def _verify_interpreter(runtime: str) -> None:
    from arenalens.runtimes import get_runtime  # noqa: PLC0415

    get_runtime(runtime).require_interpreter()
