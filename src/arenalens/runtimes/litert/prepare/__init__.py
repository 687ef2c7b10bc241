"""LiteRT's graph after Prepare: flatbuffer model → tensors (bytes, type, allocation type) and
node temporaries, as the optimized builtin kernels leave them (no delegate, `num_threads` = 1).

What is modelled (docs/runtime-rules.md §L1, §L2, §L8, §L9):

* **Build time** (*Subgraph::SetTensorParametersReadOnly / ReadWrite*): buffer data → MmapRo;
  string / resource / variant → Dynamic; `is_variable` → ArenaRwPersistent; else ArenaRw, with
  `bytes = product(shape) × element size` (sub-byte types packed).
* **Init-time tensors**: kernels that call `AddTensors` in Init (SVDF, LSTMs, RNNs, ADD_N, ...)
  reserve tensor indices right after the model's tensors, in operator order, before any Prepare.
* **Prepare**, in execution-plan order, through `KERNEL_RULES` — one row per builtin naming its
  kernel source file: temporaries added (indices in creation order) with their type, shape and
  allocation type; outputs made Dynamic when a shape-defining input is not constant; outputs made
  PersistentRo by constant folding; DEQUANTIZE of constants, DENSIFY and NumericVerify outputs
  and VAR_HANDLE ids (4 B each) made ArenaRwPersistent; outputs resized where Prepare does.
* **Chunks** (*Subgraph::PrepareOpsStartingAt*): Prepare stops after the first node with a
  Dynamic output (or an unknown RESHAPE shape); the planner's lifetimes (`planning_state`) see
  the tensors as they are at that moment; later chunks are planned at Invoke.
* **Control flow** (*if.cc, while.cc*): IF / STABLEHLO_COMPOSITE / STABLEHLO_CASE branches and
  the WHILE cond drop unused inputs; branch and body inputs become Custom; a WHILE pass-through
  nobody reads leaves the node; children are allocated inside the parent's Prepare; an IF or
  WHILE whose children are dynamic (a dynamic tensor, a reshaped loop value, branches of
  different output dims) sets its outputs dynamic (`RuntimeNode.eval_dynamic` says why).

Known limits (each reported in `PreparedSubgraph.notes` when a model hits it, where detectable):

* Output shapes are the flatbuffer `shape`, except where a modelled Prepare resizes them from
  constants (TRANSPOSE_CONV, CONV_3D_TRANSPOSE, DILATE, RFFT2D, BROADCAST_ARGS, the RNNs and
  LSTMs, TFLite_Detection_PostProcess, STABLEHLO_REDUCE_WINDOW, NumericVerify); shapes are not
  propagated to later operators, which only matters for inconsistent files (`verify` then
  reports a "bytes" row). Shapes after a dynamic tensor are data-dependent at Invoke; later
  chunks are predicted from the flatbuffer shapes.
* Not modelled, and noted: the ledgers of sparse hybrid FULLY_CONNECTED and LSTM weights
  (persistent tensors sized from the sparsity metadata). Integer tensors folded in Prepare
  (PersistentRo) carry their values where `prepare.folding` evaluates the folding kernel
  (SHAPE, RANK, RESHAPE, CONCATENATION, GATHER, STRIDED_SLICE, MUL, RANGE, TILE,
  BROADCAST_ARGS, REDUCE_PROD on 1-D integers), so RFFT2D, TRANSPOSE_CONV and DILATE read them;
  other folded values stay unknown and noted. Custom ops other than
  TFLite_Detection_PostProcess and NumericVerify are assumed to add nothing (the wheel
  registers only those, Mfcc, AudioSpectrogram and aeq.hadamard_rotation, which add none).
* CALL_ONCE (allocated at Eval, then released) is not modelled here.
* Kernel variants: optimized builtin kernels only (no reference kernels, no XNNPACK or other
  delegate, `num_threads` = 1, Linux x86-64: the optimized 4-bit FULLY_CONNECTED packs input
  rows for the wheel's SSE variant).
"""
