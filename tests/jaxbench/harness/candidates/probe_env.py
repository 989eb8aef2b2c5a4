# expect: rejected no_pallas_call
# Isolation probe: dumps the environment it was given (the test asserts no secret from the
# parent's environment reached it).
import json
import os

import jax.numpy as jnp

print("PROBE-ENV " + json.dumps(dict(os.environ)), flush=True)


def workload(x, scale):
    return x * scale
