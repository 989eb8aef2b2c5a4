"""Readers of what a run leaves behind: the profiler trace (:mod:`.xplane`) and the FLOP walk
over a traced program (:mod:`.jaxpr_cost`)."""
