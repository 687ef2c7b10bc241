"""Command line: argument parsing → pipeline → renderers. The only package that prints or exits.

Each command is a module here with `add_arguments(parser)` (its options; its help texts are in
`COMMAND_TEXTS`) and a handler `run(args) -> exit code`. `COMMANDS` lists them explicitly, in
`--help` order, each with its module: the command's own name, or `<command>_command` where that
name is a standard library module's (`inspect`), so no module here shadows one.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from importlib import import_module
from types import MappingProxyType
from typing import Any

from arenalens import __version__
from arenalens.cli.command_line import rerun, with_value
from arenalens.cli.interpreters import require_interpreters
from arenalens.errors import ArenalensError, UnplacedValueError

# Command → its module here, in the order `arenalens --help` lists them.
COMMANDS: Mapping[str, str] = MappingProxyType(
    {
        "inspect": "inspect_command",
        "plan": "plan",
        "check": "check",
        "diagnose": "diagnose",
        "export": "export",
        "verify": "verify",
        "compare": "compare",
        "optimize": "optimize",
        "vela": "vela",
        "report": "report",
        "demo": "demo",
    }
)

# Each command's one-line help (`arenalens --help`) and description (`arenalens COMMAND --help`):
# one table, so `arenalens --help` imports no command module. `export` fills in its formats.
COMMAND_TEXTS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "inspect": (
            "summarize a model: subgraphs, operators, tensors, bytes, lifetimes",
            "Summarize a .tflite model: subgraphs, operator histogram, tensors by kind, bytes in "
            "constants vs arena candidates vs variables, inputs and outputs.",
        ),
        "plan": (
            "plan the arena: every tensor's offset, arena size, lower bound, memory to declare",
            "Plan a model's tensor arena with a runtime's rules: per-tensor bytes, lifetime and "
            "offset; arena size against the lower bound and against no reuse; for TFLM the head, "
            "tail and the smallest kTensorArenaSize that works.",
        ),
        "check": (
            "does the model's arena fit a RAM budget, a board, or which boards? (exit 0 / 1)",
            "Compare the arena you must declare (TFLM: kTensorArenaSize = head + tail + setup, "
            "all inside the tensor arena; LiteRT: arenas + persistent arenas) with a budget or a "
            "board's largest static block, minus a reserve for the rest of the firmware. --target "
            "all checks every board preset at once; --max-input finds the largest input "
            "resolution that fits. Exit 0 when it fits, 1 when it does not, 2 on bad input: made "
            "for CI.",
        ),
        "diagnose": (
            "find what is wrong with a model's arena plan, and how to fix it",
            "Run every diagnostic rule on a model: outputs whose bytes get reused, offline plans "
            "that overlap or miss tensors, tensors never read or read before they are written, "
            "bad operand lists, dynamic shapes, subgraph arenas, misaligned offsets, bytes the "
            "runtime's planner wastes, and the peak with design hints. Each finding has a rule "
            "id, a severity, a location and a concrete fix. Exit code 1 when a finding at or "
            "above --fail-on severity (default: error) is found.",
        ),
        "export": (
            "write the plan for other tools: JSON, CSV, C header, MiniMalloc, Model Explorer",
            "Plan a model and write the plan in one format ({formats}). Output goes to stdout, or "
            "atomically to -o FILE; for several models -o names a folder that gets one "
            "<model><ext> file each.",
        ),
        "verify": (
            "run the real runtime and compare its memory numbers with the prediction",
            "Build the real interpreter (extra 'runtime') on the model and compare what it "
            "reports with arenalens' prediction, side by side. Exit 0 when all agree (a model "
            "the interpreter refuses agrees when arenalens says CANNOT RUN), 1 on a mismatch or "
            "when the model's offline plan makes the interpreter compute wrong outputs (CANNOT "
            "RUN CORRECTLY: a plan made for other kernels), 2 on errors.",
        ),
        "compare": (
            "compare every planner: arena bytes, %% over the lower bound, saving, optimality",
            "Run every registered planner on the runtime's arena and show, per planner, the arena "
            "size, how far it is above the lower bound, the bytes it saves against the runtime's "
            "own planner, whether it is proven optimal, and the planning time.",
        ),
        "optimize": (
            "write a model that needs a smaller kTensorArenaSize (offline plan, reorder, "
            "in-place, overlap, split)",
            "Plan tensors and kernel scratch together and write a copy of the model with TFLM's "
            "OfflineMemoryAllocation metadata (replacing any existing one), optionally a better "
            "operator order, in-place aliases, overlaps and split operators. Weights stay "
            "byte-identical and aligned (--split adds sliced ones); the input file is never "
            "touched. When the real TFLM interpreter is installed, the result is run on it first: "
            "the head must be the predicted one and outputs bit-identical. Savings are counted in "
            "the number to declare (kTensorArenaSize: head + tail + setup); a model that would "
            "save nothing is not written (exit 1). An offline plan holds for the tensor sizes it "
            "was made for: --input-shape plans (and writes) the model at the size the application "
            "feeds, and an input of unknown size needs it; a model whose own plan would corrupt "
            "tensors at those sizes is always written (without an offline plan when TFLM's own "
            "plan is the best).",
        ),
        "vela": (
            "compile a model with Arm's Vela over its settings: the exact arena and NPU memories "
            "of each, and the fastest that fits (extra 'npu')",
            "Compile an uncompiled .tflite with Vela (pip install 'arenalens[npu]') for the NPU "
            "of --target or --npu, over the memory modes, --optimise strategies and arena cache "
            "sizes it supports; show each compilation's exact kTensorArenaSize on the build, the "
            "fast memory ethosu_init() must be given (Dedicated_Sram), the weights it reads from "
            "SRAM (Sram_Only) and Vela's estimated inference time; mark the fastest that fits the "
            "board and print the Vela command that makes it. Exit 0 when one fits, 1 when none "
            "does, 2 on bad input.",
        ),
        "report": (
            "see the plan: terminal summary, interactive HTML page, PNG/SVG images",
            "Show where every byte of the arena goes: a terminal summary (arena, lower bound, "
            "overhead, reuse, the peak step and its operator, the largest tensors, the memory "
            "plan), and on request a self-contained interactive HTML page (-o) and images "
            "(--images). Each --planner becomes a view you can switch to; --compare adds a second "
            "model to compare against. Exit 1 when the model's offline plan makes the selected "
            "build compute wrong outputs (CANNOT RUN CORRECTLY), after writing what was asked.",
        ),
        "demo": (
            "plan a built-in example for a board and write its report and images",
            "Build a built-in int8 example model (no download), plan it with TFLite Micro's rules "
            "for a board (its core and kernels), say what to declare there and whether it fits, "
            "and write the model, an interactive HTML report and PNG/SVG charts.",
        ),
    }
)

EXIT_OK = 0
EXIT_FINDINGS = 1  # verify mismatch, check over budget, diagnose errors
EXIT_ERROR = 2  # bad input or usage
EXIT_INTERNAL = 3  # a bug in arenalens


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout at the width it would pick, found without `shutil`: argparse
    imports shutil for its terminal size whenever a parser gets an argument, and shutil loads
    the compression modules (lzma, bz2, zlib): 27 M of the 686 M instructions `arenalens check`
    of a small model took over `python -c pass`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2)


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS when a positive number, else the width of
    the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line and exit code 2 (argparse's own convention)."""

    def __init__(self, *arguments: Any, **settings: Any) -> None:
        settings.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*arguments, **settings)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `arenalens` parser with every command registered; given the arguments it will parse,
    only the command they name (each command module imports what its work needs, and importing
    all ten costs more than planning a small model)."""
    parser = _Parser(
        prog="arenalens",
        description="See where every byte of a TFLite / TFLite Micro tensor arena goes, "
        "and get bytes back.",
        epilog="Run 'arenalens COMMAND --help' for a command's options. "
        "Exit codes: 0 ok, 1 findings (mismatch, over budget), 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"arenalens {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in _commands_to_register(argv):
        help_text, description = COMMAND_TEXTS[name]
        command = subparsers.add_parser(name, help=help_text, description=description)
        module = import_module(f"arenalens.cli.{COMMANDS[name]}")
        module.add_arguments(command)
        command.set_defaults(handler=module.run, command_name=name)
    return parser


def _commands_to_register(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The command the arguments name, or every command (for --help, a missing or misspelt
    command: argparse then lists or suggests them all)."""
    every = tuple(COMMANDS)
    if argv is None:
        return every
    # Only -h / --help / --version come before the command, and they take no value.
    named = next((arg for arg in argv if not arg.startswith("-")), None)
    return (named,) if named is not None and named in COMMANDS else every


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, run one command, print its text; return the exit code."""
    try:
        return _parse_and_run(argv)
    except UnplacedValueError as error:
        print(f"arenalens: error: {_with_commands(error, argv)}", file=sys.stderr)
        return EXIT_ERROR
    except ArenalensError as error:
        print(f"arenalens: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("arenalens: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `arenalens ... | head`: the reader went away; that is not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:
        if os.environ.get("ARENALENS_DEBUG"):
            import traceback  # noqa: PLC0415 - only an internal error prints one

            traceback.print_exc()
        print(
            f"arenalens: internal error: {type(error).__name__}: {error} "
            "(set ARENALENS_DEBUG=1 for a traceback, and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _with_commands(error: UnplacedValueError, argv: Sequence[str] | None) -> str:
    """The error with the user's command again for each option it suggests, runnable as
    printed: the option's value replaced where the command gives it, else the option added."""
    words = list(sys.argv[1:] if argv is None else argv)
    commands = [
        f"`{rerun(words, (option, value))}` ({meaning})" for option, value, meaning in error.instead
    ]
    return f"{error.reason}; {error.ask}: {' or '.join(commands)}"


# Options that take a size: a negative one ('--budget -5KB') is their value, not an option.
_SIZE_OPTIONS = ("--budget", "--reserve")


def _joined_sizes(argv: Sequence[str]) -> list[str]:
    """'--budget -5KB' → '--budget=-5KB', so the size's own check explains it (argparse would
    take '-5KB' for an option and say the value is missing)."""
    words: list[str] = []
    for word in argv:
        if (
            words
            and words[-1] in _SIZE_OPTIONS
            and word[:2].startswith("-")
            and word[1:2].isdigit()
        ):
            words[-1] = f"{words[-1]}={word}"
        else:
            words.append(word)
    return words


def _parse_and_run(argv: Sequence[str] | None) -> int:
    argv = _joined_sizes(sys.argv[1:] if argv is None else argv)
    from arenalens.report.wrapping import WRAP_COMMANDS  # noqa: PLC0415

    # A long command wraps with ' \' on a terminal (it still pastes); piped, it stays whole.
    WRAP_COMMANDS.set(sys.stdout.isatty())
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.argv = list(argv)  # the user's words, for commands that suggest them again
    _spell_kernels(args)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    # A path that needs a real interpreter refuses before any work when it is not installed.
    require_interpreters(args.command_name, args)
    code: int = handler(args)
    return code


def _spell_kernels(args: argparse.Namespace) -> None:
    """--kernels as builds spell it ('ESP_NN@v1.2.3', 'esp-nn@1.2.3' → 'esp-nn', the default
    release; 'cmsisnn' → 'cmsis-nn'): two spellings of one build select equal builds, so every
    view and suggested command (`Asked`, the user's words again) spells it once, as
    `arenalens.check` does (`kernels_flag`); UsageError for a library not known."""
    kernels = getattr(args, "kernels", None)
    if not kernels:
        return
    from arenalens.builds.build import kernels_option  # noqa: PLC0415 - only when given

    args.kernels = kernels_option(kernels).spelling
    args.argv = with_value(args.argv, "--kernels", args.kernels)


def console_main() -> None:
    """Console-script wrapper: exit with main()'s code."""
    install_termination_handler()
    collect_garbage_less_often()
    code = main()
    skip_the_last_collection()
    sys.exit(code)


# Objects made (less those freed) between young-generation collections (CPython's default: 700).
YOUNG_COLLECTION_ALLOCATIONS = 500_000
# Young collections between two of the middle generation, and those between two full ones
# (CPython's defaults: 10 and 10).
OLDER_COLLECTIONS = 100


def collect_garbage_less_often() -> None:
    """A command builds one large graph of objects that lives until it exits (a 10,000-operator
    model is ~250,000 objects) and makes little cyclic garbage (a 10,000-operator `plan`, an
    `optimize --overlap` or a 1,000-model batch leaves ~500 objects to the collector). Each
    collection of a generation walks every object in it, ~0.2 µs each, to free nothing: with
    CPython's thresholds that was about a sixth of a `plan`; young collections every 50,000
    objects still cost 50-60 ms of a 10,000-operator `plan` (each object walked once) and
    ~110 ms of a `check --target all`. Now a young collection waits for 500,000 more live
    objects (cyclic garbage counts among them, so no more of it than that waits: ~100 MB at most),
    and the older generations, which walk the graph again, for a hundred young ones. Commands'
    peak memory is unchanged (plan of the 10,000-operator chain 79 MB, check --target all of
    VWW 161 MB)."""
    gc.set_threshold(YOUNG_COLLECTION_ALLOCATIONS, OLDER_COLLECTIONS, OLDER_COLLECTIONS)


def skip_the_last_collection() -> None:
    """The interpreter's shutdown walks every object left once more, looking for cycles to free
    in a process about to end (~70 ms after a 10,000-operator `plan`); objects frozen into the
    permanent generation are not walked. Exit handlers still run, and objects outside cycles are
    still freed; what a command writes it has closed before it returns."""
    gc.freeze()


def install_termination_handler() -> None:
    """Make SIGTERM (a CI timeout, `kill`) raise SystemExit, so files being written are cleaned
    up by the same `finally` / `except BaseException` paths as Ctrl-C; by default the process
    would die at once and leave a half-written temporary file behind."""

    def terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, terminate)
