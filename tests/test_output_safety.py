"""Output safety: files are written atomically, never over an input, and leave nothing partial
behind when the write fails or the process is interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arenalens.atomic import write_atomic
from arenalens.errors import UsageError
from arenalens.examples import write_example


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_replaces_the_target_in_one_step(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert listing(tmp_path) == ["report.html"]


def test_written_files_get_normal_permissions(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "model.tflite", b"data")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_the_input_file_is_never_replaced(tmp_path: Path, link: str) -> None:
    model = tmp_path / "model.tflite"
    model.write_bytes(b"input")
    target = model
    if link == "symlink":
        target = tmp_path / "alias.tflite"
        target.symlink_to(model)
    elif link == "hardlink":
        target = tmp_path / "hard.tflite"
        os.link(model, target)
    with pytest.raises(UsageError, match="refusing to overwrite the input file"):
        write_atomic(target, b"output", protect=(str(model),))
    assert model.read_bytes() == b"input"


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "out.tflite"
    target.write_bytes(b"previous")

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    if failing == "write":
        monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FailingStream())
    else:
        monkeypatch.setattr(os, failing, interrupt)
    with pytest.raises((KeyboardInterrupt, OSError)):
        write_atomic(target, b"x" * 1_000_000)
    monkeypatch.undo()
    assert listing(tmp_path) == ["out.tflite"]
    assert target.read_bytes() == b"previous"


class _FailingStream:
    """A file object whose write fails halfway (disk full)."""

    def __enter__(self) -> _FailingStream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")


def test_sigterm_during_a_write_leaves_no_partial_file(tmp_path: Path) -> None:
    # The child writes through write_atomic with a disk that stalls in fsync; SIGTERM arrives
    # mid-write. The CLI's handler turns it into SystemExit, which removes the temporary file.
    script = textwrap.dedent(
        f"""
        import os, time
        from arenalens.atomic import write_atomic
        from arenalens.cli import install_termination_handler
        install_termination_handler()
        os.fsync = lambda fd: time.sleep(60)
        write_atomic({str(tmp_path / "report.html")!r}, "x" * 100_000)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not any(name.endswith(".tmp") for name in os.listdir(tmp_path)):
        assert time.monotonic() < deadline, "the child never started writing"
        time.sleep(0.02)
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == 128 + signal.SIGTERM
    assert listing(tmp_path) == []


def test_example_files_are_written_atomically(tmp_path: Path) -> None:
    path = write_example("kws_ds_cnn", tmp_path)
    assert listing(tmp_path) == ["kws_ds_cnn.tflite"]
    assert path.read_bytes()[4:8] == b"TFL3"
