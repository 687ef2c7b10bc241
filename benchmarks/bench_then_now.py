"""In-process `arenalens.check` of today's code against an old checkout's, in one run, taking turns.

bench_speed.py's children use APIs an old tree may lack (`clear_caches`, say), so this measures only
what every release has: `arenalens.check(bytes, budget=..., build="cortex-m7/cmsis-nn")` on a new
bytes object per call (made before the clock starts). A tree with `clear_caches` forgets its model
caches before each call (cold, as bench_speed); one without keeps whatever it keeps, which can only
flatter the old tree. Medians and minima of CPU time per call, per interpreter.

    python benchmarks/bench_then_now.py --old /tmp/base31/src --python /usr/bin/python3.11
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
CASES = (
    ("vww_96 int8", "mlperf_tiny__vww_96_int8.tflite"),
    ("mobilenet_v2 224", "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite"),
)
NEW_SOURCE = Path(__file__).resolve().parents[1] / "src"

# The child: imports arenalens from the tree on its path and times each call's CPU.
CHILD = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import arenalens
forget = getattr(arenalens, "clear_caches", None)
data = open(sys.argv[2], "rb").read()
arenalens.check(bytes(data), budget=64 << 20, build="cortex-m7/cmsis-nn")
times = []
for _ in range(int(sys.argv[3])):
    fresh = bytes(bytearray(data))
    if forget:
        forget()
    start = time.process_time()
    arenalens.check(fresh, budget=64 << 20, build="cortex-m7/cmsis-nn")
    times.append(time.process_time() - start)
print(json.dumps([statistics.median(times), min(times)]))
"""


def child_ms(python: str, source: str, model: Path, calls: int) -> tuple[float, float]:
    """Median and minimum CPU milliseconds of one child's calls."""
    completed = subprocess.run(
        [python, "-c", CHILD, source, str(model), str(calls)],
        capture_output=True,
        text=True,
        check=True,
    )
    median, fastest = json.loads(completed.stdout)
    return median * 1e3, fastest * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the old checkout's src folder")
    parser.add_argument("--python", action="append", help="an interpreter (repeatable)")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    for python in args.python or [sys.executable]:
        for label, file in CASES:
            old: list[tuple[float, float]] = []
            new: list[tuple[float, float]] = []
            for _ in range(args.turns):
                old.append(child_ms(python, args.old, MODELS / file, args.calls))
                new.append(child_ms(python, str(NEW_SOURCE), MODELS / file, args.calls))
            old_median = min(median for median, _ in old)
            new_median = min(median for median, _ in new)
            print(
                f"{python}  {label}: old {old_median:.2f} ms, now {new_median:.2f} ms "
                f"(medians, fastest of {args.turns} turns), now/old {new_median / old_median:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
