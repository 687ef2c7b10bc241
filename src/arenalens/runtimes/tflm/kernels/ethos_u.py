"""The Ethos-U NPU custom operator (kernels/ethos_u/ethosu.cc) → its setup allocations.

Only builds with an NPU register this kernel (`Build.npu`: TFLM built with CO_PROCESSOR=ethos_u;
elsewhere `Register_ETHOSU()` returns null), so the wheel and plain Cortex-M builds cannot run such
a model; the rule still says what an Ethos-U build would plan, so the head of a Vela-compiled model
can be shown everywhere.

Init allocates the OpData; Prepare requests two scratch buffers sized by the operator's inputs +
outputs (one uint64 base address and one size_t size each: the ABI's size_t) and reads the command
stream's size through a temp view of input 0. Eval (at Invoke) hands the command stream to the
Ethos-U core driver, which refuses a payload that is not Vela's ("COP1"), or compiled for another
NPU configuration ("NPU config mismatch": `vela/compiled.py` reads what it was compiled for), and
a fast memory smaller than the fast scratch ("Fast memory area too small": a board's fact, see
`npu_memory.py`).
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.refusals import not_true
from arenalens.tflite.reader import read_custom_options
from arenalens.vela.compiled import NPU_OPCODE, read_payload

_FILE = "ethos_u/ethosu.cc"
_OP_DATA = struct(
    "OpData", ("cms_data_size", "int"), ("base_addr_idx", "int"), ("base_addr_size_idx", "int")
)


def _prepare(context: base.KernelContext) -> base.Events:
    operator = context.operator
    if not operator.inputs:
        return [not_true(_FILE, "node->inputs->size > 0")]
    if not read_custom_options(context.model, context.subgraph.index, operator.position_in_file):
        return [not_true(_FILE, "node->custom_initial_data_size > 0")]
    # One base address (uint64) and one size (size_t) per input and output, then the command
    # stream's size read through a temp view of input 0.
    count = len(operator.inputs) + len(operator.outputs)
    return [
        base.Scratch(8 * count, "base addresses"),
        base.Scratch(context.build.pointer_bytes * count, "base address sizes"),
        *base.temps(context, ("in", 0)),
        *_driver_refusals(context),
    ]


def _driver_refusals(context: base.KernelContext) -> list[base.Refusal]:
    """What the Ethos-U core driver refuses at Invoke (ethosu_driver.c `ethosu_invoke_async` and
    `ethosu_dev_verify_optimizer_config`), from the command stream tensor's bytes."""
    stream = context.input(0)
    payload = b""
    if stream is not None and stream.has_data:
        payload = context.model.buffer_bytes(stream.buffer)
    compiled_for, problem = read_payload(payload)
    if problem:
        return [base.Refusal(f"the Ethos-U driver refuses the payload: {problem}", base.INVOKE)]
    npu = context.build.npu
    if npu is None or compiled_for is None:
        return []
    if (compiled_for.product, compiled_for.log2_macs) != (npu.product, npu.log2_macs):
        return [
            base.Refusal(
                f"NPU config mismatch: the command stream was compiled for {compiled_for.name}, "
                f"the build's NPU is {npu.name} (the Ethos-U driver refuses it at Invoke)",
                base.INVOKE,
                fix=f"compile the model with Vela's --accelerator-config {npu.name}",
            )
        ]
    return []


RULES = (
    base.KernelRule(
        NPU_OPCODE,
        _FILE,
        None,
        op_data(_OP_DATA),
        _prepare,
        access=base.NoOverlap("runs on the NPU"),
        unregistered="only firmware built for an Ethos-U NPU registers it",
        operands=base.operands("command_stream", "tensor*", outputs=(0, None)),
    ),
)
# The kernels a build registers only when it drives an NPU (`Build.npu`).
NPU_KERNELS = frozenset(rule.opcode for rule in RULES)
