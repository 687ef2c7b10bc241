"""Float convolution chains with 1, 2 and 4 threads under the builtin kernels (conv.cc's
multi-threaded Eigen kernel: runtimes/litert/heap_threads.eigen_conv_parts), measured with
../shared/tools/litert-heap's heap_tracer.so on this machine into
tests/data/litert_heap_conv_threads.json:

    python -m tests.litert_conv_threads

`mt16_<n>`: tests/litert_peak_cases.float_conv_chain(1600 + n). n 1-12 were measured while the
bound was written from conv.cc, eigen_support.cc and Eigen's thread pool (its thread pool's
bytes were read off them); n 13-24 were drawn and measured after it, held out."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.litert_heap_measure import REPO_ROOT, cache_document, tracer

DATA = REPO_ROOT / "tests/data/litert_heap_conv_threads.json"
COMMAND = "python -m tests.litert_conv_threads"
THREADS = (1, 2, 4)
NAMES = tuple((f"mt16_{n}", 1600 + n) for n in range(1, 25))


def case(seed: int) -> bytes:
    from tests.litert_peak_cases import float_conv_chain

    return float_conv_chain(seed)


def main() -> int:
    from tests.litert_heap_threads import measure

    document = cache_document(DATA, COMMAND)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, seed in NAMES:
            path = folder / f"{name}.tflite"
            path.write_bytes(case(seed))
            entry = {str(t): measure(library, path, "builtin", t) for t in THREADS}
            document["models"][path.name] = {"builtin": entry}
            print(path.name, json.dumps(entry), flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
