"""How a verdict is made from what the child measured: the outcome rules (:mod:`.rules`), the
numerics (:mod:`.numerics`: tolerances, the exact answer, the baseline guard) and the rule that
the Pallas kernels carry the work (:mod:`.pallas_share`)."""
