"""`python -m flows`: run a flow campaign and print its tables (or replay one flow).

python -m flows --flows 2000 --seed 0 --json benchmarks/results/flows.json
    (each flow is appended to benchmarks/results/flows.json.journal as it is judged; the same
    command after an interruption resumes from it; the journal is removed once the JSON is written)
python -m flows --from-json benchmarks/results/flows.json      # print a saved run's tables
python -m flows --replay 137 --seed 0                          # one flow, every command
python -m flows --wide --flows 200 --seed 7                    # bank boards and LiteRT paths too
python -m flows --wide --litert-only --flows 60 --seed 900601  # the seed's first 60 LiteRT paths
python -m flows --builds --flows 100 --seed 1000401  # other TFLM releases, ESP-NN, Ethos-U
python -m flows --ladder --json benchmarks/results/flows_ladder.json
    (issue 27's four paths: check on a board -> optimize as printed -> check of the written
    model -> the real runtime, every claim judged on the wheel and the board's QEMU probe)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from flows.campaign import DEVICE_SAMPLE_EVERY, run_campaign
from flows.claims import KINDS, OUTCOMES
from flows.models import ALL_FAMILIES
from flows.walk import FlowResult


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows", description=__doc__)
    parser.add_argument("--flows", type=int, default=100, help="flows to walk (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="first flow index")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        choices=sorted(ALL_FAMILIES),
        help="only these (the held-out upstream and synthetic families only when named)",
    )
    parser.add_argument(
        "--device-every",
        type=int,
        default=DEVICE_SAMPLE_EVERY,
        help="one flow in N checks Cortex-M claims on the QEMU probes (0: none)",
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help="also walk RAM-bank boards and LiteRT (Linux devices, --runtime litert with "
        "--delegate/--isa/--threads/--reserve, judged on the real interpreter's heap), and "
        "give export and diagnose the board as users type it",
    )
    parser.add_argument(
        "--builds",
        action="store_true",
        help="also walk other builds: the host wheel of other TFLM releases (judged on that "
        "wheel), a core built from TFLM of another month, ESP32 chips with ESP-NN's releases, "
        "Ethos-U boards and NPUs (the model compiled by arenalens vela first)",
    )
    parser.add_argument(
        "--litert-only",
        action="store_true",
        help="with --wide: walk the first --flows flows of the seed that take a LiteRT path "
        "(each keeps its index: --replay N --wide walks it alone); no journal",
    )
    parser.add_argument("--json", metavar="FILE", help="write the summary as JSON")
    parser.add_argument("--from-json", metavar="FILE", help="print a saved summary's tables")
    parser.add_argument("--replay", type=int, metavar="N", help="walk flow N alone, verbosely")
    parser.add_argument(
        "--hostile",
        type=int,
        metavar="N",
        help="instead of flows: N truncated or mutated flow models, each through one command "
        "(flows/hostile.py: one-line error, exit 2, no output file, input unchanged, no hang)",
    )
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="walk issue 27's four paths (flows/ladder.py) instead of random flows",
    )
    args = parser.parse_args(argv)
    console = Console(width=140)
    if args.from_json:
        document = json.loads(Path(args.from_json).read_text())
        print_tables(console, document)
        return 1 if document["unsafe_claims"] else 0
    if args.replay is not None:
        return replay(
            console, args.seed, args.replay, tuple(args.family), wide=args.wide, builds=args.builds
        )
    if args.hostile is not None:
        return hostile(console, args)
    if args.ladder:
        return ladder(console, args.json, "python -m flows " + " ".join(argv or sys.argv[1:]))
    if args.litert_only:
        if not args.wide:
            parser.error("--litert-only draws --wide's LiteRT paths: add --wide")
        return litert_only(console, args, "python -m flows " + " ".join(argv or sys.argv[1:]))
    started = time.perf_counter()
    journal_path = Path(args.json + ".journal") if args.json else None
    done: list[dict[str, Any]] = []
    header = {
        "schema": "arenalens.flows.journal",
        "seed": args.seed,
        "families": sorted(args.family),
        "device_every": args.device_every,
    }
    if args.wide:  # (a journal without the key is a campaign without --wide)
        header["wide"] = True
    if args.builds:
        header["builds"] = True
    if journal_path is not None:
        try:
            done = read_journal(journal_path, header)
        except ValueError as error:
            print(f"python -m flows: {journal_path}: {error}", file=sys.stderr)
            return 2
        if done:
            console.print(f"resuming: {len(done):,} flows already walked in {journal_path}")
        # Rewritten whole: a line cut short by an interruption must not swallow the next one.
        journal_path.write_text("".join(json.dumps(line) + "\n" for line in (header, *done)))

    def journal(record: dict[str, Any]) -> None:
        assert journal_path is not None
        with journal_path.open("a") as stream:
            stream.write(json.dumps(record) + "\n")
            stream.flush()
            os.fsync(stream.fileno())

    summary = run_campaign(
        seed=args.seed,
        flows=args.flows,
        start=args.start,
        workers=args.workers,
        families=tuple(args.family),
        device_sample_every=args.device_every,
        progress=lambda result: _print_flow(console, result),
        done=done,
        journal=journal if journal_path is not None else None,
        wide=args.wide,
        builds=args.builds,
    )
    document = summary.as_dict()
    document["wall_seconds"] = round(time.perf_counter() - started, 1)
    document["resumed_flows"] = len(done)
    document["command"] = "python -m flows " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")
        if journal_path is not None:
            journal_path.unlink(missing_ok=True)
    print_tables(console, document)
    return 1 if summary.unsafe else 0


def _print_flow(console: Console, result: FlowResult) -> None:
    """One walked flow's line, and each of its failures."""
    flow = result.flow
    mark = "FAIL" if result.failures else ("ERR " if result.error else "ok  ")
    console.print(
        f"{mark} {flow.index:5d} {result.seconds:6.1f}s {flow.describe()}",
        highlight=False,
        markup=False,
    )
    for claim in result.failures:
        console.print(
            f"      {claim.outcome} {claim.kind}: {claim.command}\n        {claim.detail}",
            highlight=False,
            markup=False,
        )
    if result.error:
        console.print(f"      harness: {result.error.splitlines()[0]}", markup=False)


def read_journal(path: Path, header: dict[str, Any]) -> list[dict[str, Any]]:
    """The flows a journal holds (none when it does not exist); ValueError when it belongs to
    another campaign. A last line cut short by an interruption is dropped (that flow walks
    again)."""
    if not path.is_file():
        return []
    lines = path.read_text().splitlines()
    if not lines:
        return []
    try:
        first = json.loads(lines[0])
    except json.JSONDecodeError:
        raise ValueError("not a flow campaign's journal") from None
    if first != header:
        raise ValueError(
            f"a journal of another campaign ({first}); remove it or run that campaign's options"
        )
    records = []
    for line in lines[1:]:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return records


def hostile(console: Console, args: argparse.Namespace) -> int:
    """`--hostile N`: mutants start..start+N-1 of the seed through the commands; 1 on a failure."""
    from flows.hostile import run_hostile, summary_document

    def progress(case: Any, code: int | None, rulings: list[tuple[str, str, str]]) -> None:
        failed = [ruling for ruling in rulings if ruling[1] == "wrong"]
        mark = "FAIL" if failed else "ok  "
        line = (
            f"{mark} {case.index:5d} exit {code} arenalens {' '.join(case.argv)}  [{case.recipe}]"
        )
        console.print(line, highlight=False, markup=False)
        for kind, _, detail in failed:
            console.print(f"      {kind}: {detail}", highlight=False, markup=False)

    summary = run_hostile(args.seed, args.hostile, args.start, progress)
    document = summary_document(summary)
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")
    table = Table(title=f"{summary.inputs:,} hostile inputs, seed {summary.seed}")
    table.add_column("claim")
    for outcome in ("confirmed", "wrong"):
        table.add_column(outcome, justify="right")
    for kind, row in document["claims"].items():
        table.add_row(kind, *(f"{row.get(outcome, 0):,}" for outcome in ("confirmed", "wrong")))
    console.print(table)
    console.print("exit codes: " + ", ".join(f"{k}: {v}" for k, v in document["exits"].items()))
    return 1 if summary.failures else 0


def ladder(console: Console, json_path: str | None, command: str) -> int:
    """Issue 27's four paths, each judged whole on the wheel and the board's QEMU probe."""
    from flows.ladder import ladder_flows

    started = time.perf_counter()
    paths = ladder_flows()
    summary = run_campaign(
        seed=paths[0].seed,
        flows=len(paths),
        device_sample_every=1,
        fixed=paths,
        progress=lambda result: _print_flow(console, result),
    )
    document = summary.as_dict()
    document["wall_seconds"] = round(time.perf_counter() - started, 1)
    document["command"] = command
    if json_path:
        Path(json_path).write_text(json.dumps(document, indent=1) + "\n")
    print_tables(console, document)
    return 1 if summary.failed else 0


def litert_only(console: Console, args: argparse.Namespace, command: str) -> int:
    """The first `--flows` flows of the seed (with --wide) that take a LiteRT path, walked as
    drawn: the LiteRT sample of a campaign, judged on the real interpreter's heap."""
    from flows.campaign import _optimize_has_split
    from flows.flow import litert_flows

    started = time.perf_counter()
    split = _optimize_has_split()
    picked = litert_flows(args.seed, args.flows, tuple(args.family), start=args.start, split=split)
    summary = run_campaign(
        seed=args.seed,
        flows=len(picked),
        fixed=tuple(picked),
        wide=True,
        device_sample_every=0,
        progress=lambda result: _print_flow(console, result),
    )
    document = summary.as_dict()
    document["flow_indexes"] = [flow.index for flow in picked]
    document["wall_seconds"] = round(time.perf_counter() - started, 1)
    document["command"] = command
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")
    print_tables(console, document)
    return 1 if summary.unsafe else 0


def replay(
    console: Console,
    seed: int,
    index: int,
    families: tuple[str, ...],
    *,
    wide: bool = False,
    builds: bool = False,
) -> int:
    """One flow: every command it ran, with its exit code, and every claim."""
    summary = run_campaign(
        seed=seed,
        flows=1,
        start=index,
        families=families,
        progress=None,
        wide=wide,
        builds=builds,
    )
    document = summary.as_dict()
    print_tables(console, document)
    return 1 if summary.unsafe else 0


def print_tables(console: Console, document: dict[str, Any]) -> None:
    """The claims table (kind × outcome), the failures, the mix of flows."""
    title = (
        f"{document['flows']:,} flows, seed {document['seed']}: "
        f"{document['unsafe_claims']} unsafe claims, {document['failed_claims']} failed"
    )
    claims = Table(title=title)
    claims.add_column("claim")
    for outcome in OUTCOMES:
        claims.add_column(outcome, justify="right")
    totals = dict.fromkeys(OUTCOMES, 0)
    for kind in KINDS:
        row = document["claims"].get(kind)
        if not row:
            continue
        for outcome in OUTCOMES:
            totals[outcome] += row.get(outcome, 0)
        claims.add_row(kind, *(f"{row.get(outcome, 0):,}" for outcome in OUTCOMES))
    claims.add_row("all", *(f"{totals[outcome]:,}" for outcome in OUTCOMES), style="bold")
    console.print(claims)
    mix = Table(title="flows by model family, commands run")
    mix.add_column("family")
    mix.add_column("flows", justify="right")
    mix.add_column("command")
    mix.add_column("runs", justify="right")
    families = sorted(document["families"].items())
    commands = sorted(document["commands"].items())
    for position in range(max(len(families), len(commands))):
        family = families[position] if position < len(families) else ("", "")
        command = commands[position] if position < len(commands) else ("", "")
        mix.add_row(
            family[0],
            f"{family[1]:,}" if family[1] != "" else "",
            command[0],
            f"{command[1]:,}" if command[1] != "" else "",
        )
    console.print(mix)
    paths = Table(title="flows by path, build and optimize flag")
    for heading in ("path", "flows", "build", "flows", "optimize flag", "flows"):
        paths.add_column(heading, justify="right" if heading == "flows" else "left")
    columns = [
        sorted(document.get(key, {}).items(), key=lambda item: (-item[1], item[0]))
        for key in ("paths", "builds", "optimize_flags")
    ]
    for position in range(max(map(len, columns))):
        cells: list[str] = []
        for column in columns:
            name, count = column[position] if position < len(column) else ("", "")
            cells += [name, f"{count:,}" if count != "" else ""]
        paths.add_row(*cells)
    console.print(paths)
    console.print(
        f"real runtime: {document['wheel_runs']:,} runs on the tflite_micro wheel, "
        f"{document['qemu_runs']:,} on the Cortex-M QEMU probes; "
        f"{document['seconds']:,.0f} s walking flows",
        highlight=False,
    )
    for failure in document["failures"]:
        console.print(
            f"[{failure['outcome']}] flow {failure['flow']} {failure['kind']}: "
            f"{failure['command']}\n    {failure['detail']}\n    ({failure['describe']})",
            highlight=False,
            markup=False,
        )
    for error in document["harness_errors"]:
        console.print(f"harness error in flow {error['flow']}: {error['error']}", markup=False)


if __name__ == "__main__":
    raise SystemExit(main())
