"""The heap a real LiteRT interpreter holds, measured with ../shared/tools/litert-heap (its
heap_tracer.so as LD_PRELOAD around its measure.py) and cached one CPU per file, each file's
`command` remaking it on that CPU: tests/data/litert_heap.json (an AVX-512 + AMX machine, the
HOST profile) and tests/data/litert_heap_avx2.json (an AMD EPYC 7001: AVX2 and FMA, no AVX-512,
the x86-64-v3-zen profile). tests/litert_heap_cache.py reads an entry by name from either.

    python -m tests.litert_heap_measure            # every shared model and every held-out one
                                                   # not another CPU's file's alone (`remade`)
    python -m tests.litert_heap_measure --only vww # models whose name contains 'vww'
    python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only var12_

Per model and delegate (builtin = BUILTIN_WITHOUT_DEFAULT_DELEGATES, xnnpack = AUTO, LiteRT's
default): live heap bytes after creating the interpreter, after allocate_tensors(), after one
invoke() on zeros, and the peak, each above the baseline measure.py takes once the libraries
are loaded. Counts are glibc's malloc_usable_size. The file records where the figures hold:
the wheel's version, the CPU's ISA flags, glibc and Python.

The held-out models are generated here from seeds (tests/litert_random_graphs.py and the flow
campaign's model families); no rule is fitted to them. tests/runtimes/litert/test_litert_heap.py
compares arenalens' predictions with this file, and re-measures a sample when the wheel is
installed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_fp16_18_cases import NAMES as FP16X_NAMES
from tests.litert_fp16_18_cases import fp16x_case
from tests.litert_held15_cases import HYBRID_LSTM_NAMES, held15_case
from tests.litert_held15_cases import NAMES as HELD15_NAMES
from tests.litert_held17_after import (
    INTEGER_INT4_NAMES,
    LATE_NAMES,
    SIXTEEN_NAMES,
    integer_int4_case,
    late_case,
    sixteen_case,
)
from tests.litert_held17_cases import NAMES as HELD17_NAMES
from tests.litert_held17_cases import held17_case
from tests.litert_held18_after import NAMES as HELD18B_NAMES
from tests.litert_held18_after import held18b_case
from tests.litert_held18_cases import NAMES as HELD18_NAMES
from tests.litert_held18_cases import held18_case
from tests.litert_int4_18_cases import BWQ18_RUNS, RUY18_NAMES, bwq18_case, ruy18_case
from tests.litert_int4_cases import NAMES as INT4_NAMES
from tests.litert_int4_cases import ZERO_NAMES as INT4_ZERO_NAMES
from tests.litert_int4_cases import ZERO_POINT_NAMES as INT4_ZERO_POINT_NAMES
from tests.litert_int4_cases import int4_case, int4_zero_case, int4_zero_point_case
from tests.litert_qs8qc4w17_cases import NAMES as QS8QC4W17_NAMES
from tests.litert_qs8qc4w17_cases import qs8qc4w17_case
from tests.litert_tconvu8_cases import TCONVU8_NAMES, tconvu8_case

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOL = Path(os.environ.get("ARENALENS_SHARED", REPO_ROOT.parent / "shared")) / "tools/litert-heap"
DATA = REPO_ROOT / "tests/data/litert_heap.json"
MODES = ("builtin", "xnnpack")
# The EPYC's caches, each remade by its own command's --only (held18: its campaign's own file).
EPYC_FILES = ("litert_heap_avx2.json", "litert_heap_held18.json")
TIMEOUT_SECONDS = 300
# Held-out generated models: (name, family, seed). Families of flows/models.py and the random
# LiteRT graphs of tests/litert_random_graphs.py.
HELD_OUT = (
    *((f"heldout_graph_{seed}", "graph", seed) for seed in (3, 11, 25, 50, 59, 121, 187, 240)),
    *((f"heldout_cnn_{seed}", "cnn", seed) for seed in (1, 2, 3, 4)),
    *((f"heldout_float_cnn_{seed}", "float_cnn", seed) for seed in (1, 2, 3, 4)),
    *((f"heldout_dag_{seed}", "dag", seed) for seed in (1, 2)),
    *((f"heldout_audio_{seed}", "audio", seed) for seed in (1, 2)),
)
# Held-out kernel cases (tests/litert_cases.py): one kernel rule each, the recurrent and hybrid
# kernels and dynamic temporaries among them, measured for the first invoke's replay.
KERNEL_CASES = (
    "conv_float_im2col", "conv_dilated", "conv_1x1_chain", "conv_hybrid_per_tensor",
    "conv_hybrid_per_channel", "depthwise_hybrid", "fully_connected_hybrid", "reductions",
    "mean_dynamic_axis", "batch_matmul_float", "batch_matmul_hybrid", "add_n",
    "transpose_conv_float", "transpose_conv_int8", "svdf_float", "svdf_hybrid",
    "svdf_integer_stack",
    "sequence_lstm_float", "sequence_lstm_float_cifg", "sequence_lstm_integer",
    "sequence_lstm_integer_cifg", "sequence_lstm_integer_projection",
)  # fmt: skip
HELD_OUT = (*HELD_OUT, *((f"heldout_case_{name}", "case", 0) for name in KERNEL_CASES))
# Held out for the peak (session 5): drawn after heap_build.py (XNNPACK's build moment) and
# eigen_blocking.py (Eigen's float blocks) were written; float convolution chains with Eigen-
# sized GEMMs (tests/litert_peak_cases.py) and new seeds of the families above.
HELD_OUT = (
    *HELD_OUT,
    *((f"peak5_float_conv_{seed}", "float_conv", seed) for seed in range(1, 13)),
    *((f"peak5_cnn_{seed}", "cnn", seed) for seed in (31, 32, 33)),
    *((f"peak5_float_cnn_{seed}", "float_cnn", seed) for seed in (31, 32, 33)),
    *((f"peak5_dag_{seed}", "dag", seed) for seed in (31, 32)),
    *((f"peak5_audio_{seed}", "audio", seed) for seed in (31, 32)),
    *((f"peak5_graph_{seed}", "graph", seed) for seed in (601, 602, 603)),
)
# Held out for other ISAs (session 6): new seeds, generated after isa.py's assumptions were
# written, measured on the host and under qemu-user (tests/litert_heap_isa.py).
HELD_OUT = (
    *HELD_OUT,
    *((f"isa6_cnn_{seed}", "cnn", seed) for seed in (41, 42)),
    *((f"isa6_float_cnn_{seed}", "float_cnn", seed) for seed in (41,)),
    *((f"isa6_dag_{seed}", "dag", seed) for seed in (41,)),
    *((f"isa6_audio_{seed}", "audio", seed) for seed in (41,)),
    *((f"isa6_graph_{seed}", "graph", seed) for seed in (701,)),
    # STABLEHLO_COMPOSITE (tests/litert_composite_cases.py): a labelled bound, never under.
    *((f"composite6_{seed}", "composite", seed) for seed in (1, 2, 3)),
    # Hybrid CONV_2D filters of every kind (tests/litert_composite_cases.hybrid_conv).
    *((f"hybrid6_conv_{seed}", "hybrid_conv", seed) for seed in range(1, 11)),
    # A second draw, after the grouped 1×1 IGEMM rule and the grouped hybrid refusal (read
    # off hybrid6_conv_10 and _8) were committed.
    *((f"hybrid6b_conv_{seed}", "hybrid_conv", seed) for seed in range(11, 23)),
    # A third draw, of grouped ones only, after every grouped hybrid filter took the
    # per-channel temporaries (prepare/conv.py, read off hybrid6b_conv_12 and _13).
    *((f"hybrid6c_conv_{seed}", "grouped_hybrid_conv", seed) for seed in range(1, 13)),
)
# Held out for the build moment's fingerprints and dead nodes (session 6): drawn after
# heap_build.py counted packing only for created operators and a convolution kind's dummy
# from convolution-nhwc.c (tests/litert_peak_cases.fingerprint_case: small float and int8
# weighted operators whose fingerprints make the peak, some outputs unread) and new seeds of
# the random graphs and CNNs.
HELD_OUT = (
    *HELD_OUT,
    *((f"xnn6_fingerprint_{seed}", "fingerprint", seed) for seed in range(1, 17)),
    *((f"xnn6_graph_{seed}", "graph", seed) for seed in (701, 702, 703, 704)),
    *((f"xnn6_cnn_{seed}", "cnn", seed) for seed in (41, 42)),
    *((f"xnn6_dag_{seed}", "dag", seed) for seed in (41, 42)),
    # The delegate's custom operators (tests/litert_custom_cases.py), drawn after
    # runtimes/litert/xnnpack_custom.py was written: the builtin kernels cannot run them.
    *((f"xnn6_custom_{seed}", "custom", seed) for seed in range(21, 37)),
    # A second draw, after the rules read off the two first-draw models that were under (a
    # float 1×1 depthwise convolution runs as depthwise; an 8-bit one-scale 1×1 convolution
    # is fingerprinted as qs8) were committed.
    *((f"xnn6b_fingerprint_{seed}", "fingerprint", seed) for seed in range(41, 65)),
    *((f"xnn6b_graph_{seed}", "graph", seed) for seed in (705, 706, 707, 708)),
    *((f"xnn6b_cnn_{seed}", "cnn", seed) for seed in (43, 44)),
    *((f"xnn6b_float_cnn_{seed}", "float_cnn", seed) for seed in (43, 44)),
    # Session 7: custom transposed convolutions (tests/litert_custom_cases.deconvolution_case),
    # drawn after heap.py replayed a taken one as the TRANSPOSE_CONV XNNPACK defines and
    # xnnpack_custom.takes checked its paddings.
    *((f"xnn7_deconvolution_{seed}", "deconvolution", seed) for seed in range(1, 25)),
    # A second draw, after a transposed convolution's fingerprint was replayed at its
    # operator's creation (heap_build.build_moment, read off xnn7_deconvolution_23).
    *((f"xnn7b_deconvolution_{seed}", "deconvolution", seed) for seed in range(25, 49)),
    # STABLEHLO_COMPOSITE (tests/litert_composite_cases.composite7), drawn after the builtin
    # kernel's blocks and its first Eval were replayed (heap_invoke._composite).
    *((f"composite7_{seed}", "composite7", seed) for seed in range(1, 21)),
    # A second draw, after the partition left composites not named
    # odml.scaled_dot_product_attention to the builtin kernel.
    *((f"composite7b_{seed}", "composite7", seed) for seed in range(21, 33)),
    # MediaPipe poolings (tests/litert_custom_cases.pooling_case), drawn after their XNNPACK
    # operators and indirection buffers were replayed (xnnpack_objects).
    *((f"xnn7_pooling_{seed}", "pooling", seed) for seed in range(1, 25)),
)


# Held out for resource variables (session 7): drawn after runtimes/litert/heap_resources.py
# and the variables' XNNPACK partition were committed (tests/litert_variable_cases.py).
HELD_OUT = (*HELD_OUT, *((f"var7_{seed}", "variables", seed) for seed in range(1, 25)))
# Held out for XNNPACK's LUT and copy fusions (session 7): drawn after
# xnnpack_workspace.fuse_unary_chains was committed (tests/litert_fusion_cases.py).
HELD_OUT = (*HELD_OUT, *((f"lut7_{seed}", "unary_chain", seed) for seed in range(1, 21)))
# Held out for the odml attention under XNNPACK (session 8): drawn after
# runtimes/litert/xnnpack_attention.py was committed (tests/litert_custom_cases.attention_case).
HELD_OUT = (*HELD_OUT, *((f"sdpa8_{seed}", "attention", seed) for seed in range(1, 25)))
# Held out for composites under XNNPACK (session 8): drawn after
# runtimes/litert/xnnpack_subgraphs.py was committed (tests/litert_composite_cases.composite8).
HELD_OUT = (*HELD_OUT, *((f"composite8_{seed}", "composite8", seed) for seed in range(1, 25)))
# The attention as a composite (tests/litert_custom_cases.attention_composite_case), drawn
# after xnnpack_attention.composite_taken was committed.
HELD_OUT = (*HELD_OUT, *((f"sdpa8c_{seed}", "attention_composite", seed) for seed in range(1, 21)))
# Grouped attention heads (tests/litert_custom_cases.grouped_attention_case), drawn after
# xnnpack_attention replayed them.
HELD_OUT = (*HELD_OUT, *((f"sdpa8g_{seed}", "grouped_attention", seed) for seed in range(1, 17)))
# Session 8 (litert-outliers8): kernels first counted with the unknown-kernel bounds
# (tests/litert_kernel_facts_cases.py): the facts were traced on seeds 3, 7, 9, 14, 22-24;
# these seeds were drawn after, never traced.
HELD_OUT = (*HELD_OUT, *((f"facts8_{seed}", "kernel_facts", seed) for seed in range(25, 49)))
# Session 9 (litert-first9): string inputs and GATHERs writing strings
# (tests/litert_string_cases.py), drawn after runtimes/litert/heap_caller.py was written.
HELD_OUT = (*HELD_OUT, *((f"strings9_{seed}", "strings", seed) for seed in range(1, 17)))
# TOPK_V2 with k read at Eval (tests/litert_topk_cases.py), drawn after heap_invoke counted k
# at its bound; tests/litert_topk_measure.py measures them at the bound too.
HELD_OUT = (*HELD_OUT, *((f"topk9_{seed}", "topk", seed) for seed in range(1, 13)))
# Rank-0 READ_VARIABLEs (tests/litert_variable_cases.py): the first twelve seeds from 101 with
# one, drawn after heap_resources counted the read's Eval and bounded the re-plan.
VARIABLE_SEEDS9 = (105, 108, 111, 115, 118, 122, 124, 128, 135, 148, 150, 156)
HELD_OUT = (*HELD_OUT, *((f"var9_{seed}", "variables", seed) for seed in VARIABLE_SEEDS9))
# Session 10 (litert-rest10): rank-0 READ_VARIABLEs drawn after heap_resources replayed a read
# that ends the plan exactly (no node after it: no re-plan): the first eight seeds from 300 whose
# last node is such a read, and four whose read has nodes after it (the re-plan, still bounded).
RANK0_LAST_SEEDS10 = (316, 320, 321, 326, 329, 335, 336, 341)
RANK0_INNER_SEEDS10 = (306, 309, 319, 325)
HELD_OUT = (
    *HELD_OUT,
    *((f"var10_{seed}", "variables", seed) for seed in RANK0_LAST_SEEDS10 + RANK0_INNER_SEEDS10),
)
# Session 11 (litert-rest11): streaming chains with rank-0 reads the rest of the graph follows
# (tests/litert_variable_cases.replan_model), every one with a later chunk: seeds 1101-1116
# drawn after heap_replan replayed the first invoke's re-plan where the later nodes add no
# tensors (10 of them have a FULLY_CONNECTED there, left as the bound then), 1117-1128 after
# it replayed those too (the tensors' vector and ArenaPlanner's vectors growing).
REPLAN_SEEDS11 = tuple(range(1101, 1129))
HELD_OUT = (*HELD_OUT, *((f"var11_{seed}", "replan", seed) for seed in REPLAN_SEEDS11))
# Session 9 (litert-xnn9): reductions of a square (tests/litert_rewrite_cases.py), drawn after
# xnnpack_workspace._sum_squares (XNNPACK's reduce_sum_to_square rewrite) was committed.
HELD_OUT = (*HELD_OUT, *((f"xnn9_square_{seed}", "square_reduce", seed) for seed in range(1, 25)))
# Int4 blockwise FULLY_CONNECTEDs (tests/litert_rewrite_cases.py), drawn after
# runtimes/litert/xnnpack_blockwise.py was committed.
HELD_OUT = (
    *HELD_OUT,
    *((f"xnn9_blockwise_{seed}", "blockwise_fc", seed) for seed in range(101, 125)),
    # Signatures' own subgraphs (tests/litert_rewrite_cases.signature_case), drawn after
    # xnnpack_subgraphs took them.
    *((f"xnn9_signatures_{seed}", "signatures", seed) for seed in range(1, 17)),
    # Session 10 (litert-xnn10): signatures' subgraphs with convolutions with and without a
    # bias, drawn after the partition left those without one to the builtin kernel.
    *((f"xnn10_signatures_{seed}", "biased_signatures", seed) for seed in range(1, 21)),
    # Session 10 (litert-xnn10b): 8-bit unary chains (tests/litert_fusion_cases.py), new seeds
    # drawn after heap_build.lut_runtime_bytes counted the LUT runtime from subgraph.c and
    # each operator's table from init_op (xnnpack_objects.lookup_table).
    *((f"lut10_{seed}", "unary_chain", seed) for seed in range(101, 121)),
    # Int4 blockwise FULLY_CONNECTEDs (tests/litert_rewrite_cases.py), new seeds drawn after
    # the workspace packed their rows to the qb4w GEMM's tile (xnnpack_workspace).
    *((f"xnn10_blockwise_{seed}", "blockwise_fc", seed) for seed in range(201, 217)),
)
# Session 10 (litert-isa10): new seeds drawn after the x86-64-v3-zen profile (isa.py: float
# GEMMs 4x16s4 and 4x8, 8-bit 3x8c8; Eigen on the EPYC's caches) was written, measured on an
# AMD EPYC 7001 into tests/data/litert_heap_avx2.json (see main's --cache).
ZEN_HELD_OUT = (
    *((f"zen10_cnn_{seed}", "cnn", seed) for seed in (81, 82, 83)),
    *((f"zen10_float_cnn_{seed}", "float_cnn", seed) for seed in (81, 82, 83)),
    *((f"zen10_float_conv_{seed}", "float_conv", seed) for seed in (81, 82, 83)),
    *((f"zen10_dag_{seed}", "dag", seed) for seed in (81, 82)),
    *((f"zen10_audio_{seed}", "audio", seed) for seed in (81, 82)),
    *((f"zen10_graph_{seed}", "graph", seed) for seed in (881, 882, 883)),
    *((f"zen10_fingerprint_{seed}", "fingerprint", seed) for seed in range(81, 89)),
)
HELD_OUT = (*HELD_OUT, *ZEN_HELD_OUT)

# Session 10 (litert-first10): small models whose heap is mostly the caller's blocks
# (tests/litert_caller_cases.py), drawn after heap_caller.py replayed numpy's caches.
HELD_OUT = (*HELD_OUT, *((f"caller10_{seed}", "caller", seed) for seed in range(1, 25)))
# Reductions over an axis read at Eval (tests/litert_reduction_cases.py), drawn after
# heap_invoke counted their accumulator and normalized dims.
HELD_OUT = (*HELD_OUT, *((f"axis10_{seed}", "dynamic_axis", seed) for seed in range(1, 17)))
# Session 11 (litert-cf11): IF and WHILE models (tests/litert_control_flow_heap_cases.py: both
# branches, nested loops, convolution bodies, 1, 3 or 10 turns), drawn after
# runtimes/litert/heap_control_flow.py and the control-flow children's partition were written.
HELD_OUT = (*HELD_OUT, *((f"cf11_{seed}", "control_flow_heap", seed) for seed in range(1, 25)))
# Resource variables read and assigned in IF branches inside a WHILE body, an optional CALL_ONCE
# init (tests/litert_control_flow_cases.nested_model: session 8's held-out read-order models),
# measured for the heap after the children's replay ran on the interpreter's variables.
HELD_OUT = (
    *HELD_OUT,
    *((f"cfvar11_{seed}", "control_flow_variables", seed) for seed in range(1, 25)),
)
# Session 12 (litert-once12): CALL_ONCE inits computing a variable's value (first, after work,
# twice, two inits, inside a WHILE body), drawn after runtimes/litert/heap_call_once.py was
# written (tests/litert_call_once_cases.py).
HELD_OUT = (*HELD_OUT, *((f"callonce12_{seed}", "call_once", seed) for seed in range(1, 25)))
# Session 12 (litert-once12): new draws of the cfvar11 family (seeds 8101-8124), drawn after
# XNNPACK's variable maps over all subgraphs and the externals set's resources were written.
HELD_OUT = (
    *HELD_OUT,
    *((f"cfvar12_{seed}", "control_flow_variables12", seed) for seed in range(1, 25)),
)
# Session 12 (litert-xnn12): streaming chains with delegate kernels after rank-0 reads
# (tests/litert_replan_cases.py), drawn after heap_xnnpack_reshape replayed a kernel's Prepare
# at the first invoke's re-plan; measured on this machine's CPU into litert_heap_avx2.json.
REPLAN_SEEDS12 = tuple(range(1201, 1225))
HELD_OUT = (*HELD_OUT, *((f"var12_{seed}", "xnnpack_replan", seed) for seed in REPLAN_SEEDS12))

# Session 13 (litert-once12): WHILEs whose body may run zero times (a constant or input count,
# limits 0, 1, 3; nested loops, IFs), drawn after heap_control_flow._while_eval and
# prepare/first_check.py were written (tests/litert_control_flow_heap_cases.while_turns_case).
HELD_OUT = (*HELD_OUT, *((f"turns13_{seed}", "while_turns", seed) for seed in range(1, 25)))
# IFs whose branches leave the CPU back end differently, work after them (if_state_case).
HELD_OUT = (*HELD_OUT, *((f"ifstate13_{seed}", "if_state", seed) for seed in range(1, 13)))
# Session 14 (litert14b): new draws of the three control-flow families (seeds 1401-), drawn after
# heap_build replayed the build moment's partition (every subgraph's old dims, the subsets'
# vector, the plan-sized node arrays, the range-built inputs set); measured on the AMD EPYC.
HELD_OUT = (
    *HELD_OUT,
    *((f"cf14_{n}", "control_flow_heap", 1400 + n) for n in range(1, 17)),
    *((f"turns14_{n}", "while_turns", 1400 + n) for n in range(1, 9)),
    *((f"ifstate14_{n}", "if_state", 1400 + n) for n in range(1, 9)),
)
# Session 15 (litert-once15): CALL_ONCE inits of several variables after main's own work
# (tests/litert_call_once_cases.call_once_case15), drawn after the XNNPACK delegate's inits were
# replayed (heap_call_once, heap_xnnpack_reshape); measured on the AMD EPYC.
HELD_OUT = (*HELD_OUT, *((f"callonce15_{seed}", "call_once15", seed) for seed in range(1, 25)))
# Inits with poolings and a MEAN, one reading another's variable (call_once_case15b), drawn after
# the inits' reshape counted max poolings' indirection (heap_xnnpack_reshape._indirection_blocks).
HELD_OUT = (*HELD_OUT, *((f"callonce15b_{seed}", "call_once15b", seed) for seed in range(1, 17)))
# Session 15 (litert-held15): a campaign over the whole heap, families the caches held few of
# (tests/litert_held15_cases.py: transformer blocks, GRUs unrolled, fused LSTMs, depthwise-heavy
# CNNs at odd sizes, int16 activations, int4 and blockwise weights, dynamic-range weights,
# slices / gathers / concatenations, several signatures), measured on the AMD EPYC.
HELD_OUT = (*HELD_OUT, *((name, f"held15:{family}", n) for name, family, n in HELD15_NAMES))
# Hybrid sequence LSTMs drawn after their Prepare and Eval were replayed (held15b_*).
HELD_OUT = (*HELD_OUT, *((name, f"held15:{family}", n) for name, family, n in HYBRID_LSTM_NAMES))
# Session 16 (litert-int4-16): int4 per-channel FULLY_CONNECTEDs on float input
# (tests/litert_int4_cases.py), drawn after XNNPACK's qc4w path was replayed; the AMD EPYC.
HELD_OUT = (*HELD_OUT, *((name, "int4pc16", n) for n, name in enumerate(INT4_NAMES, 1)))
# Session 16 (litert-small16): 4-6 IFs and WHILEs in a row in main (many_decisions_case), drawn
# after heap_ways replayed the all-zero-inputs way past MOST_DECISIONS; measured on the AMD EPYC.
HELD_OUT = (*HELD_OUT, *((f"ways16_{n}", "many_decisions", 1600 + n) for n in range(1, 13)))

# Session 16 (litert-avx2-16): the delegate's build moment on the AMD EPYC, drawn after the
# build transient was replayed there (xnnpack_fingerprint: the qd8 dummies): hybrid weighted
# operators whose fingerprints make the peak (tests/litert_peak_cases.hybrid_fingerprint_case)
# and new seeds of the fingerprint, hybrid convolution, transposed convolution, LUT chain and
# random graph families.
HELD_OUT = (
    *HELD_OUT,
    *((f"avx16_hybrid_fp_{seed}", "hybrid_fingerprint", seed) for seed in range(1601, 1617)),
    *((f"avx16_fingerprint_{seed}", "fingerprint", seed) for seed in range(1601, 1613)),
    *((f"avx16_hybrid_conv_{seed}", "hybrid_conv", seed) for seed in range(1601, 1609)),
    *((f"avx16_deconvolution_{seed}", "deconvolution", seed) for seed in range(1601, 1607)),
    *((f"avx16_lut_{seed}", "unary_chain", seed) for seed in range(1601, 1607)),
    *((f"avx16_graph_{seed}", "graph", seed) for seed in range(1601, 1605)),
)

# Session 17 (litert-held17): a campaign over what users bring (tests/litert_held17_cases.py:
# CNNs at prime sizes and batches, dense autoencoders, unrolled LSTM cells, attention blocks,
# 16x8, dynamic-range, int4 on float and int8 input, residual graphs, IF/WHILE, variables with
# CALL_ONCE, models above 4 MB), drawn by a helper that wrote none of the rules; the AMD EPYC.
HELD_OUT = (*HELD_OUT, *((name, f"held17:{family}", n) for name, family, n in HELD17_NAMES))
# int4 filters under int8 / 16x8 activations, drawn after that unpacking was replayed (held17b_*).
HELD_OUT = (*HELD_OUT, *((name, family, n) for name, family, n in INTEGER_INT4_NAMES))
# 16x8 FULLY_CONNECTEDs, drawn after their ruy GEMM was replayed (held17c_*).
HELD_OUT = (*HELD_OUT, *((name, family, n) for name, family, n in SIXTEEN_NAMES))
# Depthwise convolutions and hybrid FULLY_CONNECTEDs drawn after their rules changed (held17d_*).
HELD_OUT = (*HELD_OUT, *((name, family, n) for name, family, n in LATE_NAMES))
# Session 17 (litert-int4-17): int4 filters EvalHybridDense unpacks only for a non-zero input
# (tests/litert_int4_cases.int4_zero_case), drawn after heap_ways replayed the all-zero-inputs
# way; also measured with non-zero inputs (tests/litert_heap_inputs.py). And int4 filters with
# zero points other than 0 (int4_zero_point_case). The AMD EPYC.
HELD_OUT = (
    *HELD_OUT,
    *((name, "int4z17", n) for n, name in enumerate(INT4_ZERO_NAMES, 1)),
    *((name, "int4zp17", n) for n, name in enumerate(INT4_ZERO_POINT_NAMES, 1)),
)
# int4 per-channel FULLY_CONNECTEDs on int8 input under XNNPACK (qs8_qc4w), drawn after that
# GEMM was replayed (tests/litert_qs8qc4w17_cases.py).
HELD_OUT = (*HELD_OUT, *QS8QC4W17_NAMES)
# Session 18 (litert-int4-18): int8-input int4 FULLY_CONNECTEDs whose int8 copy and ruy blocks
# reach glibc's mmap threshold (tests/litert_int4_18_cases.py).
HELD_OUT = (*HELD_OUT, *RUY18_NAMES, *BWQ18_RUNS)
# Session 18 (litert-held18): families no campaign drew (tests/litert_held18_cases.py), into
# tests/data/litert_heap_held18.json.
HELD_OUT = (*HELD_OUT, *((name, f"held18:{family}", n) for name, family, n in HELD18_NAMES))
# Drawn after its fixes (tests/litert_held18_after.py), into the same file.
HELD_OUT = (*HELD_OUT, *HELD18B_NAMES)
# uint8 TRANSPOSE_CONVs, which XNNPACK takes (tests/litert_tconvu8_cases.py).
HELD_OUT = (*HELD_OUT, *TCONVU8_NAMES)
# Float16 weights under XNNPACK, drawn after its skipped DEQUANTIZEs were replayed
# (tests/litert_fp16_18_cases.py), into litert_heap_held18.json.
HELD_OUT = (*HELD_OUT, *FP16X_NAMES)


def kernel_case(name: str) -> bytes:
    """A held-out kernel case's bytes (tests/litert_cases.py)."""
    import numpy as np

    from tests import litert_cases, litert_recurrent_cases

    # The cases draw weights from one module-level generator: reseed it so that a case's
    # bytes do not depend on which cases were built before it in the process.
    litert_cases.RANDOM = np.random.default_rng(0)

    variants = {
        "sequence_lstm_float": lambda: litert_cases.sequence_lstm(hybrid=False, cifg=False),
        "sequence_lstm_float_cifg": lambda: litert_cases.sequence_lstm(hybrid=False, cifg=True),
        "sequence_lstm_integer": lambda: litert_recurrent_cases.sequence_lstm_integer(
            cifg=False, projection=False
        ),
        "sequence_lstm_integer_cifg": lambda: litert_recurrent_cases.sequence_lstm_integer(
            cifg=True, projection=False
        ),
        "sequence_lstm_integer_projection": lambda: litert_recurrent_cases.sequence_lstm_integer(
            cifg=False, projection=True
        ),
    }
    return variants[name]() if name in variants else litert_cases.CASES[name]()


def held_out_model(family: str, seed: int, name: str = "") -> bytes:
    """A held-out model's bytes, the same for the same family and seed (and case name)."""
    if family.startswith("held15:"):
        return held15_case(family.removeprefix("held15:"), seed)
    if family.startswith("held17:"):
        return held17_case(family.removeprefix("held17:"), seed)
    if family.startswith("held18:"):
        return held18_case(family.removeprefix("held18:"), seed)
    if family == "held18b":
        return held18b_case(seed)
    if family == "late":
        return late_case(seed)
    if family == "sixteen":
        return sixteen_case(seed)
    if family == "integer_int4":
        return integer_int4_case(seed)
    if family == "qs8qc4w":
        return qs8qc4w17_case(seed)
    if family == "ruy18":
        return ruy18_case(seed)
    if family == "bwq18":
        return bwq18_case(seed)
    if family == "tconvu8":
        return tconvu8_case(seed)
    if family == "fp16x":
        return fp16x_case(seed)
    if family == "int4pc16":
        return int4_case(seed)
    if family == "int4z17":
        return int4_zero_case(seed)
    if family == "int4zp17":
        return int4_zero_point_case(seed)
    if family == "graph":
        from tests.litert_random_graphs import random_graph

        return random_graph(seed)
    if family == "case":
        return kernel_case(name)
    if family == "float_conv":
        from tests.litert_peak_cases import float_conv_chain

        return float_conv_chain(seed)
    if family == "custom":
        from tests.litert_custom_cases import custom_case

        return custom_case(seed)
    if family == "pooling":
        from tests.litert_custom_cases import pooling_case

        return pooling_case(seed)
    if family == "attention":
        from tests.litert_custom_cases import attention_case

        return attention_case(seed)
    if family == "grouped_attention":
        from tests.litert_custom_cases import grouped_attention_case

        return grouped_attention_case(seed)
    if family == "attention_composite":
        from tests.litert_custom_cases import attention_composite_case

        return attention_composite_case(seed)
    if family == "deconvolution":
        from tests.litert_custom_cases import deconvolution_case

        return deconvolution_case(seed)
    if family == "adj_x":
        from tests.litert_peak_cases import batch_matmul_adj_x_case

        return batch_matmul_adj_x_case(seed)
    if family == "fingerprint":
        from tests.litert_peak_cases import fingerprint_case

        return fingerprint_case(seed)
    if family == "hybrid_fingerprint":
        from tests.litert_peak_cases import hybrid_fingerprint_case

        return hybrid_fingerprint_case(seed)
    if family == "xcase":
        from tests.litert_xnnpack_cases import CASES

        return CASES[name]()
    if family == "rules5":
        from tests.litert_xnnpack_cases import HELD_OUT5

        return HELD_OUT5[name]()
    if family == "composite":
        from tests.litert_composite_cases import composite

        return composite(seed)
    if family == "composite7":
        from tests.litert_composite_cases import composite7

        return composite7(seed)
    if family == "composite8":
        from tests.litert_composite_cases import composite8

        return composite8(seed)
    if family == "hybrid_conv":
        from tests.litert_composite_cases import hybrid_conv

        return hybrid_conv(seed)
    if family == "grouped_hybrid_conv":
        from tests.litert_composite_cases import grouped_hybrid_conv

        return grouped_hybrid_conv(seed)
    if family == "unary_chain":
        from tests.litert_fusion_cases import unary_chain_model

        return unary_chain_model(seed)
    if family == "variables":
        from tests.litert_variable_cases import variable_heap_model

        return variable_heap_model(seed)
    if family == "replan":
        from tests.litert_variable_cases import replan_model

        return replan_model(seed)
    if family == "xnnpack_replan":
        from tests.litert_replan_cases import xnnpack_replan_model

        return xnnpack_replan_model(seed)
    if family == "kernel_facts":
        from tests.litert_kernel_facts_cases import kernel_facts_case

        return kernel_facts_case(seed)
    if family == "topk":
        from tests.litert_topk_cases import topk_case

        return topk_case(seed)
    if family == "strings":
        from tests.litert_string_cases import string_case

        return string_case(seed)
    if family == "signatures":
        from tests.litert_rewrite_cases import signature_case

        return signature_case(seed)
    if family == "biased_signatures":
        from tests.litert_rewrite_cases import biased_signature_case

        return biased_signature_case(seed)
    if family == "blockwise_fc":
        from tests.litert_rewrite_cases import blockwise_fully_connected_case

        return blockwise_fully_connected_case(seed)
    if family == "square_reduce":
        from tests.litert_rewrite_cases import square_reduce_case

        return square_reduce_case(seed)
    if family == "dynamic_axis":
        from tests.litert_reduction_cases import dynamic_axis_case

        return dynamic_axis_case(seed)
    if family == "control_flow_variables":
        from tests.litert_control_flow_cases import nested_model

        return nested_model(8000 + seed)
    if family == "call_once":
        from tests.litert_call_once_cases import call_once_case

        return call_once_case(seed)
    if family == "call_once15":
        from tests.litert_call_once_cases import call_once_case15

        return call_once_case15(seed)
    if family == "call_once15b":
        from tests.litert_call_once_cases import call_once_case15b

        return call_once_case15b(seed)
    if family == "control_flow_variables12":
        from tests.litert_control_flow_cases import nested_model

        return nested_model(8100 + seed)
    if family == "control_flow_heap":
        from tests.litert_control_flow_heap_cases import control_flow_heap_case

        return control_flow_heap_case(seed)
    if family == "many_decisions":
        from tests.litert_control_flow_heap_cases import many_decisions_case

        return many_decisions_case(seed)
    if family == "if_state":
        from tests.litert_control_flow_heap_cases import if_state_case

        return if_state_case(seed)
    if family == "while_turns":
        from tests.litert_control_flow_heap_cases import while_turns_case

        return while_turns_case(seed)
    if family == "caller":
        from tests.litert_caller_cases import caller_case

        return caller_case(seed)
    if family == "bmm6":
        from tests.litert_xnnpack_cases import HELD_OUT6

        return HELD_OUT6[name]()
    from flows import models

    maker = {
        "cnn": models.cnn,
        "float_cnn": models.float_cnn,
        "dag": models.dag,
        "audio": models.audio,
    }[family]
    return maker(random.Random(seed)).data


def tracer(folder: Path) -> Path:
    """Compile heap_tracer.c into folder (gcc, as the tool's README says)."""
    library = folder / "heap_tracer.so"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(TOOL / "heap_tracer.c"), "-ldl"],
        check=True,
    )
    return library


def measure(library: Path, model: Path, mode: str) -> dict[str, Any]:
    """One model under one delegate → measure.py's figures (or the error it printed).

    The model is copied to `<mkdtemp>/model.tflite` first: the path's length reaches the
    Python wrapper's own allocations (96 B between two temporary folders), which are not the
    model's, so every measurement uses a path of one length."""
    environment = dict(os.environ, LD_PRELOAD=str(library))
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "model.tflite"
        copy.write_bytes(model.read_bytes())
        return _measure_file(copy, mode, environment)


def _measure_file(model: Path, mode: str, environment: dict[str, str]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(TOOL / "measure.py"), str(model), mode],
        capture_output=True,
        text=True,
        env=environment,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    return heap_figures(completed)


def printed_figures(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A measuring process → the JSON object it printed last (or the error it printed)."""
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if completed.returncode != 0 or not lines:
        return {"error": (completed.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def heap_figures(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A measure.py process → its four heap figures (or the error it printed)."""
    figures = printed_figures(completed)
    if "error" in figures:
        return figures
    return {key: figures[key] for key in ("after_create", "after_allocate", "after_invoke", "peak")}


def cache_document(path: Path, command: str) -> dict[str, Any]:
    """A measurement cache to update: its models so far, the command that remakes it and the
    environment the new measurements hold for."""
    document: dict[str, Any] = {"models": {}}
    if path.is_file():
        document = json.loads(path.read_text())
    document["command"] = command
    document["environment"] = environment()
    return document


def environment() -> dict[str, Any]:
    """Where the figures hold: the wheel, the CPU's ISA flags, glibc, Python."""
    from importlib.metadata import version

    flags: list[str] = []
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags = sorted(line.split(":", 1)[1].split())
                break
    return {
        "ai_edge_litert": version("ai-edge-litert"),
        "numpy": version("numpy"),
        "python": platform.python_version(),
        "glibc": "-".join(platform.libc_ver()),
        "machine": platform.machine(),
        "cpu_flags": [f for f in flags if f.startswith(("avx", "sse", "fma", "f16c", "amx"))],
    }


def models(folder: Path) -> list[tuple[str, Path, str]]:
    """(name, path, set) of every model to measure: shared ones, then held-out ones."""
    shared = REPO_ROOT.parent / "shared" / "models"
    found = [(p.name, p, "shared") for p in sorted(shared.glob("*.tflite"))]
    for name, family, seed in HELD_OUT:
        path = folder / f"{name}.tflite"
        path.write_bytes(held_out_model(family, seed, name.removeprefix("heldout_case_")))
        found.append((path.name, path, "held_out"))
    return found


def remade(name: str, which: str, data: Path, only: str) -> bool:
    """Whether a run into `data` measures the model `name` (of set `which`): with `only`, those
    it names; else, into the default file, every shared model and every held-out one except the
    families drawn and measured on another CPU alone (in litert_heap_avx2.json and not here), so
    that its command remakes exactly its own entries and any new family's; another CPU's file
    is remade by its own command's --only."""
    if only:
        return any(part in name for part in only.split(","))
    if data != DATA or which != "held_out":
        return True
    own, other = _cached_names()
    return name in own or name not in other


@functools.cache
def _cached_names() -> tuple[frozenset[str], frozenset[str]]:
    """The model names litert_heap.json and litert_heap_avx2.json hold (read once a run)."""
    found = []
    for path in (DATA, *(DATA.with_name(name) for name in EPYC_FILES)):
        document = json.loads(path.read_text()) if path.is_file() else {"models": {}}
        found.append(frozenset(document["models"]))
    return found[0], frozenset().union(*found[1:])


def remake_command(data: Path, only: str, previous: str | None) -> str:
    """The command that remakes the cache `data`: the default file's (every model), or another
    CPU's file with every --only it was measured with, the previous command's and `only`."""
    command = "python -m tests.litert_heap_measure"
    if data == DATA:
        return command
    command += f" --cache {data.relative_to(REPO_ROOT)}"
    _, found, listed = (previous or "").partition(" --only ")
    kept = listed.split(",") if found else []
    parts = [*kept, *(part for part in only.split(",") if part and part not in kept)]
    return command + (f" --only {','.join(parts)}" if parts else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="", help="measure models whose name contains this (or any of a,b,...)"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=DATA,
        help="the cache to update (another CPU's: its own file, one CPU per file)",
    )
    arguments = parser.parse_args(argv)
    data = arguments.cache.resolve()
    before = json.loads(data.read_text()) if data.is_file() else {}
    previous = before.get("environment")
    document = cache_document(data, remake_command(data, arguments.only, before.get("command")))
    if arguments.only and previous is not None and previous != document["environment"]:
        # One CPU per file: figures measured elsewhere (another CPU selects other XNNPACK
        # microkernels and packing) go to that CPU's own file, or this one is remade whole.
        print(
            f"{data.name} holds figures for {previous}; this machine is "
            f"{document['environment']}: measure into another --cache, or remake it whole",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        for name, path, which in models(folder):
            if not remade(name, which, data, arguments.only):
                continue
            entry = {"set": which, **{mode: measure(library, path, mode) for mode in MODES}}
            document["models"][name] = entry
            print(name, json.dumps(entry), flush=True)
    document["models"] = dict(sorted(document["models"].items()))
    data.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
