# expect: compile_error import_error
# Imports a module that does not exist.
import jax
import triton_tpu_turbo  # noqa

def workload(x, scale):
    return x
