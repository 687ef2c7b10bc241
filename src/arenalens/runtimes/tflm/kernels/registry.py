"""The kernel registry: opcode + build → the rule for the kernel that build registers.

`REGISTERED` is what the `tflite_micro` wheel's PythonOpsResolver (python/tflite_micro/
python_ops_resolver.cc) registers, every reference rule not marked otherwise
(`KernelRule.unregistered`); the Cortex-M probes register the same set. An operator outside it has
no kernel: TFLM's setup fails ("Didn't find op for builtin opcode" / "Failed to get registration
from op code"). `ethos-u` is listed by the resolver but its registration function returns null
outside Ethos-U builds, so its rule is registered only on builds with an NPU (`Build.npu`; the
kernels its family registers are the family's `registers` in `build_records.json`).

`REFERENCE_KERNELS` holds the reference kernels' rules, one per family module; `LIBRARIES` the
kernel libraries a build may select (`Build.kernels`), each a package of variant rules
(`kernels/cmsis_nn/`, `kernels/esp_nn/`) that its record in `build_records.json` names
(`KernelLibrary.rules`): a new library is its row and its package. A build's rule for an
operator is its library's variant, else the reference rule. A build with a co-processor also
registers the custom operators its record lists (`Coprocessor.registers`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType

from arenalens.analysis.inplace import InPlace, NotInPlace
from arenalens.builds.build import REFERENCE, Build
from arenalens.builds.records import COPROCESSOR_FAMILIES, KERNEL_LIBRARIES
from arenalens.runtimes.tflm.kernels import (
    activations,
    arithmetic,
    batch_matmul,
    circular_buffer,
    compression,
    control_flow,
    conv,
    cumsum,
    detection,
    elementwise,
    embedding,
    ethos_u,
    fully_connected,
    layout,
    normalization,
    pooling,
    prelu,
    quantize,
    recurrent,
    reduce,
    shape,
    signal_library,
    signal_streams,
    slicing,
    softmax,
    variables,
)
from arenalens.runtimes.tflm.kernels.base import KernelRule, OptimizedKernels, rule_table

REFERENCE_KERNELS: Mapping[str, KernelRule] = MappingProxyType(
    rule_table(
        *activations.RULES,
        *arithmetic.RULES,
        *batch_matmul.RULES,
        *circular_buffer.RULES,
        *compression.RULES,
        *control_flow.RULES,
        *conv.RULES,
        *cumsum.RULES,
        *detection.RULES,
        *elementwise.RULES,
        *embedding.RULES,
        *ethos_u.RULES,
        *fully_connected.RULES,
        *layout.RULES,
        *normalization.RULES,
        *pooling.RULES,
        *prelu.RULES,
        *quantize.RULES,
        *recurrent.RULES,
        *reduce.RULES,
        *shape.RULES,
        *signal_library.RULES,
        *signal_streams.RULES,
        *slicing.RULES,
        *softmax.RULES,
        *variables.RULES,
    )
)
REGISTERED: frozenset[str] = frozenset(
    opcode for opcode, rule in REFERENCE_KERNELS.items() if rule.unregistered is None
)


def _library_rules(module: str) -> OptimizedKernels:
    """A kernel library's rules package (its record's `rules`) → its `KERNELS`."""
    kernels = importlib.import_module(module).KERNELS
    if not isinstance(kernels, OptimizedKernels):
        raise TypeError(f"{module}.KERNELS is not an OptimizedKernels")
    return kernels


# Kernel libraries by the name `Build.kernels` gives them: every library record with a rules
# package of its own (the reference kernels' are REFERENCE_KERNELS).
LIBRARIES: Mapping[str, OptimizedKernels] = MappingProxyType(
    {
        name: _library_rules(library.rules)
        for name, library in KERNEL_LIBRARIES.items()
        if library.rules is not None and name != REFERENCE
    }
)


# The kernels only builds driving a co-processor register (every family's `registers`).
_COPROCESSOR_KERNELS = frozenset(
    opcode for family in COPROCESSOR_FAMILIES.values() for opcode in family.registers
)


def is_registered(opcode: str, build: Build) -> bool:
    """Does this build's op resolver (the wheel's, the probes' firmware's: the same list at one
    release) register a kernel for this operator? A kernel added to it later than the build's
    TFLM release is not (`KernelRule.registered_from`). A kernel only a co-processor's builds
    register (the Ethos-U kernel: its family's `registers` in build_records.json) is registered
    on builds driving one of that family only."""
    if opcode in _COPROCESSOR_KERNELS:
        return build.npu is not None and opcode in build.npu.registers
    if opcode not in REGISTERED:
        return False
    rule = REFERENCE_KERNELS.get(opcode)
    return rule is None or rule.registered_from is None or build.has(rule.registered_from)


def stands_in(opcode: str, build: Build) -> bool:
    """True when this build runs a library kernel for the operator but arenalens has only the
    reference kernel's rule for it (its bytes are then an estimate)."""
    library = LIBRARIES.get(build.kernels)
    return library is not None and opcode in library.replaces and opcode not in library.rules


def library_rule(opcode: str, library: str) -> KernelRule | None:
    """The rule for the kernel a build with this kernel library runs for an operator (its
    variant, else the reference kernel's); None when arenalens has none."""
    kernels = LIBRARIES.get(library)
    if kernels is not None:
        rule = kernels.rules.get(opcode)
        if rule is not None:
            return rule
    return REFERENCE_KERNELS.get(opcode)


def inplace_of(opcode: str) -> InPlace | NotInPlace | None:
    """Whether the reference kernel (the wheel's, where `optimize --inplace` proves its plans)
    may write its output over an input only it reads."""
    rule = REFERENCE_KERNELS.get(opcode)
    return None if rule is None else rule.inplace


def rule_for(opcode: str, build: Build) -> KernelRule | None:
    """The rule for the kernel this build runs for an operator; None when arenalens has none."""
    return library_rule(opcode, build.kernels)
