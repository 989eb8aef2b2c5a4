"""Read a copy of the public repository with ``git`` (the upstream drift script, the null-kernel
audit's public side and the mirror test use it). Nothing here reaches the network.

A copy is either a bare git directory (a mirror) or a work tree with its ``.git``; both are read
with ``git --git-dir``. A plain folder without git history (a ``JAXBench/`` folder copied out of
an archive) has files but no commits: :class:`Suite` reads those.
"""

from __future__ import annotations

import pathlib
import subprocess

from .upstream import SUITE_DIR


class GitError(RuntimeError):
    pass


class Mirror:
    """A git copy of the public repository (bare, or a work tree's ``.git``)."""

    def __init__(self, path: str | pathlib.Path):
        p = pathlib.Path(path)
        if (p / ".git").exists():
            p = p / ".git"
        if not (p / "HEAD").is_file() or not (p / "objects").is_dir():
            raise GitError(f"{path} is not a git repository (no HEAD and objects/)")
        self.git_dir = p

    def _git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def head(self, rev: str = "HEAD") -> str:
        return self._git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()

    def has_commit(self, commit: str) -> bool:
        return bool(self._git("cat-file", "-t", commit, check=False).strip() == "commit")

    def last_commit(self, path: str, rev: str = "HEAD") -> str | None:
        """The newest commit at or before ``rev`` that changed ``path`` (None: never)."""
        out = self._git("log", "-1", "--format=%H", rev, "--", path).strip()
        return out or None

    def commits(self, path: str, rev: str = "HEAD") -> list[str]:
        """Every commit that changed ``path``, newest first."""
        return self._git("log", "--format=%H", rev, "--", path).split()

    def touches(self, commit: str, path: str) -> bool:
        """Whether ``commit`` changed ``path`` (against its first parent; a root commit adds it)."""
        out = self._git("show", "--format=", "--name-only", "--first-parent", commit, "--", path)
        return path in out.split()

    def date(self, commit: str) -> str:
        """The committer date of ``commit``, YYYY-MM-DD."""
        return self._git("show", "-s", "--format=%cs", commit).strip()

    def subject(self, commit: str) -> str:
        return self._git("show", "-s", "--format=%s", commit).strip()

    def show(self, commit: str, path: str) -> str:
        """The text of ``path`` at ``commit``."""
        return self._git("show", f"{commit}:{path}")

    def diff_stat(self, old: str, new: str, path: str) -> str:
        """``git diff --stat`` of ``path`` between two commits ('' when unchanged)."""
        return self._git("diff", "--stat", old, new, "--", path).rstrip()

    def count_between(self, old: str, new: str, path: str) -> int:
        """How many commits after ``old`` up to ``new`` changed ``path``."""
        return len(self._git("log", "--format=%H", f"{old}..{new}", "--", path).split())


class Suite:
    """A plain copy of the public ``JAXBench/`` folder (or of the repository holding it)."""

    def __init__(self, path: str | pathlib.Path):
        p = pathlib.Path(path)
        if (p / SUITE_DIR / "benchmark").is_dir():
            p = p / SUITE_DIR
        if not (p / "benchmark").is_dir():
            raise FileNotFoundError(f"{path} holds no {SUITE_DIR}/benchmark folder")
        self.root = p

    def read(self, path: str) -> str | None:
        """The text of ``path`` (a path in the repository, ``JAXBench/...``); None if absent."""
        rel = path.removeprefix(f"{SUITE_DIR}/")
        f = self.root / rel
        return f.read_text(encoding="utf-8") if f.is_file() else None
