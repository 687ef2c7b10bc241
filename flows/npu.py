"""The Ethos-U path: `arenalens vela` compiles the flow's model for the build's NPU, and what it
says is held to its word. The arena it gives the setting it chose is what `check` says of the
written model on the same build (with `--weights-in-sram` for a Sram_Only compilation, which puts
the weights in SRAM), and the Vela command it prints to reproduce that setting runs as printed
(Arm's own `vela`, in the flow's folder) and writes the same model byte for byte.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.claims import CONFIRMED, WRONG

if TYPE_CHECKING:  # the walk runs vela; this module judges what it said
    from flows.walk import Walk

COMPILED = "compiled.tflite"
VELA_TIMEOUT_SECONDS = 600


def compile_for_npu(walk: Walk) -> str:
    """Compile the flow's model with `arenalens vela` for its build; the written model's name
    (the subject of the rest of the flow), or "" when nothing was written."""
    build = walk.flow.build
    ran = walk.run("vela", walk.model, *build, "-o", COMPILED, "--json")
    document = ran.document()
    if ran.code not in (0, 1) or not isinstance(document, dict) or not document.get("written"):
        return ""
    chosen = document.get("chosen") or {}
    memory = ("--weights-in-sram",) if chosen.get("memory_mode") == "Sram_Only" else ()
    check = walk.verdict_of(
        walk.run("check", COMPILED, *build, *walk.budget_for(build), *memory, "--json")
    )
    promised = chosen.get("arena_bytes")
    said = None if check is None else check.required
    walk.claim(
        "vela-declares",
        CONFIRMED if said == promised and promised is not None else WRONG,
        ran.line,
        f"vela says kTensorArenaSize = {promised} B for {chosen.get('setting')}; check of the "
        f"compiled model says {said}",
    )
    reproduce(walk, document)
    return COMPILED


def reproduce(walk: Walk, document: dict[str, Any]) -> None:
    """The chosen setting's Vela command, run as printed: it exits 0 and writes the model
    `arenalens vela` wrote."""
    command = str((document.get("chosen") or {}).get("vela_command") or "")
    words = shlex.split(command)
    if words[:1] != ["vela"]:
        walk.claim("step-runs", WRONG, command or "(no vela command)", "not a vela command")
        return
    program = shutil.which("vela") or str(Path(sys.executable).parent / "vela")
    try:
        done = subprocess.run(
            [program, *words[1:]],
            capture_output=True,
            text=True,
            timeout=VELA_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        walk.claim("step-runs", WRONG, command, f"{type(error).__name__}: {error}")
        return
    walk.claim(
        "step-runs",
        CONFIRMED if done.returncode == 0 else WRONG,
        command,
        f"exit {done.returncode} {(done.stderr or '').strip()[-200:]}",
    )
    if done.returncode != 0:
        return
    written = Path("output") / f"{Path(words[1]).stem}_vela.tflite"
    same = written.is_file() and written.read_bytes() == Path(COMPILED).read_bytes()
    walk.claim(
        "step-promise",
        CONFIRMED if same else WRONG,
        command,
        f"{written} {'is' if same else 'is not'} the model arenalens vela wrote",
    )
