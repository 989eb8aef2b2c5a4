"""A level-2 workload defined in the tests (JAXBENCH_EXTRA_WORKLOADS), with ten configurations,
and kernels for it: it proves the whole path a later level takes (docs/WORKLOADS.md)."""
