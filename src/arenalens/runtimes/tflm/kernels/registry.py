"""The kernel registry: opcode + build → the rule for the kernel that build registers.

`registered_opcodes()` is what the `tflite_micro` wheel's PythonOpsResolver (python/tflite_micro/
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
from collections.abc import Iterator, Mapping

from arenalens.analysis.inplace import InPlace, NotInPlace
from arenalens.builds.build import REFERENCE, Build
from arenalens.builds.records import COPROCESSOR_FAMILIES, KERNEL_LIBRARIES
from arenalens.runtimes.tflm.kernels.base import KernelRule, OptimizedKernels
from arenalens.runtimes.tflm.kernels.families import Families

# The reference kernels' rules: each family module of this package and the operators its `RULES`
# has a rule for (a module loads when a model first uses one of them: `families`).
REFERENCE_KERNELS: Mapping[str, KernelRule] = Families(
    "arenalens.runtimes.tflm.kernels",
    {
        "activations": ("HARD_SWISH", "ELU", "LEAKY_RELU", "LOGISTIC", "RELU", "RELU6", "TANH"),
        "arithmetic": (
            "ADD", "SUB", "MUL", "DIV", "ADD_N", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE",
        ),
        "batch_matmul": ("BATCH_MATMUL",),
        "circular_buffer": ("CUSTOM:CIRCULAR_BUFFER",),
        "compression": ("CUSTOM:TFLM_DECODE",),
        "control_flow": ("IF", "WHILE", "CALL_ONCE"),
        "conv": ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"),
        "cumsum": ("CUMSUM",),
        "detection": ("CUSTOM:TFLite_Detection_PostProcess",),
        "elementwise": (
            "ABS", "RSQRT", "SIN", "COS", "LOG", "SQRT", "SQUARE", "LOGICAL_NOT", "CEIL", "ROUND",
            "EXP", "FLOOR", "NEG", "LOGICAL_AND", "LOGICAL_OR", "MAXIMUM", "MINIMUM", "EQUAL",
            "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "SELECT_V2",
            "ZEROS_LIKE", "FILL",
        ),
        "embedding": ("EMBEDDING_LOOKUP",),
        "ethos_u": ("CUSTOM:ethos-u",),
        "fully_connected": ("FULLY_CONNECTED",),
        "layout": (
            "PAD", "PADV2", "MIRROR_PAD", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
            "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR",
        ),
        "normalization": ("L2_NORMALIZATION",),
        "pooling": ("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"),
        "prelu": ("PRELU",),
        "quantize": ("CAST", "DEQUANTIZE", "QUANTIZE"),
        "recurrent": ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"),
        "reduce": ("ARG_MAX", "ARG_MIN", "MEAN", "SUM", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN"),
        "shape": (
            "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE", "TRANSPOSE", "REVERSE_V2",
            "BROADCAST_ARGS", "BROADCAST_TO",
        ),
        "signal_library": (
            "CUSTOM:SignalEnergy", "CUSTOM:SignalFftAutoScale", "CUSTOM:SignalFilterBank",
            "CUSTOM:SignalFilterBankLog", "CUSTOM:SignalFilterBankSpectralSubtraction",
            "CUSTOM:SignalFilterBankSquareRoot", "CUSTOM:SignalIrfft", "CUSTOM:SignalPCAN",
            "CUSTOM:SignalRfft", "CUSTOM:SignalWindow",
        ),
        "signal_streams": (
            "CUSTOM:SignalDelay", "CUSTOM:SignalFramer", "CUSTOM:SignalOverlapAdd",
            "CUSTOM:SignalStacker",
        ),
        "slicing": (
            "PACK", "UNPACK", "SPLIT", "SPLIT_V", "CONCATENATION", "SLICE", "STRIDED_SLICE",
            "GATHER", "GATHER_ND", "DYNAMIC_UPDATE_SLICE",
        ),
        "softmax": ("SOFTMAX", "LOG_SOFTMAX"),
        "variables": ("ASSIGN_VARIABLE", "READ_VARIABLE", "VAR_HANDLE"),
    },
)  # fmt: skip


def registered_opcodes() -> frozenset[str]:
    """Every operator the wheel's op resolver lists (this imports every family module)."""
    return frozenset(
        opcode for opcode, rule in REFERENCE_KERNELS.items() if rule.unregistered is None
    )


def _library_rules(module: str) -> OptimizedKernels:
    """A kernel library's rules package (its record's `rules`) → its `KERNELS`."""
    kernels = importlib.import_module(module).KERNELS
    if not isinstance(kernels, OptimizedKernels):
        raise TypeError(f"{module}.KERNELS is not an OptimizedKernels")
    return kernels


class _Libraries(Mapping[str, OptimizedKernels]):
    """Kernel libraries by the name `Build.kernels` gives them: every library record with a rules
    package of its own (the reference kernels' are REFERENCE_KERNELS), each package imported
    when a build first selects it."""

    def __init__(self) -> None:
        self._packages = {
            name: library.rules
            for name, library in KERNEL_LIBRARIES.items()
            if library.rules is not None and name != REFERENCE
        }
        self._loaded: dict[str, OptimizedKernels] = {}

    def __getitem__(self, name: str) -> OptimizedKernels:
        kernels = self._loaded.get(name)
        if kernels is None:
            kernels = self._loaded[name] = _library_rules(self._packages[name])
        return kernels

    def get(  # type: ignore[override]
        self, name: str, default: OptimizedKernels | None = None
    ) -> OptimizedKernels | None:
        """The library's kernels, or `default` (Mapping's own `get` goes through a KeyError for
        a build without one: the reference kernels' builds)."""
        return self[name] if name in self._packages else default

    def __contains__(self, name: object) -> bool:
        return name in self._packages

    def __iter__(self) -> Iterator[str]:
        return iter(self._packages)

    def __len__(self) -> int:
        return len(self._packages)


LIBRARIES: Mapping[str, OptimizedKernels] = _Libraries()


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
    rule = REFERENCE_KERNELS.get(opcode)
    if rule is None or rule.unregistered is not None:
        return False
    return rule.registered_from is None or build.has(rule.registered_from)


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
