"""The XNNPACK nodes LiteRT's delegate defines for `odml.scaled_dot_product_attention` (the
custom operator; *tflite/delegates/xnnpack/xnnpack_delegate.cc*:
`VisitScaledDotAttentionCompositeNode`, `VisitDotAttentionNode`), so that its runtime objects,
values and workspace are replayed as any other delegated operator's.

The options (a flexbuffer map) may hold a float `scale` and a float `logit_cap`
(flexbuffers_util.h: a key that is not a float counts as absent). From query Q [B, T, N, H],
key K [B, S, Nk, H], value V [B, S, Nk, H] and an optional mask M, the delegate defines, in
order, each output a value of its own (defined with no external id):

* the scale: a static scalar (`scale`), or a static 1.0 clamped to 1/sqrt(H) (a clamp node
  whose output is a run-time scalar);
* Q × scale (binary multiply), its transpose to [B, N, T, H], K's to [B, Nk, S, H];
* the logits [B, N, T, S]: a batch matrix multiply with a transposed B (Nk > 1, Nk = N), or
  with one key head (Nk = 1) a static reshape of K to [S, H] and a fully connected node with
  those run-time weights; several query heads per key head (1 < Nk < N, grouped) reshape the
  operands to [B, Nk, N / Nk, ...] and the product back (static reshapes: copies), the
  product's value defined before the reshapes';
* with `logit_cap`: a static scalar, logits / cap, tanh, × cap;
* with a mask: M + logits (binary add); then the softmax;
* V's transpose to [B, Nk, H, S] and the second product [B, N, T, H] (a batch matrix multiply,
  or with one key head a reshape of V to [H, S] and a fully connected node), and its transpose
  into the output.

XNNPACK's optimizer changes none of these (its RHS-transpose rewrite needs a transpose of the
last two dimensions only, or a batch matrix multiply without a transposed B). A batch matrix
multiply packs its run-time B into its operator workspace at each run (as a BATCH_MATMUL's);
a fully connected node with run-time weights is XNNPACK's dynamic fully connected operator,
which packs them into its workspace: round_up(outputs, nr) × (round_up(inputs, kr) + 1 bias)
floats, on the float GEMM's configuration for that many outputs (xnn_use_nr2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import xnnpack_custom
from arenalens.runtimes.litert.xnnpack_packing import HOST_TILES, XnnpackTiles, _gemm_tile, round_up

_FLOAT = 4


@dataclass(frozen=True, slots=True)
class AttentionNode:
    """One XNNPACK node of an attention: its kind (as xnnpack_workspace names kinds), its
    values (model tensors, or fresh ids past them), the planned bytes of the fresh values it
    writes and its operator workspace."""

    kind: str
    inputs: list[int]
    outputs: list[int]
    sizes: dict[int, int] = field(default_factory=dict)
    workspace: int = 0


def is_attention(operator: Operator) -> bool:
    """The delegate's scaled dot-product attention: the custom operator or the composite."""
    if operator.opcode == "STABLEHLO_COMPOSITE":
        return operator.options.get("name") == xnnpack_custom.ATTENTION
    return xnnpack_custom.custom_name(operator) == xnnpack_custom.ATTENTION


def head_failures(subgraph: Subgraph) -> tuple[int, ...]:
    """The attentions the delegate takes (VisitDotAttentionNode's checks pass) whose key heads
    do not divide the query's: that check is made only while the node is defined, in the
    kernel's Init ('query_proj.dims->data[2] % key_proj.dims->data[2] != 0'), so the
    delegate's Prepare and allocate_tensors() fail (the 2.3.0 wheel: 3 query heads over 2 key
    heads; LiteRT does not fall back)."""
    found = []
    for operator in subgraph.operators:
        if not is_attention(operator) or not xnnpack_custom.attention_fits(subgraph, operator):
            continue
        query, key = (subgraph.tensors[index].shape for index in operator.inputs[:2])
        if len(query) > 2 and len(key) > 2 and key[2] > 0 and query[2] % key[2]:
            found.append(operator.index)
    return tuple(found)


def _attributes(model: Model, subgraph: Subgraph, operator: Operator) -> bytes:
    if operator.opcode == "STABLEHLO_COMPOSITE":
        return bytes(operator.options.get("composite_attributes") or ())
    from arenalens.tflite.reader import read_custom_options  # noqa: PLC0415

    return read_custom_options(model, subgraph.index, operator.position_in_file)


def float_options(model: Model, subgraph: Subgraph, operator: Operator) -> tuple[bool, bool]:
    """(has a float `scale`, has a float `logit_cap`): FloatPointer's test, IsFloat."""
    raw = _attributes(model, subgraph, operator)
    if not raw:
        return False, False
    from flatbuffers import flexbuffers  # noqa: PLC0415

    try:
        options = flexbuffers.GetRoot(raw).AsMap
        found = []
        for key in ("scale", "logit_cap"):
            try:
                found.append(bool(options[key].IsFloat))
            except KeyError:
                found.append(False)
    except Exception:  # a malformed map reads as no options, never a crash
        return False, False
    return found[0], found[1]


def modelled(subgraph: Subgraph, operator: Operator) -> bool:
    """Whether the nodes are replayed: rank-4 float query, key and value, the key's heads
    (the value's as many) one, the query's, or a divisor of them (grouped)."""
    shapes = [subgraph.tensors[index].shape for index in operator.inputs[:3] if index >= 0]
    if len(shapes) != 3 or any(len(shape) != 4 for shape in shapes):
        return False
    query, key, value = shapes
    return key[2] == value[2] and key[2] > 0 and query[2] % key[2] == 0


def replayed_custom(subgraph: Subgraph, operator: Operator) -> bool:
    """Whether the XNNPACK part of a custom operator the delegate takes is replayed: the
    MediaPipe poolings', and the attention's when it is `modelled` (the deconvolution is
    replayed as a TRANSPOSE_CONV: xnnpack_custom.as_xnnpack_builtins)."""
    if operator.custom_code in xnnpack_custom.POOLINGS:
        return True
    return operator.custom_code == xnnpack_custom.ATTENTION and modelled(subgraph, operator)


def replayed(subgraph: Subgraph, operator: Operator) -> bool:
    """An attention whose nodes are replayed (`attention_nodes`)."""
    return is_attention(operator) and modelled(subgraph, operator)


def composite_taken(subgraph: Subgraph, operator: Operator) -> bool | None:
    """Whether the delegate takes a STABLEHLO_COMPOSITE (VisitNode: the one named
    odml.scaled_dot_product_attention whose checks pass; any other stays the builtin
    kernel's, its decomposition a subgraph apart); None: taken, its nodes not replayed."""
    if operator.options.get("name") != xnnpack_custom.ATTENTION:
        return False
    if not xnnpack_custom.attention_fits(subgraph, operator):
        return False
    return True if modelled(subgraph, operator) else None


def _elements(*dims: int) -> int:
    count = 1
    for dim in dims:
        count *= dim
    return count


def dynamic_fully_connected_workspace(
    outputs: int, inputs: int, tiles: XnnpackTiles = HOST_TILES
) -> int:
    """reshape_dynamic_fully_connected_nc (f32): the run-time weights packed with a bias per
    output, n_stride × (k_stride + 1) floats."""
    gemm = _gemm_tile("FLOAT32", tiles, outputs, gemm=True)
    return round_up(outputs, gemm.nr) * (round_up(inputs, gemm.kr) + 1) * _FLOAT


def batch_matmul_workspace(
    batches: int, depth: int, columns: int, tiles: XnnpackTiles = HOST_TILES
) -> int:
    """A run-time float B packed per batch (as xnnpack_packing.batch_matmul_b_bytes)."""
    gemm = tiles.f32_gemm
    return batches * round_up(columns, gemm.nr) * (round_up(depth, gemm.kr) * _FLOAT + _FLOAT)


def attention_nodes(
    model: Model,
    subgraph: Subgraph,
    operator: Operator,
    fresh: int,
    tiles: XnnpackTiles = HOST_TILES,
) -> tuple[list[AttentionNode], int]:
    """The attention's nodes in definition order and the next fresh value id (its products'
    run-time packed operands padded to `tiles`)."""
    q, k, v = operator.inputs[:3]
    mask = operator.inputs[3] if len(operator.inputs) > 3 and operator.inputs[3] >= 0 else None
    out = operator.outputs[0]
    batch, steps, heads, depth = subgraph.tensors[q].shape
    _, keys, key_heads, _ = subgraph.tensors[k].shape
    has_scale, has_cap = float_options(model, subgraph, operator)
    nodes: list[AttentionNode] = []

    def value() -> int:
        nonlocal fresh
        fresh += 1
        return fresh - 1

    def add(kind: str, inputs: list[int], nbytes: int, workspace: int = 0) -> int:
        output = value()
        nodes.append(AttentionNode(kind, inputs, [output], {output: nbytes}, workspace))
        return output

    def product(operands: list[int], sizes: list[int], nbytes: int, workspace: int) -> int:
        """A batch matrix multiply with a transposed B; with grouped heads, its output value
        defined first, then A and B reshaped to [B, groups, heads per group, ...], the
        product, and that reshaped back (static reshapes: copies)."""
        if key_heads == heads:
            return add("BATCH_MATMUL", operands, nbytes, workspace)
        result, grouped = value(), [value(), value()]
        grouped_result = value()
        for source, target, size in zip(operands, grouped, sizes, strict=True):
            nodes.append(AttentionNode("copy", [source], [target], {target: size}))
        sized = {grouped_result: nbytes}
        nodes.append(AttentionNode("BATCH_MATMUL", grouped, [grouped_result], sized, workspace))
        nodes.append(AttentionNode("copy", [grouped_result], [result], {result: nbytes}))
        return result

    query_bytes = _elements(batch, steps, heads, depth) * _FLOAT
    key_bytes = _elements(batch, keys, key_heads, depth) * _FLOAT
    logits_bytes = _elements(batch, heads, steps, keys) * _FLOAT
    scale = value()  # a static scalar (the option, or the 1.0 the clamp reads)
    if not has_scale:
        scale = add("clamp", [scale], _FLOAT)
    scaled = add("binary", [q, scale], query_bytes)
    query = add("TRANSPOSE", [scaled], query_bytes)
    key = add("TRANSPOSE", [k], key_bytes)
    single = key_heads == 1
    if single:
        # One key head: K as [S, H] run-time weights of a fully connected node (S outputs).
        weights = add("copy", [key], key_bytes)
        logits = add(
            "dynamic_fc", [query, weights], logits_bytes,
            dynamic_fully_connected_workspace(keys, depth, tiles),
        )  # fmt: skip
    else:
        workspace = batch_matmul_workspace(batch * key_heads, depth, keys, tiles)
        logits = product([query, key], [query_bytes, key_bytes], logits_bytes, workspace)
    if has_cap:
        cap = value()
        divided = add("binary", [logits, cap], logits_bytes)
        bounded = add("unary", [divided], logits_bytes)
        logits = add("binary", [bounded, cap], logits_bytes)
    if mask is not None:
        logits = add("binary", [mask, logits], logits_bytes)
    probabilities = add("softmax", [logits], logits_bytes)
    values = add("TRANSPOSE", [v], key_bytes)
    result_bytes = _elements(batch, heads, steps, depth) * _FLOAT
    if single:
        weights = add("copy", [values], key_bytes)
        result = add(
            "dynamic_fc", [probabilities, weights], result_bytes,
            dynamic_fully_connected_workspace(depth, keys, tiles),
        )  # fmt: skip
    else:
        workspace = batch_matmul_workspace(batch * key_heads, keys, depth, tiles)
        result = product(
            [probabilities, values], [logits_bytes, key_bytes], result_bytes, workspace
        )
    nodes.append(AttentionNode("TRANSPOSE", [result], [out]))
    return nodes, fresh


def value_count(model: Model, subgraph: Subgraph, operator: Operator) -> int:
    """Values the attention defines past its tensors' (each fresh id once)."""
    nodes, fresh = attention_nodes(model, subgraph, operator, 0)
    del nodes
    return fresh
