"""``python -m jaxbench.client``: the JAXBench Portal command-line client.

Plain ``requests`` + ``tqdm`` + the standard library: it never imports Django, so agent
frameworks can vendor or call it anywhere. The trace format's rules come from
``jaxbench.traces`` (Django-free), the same code the server validates with.
"""

__version__ = "1.0.0"
