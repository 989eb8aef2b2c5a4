"""Every page and API endpoint under the load benchmark's database (a benchmark, not a test).

``benchmarks/leaderboard_load.py`` fills the database and calls this. Each row of ``plan`` is one
page or endpoint (with its filters, pagination, exports) as an anonymous visitor, a team member
(session for pages, token for the API) or staff; it is timed twice under gunicorn: *cold* with
caching disabled (every request recomputes) and *warm* with the portal's settings (its
per-process cache) after two requests per path have filled both workers. ``fresh_worker`` times
the first request of a worker that has served nothing (a restart: a new process, empty local
caches, no database connection yet), booted with the portal's own settings.

The routes come from the URL resolver (``inventory``, in the child): a GET route that no row
covers and ``NOT_MEASURED`` does not name is printed as unmeasured, so a new endpoint is not
forgotten. Every figure is held against one budget, ``BUDGET_MS``.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import time
import urllib.error
import urllib.request
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET_MS = 100.0
ROLES = ("anon", "member", "staff")

# GET routes not timed here, and why (any other route without a row is reported as unmeasured)
NOT_MEASURED = {
    "admin:*": "Django's admin (staff only; its own pages, not the portal's)",
    "logout": "POST only",
    "token-create": "POST only",
    "token-revoke": "POST only",
    "submissions:submission-publish": "POST only",
    "submissions:submission-withdraw": "POST only",
    "submissions:team-leave": "POST only",
    "submissions:team-rotate-code": "POST only",
    "submissions:team-remove-member": "POST only",
    "submissions:team-make-owner": "POST only",
    "leaderboard:submission-rescore": "POST only (staff)",
    "api-submission-trace": "POST only (an upload: benchmarks/trace_upload.py)",
    "submissions:submit-trace": "POST only (a GET goes to the submit page)",
    "submissions:test-run-delete": "POST only",
    "api-submission-publish": "POST only",
    "api-submission-withdraw": "POST only",
}


# --------------------------------------------------------------------------------------------
# Child (Django set up): what the rows need from the filled database
# --------------------------------------------------------------------------------------------


def inventory() -> list[dict]:
    """Every named route: its pattern, name and, for a DRF viewset, the methods it maps."""
    from django.urls import URLPattern, URLResolver, get_resolver  # deferred: the child sets Django up

    out = []

    def walk(patterns, prefix, ns):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), ns + (f"{p.namespace}:" if p.namespace else ""))
            elif isinstance(p, URLPattern) and p.name:
                actions = getattr(p.callback, "actions", None)
                out.append(
                    {"route": prefix + str(p.pattern), "name": ns + p.name, "methods": sorted(actions or ["get"])}
                )

    walk(get_resolver().url_patterns, "/", "")
    return out


def ensure_test_run(user, hardware: str, wids: list[str]) -> tuple[int, int]:
    """(pk, an evaluation's pk) of a test run of ``user``'s, made through the intake if it has
    none live (its rows wait in the queue: no worker runs here)."""
    from evaluator.models import Evaluation  # deferred: the child sets Django up
    from submissions.intake.test_runs import create_test_run
    from submissions.models import Submission, Team

    run = Submission.test_runs.owned_by(user).order_by("id").first()
    if run is None:
        team = Team.objects.filter(memberships__user=user).order_by("id").first()
        files = [(f"{wid}.py", "def workload(x):\n    return x\n") for wid in wids]
        run = create_test_run(team, user, hardware, files)
    return run.pk, Evaluation.objects.filter(candidate__submission=run).values_list("id", flat=True).first()


def describe(member: str, staff: str, hardware: str) -> dict:
    """Ids, slugs, a session and a token per signed-in role, and the route inventory."""
    from django.contrib.auth import get_user_model  # deferred: the child sets Django up
    from django.db.models import Count
    from django.test import Client

    from catalog.models import Baseline, ExpertReference, Workload
    from evaluator.models import Evaluation
    from submissions.models import ApiToken, Candidate, Submission, Team

    users = get_user_model().objects
    roles = {"member": users.get(username=member), "staff": users.get(username=staff)}
    sessions, tokens = {}, {}
    for role, user in roles.items():
        client = Client()
        client.force_login(user)  # a database session, as a browser's after signing in
        sessions[role] = client.cookies["sessionid"].value
        tokens[role] = ApiToken.issue(user, "load benchmark")[1]
    public = list(Submission.objects.public().order_by("id").values_list("id", flat=True))
    mine = Submission.objects.filter(team__memberships__user=roles["member"])
    private = list(mine.filter(published_at__isnull=True).order_by("id").values_list("id", flat=True))
    sizes = dict(
        Candidate.objects.filter(submission_id__in=public)
        .values_list("submission_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    big = max(public, key=lambda pk: (sizes.get(pk, 0), -pk))
    evs = Evaluation.objects.filter(candidate__submission_id=big, stage=Evaluation.MAIN).order_by("id")
    held_public = Evaluation.objects.filter(candidate__submission_id__in=public, review=Evaluation.HELD).order_by("id")
    first = Workload.objects.order_by("level", "number").first()
    wids = list(Workload.objects.filter(level=1).order_by("number").values_list("wid", flat=True)[:3])
    later = list(Workload.objects.filter(level__gt=1).order_by("level", "number").values_list("slug", flat=True)[:1])
    test_run, test_run_eval = ensure_test_run(roles["member"], hardware, wids)
    return {
        "public": public,
        "private": private,
        "big": big,
        "big_candidates": sizes.get(big, 0),
        "big_evaluations": Evaluation.objects.filter(candidate__submission_id=big).count(),
        "big_compile_errors": Evaluation.objects.filter(
            candidate__submission_id=big, state=Evaluation.DONE, outcome="compile_error"
        ).count(),
        # three of level 1's pages and a later level's first (a Pallas baseline's page)
        "workloads": list(Workload.objects.filter(level=1).order_by("number").values_list("slug", flat=True)[:3])
        + later,
        "level2": bool(later),
        "wids": wids,
        "test_run": test_run,
        "test_run_evaluation": test_run_eval,
        "member_team": Team.objects.filter(memberships__user=roles["member"]).order_by("id").first().slug,
        "eval_correct": evs.filter(outcome__startswith="correct", review="").values_list("id", flat=True).first(),
        "eval_failed": evs.exclude(outcome__startswith="correct").values_list("id", flat=True).first(),
        "eval_held": held_public.values_list("id", flat=True).first(),
        "baseline": Baseline.objects.filter(workload=first).values_list("id", flat=True).first(),
        "expert": ExpertReference.objects.values_list("id", flat=True).first(),
        "sessions": sessions,
        "tokens": tokens,
        "counts": {
            "submissions": Submission.objects.count(),
            "candidates": Candidate.objects.count(),
            "evaluations": Evaluation.objects.count(),
            "held": Evaluation.objects.filter(review=Evaluation.HELD).count(),
            "reviewed": Evaluation.objects.filter(reviewed_at__isnull=False).count(),
        },
        "inventory": inventory(),
    }


# --------------------------------------------------------------------------------------------
# Parent: the rows, timed over HTTP
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Row:
    label: str
    names: tuple[str, ...]  # the URL names it covers
    role: str  # anon, member or staff
    paths: tuple[str, ...]
    status: int = 200  # what every response must answer


def plan(info: dict, hw: str) -> list[Row]:
    """Every GET page and endpoint, with the filters, pagination and exports a visitor can ask for."""
    pub, big, priv = info["public"], info["big"], info["private"]
    pair = [f"/compare/?s={a}&s={b}" for a, b in zip(pub[:4], pub[4:8])] or [f"/compare/?s={pub[0]}&s={pub[-1]}"]
    four = "&".join(f"s={s}" for s in pub[:4])
    wl, wid = info["workloads"], info["wids"]
    ev, team = info["eval_correct"], info["member_team"]
    lb, api = "/leaderboard/", "/api/v1/"
    # a page in the middle of the big submission's evaluations, the last of the largest pages (the
    # API's most, portal.api.common.EvaluationPagination), the staff's last
    mid, last = max(1, info["big_evaluations"] // 200), max(1, math.ceil(info["big_evaluations"] / 250))
    staff_last = max(1, math.ceil(info["counts"]["submissions"] / 100))
    sets = ["production", "kernelbench", "expert"] + (["level2"] if info.get("level2") else [])
    rows = [
        # pages anyone sees
        Row("home", ("home",), "anon", ("/",)),
        Row("docs", ("docs",), "anon", ("/docs/",)),
        Row("health", ("health",), "anon", ("/health/",)),
        Row("favicon", ("favicon",), "anon", ("/favicon.ico",), 302),
        Row(
            "account forms (anon)",
            ("signup", "login", "password_reset", "password_reset_done", "password_reset_complete"),
            "anon",
            (
                "/accounts/signup/",
                "/accounts/login/",
                "/accounts/password/reset/",
                "/accounts/password/reset/done/",
                "/accounts/reset/done/",
            ),
        ),
        Row("password reset link (bad)", ("password_reset_confirm",), "anon", ("/accounts/reset/MQ/bad-token/",)),
        Row("trace format docs", ("submissions:trace-format",), "anon", ("/docs/trace-format/",)),
        Row(
            "trace example, schema",
            ("submissions:trace-example", "submissions:trace-schema"),
            "anon",
            ("/docs/trace-format/example.jsonl", "/schemas/jaxbench-trace-1.json"),
        ),
        Row("leaderboard (default)", ("leaderboard:index",), "anon", (lb, f"{lb}?hardware={hw}")),
        Row("leaderboard set tabs", ("leaderboard:index",), "anon", tuple(f"{lb}?hardware={hw}&set={s}" for s in sets)),
        Row(
            "leaderboard n, sort, p, filters",
            ("leaderboard:index",),
            "anon",
            (
                f"{lb}?hardware={hw}&set=production&n=10&sort=-fast",
                f"{lb}?hardware={hw}&n=1&sort=team&p=1.5",
                f"{lb}?hardware={hw}&method=iterative&model=Claude",
            ),
        ),
        Row(
            "leaderboard export csv/json",
            ("leaderboard:index",),
            "anon",
            (f"{lb}?hardware={hw}&format=csv", f"{lb}?hardware={hw}&set=expert&format=json"),
        ),
        Row(
            "workload list",
            ("leaderboard:workload-list",),
            "anon",
            ("/workloads/", "/workloads/?set=production") + (("/workloads/?set=level2",) if info.get("level2") else ()),
        ),
        Row("workload page", ("leaderboard:workload-detail",), "anon", tuple(f"/workloads/{s}/" for s in wl)),
        Row(
            "workload page ?versions=all",
            ("leaderboard:workload-detail",),
            "anon",
            (f"/workloads/{wl[0]}/?versions=all",),
        ),
        Row(
            "workload results csv/json",
            ("leaderboard:workload-results-csv", "leaderboard:workload-results-json"),
            "anon",
            (f"/workloads/{wl[0]}/results.csv", f"/workloads/{wl[1]}/results.json"),
        ),
        Row("workload starter.py", ("catalog:workload-starter",), "anon", (f"/workloads/{wl[0]}/starter.py",)),
        Row(
            f"submission page ({info['big_candidates']:,} samples)",
            ("leaderboard:submission-detail",),
            "anon",
            tuple(f"/submissions/{s}/" for s in [big, *pub[1:4]]),
        ),
        Row(
            "submission export csv/json",
            ("leaderboard:submission-detail",),
            "anon",
            (f"/submissions/{big}/?format=csv", f"/submissions/{big}/?format=json"),
        ),
        Row(
            "trace view",
            ("leaderboard:submission-detail",),
            "anon",
            tuple(f"/submissions/{big}/?workload={w}" for w in wid),
        ),
        Row(
            "trace export csv",
            ("leaderboard:submission-detail",),
            "anon",
            (f"/submissions/{big}/?workload={wid[0]}&format=csv",),
        ),
        Row(
            "submission progress.json",
            ("leaderboard:submission-progress",),
            "anon",
            (f"/submissions/{big}/progress.json",),
        ),
        Row("compare 2", ("leaderboard:compare",), "anon", tuple(pair)),
        Row("compare 4", ("leaderboard:compare",), "anon", (f"/compare/?{four}",)),
        # a team member's pages
        Row(
            "my submissions",
            ("leaderboard:submission-list",),
            "member",
            ("/submissions/", f"/submissions/?team={team}"),
        ),
        Row(
            "private submission page",
            ("leaderboard:submission-detail",),
            "member",
            tuple(f"/submissions/{s}/" for s in priv[:3]),
        ),
        Row("account", ("account",), "member", ("/account/",)),
        Row(
            "password change",
            ("password_change", "password_change_done"),
            "member",
            ("/accounts/password/change/", "/accounts/password/change/done/"),
        ),
        Row("submit form", ("submissions:submit",), "member", ("/submit/",)),
        Row(
            "team pages",
            (
                "submissions:team-detail",
                "submissions:team-create",
                "submissions:team-join",
                "submissions:team-join-code",
            ),
            "member",
            (f"/teams/{team}/", "/teams/new/", "/teams/join/", "/teams/join/no-such-code/"),
        ),
        Row(
            "test runs (own list, form)",
            ("leaderboard:test-run-list", "submissions:test-run-new"),
            "member",
            ("/test-runs/", "/test-runs/new/"),
        ),
        Row(
            "test run page, promote form",
            ("leaderboard:test-run-detail", "submissions:test-run-promote"),
            "member",
            (f"/test-runs/{info['test_run']}/", f"/test-runs/{info['test_run']}/promote/"),
        ),
        # staff
        Row("review list (held)", ("leaderboard:review-list",), "staff", ("/review/",)),
        Row("review page", ("leaderboard:review-detail",), "staff", (f"/review/{info['eval_held']}/",)),
        Row("submission page (staff)", ("leaderboard:submission-detail",), "staff", (f"/submissions/{big}/",)),
        # the API
        Row("api schema", ("api-schema",), "anon", ("/api/schema/",)),
        Row("api docs, redoc", ("api-docs", "api-redoc"), "anon", ("/api/docs/", "/api/redoc/")),
        Row("api me", ("api-me",), "member", (f"{api}me/",)),
        Row(
            "api workloads",
            ("api-workload-list", "api-workload-detail"),
            "anon",
            (f"{api}workloads/", f"{api}workloads/?source=maxtext&expert=true", f"{api}workloads/{wid[0]}/"),
        ),
        Row(
            "api hardware",
            ("api-hardware-list", "api-hardware-detail"),
            "anon",
            (f"{api}hardware/", f"{api}hardware/?platform=tpu", f"{api}hardware/{hw}/"),
        ),
        Row(
            "api baselines",
            ("api-baseline-list", "api-baseline-detail"),
            "anon",
            (
                f"{api}baselines/",
                f"{api}baselines/?hardware={hw}&workload={wid[0]}",
                f"{api}baselines/{info['baseline']}/",
            ),
        ),
        Row(
            "api experts",
            ("api-expert-list", "api-expert-detail"),
            "anon",
            (
                f"{api}experts/",
                f"{api}experts/?hardware={hw}&outcome=correct_faster",
                f"{api}experts/{info['expert']}/",
            ),
        ),
        Row(
            "api leaderboard",
            ("api-leaderboard",),
            "anon",
            (
                f"{api}leaderboard/?hardware={hw}&n=20",
                f"{api}leaderboard/?hardware={hw}&set=expert",
                f"{api}leaderboard/?hardware={hw}&set=production&sort=-fast&p=1.5",
            ),
        ),
        Row(
            "api leaderboard submission",
            ("api-leaderboard-submission",),
            "anon",
            (f"{api}leaderboard/submissions/{big}/", f"{api}leaderboard/submissions/{big}/?n=10&source=evaluated"),
        ),
        Row(
            "api submission detail",
            ("api-submission-detail",),
            "anon",
            tuple(f"{api}submissions/{s}/" for s in [big, *pub[1:4]]),
        ),
        Row("api submission status", ("api-submission-status",), "anon", (f"{api}submissions/{big}/status/",)),
        Row(
            "api evaluations",
            ("api-submission-evaluations",),
            "anon",
            (
                f"{api}submissions/{big}/evaluations/",
                f"{api}submissions/{big}/evaluations/?page={mid}",
                f"{api}submissions/{big}/evaluations/?page_size=250&page={last}",
            ),
        ),
        Row(
            "api evaluations filtered",
            ("api-submission-evaluations",),
            "anon",
            (
                f"{api}submissions/{big}/evaluations/?workload={wid[1]}",
                f"{api}submissions/{big}/evaluations/?outcome=correct_faster&stage=main",
                f"{api}submissions/{big}/evaluations/?outcome=held_for_review",
                # the second page of a filtered list, where it has one (100 a page)
                *(
                    [f"{api}submissions/{big}/evaluations/?state=done&outcome=compile_error&page=2"]
                    * (info["big_compile_errors"] > 100)
                ),
            ),
        ),
        Row(
            "api run log",
            ("api-evaluation-log",),
            "anon",
            tuple(f"{api}evaluations/{e}/log/" for e in (ev, info["eval_failed"], info["eval_held"]) if e),
        ),
        Row(
            "api own submissions",
            ("api-submission-list",),
            "member",
            (f"{api}submissions/", f"{api}submissions/?team={team}&published=false"),
        ),
        Row(
            "api private detail",
            ("api-submission-detail",),
            "member",
            tuple(f"{api}submissions/{s}/" for s in priv[:3]),
        ),
        Row(
            "api test runs",
            ("api-test-run-list", "api-test-run-detail", "api-test-run-log"),
            "member",
            (
                f"{api}test-runs/",
                f"{api}test-runs/{info['test_run']}/",
                f"{api}test-runs/{info['test_run']}/evaluations/{info['test_run_evaluation']}/log/",
            ),
        ),
        Row(
            "api submissions (staff: all)",
            ("api-submission-list",),
            "staff",
            (
                f"{api}submissions/",
                f"{api}submissions/?page={staff_last}",
                f"{api}submissions/?published=true&hardware={hw}&kind=trace",
                f"{api}submissions/?page_size=1000",
            ),
        ),
    ]
    return rows


def unmeasured(routes: list[dict], rows: list[Row]) -> list[dict]:
    """The GET routes that no row covers and NOT_MEASURED does not name."""
    covered = {n for r in rows for n in r.names}
    return [
        r
        for r in routes
        if "get" in r["methods"]
        and r["name"] not in covered
        and r["name"] not in NOT_MEASURED
        and not (r["name"].split(":")[0] + ":*" in NOT_MEASURED and ":" in r["name"])
    ]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # a redirect is the answer measured (a login redirect would say the session failed)


_OPENER = urllib.request.build_opener(_NoRedirect)


def fetch(url: str, headers: dict | None = None, timeout: float = 300) -> tuple[float, int, int]:
    """(seconds, status, bytes) of one GET on a new connection, the body read in full."""
    req = urllib.request.Request(url, headers=headers or {})
    t = time.perf_counter()
    try:
        with _OPENER.open(req, timeout=timeout) as r:
            size, status = len(r.read()), r.status
    except urllib.error.HTTPError as e:
        size, status = len(e.read()), e.code
    return time.perf_counter() - t, status, size


def headers(info: dict, role: str, path: str) -> dict:
    """A team member's or staff's credentials: the API by token, pages by the session cookie."""
    if role == "anon":
        return {}
    if path.startswith("/api/v1/"):
        return {"Authorization": f"Bearer {info['tokens'][role]}"}
    return {"Cookie": f"sessionid={info['sessions'][role]}"}


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def measure(base: str, row: Row, info: dict, n: int, max_seconds: float) -> dict:
    """Two requests per path first (each gunicorn worker's first: not counted), then ``n``
    sequential requests cycling over the paths, fewer past ``max_seconds`` (at least one per
    path). p50/p95 in ms; ``bad``: responses other than ``row.status``."""
    bad = []
    for p in row.paths:
        for _ in range(2):
            _, status, _ = fetch(base + p, headers(info, row.role, p))
            if status != row.status:
                bad.append(f"{p}: {status}")
    ts = []
    start = time.monotonic()
    for i in range(n):
        p = row.paths[i % len(row.paths)]
        t, status, _ = fetch(base + p, headers(info, row.role, p))
        ts.append(1000 * t)
        if status != row.status:
            bad.append(f"{p}: {status}")
        if time.monotonic() - start > max_seconds and i + 1 >= len(row.paths):
            break
    return {
        "p50_ms": round(percentile(ts, 0.5), 1),
        "p95_ms": round(percentile(ts, 0.95), 1),
        "max_ms": round(max(ts), 1),
        "n": len(ts),
        "bad": sorted(set(bad))[:5],
    }


def measure_all(base: str, rows: list[Row], info: dict, n: int, max_seconds: float, variant: str) -> dict:
    out = {}
    for row in rows:
        if not row.paths:  # a small database may have none of what the row needs (a private submission)
            print(f"    {variant:5s} {row.role:6s} {row.label:34s} skipped: no such rows in this database", flush=True)
            continue
        r = out[row.label] = measure(base, row, info, n, max_seconds)
        flag = "" if r["p95_ms"] < BUDGET_MS else "  OVER"
        bad = f"  unexpected: {', '.join(r['bad'])}" if r["bad"] else ""
        print(
            f"    {variant:5s} {row.role:6s} {row.label:34s} p50 {r['p50_ms']:7.1f}  p95 {r['p95_ms']:7.1f} ms "
            f"(n={r['n']}){flag}{bad}",
            flush=True,
        )
    return out


# the pages whose first request after a restart is timed (one fresh worker each time)
FRESH_ROWS = ("leaderboard (default)", "api leaderboard", "submission page", "workload page", "api submission detail")


def fresh_worker(start: Callable, rows: list[Row], info: dict, restarts: int) -> dict:
    """The first request a newly booted worker answers (nothing served before it), per page:
    ``restarts`` fresh single-worker servers each. ``start()`` returns a server with ``base``
    and ``stop()`` that is up once its worker has booted, without having sent it a request."""
    chosen = [r for r in rows if r.label.startswith(FRESH_ROWS) and r.paths]
    out = {}
    for row in chosen:
        ts = []
        for i in range(restarts):
            path = row.paths[i % len(row.paths)]
            server = start()
            try:
                t, status, _ = fetch(server.base + path, headers(info, row.role, path))
            finally:
                server.stop()
            ts.append(1000 * t)
            if status != row.status:
                raise RuntimeError(f"{path}: {status} on a fresh worker")
        out[row.label] = {
            "p50_ms": round(percentile(ts, 0.5), 1),
            "max_ms": round(max(ts), 1),
            "n": len(ts),
        }
        print(
            f"    fresh worker {row.label:34s} first request: median {out[row.label]['p50_ms']:7.1f} ms, max {out[row.label]['max_ms']:7.1f} ms",
            flush=True,
        )
    return out


def gunicorn_ready_hook(flag: pathlib.Path) -> str:
    """A gunicorn config with the portal's own (``portal/gunicorn_hooks.py``, as ``runportal``
    starts gunicorn) whose post_worker_init then writes ``flag``: the worker is up, has done what
    the portal's worker does after it boots, and has served nothing."""
    return (
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from portal.gunicorn_hooks import post_worker_init as _portal_post_worker_init\n\n\n"
        "def post_worker_init(worker):\n"
        "    _portal_post_worker_init(worker)\n"
        f"    open({str(flag)!r}, 'w').close()\n"
    )


def print_table(results: dict) -> None:
    """Per row and database: p50/p95 cold and warm, each held against BUDGET_MS; then the fresh
    worker's first requests and anything unmeasured."""
    dbs = list(results)
    labels: list[tuple[str, str]] = []
    for info in results.values():
        for key in info["endpoints"]["rows"]:
            if key not in labels:
                labels.append(key)
    print(
        f"\n== every page and endpoint: p50 / p95 ms, cold (no cache) and warm (cached); budget < {BUDGET_MS:g} ms =="
    )
    head = f"{'page or endpoint':40s} {'as':6s}"
    for db in dbs:
        head += f"  {db + ' cold':>17s}  {db + ' warm':>17s}"
    print(head)
    over = []
    for label, role in labels:
        line = f"{label:40s} {role:6s}"
        for db in dbs:
            ep = results[db]["endpoints"]
            for variant in ("cold", "warm"):
                r = ep.get(variant, {}).get(label)  # none with --endpoint-requests 0
                if r is None:
                    line += f"  {'-':>17s}"
                    continue
                miss = r["p95_ms"] >= BUDGET_MS or r["bad"]
                line += f"  {r['p50_ms']:7.1f} /{r['p95_ms']:7.1f}{'!' if miss else ' '}"
                if miss:
                    over.append(
                        f"{db} {variant} {label} ({role}): p95 {r['p95_ms']:.1f} ms{' ' + str(r['bad']) if r['bad'] else ''}"
                    )
        print(line)
    for db in dbs:
        for label, r in results[db]["endpoints"].get("fresh", {}).items():  # none with --restarts 0
            miss = r["max_ms"] >= BUDGET_MS
            print(
                f"{db:9s} first request of a fresh worker (after a restart), {label}: median {r['p50_ms']:.1f} ms, "
                f"max {r['max_ms']:.1f} ms over {r['n']}{'  OVER' if miss else ''}"
            )
            if miss:
                over.append(f"{db} fresh worker {label}: max {r['max_ms']:.1f} ms")
        for r in results[db]["endpoints"]["unmeasured"]:
            print(f"{db:9s} NOT MEASURED: {r['route']} ({r['name']}, {', '.join(r['methods'])})")
    print(f"\n{len(over)} figures over the {BUDGET_MS:g} ms budget" + (":" if over else ""))
    for o in over:
        print(f"  {o}")
