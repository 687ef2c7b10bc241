"""Writing files safely: the one place arenalens creates or replaces a file.

A file is written to a hidden temporary file in the target's directory, flushed to disk, given
the permissions a normal `open()` would give it, and renamed over the target in one step
(`os.replace` is atomic on POSIX and Windows). Readers see the old file or the new one, never a
half-written one; an exception or Ctrl-C (and SIGTERM, which the CLI turns into an exception)
removes the temporary file; and a target that is one of the run's input files is refused before
anything is written. A missing folder on the way is created, as for every output arenalens
writes (files and folders alike). Only SIGKILL or a power cut can leave a hidden
`.<name>.*.tmp` behind, and even then the target is intact.
"""

from __future__ import annotations

import os
from pathlib import Path

from arenalens.errors import OutputError, UsageError

# A new private file, as tempfile.mkstemp opens it (binary on Windows, not inherited).
_NEW_FILE = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
)


def write_atomic(
    path: str | os.PathLike[str], data: bytes | str, *, protect: tuple[str, ...] = ()
) -> Path:
    """Write data to path via a temp file + rename, never over a protected (input) file."""
    target = Path(path)
    for protected in protect:
        if _same_file(target, Path(protected)):
            raise UsageError(f"{target}: refusing to overwrite the input file")
    if target.is_dir():
        raise UsageError(f"{target}: is a directory")
    directory = target.parent if str(target.parent) else Path(".")
    make_folder(directory, what=str(target))
    payload = data.encode("utf-8") if isinstance(data, str) else data
    mode = _new_file_mode(target)
    temporary = ""
    try:
        # The name is known before the file exists, so a signal between creating and naming
        # it (a SIGTERM turned into SystemExit) cannot leave a file the cleanup below misses.
        handle = -1
        while handle < 0:
            temporary = str(directory / f".{target.name}.{os.urandom(6).hex()}.tmp")
            try:
                handle = os.open(temporary, _NEW_FILE, 0o600)
            except FileExistsError:
                temporary = ""  # another writer's: never ours to remove
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
            stream.flush()
            # On disk before the rename, so a crash cannot leave an empty file under the name.
            os.fsync(stream.fileno())
        # The file was made private (0600); give it the replaced file's mode, or what a
        # plain open() would have given a new one (0666 minus the umask).
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as error:
        if temporary:
            Path(temporary).unlink(missing_ok=True)
        raise OutputError(f"{target}: cannot write: {_why(error)}") from None
    except BaseException:
        if temporary:
            Path(temporary).unlink(missing_ok=True)
        raise
    return target


def check_output_path(path: str | os.PathLike[str], *, what: str) -> None:
    """Fail before any work when a file cannot be written at path: it names a folder, a part of
    the path is a file, or the nearest existing folder cannot be written into. (A path that
    fails only when written, a full disk or a special file system, fails then, the same way.)"""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{what} {target}: is a folder; give the file to write")
    ancestor = target.absolute().parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"{what} {target}: {ancestor} is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {target}: cannot write into {ancestor} (permission denied)")
    import tempfile  # noqa: PLC0415 - only commands that write a file need it

    try:
        # Write a file there for real: a special file system (/proc, /sys) or a read-only mount
        # passes os.access as root and fails only on writing, after other outputs were written.
        with tempfile.TemporaryFile(dir=ancestor):
            pass
    except OSError as error:
        raise OutputError(
            f"{what} {target}: cannot write into {ancestor} ({_why(error)})"
        ) from None


def _why(error: OSError) -> str:
    """An OSError → its reason in words ('No space left on device')."""
    return error.strerror or type(error).__name__


def make_folder(folder: Path, *, what: str) -> None:
    """Create folder and its parents if missing (every -o / --images does the same); UsageError
    when a part of the path is a file."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"{what}: {folder} is a file, not a folder") from None
    except NotADirectoryError:
        raise UsageError(f"{what}: a part of {folder} is a file, not a folder") from None
    except PermissionError:
        raise UsageError(f"{what}: cannot create folder {folder} (permission denied)") from None
    except OSError as error:
        raise OutputError(f"{what}: cannot create folder {folder}: {_why(error)}") from None


def _same_file(target: Path, protected: Path) -> bool:
    """True when writing target would replace protected (same path, symlink, or same inode)."""
    try:
        if not target.exists() or not protected.exists():
            return False
        return target.resolve() == protected.resolve() or os.path.samefile(target, protected)
    except OSError:
        return False


def _new_file_mode(target: Path) -> int:
    """The permission bits for target: an existing file's, else 0666 minus the umask."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


__all__ = ["check_output_path", "make_folder", "write_atomic"]
