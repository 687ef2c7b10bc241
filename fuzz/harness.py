"""The fuzz harness: generate input n of a campaign, run it through every stage, classify the end.

Outcomes: **ok** (every stage finished), **model_error** (an `arenalens.ModelError`: the input was
refused, with a message), and the failures: **crash** (any other exception, or a worker that
died), **hang** (past the time limit) and **memory** (past the memory cap). A campaign runs in
worker processes, each under `RLIMIT_AS` and a `SIGALRM` deadline per input, watched by the parent,
which kills a worker that stops answering (a hang inside C code the alarm cannot interrupt) and
carries on with a fresh one. Input n depends only on (campaign seed, n), so any failure replays
alone: `generate_input(seed, n, corpus)`.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import resource
import signal
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from types import FrameType
from typing import Any

from arenalens.errors import ModelError
from fuzz.graphs import random_dag_model
from fuzz.hostile import HOSTILE
from fuzz.mutate import mutate
from fuzz.seeds import Seed, seed_corpus
from fuzz.stages import STAGES, Stage

OK = "ok"
MODEL_ERROR = "model_error"
CRASH = "crash"
HANG = "hang"
MEMORY = "memory"
OUTCOME_KINDS = (OK, MODEL_ERROR, CRASH, HANG, MEMORY)
FAILURE_KINDS = (CRASH, HANG, MEMORY)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one input ended: its kind, the stage that ended it, and what was raised where."""

    kind: str
    stage: str  # the stage that raised; "" when every stage finished
    detail: str = ""  # exception type and first line of its message
    where: str = ""  # innermost arenalens frame, "file.py:line in function"
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """True for crash, hang and memory outcomes."""
        return self.kind in FAILURE_KINDS

    @property
    def signature(self) -> str:
        """What groups failures with one cause: kind, stage, exception type and location."""
        return f"{self.kind} in {self.stage}: {self.detail.split(':', 1)[0]} at {self.where}"


REFIRE_S = 0.5  # seconds between repeats of an expired deadline's signal


class DeadlineExceeded(BaseException):
    """Raised by SIGALRM inside a worker; a BaseException so `except Exception` cannot hide it."""


@contextmanager
def deadline(seconds: float, *, cpu_seconds: float | None = None) -> Iterator[None]:
    """Raise DeadlineExceeded in this (main) thread when `seconds` of wall time pass, or, with
    `cpu_seconds`, when this process has used that much CPU (a limit that does not depend on
    how busy the machine is)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGPROF:
            raise DeadlineExceeded(f"over {cpu_seconds:g} s of CPU")
        raise DeadlineExceeded(f"over {seconds:g} s")

    previous_alarm = signal.signal(signal.SIGALRM, expire)
    previous_profile = signal.signal(signal.SIGPROF, expire)
    # Once expired, each timer fires again every REFIRE_S: a signal handler's exception that lands
    # in a weakref callback or a __del__ is swallowed as "unraisable", and the block would run on.
    signal.setitimer(signal.ITIMER_REAL, seconds, REFIRE_S)
    if cpu_seconds is not None:
        signal.setitimer(signal.ITIMER_PROF, cpu_seconds, REFIRE_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGPROF, previous_profile)


def run_stages(data: bytes, stages: Sequence[Stage] = STAGES, *, deep: bool = True) -> Outcome:
    """Run one input through the stages in this process and classify how it ended; `deep`
    False skips the deep-tier stages."""
    state: dict[str, Any] = {"data": data}
    started = time.perf_counter()
    stage_name = ""
    try:
        for stage in stages:
            if stage.deep and not deep:
                continue
            stage_name = stage.name
            stage.run(state)
    except ModelError as error:
        return Outcome(MODEL_ERROR, stage_name, _describe(error), "", _since(started))
    except DeadlineExceeded as error:
        return Outcome(HANG, stage_name, _describe(error), _location(error), _since(started))
    except MemoryError as error:
        return Outcome(MEMORY, stage_name, _describe(error), _location(error), _since(started))
    except Exception as error:
        return Outcome(CRASH, stage_name, _describe(error), _location(error), _since(started))
    return Outcome(OK, "", "", "", _since(started))


def _since(started: float) -> float:
    return time.perf_counter() - started


def _describe(error: BaseException) -> str:
    message = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {message[:300]}"


def _location(error: BaseException) -> str:
    """The innermost frame inside arenalens (else the innermost frame) of a traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "arenalens" in f.filename and "/fuzzing/" not in f.filename]
    candidates = ours or list(frames)
    if not candidates:
        return "?"
    frame = candidates[-1]
    path = frame.filename.replace("\\", "/")
    short = path.split("/src/", 1)[-1] if "/src/" in path else path.rsplit("/", 1)[-1]
    return f"{short}:{frame.lineno} in {frame.name}"


# -- inputs -------------------------------------------------------------------------------------

GENERATORS = (
    # (name, weight): mutation of valid models finds the most; crafted inputs reach deep stages.
    ("seed", 3),
    ("dag", 3),
    ("mutate", 68),
    ("hostile", 10),
    ("hostile+mutate", 8),
    ("junk", 8),
)


def is_deep(seed: int, index: int, deep_every: int) -> bool:
    """Whether input `index` also runs the deep-tier stages (1 in `deep_every`, spread evenly)."""
    return deep_every > 0 and (index + seed) % deep_every == 0


def generate_input(seed: int, index: int, corpus: Sequence[Seed]) -> tuple[bytes, str]:
    """(campaign seed, execution number, corpus) → (input bytes, recipe): deterministic."""
    rng = random.Random(f"arenalens-fuzz:{seed}:{index}")
    kind = rng.choices([g for g, _ in GENERATORS], [w for _, w in GENERATORS])[0]
    corpus_bytes = [s.data for s in corpus]
    if kind == "junk":
        size = rng.choice((0, 4, 8, 12, 32, 256, 4096))
        junk = bytearray(rng.randbytes(size))
        if size >= 8 and rng.random() < 0.8:
            junk[4:8] = b"TFL3"
            junk[0:4] = rng.randrange(min(size, 256)).to_bytes(4, "little")
        return bytes(junk), f"junk: {size} random bytes"
    if kind.startswith("hostile"):
        name = rng.choice(sorted(HOSTILE))
        data = HOSTILE[name](rng)
        recipe = f"hostile:{name}"
        if kind == "hostile+mutate":
            mutation = mutate(data, rng, corpus_bytes)
            return mutation.data, f"{recipe} | {mutation.recipe}"
        return data, recipe
    if kind == "dag":
        return random_dag_model(rng), "dag"
    chosen = rng.choice(corpus)
    if kind == "seed":
        return chosen.data, chosen.name
    if rng.random() < 0.15:
        # A fresh random DAG as the base: more graph shapes than the fixed corpus has.
        chosen = Seed("dag", random_dag_model(rng))
    mutation = mutate(chosen.data, rng, corpus_bytes)
    return mutation.data, f"{chosen.name} | {mutation.recipe}"


def generator_of(recipe: str) -> str:
    """Recipe → the generator family it came from (for outcome tables)."""
    if recipe == "dag":
        return "dag"
    if recipe.startswith("junk"):
        return "junk"
    if recipe.startswith("hostile:"):
        return "hostile+mutate" if "|" in recipe else "hostile"
    return "mutate" if "|" in recipe else "seed"


# -- campaigns ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CampaignConfig:
    """What to run: how many inputs, from which seed, with which limits."""

    executions: int
    seed: int = 0
    workers: int = 2
    # Per input, inside the worker: CPU seconds (SIGPROF), so a busy machine does not turn slow
    # inputs into hangs; and wall seconds (SIGALRM) for an input that blocks without computing.
    time_limit_s: float = 60.0  # a 5,000-operator model takes about 40 s through every stage
    wall_limit_s: float | None = None  # None: 4 × time limit + 10
    memory_limit_bytes: int = 3 << 30  # RLIMIT_AS of each worker
    corpus_directory: str | None = None  # real models to add to the seed corpus
    # 1 in this many inputs also runs the deep-tier stages (diagnose, reorder, optimize), whose
    # searches cost seconds per model; every input runs the rest.
    deep_every: int = 20
    batch: int = 16  # inputs sent to a worker at a time
    watchdog_s: float | None = None  # silence before a worker is killed; None: wall limit + 10

    @property
    def wall_deadline_s(self) -> float:
        """Wall seconds an input may take inside the worker."""
        return self.wall_limit_s if self.wall_limit_s is not None else 4 * self.time_limit_s + 10

    @property
    def kill_after_s(self) -> float:
        """Silence after which the parent kills a worker (the alarms failed to fire in time)."""
        return self.watchdog_s if self.watchdog_s is not None else self.wall_deadline_s + 10


@dataclass(frozen=True, slots=True)
class Execution:
    """One finished input: its number, outcome, recipe and size."""

    index: int
    outcome: Outcome
    recipe: str
    input_bytes: int
    deep: bool = False


@dataclass
class CampaignResult:
    """Aggregated outcomes of a campaign (filled in as executions finish)."""

    config: CampaignConfig
    counts: Counter[str] = field(default_factory=Counter)
    by_generator: Counter[tuple[str, str]] = field(default_factory=Counter)
    model_error_stages: Counter[str] = field(default_factory=Counter)
    failures: list[Execution] = field(default_factory=list)
    slowest: list[Execution] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    worker_restarts: int = 0
    worker_peak_rss_bytes: int = 0
    deep_counts: Counter[str] = field(default_factory=Counter)  # outcomes of deep-tier inputs

    def add(self, execution: Execution) -> None:
        """Count one execution."""
        outcome = execution.outcome
        self.counts[outcome.kind] += 1
        if execution.deep:
            self.deep_counts[outcome.kind] += 1
        self.by_generator[(generator_of(execution.recipe), outcome.kind)] += 1
        if outcome.kind == MODEL_ERROR:
            self.model_error_stages[outcome.stage] += 1
        if outcome.failed:
            self.failures.append(execution)
        self.seconds.append(outcome.seconds)
        self.slowest.append(execution)
        if len(self.slowest) > 64:
            self.slowest.sort(key=lambda e: -e.outcome.seconds)
            del self.slowest[10:]

    @property
    def executions(self) -> int:
        """Inputs finished."""
        return sum(self.counts.values())

    def top_slowest(self, count: int = 10) -> list[Execution]:
        """The slowest executions, slowest first."""
        return sorted(self.slowest, key=lambda e: -e.outcome.seconds)[:count]

    def failure_signatures(self) -> Counter[str]:
        """Failures grouped by cause."""
        return Counter(e.outcome.signature for e in self.failures)


def _limit_memory(limit_bytes: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _worker(connection: Connection, config: CampaignConfig, stages: Sequence[Stage]) -> None:
    """Worker process: receive batches of input numbers, send one Execution per input."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    corpus = seed_corpus(config.corpus_directory)
    _limit_memory(config.memory_limit_bytes)
    while True:
        batch = connection.recv()
        if batch is None:
            break
        for index in batch:
            deep = is_deep(config.seed, index, config.deep_every)
            try:
                data, recipe = generate_input(config.seed, index, corpus)
            except Exception as error:
                # A generator bug: counted (and replayable) like a crash, the campaign goes on.
                outcome = Outcome(CRASH, "generate", _describe(error), _location(error))
                connection.send(Execution(index, outcome, "generation failed", 0, deep))
                continue
            try:
                with deadline(config.wall_deadline_s, cpu_seconds=config.time_limit_s):
                    outcome = run_stages(data, stages, deep=deep)
            except DeadlineExceeded as error:
                # The alarm fired between stages' own handlers (rare): still a hang.
                outcome = Outcome(HANG, "?", _describe(error), _location(error))
            connection.send(Execution(index, outcome, recipe, len(data), deep))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    connection.send(("peak_rss", peak))


@dataclass
class _WorkerSlot:
    process: Any
    connection: Connection
    pending: deque[int] = field(default_factory=deque)
    last_heard: float = 0.0


def run_campaign(
    config: CampaignConfig,
    *,
    stages: Sequence[Stage] = STAGES,
    progress: Callable[[CampaignResult], None] | None = None,
) -> CampaignResult:
    """Run `config.executions` inputs across worker processes; never raises for an input."""
    result = CampaignResult(config)
    seed_corpus(config.corpus_directory)  # built once here, inherited by forked workers
    context: Any = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    queue: deque[int] = deque(range(config.executions))
    slots: list[_WorkerSlot] = []
    started = time.perf_counter()

    def start_worker() -> _WorkerSlot:
        parent_end, child_end = context.Pipe()
        # Not daemonic: the stages run the real interpreters in children of their own
        # (runtimes/child.py), which a daemonic process may not have; _stop_worker and replace
        # end every worker.
        process = context.Process(target=_worker, args=(child_end, config, tuple(stages)))
        process.start()
        child_end.close()
        return _WorkerSlot(process, parent_end, last_heard=time.monotonic())

    def feed(slot: _WorkerSlot) -> None:
        if slot.pending or not queue:
            return
        batch = [queue.popleft() for _ in range(min(config.batch, len(queue)))]
        slot.pending.extend(batch)
        slot.connection.send(batch)
        slot.last_heard = time.monotonic()

    def replace(slot: _WorkerSlot, outcome: Outcome) -> _WorkerSlot:
        """Record the input a lost worker was on, requeue the rest, start a new worker."""
        index = slot.pending.popleft()
        corpus = seed_corpus(config.corpus_directory)
        try:
            data, recipe = generate_input(config.seed, index, corpus)
        except Exception:
            data, recipe = b"", "generation failed"
        deep = is_deep(config.seed, index, config.deep_every)
        result.add(Execution(index, outcome, recipe, len(data), deep))
        queue.extendleft(reversed(slot.pending))
        slot.process.kill()
        slot.process.join()
        slot.connection.close()
        result.worker_restarts += 1
        return start_worker()

    last_progress = time.monotonic()
    try:
        slots = [start_worker() for _ in range(max(1, config.workers))]
        for slot in slots:
            feed(slot)
        while any(slot.pending for slot in slots):
            ready = wait([s.connection for s in slots if s.pending], timeout=1.0)
            now = time.monotonic()
            for position, slot in enumerate(slots):
                if not slot.pending:
                    continue
                if slot.connection in ready:
                    try:
                        message = slot.connection.recv()
                    except (EOFError, OSError):
                        code = slot.process.exitcode
                        died = Outcome(CRASH, "?", f"WorkerDied: exit code {code}", "worker")
                        slots[position] = replace(slot, died)
                        feed(slots[position])
                        continue
                    if isinstance(message, Execution):
                        slot.pending.remove(message.index)
                        slot.last_heard = now
                        result.add(message)
                        feed(slot)
                elif now - slot.last_heard > config.kill_after_s:
                    killed = Outcome(
                        HANG,
                        "?",
                        f"Killed: no answer in {config.kill_after_s:g} s",
                        "watchdog",
                        config.kill_after_s,
                    )
                    slots[position] = replace(slot, killed)
                    feed(slots[position])
            if progress is not None and now - last_progress > 5:
                result.wall_seconds = time.perf_counter() - started
                progress(result)
                last_progress = now
    finally:
        for slot in slots:
            _stop_worker(slot, result)
    result.wall_seconds = time.perf_counter() - started
    return result


def _stop_worker(slot: _WorkerSlot, result: CampaignResult) -> None:
    try:
        slot.connection.send(None)
        if slot.connection.poll(10):
            message = slot.connection.recv()
            if isinstance(message, tuple) and message[0] == "peak_rss":
                result.worker_peak_rss_bytes = max(result.worker_peak_rss_bytes, message[1])
    except (EOFError, OSError, BrokenPipeError):
        pass
    slot.process.join(timeout=5)
    if slot.process.is_alive():
        slot.process.kill()
        slot.process.join()
    slot.connection.close()


__all__ = [
    "CRASH",
    "FAILURE_KINDS",
    "GENERATORS",
    "HANG",
    "MEMORY",
    "MODEL_ERROR",
    "OK",
    "OUTCOME_KINDS",
    "CampaignConfig",
    "CampaignResult",
    "DeadlineExceeded",
    "Execution",
    "Outcome",
    "deadline",
    "generate_input",
    "generator_of",
    "is_deep",
    "run_campaign",
    "run_stages",
]
