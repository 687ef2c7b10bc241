"""Arm's Vela compiler for Ethos-U NPUs: running it (`compiler.py`, the `npu` extra) and reading
what it wrote into a compiled model (`compiled.py`: the NPU it targets, its scratch tensors)."""
