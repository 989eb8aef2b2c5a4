"""Two candidates evaluated one after the other through ``harness.WarmPool`` cannot see each
other: the first leaves canaries everywhere it can (a file in /tmp, in /dev/shm, in its working
and work directories, an environment variable, a module in ``sys.modules``, an attribute and a
monkeypatch on ``jax.numpy``, a thread that keeps rewriting its /tmp file); the second looks for
every one of them and is correct only if it finds none (it returns twice the answer otherwise).
The first candidate runs the same detector right after planting, so the detector is shown to
see every canary where one exists."""

import json
import secrets

import pytest

from jaxbench import harness

pytestmark = pytest.mark.slow

KERNEL = '''
import functools
import json
import os
import sys
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

TOKEN = "{token}"
FILES = ["/tmp/jxb-" + TOKEN, "/dev/shm/jxb-" + TOKEN, os.path.join(os.getcwd(), "jxb-" + TOKEN),
         os.path.join(sys.modules["__main__"].OPTS["work"], "jxb-" + TOKEN)]


def _kernel(x_ref, s_ref, o_ref, *, factor):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.sum(x * x, axis=-1, keepdims=True) * (1.0 / x.shape[-1]) + 1e-5)
    o_ref[...] = ((x * inv).astype(o_ref.dtype) * s_ref[...]) * factor


def rmsnorm(x, scale, factor):
    b, s, e = x.shape
    return pl.pallas_call(
        functools.partial(_kernel, factor=factor),
        out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype), grid=(b * s // 256,),
        in_specs=[pl.BlockSpec((256, e), lambda i: (i, 0)), pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((256, e), lambda i: (i, 0)),
    )(x.reshape(b * s, e), scale.reshape(1, e)).reshape(x.shape)


def seen():
    """Every canary of TOKEN visible in this process."""
    out = [p for p in FILES if os.path.exists(p)]
    out += [k for k in os.environ if TOKEN in k or TOKEN in os.environ[k]]
    out += [k for k in sys.modules if TOKEN in k]
    out += [a for a in dir(jnp) if TOKEN in a]
    if getattr(jnp.mean, "_jxb_token", None) == TOKEN:
        out.append("jnp.mean patched")
    import threading
    out += [t.name for t in threading.enumerate() if TOKEN in t.name]
    return out
'''

WRITER = (
    KERNEL
    + '''
import threading
import time
import types

for p in FILES:
    with open(p, "w") as f:
        f.write(TOKEN)
os.environ["JXB_" + TOKEN] = TOKEN
sys.modules["jxb_" + TOKEN] = types.ModuleType("jxb_" + TOKEN)
setattr(jnp, "jxb_" + TOKEN, True)
_real_mean = jnp.mean
def _mean(*a, **k):
    return _real_mean(*a, **k) * 2
_mean._jxb_token = TOKEN
jnp.mean = _mean


def _keep():
    while True:
        with open(FILES[0], "w") as f:
            f.write(TOKEN + " " + str(time.time()))
        time.sleep(0.05)


threading.Thread(target=_keep, name="jxb-" + TOKEN, daemon=False).start()
print("PROBE-SEEN " + json.dumps(seen()), flush=True)


def workload(x, scale):
    return rmsnorm(x, scale, 1)
'''
)

READER = (
    KERNEL
    + '''
SEEN = seen()
print("PROBE-SEEN " + json.dumps(SEEN), flush=True)


def workload(x, scale):
    return rmsnorm(x, scale, 2 if SEEN else 1)     # wrong as soon as any canary is visible
'''
)

CANARIES = 4 + 1 + 1 + 1 + 1 + 1  # files, env, module, jnp attribute, patch, thread


def _seen(rec):
    lines = [
        line[len("PROBE-SEEN ") :]
        for line in rec["export_child_output"]["stdout"].splitlines()
        if line.startswith("PROBE-SEEN ")
    ]
    assert len(lines) == 1, rec["export_child_output"]
    return json.loads(lines[0])


def test_the_next_candidate_sees_nothing_the_previous_one_left(baseline_12p):
    token = secrets.token_hex(8)
    kw = dict(
        profile="small", hardware="cpu", baseline=baseline_12p, timeouts={"compile": 60, "check": 60, "timing": 120}
    )
    with harness.WarmPool("cpu", size=1, refill="after") as pool:
        first = pool.evaluate("12p", WRITER.replace("{token}", token), **kw)
        second = pool.evaluate("12p", READER.replace("{token}", token), **kw)
    # the detector sees every canary in the process that planted them ...
    assert first["outcome"].startswith("correct_"), (first["outcome"], first["message"])
    assert len(_seen(first)) == CANARIES, _seen(first)
    # ... and none of them in the next candidate's child, which is therefore correct
    assert _seen(second) == [], _seen(second)
    assert second["outcome"].startswith("correct_"), (second["outcome"], second["message"])
    assert second["errors"]["n_fail"] == 0
    assert (
        first["sandbox"].get("host_uid") != second["sandbox"].get("host_uid")
        or first["sandbox"].get("host_uid") is None
    )


def test_the_reader_fails_when_a_canary_is_visible(baseline_12p):
    """The reader's verdict depends on the canaries: planted in its own process (the writer's
    code before it), it returns the wrong answer and is judged incorrect."""
    token = secrets.token_hex(8)
    both = (
        WRITER.replace("{token}", token).split("\n\ndef workload")[0]
        + READER.replace("{token}", token)[len(KERNEL.replace("{token}", token)) :]
    )
    rec = harness.evaluate(
        "12p",
        both,
        profile="small",
        hardware="cpu",
        baseline=baseline_12p,
        timeouts={"compile": 60, "check": 60, "timing": 120},
    )
    assert rec["outcome"] in ("incorrect", "rejected"), (rec["outcome"], rec["message"])
