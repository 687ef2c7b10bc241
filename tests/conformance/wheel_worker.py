"""The probe worker of one `tflite-micro` wheel (started by tests/conformance/wheels.py in that
wheel's environment): one JSON request per line on stdin, {"path", "arena_size"}, one JSON reply
per line, the probe of `arenalens.runtimes.tflm.probe` (each size in a forked child).

The first line it writes names the wheel it imported. It imports the wheel before the first
request (an old wheel imports TensorFlow: seconds, not per probe). The wheel prints to stdout
("Number of resource variables ..."), so replies go to a copy of the original stdout and fd 1 is
pointed at /dev/null.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path


def main() -> int:
    """Serve probe requests until stdin closes."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    from tflite_micro import runtime  # noqa: F401 - imported once, inherited by every child

    from arenalens.runtimes.tflm.probe import probe
    from tests.conformance.wheels import probe_to_json

    replies.write(json.dumps({"version": importlib.metadata.version("tflite-micro")}) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        found = probe(request["path"], int(request["arena_size"]))
        replies.write(json.dumps(probe_to_json(found)) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository: `tests`
    sys.exit(main())
