# expect: rejected memorized_output
# Memorises one input set: computes, at import, RMSNorm of the inputs a fixed key would give
# (the public suite checks one fixed input set) and returns that constant through a kernel.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"batch": 2, "seq_len": 256, "emb_dim": 512, "epsilon": 1e-5}


def _memo():
    k1, k2 = jax.random.split(jax.random.key(0), 2)
    x = jax.random.normal(k1, (CONFIG["batch"], CONFIG["seq_len"], CONFIG["emb_dim"]), jnp.bfloat16)
    scale = jax.random.normal(k2, (CONFIG["emb_dim"],), jnp.bfloat16) * 0.1 + 1.0
    xf = x.astype(jnp.float32)
    y = (xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype)
    return jax.device_get(y * scale)


MEMO = _memo()


def _copy(m_ref, o_ref):
    o_ref[...] = m_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    memo = jnp.asarray(MEMO).reshape(b * s, e)
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype))(memo).reshape(x.shape)
