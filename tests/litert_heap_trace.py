"""Every heap block a real LiteRT interpreter allocates, with the function that asked for it:
how the rules of src/arenalens/runtimes/litert/heap_interpreter.py and heap_kernels.py were read
off the wheel, and how a new kernel's are.

    python -m tests.litert_heap_trace MODEL [builtin|xnnpack]            # live blocks by site
    python -m tests.litert_heap_trace MODEL xnnpack --build-moment       # the build transient

tests/data/litert_heap_trace/alloc_tracer.c (LD_PRELOAD, compiled here with gcc) logs each
malloc / calloc / realloc / aligned allocation and free with its size, malloc_usable_size and
call stack once the driver switches it on; the driver takes the same steps as
../shared/tools/litert-heap/measure.py (a warm interpreter first, then Interpreter(...),
allocate_tensors(), zero inputs, invoke()) and marks each. Frames are named from the wheel's
symbol table (`nm`). The blocks are attributed to the first LiteRT function on the stack that
is not an allocator or a container helper.

Needs the `runtime` extra (ai-edge-litert), gcc and binutils; used by hand, not by the suite.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

TRACER_SOURCE = Path(__file__).resolve().parent / "data/litert_heap_trace/alloc_tracer.c"
PHASES = ("create", "allocate", "inputs", "invoke")
DRIVER = r"""
import ctypes, gc, sys
lib = ctypes.CDLL(None)
mark, log = lib.mtrace_mark, lib.mtrace_log
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, mode = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
kind = (OpResolverType.AUTO if mode == "xnnpack"
        else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
mark(b"warm"); log(1)
warm = Interpreter(model_content=data, experimental_op_resolver_type=kind)
log(0); del warm; gc.collect()
mark(b"create"); log(1)
it = Interpreter(model_content=data, experimental_op_resolver_type=kind)
mark(b"allocate")
it.allocate_tensors()
mark(b"inputs")
for d in it.get_input_details():
    it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
mark(b"invoke")
it.invoke()
mark(b"end"); log(0)
"""
# Frames that only allocate on someone else's behalf.
_HELPERS = re.compile(
    r"^(operator new|malloc|calloc|realloc|TfLiteIntArray(Create|Copy)|TfLiteFloatArrayCreate|"
    r"tflite::Convert(Array|Vector)To|std::|void std::|xnn_allocate|xnn_aligned_allocate|"
    r"xnn_reallocate|ruy::detail::SystemAligned|tflite::ResizableAlignedBuffer|__gnu_cxx)"
)


def trace(model: Path, mode: str, folder: Path) -> Path:
    """Run the driver under the tracer → the log file."""
    library = folder / "alloc_tracer.so"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(TRACER_SOURCE), "-ldl"],
        check=True,
    )
    log = folder / f"{model.stem}_{mode}.log"
    environment = dict(os.environ, LD_PRELOAD=str(library), TRACE_FILE=str(log))
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(model), mode],
        env=environment,
        check=True,
        capture_output=True,
    )
    return log


@functools.cache
def _symbols(library: str) -> tuple[list[int], list[str]]:
    found = _library_path(library)
    if found is None:
        return [], []
    listing = "".join(
        subprocess.run(
            ["nm", "-C", *dynamic, "--defined-only", found],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        for dynamic in ([], ["-D"])
    )
    rows = []
    for line in listing.splitlines():
        fields = line.split(" ", 2)
        if len(fields) == 3 and fields[1] in "tTwW":
            rows.append((int(fields[0], 16), fields[2]))
    rows.sort()
    return [address for address, _ in rows], [name for _, name in rows]


@functools.cache
def _library_path(name: str) -> str | None:
    import ai_edge_litert

    roots = [Path(ai_edge_litert.__file__).parent, Path("/usr/lib/x86_64-linux-gnu")]
    for root in roots:
        for path in root.rglob(name):
            return str(path)
    return None


def symbol(frame: str) -> str:
    """'libx.so+1a2b' → the function containing that offset."""
    library, _, offset = frame.rpartition("+")
    addresses, names = _symbols(library)
    position = bisect.bisect_right(addresses, int(offset, 16)) - 1
    return names[position] if position >= 0 else frame


def site(frames: list[str]) -> str:
    """The first frame that is not an allocator or container helper, without its arguments."""
    for frame in frames:
        if frame.startswith("libpython"):
            break
        name = symbol(frame)
        if not _HELPERS.match(name):
            return re.sub(r"\(.*$", "", name)
    return "?"


def events(log: Path) -> Iterator[tuple[str, str, int, int, str, list[str]]]:
    """(phase, op, request, usable, pointer, frames) of every logged event after the warm-up."""
    phase = ""
    for line in log.read_text().splitlines():
        if line.startswith("#"):
            phase = line.split()[1]
            continue
        if phase in ("", "warm"):
            continue
        fields = line.split()
        yield phase, fields[0], int(fields[1]), int(fields[2]), fields[3], fields[5:]


def live_by_site(log: Path) -> dict[str, dict[str, list[int]]]:
    """Blocks live at the end, by the phase that allocated them and their site."""
    live: dict[str, tuple[str, int, str]] = {}
    for phase, op, _request, usable, pointer, frames in events(log):
        if op == "F":
            live.pop(pointer, None)
        else:
            live[pointer] = (phase, usable, site(frames))
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for phase, usable, name in live.values():
        table[phase][name].append(usable)
    return table


def build_transient(log: Path) -> dict[str, list[tuple[int, int]]]:
    """The blocks live at allocate_tensors()'s highest moment that it frees before it returns
    (under XNNPACK, the delegate kernel's build moment: heap_build.kernel_transient), by site:
    (usable, request) of each."""
    live: dict[str, tuple[int, int, str, int]] = {}
    total = peak = 0
    at_peak: dict[str, tuple[int, int, str, int]] = {}
    for position, (phase, op, request, usable, pointer, frames) in enumerate(events(log)):
        if phase not in ("create", "allocate"):
            break
        if pointer in live:
            total -= live.pop(pointer)[1]
        if op != "F":
            live[pointer] = (position, usable, site(frames), request)
            total += usable
            if phase == "allocate" and total > peak:
                peak, at_peak = total, dict(live)
    table: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for pointer, block in at_peak.items():
        if live.get(pointer) != block:
            table[block[2]].append((block[1], block[3]))
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("mode", nargs="?", default="builtin", choices=("builtin", "xnnpack"))
    parser.add_argument("--build-moment", action="store_true", help=build_transient.__doc__)
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        log = trace(arguments.model.resolve(), arguments.mode, Path(scratch))
        if arguments.build_moment:
            from arenalens.runtimes.litert.glibc import usable

            transient = build_transient(log)
            blocks = [block for sizes in transient.values() for block in sizes]
            # glibc's placement may hand a block 16 B more than its request's chunk (the
            # process's history): the requests' own chunk sizes are what a replay can match.
            print(
                f"== freed by allocate_tensors(): {sum(b[0] for b in blocks)} B usable, "
                f"{sum(usable(b[1]) for b in blocks)} B as requested"
            )
            for name, sizes in sorted(
                transient.items(), key=lambda item: -sum(b[0] for b in item[1])
            ):
                print(f"{sum(b[0] for b in sizes):9d} {len(sizes):5d}  {name[:120]}")
            return 0
        for phase, sites in live_by_site(log).items():
            total = sum(sum(sizes) for sizes in sites.values())
            print(f"== blocks allocated during {phase} and still live: {total} B")
            for name, sizes in sorted(sites.items(), key=lambda item: -sum(item[1])):
                print(f"{sum(sizes):9d} {len(sizes):5d}  {name[:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
