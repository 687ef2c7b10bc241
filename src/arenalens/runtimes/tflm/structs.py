"""TFLM's own structs: the C field lists of what the runtime allocates besides kernels → their
sizes on any build.

Every byte TFLM spends outside the kernels is one of these structs (or an array of them): the
allocator and planner objects `MicroAllocator::Create` places in the tail, the per-tensor and
per-node bookkeeping, the temporary `TfLiteTensor` views kernels take in Prepare, and the
planner's working arrays. Written as their fields in declaration order (`abi.Struct`), one
description gives the x86-64 wheel (LP64, `USE_TFLM_COMPRESSION`) and a Cortex-M build (ILP32 Arm
EABI with short enums, no compression) alike. C++ classes with virtual functions start with one
vtable pointer per polymorphic base.

Sources, tflite-micro @ 90b983c2b3f1: `tensorflow/lite/core/c/common.h` (the TF_LITE_STATIC_MEMORY
TfLiteTensor, TfLiteNode, TfLiteEvalTensor), `micro_allocator.{h,cc}`,
`recording_micro_allocator.h`, `arena_allocator/single_arena_buffer_allocator.h`,
`arena_allocator/recording_single_arena_buffer_allocator.h`,
`memory_planner/{greedy,linear}_memory_planner.h`, `micro_allocation_info.h`,
`micro_resource_variable.h`, `compression.h`. The sizes were confirmed by compiling the headers
with arm-none-eabi-g++ 12.2 and the host g++, and by tracing the Cortex-M probes.
"""

from __future__ import annotations

from arenalens.builds.build import COMPRESSION
from arenalens.runtimes.tflm.abi import Field, Struct, struct, union

# The parts of a kernel's temp TfLiteTensor view, as its setup steps name them (`Allocation.part`):
# the tensor struct, its affine quantization struct and that struct's zero-point TfLiteIntArray.
TEMP_TENSOR_PART = "TfLiteTensor"
TEMP_AFFINE_PART = "TfLiteAffineQuantization"
TEMP_ZERO_POINTS_PART = "zero points"

# An integer array pointer or a raw pointer: the same on every ABI.
_POINTER = "pointer"

TF_LITE_PTR_UNION = union("TfLitePtrUnion", ("data", _POINTER))

TF_LITE_QUANTIZATION = struct(
    "TfLiteQuantization",
    ("type", "enum"),  # TfLiteQuantizationType
    ("params", _POINTER),
)
TF_LITE_QUANTIZATION_PARAMS = struct(
    "TfLiteQuantizationParams", ("scale", "float"), ("zero_point", "int32")
)

# TfLiteTensor as TFLM compiles it (TF_LITE_STATIC_MEMORY): persistent and temp tensor views.
TF_LITE_TENSOR = struct(
    "TfLiteTensor",
    ("quantization", TF_LITE_QUANTIZATION),
    ("params", TF_LITE_QUANTIZATION_PARAMS),
    ("data", TF_LITE_PTR_UNION),
    ("dims", _POINTER),
    ("bytes", "size_t"),
    ("type", "enum"),  # TfLiteType
    ("allocation_type", "enum"),  # TfLiteAllocationType
    ("is_variable", "bool"),
)
TF_LITE_AFFINE_QUANTIZATION = struct(
    "TfLiteAffineQuantization",
    ("scale", _POINTER),
    ("zero_point", _POINTER),
    ("quantized_dimension", "int32"),
)
TF_LITE_EVAL_TENSOR = struct(
    "TfLiteEvalTensor",
    ("data", TF_LITE_PTR_UNION),
    ("dims", _POINTER),
    ("type", "enum"),
)
TF_LITE_NODE = struct(
    "TfLiteNode",
    ("inputs", _POINTER),
    ("outputs", _POINTER),
    ("intermediates", _POINTER),
    ("user_data", _POINTER),
    ("builtin_data", _POINTER),
    ("custom_initial_data", _POINTER),
    ("custom_initial_data_size", "int"),
)
NODE_AND_REGISTRATION = struct(
    "NodeAndRegistration", ("node", TF_LITE_NODE), ("registration", _POINTER)
)

# MicroAllocator's records.
SCRATCH_BUFFER_REQUEST = struct(
    "internal::ScratchBufferRequest",
    ("bytes", "size_t"),
    ("node_idx", "int"),
    ("subgraph_idx", "int"),
)
SCRATCH_BUFFER_HANDLE = struct("ScratchBufferHandle", ("data", _POINTER))
SUBGRAPH_ALLOCATIONS = struct(
    "SubgraphAllocations",
    ("node_and_registrations", _POINTER),
    ("tensors", _POINTER),
    Field(
        "compressed", struct("CompressedTensorList", ("tensors", _POINTER)), only_with=COMPRESSION
    ),
)
ALLOCATION_INFO = struct(
    "AllocationInfo",
    ("bytes", "size_t"),
    ("output_ptr", _POINTER),
    ("first_created", "int"),
    ("last_used", "int"),
    ("offline_offset", "int32"),
    ("needs_allocating", "bool"),
)

# The arena allocators. Both interfaces (INonPersistentBufferAllocator, IPersistentBufferAllocator)
# are polymorphic: two vtable pointers.
SINGLE_ARENA_BUFFER_ALLOCATOR = struct(
    "SingleArenaBufferAllocator",
    Field("vtables", _POINTER, 2),
    ("buffer_head_", _POINTER),
    ("buffer_tail_", _POINTER),
    ("head_", _POINTER),
    ("tail_", _POINTER),
    ("temp_", _POINTER),
    ("temp_buffer_ptr_check_sum_", "intptr"),
    ("temp_buffer_count_", "int"),
)
RECORDING_SINGLE_ARENA_BUFFER_ALLOCATOR = struct(
    "RecordingSingleArenaBufferAllocator",
    ("base", SINGLE_ARENA_BUFFER_ALLOCATOR),
    ("requested_head_bytes_", "size_t"),
    ("requested_tail_bytes_", "size_t"),
    ("used_bytes_", "size_t"),
    ("alloc_count_", "size_t"),
)

# The two allocators of the two-buffer MicroAllocator::Create(persistent, P, non_persistent, N)
# (arena_allocator/{persistent,non_persistent}_arena_buffer_allocator.h): one vtable each.
PERSISTENT_ARENA_BUFFER_ALLOCATOR = struct(
    "PersistentArenaBufferAllocator",
    ("vtable", _POINTER),
    ("buffer_head_", _POINTER),
    ("buffer_tail_", _POINTER),
    ("tail_temp_", _POINTER),
)
NON_PERSISTENT_ARENA_BUFFER_ALLOCATOR = struct(
    "NonPersistentArenaBufferAllocator",
    ("vtable", _POINTER),
    ("buffer_head_", _POINTER),
    ("buffer_tail_", _POINTER),
    ("head_temp_", _POINTER),
    ("next_temp_", _POINTER),
    ("temp_buffer_ptr_check_sum_", "intptr"),
    ("temp_buffer_count_", "int"),
    ("resizable_buffer_allocated_", "bool"),
)

# The memory planners.
GREEDY_MEMORY_PLANNER = struct(
    "GreedyMemoryPlanner",
    ("vtable", _POINTER),
    ("max_buffer_count_", "int"),
    ("buffer_count_", "int"),
    ("requirements_", _POINTER),
    ("buffer_sizes_sorted_", _POINTER),
    ("buffer_ids_sorted_", _POINTER),
    ("buffers_sorted_by_offset_", _POINTER),
    ("next_free_entry_", "int"),
    ("first_entry_index_", "int"),
    ("buffer_offsets_", _POINTER),
    ("need_to_calculate_offsets_", "bool"),
)
# LinearMemoryPlanner::kMaxBufferCount (linear_memory_planner.h).
LINEAR_PLANNER_CAPACITY = 1024
LINEAR_MEMORY_PLANNER = struct(
    "LinearMemoryPlanner",
    ("vtable", _POINTER),
    Field("buffer_offsets_", "size_t", LINEAR_PLANNER_CAPACITY),
    ("current_buffer_count_", "int"),
    ("next_free_offset_", "size_t"),
)
# GreedyMemoryPlanner::per_buffer_size(): the working arrays, per buffer it can plan.
GREEDY_PLANNER_PER_BUFFER = struct(
    "GreedyMemoryPlanner per buffer",
    Field(
        "requirements_",
        struct(
            "BufferRequirements",
            ("size", "int"),
            ("offline_offset", "int"),
            ("first_time_used", "int"),
            ("last_time_used", "int"),
        ),
    ),
    ("buffer_sizes_sorted_", "int"),
    ("buffer_ids_sorted_", "int"),
    Field(
        "buffers_sorted_by_offset_",
        struct(
            "ListEntry",
            ("offset", "int"),
            ("requirements_index", "int"),
            ("next_entry_index", "int"),
        ),
    ),
    ("buffer_offsets_", "int"),
)

# MicroAllocator and its recording subclass.
MICRO_ALLOCATOR = struct(
    "MicroAllocator",
    ("vtable", _POINTER),
    ("non_persistent_buffer_allocator_", _POINTER),
    ("persistent_buffer_allocator_", _POINTER),
    ("builtin_data_allocator_", _POINTER),
    ("memory_planner_", _POINTER),
    ("model_is_allocating_", "bool"),
    ("scratch_buffer_request_count_", "size_t"),
    ("scratch_buffer_head_", _POINTER),
    ("max_head_buffer_usage_", "size_t"),
)
RECORDED_ALLOCATION = struct(
    "RecordedAllocation",
    ("requested_bytes", "size_t"),
    ("used_bytes", "size_t"),
    ("count", "size_t"),
)
RECORDING_MICRO_ALLOCATOR = struct(
    "RecordingMicroAllocator",
    ("base", MICRO_ALLOCATOR),
    ("recording_memory_allocator_", _POINTER),
    ("recorded_tflite_eval_tensor_data_", RECORDED_ALLOCATION),
    ("recorded_persistent_tflite_tensor_data_", RECORDED_ALLOCATION),
    ("recorded_persistent_tflite_tensor_quantization_data_", RECORDED_ALLOCATION),
    ("recorded_persistent_buffer_data_", RECORDED_ALLOCATION),
    ("recorded_tflite_tensor_variable_buffer_data_", RECORDED_ALLOCATION),
    ("recorded_node_and_registration_array_data_", RECORDED_ALLOCATION),
    Field("recorded_compression_data_", RECORDED_ALLOCATION, only_with=COMPRESSION),
    ("recorded_op_data_", RECORDED_ALLOCATION),
)
# The MicroBuiltinDataAllocator (micro_allocator.cc) that parses builtin options into the tail.
MICRO_BUILTIN_DATA_ALLOCATOR = struct(
    "MicroBuiltinDataAllocator", ("vtable", _POINTER), ("persistent_allocator_", _POINTER)
)

# Resource variables (micro_resource_variable.h).
MICRO_RESOURCE_VARIABLES = struct(
    "MicroResourceVariables",
    ("resource_variables_", _POINTER),
    ("max_variable_count_", "int"),
    ("num_resource_variables_", "int"),
)
MICRO_RESOURCE_VARIABLE = struct(
    "MicroResourceVariables::MicroResourceVariable",
    ("container", _POINTER),
    ("shared_name", _POINTER),
    ("resource_buffer", _POINTER),
    ("bytes", "size_t"),
    ("default_value", "int8"),
)

RUNTIME_STRUCTS: tuple[Struct, ...] = (
    TF_LITE_TENSOR,
    TF_LITE_AFFINE_QUANTIZATION,
    TF_LITE_EVAL_TENSOR,
    TF_LITE_NODE,
    NODE_AND_REGISTRATION,
    SCRATCH_BUFFER_REQUEST,
    SCRATCH_BUFFER_HANDLE,
    SUBGRAPH_ALLOCATIONS,
    ALLOCATION_INFO,
    SINGLE_ARENA_BUFFER_ALLOCATOR,
    RECORDING_SINGLE_ARENA_BUFFER_ALLOCATOR,
    GREEDY_MEMORY_PLANNER,
    LINEAR_MEMORY_PLANNER,
    GREEDY_PLANNER_PER_BUFFER,
    MICRO_ALLOCATOR,
    RECORDING_MICRO_ALLOCATOR,
    MICRO_BUILTIN_DATA_ALLOCATOR,
    MICRO_RESOURCE_VARIABLES,
    MICRO_RESOURCE_VARIABLE,
)
