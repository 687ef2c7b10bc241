"""Setting the inputs before the first `invoke()`: what the Python caller and wrapper allocate
(not the interpreter's: allowances, labelled so), and what LiteRT itself allocates for string
tensors, which it writes through its `DynamicBuffer` (*tflite/string_util.cc*,
*tflite/converter/utils/string_utils.cc*) whether the application is C++ or Python.

`measure.py` sets every input from numpy zeros of its shape and dtype; a string input's zeros
are empty strings (numpy 'S1' items), so the figures count string tensors holding empty
strings: the characters an application writes come on top, and the label says so.

* **numeric inputs** (*interpreter_wrapper.cc* SetTensor): the zeros array is a calloc of the
  tensor's bytes, copied into the arena and freed; numpy keeps a freed block under 1 KiB in its
  data cache (one per size), so those stay (`kept_bytes`).
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

from collections.abc import Iterator
from dataclasses import dataclass

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeTensor

# The caller's Python blocks (kept_bytes): numpy's data cache takes blocks under 1 KiB
# (NBUCKETS); the inputs' details (shape, signature, scales and zero points arrays, whose
# small data blocks numpy's cache also keeps) and numpy's dimension cache measured 176-352 B
# with one input and up to about 1 KiB with two.
NUMPY_CACHED_BELOW_BYTES = 1024
CALLER_BASE_BYTES = 400
CALLER_PER_EXTRA_INPUT_BYTES = 768
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


def set_inputs(prepared: PreparedSubgraph) -> Iterator[Step]:
    """measure.py's set_tensor of each input, in order: its zeros array, and for a string
    input the wrapper's iterator and LiteRT's DynamicBuffer."""
    for index in prepared.inputs:
        tensor = _tensor(prepared, index)
        if tensor is None:
            continue
        if tensor.dtype == "STRING":
            yield from _set_string(tensor)
        elif tensor.nbytes:
            yield Step(glibc.usable(tensor.nbytes), caller=True)
            yield Step(-glibc.usable(tensor.nbytes), caller=True)


def written_strings(count: int) -> Iterator[Step]:
    """A kernel's DynamicBuffer writing `count` empty strings into its output: the offsets
    vector as it grows, then the tensor's buffer (kept), then the vector freed."""
    yield from _offsets(count)
    yield Step(glibc.usable(_string_buffer_bytes(count, 0)))
    yield Step(-glibc.usable(OFFSET_BYTES * _capacity(count)))


def kept_bytes(prepared: PreparedSubgraph) -> int:
    """What the caller's own Python keeps across the first invoke: numpy caches a freed data
    block under 1 KiB for reuse (one per size), and the last input's details (shape,
    signature, quantization arrays) stay referenced. Not the interpreter's: an allowance
    that errs high."""
    sizes = set()
    for index in prepared.inputs:
        tensor = _tensor(prepared, index)
        nbytes = _array_bytes(tensor) if tensor is not None else 0
        if 0 < nbytes < NUMPY_CACHED_BELOW_BYTES:
            sizes.add(nbytes)
    inputs = sum(1 for index in prepared.inputs if index >= 0)
    return (
        sum(glibc.usable(size) for size in sizes)
        + CALLER_BASE_BYTES
        + CALLER_PER_EXTRA_INPUT_BYTES * max(inputs - 1, 0)
    )


def input_arrays_bytes(model: Model) -> int:
    """The caller's input arrays, each a calloc of its bytes, all counted at once (a bound
    for XNNPACK's whole-model fixed transient)."""
    subgraph = model.subgraphs[0] if model.subgraphs else None
    if subgraph is None:
        return 0
    return sum(glibc.usable(subgraph.tensors[i].nbytes) for i in subgraph.inputs if i >= 0)


def _set_string(tensor: RuntimeTensor) -> Iterator[Step]:
    count = _elements(tensor)
    array = glibc.usable(count)  # np.zeros(shape, np.bytes_): one byte ('S1') per item
    yield Step(array, caller=True)
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
    yield Step(-array, caller=True)


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
