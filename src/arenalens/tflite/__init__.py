"""The only package that knows FlatBuffers: read .tflite files, build and rewrite them."""

from arenalens.tflite.reader import load_model, parse_model

__all__ = ["load_model", "parse_model"]
