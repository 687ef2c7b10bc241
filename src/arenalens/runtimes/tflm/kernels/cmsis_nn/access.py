"""CMSIS-NN kernels' access order: what its variant rules say where CMSIS-NN's loops differ from
the reference kernels' (TFLM built with `OPTIMIZED_KERNEL_DIR=cmsis_nn`).

Read from TFLM's *kernels/cmsis_nn/* and ARM-software/CMSIS-NN *Source/* (`traces` has the loops).
CMSIS-NN picks its loops by the instruction set (pure C on Cortex-M0/M3, DSP on M4/M7/M33, MVE on
M55/M85), so an order is asked with a build of one code path (`kernel_paths.build_for`) and reads
`view.build.isa`. TFLM's cmsis_nn kernels call the reference kernels for float (and, for PAD,
TRANSPOSE, MAXIMUM and MINIMUM, for every type but int8): there the reference order holds (None).
An operator's distance on a CMSIS-NN path is its CMSIS-NN order's where CMSIS-NN runs its own
loops, else the reference order's (`overlap.overlap_distance`); a plan for every path takes the
largest. Checked on real TFLM under QEMU: tests/overlap_proofs.py (output probes, every path).
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.runtimes.tflm.kernels import base

CMSIS_NN_SOURCES = "ARM-software/CMSIS-NN"


def not_analysed(why: str) -> base.NoOverlap:
    """A CMSIS-NN path whose loops were not traced: no overlap under this library."""
    return base.NoOverlap(f"CMSIS-NN: {why}: {CMSIS_NN_SOURCES}")


def reads_no_later(reference: base.Access, source: str) -> base.AccessOrder:
    """A CMSIS-NN loop that reads every input byte no later than the reference loop does (a
    pixel's window, a row, 4 or 16 elements read before they are written): the reference
    distance holds."""
    if not isinstance(reference, base.AccessOrder):
        raise TypeError(f"{source}: the reference kernel has no traced order to hold")
    return base.AccessOrder("CMSIS-NN: reads no later", source, None, reference.distance)


def int8_paths(
    int8: Callable[[base.KernelContext], base.AccessOrder | base.NoOverlap],
) -> base.AccessByPath:
    """A CMSIS-NN kernel's order by its input type: float runs the reference kernel, int8 the
    traced CMSIS-NN path `int8` gives for the operator, any other type an untraced path."""

    def choose(view: base.KernelContext) -> base.AccessOrder | base.NoOverlap | None:
        source, target = view.input(0), view.output(0)
        data_type = source.dtype.name if source is not None else ""
        if data_type == "FLOAT32":
            return None  # TFLM's cmsis_nn kernels call the reference float kernels
        if data_type != "INT8" or source is None or target is None:
            return not_analysed(f"{data_type or 'this'} path not analysed")
        return int8(view)

    return base.AccessByPath(choose)


def int8_only(
    int8: Callable[[base.KernelContext], base.AccessOrder | base.NoOverlap],
) -> base.AccessByPath:
    """A CMSIS-NN kernel that runs its own loops for int8 only (PAD, TRANSPOSE, MAXIMUM, MINIMUM:
    every other type goes to the reference kernel)."""

    def choose(view: base.KernelContext) -> base.AccessOrder | base.NoOverlap | None:
        source = view.input(0)
        if source is None or source.dtype.name != "INT8":
            return None
        return int8(view)

    return base.AccessByPath(choose)


# The kernels whose int8 path nobody traced (int16 paths, int4 weights, MAXIMUM / MINIMUM, PAD,
# TRANSPOSE, FULLY_CONNECTED, ...): no overlap under this library.
NOT_ANALYSED = int8_paths(lambda view: not_analysed("kernel not analysed"))
