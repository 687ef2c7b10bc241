"""Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE → their setup allocations.

Sources (tflite-micro tensorflow/lite/micro/kernels/): var_handle.cc, read_variable.cc,
assign_variable.cc. The variables' buffers themselves are allocated by the first ASSIGN_VARIABLE
of each variable, and the ids and their failures depend on every VAR_HANDLE before it
(`resources`, added by the setup replay).
"""

from __future__ import annotations

from arenalens.builds.build import COMPRESSION
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.refusals import arity_refusals

# TfLiteVarHandleParams: pointers into the flatbuffer's strings.
_VAR_HANDLE_PARAMS = struct(
    "TfLiteVarHandleParams", ("container", "pointer"), ("shared_name", "pointer")
)
_VAR_HANDLE_OP_DATA = struct("OpData", ("resource_id", "int32"))
# assign_variable.cc has an Init and OpData only in USE_TFLM_COMPRESSION builds.
_ASSIGN_VARIABLE_OP_DATA = struct("OpData", Field("scratch_index", "int", only_with=COMPRESSION))


def _read_variable(context: base.KernelContext) -> base.Events:
    # Prepare fetches the handle only; its other checks are DCHECKs.
    return base.temps(context, ("in", 0))


def _assign_variable_init(context: base.KernelContext) -> base.Events:
    if COMPRESSION not in context.build.features:
        return ()
    return [base.Persistent(context.sizeof(_ASSIGN_VARIABLE_OP_DATA), "OpData")]


def _assign_variable(context: base.KernelContext) -> base.Events:
    # Prepare reads the handle as an eval tensor (no temp) and fetches only the value.
    refused = arity_refusals(context, "assign_variable.cc", 2, 0)
    return refused or base.temps(context, ("in", 1))


_RESOURCE = base.NoOverlap("resource variables")

RULES = (
    base.KernelRule(
        "ASSIGN_VARIABLE",
        "assign_variable.cc",
        None,
        _assign_variable_init,
        _assign_variable,
        access=_RESOURCE,
        operands=base.operands("resource", "value", outputs=(0, 0)),
    ),
    base.stateless(
        "READ_VARIABLE", "read_variable.cc", _read_variable, _RESOURCE, base.operands("resource")
    ),
    base.KernelRule(
        "VAR_HANDLE",
        "var_handle.cc",
        _VAR_HANDLE_PARAMS,
        op_data(_VAR_HANDLE_OP_DATA),
        base.no_events,
        binds_outputs=True,  # at the resource id in its OpData (var_handle.cc Prepare)
        access=_RESOURCE,
        operands=base.operands(),
    ),
)
