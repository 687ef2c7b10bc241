"""The heap a real LiteRT interpreter holds for the upstream repositories' own .tflite files,
measured with ../shared/tools/litert-heap (tests/litert_heap_measure.py's tracer and measure.py)
and cached in tests/data/litert_heap_upstream.json:

    nice -n 10 python -m tests.litert_upstream_measure            # every upstream model
    nice -n 10 python -m tests.litert_upstream_measure --only seanet

and, on a machine with AVX2 and without AVX-512 (XNNPACK and ruy select other tiles there), into
tests/data/litert_heap_upstream_avx2.json, the held-out check of `--isa x86-64-v3` on a real CPU:

    nice -n 10 python -m tests.litert_upstream_measure \
        --cache tests/data/litert_heap_upstream_avx2.json

The models are every .tflite in the fetched mirrors of google-ai-edge/LiteRT and
tensorflow/tflite-micro (/work/.mirror/<owner+name>/repo, read with `git cat-file`; none is
copied into this project): held out, no rule was fitted to them. A Git LFS pointer or an empty
file is recorded as such and not measured. Per model and delegate the entry holds measure.py's
four figures (after creating the interpreter, after allocate_tensors(), after one invoke() on
zeros, the peak) or the error the wheel printed. tests/runtimes/litert/test_litert_upstream.py
compares arenalens' figures and verdicts with this file, and skips when the mirrors are absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import MODES, cache_document, measure, tracer

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "tests/data/litert_heap_upstream.json"
AVX2_DATA = REPO_ROOT / "tests/data/litert_heap_upstream_avx2.json"
MIRRORS = Path(os.environ.get("ARENALENS_MIRRORS", "/work/.mirror"))
REPOSITORIES = ("google-ai-edge+LiteRT", "tensorflow+tflite-micro")
LFS_POINTER = b"version https://git-lfs"


def mirror(repository: str) -> Path:
    """The bare git directory of a fetched mirror."""
    return MIRRORS / repository / "repo"


def upstream_models() -> list[tuple[str, str]]:
    """(repository, path) of every .tflite at the mirrors' HEAD, in a fixed order."""
    found: list[tuple[str, str]] = []
    for repository in REPOSITORIES:
        if not mirror(repository).is_dir():
            continue
        listing = subprocess.run(
            ["git", "-C", str(mirror(repository)), "ls-tree", "-r", "--name-only", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        found.extend(
            (repository, path) for path in listing.splitlines() if path.endswith(".tflite")
        )
    return sorted(found)


def model_bytes(repository: str, path: str) -> bytes | None:
    """One model's bytes from its mirror (git cat-file, no checkout); None when the mirror
    lists the file but holds no blob for it (its largest files may be absent)."""
    completed = subprocess.run(
        ["git", "-C", str(mirror(repository)), "cat-file", "-p", f"HEAD:{path}"],
        capture_output=True,
        check=False,
    )
    return completed.stdout if completed.returncode == 0 else None


def absence(data: bytes | None) -> str:
    """Why a model cannot be read from the mirror ('' when it can)."""
    if data is None:
        return "blob absent from the mirror"
    if not data:
        return "empty file"
    if data.startswith(LFS_POINTER):
        return "Git LFS pointer"
    return ""


def key(repository: str, path: str) -> str:
    """The cache's name for one model."""
    return f"{repository}:{path}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="measure models whose path contains this")
    parser.add_argument("--cache", type=Path, default=DATA, help="the cache to update")
    arguments = parser.parse_args(argv)
    cache = arguments.cache.resolve()
    command = "nice -n 10 python -m tests.litert_upstream_measure"
    if cache != DATA:
        command += f" --cache {cache.relative_to(REPO_ROOT)}"
    document = cache_document(cache, command)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for repository, path in upstream_models():
            if arguments.only not in path:
                continue
            data = model_bytes(repository, path)
            missing = absence(data)
            entry: dict[str, Any] = {"bytes": len(data or b"")}
            if missing or data is None:
                entry["absent"] = missing
            else:
                model = folder / "model.tflite"
                model.write_bytes(data)
                entry.update({mode: measure(library, model, mode) for mode in MODES})
            document["models"][key(repository, path)] = entry
            print(key(repository, path), json.dumps(entry), flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    cache.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
