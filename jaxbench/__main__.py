"""``python -m jaxbench`` (see :mod:`jaxbench.cli`)."""

from .cli import run

if __name__ == "__main__":
    run()
