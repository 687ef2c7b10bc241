"""Flow campaigns: random paths through the CLI (models × input shapes × builds × optimize flags ×
check / report / export / diagnose, then the steps they suggest), every claim judged by the real
runtime: the x86-64 `tflite_micro` wheel for the host build, real TFLM for Cortex-M under QEMU for
a sample of device builds.

`models` (the models flows start from), `flow` (one random path from (seed, n)), `oracle` (the
real runtimes), `claims` (what is judged, and the outcomes), `walk` (running one flow and judging
it), `campaign` (many flows, counted). `python -m flows` runs a campaign; `tests/test_flows.py`
runs a seeded sample in CI; `benchmarks/results/flows.json` holds the 2,000-flow run.
"""
