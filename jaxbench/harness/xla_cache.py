"""The trusted side's persistent XLA compilation cache.

The trusted side compiles the same programs again and again: each workload's input creation,
XLA reference and exact answer, in every CLI run, every worker start and every test process.
On the CPU an input creation alone takes 1.5-3 s to compile (the threefry draws), the 7p
reference 6.5 s. JAX's persistent compilation cache keeps the compiled executables on disk,
keyed by the program, the compile options, the backend and the JAX version, so a program
compiled once on this host loads in milliseconds the next time (in another process too).

Where: ``<cache root>/xla`` (the root of :func:`baseline_cache.cache_root`:
``$JAXBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxbench``, else ``~/.cache/jaxbench``),
``JAXBENCH_XLA_CACHE_MB`` in size (least recently used entries go first; 0 turns it off).
The size limit also turns on JAX's file lock, so processes that share the directory (two
workers, the two processes of ``make test``) never read an entry while another writes it.

Trust: the entries are executables the trusted process loads and runs, so only the trusted
side may ever write here. A candidate's children never use a compilation cache
(``JAX_ENABLE_COMPILATION_CACHE=false`` in their environment) and, under bubblewrap, never see
the user's home; the directory is created 0o700 and is not used unless it is this uid's, a
directory, not a link and closed to others (``none-unprivileged`` runs the child as another
uid). In ``none`` mode the child runs as the user and could write here, as it could rewrite
the harness itself: that mode is no sandbox against a hostile candidate.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from typing import Any

from .. import environment
from .baseline_cache import cache_root

# compiles shorter than this are not worth a file (a worker's many tiny programs); a command
# line's input creation and XLA reference at the small profile (0.1-0.15 s each here) are
MIN_COMPILE_S = 0.05

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def directory() -> str:
    return os.path.join(cache_root(), "xla")


def size_bytes() -> int:
    """JAXBENCH_XLA_CACHE_MB in bytes; 0: off."""
    mb = float(environment.get("JAXBENCH_XLA_CACHE_MB"))
    return int(mb * (1 << 20)) if mb > 0 else 0


def _private_dir(path: str) -> str | None:
    """``path`` created 0o700 if missing; None (with the reason on stderr) unless it is this
    uid's own directory, not a link, closed to others."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        print(f"jaxbench: the XLA compilation cache is off: {path}: {exc}", file=sys.stderr)
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        print(
            f"jaxbench: the XLA compilation cache is off: {path} is not a directory of this user closed to others",
            file=sys.stderr,
        )
        return None
    return path


def enable(jax: Any) -> str | None:
    """Turn the cache on in this process (once; later calls return the first answer): the
    directory it uses, or None where it is off (size 0, or a directory it must not trust)."""
    with _LOCK:
        if "dir" in _STATE:
            known: str | None = _STATE["dir"]
            return known
        size = size_bytes()
        path = _private_dir(directory()) if size else None
        if path:
            jax.config.update("jax_compilation_cache_dir", path)
            jax.config.update("jax_compilation_cache_max_size", size)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_S)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        _STATE["dir"] = path
        return path
