# expect: rejected reads_reference
# Tries the harness under the name it had before it became the jaxbench package.
from evaluator.bench import workloads

_REF = workloads.get("12p").baseline("small")


def workload(x, scale):
    return _REF(x, scale)
