"""A flow campaign: flows (seed, 0..n-1), each walked in a fresh folder, judged, counted.

Each flow runs in a forked child of this process, one at a time (`workers=1`, the default on a
shared machine) or several at once, under a wall-clock limit: a flow whose process dies or hangs
is a `no-crash` failure to replay, never the end of the campaign. The summary counts claims by
kind and outcome, lists every failure with the flow that replays it (`python -m flows --replay N
--seed S`), and says how many claims the wheel and the Cortex-M QEMU sample judged.
"""

from __future__ import annotations

import os
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arenalens.runtimes.child import run_in_child
from flows.claims import FAILURES, KINDS, OUTCOMES, UNSAFE, WRONG, Claim
from flows.commands import inside
from flows.flow import Flow, random_flow
from flows.oracle import CortexM, Wheel
from flows.walk import FlowResult, Walk

# One flow in ten asks the QEMU probes about its Cortex-M claims (they take seconds each).
DEVICE_SAMPLE_EVERY = 10
FLOW_TIME_LIMIT_SECONDS = 900


@dataclass
class Summary:
    """A campaign's counts and failures (the benchmark's results file is its `as_dict`)."""

    seed: int
    flows: int = 0
    seconds: float = 0.0
    claims: Counter[tuple[str, str]] = field(default_factory=Counter)
    families: Counter[str] = field(default_factory=Counter)
    commands: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    harness_errors: list[dict[str, Any]] = field(default_factory=list)
    wheel_runs: int = 0
    qemu_runs: int = 0

    def add(self, result: FlowResult, wheel_runs: int = 0, qemu_runs: int = 0) -> None:
        flow = result.flow
        self.flows += 1
        self.seconds += result.seconds
        self.wheel_runs += wheel_runs
        self.qemu_runs += qemu_runs
        self.families[flow.subject.family] += 1
        for ran in result.commands:
            self.commands[ran.argv[0] if ran.argv else "?"] += 1
        for claim in result.claims:
            self.claims[(claim.kind, claim.outcome)] += 1
        for claim in result.failures:
            self.failures.append(_failure(flow, claim))
        if result.error:
            self.harness_errors.append(
                {"flow": flow.index, "describe": flow.describe(), "error": result.error}
            )

    @property
    def unsafe(self) -> int:
        return sum(count for (_, outcome), count in self.claims.items() if outcome == UNSAFE)

    @property
    def failed(self) -> int:
        return sum(count for (_, outcome), count in self.claims.items() if outcome in FAILURES)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": "arenalens.flows",
            "seed": self.seed,
            "flows": self.flows,
            "seconds": round(self.seconds, 1),
            "wheel_runs": self.wheel_runs,
            "qemu_runs": self.qemu_runs,
            "unsafe_claims": self.unsafe,
            "failed_claims": self.failed,
            "claims": {
                kind: {
                    outcome: self.claims[(kind, outcome)]
                    for outcome in OUTCOMES
                    if self.claims[(kind, outcome)]
                }
                for kind in KINDS
                if any(self.claims[(kind, outcome)] for outcome in OUTCOMES)
            },
            "families": dict(sorted(self.families.items())),
            "commands": dict(sorted(self.commands.items())),
            "failures": self.failures,
            "harness_errors": self.harness_errors,
        }


def _failure(flow: Flow, claim: Claim) -> dict[str, Any]:
    return {
        "flow": flow.index,
        "describe": flow.describe(),
        **claim.as_dict(),
    }


def walk_flow(
    flow: Flow,
    *,
    wheel: Wheel,
    cortex_m: CortexM | None,
    base: Path,
    device_sample_every: int = DEVICE_SAMPLE_EVERY,
) -> FlowResult:
    """One flow in its own folder under `base`, in this process; a failure of the harness itself
    is recorded in the result, not raised."""
    folder = base / f"flow-{flow.index}"
    folder.mkdir(parents=True, exist_ok=True)
    sample = device_sample_every > 0 and flow.index % device_sample_every == 0
    walk = Walk(flow, folder, wheel=wheel, cortex_m=cortex_m, device_sample=sample)
    with inside(folder):
        try:
            return walk.walk()
        except Exception as error:  # the harness's own bug: said, not hidden
            walk.result.error = f"{type(error).__name__}: {error}\n{traceback.format_exc()[-1500:]}"
            return walk.result


def run_campaign(
    *,
    seed: int,
    flows: int,
    start: int = 0,
    workers: int = 1,
    families: tuple[str, ...] = (),
    device_sample_every: int = DEVICE_SAMPLE_EVERY,
    progress: Callable[[FlowResult], None] | None = None,
) -> Summary:
    """Walk flows start..start+flows-1 of the campaign `seed` → the Summary. Each flow runs in a
    forked child: a crash inside arenalens (an abort in a native library) is that flow's finding,
    not the end of the campaign, and no flow's state leaks into the next."""
    summary = Summary(seed)
    split = _optimize_has_split()
    _judges()  # the real runtimes imported once, before any fork
    with tempfile.TemporaryDirectory(prefix="arenalens-flows-") as folder:
        job = _Job(seed, families, split, device_sample_every, Path(folder))
        indexes = range(start, start + flows)
        with ThreadPoolExecutor(max(1, workers)) as pool:
            for result, wheel_runs, qemu_runs in pool.map(job, indexes):
                summary.add(result, wheel_runs, qemu_runs)
                if progress is not None:
                    progress(result)
    return summary


@dataclass(frozen=True)
class _Job:
    """Walk flow n in a forked child; a child that dies or hangs is that flow's crash."""

    seed: int
    families: tuple[str, ...]
    split: bool
    device_sample_every: int
    base: Path

    def __call__(self, index: int) -> tuple[FlowResult, int, int]:
        flow = random_flow(self.seed, index, families=self.families, split=self.split)
        payload, exit_code = run_in_child(
            self.child, (flow,), timeout_seconds=FLOW_TIME_LIMIT_SECONDS
        )
        _clean(self.base / f"flow-{index}")
        if payload is None:
            result = FlowResult(flow)
            how = "hung" if exit_code is None else f"died (exit code {exit_code})"
            result.claims.append(
                Claim(
                    "no-crash",
                    WRONG,
                    flow.describe(),
                    f"the flow's process {how}; replay: python -m flows --replay {index} "
                    f"--seed {self.seed}",
                )
            )
            return result, 0, 0
        return payload["result"], payload["wheel_runs"], payload["qemu_runs"]

    def child(self, sender: Any, flow: Flow) -> None:
        os.environ["ARENALENS_DEBUG"] = "1"  # an internal error's traceback, to report
        wheel, cortex_m = _judges()
        result = walk_flow(
            flow,
            wheel=wheel,
            cortex_m=cortex_m,
            base=self.base,
            device_sample_every=self.device_sample_every,
        )
        sender.send({"result": result, "wheel_runs": wheel.runs, "qemu_runs": cortex_m.runs})
        sender.close()


_JUDGES: list[tuple[Wheel, CortexM]] = []


def _judges() -> tuple[Wheel, CortexM]:
    if not _JUDGES:
        _JUDGES.append((Wheel(), CortexM()))
    return _JUDGES[0]


def _clean(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _optimize_has_split() -> bool:
    """Whether this checkout's optimize takes --split (the split stream's option)."""
    from arenalens.cli import build_parser

    parser = build_parser(["optimize"])
    choices = getattr(parser, "_subparsers", None)
    if choices is None:
        return False
    for action in choices._group_actions:
        optimize = getattr(action, "choices", {}).get("optimize")
        if optimize is not None:
            return any("--split" in a.option_strings for a in optimize._actions)
    return False
