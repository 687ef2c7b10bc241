"""Batch runs: MODEL arguments (files, folders) → one result per model, in parallel, one summary.

A command that accepts several models registers `add_models_argument` and hands each model to a
*worker*: a module-level function `(args, path) -> ModelResult` that does the command's work for
one file without printing. `run_models` expands folders, runs the workers in a process pool (one
per core, `--jobs` to change), shows a progress bar on a terminal, and returns the results in
argument order; `finish_batch` prints a summary table (one row per model) or a JSON list and
returns the worst exit code. A single file keeps the command's full, unchanged output.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from arenalens.cli.common import print_json, print_text, terminal_width, use_color
from arenalens.errors import ArenalensError, UsageError
from arenalens.records import record

if TYPE_CHECKING:
    from rich.text import Text

# The process pool, progress bar and summary table are imported where a batch needs them: a
# single model never does, and they cost more to import than planning a small model.

EXIT_ERROR = 2
EXIT_INTERNAL = 3
MODEL_SUFFIX = ".tflite"
MAX_CHUNK = 16  # models a pool worker takes at once (fewer when the list is short)
T = TypeVar("T")


@record()
class ModelResult:
    """What one worker produced for one model: exit code, summary row, JSON document."""

    model: str  # the path as given / found
    exit_code: int
    # Plain dicts and lists only: results cross process boundaries (pickled).
    row: Mapping[str, Any] = field(default_factory=dict)
    document: Any = None  # the command's --json document for this model
    error: str | None = None  # one-line error when the model could not be processed


Worker = Callable[[argparse.Namespace, str], ModelResult]


def add_models_argument(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """MODEL...: .tflite files and folders (searched recursively), plus --jobs.

    `required=False` lets a command run without a model for listing options (--list-targets);
    it must then check `args.models` itself.
    """
    parser.add_argument(
        "models",
        metavar="MODEL",
        nargs="+" if required else "*",
        help="a .tflite file; several files or folders (searched for *.tflite) run as a batch "
        "with one summary row per model",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=0,
        metavar="N",
        help="models processed in parallel in a batch (default: one per CPU core)",
    )


def expand_model_arguments(arguments: Sequence[str]) -> list[str]:
    """Files as given, folders → their *.tflite files (recursive, sorted); duplicates dropped."""
    paths: list[str] = []
    for argument in arguments:
        if os.path.isdir(argument):
            # Only a folder is walked with pathlib: a check of one file never imports it (with
            # urllib.parse and ipaddress, ~16 M instructions of its start-up).
            from pathlib import Path  # noqa: PLC0415

            candidate = Path(argument)
            found = sorted(str(p) for p in candidate.rglob(f"*{MODEL_SUFFIX}") if p.is_file())
            if not found and (candidate / "saved_model.pb").exists():
                raise UsageError(
                    f"{argument}: a TensorFlow SavedModel folder, not .tflite files: convert it "
                    "with tf.lite.TFLiteConverter.from_saved_model(folder) first"
                )
            if not found:
                raise UsageError(f"{argument}: folder holds no {MODEL_SUFFIX} files")
            paths.extend(found)
        else:
            paths.append(argument)
    return list(dict.fromkeys(paths))


def is_batch(arguments: Sequence[str]) -> bool:
    """True when the arguments name several models or any folder."""
    return len(arguments) > 1 or any(os.path.isdir(argument) for argument in arguments)


def run_models(args: argparse.Namespace, paths: Sequence[str], worker: Worker) -> list[ModelResult]:
    """Run worker on every path (in a process pool when there are several); argument order."""
    jobs = _job_count(getattr(args, "jobs", 0), len(paths))
    if jobs <= 1:
        return [_guarded(worker, args, path) for path in _with_progress(paths, len(paths), args)]
    import multiprocessing  # noqa: PLC0415 - batches only (see the imports)
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - batches only

    context = multiprocessing.get_context("forkserver" if os.name == "posix" else "spawn")
    # The models go to the workers a few at a time: one round trip of the pool's queues per
    # chunk, not per model (a thousand small models spent a fifth of their wall time in them),
    # yet small enough that every worker gets a share of a short list.
    chunk = max(1, min(MAX_CHUNK, len(paths) // (jobs * 4)))
    # A worker is a fresh interpreter: it collects garbage as the command's own process does.
    from arenalens.cli import collect_garbage_less_often  # noqa: PLC0415 - batches only

    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=collect_garbage_less_often
    ) as pool:
        done = pool.map(partial(_guarded, worker, args), paths, chunksize=chunk)
        return list(_with_progress(done, len(paths), args))


def _job_count(requested: int, model_count: int) -> int:
    if requested < 0:
        raise UsageError(f"--jobs must be >= 0, got {requested}")
    available = requested or os.cpu_count() or 1
    return max(1, min(available, model_count))


def _guarded(worker: Worker, args: argparse.Namespace, path: str) -> ModelResult:
    """Worker errors become results: a bad file must not stop the batch."""
    try:
        return worker(args, path)
    except ArenalensError as error:
        return ModelResult(model=path, exit_code=EXIT_ERROR, error=str(error))
    except Exception as error:
        return ModelResult(
            model=path,
            exit_code=EXIT_INTERNAL,
            error=f"internal error: {type(error).__name__}: {error}",
        )


def _without_path(result: ModelResult) -> str:
    # Errors name their file first; under the table the row's name already says which file, and
    # a long temporary path pushed the reason itself onto a wrapped line.
    message = result.error or ""
    prefix = f"{result.model}: "
    return message[len(prefix) :] if message.startswith(prefix) else message


def _show_progress(args: argparse.Namespace) -> bool:
    return sys.stderr.isatty() and not getattr(args, "json", False)


def _progress() -> Any:
    from rich.console import Console  # noqa: PLC0415 - batches only (see the imports)
    from rich.progress import (  # noqa: PLC0415 - batches only
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
    )

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def working(args: argparse.Namespace, description: str) -> AbstractContextManager[Any]:
    """A spinner with the elapsed time on stderr while one model's long step runs (check's
    optimizer search, up to its time limit), on a terminal and for a single model only: a batch
    has its own bar, and --json prints nothing else."""
    models = getattr(args, "models", None) or ()
    if not _show_progress(args) or is_batch(models):
        return nullcontext()
    from rich.console import Console  # noqa: PLC0415 - only while a long step runs
    from rich.progress import (  # noqa: PLC0415
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(
        SpinnerColumn(),
        TextColumn(description),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    progress.add_task(description, total=None)
    return progress


def _with_progress(items: Iterable[T], total: int, args: argparse.Namespace) -> Iterator[T]:
    """The items (paths to run, or results as they arrive), advancing a bar on a terminal."""
    if not _show_progress(args) or total < 2:
        yield from items
        return
    with _progress() as progress:
        task = progress.add_task("models", total=total)
        for item in items:
            yield item
            progress.advance(task)


def finish_batch(
    args: argparse.Namespace,
    results: Sequence[ModelResult],
    columns: Sequence[tuple[str, str]],
    *,
    title: str,
) -> int:
    """Print the summary (table, or JSON list with --json) → the worst exit code."""
    if getattr(args, "json", False):
        print_json([_json_entry(result) for result in results])
    else:
        print_text(render_summary(results, columns, title=title, color=use_color(args)))
    return max((result.exit_code for result in results), default=0)


def _json_entry(result: ModelResult) -> Any:
    """One list entry: the path and exit code, then the command's own document (or the error)."""
    entry: dict[str, Any] = {"path": result.model, "exit_code": result.exit_code}
    if result.error is not None:
        entry["error"] = result.error
    elif isinstance(result.document, dict):
        entry.update(result.document)
    else:
        entry["result"] = result.document
    return entry


def render_summary(
    results: Sequence[ModelResult],
    columns: Sequence[tuple[str, str]],
    *,
    title: str,
    color: bool,
) -> str:
    """Results → a table: model, each column, exit code; errors span the row."""
    from rich.table import Table  # noqa: PLC0415 - batches only (see the imports)
    from rich.text import Text  # noqa: PLC0415 - batches only

    from arenalens.report.console import render_text  # noqa: PLC0415 - batches only

    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("model", overflow="fold")
    for _, heading in columns:
        table.add_column(heading, justify="right")
    table.add_column("exit", justify="right")
    errors: list[Text] = []
    for result in results:
        name = os.path.basename(result.model)
        if result.error is not None:
            # The message goes under the table, whole: squeezed into the first data column it
            # read as that column's value ("subgraphs: no such file").
            table.add_row(
                Text(name, style="red"), *(["error"] * len(columns)), str(result.exit_code)
            )
            errors.append(Text.assemble((f"{name}: ", "bold red"), _without_path(result)))
            continue
        table.add_row(
            name, *(_cell(result.row.get(key)) for key, _ in columns), str(result.exit_code)
        )
    failed = sum(1 for result in results if result.exit_code)
    footer = f"{len(results)} models, {failed} with a non-zero exit code"
    parts: list[Any] = [table, *errors, footer]
    text = render_text(parts, color=color, width=max(terminal_width(), 100))
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def run_command(
    args: argparse.Namespace,
    worker: Worker,
    single: Callable[[argparse.Namespace, str], int],
    columns: Sequence[tuple[str, str]],
    *,
    title: str,
) -> int:
    """The shared handler body: one file → `single` (full output); several → batch summary."""
    arguments: Sequence[str] = args.models
    if not is_batch(arguments):
        return single(args, arguments[0])
    paths = expand_model_arguments(arguments)
    return finish_batch(args, run_models(args, paths, worker), columns, title=title)
