"""Commands as a flow runs them: the CLI's Python entry in-process (`run_cli` → `Ran`), the verdict
fields of check's and report's documents (`Verdict`), and the small text helpers the judgements
share (input shapes, budgets, a C header's size, the options of a printed command)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shlex
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arenalens.cli import main
from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.runtimes.litert.shapes import parse_input_shape, resize_model_inputs
from arenalens.tflite.reader import parse_model
from arenalens.tflite.rewriter import model_bytes

OPTIMIZED = "optimized.tflite"
# A check with this budget only asks for the number.
ANY_BUDGET = "1GB"
FITS_ANSWERS = ("FITS", "FITS, TIGHT", "FITS (estimate)")
SHORT_ANSWERS = ("DOES NOT FIT", "FITS AFTER OPTIMIZE")
Shapes = tuple[tuple[int, ...], ...]  # a model's input shapes, in input order


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
    runtime: str = "tflm"
    # LiteRT's memory: what the figure says it is for (delegate, threads, wheel, ISA) and the
    # interpreter's peak heap in it (the figure less the model file).
    device: str = ""
    heap_peak: int | None = None

    @classmethod
    def of_check(cls, document: dict[str, Any]) -> Verdict:
        declare = document.get("declare") or {}
        parts = document.get("parts") or {}
        required = document["required_bytes"]
        heap = None
        if required is not None and "model file" in parts:
            heap = required - parts["model file"]
        return cls(
            document["verdict"],
            document["runs"],
            document["plan_holds"],
            document["shape_known"],
            required,
            document["available_bytes"],
            document["build"] or {},
            document["next_steps"],
            document.get("runtime", "tflm"),
            str(declare.get("device", "")),
            heap,
        )

    @classmethod
    def of_report(cls, document: dict[str, Any]) -> Verdict:
        report = document["reports"][0]
        verdict = report["verdict"]
        declare = report.get("declare") or {}
        heaps = report.get("interpreter_heap") or []
        return cls(
            verdict["verdict"],
            verdict["runs"],
            verdict["plan_holds"],
            verdict["shape_known"],
            verdict["required_bytes"],
            verdict["available_bytes"],
            report["build"] or {},
            verdict["steps"],
            report.get("runtime", "tflm"),
            str(declare.get("device", "")),
            heaps[0]["peak_bytes"] if heaps and verdict["required_bytes"] is not None else None,
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


def input_shapes(model: Model) -> Shapes:
    subgraph = model.subgraphs[0]
    return tuple(tuple(subgraph.tensors[index].shape) for index in subgraph.inputs)


def at_shapes(
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


def budget_text(number: int, ratio: float, index: int) -> str:
    """A budget near `ratio` times the number: in bytes, or in KB as a datasheet writes it."""
    nbytes = max(1, math.floor(number * ratio))
    if index % 2:
        return str(nbytes)
    return f"{max(1, nbytes // 1024)}KB"


def header_size(text: str) -> int | None:
    found = re.search(r"#define \w+_ARENA_SIZE (\d+)u", text)
    return int(found.group(1)) if found else None


def header_split(text: str) -> tuple[int, int] | None:
    """A C header's two buffers, MicroAllocator::Create(persistent, P, non_persistent, N)'s
    (P, N), when it gives them."""
    persistent = re.search(r"#define \w+(?<!_NON)_PERSISTENT_ARENA_SIZE (\d+)u", text)
    non_persistent = re.search(r"#define \w+_NON_PERSISTENT_ARENA_SIZE (\d+)u", text)
    if persistent is None or non_persistent is None:
        return None
    return int(persistent.group(1)), int(non_persistent.group(1))


def build_flags_of(build: dict[str, Any]) -> tuple[str, ...]:
    """A document's build's --cpu / --kernels (for commands that take no --target)."""
    from arenalens.builds.build import build_flags, build_named

    return tuple(shlex.split(build_flags(build_named(str(build["name"])))))


def build_words(words: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    for option in ("--cpu", "--kernels", "--target"):
        found += [option, *option_values(words, option)[:1]] if option in words else []
    return tuple(found)


def option_values(words: Sequence[str], option: str) -> tuple[str, ...]:
    return tuple(words[i + 1] for i, word in enumerate(words[:-1]) if word == option)


def quoted_commands(text: str) -> list[str]:
    return [part for part in text.split("`")[1::2] if part.startswith("arenalens ")]


def first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def on_host(document: dict[str, Any]) -> bool:
    build = document.get("build") or {}
    return bool(build.get("name", "host") == "host")


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[Path]:
    """Run with `folder` as the working directory (the steps write optimized.tflite there)."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(previous)
