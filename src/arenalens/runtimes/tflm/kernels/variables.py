"""Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE → their setup allocations.

The variables' buffers themselves are allocated by the first ASSIGN_VARIABLE of each variable
(`resources`, added by the setup replay, since they depend on earlier operators).
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    no_events,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import op_data


def _read_variable(context: KernelContext) -> Events:
    # read_variable.cc Prepare checks the handle only.
    return temps(context, ("in", 0))


def _assign_variable(context: KernelContext) -> Events:
    # assign_variable.cc Prepare reads the handle as an eval tensor and fetches only the value.
    return temps(context, ("in", 1))


RULES = (
    # OpData { int scratch_index } exists in USE_TFLM_COMPRESSION builds only.
    KernelRule(
        "ASSIGN_VARIABLE",
        "assign_variable.cc",
        None,
        op_data(4),
        _assign_variable,
        derived=False,
    ),
    KernelRule("READ_VARIABLE", "read_variable.cc", None, prepare=_read_variable, derived=False),
    # TfLiteVarHandleParams: two string pointers; OpData: the resource id.
    KernelRule("VAR_HANDLE", "var_handle.cc", Fixed(16, 8), op_data(4), no_events, derived=False),
)
