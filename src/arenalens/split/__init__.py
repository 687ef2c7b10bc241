"""Operator splitting: compute a large activation in parts with stock TFLM kernels.

`operators.py` says which operators may run on a part and how (rows an output band needs, the
padding a band must make explicit); `regions.py` finds runs of such operators with one input and
one output; `bands.py` and `channels.py` turn a region into the operators of its parts;
`schedule.py` lays the parts into the whole subgraph and sizes its live bytes; `lowering.py`
writes the split model; `search.py` chooses what to split by the kTensorArenaSize a build
declares for the result.
"""
