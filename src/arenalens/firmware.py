"""What the firmware must set up for a model: the operators its `MicroMutableOpResolver` must
register (with the template count) and the resource-variable table size the figures assume.

A rewritten model may need more than its arena: `optimize --split` adds PAD, STRIDED_SLICE and
CONCATENATION, and a firmware whose resolver lists only the original operators fails at setup
("Didn't find op for builtin opcode"). The method names are TFLM's
(*micro_mutable_op_resolver.h*: one `Add<Name>()` per builtin, the name the opcode in camel case,
with the exceptions each kernel rule names: `KernelRule.resolver`); `MicroMutableOpResolver<N>`
holds at most N registrations, so N is the count of distinct operators.

Resource variables: the figure counts the `MicroResourceVariables` table the tflite_micro Python
interpreter creates, one entry per distinct VAR_HANDLE shared_name
(`runtimes/tflm/resources.py`). A C++ application passes its own count to
`MicroResourceVariables::Create(allocator, N)`, and each entry past the model's takes
`sizeof(MicroResourceVariable)` more of the tail (*micro_resource_variable.cc*: one persistent
buffer of N entries, 16-byte aligned): the firmware must create the table with the count the
figure assumes, or declare more.
"""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.ir import Model

# Custom operators TFLM's resolver has a method for (micro_mutable_op_resolver.h), by custom code:
# each method registers the kernel under that code (the signal library's under "Signal<Name>",
# TFLM_DECODE since 2025-10). Without it a firmware must find the kernel's registration function
# itself; with it, `resolver.AddRfft();` compiles as written.
_CUSTOM_METHODS = {
    "TFLite_Detection_PostProcess": "AddDetectionPostprocess",
    "ethos-u": "AddEthosU",
    "CIRCULAR_BUFFER": "AddCircularBuffer",
    "TFLM_DECODE": "AddDecode",
    "SignalDelay": "AddDelay",
    "SignalEnergy": "AddEnergy",
    "SignalFftAutoScale": "AddFftAutoScale",
    "SignalFilterBank": "AddFilterBank",
    "SignalFilterBankLog": "AddFilterBankLog",
    "SignalFilterBankSpectralSubtraction": "AddFilterBankSpectralSubtraction",
    "SignalFilterBankSquareRoot": "AddFilterBankSquareRoot",
    "SignalFramer": "AddFramer",
    "SignalIrfft": "AddIrfft",
    "SignalOverlapAdd": "AddOverlapAdd",
    "SignalPCAN": "AddPCAN",
    "SignalRfft": "AddRfft",
    "SignalStacker": "AddStacker",
    "SignalWindow": "AddWindow",
}
CUSTOM_PREFIX = "CUSTOM:"


def resolver_method(opcode: str) -> str | None:
    """'CONV_2D' → 'AddConv2D', 'DEPTHWISE_CONV_2D' → 'AddDepthwiseConv2D'; a custom operator
    TFLM has no method for → None (the firmware registers it with AddCustom)."""
    if opcode.startswith(CUSTOM_PREFIX):
        return _CUSTOM_METHODS.get(opcode.removeprefix(CUSTOM_PREFIX))
    from arenalens.runtimes.door import tflm_runtime  # noqa: PLC0415

    # The method name is a fact of the operator's kernel: its rule holds it.
    return tflm_runtime().resolver_method(opcode)


def _registration(opcode: str) -> str:
    """One resolver line: 'resolver.AddConv2D();', or how to register a custom operator."""
    method = resolver_method(opcode)
    if method is not None:
        return f"resolver.{method}();"
    code = opcode.removeprefix(CUSTOM_PREFIX)
    return f'resolver.AddCustom("{code}", /* its TFLMRegistration */);'


@dataclass(frozen=True)
class FirmwareNeeds:
    """The operators to register and the resource-variable table the figure assumes."""

    operators: tuple[str, ...]  # distinct opcodes, in order of first use
    resource_variables: int  # the table size the figure assumes (0: no resource variables)

    @property
    def resolver_lines(self) -> tuple[str, ...]:
        """The C++ that registers them: the declaration with its count, then one Add per op."""
        declaration = f"static tflite::MicroMutableOpResolver<{len(self.operators)}> resolver;"
        return (declaration, *(_registration(op) for op in self.operators))

    @property
    def resource_line(self) -> str:
        """The table the figure assumes, as the firmware creates it ('' with none)."""
        if not self.resource_variables:
            return ""
        return (
            "tflite::MicroResourceVariables::Create(allocator, "
            f"{self.resource_variables});  // the table size the figure assumes"
        )

    def as_dict(self) -> dict[str, object]:
        """JSON form (`firmware` of optimize and report)."""
        return {
            "operators": list(self.operators),
            "resolver": list(self.resolver_lines),
            "resource_variables": self.resource_variables,
        }


def firmware_needs(model: Model, table: int | None = None) -> FirmwareNeeds:
    """Model (+ the table size asked for) → the operators every subgraph runs and the
    resource-variable table size the figure assumes."""
    from arenalens.runtimes.door import tflm_runtime  # noqa: PLC0415

    seen: dict[str, None] = {}
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            seen.setdefault(operator.opcode, None)
    return FirmwareNeeds(tuple(seen), tflm_runtime().resource_table_size(model, table))


def added_operators(original: Model, rewritten: Model) -> tuple[str, ...]:
    """The opcodes the rewritten model runs that the original does not (a resolver listing the
    original's fails at setup without them)."""
    before = set(firmware_needs(original).operators)
    return tuple(op for op in firmware_needs(rewritten).operators if op not in before)
