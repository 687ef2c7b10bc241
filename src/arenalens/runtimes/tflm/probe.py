"""Probing the real TFLM interpreter: (model file, arena size) → did setup fit, and what it printed.

Every probe builds `tflite_micro.runtime.Interpreter.from_file(path, arena_size=n)` in a forked
child process, because too-small arenas sometimes crash TFLM with SIGSEGV instead of failing
cleanly (docs/runtime-rules.md §T10). The child points C-level fd 2 at a file, because
`print_allocations()` and TFLM's error messages go to C `stderr`, which `sys.stderr` redirection
never sees (§T14). `tflite_micro` is imported lazily, in the child only, so arenalens works
without the `runtime` extra.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.metadata
import importlib.util
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from arenalens.builds.build import Build, host_build
from arenalens.builds.tflm import wheel_release
from arenalens.errors import RuntimeUnavailableError, UsageError
from arenalens.runtimes.child import run_in_child

INSTALL_HINT = "pip install 'arenalens[runtime]'"
# A probe that takes longer than this is treated as hung (counts as a failure, like a crash).
PROBE_TIMEOUT_SECONDS = 120.0

_TOTAL = re.compile(r"Arena allocation total (\d+) bytes")
_HEAD = re.compile(r"Arena allocation head (\d+) bytes")
_TAIL = re.compile(r"Arena allocation tail (\d+) bytes")
_CATEGORY = re.compile(
    r"'(?P<name>[^']+)' used (?P<used>\d+) bytes with alignment overhead "
    r"\(requested (?P<requested>\d+) bytes for (?P<count>\d+) (?P<unit>[^)]*)\)"
)
# TFLM's messages when an allocation does not fit (single_arena_buffer_allocator.cc,
# greedy_memory_planner.cc): these mean "arena too small", anything else is a model problem.
_TOO_SMALL = re.compile(
    r"Requested: \d+, available \d+|Too many buffers \(max is \d+\)|"
    r"Failed to allocate (tail|temp) memory|Failed to resize buffer"
)


@dataclass(frozen=True, slots=True)
class Category:
    """One `print_allocations()` category line: bytes used (with alignment), requested, count."""

    used: int
    requested: int
    count: int
    unit: str


@dataclass(frozen=True)
class Probe:
    """The outcome of constructing the interpreter with one arena size."""

    arena_size: int
    status: str  # "ok" | "too_small" | "error" (a failure unrelated to size) | "crash"
    head: int | None = None
    tail: int | None = None
    total: int | None = None
    categories: Mapping[str, Category] = field(default_factory=lambda: MappingProxyType({}))
    log: str = ""

    @property
    def fits(self) -> bool:
        """True when setup succeeded at this size."""
        return self.status == "ok"


def installed_version() -> str:
    """The installed `tflite-micro` wheel's version (RuntimeUnavailableError when none)."""
    require_tflite_micro()
    return importlib.metadata.version("tflite-micro")


def installed_build() -> Build | None:
    """The host build of the installed wheel's TFLM release (what it measures); None when
    arenalens does not model that release (RuntimeUnavailableError when no wheel)."""
    try:
        return host_build(wheel_release(installed_version()))
    except UsageError:
        return None


def is_installed_wheel(build: Build) -> bool:
    """True when the installed wheel is this build (the same TFLM release on the host), so its
    measurements are this build's figures; False otherwise and without a wheel."""
    try:
        return build == installed_build()
    except RuntimeUnavailableError:
        return False


def require_tflite_micro() -> None:
    """Raise RuntimeUnavailableError with an install hint when `tflite_micro` is missing."""
    if importlib.util.find_spec("tflite_micro") is None:
        raise RuntimeUnavailableError(
            f"the real TFLM interpreter (package 'tflite_micro') is not installed: {INSTALL_HINT}"
        )


def parse_allocations(text: str) -> tuple[int | None, int | None, int | None, dict[str, Category]]:
    """`print_allocations()` text → (head, tail, total, categories by name)."""

    def number(pattern: re.Pattern[str]) -> int | None:
        found = pattern.search(text)
        return int(found.group(1)) if found else None

    categories = {
        match["name"]: Category(
            int(match["used"]), int(match["requested"]), int(match["count"]), match["unit"]
        )
        for match in _CATEGORY.finditer(text)
    }
    return number(_HEAD), number(_TAIL), number(_TOTAL), categories


def probe(path: str, arena_size: int, *, preserve_all_tensors: bool = False) -> Probe:
    """Construct the interpreter for the model file at path with arena_size bytes, in a child."""
    require_tflite_micro()
    payload, exit_code = run_in_child(
        _child_main,
        (os.fspath(path), arena_size, preserve_all_tensors),
        timeout_seconds=PROBE_TIMEOUT_SECONDS,
    )
    if payload is None:
        return Probe(arena_size, "crash", log=f"child exited with code {exit_code}")
    return _probe_from_payload(arena_size, payload)


def _probe_from_payload(arena_size: int, payload: Mapping[str, Any]) -> Probe:
    log = str(payload.get("log", ""))
    if payload.get("ok"):
        head, tail, total, categories = parse_allocations(log)
        return Probe(
            arena_size,
            "ok",
            head=head,
            tail=tail,
            total=total,
            categories=MappingProxyType(categories),
            log=log,
        )
    status = "too_small" if _TOO_SMALL.search(log) else "error"
    return Probe(arena_size, status, log=log + str(payload.get("error", "")))


def _child_main(sender: Any, path: str, arena_size: int, preserve_all_tensors: bool) -> None:
    """In the child: capture fd 2, build the interpreter, send back what it printed."""
    # A crash is an expected outcome here; keep a parent's faulthandler from reporting it.
    faulthandler.disable()
    result: dict[str, Any] = {"ok": False}
    with reported(result):
        from tflite_micro import runtime  # noqa: PLC0415 - optional extra, child only

        config = (
            runtime.InterpreterConfig.kPreserveAllTensors
            if preserve_all_tensors
            else runtime.InterpreterConfig.kAllocationRecording
        )
        interpreter = runtime.Interpreter.from_file(
            path, arena_size=arena_size, intrepreter_config=config
        )
        if not preserve_all_tensors:
            interpreter.print_allocations()
        result["ok"] = True
    sender.send(result)
    sender.close()


@contextlib.contextmanager
def reported(result: dict[str, Any]) -> Iterator[None]:
    """In a child process: what the block's interpreter prints on fd 2 into result["log"], and
    any failure of the block into result["error"] (reported to the parent, not raised)."""
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        except Exception as error:  # any failure is reported to the parent
            result["error"] = f"{type(error).__name__}: {error}"
        captured.flush()
        captured.seek(0)
        result["log"] = captured.read().decode("utf-8", errors="replace")


def minimal_arena(fits: Callable[[int], bool], *, low: int, high: int) -> int:
    """Smallest size in (low, high] with fits(size), by bisection; fits(high) must hold.

    The runtime's fit is monotone only within one residue mod 16 (the tail starts at the array's
    unaligned end), so like the reference measurements this finds one boundary; callers confirm it.
    """
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high
