"""The JAXBench harness: workloads, gates, timing, sandbox and CLI.

Nothing under jaxbench imports Django, so agent frameworks can run exactly what the
portal runs (``python -m jaxbench ...``) and the sandboxed child stays small.
"""

HARNESS_VERSION = "1.2.0"  # 1.1: exact-answer correctness, baseline timed side by side; 1.2: adaptive sampling
