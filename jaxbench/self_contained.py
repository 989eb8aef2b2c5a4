"""One-file candidates built from a folder with shared helpers.

A candidate is uploaded, and run in the sandbox, as ONE file: no package beside it is mounted.
Where several candidate files in one folder share code (the Mosaic flash-attention experts, the
red-team corpus's honest kernel), the shared code lives once in a ``_name.py`` file of that
folder and each candidate names it with a one-line ``from ._name import ...``; ``inline_shared``
puts the helper's text in that line's place. Pure text processing: nothing is imported or run.
"""

from __future__ import annotations

import pathlib
import re

SHARED_LINE = re.compile(r"^from \.(_[a-z_]+) import [^\n]*\n", re.M)


def inline_shared(text: str, folder: pathlib.Path, shown_as: str) -> str:
    """``text`` with each ``from ._name import ...`` line replaced by ``folder/_name.py``, between
    two comment lines that name the helper as ``shown_as/_name.py``."""

    def helper(m: re.Match) -> str:
        name = m.group(1)
        body = (folder / f"{name}.py").read_text().rstrip("\n")
        return f"# ---- shared code ({shown_as}/{name}.py) ----\n{body}\n# ---- end of {name}.py ----\n"

    return SHARED_LINE.sub(helper, text)
