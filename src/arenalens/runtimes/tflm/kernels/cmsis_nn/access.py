"""CMSIS-NN kernels' access order: what its variant rules say where CMSIS-NN's loops differ from
the reference kernels' (TFLM built with `OPTIMIZED_KERNEL_DIR=cmsis_nn`).

Read from TFLM's *kernels/cmsis_nn/* and ARM-software/CMSIS-NN *Source/*. One build of TFLM serves
Cortex-M0/M3 (plain C), M4/M7/M33 (DSP) and M55/M85 (MVE), and CMSIS-NN picks its loops by the
instruction set, so an order must hold on all three. TFLM's cmsis_nn kernels call the reference
float kernels; their other paths are CMSIS-NN's own, and only the int8 ones were traced: every
other type gets no overlap. An operator's distance under this library is the larger of its
CMSIS-NN order's and the reference order's (`overlap.overlap_distance`): the plan is safe on
either build. Checked on real TFLM under QEMU: tests/runtimes/tflm/test_overlap_cortex_m.py.
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.runtimes.tflm.kernels.base import (
    Access,
    AccessByPath,
    AccessOrder,
    KernelContext,
    NoOverlap,
)

CMSIS_NN_SOURCES = "ARM-software/CMSIS-NN"


def not_analysed(why: str) -> NoOverlap:
    """A CMSIS-NN path whose loops were not traced: no overlap under this library."""
    return NoOverlap(f"CMSIS-NN: {why}: {CMSIS_NN_SOURCES}")


def reads_no_later(reference: Access, source: str) -> AccessOrder:
    """A CMSIS-NN loop that reads every input byte no later than the reference loop does (a
    pixel's window, a row, 4 or 16 elements read before they are written): the reference
    distance holds."""
    if not isinstance(reference, AccessOrder):
        raise TypeError(f"{source}: the reference kernel has no traced order to hold")
    return AccessOrder("CMSIS-NN: reads no later", source, None, reference.distance)


def int8_paths(int8: Callable[[KernelContext], AccessOrder | NoOverlap]) -> AccessByPath:
    """A CMSIS-NN kernel's order by its input type: float runs the reference kernel, int8 the
    traced CMSIS-NN path `int8` gives for the operator, any other type an untraced path."""

    def choose(view: KernelContext) -> AccessOrder | NoOverlap | None:
        source, target = view.input(0), view.output(0)
        data_type = source.dtype.name if source is not None else ""
        if data_type == "FLOAT32":
            return None  # TFLM's cmsis_nn kernels call the reference float kernels
        if data_type != "INT8" or source is None or target is None:
            return not_analysed(f"{data_type or 'this'} path not analysed")
        return int8(view)

    return AccessByPath(choose)


# The kernels whose int8 path nobody traced (int16 paths, int4 weights, MAXIMUM / MINIMUM, PAD,
# TRANSPOSE, FULLY_CONNECTED, ...): no overlap under this library.
NOT_ANALYSED = int8_paths(lambda view: not_analysed("kernel not analysed"))
