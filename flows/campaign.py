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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arenalens.runtimes.child import run_in_child
from flows.claims import FAILURES, KINDS, OUTCOMES, UNSAFE, WRONG, Claim
from flows.commands import inside
from flows.flow import Flow, random_flow
from flows.oracle import CortexM, LiteRTHeap, Wheel
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

    builds: Counter[str] = field(default_factory=Counter)
    paths: Counter[str] = field(default_factory=Counter)
    optimize_flags: Counter[str] = field(default_factory=Counter)

    def add(self, result: FlowResult, wheel_runs: int = 0, qemu_runs: int = 0) -> None:
        self.add_record(flow_record(result, wheel_runs, qemu_runs))

    def add_record(self, record: dict[str, Any]) -> None:
        """One flow's journal record (`flow_record`), counted."""
        self.flows += 1
        self.seconds += record["seconds"]
        self.wheel_runs += record["wheel_runs"]
        self.qemu_runs += record["qemu_runs"]
        self.families[record["family"]] += 1
        self.builds[record["build"]] += 1
        self.paths[record["path"]] += 1
        if record["optimize"] is not None:
            for flag in record["optimize"] or ["(plain)"]:
                self.optimize_flags[flag] += 1
        for command in record["commands"]:
            self.commands[command] += 1
        for kind, outcome, count in record["claims"]:
            self.claims[(kind, outcome)] += count
        self.failures.extend(record["failures"])
        if record["error"]:
            self.harness_errors.append(
                {"flow": record["flow"], "describe": record["describe"], "error": record["error"]}
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
            "builds": dict(sorted(self.builds.items())),
            "paths": dict(sorted(self.paths.items())),
            "optimize_flags": dict(sorted(self.optimize_flags.items())),
            "commands": dict(sorted(self.commands.items())),
            "failures": self.failures,
            "harness_errors": self.harness_errors,
        }


def flow_record(result: FlowResult, wheel_runs: int, qemu_runs: int) -> dict[str, Any]:
    """One walked flow as a JSON line of the campaign's journal: what the summary counts, and
    each failure whole (so a run stopped half-way resumes without walking its flows again)."""
    flow = result.flow
    claims = Counter((claim.kind, claim.outcome) for claim in result.claims)
    return {
        "flow": flow.index,
        "describe": flow.describe(),
        "family": flow.subject.family,
        "build": build_label(flow.build),
        "path": " > ".join(
            ("optimize", flow.command) if flow.optimize is not None else (flow.command,)
        ),
        "optimize": list(flow.optimize) if flow.optimize is not None else None,
        "seconds": round(result.seconds, 2),
        "wheel_runs": wheel_runs,
        "qemu_runs": qemu_runs,
        "commands": [ran.argv[0] if ran.argv else "?" for ran in result.commands],
        "claims": [[kind, outcome, count] for (kind, outcome), count in sorted(claims.items())],
        "failures": [_failure(flow, claim) for claim in result.failures],
        "error": result.error,
    }


def build_label(build: tuple[str, ...]) -> str:
    """`host`, `cortex-m7 cmsis-nn` (a core's reference kernels: `cortex-m7 reference`; CMSIS-NN
    on the host's core: `host cmsis-nn`), or `board stm32f746`."""
    if not build:
        return "host"
    options = dict(zip(build[::2], build[1::2], strict=True))
    if "--target" in options:
        return f"board {options['--target']}"
    label = f"{options.get('--cpu', 'host')} {options.get('--kernels', 'reference')}"
    label += f"+{options['--npu']}" if "--npu" in options else ""
    return label + (f" tflm {options['--tflm']}" if "--tflm" in options else "")


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
    litert: LiteRTHeap | None = None,
) -> FlowResult:
    """One flow in its own folder under `base`, in this process; a failure of the harness itself
    is recorded in the result, not raised."""
    folder = base / f"flow-{flow.index}"
    folder.mkdir(parents=True, exist_ok=True)
    sample = device_sample_every > 0 and flow.index % device_sample_every == 0
    walk = Walk(flow, folder, wheel=wheel, cortex_m=cortex_m, device_sample=sample, litert=litert)
    with inside(folder):
        try:
            return walk.walk()
        except Exception as error:  # the harness's own bug: said, not hidden
            walk.result.error = f"{type(error).__name__}: {error}\n{traceback.format_exc()[-1500:]}"
            return walk.result
        finally:
            walk.judge.old_wheels.close()


def run_campaign(
    *,
    seed: int,
    flows: int,
    start: int = 0,
    workers: int = 1,
    families: tuple[str, ...] = (),
    device_sample_every: int = DEVICE_SAMPLE_EVERY,
    progress: Callable[[FlowResult], None] | None = None,
    done: Sequence[dict[str, Any]] = (),
    journal: Callable[[dict[str, Any]], None] | None = None,
    fixed: tuple[Flow, ...] = (),
    wide: bool = False,
    builds: bool = False,
) -> Summary:
    """Walk flows start..start+flows-1 of the campaign `seed` → the Summary. Each flow runs in a
    forked child: a crash inside arenalens (an abort in a native library) is that flow's finding,
    not the end of the campaign, and no flow's state leaks into the next.

    `done`: journal records of flows already walked (a resumed run), counted and not walked
    again; `journal` receives each newly walked flow's record as soon as it is judged; `fixed`:
    walk these flows (flow n is fixed[n]) instead of random ones (`ladder.ladder_flows`);
    `wide`, `builds`: draw `--wide`'s paths and `--builds`' builds too (`flow.random_flow`)."""
    summary = Summary(seed)
    walked = set()
    for record in done:
        if start <= record["flow"] < start + flows and record["flow"] not in walked:
            summary.add_record(record)
            walked.add(record["flow"])
    split = _optimize_has_split()
    _judges(litert=wide)  # the real runtimes imported once, before any fork
    with tempfile.TemporaryDirectory(prefix="arenalens-flows-") as folder:
        job = _Job(seed, families, split, device_sample_every, Path(folder), fixed, wide, builds)
        indexes = [index for index in range(start, start + flows) if index not in walked]
        with ThreadPoolExecutor(max(1, workers)) as pool:
            for result, wheel_runs, qemu_runs in pool.map(job, indexes):
                record = flow_record(result, wheel_runs, qemu_runs)
                summary.add_record(record)
                if journal is not None:
                    journal(record)
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
    fixed: tuple[Flow, ...] = ()
    wide: bool = False
    builds: bool = False

    def __call__(self, index: int) -> tuple[FlowResult, int, int]:
        flow = (
            self.fixed[index]
            if self.fixed
            else random_flow(
                self.seed,
                index,
                families=self.families,
                split=self.split,
                wide=self.wide,
                builds=self.builds,
            )
        )
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
                    f"the flow's process {how}; replay: {flow.replay_command}",
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
            litert=_LITERT[0] if _LITERT else None,
        )
        sender.send({"result": result, "wheel_runs": wheel.runs, "qemu_runs": cortex_m.runs})
        sender.close()


_JUDGES: list[tuple[Wheel, CortexM]] = []
_LITERT: list[LiteRTHeap] = []


def _judges(*, litert: bool = False) -> tuple[Wheel, CortexM]:
    """The real runtimes, made once in the parent (forked children share them); `litert`: the
    LiteRT heap tracer too (compiled once)."""
    if not _JUDGES:
        _JUDGES.append((Wheel(), CortexM()))
    if litert and not _LITERT:
        _LITERT.append(LiteRTHeap())
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
