"""Older `tflite-micro` wheels as measured targets: a wheel version → an environment that runs it,
and the same probe arenalens runs on the installed wheel, answered from that environment.

Every dated `tflite-micro` wheel on PyPI is real TFLM at one commit: the version string is the
commit's time (0.dev20250107191040 is the commit of 2025-01-07 19:10:40 UTC) and the wheel's
METADATA names the commit ("built from commit [10ebaab]"). The wheels before 2026-08 import
TensorFlow (their `flatbuffer_utils` reads `tensorflow.python.platform.gfile`), 2 GB a copy, so
the environments share one base venv holding the dependencies, and each wheel lives in a folder of
its own, installed without dependencies and put first on the path:

    $ARENALENS_TFLM_WHEELS/base/        python3 -m venv; pip install tensorflow numpy ...
    $ARENALENS_TFLM_WHEELS/<version>/   pip install --no-deps --target <version> tflite-micro==V

(`ARENALENS_TFLM_WHEELS` defaults to ~/.cache/arenalens/tflm-wheels.) `environment(version)`
makes both on first use; `WheelProbe(version)` starts one worker there
(`tests/conformance/wheel_worker.py`, which imports the wheel once and answers each request with
`arenalens.runtimes.tflm.probe.probe`, the installed wheel's probe: every size in a forked child).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from arenalens.runtimes.tflm.probe import Category, Probe

REPO_ROOT = Path(__file__).resolve().parents[2]
WHEELS = Path(
    os.environ.get("ARENALENS_TFLM_WHEELS", Path.home() / ".cache" / "arenalens" / "tflm-wheels")
)
WORKER = Path(__file__).resolve().parent / "wheel_worker.py"
# What the old wheels import (their METADATA's Requires-Dist) and what arenalens' probe module
# imports (pyproject's dependencies): the base environment every wheel folder runs on.
BASE_PACKAGES = (
    "tensorflow",
    "numpy",
    "flatbuffers",
    "pyyaml",
    "bitarray",
    "tflite>=2.18",
    "rich>=13",
    "sortedcontainers>=2.4",
)
_VERSION = re.compile(r"^0\.dev\d{14}$")
_COMMIT = re.compile(r"built from commit\s*\[([0-9a-f]{7,40})\]")
# A request may wait on a bisection step of a large model; the probe's own timeout is 120 s.
_REPLY_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class Environment:
    """Where one wheel runs: the base interpreter and the wheel's own folder."""

    version: str
    python: Path
    folder: Path

    def commit(self) -> str:
        """The TFLM commit the wheel was built from (its METADATA's short hash)."""
        for metadata in self.folder.glob("tflite_micro-*.dist-info/METADATA"):
            found = _COMMIT.search(metadata.read_text())
            if found:
                return found.group(1)
        raise RuntimeError(f"no commit in the METADATA of tflite-micro=={self.version}")


def check_version(version: str) -> str:
    """A wheel version as PyPI spells it (0.dev + 14 digits), or ValueError."""
    if not _VERSION.match(version):
        raise ValueError(f"not a tflite-micro wheel version: {version!r} (0.dev<14 digits>)")
    return version


def environment(version: str) -> Environment:
    """The environment of one wheel version, made on first use (pip, several minutes the first
    time: the base environment downloads TensorFlow)."""
    check_version(version)
    base = WHEELS / "base"
    python = base / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(base)])
        _run([str(python), "-m", "pip", "install", "--quiet", *BASE_PACKAGES])
    folder = WHEELS / version
    if not any(folder.glob("tflite_micro-*.dist-info")):
        _run(
            [
                *(str(python), "-m", "pip", "install", "--quiet", "--no-deps"),
                *("--target", str(folder), f"tflite-micro=={version}"),
            ]
        )
    return Environment(version, python, folder)


def _run(command: list[str]) -> None:
    print("$", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)


class WheelProbe:
    """`probe(path, arena_size)` on one wheel version, answered by a worker in its environment.

    Use as a context manager (the worker ends with it) or call `close()`."""

    def __init__(self, version: str) -> None:
        self.environment = environment(version)
        python_path = os.pathsep.join([str(self.environment.folder), str(REPO_ROOT / "src")])
        self._worker = subprocess.Popen(
            [str(self.environment.python), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": python_path, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        hello = self._reply()
        if hello.get("version") != version:
            self.close()
            raise RuntimeError(f"the worker for {version} runs tflite-micro {hello}")
        self.commit = self.environment.commit()

    def __enter__(self) -> WheelProbe:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __call__(self, path: str, arena_size: int) -> Probe:
        """Set the model at path up with arena_size bytes on this wheel."""
        assert self._worker.stdin is not None
        self._worker.stdin.write(json.dumps({"path": path, "arena_size": arena_size}) + "\n")
        self._worker.stdin.flush()
        return probe_from_json(self._reply())

    def _reply(self) -> dict[str, Any]:
        assert self._worker.stdout is not None
        line = self._worker.stdout.readline()
        if not line:
            raise RuntimeError(f"the tflite-micro worker exited ({self._worker.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        """End the worker."""
        if self._worker.stdin is not None and not self._worker.stdin.closed:
            self._worker.stdin.close()
        try:
            self._worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._worker.kill()
            self._worker.wait()
        if self._worker.stdout is not None:
            self._worker.stdout.close()  # (an open pipe is a ResourceWarning where it is collected)


def probe_to_json(found: Probe) -> dict[str, Any]:
    """A probe → what the worker sends back (one JSON line)."""
    return {
        "arena_size": found.arena_size,
        "status": found.status,
        "head": found.head,
        "tail": found.tail,
        "total": found.total,
        "categories": {
            name: [c.used, c.requested, c.count, c.unit] for name, c in found.categories.items()
        },
        "log": found.log,
    }


def probe_from_json(reply: dict[str, Any]) -> Probe:
    """The worker's reply → the probe it ran."""
    return Probe(
        reply["arena_size"],
        reply["status"],
        head=reply["head"],
        tail=reply["tail"],
        total=reply["total"],
        categories=MappingProxyType(
            {name: Category(*values) for name, values in reply["categories"].items()}
        ),
        log=reply["log"],
    )
