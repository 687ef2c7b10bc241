"""Child-process probe: a .tflite path → JSON of every tensor's real address after LiteRT's
`allocate_tensors()` (optimized builtin kernels, no default delegates).

Run as `python -m arenalens.runtimes.litert.probe MODEL.tflite`; it prints one JSON object on
stdout. It runs in a child process because a bad model (or a `tensor()` call on a typeless
kernel tensor) can crash the interpreter (docs/runtime-rules.md §L10). Pitfalls handled:
typeless and unsized kernel tensors are never passed to `tensor()`; 0-d tensors come back as
copies without an address; null data raises and is reported as such.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def probe(path: str) -> dict[str, Any]:
    """Model path → {"subgraphs": [{"tensors": [...]}, ...]} with addresses and byte counts."""
    import numpy as np  # noqa: PLC0415 - the child imports heavy modules lazily
    from ai_edge_litert import interpreter as litert  # noqa: PLC0415

    interpreter = litert.Interpreter(
        model_path=path,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interpreter.allocate_tensors()
    wrapper = interpreter._interpreter  # private: the only route to other subgraphs
    subgraphs = []
    for subgraph in range(wrapper.NumSubgraphs()):
        tensors = []
        for index in range(wrapper.NumTensors(subgraph)):
            record: dict[str, Any] = {"index": index}
            try:
                dtype = wrapper.TensorType(index, subgraph)
            except ValueError as error:
                record["status"] = "typeless"
                record["error"] = str(error)
                tensors.append(record)
                continue
            record["dtype"] = np.dtype(dtype).name if dtype is not None else None
            try:
                record["shape"] = [int(d) for d in wrapper.TensorSize(index, subgraph)]
            except ValueError as error:
                # Typed but never resized (a Dynamic temporary sized at Eval): no dims yet.
                record["status"] = "unsized"
                record["error"] = str(error)
                tensors.append(record)
                continue
            if record["dtype"] == "object" and not record["shape"]:
                # A 0-d resource / variant / string tensor: tensor() crashes the interpreter.
                record["status"] = "scalar"
                tensors.append(record)
                continue
            try:
                array = wrapper.tensor(wrapper, index, subgraph)
            except ValueError as error:
                record["status"] = "null"
                record["error"] = str(error)
                tensors.append(record)
                continue
            if not isinstance(array, np.ndarray) or array.ndim == 0:
                record["status"] = "scalar"  # a copy: no address
                record["nbytes"] = int(np.asarray(array).nbytes)
            else:
                record["status"] = "ok"
                record["address"] = int(array.ctypes.data)
                if array.dtype != np.dtype(object):
                    # Resource / variant / string tensors come back as object arrays whose
                    # nbytes counts Python pointers, not the tensor's bytes: leave it unknown.
                    record["nbytes"] = int(array.nbytes)
            del array
            tensors.append(record)
        subgraphs.append({"index": subgraph, "tensors": tensors})
    return {"subgraphs": subgraphs}


def main(argv: list[str]) -> int:
    """CLI entry for the child process: prints the probe's JSON, or an error object."""
    if len(argv) != 2:
        sys.stdout.write(json.dumps({"error": "usage: litert_probe MODEL.tflite"}))
        return 2
    try:
        result = probe(argv[1])
    except ImportError as error:
        sys.stdout.write(json.dumps({"error": f"unavailable: {error}"}))
        return 3
    except (RuntimeError, ValueError) as error:
        sys.stdout.write(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
