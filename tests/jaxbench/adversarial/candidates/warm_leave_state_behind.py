# expect: correct_slower
"""Leaves state behind for the NEXT candidate, in case its child were reused.

At import it: monkeypatches jax and numpy functions the next candidate (or the harness's own
child code) would use (``jnp.mean``, ``jax.lax.rsqrt``, ``np.allclose``,
``jax.numpy.zeros_like``), plants a fake module in
``sys.modules`` (``numpy.testing``) and an attribute on ``jax``, writes files in /tmp, in
/dev/shm and in its work directory, sets environment variables (``XLA_FLAGS``,
``JAX_PLATFORMS``, ``PYTHONPATH``), and starts a non-daemon thread that keeps rewriting the /tmp
file. Its own kernel avoids everything it breaks, so its own verdict is that of an honest
kernel: ``correct_slower``. Defence: a child serves ONE candidate and exits; the next one gets
a fresh process, /tmp and /dev/shm (tests/jaxbench/harness/test_warm_isolation.py proves a canary left
this way is invisible to the next candidate through the warm pool).
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job  # inlined on upload: see _child_internals.py

import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402

_JOB = _the_job()
_real_bur = jax.block_until_ready


def _poison(*a, **k):
    return jnp.full((), 7.0)


jnp.mean = _poison
jax.numpy.zeros_like = _poison
np.allclose = lambda *a, **k: True
jax.lax.rsqrt = lambda v: v * 0 + 7.0       # the kernel uses _rsqrt, bound before
jax.jxb_left_behind = "JXB-STATE-MARKER"
sys.modules["numpy.testing"] = types.ModuleType("numpy.testing")
sys.modules["jxb_left_behind"] = types.ModuleType("jxb_left_behind")
os.environ.update(XLA_FLAGS="--xla_cpu_use_thunk_runtime=false", JAX_PLATFORMS="cpu,tpu",
                  PYTHONPATH="/tmp", JXB_LEFT_BEHIND="JXB-STATE-MARKER")
for d in ("/tmp", "/dev/shm", os.getcwd(), sys.modules["__main__"].OPTS["work"]):
    try:
        with open(os.path.join(d, "jxb_left_behind.py"), "w") as f:
            f.write("MARK = 'JXB-STATE-MARKER'\n")
    except OSError:
        pass


def _keep_writing():
    while True:
        try:
            with open("/tmp/jxb_left_behind.txt", "w") as f:
                f.write(f"JXB-STATE-MARKER {time.time()}\n")
        except OSError:
            pass
        time.sleep(0.2)


threading.Thread(target=_keep_writing, daemon=False).start()


def workload(x, scale):
    return rmsnorm(x, scale)
