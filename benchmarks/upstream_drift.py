"""Upstream drift: has the public suite changed a file since the commit a workload matches?

For every workload with a declared upstream file (jaxbench/workloads/upstream.py) it prints the
recorded commit, the newest commit that touched the file in the given copy of the public
repository, how many commits changed it since, and ``git diff --stat`` of the change; then a
summary. Run it on a fresh copy before and after updating workloads (docs/WORKLOADS.md,
"Upstream tracking"). Prints figures; asserts nothing; exit status 0 unless the copy is unusable.

``.venv/bin/python benchmarks/upstream_drift.py [--mirror PATH | --suite PATH] [--rev REV]``

``--mirror``: a git copy of the public repository (bare, or a clone's work tree); the default is
the read-only mirror this project keeps. ``--suite``: a plain copy of the ``JAXBench/`` folder
without history (an archive): each file is then compared with its text at the recorded commit,
read from ``--mirror`` (or the default mirror when there is one), else reported present/absent.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxbench import workloads  # noqa: E402
from jaxbench.workloads.upstream import SUITE_DIR  # noqa: E402
from jaxbench.workloads.upstream_git import GitError, Mirror, Suite  # noqa: E402

DEFAULT_MIRROR = "/work/.mirror/AI-Hypercomputer+accelerator-agents/repo"


def _mirror_rows(mirror: Mirror, rev: str) -> list[dict]:
    rows = []
    for wl in workloads.all_workloads():
        up = wl.upstream
        if up is None:
            continue
        row = {"id": wl.id, "file": up.file, "recorded": up.commit, "stat": ""}
        newest = mirror.last_commit(up.file, rev)
        row["newest"] = newest
        if newest is None:
            row["state"] = "missing"  # the file is gone (renamed or deleted) at rev
        elif not mirror.has_commit(up.commit):
            row["state"] = "unknown commit"
        elif newest == up.commit:
            row["state"] = "same"
        else:
            row["since"] = mirror.count_between(up.commit, newest, up.file)
            row["state"] = "changed" if row["since"] else "older"  # recorded is newer than rev
            row["stat"] = mirror.diff_stat(up.commit, newest, up.file)
            row["subject"] = mirror.subject(newest)
            row["date"] = mirror.date(newest)
        rows.append(row)
    return rows


def _suite_rows(suite: Suite, mirror: Mirror | None) -> list[dict]:
    rows = []
    for wl in workloads.all_workloads():
        up = wl.upstream
        if up is None:
            continue
        row = {"id": wl.id, "file": up.file, "recorded": up.commit, "newest": None, "stat": ""}
        text = suite.read(up.file)
        if text is None:
            row["state"] = "missing"
        elif mirror is None or not mirror.has_commit(up.commit):
            row["state"] = "present (no history to compare)"
        else:
            same = mirror.show(up.commit, up.file) == text
            row["state"] = "same" if same else "changed"
            if not same:
                row["stat"] = "text differs from the recorded commit's"
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", help="git copy of the public repository (default: the project's mirror)")
    ap.add_argument("--suite", help="a plain copy of the public JAXBench/ folder, without history")
    ap.add_argument("--rev", default="HEAD", help="the revision of the mirror to compare with")
    args = ap.parse_args()
    try:
        if args.mirror or not args.suite:
            mirror: Mirror | None = Mirror(args.mirror or DEFAULT_MIRROR)
        else:  # a plain copy: the recorded commits' text from the default mirror, when there is one
            try:
                mirror = Mirror(DEFAULT_MIRROR)
            except GitError:
                mirror = None
        if args.suite:
            rows = _suite_rows(Suite(args.suite), mirror)
            where = f"suite {args.suite}"
        else:
            assert mirror is not None
            rows = _mirror_rows(mirror, args.rev)
            head = mirror.head(args.rev)
            where = f"mirror {mirror.git_dir} at {args.rev} = {head}"
    except (GitError, FileNotFoundError) as exc:
        print(f"cannot read the public repository: {exc}", file=sys.stderr)
        return 2
    print(f"upstream drift against {where}")
    print(f"{'workload':<9}{'recorded':<10}{'newest':<10}{'state':<10}{'since':>6}  file")
    for r in rows:
        newest = (r["newest"] or "-")[:7]
        since = str(r.get("since", "")) if r["state"] == "changed" else ""
        print(f"{r['id']:<9}{r['recorded'][:7]:<10}{newest:<10}{r['state']:<10}{since:>6}  {r['file']}")
        if r["state"] == "changed" and "subject" in r:
            print(f"{'':<9}newest: {r['date']} {r['subject']}")
        for line in r["stat"].splitlines():
            print(f"{'':<9}{line.strip()}")
    states: dict[str, list[str]] = {}
    for r in rows:
        states.setdefault(r["state"], []).append(r["id"])
    print()
    print(f"{len(rows)} workloads with an upstream file under {SUITE_DIR}/:")
    for state, ids in sorted(states.items()):
        shown = ", ".join(ids) if state != "same" else f"{len(ids)} workloads"
        print(f"  {state}: {len(ids)}" + (f" ({shown})" if state != "same" else ""))
    if states.get("changed") or states.get("missing"):
        print('to update: docs/WORKLOADS.md, "Upstream tracking"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
