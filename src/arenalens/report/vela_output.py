"""A Vela settings sweep → the `vela` command's JSON document and its terminal table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_summary, build_title
from arenalens.report.console import render_text
from arenalens.targets import Target
from arenalens.units import format_bytes_exact, format_bytes_short
from arenalens.vela.settings import SettingsSweep


def vela_document(
    sweep: SettingsSweep, model: str, target: Target | None = None, *, vela_file: str | None = ""
) -> dict[str, Any]:
    """The sweep as JSON: every candidate with its figures, the chosen one, and what Vela's
    time estimates assume (Arm's system config; the board vendor's own, when it has one)."""
    rows = []
    for index, candidate in enumerate(sweep.candidates):
        summary = candidate.compilation.summary if candidate.compilation else None
        rows.append(
            {
                "setting": candidate.settings.label,
                "accelerator": candidate.settings.accelerator,
                "system_config": candidate.settings.system_config,
                "memory_mode": candidate.settings.memory_mode,
                "optimise": candidate.settings.optimise,
                "arena_cache_size": candidate.settings.arena_cache_size,
                # The file Vela reads (`vela_file`, default the model); None when no file holds
                # the bytes it compiled (not the user's file, and no -o to write them).
                "vela_command": None
                if vela_file is None
                else candidate.settings.command(vela_file or model),
                "vela_error": candidate.error or None,
                "cannot_run": list(candidate.cannot_run),
                "arena_bytes": candidate.arena_bytes,
                "fast_memory_bytes": candidate.fast_memory_bytes,
                "sram_weights_bytes": candidate.sram_weights_bytes,
                "sram_bytes": candidate.sram_bytes,
                "vela_sram_bytes": None
                if candidate.memory is None
                else candidate.memory.vela_sram_bytes,
                "arena_fast_copy_bytes": None
                if candidate.memory is None
                else candidate.memory.arena_fast_copy_bytes,
                "inference_seconds": None if summary is None else summary.inference_seconds,
                "npu_operators": None if summary is None else summary.npu_operators,
                "cpu_operators": None if summary is None else summary.cpu_operators,
                "fits": candidate.fits(sweep.memories),
                "placement": _placement(candidate.placement(sweep.memories)),
                "chosen": index == sweep.chosen,
            }
        )
    chosen = None if sweep.chosen is None else rows[sweep.chosen]
    return {
        "model": model,
        "npu": sweep.npu.name,
        "build": build_summary(sweep.build),
        "vela_version": sweep.vela_version,
        "memories": None
        if sweep.memories is None
        else {
            "block_bytes": sweep.memories.block_bytes,
            "banks": [{"name": name, "free_bytes": free} for name, free in sweep.memories.banks],
        },
        "candidates": rows,
        "chosen": chosen,
        "time_estimate": _time_estimate(sweep, target),
    }


def _time_estimate(sweep: SettingsSweep, target: Target | None) -> dict[str, Any]:
    """Vela's times are estimates for the system config compiled with (Arm's default for the
    NPU); a board vendor with its own vela.ini has other clocks and memory bandwidths."""
    vendor = None if target is None else target.vela_config
    return {
        "system_config": sweep.npu.system_config,
        "vendor_config": None
        if vendor is None
        else {
            "board": target.title if target is not None else "",
            "config_file": vendor.config_file,
            "system_config": vendor.system_config,
            "memory_mode": vendor.memory_mode,
            "source": vendor.source,
        },
    }


def _placement(pieces: tuple[tuple[str, str], ...] | None) -> list[dict[str, str]] | None:
    """Which bank each SRAM piece (arena, fast memory, SRAM weights) goes to."""
    return None if pieces is None else [{"piece": piece, "bank": bank} for piece, bank in pieces]


def _time(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.3f} ms"


def _bytes(value: int | None) -> str:
    return "-" if value is None else format_bytes_exact(value)


def render_vela(document: Mapping[str, Any], build_text: str, *, color: bool, width: int) -> str:
    """The sweep as a table, the chosen row marked, then the Vela command that makes it."""
    table = Table(
        title=f"{document['model']}: Vela settings on {document['npu']}", title_justify="left"
    )
    table.add_column("setting", no_wrap=True)
    for header in ("arena", "fast memory", "SRAM weights", "SRAM in all", "Vela's SRAM"):
        table.add_column(header, justify="right")
    table.add_column("Vela's time (est.)", justify="right")
    table.add_column("fits", no_wrap=True)
    for row in document["candidates"]:
        if row["vela_error"]:
            fits = "Vela refused: " + row["vela_error"]
        elif row["arena_bytes"] is None:
            fits = "CANNOT RUN: " + "; ".join(row["cannot_run"])
        else:
            fits = "yes" if row["fits"] else "no"
        if row["chosen"]:
            fits += " ◀"
        cache = row["arena_cache_size"]
        setting = f"{row['memory_mode']} {row['optimise']}" + (
            "" if cache is None else f" cache {format_bytes_short(cache)}"
        )
        table.add_row(
            setting,
            _bytes(row["arena_bytes"]),
            _bytes(row["fast_memory_bytes"] or None),
            _bytes(row["sram_weights_bytes"] or None),
            _bytes(row["sram_bytes"]),
            _bytes(row["vela_sram_bytes"]),
            _time(row["inference_seconds"]),
            fits,
            style="bold green" if row["chosen"] else None,
        )
    parts: list[Any] = [Text(f"figures for: {build_text}; Vela {document['vela_version']}", "dim")]
    memories = document["memories"]
    if memories is not None and memories["banks"]:
        banks = ", ".join(
            f"{bank['name']} {format_bytes_short(bank['free_bytes'])}" for bank in memories["banks"]
        )
        parts.append(
            Text(
                f"fits: the arena, fast memory and SRAM weights each in one bank the NPU reaches "
                f"({banks})",
                "dim",
            )
        )
    elif memories is not None:
        parts.append(
            Text(
                f"fits: all it puts in SRAM within {format_bytes_exact(memories['block_bytes'])} "
                "(the board's largest block)",
                "dim",
            )
        )
    parts.append(table)
    parts.append(Text(_time_note(document["npu"], document["time_estimate"]), "dim"))
    chosen = document["chosen"]
    refusals = [row["cannot_run"] for row in document["candidates"] if row["cannot_run"]]
    if chosen is None and len(refusals) == len(document["candidates"]):
        # Every compilation refused: the table cuts the reason short, so it is said whole.
        parts.append(Text(f"no setting runs: {'; '.join(refusals[0])}", "red"))
    elif chosen is None:
        parts.append(Text("no setting fits: none of these compilations fits the board", "red"))
    else:
        parts.append(
            Text(
                f"fastest that fits: {chosen['setting']}: kTensorArenaSize = "
                f"{format_bytes_exact(chosen['arena_bytes'])}"
                + (
                    f", fast memory {format_bytes_exact(chosen['fast_memory_bytes'])}"
                    if chosen["fast_memory_bytes"]
                    else ""
                )
                + f", {_time(chosen['inference_seconds'])} by Vela's estimate",
                "green",
            )
        )
        if chosen["placement"] and chosen["placement"][0]["bank"] not in ("any", "largest block"):
            parts.append(
                Text(
                    "placed: "
                    + ", ".join(
                        f"{item['piece']} in {item['bank']}" for item in chosen["placement"]
                    )
                )
            )
        if chosen["vela_command"]:
            parts.append(Text(f"reproduce: {chosen['vela_command']}"))
        else:
            parts.append(
                Text(
                    "reproduce: Vela compiled the model at the sizes given, without an offline "
                    "plan, not a file you have: give -o FILE and arenalens writes that model "
                    "beside FILE with the vela command that reads it"
                )
            )
    return render_text(parts, color=color, width=width)


def _time_note(npu: str, estimate: Mapping[str, Any]) -> str:
    """What Vela's times are: its estimate with the system config compiled with."""
    note = (
        f"Vela's time: its own estimate with Arm's default system config for {npu} "
        f"({estimate['system_config']}), not a measurement"
    )
    vendor = estimate["vendor_config"]
    if vendor is None:
        return note
    return (
        f"{note}; {vendor['board']}'s SDK compiles with its own ({vendor['config_file']}: "
        f"--system-config {vendor['system_config']} --memory-mode {vendor['memory_mode']}), whose "
        "clocks and memory bandwidths give other times: compare settings by these, measure on "
        "the board"
    )


def sweep_build_title(sweep: SettingsSweep) -> str:
    return build_title(sweep.build)
