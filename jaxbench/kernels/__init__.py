"""Kernels shipped with the harness: honest Pallas ``examples`` and hand-tuned Tokamax ``experts``.

Each kernel is one self-contained candidate file (the candidate interface), loaded by path."""
