"""Run a real-interpreter job in a child process: a crash or hang costs the child, not us.

The real runtimes can SIGSEGV on too-small arenas or odd models (docs/runtime-rules.md §T10,
§L10), so every call into them happens in a forked child (spawn where fork does not exist) that
sends one payload back through a pipe.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

# How long a child may take to exit once it has sent its payload.
_EXIT_GRACE_SECONDS = 5.0


def run_in_child(
    target: Callable[..., None], args: tuple[Any, ...], *, timeout_seconds: float
) -> tuple[dict[str, Any] | None, int | None]:
    """target(sender, *args) in a child → (the payload it sent or None, its exit code).

    The child must send exactly one dict through `sender`. None means it crashed, hung past the
    timeout, or exited without sending.
    """
    # multiprocessing only when a child runs: the commands that import this module (shape
    # changes, `check`) mostly never start one.
    import multiprocessing  # noqa: PLC0415

    if multiprocessing.current_process().daemon and hasattr(os, "fork"):
        # multiprocessing refuses children to a daemonic process (a multiprocessing.Pool worker
        # calling arenalens); a plain fork is the same isolation.
        return _run_in_forked_child(target, args, timeout_seconds)
    # Fork keeps the child cheap (no re-import); spawn where fork does not exist.
    context: Any = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=target, args=(sender, *args))
    child.start()
    sender.close()
    payload: dict[str, Any] | None = None
    if receiver.poll(timeout_seconds):
        try:
            payload = receiver.recv()
        except EOFError:
            payload = None
    child.join(_EXIT_GRACE_SECONDS)
    if child.is_alive():
        child.kill()
        child.join()
    receiver.close()
    exit_code: int | None = child.exitcode
    return payload, exit_code


def _run_in_forked_child(
    target: Callable[..., None], args: tuple[Any, ...], timeout_seconds: float
) -> tuple[dict[str, Any] | None, int | None]:
    """run_in_child through os.fork and a pipe, for a daemonic caller: the same payload and exit
    code (negative: the signal that ended the child)."""
    from multiprocessing.connection import Connection  # noqa: PLC0415 - see run_in_child

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run the job, never return into the caller's code
        os.close(read_fd)
        code = 0
        try:
            target(Connection(write_fd, readable=False), *args)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_fd)
    receiver = Connection(read_fd, writable=False)
    payload: dict[str, Any] | None = None
    try:
        if receiver.poll(timeout_seconds):
            payload = receiver.recv()
    except (EOFError, OSError):
        payload = None
    receiver.close()
    return payload, _reap(pid)


def _reap(pid: int) -> int | None:
    """Wait up to the grace period for the child, then kill it; its exit code."""
    deadline = time.monotonic() + _EXIT_GRACE_SECONDS
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
