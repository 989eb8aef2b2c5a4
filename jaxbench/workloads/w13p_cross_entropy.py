"""13p Linear head + softmax cross-entropy, mean loss (Llama-3.1-8B output layer; the
fused-linear-cross-entropy benchmark of Tokamax)."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Deviation, Upstream

# Range of the square of the per-draw factor on the hidden states (see create_inputs).
TEMPERATURE_SQ = (0.25, 9.0)
# Upper end of the per-token boost of the label's logit (see create_inputs).
LABEL_BOOST_MAX = 8.0


def create_inputs(cfg, key):
    kh, kw, kl, ks, kb = jax.random.split(key, 5)
    t, h, v = cfg["batch_tokens"], cfg["hidden_dim"], cfg["vocab_size"]
    weight = jax.random.normal(kw, (h, v), dtype=jnp.bfloat16) * cfg["weight_scale"]
    labels = jax.random.randint(kl, (t,), 0, v, dtype=jnp.int32)
    # Two departures from the public inputs, both needed for a scalar mean over many tokens:
    # 1. A random logit temperature per draw, temp^2 ~ U[1/4, 9]. With a fixed scale the
    #    mean loss is the same number for every draw to well within the tolerance, so a
    #    constant would pass. The loss grows about linearly in temp^2, so it is spread evenly.
    lo, hi = TEMPERATURE_SQ
    temp = jnp.sqrt(jax.random.uniform(ks, (), jnp.float32, lo, hi))
    noise = jax.random.normal(kh, (t, h), dtype=jnp.bfloat16).astype(jnp.float32) * temp
    # 2. Hidden states that predict their labels: a component along the label's weight
    #    column raises the label's logit by boost ~ U[0, 8] per token. With unrelated
    #    uniform labels the mean barely depends on them, and a kernel that picks the wrong
    #    column would pass.
    cols = weight.T[labels].astype(jnp.float32)  # (t, h)
    boost = jax.random.uniform(kb, (t, 1), jnp.float32, 0.0, LABEL_BOOST_MAX)
    hidden = noise + boost * cols / jnp.sum(cols * cols, axis=-1, keepdims=True)
    return hidden.astype(jnp.bfloat16), weight, labels


def reference(hidden, weight, labels):
    # bf16 logits and bf16 log-softmax (materialised over the whole vocabulary); the label's
    # log-probability is picked with a float32 one-hot, so the loss is float32.
    logits = jnp.dot(hidden, weight)
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    pick = jax.nn.one_hot(labels, logits.shape[-1], dtype=jnp.float32)
    return jnp.mean(-jnp.sum(pick * log_probs, axis=-1))


def cost(cfg):
    t, h, v = cfg["batch_tokens"], cfg["hidden_dim"], cfg["vocab_size"]
    flops = 2 * t * h * v + 5 * t * v  # the GEMM; max, subtract, exp, sum, pick
    nbytes = 2 * (t * h + h * v) + 4 * t + 4  # no logits round trip in a fused kernel
    return flops, nbytes


WORKLOAD = Workload(
    id="13p",
    slug="13p-cross-entropy",
    public_name="13p_Cross_Entropy",
    title="Linear head + softmax cross-entropy",
    source="maxtext",
    model="Llama-3.1-8B",
    category="loss",
    description="The language-model head and its loss: logits = hidden @ W over a 128,256-word "
    "vocabulary, log-softmax, and the mean negative log-likelihood of the labels "
    "(one float32 scalar).",
    input_names=("hidden", "weight", "labels"),
    profiles={
        "full": {"batch_tokens": 8192, "hidden_dim": 4096, "vocab_size": 128256, "weight_scale": 0.02},
        # A vocabulary that is a multiple of 128 but not a power of two, like 128256;
        # weights scaled by sqrt(4096 / 256) to keep the full profile's logit magnitudes.
        "small": {"batch_tokens": 128, "hidden_dim": 256, "vocab_size": 8064, "weight_scale": 0.08},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="Despite the name, the public baseline materialises the logits; a fused kernel "
    "(Tokamax's linear + cross-entropy) need not. The output is one float32 number, a "
    "mean over 8192 tokens, and the public inputs (hidden ~ N(0,1), W ~ N(0,1) x 0.02, "
    "uniform labels unrelated to hidden) make it nearly input-independent: about 12.6 "
    "for every draw, within the tolerance of 0.136, so a constant would pass, and "
    "re-drawing the labels moves it by about 0.02, so a kernel that gathers the wrong "
    "label column would pass too. Here hidden = t * N(0,1) + a component along the "
    "label's weight column that raises the label's logit by a per-token U[0, 8] (like "
    "a model that predicts its labels), with a per-draw factor t, t^2 ~ U[1/4, 9]. "
    "W and the labels are drawn as in the public suite (the small profile uses W x "
    "0.08 so that its logits have the full size's spread). Cost and bytes count the "
    "GEMM and one read of hidden and W (no logits round trip).",
    upstream=Upstream(
        file="JAXBench/benchmark/13p_Cross_Entropy/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "hidden = t x N(0, 1) plus a component along the label's weight column that raises "
            "the label's logit by U[0, 8] per token, with t^2 ~ U[1/4, 9] per draw (public: "
            "hidden ~ N(0, 1), labels unrelated to it).",
            "With the public inputs the mean loss is about 12.6 for every draw, within the "
            "tolerance of 0.136, so a constant passes, and re-drawing the labels moves it by "
            "about 0.02, so a kernel that gathers the wrong label column passes too.",
        ),
        Deviation(
            "small-profile",
            "The weight is N(0, 1) x 0.08 at the small profile (public: 0.02).",
            "So that the small profile's logits have the full size's spread.",
        ),
    ),
)
