"""A submission page's first view with real kernels: highlighted on the request, or read back
as the worker and the intake stored them (``leaderboard/highlight.py``).

The load benchmark's kernels are 4 lines, which hides the cost. Here a plain submission holds
50 kernels made from the repository's example and expert files (each a different workload's
slot, a line added so every text differs; 25-290 lines). Each figure is the first request for
that page in a freshly started process that warmed up as a web worker does (``portal.warmup``)
and answered a request for another page, as after a worker restart, on a scratch SQLite database:

* ``on the request``: nothing stored, the page highlights all 50 sources;
* ``stored``: the intake's HTML read back in one query.

    .venv/bin/python benchmarks/highlight_first_view.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _child(pk: int) -> None:
    import time

    import django

    django.setup()
    from django.test import Client

    from portal.warmup import warm_up

    warm_up()  # what a worker does before it serves (portal.wsgi)
    c = Client()
    c.get("/leaderboard/")  # and a first request for another page
    t = time.perf_counter()
    r = c.get(f"/submissions/{pk}/")
    took = time.perf_counter() - t
    assert r.status_code == 200, r.status_code
    print(json.dumps({"ms": took * 1000, "sources": r.content.decode().count('<div class="highlight">')}))


def _setup() -> int:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    from catalog.models import HardwareTarget, Workload
    from catalog.registry_sync import sync_hardware, sync_workloads
    from submissions.models import Candidate, Submission, Team

    sync_hardware()
    sync_workloads()
    files = sorted((ROOT / "jaxbench" / "kernels").glob("*/[0-9]*.py"))
    team = Team.objects.create(name="Bench Lab")
    sub = Submission.objects.create(
        team=team, hardware=HardwareTarget.objects.get(slug="cpu"), kind="kernels", method="m"
    )
    for i, w in enumerate(Workload.objects.filter(level=1).order_by("number")[:50]):
        code = files[i % len(files)].read_text() + f"\n# slot {i}\n"
        Candidate.objects.create(submission=sub, workload=w, index=0, code=code, filename=f"{w.wid}.py")
    sub.publish()
    return sub.pk


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args.child)
    if args.setup:
        print(_setup())
        return
    with tempfile.TemporaryDirectory() as var:
        env = {
            **os.environ,
            "JAXBENCH_VAR_DIR": var,
            "DJANGO_SETTINGS_MODULE": "portal.settings",
            "PYTHONPATH": str(ROOT),
            "JAXBENCH_LOG_LEVEL": "WARNING",
        }
        env.pop("DATABASE_URL", None)
        run = lambda *a: subprocess.run(
            [sys.executable, __file__, *a], env=env, check=True, capture_output=True, text=True
        )
        pk = int(run("--setup").stdout.split()[-1])
        manage = [sys.executable, str(ROOT / "manage.py")]
        rows = {}
        for label, prepare in (
            ("on the request", "from leaderboard.models import HighlightedSource as H; H.objects.all().delete()"),
            ("stored", "from django.core.management import call_command; call_command('highlight_sources')"),
        ):
            subprocess.run([*manage, "shell", "-c", prepare], env=env, check=True, capture_output=True)
            got = [json.loads(run("--child", str(pk)).stdout.splitlines()[-1]) for _ in range(args.repeats)]
            rows[label] = got
            ms = [g["ms"] for g in got]
            print(
                f"{label:>15}: first view {statistics.median(ms):6.1f} ms median "
                f"(min {min(ms):.1f}, max {max(ms):.1f}; {args.repeats} fresh processes), "
                f"{got[0]['sources']} sources shown",
                flush=True,
            )


if __name__ == "__main__":
    main()
