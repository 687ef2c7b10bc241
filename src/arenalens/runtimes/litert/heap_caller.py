"""Setting the inputs before the first `invoke()`: what the Python caller and wrapper allocate
(not the interpreter's: allowances, labelled so), and what LiteRT itself allocates for string
tensors, which it writes through its `DynamicBuffer` (*tflite/string_util.cc*,
*tflite/converter/utils/string_utils.cc*) whether the application is C++ or Python.

`measure.py` sets every input from numpy zeros of its shape and dtype; a string input's zeros
are empty strings (numpy 'S1' items), so the figures count string tensors holding empty
strings: the characters an application writes come on top, and the label says so.

* **the details and numeric inputs** (*interpreter.py* get_input_details, *interpreter_wrapper.cc*
  TensorSize / TensorQuantizationParameters / SetTensor, numpy's *alloc.c*): each input's details
  hold four 1-D arrays (shape, shape signature, scales, zero points) whose data the wrapper
  mallocs (an empty one: numpy's 1-byte block) and whose dims numpy takes from its dimension
  cache; each zeros array takes a dims block for the converted shape, one for its dims and
  strides, and its data (numpy's data cache under 1 KiB, else calloc), freed after SetTensor
  copies it. numpy keeps up to 7 freed blocks per size; the loop variable keeps the last
  input's details. pybind11's call blocks are held through each wrapper call (`invoke_call`:
  through the whole invoke). What stays is the caller's, not the interpreter's: an allowance,
  replayed with numpy's caches empty at the baseline (the most they can keep).
* **string inputs**: `SetTensor` makes a `DynamicBuffer` (its offsets vector starts as {0}),
  `FillStringBufferWithPyArray` walks the array with numpy's `PyArray_IterNew` (an iterator
  object of 2,632 B: 32 legacy dimensions' coordinates, strides, bounds and limits) and adds
  each item (`AddString`: an empty string pushes one offset; a vector of 8-byte offsets grows
  by doubling, the new block taken before the old is freed), frees the iterator, then
  `WriteToTensor` mallocs the tensor's buffer (a count, N + 1 offsets and the characters, as
  int32) and copies its dims (`TfLiteTensorReset` frees the old dims: the same size), and the
  buffer's vectors are freed. A rank-0 array is added whole as one string of its bytes, with
  no iterator.
* **string outputs**: a kernel writing a string tensor at Eval (GatherStrings, TileString...)
  does the same through its own `DynamicBuffer`: its offsets, then the tensor's buffer, kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from arenalens.ir import Model, Subgraph, Tensor
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeTensor

# numpy's small-block caches (numpy/_core/src/multiarray/alloc.c, numpy 1.x and 2.x): a freed
# array data block of under NBUCKETS bytes, and a freed dimensions-and-strides block of under
# NBUCKETS_DIM npy_intp, go back to a per-size bucket of up to NCACHE blocks instead of to
# glibc; an allocation of that size takes one back first. A block the cache held before the
# baseline is not counted when reused, so caches taken as empty at the baseline count the most
# they can keep (an upper bound, exact when they were empty).
NUMPY_DATA_BUCKETS = 1024
NUMPY_DIMS_BUCKETS = 16
NUMPY_CACHE_ENTRIES = 7
NPY_INTP_BYTES = 8
# pybind11's function_call for each wrapper method: its arguments vector (self and each
# argument, 8 B a handle) and its vector<bool> of conversion flags (one word), held for the call.
PYBIND_HANDLE_BYTES = 8
PYBIND_FLAGS_BYTES = 8
# The wrapper's methods measure.py calls, by their argument count with self.
TENSOR_QUERY_HANDLES = 3  # TensorName(...), TensorSize(...): self, tensor index, subgraph
SET_TENSOR_HANDLES = 4  # SetTensor(self, index, value, subgraph)
INVOKE_HANDLES = 2  # Invoke(self, subgraph)
INDICES_HANDLES = 1  # InputIndices(self)
# The details' wrapper queries (_get_tensor_details): name, shape, signature, type,
# quantization, quantization parameters, sparsity; each a pybind call.
DETAIL_QUERIES = 7
# libstdc++'s std::string keeps up to 15 characters in place; a longer name is a heap block.
STRING_INLINE_CHARACTERS = 15
# CPython (3.11): an object over 512 B comes from malloc, not pymalloc; a str's header is 48 B
# (ASCII) or 72 B (compact, up to 4 B a character).
PYMALLOC_LARGEST_BYTES = 512
ASCII_STRING_HEADER_BYTES = 48
UNICODE_STRING_HEADER_BYTES = 72
# sizeof(PyArrayIterObject) with NPY_MAXDIMS_LEGACY_ITERS = 32 (numpy 1.x and 2.x): the
# object head, five arrays of 32 npy_intp, bounds and limits [32][2], limits_sizes[32] and
# five pointers or counts; PyArray_malloc, so glibc's block (its usable size equals it).
NUMPY_ITERATOR_BYTES = 2_632
OFFSET_BYTES = 8  # SimpleDynamicBuffer's offsets: std::vector<size_t>
STRING_HEADER_ITEMS = 2  # WriteToBuffer: the string count and the total length, int32 each


@dataclass(frozen=True, slots=True)
class Step:
    """One block taken (usable bytes > 0) or given back (< 0); `caller`: the Python caller's
    or wrapper's, not the interpreter's."""

    usable: int
    caller: bool = False


@dataclass(frozen=True, slots=True)
class _WrapperArray:
    """A 1-D array the wrapper returns (PyArrayFromIntVector / FloatVector): `elements` of
    `element_bytes`, malloc'd by the wrapper (freed with free(), not numpy's cache), or for
    none an empty numpy array (a 1-byte data block from numpy's cache)."""

    elements: int
    element_bytes: int = 4


class _NumpyCaches:
    """numpy's data and dimension caches (see NUMPY_CACHE_ENTRIES), empty at the baseline."""

    def __init__(self) -> None:
        self.available: Counter[tuple[str, int]] = Counter()

    def take(self, cache: str, bucket: int, nbytes: int) -> Iterator[Step]:
        key = (cache, bucket)
        if self._cached(cache, bucket) and self.available[key] > 0:
            self.available[key] -= 1
            return
        yield Step(glibc.usable(nbytes), caller=True)

    def give(self, cache: str, bucket: int, nbytes: int) -> Iterator[Step]:
        key = (cache, bucket)
        if self._cached(cache, bucket) and self.available[key] < NUMPY_CACHE_ENTRIES:
            self.available[key] += 1
            return
        yield Step(-glibc.usable(nbytes), caller=True)

    @staticmethod
    def _cached(cache: str, bucket: int) -> bool:
        return bucket < (NUMPY_DATA_BUCKETS if cache == "data" else NUMPY_DIMS_BUCKETS)

    def data(self, nbytes: int, *, free: bool = False) -> Iterator[Step]:
        """An array's data block: numpy asks for at least 1 byte (an empty array too)."""
        size = max(nbytes, 1)
        return self.give("data", size, size) if free else self.take("data", size, size)

    def dims(self, entries: int, *, free: bool = False) -> Iterator[Step]:
        """npy_alloc_cache_dim / npy_free_cache_dim: at least 2 npy_intp."""
        bucket = max(entries, 2)
        nbytes = NPY_INTP_BYTES * bucket
        return self.give("dims", bucket, nbytes) if free else self.take("dims", bucket, nbytes)


def set_inputs(prepared: PreparedSubgraph, subgraph: Subgraph | None = None) -> Iterator[Step]:
    """measure.py's `for d in get_input_details(): set_tensor(d["index"], np.zeros(...))`:
    the details of every input (the wrapper's arrays, each with numpy's dims block), each
    input's zeros array and SetTensor (for a string input, the wrapper's iterator and
    LiteRT's DynamicBuffer), then the details list freed but for the last input's, which the
    loop variable keeps. What is live at the end is the caller's (numpy's caches included)."""
    caches = _NumpyCaches()
    inputs = [
        tensor for tensor in (_tensor(prepared, index) for index in prepared.inputs) if tensor
    ]
    details = [_details(tensor, subgraph) for tensor in inputs]
    yield from _pybind_call(INDICES_HANDLES)
    indices = _WrapperArray(len(prepared.inputs))
    yield from _wrapper_array(caches, indices)
    for tensor, arrays in zip(inputs, details, strict=True):
        yield from _query_details(caches, tensor, arrays)
    yield from _wrapper_array(caches, indices, free=True)
    for tensor in inputs:
        yield from _set_input(caches, tensor)
    for tensor, arrays in list(zip(inputs, details, strict=True))[:-1]:
        yield from _name_object(tensor, free=True)
        for array in arrays:
            yield from _wrapper_array(caches, array, free=True)


def invoke_call(*, free: bool = False) -> Step:
    """The wrapper's Invoke call: pybind's blocks, held through the whole invoke."""
    usable = _pybind_bytes(INVOKE_HANDLES)
    return Step(-usable if free else usable, caller=True)


def _details(tensor: RuntimeTensor, subgraph: Subgraph | None) -> tuple[_WrapperArray, ...]:
    """_get_tensor_details' arrays: shape, shape signature, scales, zero points."""
    rank = len(tensor.shape or ())
    model = _model_tensor(subgraph, tensor.index)
    signature = len(model.shape_signature) if model is not None else rank
    quantization = model.quantization if model is not None else None
    channels = 0
    if quantization is not None and quantization.scale is not None:
        channels = max(quantization.channel_count, 1)
    return (_WrapperArray(rank), _WrapperArray(signature), _WrapperArray(channels),
            _WrapperArray(channels))  # fmt: skip


def _query_details(
    caches: _NumpyCaches, tensor: RuntimeTensor, arrays: tuple[_WrapperArray, ...]
) -> Iterator[Step]:
    """One input's seven wrapper queries; TensorName's std::string is a heap block for a name
    over 15 characters, held while pybind makes the str (kept: `_name_object`)."""
    name = len(tensor.name.encode())
    for query in range(DETAIL_QUERIES):
        call = _pybind_bytes(TENSOR_QUERY_HANDLES)
        yield Step(call, caller=True)
        if query == 0 and name > STRING_INLINE_CHARACTERS:
            yield Step(glibc.usable(name + 1), caller=True)
            yield from _name_object(tensor)
            yield Step(-glibc.usable(name + 1), caller=True)
        yield Step(-call, caller=True)
    for array in arrays:
        yield from _wrapper_array(caches, array)


def _name_object(tensor: RuntimeTensor, *, free: bool = False) -> Iterator[Step]:
    """The name's Python str, a malloc block when over pymalloc's 512 B."""
    text = tensor.name
    if text.isascii():
        nbytes = ASCII_STRING_HEADER_BYTES + len(text) + 1
    else:
        nbytes = UNICODE_STRING_HEADER_BYTES + 4 * (len(text) + 1)
    if nbytes > PYMALLOC_LARGEST_BYTES:
        yield Step(-glibc.usable(nbytes) if free else glibc.usable(nbytes), caller=True)


def _wrapper_array(
    caches: _NumpyCaches, array: _WrapperArray, *, free: bool = False
) -> Iterator[Step]:
    """A wrapper array's data (malloc'd, or numpy's 1 byte when empty) and its dims block."""
    if array.elements:
        usable = glibc.usable(array.element_bytes * array.elements)
        yield Step(-usable if free else usable, caller=True)
    else:
        yield from caches.data(0, free=free)
    yield from caches.dims(2, free=free)  # one dimension: its size and stride


def _set_input(caches: _NumpyCaches, tensor: RuntimeTensor) -> Iterator[Step]:
    """np.zeros(shape, dtype): the shape converted (a dims block of rank npy_intp, freed at
    once), the array's dims and strides and its zeroed data; SetTensor copies it; then the
    array is freed."""
    rank = len(tensor.shape or ())
    nbytes = _array_bytes(tensor)
    if rank:
        yield from caches.dims(rank)
        yield from caches.dims(2 * rank)
    if nbytes < NUMPY_DATA_BUCKETS:
        yield from caches.data(nbytes)
    else:
        yield Step(glibc.usable(nbytes), caller=True)  # calloc, not cached
    if rank:
        yield from caches.dims(rank, free=True)
    call = _pybind_bytes(SET_TENSOR_HANDLES)
    yield Step(call, caller=True)
    if tensor.dtype == "STRING":
        yield from _set_string(tensor)
    yield Step(-call, caller=True)
    if nbytes < NUMPY_DATA_BUCKETS:
        yield from caches.data(nbytes, free=True)
    else:
        yield Step(-glibc.usable(nbytes), caller=True)
    if rank:
        yield from caches.dims(2 * rank, free=True)


def _pybind_call(handles: int) -> Iterator[Step]:
    yield Step(_pybind_bytes(handles), caller=True)
    yield Step(-_pybind_bytes(handles), caller=True)


def _pybind_bytes(handles: int) -> int:
    return glibc.usable(PYBIND_HANDLE_BYTES * handles) + glibc.usable(PYBIND_FLAGS_BYTES)


def written_strings(count: int) -> Iterator[Step]:
    """A kernel's DynamicBuffer writing `count` empty strings into its output: the offsets
    vector as it grows, then the tensor's buffer (kept), then the vector freed."""
    yield from _offsets(count)
    yield Step(glibc.usable(_string_buffer_bytes(count, 0)))
    yield Step(-glibc.usable(OFFSET_BYTES * _capacity(count)))


def input_arrays_bytes(model: Model) -> int:
    """The caller's input arrays, each a calloc of its bytes, all counted at once (a bound
    for XNNPACK's whole-model fixed transient)."""
    subgraph = model.subgraphs[0] if model.subgraphs else None
    if subgraph is None:
        return 0
    return sum(glibc.usable(subgraph.tensors[i].nbytes) for i in subgraph.inputs if i >= 0)


def _set_string(tensor: RuntimeTensor) -> Iterator[Step]:
    """SetTensor's string path over the zeros array ('S1' items): the wrapper's iterator and
    LiteRT's DynamicBuffer, its buffer written into the tensor."""
    count = _elements(tensor)
    if not tensor.shape:
        # A rank-0 array: AddString(data, 1), one character in data_ (a vector<char>).
        yield from _offsets(count)  # count is 1: the shape is ()
        yield Step(glibc.usable(1))
        yield Step(glibc.usable(_string_buffer_bytes(1, 1)))
        yield Step(-glibc.usable(1))
    else:
        yield Step(NUMPY_ITERATOR_BYTES, caller=True)
        yield from _offsets(count)
        yield Step(-NUMPY_ITERATOR_BYTES, caller=True)
        yield Step(glibc.usable(_string_buffer_bytes(count, 0)))
    yield Step(-glibc.usable(OFFSET_BYTES * _capacity(count)))


def _offsets(count: int) -> Iterator[Step]:
    """The offsets vector: {0}, then one push_back per string (capacity doubling; the new
    block is allocated before the old is freed)."""
    yield Step(glibc.usable(OFFSET_BYTES))
    capacity = 1
    while capacity < _capacity(count):
        yield Step(glibc.usable(OFFSET_BYTES * 2 * capacity))
        yield Step(-glibc.usable(OFFSET_BYTES * capacity))
        capacity *= 2


def _capacity(count: int) -> int:
    """The offsets vector's capacity once it holds count + 1 offsets (doubling from 1)."""
    capacity = 1
    while capacity < count + 1:
        capacity *= 2
    return capacity


def _string_buffer_bytes(count: int, characters: int) -> int:
    """SimpleDynamicBuffer::WriteToBuffer: the count, count + 1 offsets and the characters."""
    return 4 * (count + STRING_HEADER_ITEMS) + characters


def _array_bytes(tensor: RuntimeTensor) -> int:
    """The bytes of the caller's numpy array for an input (a string input: 'S1' items)."""
    return _elements(tensor) if tensor.dtype == "STRING" else tensor.nbytes


def _elements(tensor: RuntimeTensor) -> int:
    count = 1
    for dimension in tensor.shape or ():
        count *= max(dimension, 0)
    return count


def _tensor(prepared: PreparedSubgraph, index: int) -> RuntimeTensor | None:
    if 0 <= index < len(prepared.tensors):
        return prepared.tensors[index]
    return None


def _model_tensor(subgraph: Subgraph | None, index: int) -> Tensor | None:
    if subgraph is not None and 0 <= index < len(subgraph.tensors):
        return subgraph.tensors[index]
    return None
