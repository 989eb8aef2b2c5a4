"""A candidate whose output is a 0-d array (13p's mean loss, as the public baseline returns it)
is stored and judged as 0-d: numpy's ascontiguousarray makes it (1,), which the trusted side
then refused as a shape mismatch."""

from jaxbench import harness
from jaxbench.record import CORRECT_OUTCOMES

SCALAR_LOSS = '''
import jax
import jax.numpy as jnp

def workload(hidden, weight, labels):
    logits = jnp.dot(hidden, weight)
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    one_hot = jax.nn.one_hot(labels, logits.shape[-1])
    return jnp.mean(-jnp.sum(one_hot * log_probs, axis=-1))
'''


def test_scalar_output_candidate_is_correct():
    rec = harness.evaluate("13p", SCALAR_LOSS, profile="small", hardware="cpu", require_pallas=False)
    assert rec["outcome"] in CORRECT_OUTCOMES, (rec["outcome"], rec["error_category"], rec["message"])
