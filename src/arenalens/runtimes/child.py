"""Run a real-interpreter job in a child process: a crash or hang costs the child, not us.

The real runtimes can SIGSEGV on too-small arenas or odd models (docs/runtime-rules.md §T10,
§L10), so every call into them happens in a forked child (spawn where fork does not exist) that
sends one payload back through a pipe.
"""

from __future__ import annotations

import multiprocessing
import os
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
