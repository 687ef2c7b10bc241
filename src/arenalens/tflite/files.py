"""Opening a model file: memory-mapped, never copied, and the one-line errors for what is not
a .tflite (a missing path, a folder, a SavedModel, another framework's model)."""

from __future__ import annotations

import mmap
import os
from typing import Any

from arenalens.errors import ModelError


def map_file(path: str | os.PathLike[str], label: str) -> Any:
    """A .tflite path → its bytes, memory-mapped read-only; ModelError naming what it is
    instead (missing, a folder, a SavedModel, empty, unreadable)."""
    # os.path, not pathlib: a check imports nothing else that needs pathlib (with urllib.parse
    # and ipaddress, ~16 M instructions of its start-up). '' is the current folder, as for Path.
    path = os.fspath(path) or os.curdir
    if not os.path.exists(path):
        raise ModelError(label, "no such file")
    if os.path.isdir(path):
        saved_model = (os.path.join(path, name) for name in ("saved_model.pb", "saved_model.pbtxt"))
        if any(os.path.exists(file) for file in saved_model):
            raise ModelError(
                label,
                "a TensorFlow SavedModel folder, not a TFLite model: convert it with "
                "tf.lite.TFLiteConverter.from_saved_model(folder) and pass the .tflite file",
            )
        raise ModelError(label, "is a directory, not a .tflite file")
    try:
        size = os.stat(path).st_size
        if size == 0:
            raise ModelError(label, "empty file (0 bytes), not a .tflite model")
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except PermissionError as error:
        raise ModelError(label, "permission denied") from error
    except OSError as error:
        raise ModelError(label, f"cannot read file ({error.strerror or error})") from error


_CONVERT_KERAS = (
    "convert it with tf.lite.TFLiteConverter.from_keras_model(tf.keras.models.load_model(...)) "
    "and pass the .tflite file"
)


def other_format(head: bytes, label: str) -> str:
    """A model file of another framework (by its magic bytes or name) → how to convert it."""
    name = label.lower()
    if head.startswith(b"\x89HDF\r\n\x1a\n") or name.endswith((".h5", ".hdf5")):
        return f"a Keras HDF5 model, not a TFLite model: {_CONVERT_KERAS}"
    if head.startswith(b"PK\x03\x04") or name.endswith((".zip", ".keras")):
        return (
            "a zip archive (a .keras model, or a zipped SavedModel / .tflite), not a TFLite "
            f"model: unzip it and pass the .tflite file inside, or {_CONVERT_KERAS}"
        )
    if name.endswith(".onnx"):
        return (
            "an ONNX model, not a TFLite model: convert it to TFLite first (e.g. onnx2tf, or "
            "ai-edge-torch from the PyTorch source) and pass the .tflite file"
        )
    if name.endswith(".pb"):
        return (
            "a TensorFlow graph (SavedModel .pb), not a TFLite model: convert its folder with "
            "tf.lite.TFLiteConverter.from_saved_model(folder) and pass the .tflite file"
        )
    if name.endswith((".pt", ".pth")):
        return (
            "a PyTorch checkpoint, not a TFLite model: export it with ai-edge-torch and pass the "
            ".tflite file"
        )
    return ""
