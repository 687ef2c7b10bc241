"""What every CMSIS-NN rule states the same way: `cmsis_nn_kernel` makes one."""

from __future__ import annotations

from typing import Any

from arenalens.builds.build import CMSIS_NN
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import op_data


def cmsis_nn_kernel(
    reference: base.KernelRule,
    source: str,
    access: base.Access,
    op_data_struct: Struct | None = None,
    prepare: base.RuleFunction | None = None,
) -> base.KernelRule:
    """CMSIS-NN's kernel for `reference`'s operator, from `source` (kernels/cmsis_nn/...): a
    variant of the reference rule with CMSIS-NN's own loops (`access`). A kernel with its own
    Init allocates its `OpData` as one persistent buffer (`op_data_struct`: the reference OpData
    it embeds plus CMSIS-NN's fields, e.g. cmsis_nn/conv.cc `Init` →
    `AllocatePersistentBuffer(context, sizeof(OpData))`); one without keeps the reference Init
    (the elementwise kernels: `cmsis_nn.elementwise`), and the reference Prepare unless
    `prepare`."""
    changes: dict[str, Any] = {}
    if op_data_struct is not None:
        changes["init"] = op_data(op_data_struct)
    if prepare is not None:
        changes["prepare"] = prepare
    return base.variant(reference, library=CMSIS_NN, source=source, access=access, **changes)
