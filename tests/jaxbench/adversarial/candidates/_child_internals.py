# How the attacks on the harness's own code find it and what they do with it: the child script
# runs as __main__ in the candidate's process, and its Job object (spec, manifest, compiled
# programs, phases) is on the heap. Never imported: inlined in each attack's place by the
# corpus loader (see _honest_rmsnorm.py). tests/jaxbench/adversarial/test_corpus_internals.py
# checks that every name an attack reaches for still exists in
# jaxbench/sandbox/child_main.py.


def _the_job():
    """The child's Job object."""
    import gc
    import sys
    main = sys.modules["__main__"]
    for o in gc.get_objects():
        if type(o).__name__ == "Job" and type(o).__module__ == main.__name__:
            return o
    raise RuntimeError("no Job found")


def _swap_baseline(job, make):
    """Replace the job's compiled XLA baseline by ``make(baseline)`` compiled under the SAME
    harness-chosen name (``baseline`` calls the trusted side's exported program)."""
    import sys

    import jax
    main = sys.modules["__main__"]
    with open(main.OPTS["in"] + "/baseline.jaxexport", "rb") as f:
        exported = jax.export.deserialize(bytearray(f.read()))
    program = job.named(make(exported.call), job.spec["baseline_name"])
    job.baseline = jax.jit(program).lower(*main.input_specs(job.manifest)).compile()


def _time_instead(job, fn):
    """For the timing phase only, run ``fn`` compiled under the candidate's harness-chosen name
    in place of the candidate's compiled program."""
    import sys

    import jax
    real_timing = type(job).timing

    def timing(self, *args, **kw):
        main = sys.modules["__main__"]
        real = self.compiled
        self.compiled = jax.jit(self.named(fn)).lower(*main.input_specs(self.manifest)).compile()
        try:
            return real_timing(self, *args, **kw)
        finally:
            self.compiled = real
    type(job).timing = timing
