"""The models flows walk: a seeded random choice → a `Subject` (bytes, how to name it, which input
sizes it takes).

Families, each a function of one `random.Random`:

* `example`: a built-in example, named `example:NAME` as a user types it;
* `cnn`: a random int8 image network (convolutions, depthwise, pools, residual ADDs; a global
  average and dense head, or none), a fifth of them with an input of unknown size
  (shape_signature 1x-1x-1xC), as converters write for a variable image size;
* `float_cnn`: the same shapes in float32;
* `dag`: fuzz/graphs.py's random float DAGs of rows (branches, residuals, SPLIT, several outputs);
* `audio`: float elementwise chains on samples of unknown count (signature 1x-1, stored 1x1);
* `fixture`: the models of issue 20's paths and of `optimize`'s tests (tests/fixtures): float16
  weights, unregistered operators, fixed pooling windows, NCHW input, resource-variable state;
* `quant`: a `cnn` with one activation range made extreme (a near-zero SOFTMAX input scale, a
  huge or tiny layer output scale), where kernels' Prepare checks refuse the quantization.

Held out, drawn only when named (`--family upstream`), so the default draw and every replay
command written before them are unchanged:

* `upstream`: the upstream repositories' own .tflite files (LiteRT's and tflite-micro's test data
  and examples), read from the fetched mirrors as tests/litert_upstream_measure.py reads them,
  never copied; no rule was fitted to them;
* `synthetic`: tests/fixtures/synthetic.py's generated float chains, branches and U-Net skips of
  4 to 300 operators.
* `stateful`: IF, WHILE, CALL_ONCE and resource variables: the LiteRT heap's generated
  control-flow and variable cases (tests/litert_heap_measure.held_out_model) at seeds none of
  its caches holds, and IF/WHILE whose outputs change shape.

A subject says which `--input-shape` values make sense for it: sizes the network takes (and one it
may refuse, to walk that path too).
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from fuzz.graphs import GraphSpec, random_dag_model

from arenalens.examples import EXAMPLES, example_bytes
from arenalens.examples.layers import Activation, Int8Network
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder


@dataclass(frozen=True)
class Subject:
    """One model a flow starts from."""

    family: str
    recipe: str  # how to make it again: 'cnn seed=123', 'example vww_mobilenet_v1'
    data: bytes
    argument: str = ""  # the model as the CLI is given it: 'example:NAME', or '' for a file
    input_name: str = ""  # the input --input-shape resizes ('' when the model has no resizable one)
    sizes: tuple[str, ...] = ()  # --input-shape values worth trying ('image=1x64x64x3')
    placeholder: bool = False  # an input's real size is unknown: optimize needs --input-shape


Family = Callable[[random.Random], Subject]


# ---------------------------------------------------------------------------------------------
# Built-in examples


# The 224x224 MobileNet plans and runs for seconds: one example in twenty.
_EXAMPLE_WEIGHTS = {name: (1 if name == "mobilenet_v1_224" else 4) for name in EXAMPLES}
# Input sizes each example's network takes besides its own (a global average or a fixed window).
_EXAMPLE_SIDES = {
    "vww_mobilenet_v1": (48, 64, 80, 112, 128, 144),
    "resnet8_cifar": (16, 24, 40, 48),
    "branchy_inception": (16, 24, 40, 48),
    "mobilenet_v1_224": (128, 160, 192),
}


def example(rng: random.Random) -> Subject:
    names = sorted(_EXAMPLE_WEIGHTS)
    name = rng.choices(names, weights=[_EXAMPLE_WEIGHTS[n] for n in names])[0]
    data = example_bytes(name)
    from arenalens.tflite.reader import parse_model

    model = parse_model(data, name)
    subgraph = model.subgraphs[0]
    tensor = subgraph.tensors[subgraph.inputs[0]]
    sizes: tuple[str, ...] = ()
    if len(tensor.shape) == 4:
        sides = _EXAMPLE_SIDES.get(name, ())
        channels = tensor.shape[3]
        sizes = tuple(f"{tensor.name}=1x{s}x{s}x{channels}" for s in sides)
        # One size the network may refuse (a fixed window or flatten): that path too.
        sizes += (f"{tensor.name}=1x{tensor.shape[1] + 7}x{tensor.shape[2] + 3}x{channels}",)
    return Subject("example", f"example {name}", data, f"example:{name}", tensor.name, sizes)


# ---------------------------------------------------------------------------------------------
# Random int8 image networks


def cnn(rng: random.Random, *, extreme: bool = False) -> Subject:
    """A random int8 image network; with `extreme`, one activation range is pushed to where
    kernels' quantization checks refuse it."""
    seed = rng.randrange(1 << 30)
    side = rng.choice((8, 12, 16, 24, 32, 40, 48))
    channels = rng.choice((1, 3, 4))
    placeholder = rng.random() < 0.2
    net = Int8Network(seed=seed, description="flows: random int8 image network")
    signature = (1, -1, -1, channels) if placeholder else None
    x = net.input("image", (1, side, side, channels), (0.0, 1.0), shape_signature=signature)
    first = x
    layers = rng.randrange(2, 8)
    # With `extreme`, one layer's output range (or, at `layers`, the logits feeding SOFTMAX).
    extreme_layer = rng.randrange(layers + 1) if extreme else -1
    for layer in range(layers):
        out_range = _extreme_range(rng) if layer == extreme_layer else None
        x = _random_int8_layer(net, rng, x, f"layer_{layer}", out_range)
    outputs: list[Activation]
    if rng.random() < 0.6:
        pooled = net.global_average(x, "global_average")
        flat = net.reshape(pooled, "flatten", (1, x.shape[3]))
        # A SOFTMAX input scale near 1e-8, as uncalibrated BatchNorm conversions write.
        tiny = (-1e-6, 1e-6) if extreme_layer == layers else None
        units = rng.choice((2, 4, 10))
        logits = net.fully_connected(flat, "logits", units=units, output_range=tiny)
        outputs = [net.softmax(logits, "softmax") if tiny or rng.random() < 0.7 else logits]
    else:
        outputs = [x]
    data = net.build([first], outputs)
    family = "quant" if extreme else "cnn"
    sides = sorted({max(4, side // 2), side + 8, 2 * side, side + rng.randrange(1, 9)})
    sizes = tuple(f"image=1x{s}x{s}x{channels}" for s in sides)
    return Subject(
        family, f"{family} seed={seed}", data, "", "image", sizes, placeholder=placeholder
    )


def quant(rng: random.Random) -> Subject:
    # An extreme scale overflows the next layer's int32 bias, as such a conversion writes it.
    with np.errstate(over="ignore", invalid="ignore"):
        return cnn(rng, extreme=True)


def _extreme_range(rng: random.Random) -> tuple[float, float]:
    """An activation range far outside what its layer computes: a scale near 1e-9 or near 1e6."""
    return rng.choice(((-1e-7, 1e-7), (0.0, 3e-7), (-1e8, 1e8), (0.0, 4e8)))


def _random_int8_layer(
    net: Int8Network,
    rng: random.Random,
    x: Activation,
    name: str,
    out_range: tuple[float, float] | None,
) -> Activation:
    """One layer that keeps the feature map at least 1x1 for every input size of the family."""
    height = x.shape[1]
    kind = rng.choice(("conv", "conv", "pointwise", "depthwise", "pool", "residual"))
    stride = 2 if height >= 4 and rng.random() < 0.4 else 1
    activation = rng.choice(("RELU", "RELU6", "NONE"))
    if kind == "conv":
        kernel = rng.choice(((3, 3), (1, 3), (3, 1), (5, 5)))
        return net.conv2d(
            x,
            name,
            channels=rng.choice((4, 8, 16)),
            kernel=kernel,
            stride=stride,
            activation=activation,
            output_range=out_range,
        )
    if kind == "pointwise":
        return net.conv2d(
            x,
            name,
            channels=rng.choice((4, 8, 16, 24)),
            kernel=(1, 1),
            activation=activation,
            output_range=out_range,
        )
    if kind == "depthwise":
        return net.depthwise_conv2d(
            x, name, stride=stride, activation=activation, output_range=out_range
        )
    if kind == "pool" and height >= 2:
        pool = net.max_pool if rng.random() < 0.5 else net.average_pool
        return pool(x, name, pool=(2, 2), stride=2, padding="SAME")
    # A residual block: two convolutions keeping the shape, added to their input.
    branch = net.conv2d(x, f"{name}/a", channels=x.shape[3], kernel=(1, 1))
    branch = net.depthwise_conv2d(branch, f"{name}/b", activation="NONE")
    return net.add(x, branch, f"{name}/add", output_range=out_range)


# ---------------------------------------------------------------------------------------------
# Random float32 image networks


def float_cnn(rng: random.Random) -> Subject:
    seed = rng.randrange(1 << 30)
    weights = np.random.default_rng(seed)
    side = rng.choice((8, 12, 16, 24, 32))
    channels = rng.choice((1, 3))
    builder = ModelBuilder(description="flows: random float32 image network")
    graph = builder.add_subgraph("main")
    image = graph.add_tensor("image", (1, side, side, channels))
    network = _FloatNetwork(graph, weights)
    shape: tuple[int, ...] = (1, side, side, channels)
    x = image
    for layer in range(rng.randrange(1, 6)):
        x, shape = network.layer(rng, x, shape, f"layer_{layer}")
    outputs = [x]
    if rng.random() < 0.5:
        axes = graph.add_constant("mean/axes", np.asarray((1, 2), np.int32))
        pooled = graph.add_tensor("mean", (1, 1, 1, shape[3]))
        graph.add_operator("MEAN", [x, axes], [pooled], options={"keep_dims": True})
        outputs = [pooled]
    graph.set_inputs([image])
    graph.set_outputs(outputs)
    builder.add_signature("serving_default", graph)
    sizes = tuple(f"image=1x{s}x{s}x{channels}" for s in sorted({side // 2 + 1, side * 2}))
    return Subject("float_cnn", f"float_cnn seed={seed}", builder.build(), "", "image", sizes)


class _FloatNetwork:
    """float32 layers on one subgraph (SAME padding, so any input size stays valid)."""

    def __init__(self, graph: SubgraphBuilder, weights: np.random.Generator) -> None:
        self.graph = graph
        self.weights = weights
        self.count = 0

    def layer(
        self, rng: random.Random, x: int, shape: tuple[int, ...], name: str
    ) -> tuple[int, tuple[int, ...]]:
        graph = self.graph
        _, height, width, channels = shape
        kind = rng.choice(("conv", "depthwise", "pool", "unary", "add"))
        stride = 2 if height >= 4 and rng.random() < 0.4 else 1
        out_h, out_w = -(-height // stride), -(-width // stride)
        activation = rng.choice(("NONE", "RELU", "RELU6"))
        if kind == "conv":
            out_channels = rng.choice((2, 4, 8))
            kernel = self._constant(f"{name}/w", (out_channels, 3, 3, channels))
            bias = self._constant(f"{name}/b", (out_channels,))
            out_shape = (1, out_h, out_w, out_channels)
            y = graph.add_tensor(name, out_shape)
            options = {"padding": "SAME", "stride_w": stride, "stride_h": stride}
            options["fused_activation_function"] = activation
            graph.add_operator("CONV_2D", [x, kernel, bias], [y], options=options)
            return y, out_shape
        if kind == "depthwise":
            kernel = self._constant(f"{name}/w", (1, 3, 3, channels))
            bias = self._constant(f"{name}/b", (channels,))
            out_shape = (1, out_h, out_w, channels)
            y = graph.add_tensor(name, out_shape)
            options = {"padding": "SAME", "stride_w": stride, "stride_h": stride}
            options.update(depth_multiplier=1, fused_activation_function=activation)
            graph.add_operator("DEPTHWISE_CONV_2D", [x, kernel, bias], [y], options=options)
            return y, out_shape
        if kind == "pool" and height >= 2:
            out_shape = (1, -(-height // 2), -(-width // 2), channels)
            y = graph.add_tensor(name, out_shape)
            options = {"padding": "SAME", "stride_w": 2, "stride_h": 2}
            options.update(filter_width=2, filter_height=2)
            opcode = rng.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D"))
            graph.add_operator(opcode, [x], [y], options=options)
            return y, out_shape
        if kind == "add":
            y = graph.add_tensor(f"{name}/unary", shape)
            graph.add_operator(rng.choice(("RELU", "TANH", "ABS")), [x], [y])
            z = graph.add_tensor(name, shape)
            graph.add_operator(rng.choice(("ADD", "MUL", "SUB")), [x, y], [z])
            return z, shape
        y = graph.add_tensor(name, shape)
        graph.add_operator(rng.choice(("RELU", "TANH", "LOGISTIC", "ABS", "RELU6")), [x], [y])
        return y, shape

    def _constant(self, name: str, shape: tuple[int, ...]) -> int:
        values = self.weights.normal(0.0, 0.5, size=shape).astype(np.float32)
        return self.graph.add_constant(name, values)


# ---------------------------------------------------------------------------------------------
# Random DAGs of rows, audio of unknown length


def dag(rng: random.Random) -> Subject:
    seed = rng.randrange(1 << 30)
    spec = GraphSpec(max_operators=rng.choice((4, 12, 30)), control_flow=False)
    data = random_dag_model(random.Random(seed), spec)
    return Subject("dag", f"dag seed={seed} operators<={spec.max_operators}", data)


def audio(rng: random.Random) -> Subject:
    """Float elementwise operators on samples whose count is unknown (stored 1x1, signature
    1x-1): any size the application feeds is valid."""
    seed = rng.randrange(1 << 30)
    local = random.Random(seed)
    builder = ModelBuilder(description="flows: audio of any length")
    graph = builder.add_subgraph("main")

    def samples(name: str) -> int:
        return graph.add_tensor(name, (1, 1), "FLOAT32", shape_signature=(1, -1))

    source = samples("audio")
    pool = [source]
    for index in range(local.randrange(2, 9)):
        out = samples(f"t{index}")
        if local.random() < 0.5 or len(pool) < 2:
            opcode = local.choice(("RELU", "TANH", "ABS", "LOGISTIC", "NEG"))
            graph.add_operator(opcode, [local.choice(pool[-3:])], [out])
        else:
            opcode = local.choice(("ADD", "MUL", "SUB", "MAXIMUM"))
            graph.add_operator(opcode, [local.choice(pool), local.choice(pool[-2:])], [out])
        pool.append(out)
    graph.set_inputs([source])
    graph.set_outputs([pool[-1]])
    sizes = tuple(f"audio=1x{n}" for n in (16, 160, 1280, 16000))
    return Subject(
        "audio", f"audio seed={seed}", builder.build(), "", "audio", sizes, placeholder=True
    )


# ---------------------------------------------------------------------------------------------
# The paths' own models (tests/fixtures)


def fixture(rng: random.Random) -> Subject:
    from tests.fixtures import optimize_models, path_models

    name = rng.choice(
        (
            "placeholder_image_model",
            "placeholder_audio_model",
            "float16_weights_model",
            "float16_image_model",
            "relu_chain_model",
            "pooled_image_model",
            "nchw_image_model",
            "unregistered_operators_model",
            "streaming_state_model",
            "residual_add_model",
        )
    )
    sizes: dict[str, tuple[str, str, bool]] = {
        "placeholder_image_model": ("image", "image=1x{s}x{s}x3", True),
        "placeholder_audio_model": ("audio", "audio=1x{n}", True),
        "pooled_image_model": ("input", "input=1x{s}x{s}x3", False),
        "nchw_image_model": ("input.1", "input.1=1x3x{s}x{s}", False),
        "float16_image_model": ("input", "input=1x{s}x{s}x3", False),
        "residual_add_model": ("input", "input=1x{s}x{s}x8", False),
    }
    module = optimize_models if name in ("streaming_state_model", "residual_add_model") else None
    if name == "float16_weights_model":
        data = path_models.float16_weights_model(layers=rng.choice((2, 8, 74)))
    else:
        data = getattr(module or path_models, name)()
    input_name, pattern, placeholder = sizes.get(name, ("", "", False))
    values: tuple[str, ...] = ()
    if pattern:
        values = tuple(
            pattern.format(s=s, n=s * 40) for s in rng.sample((8, 16, 24, 32, 64, 96, 128), 3)
        )
    return Subject(
        "fixture", f"fixture {name}", data, "", input_name, values, placeholder=placeholder
    )


# ---------------------------------------------------------------------------------------------
# Held out: the upstream repositories' models, generated graphs


# Larger files plan for minutes under a flow's limit; the seanet integration tests (hundreds of
# near-identical files) count as a few models, not as most of the draw.
_UPSTREAM_MAX_BYTES = 4_500_000
_SEANET_WEIGHT = 3


@functools.cache
def _upstream_models() -> tuple[tuple[str, str], ...]:
    """(repository, path) of every readable upstream model under the size limit that is not
    in the shared corpus (held out: the same bytes there are not), in order."""
    from tests.litert_upstream_measure import absence, model_bytes, upstream_models

    # Not tests.conftest's: importing it pins ARENALENS_ISA and the CPU caches for the whole
    # campaign, so every later flow's LiteRT figure was the suite's AVX-512 one (seed 1100401).
    from flows.oracle import SHARED_MODELS

    corpus = {hashlib.sha256(p.read_bytes()).digest() for p in SHARED_MODELS.glob("*.tflite")}
    found = []
    for repository, path in upstream_models():
        data = model_bytes(repository, path)
        if absence(data) or data is None or len(data) > _UPSTREAM_MAX_BYTES:
            continue
        if hashlib.sha256(data).digest() not in corpus:
            found.append((repository, path))
    if not found:
        raise RuntimeError(
            "no upstream models: the family reads the fetched mirrors "
            "(/work/.mirror or $ARENALENS_MIRRORS; tests/litert_upstream_measure.py)"
        )
    return tuple(found)


def upstream(rng: random.Random) -> Subject:
    from tests.litert_upstream_measure import key, model_bytes

    models = _upstream_models()
    weights = [_SEANET_WEIGHT / 100 if "/seanet/" in path else 1.0 for _, path in models]
    repository, path = rng.choices(models, weights=weights)[0]
    data = model_bytes(repository, path)
    assert data is not None
    return _file_subject("upstream", f"upstream {key(repository, path)}", data)


def _file_subject(family: str, recipe: str, data: bytes) -> Subject:
    """A model read as a file: the sizes its first input takes, and whether its stored size
    is a placeholder."""
    from arenalens.tflite.reader import parse_model

    subgraph = parse_model(data, recipe).subgraphs[0]
    # As users meet it: a dimension other than the batch left unknown (-1) in any input makes
    # the stored size a placeholder, which optimize refuses without --input-shape.
    placeholder = any(
        any(d < 0 for d in subgraph.tensors[index].shape_signature[1:]) for index in subgraph.inputs
    )
    if not subgraph.inputs:
        return Subject(family, recipe, data, placeholder=placeholder)
    tensor = subgraph.tensors[subgraph.inputs[0]]
    sizes = _input_sizes(tensor.name, tensor.shape, tensor.shape_signature)
    name = tensor.name if sizes else ""
    return Subject(family, recipe, data, "", name, sizes, placeholder=placeholder)


def _input_sizes(name: str, shape: tuple[int, ...], signature: tuple[int, ...]) -> tuple[str, ...]:
    """--input-shape values for a model's first input: its unknown dimensions (but the batch)
    given a small and a large value; an image's side halved and grown; a batch of two (which a
    model may refuse: that path too). None for a name --input-shape cannot carry."""
    if not shape or not name or "=" in name or any(ch.isspace() for ch in name):
        return ()
    variants: list[tuple[int, ...]] = []
    if len(signature) == len(shape) and any(d < 0 for d in signature[1:]):
        for value in (4, 32):
            variants.append(
                tuple(
                    value if known < 0 and position else stored
                    for position, (known, stored) in enumerate(zip(signature, shape, strict=True))
                )
            )
    elif len(shape) == 4 and shape[1] >= 8 and shape[2] >= 8:
        for height, width in ((shape[1] // 2, shape[2] // 2), (shape[1] + 8, shape[2] + 8)):
            variants.append((shape[0], height, width, shape[3]))
    variants.append((2, *shape[1:]))
    return tuple(
        dict.fromkeys(
            f"{name}={'x'.join(str(d) for d in variant)}"
            for variant in variants
            if variant != shape and all(d > 0 for d in variant)
        )
    )


def synthetic(rng: random.Random) -> Subject:
    from tests.fixtures.synthetic import SYNTHETIC_SHAPES, synthetic_model

    shape = rng.choice(SYNTHETIC_SHAPES)
    operators = rng.choice((4, 16, 64, 300))
    width = rng.choice((8, 16, 32))
    seed = rng.randrange(1 << 30)
    data = synthetic_model(shape, operators, width=width, seed=seed)
    sizes = tuple(f"input={batch}x{width}" for batch in (2, 4))
    recipe = f"synthetic {shape} operators={operators} width={width} seed={seed}"
    return Subject("synthetic", recipe, data, "", "input", sizes)


# The generated state and control-flow models of the LiteRT heap's held-out sets
# (tests/litert_heap_measure.held_out_model), at seeds none of their caches holds: IF and WHILE
# (both branches, nested loops, convolution bodies), resource variables read and assigned in IF
# branches inside a WHILE body with an optional CALL_ONCE init, variables whose first invoke
# re-plans; and the IF/WHILE whose outputs change shape (Eval_dynamic: no LiteRT heap figure).
_STATEFUL_GENERATORS = ("control_flow_heap", "control_flow_variables", "variables", "replan")
_STATEFUL_SEEDS = range(120_000, 130_000)


def stateful(rng: random.Random) -> Subject:
    from tests.litert_control_flow_heap_cases import reshaping_if, reshaping_while
    from tests.litert_heap_measure import held_out_model

    roll = rng.random()
    if roll < 0.06:
        turns = rng.choice((1, 3))
        return _file_subject("stateful", f"stateful reshaping_while turns={turns}",
                             reshaping_while(turns, rng.choice((64, 1024))))  # fmt: skip
    if roll < 0.1:
        return _file_subject("stateful", "stateful reshaping_if", reshaping_if())
    generator = rng.choice(_STATEFUL_GENERATORS)
    seed = rng.choice(_STATEFUL_SEEDS)
    data = held_out_model(generator, seed)
    return _file_subject("stateful", f"stateful {generator} seed={seed}", data)


FAMILIES: dict[str, tuple[Family, int]] = {
    # name: (maker, weight)
    "example": (example, 20),
    "cnn": (cnn, 26),
    "float_cnn": (float_cnn, 10),
    "dag": (dag, 12),
    "audio": (audio, 6),
    "fixture": (fixture, 14),
    "quant": (quant, 12),
}


HELD_OUT_FAMILIES: dict[str, tuple[Family, int]] = {
    "upstream": (upstream, 10),
    "synthetic": (synthetic, 10),
    "stateful": (stateful, 10),
}
ALL_FAMILIES = {**FAMILIES, **HELD_OUT_FAMILIES}


def random_subject(rng: random.Random, families: tuple[str, ...] = ()) -> Subject:
    """A model from one family, chosen by weight (among `families` when given; the held-out
    families only when named)."""
    names = [
        name for name in ALL_FAMILIES if name in families or (not families and name in FAMILIES)
    ]
    name = rng.choices(names, weights=[ALL_FAMILIES[n][1] for n in names])[0]
    return ALL_FAMILIES[name][0](rng)
