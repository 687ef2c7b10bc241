"""Outputs proven on real TFLM: an original and a rewritten model file run on the x86-64
`tflite_micro` wheel with the same random inputs → their heads and whether every output is
bit-identical (what `optimize` keeps a plan by; the `runtime` extra, in a child process)."""

from __future__ import annotations

from types import MappingProxyType

from arenalens.builds.build import HOST
from arenalens.errors import ArenalensError, RuntimeUnavailableError
from arenalens.ir import Model
from arenalens.planning.registry import run_planner
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import budget
from arenalens.runtimes.verification import OutputProof
from arenalens.tflite.reader import load_model


def require_proof_interpreter() -> None:
    """RuntimeUnavailableError when what proves outputs is missing: the tflite_micro wheel, or
    the runner's own imports (numpy)."""
    try:
        from arenalens.runtimes.tflm import run  # noqa: F401, PLC0415 - runtime extra
        from arenalens.runtimes.tflm.probe import require_tflite_micro  # noqa: PLC0415

        require_tflite_micro()
    except (ImportError, RuntimeUnavailableError) as error:
        raise RuntimeUnavailableError(
            f"proving outputs needs the real TFLM interpreter: {error}"
        ) from error


def prove_outputs(
    original: bytes, rewritten: bytes, model: Model, *, invocations: int = 3, seed: int = 0
) -> OutputProof:
    """Run both files on real TFLM with the same random inputs → heads and output equality."""
    require_proof_interpreter()
    from arenalens.runtimes.tflm import run as tflm_run  # noqa: PLC0415 - runtime extra

    inputs = tflm_run.random_inputs(model, invocations=invocations, seed=seed)
    output_count = len(model.subgraphs[0].outputs)
    arena_size = proof_arena_size(original, rewritten)
    before = tflm_run.run_model(original, inputs, output_count=output_count, arena_size=arena_size)
    if not before.ok and before.head is not None:
        # Set up, refused at Invoke: a kernel takes only some values (RSQRT's non-negative
        # ones); inputs it takes prove the plan, as the application's would.
        inputs = tflm_run.random_inputs(
            model, invocations=invocations, seed=seed, non_negative=True
        )
        before = tflm_run.run_model(
            original, inputs, output_count=output_count, arena_size=arena_size
        )
    after = tflm_run.run_model(rewritten, inputs, output_count=output_count, arena_size=arena_size)
    identical = tflm_run.same_outputs(before, after)
    detail = ""
    if not before.ok:
        detail = f"original does not run: {before.error or 'setup failed'}"
    elif not after.ok:
        detail = f"rewritten model does not run: {after.error or 'setup failed'}"
    elif not identical:
        detail = "outputs differ"
    return OutputProof(
        identical=identical,
        original_head=before.head,
        new_head=after.head,
        invocations=invocations,
        detail=detail,
        logs=MappingProxyType({"original": before.log, "rewritten": after.log}),
    )


def proof_arena_size(original: bytes, rewritten: bytes) -> int:
    """An arena both files set up in: twice the larger predicted need (host wheel), at least the
    interpreter's usual generous size; a model's activations may be far larger than its file."""
    predicted = 0
    for data in (original, rewritten):
        try:
            predicted = max(predicted, _host_required_bytes(load_model(data)))
        except ArenalensError:
            continue  # the real runtime then says what is wrong
    from arenalens.runtimes.tflm.run import default_arena_size  # noqa: PLC0415 - runtime extra

    roomy = max(default_arena_size(max(len(original), len(rewritten))), 2 * predicted)
    return -(-roomy // ARENA_ALIGNMENT) * ARENA_ALIGNMENT


def _host_required_bytes(model: Model) -> int:
    """The minimal kTensorArenaSize on the wheel with TFLM's own plan (`analyze`'s figure)."""
    found = arenas(model, None, build=HOST)
    plans = [
        run_planner(arena.runtime_planner, arena.problem, **arena.runtime_options)
        for arena in found
    ]
    return budget(model, found, plans, build=HOST).required_bytes


__all__ = ["OutputProof", "proof_arena_size", "prove_outputs"]
