"""Robustness testing: hostile-input generators and a bounded harness that runs them through every
stage of arenalens. The only acceptable ends for an input are a result or `arenalens.ModelError`.

`mutate` (structure-aware, byte-level and splicing mutators), `hostile` (hand-crafted hostile
models), `seeds` (the valid corpus), `stages` (what each input runs through) and `harness` (one
input in-process, or a campaign across worker processes under time and memory limits). Used by
`fuzz/__main__.py` and the tests; needs nothing beyond the core dependencies.
"""
