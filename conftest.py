# Tests keep their data apart from a running portal's var/.
import os
import pathlib

os.environ.setdefault("JAXBENCH_VAR_DIR", str(pathlib.Path(__file__).parent / "var" / "test"))
