"""Readers of what a run leaves behind and of what a candidate hands over: the profiler trace
(:mod:`.xplane`), the facts and FLOPs of an exported program (:mod:`.hlo_cost`), and the same
FLOP walk over a traced jaxpr (:mod:`.jaxpr_cost`, for the benchmarks' comparison)."""
