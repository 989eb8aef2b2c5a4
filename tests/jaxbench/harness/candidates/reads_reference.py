# expect: rejected reads_reference
# Tries to call the harness's own reference implementation.
from jaxbench import workloads

_REF = workloads.get("12p").baseline("small")


def workload(x, scale):
    return _REF(x, scale)
