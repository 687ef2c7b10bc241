"""TFLM's own bookkeeping on one build: struct sizes the setup replay allocates, and the
`print_allocations()` categories that record them.

Struct sizes depend on the build (`layout_for`, from the C field lists in `structs`): the x86-64
`tflite_micro` pip package (LP64, `USE_TFLM_COMPRESSION`, RecordingMicroAllocator), measured
against the wheel, and device firmware (ILP32 with the Arm EABI's short enums on Cortex-M, with
int-sized enums on the ESP32 family; no compression; the plain MicroAllocator or the recording
one), measured against TFLM built for Cortex-M and esp-tflite-micro built for RV32 under QEMU. The
setup sequence (`setup`) is the same on every build; only these sizes and the first three objects
differ (the plain allocator's need 104 bytes less on Cortex-M, 232 on the wheel).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from arenalens.builds.build import COMPRESSION, HOST, Build, build_title
from arenalens.records import record
from arenalens.runtimes.tflm import structs
from arenalens.runtimes.tflm.abi import Struct

# print_allocations() category names (RecordingMicroAllocator::PrintAllocations), in print order.
EVAL_TENSORS = "TfLiteEvalTensor data"
PERSISTENT_TENSORS = "Persistent TfLiteTensor data"
QUANTIZATION = "Persistent TfLiteTensor quantization data"
PERSISTENT_BUFFERS = "Persistent buffer data"
VARIABLES = "TfLiteTensor variable buffer data"
NODES = "NodeAndRegistration struct"
CATEGORY_ORDER = (
    EVAL_TENSORS,
    PERSISTENT_TENSORS,
    QUANTIZATION,
    PERSISTENT_BUFFERS,
    VARIABLES,
    NODES,
)
CATEGORY_UNITS: Mapping[str, str] = MappingProxyType(
    {
        EVAL_TENSORS: "allocations",
        PERSISTENT_TENSORS: "tensors",
        QUANTIZATION: "allocations",
        PERSISTENT_BUFFERS: "allocations",
        VARIABLES: "allocations",
        NODES: "NodeAndRegistration structs",
    }
)
# LinearMemoryPlanner::kMaxBufferCount (linear_memory_planner.h).
LINEAR_PLANNER_CAPACITY = structs.LINEAR_PLANNER_CAPACITY


@record(slots=True)
class RuntimeLayout:
    """Struct sizes of one TFLM build: what the runtime's own bookkeeping costs, in bytes."""

    name: str  # the build, as build_title names it
    pointer_bytes: int
    struct_alignment: int  # alignof of every runtime struct below (none holds a 64-bit scalar)
    # The arena allocator, the memory planner and the MicroAllocator, as Create places them:
    # RecordingSingleArenaBufferAllocator + GreedyMemoryPlanner + RecordingMicroAllocator with
    # the recording allocator, SingleArenaBufferAllocator + GreedyMemoryPlanner + MicroAllocator
    # without.
    allocator_objects: int
    builtin_data_allocator: int  # MicroBuiltinDataAllocator
    subgraph_allocations: int  # SubgraphAllocations, per subgraph
    eval_tensor: int  # TfLiteEvalTensor
    node_and_registration: int  # NodeAndRegistration
    tflite_tensor: int  # TfLiteTensor (TF_LITE_STATIC_MEMORY)
    affine_quantization: int  # TfLiteAffineQuantization
    scratch_request: int  # internal::ScratchBufferRequest
    scratch_handle: int  # ScratchBufferHandle
    allocation_info: int  # AllocationInfo, per tensor and scratch request while planning
    planner_bytes_per_buffer: int  # GreedyMemoryPlanner::per_buffer_size()
    resource_variables: int  # MicroResourceVariables
    resource_variable: int  # MicroResourceVariables::MicroResourceVariable, per variable
    # SingleArenaBufferAllocator + LinearMemoryPlanner (1024 offsets) + MicroAllocator: the
    # objects of a preserve_all_tensors interpreter, which records nothing.
    preserve_all_allocator_objects: int
    # PersistentArenaBufferAllocator + NonPersistentArenaBufferAllocator + GreedyMemoryPlanner +
    # MicroAllocator: what the two-buffer MicroAllocator::Create places in the persistent buffer.
    two_buffer_allocator_objects: int = 0
    # SingleArenaBufferAllocator + GreedyMemoryPlanner + MicroAllocator: a plain
    # MicroAllocator::Create(arena, size), e.g. the one resource variables may get for themselves.
    plain_allocator_objects: int = 0
    assumptions: tuple[str, ...] = ()


_HOST_ARRAY = "the arena array starts 16-byte aligned (malloc); its end may be unaligned"


@cache
def layout_for(build: Build) -> RuntimeLayout:
    """The runtime's struct sizes on a build, from the C field lists (`structs`): pointer-sized
    fields halve on 32-bit cores, compression adds fields, and the recording allocator's objects
    replace the plain ones."""
    abi, features = build.abi, build.features

    def size(layout: Struct) -> int:
        return layout.size(abi, features)

    if build.recording:
        allocator = structs.RECORDING_SINGLE_ARENA_BUFFER_ALLOCATOR
        micro_allocator = structs.RECORDING_MICRO_ALLOCATOR
    else:
        allocator = structs.SINGLE_ARENA_BUFFER_ALLOCATOR
        micro_allocator = structs.MICRO_ALLOCATOR
    return RuntimeLayout(
        name=build_title(build),
        pointer_bytes=abi.pointer_bytes,
        struct_alignment=max(item.layout(abi, features)[1] for item in structs.RUNTIME_STRUCTS),
        allocator_objects=size(allocator)
        + size(structs.GREEDY_MEMORY_PLANNER)
        + size(micro_allocator),
        builtin_data_allocator=size(structs.MICRO_BUILTIN_DATA_ALLOCATOR),
        subgraph_allocations=size(structs.SUBGRAPH_ALLOCATIONS),
        eval_tensor=size(structs.TF_LITE_EVAL_TENSOR),
        node_and_registration=size(structs.NODE_AND_REGISTRATION),
        tflite_tensor=size(structs.TF_LITE_TENSOR),
        affine_quantization=size(structs.TF_LITE_AFFINE_QUANTIZATION),
        scratch_request=size(structs.SCRATCH_BUFFER_REQUEST),
        scratch_handle=size(structs.SCRATCH_BUFFER_HANDLE),
        allocation_info=size(structs.ALLOCATION_INFO),
        planner_bytes_per_buffer=size(structs.GREEDY_PLANNER_PER_BUFFER),
        resource_variables=size(structs.MICRO_RESOURCE_VARIABLES),
        resource_variable=size(structs.MICRO_RESOURCE_VARIABLE),
        preserve_all_allocator_objects=size(structs.SINGLE_ARENA_BUFFER_ALLOCATOR)
        + size(structs.LINEAR_MEMORY_PLANNER)
        + size(structs.MICRO_ALLOCATOR),
        two_buffer_allocator_objects=size(structs.PERSISTENT_ARENA_BUFFER_ALLOCATOR)
        + size(structs.NON_PERSISTENT_ARENA_BUFFER_ALLOCATOR)
        + size(structs.GREEDY_MEMORY_PLANNER)
        + size(structs.MICRO_ALLOCATOR),
        plain_allocator_objects=size(structs.SINGLE_ARENA_BUFFER_ALLOCATOR)
        + size(structs.GREEDY_MEMORY_PLANNER)
        + size(structs.MICRO_ALLOCATOR),
        assumptions=_layout_assumptions(build),
    )


def _layout_assumptions(build: Build) -> tuple[str, ...]:
    compression = "USE_TFLM_COMPRESSION" if COMPRESSION in build.features else "no compression"
    if build.is_host:
        return (
            "64-bit host build of the tflite_micro pip package (reference kernels, "
            f"{compression}, RecordingMicroAllocator, GreedyMemoryPlanner)",
            _HOST_ARRAY,
        )
    allocator = (
        "RecordingMicroAllocator (RecordingMicroAllocator::Create, as the device probes use)"
        if build.recording
        else "MicroAllocator (as MicroInterpreter(model, resolver, arena, arena_size) creates it)"
    )
    assert build.core is not None
    return (
        f"{build.title}: {build.core.toolchain.title}, {compression}",
        f"{allocator}, GreedyMemoryPlanner",
        "the arena array starts 16-byte aligned (alignas(16)); its end may be unaligned",
    )


HOST_64 = layout_for(HOST)
