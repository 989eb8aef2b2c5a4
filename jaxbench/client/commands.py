"""The client's commands. Each returns an exit code; output goes to stdout, progress and
diagnostics to stderr."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pathlib
import sys
import time
import zipfile
from collections.abc import Callable

from tqdm import tqdm

from jaxbench import limits, record
from jaxbench import traces as trace_format
from jaxbench.client.http import EXIT_INVALID, EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE, ClientError, Portal
from jaxbench.client.tables import table
from jaxbench.record import Outcome, format_speedup
from jaxbench.verdict.review import HELD_LABEL, HELD_OUTCOME

CORRECT = record.CORRECT_OUTCOMES


def err(*parts):
    print(*parts, file=sys.stderr)


def show_errors(errors: list[dict], limit: int = 100):
    for e in errors[:limit]:
        err(f"  - {trace_format.format_error(e)}")
    if len(errors) > limit:
        err(f"  ... and {len(errors) - limit} more")


@contextlib.contextmanager
def _rejection_explained():
    """An upload the portal refused with field errors: list them, then say that nothing was stored."""
    try:
        yield
    except ClientError as exc:
        if not exc.errors:
            raise
        err(f"Rejected: {exc.message}")
        show_errors(exc.errors)
        raise ClientError("nothing was stored", exc.exit_code) from None


def emit(args, data, text: str):
    print(json.dumps(data, indent=2) if args.json else text)


def describe(sub: dict) -> str:
    state = "published" if sub.get("is_public") else "private to " + str(sub.get("team"))
    return (
        f"submission #{sub['id']} ({sub.get('kind')}, {sub.get('candidates')} candidates, "
        f"{sub.get('method')}{' · ' + sub['model'] if sub.get('model') else ''}) on {sub.get('hardware')}, "
        f"{state}\n  {sub.get('links', {}).get('page', '')}"
    )


def _announce(args, sub: dict):
    if sub.get("created", True):
        msg = f"Created {describe(sub)}"
    else:
        msg = f"Already uploaded (same upload key) as {describe(sub)}"
    if args.json and not args.wait:
        print(json.dumps(sub, indent=2))
    else:
        err(msg) if args.json else print(msg)


# -- submit-kernels ---------------------------------------------------------------------------

_SKIP_DIRS = {"__pycache__", "__MACOSX"}


def _offline_catalog():
    return trace_format.WorkloadCatalog.offline()


def build_zip(paths: list[str]) -> tuple[bytes, list[str], str]:
    """Zip the .py files of the given directories and files, keeping folder names (the portal
    reads a workload from the file name or its folder's name). Returns the archive, its member
    names and a digest of the names and contents (not of timestamps)."""
    buf = io.BytesIO()
    names: list[str] = []
    digest = hashlib.sha256()
    catalog = _offline_catalog()

    def add(zf, f: pathlib.Path, arc: str):
        if arc in names:
            raise ClientError(f"two files named {arc}: put them in folders named by workload", EXIT_USAGE)
        data = f.read_bytes()
        zf.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        names.append(arc)
        digest.update(arc.encode() + b"\0" + hashlib.sha256(data).digest())

    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in paths:
            path = pathlib.Path(p)
            if path.is_dir():
                prefix = path.resolve().name + "/" if catalog.resolve(path.resolve().name) else ""
                for f in sorted(path.rglob("*.py")):
                    rel = f.relative_to(path)
                    if any(part.startswith(".") or part in _SKIP_DIRS for part in rel.parts):
                        continue
                    add(zf, f, prefix + rel.as_posix())
            elif path.is_file():
                add(zf, path, path.name)
            else:
                raise ClientError(f"no such file or directory: {p}", EXIT_USAGE)
    if not names:
        raise ClientError(f"no .py files in {', '.join(paths)}", EXIT_USAGE)
    return buf.getvalue(), names, digest.hexdigest()


def submit_kernels(args, portal: Portal) -> int:
    portal.require_token()
    if len(args.paths) == 1 and args.paths[0].lower().endswith(".zip") and os.path.isfile(args.paths[0]):
        payload = pathlib.Path(args.paths[0]).read_bytes()
        names, content = [args.paths[0]], hashlib.sha256(payload).hexdigest()
    else:
        payload, names, content = build_zip(args.paths)
    if not args.hardware:
        raise ClientError(
            "name the hardware target with --hardware (or JAXBENCH_HARDWARE), e.g. cpu or tpu-v6e", EXIT_USAGE
        )
    meta = {
        "hardware": args.hardware,
        "method": args.method,
        "model": args.model or "",
        "framework": args.framework or "",
        "description": args.description or "",
        "link": args.link or "",
    }
    for name in ("selection", "selector"):  # only when given: older upload keys stay as they were
        if getattr(args, name, None):
            meta[name] = getattr(args, name)
    if args.team:
        meta["team"] = args.team
    key = args.upload_key
    if key is None:
        digest = hashlib.sha256((content + json.dumps(meta, sort_keys=True)).encode()).hexdigest()
        key = f"sha256:{digest}"
    if key:
        meta["upload_key"] = key
    err(
        f"Uploading {len(names)} file{'s' if len(names) != 1 else ''} ({len(payload) / 1024:.0f} KB) to {portal.url} ..."
    )
    with _rejection_explained():
        sub = portal.post(
            "submissions/", data=meta, idempotent=bool(key), files={"zip": ("kernels.zip", payload, "application/zip")}
        )
    _announce(args, sub)
    return _after_submit(args, portal, sub)


def _after_submit(args, portal: Portal, sub: dict) -> int:
    if getattr(args, "publish", False):
        portal.post(f"submissions/{sub['id']}/publish/", idempotent=True)
        err(f"Published submission #{sub['id']}.")
    if args.wait:
        return wait_and_summarise(args, portal, sub["id"])
    err(f"Follow it with: python -m jaxbench.client status {sub['id']} --wait")
    return EXIT_OK


# -- submit-trace / validate-trace ------------------------------------------------------------


class _ProgressReader:
    """A file object for requests that reports upload progress and can be rewound (requests
    reads ``len()`` minus ``tell()`` as the Content-Length)."""

    def __init__(self, path: pathlib.Path, bar):
        self._f = open(path, "rb")
        self._size = path.stat().st_size
        self._bar = bar

    def __len__(self):
        return self._size

    def tell(self):
        return self._f.tell()

    def read(self, n=-1):
        chunk = self._f.read(n if n and n > 0 else 1 << 20)
        self._bar.update(len(chunk))
        return chunk

    def rewind(self):
        self._f.seek(0)
        self._bar.reset()

    def close(self):
        self._f.close()


def _catalogs(args, portal: Portal | None):
    """Workload names and hardware slugs from the portal, or offline (ID syntax only)."""
    if args.offline or portal is None:
        return trace_format.WorkloadCatalog.offline(), None, "offline: workload IDs checked, names and hardware not"
    try:
        workloads = portal.get_all("workloads/", page_size=1000)
        hardware = [h["slug"] for h in portal.get_all("hardware/")]
    except ClientError as exc:
        err(f"warning: could not read the portal's workloads ({exc.message}); checking offline")
        return trace_format.WorkloadCatalog.offline(), None, "offline (portal unreachable)"
    catalog = trace_format.WorkloadCatalog((w["id"], w["slug"], w["public_name"]) for w in workloads)
    return catalog, hardware, f"against {portal.url} ({len(workloads)} workloads, {len(hardware)} hardware targets)"


def _open_trace(path: str):
    if path == "-":
        return sys.stdin.buffer
    p = pathlib.Path(path)
    if not p.is_file():
        raise ClientError(f"no such file: {path}", EXIT_USAGE)
    return open(p, "rb")


def trajectory_options(args) -> dict[str, str]:
    """What an ATIF trajectory or ADK session does not say, from the command line (the upload's
    query parameters of the same names)."""
    return {k: v for k in trace_format.UPLOAD_OPTIONS if (v := getattr(args, k, None))}


def check_trace(args, portal: Portal | None) -> trace_format.Trace:
    """The upload parsed with the portal's own rules, whatever its format: a ``jaxbench-trace/1``
    JSON Lines trace, or an ATIF trajectory or ADK session (one JSON document), sniffed as the
    portal sniffs it (``traces.open_upload``). ``trace.document`` says which."""
    catalog, hardware, how = _catalogs(args, portal)
    started = time.monotonic()
    stream = _open_trace(args.file)
    options = trajectory_options(args)
    kind = "jsonl"
    try:
        kind, source = trace_format.open_upload(stream)
        if kind == "too_large":
            raise ClientError(
                f"{args.file}: larger than the portal's {trace_format.MAX_TRACE_BYTES // (1024 * 1024)} MB",
                EXIT_INVALID,
            )
        if kind == "json":
            trace = trace_format.parse_trajectory(source, catalog, hardware, options)
        elif options:
            raise ClientError(
                f"{', '.join('--' + k for k in options)}: for ATIF and ADK trajectories; a {trace_format.FORMAT} "
                "trace says it in its header (and each sample names its workload)",
                EXIT_USAGE,
            )
        else:
            trace = trace_format.parse_trace(source, catalog, hardware)
    except trace_format.TraceError as exc:
        what = "ATIF/ADK trajectory" if kind == "json" else f"{trace_format.FORMAT} trace"
        err(
            f"{args.file}: invalid {what} ({len(exc.errors)} problem"
            f"{'s' if len(exc.errors) != 1 else ''}, checked {how}):"
        )
        show_errors(exc.errors)
        raise ClientError("the trace is invalid", EXIT_INVALID) from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    trace.how = how
    trace.seconds = time.monotonic() - started
    trace.document = kind == "json"
    return trace


def _is_document(path: str) -> bool:
    """Whether the file is one JSON document (ATIF or ADK) rather than JSON Lines, as the portal
    tells them apart (for an upload not checked here: its Content-Type); says when there is no
    such file."""
    with _open_trace(path) as f:
        return trace_format.open_upload(f)[0] != "jsonl"


def _trace_summary(trace) -> str:
    h = trace.header
    counts = trace.workloads()
    what = trace_format.FORMAT
    if trace.document:
        what = f"{((h.get('settings') or {}).get('trajectory') or {}).get('format') or 'ATIF/ADK'} trajectory"
    return (
        f"valid {what}: {len(trace.samples)} samples over {len(counts)} workloads "
        f"(max {max(counts.values())} per workload), {h['method']} · {h['model']} on {h['hardware']}, "
        f"{h['sampling']} sampling{', budget ' + str(h['budget']) if h.get('budget') else ''}; checked {trace.how}"
    )


def validate_trace(args, portal: Portal | None) -> int:
    trace = check_trace(args, portal)
    if args.json:
        print(
            json.dumps(
                {
                    "valid": True,
                    "samples": len(trace.samples),
                    "workloads": trace.workloads(),
                    "header": trace.header,
                    "checked": trace.how,
                },
                indent=2,
            )
        )
    else:
        print(_trace_summary(trace))
    return EXIT_OK


def _header_upload_key(path: pathlib.Path) -> str | None:
    """The header's own upload_key, if any (it then is the key of the upload)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(limits.MAX_LINE_BYTES).decode("utf-8-sig")
        key = json.loads(first).get("upload_key")
    except (OSError, ValueError, AttributeError):
        return None
    return key if isinstance(key, str) and key else None


def submit_trace(args, portal: Portal) -> int:
    portal.require_token()
    if args.file == "-":
        raise ClientError("submit-trace needs a file (it is validated, then streamed)", EXIT_USAGE)
    path = pathlib.Path(args.file)
    if not args.no_validate:
        trace = check_trace(args, portal)
        err(_trace_summary(trace))
        document = trace.document
    else:
        document = _is_document(args.file)
    key = args.upload_key
    if key is None and not document:
        key = _header_upload_key(path)
    if key is None:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        key = f"sha256:{h.hexdigest()}"
    params = {"upload_key": key or None, "team": args.team or None, **trajectory_options(args)}
    size = path.stat().st_size
    with tqdm(
        total=size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc="upload",
        file=sys.stderr,
        disable=None,
        leave=False,
    ) as bar:
        body = _ProgressReader(path, bar)
        try:
            with _rejection_explained():
                sub = portal.post(
                    "submissions/trace/",
                    params={k: v for k, v in params.items() if v},
                    data=body,
                    idempotent=bool(key),
                    rewind=body.rewind,
                    # one JSON document (ATIF, ADK) or JSON Lines: the portal reads each as sent
                    headers={"Content-Type": "application/json" if document else "application/x-ndjson"},
                )
        finally:
            body.close()
    _announce(args, sub)
    return _after_submit(args, portal, sub)


# -- status -----------------------------------------------------------------------------------


def _fmt_outcomes(outcomes: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1])) or "none yet"


# without a terminal (a log file, CI) tqdm draws nothing: a line on each change and at least
# this often says the wait is alive
PROGRESS_EVERY_S = 30.0


def follow(args, fetch: Callable[[], dict], status_of: Callable[[dict], dict], label: str, resume: str) -> dict | None:
    """Poll ``fetch()`` every ``args.interval`` s until the status in it (``status_of``) is
    finished, with a progress bar on a terminal (else a line on each change and at least every
    PROGRESS_EVERY_S) and a word once when no worker is live. Returns the last document, or
    None after ``args.timeout`` s, having said how far it got and ``resume`` (the command that
    goes on waiting) and, with --json, printed the document."""
    doc = fetch()
    deadline = time.monotonic() + args.timeout if args.timeout else None
    warned = False
    last_line, last_at = "", -PROGRESS_EVERY_S
    st = status_of(doc)
    with tqdm(total=st["total"], unit="kernel", desc=label, file=sys.stderr, disable=None, dynamic_ncols=True) as bar:
        while True:
            st = status_of(doc)
            outcomes = _fmt_outcomes(st.get("outcomes", {}))
            bar.total, bar.n = st["total"], st["done"]
            bar.set_postfix_str(outcomes, refresh=False)
            bar.refresh()
            if bar.disable:
                line = f"{label}: {st['done']}/{st['total']} evaluated; {outcomes}"
                if st.get("queue"):
                    line += f"; queue: {st['queue']['text']}"
                if line != last_line or time.monotonic() - last_at >= PROGRESS_EVERY_S:
                    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)
                    last_line, last_at = line, time.monotonic()
            if st.get("waiting_for") and not warned:
                bar.write(f"waiting for a worker for {st['waiting_for']}: none is live right now", file=sys.stderr)
                warned = True
            if st.get("finished") or st["total"] == 0:
                return doc
            if deadline and time.monotonic() > deadline:
                bar.close()
                err(
                    f"timed out after {args.timeout:g}s: {st['done']}/{st['total']} evaluated; "
                    f"run `{resume}` to keep waiting"
                )
                if args.json:
                    print(json.dumps(doc, indent=2))
                return None
            time.sleep(args.interval)
            doc = fetch()


def wait_and_summarise(args, portal: Portal, sid: int) -> int:
    st = follow(args, lambda: portal.get(f"submissions/{sid}/status/"), lambda d: d, f"#{sid}", f"status {sid} --wait")
    return EXIT_TIMEOUT if st is None else print_summary(args, portal, sid, st)


def _final(evaluations: list[dict]) -> list[tuple[tuple[str, int], dict]]:
    """Each candidate's final evaluation (its main stage, or the pre-check that stopped it), in
    workload and sample order."""
    final: dict[tuple, dict] = {}
    for e in evaluations:
        key = (e["workload"], e["index"])
        cur = final.get(key)
        if cur is None or (e["stage"] == "main" and cur["stage"] != "main"):
            final[key] = e
    return sorted(final.items(), key=lambda kv: (int(kv[0][0][:-1] or 0), kv[0][1]))


def _is_done(e: dict) -> bool:
    return (e["stage"] == "main" and e["state"] in ("done", "skipped", "failed")) or (
        e["stage"] == "precheck" and e["state"] == "skipped"
    )


def failures(evaluations: list[dict]) -> list[dict]:
    """Every finished sample that is not correct (an infrastructure failure included), with the
    reason: its whole message and the candidate's lines it names."""
    out = []
    for (wid, index), e in _final(evaluations):
        if not _is_done(e) or e.get("outcome") in CORRECT:
            continue
        message = e.get("message") or ""
        out.append(
            {
                "workload": wid,
                "index": index,
                "outcome": e.get("outcome") or ("infrastructure" if e["state"] == "failed" else ""),
                "category": (e.get("record") or {}).get("error_category") or "",
                "message": message,
                "where": record.message_where(message),
            }
        )
    return out


def held(evaluations: list[dict]) -> list[dict]:
    """Every sample whose verdict is held for review (TRUST.md 6): the portal shows it as
    ``held_for_review``, without a speedup, until a staff member accepts it."""
    return [
        {"workload": wid, "index": index, "outcome": HELD_OUTCOME, "message": e.get("message") or HELD_LABEL}
        for (wid, index), e in _final(evaluations)
        if _is_done(e) and (e.get("held_for_review") or e.get("outcome") == HELD_OUTCOME)
    ]


def per_workload(evaluations: list[dict]) -> list[dict]:
    """Each candidate's final outcome (its main stage, or the pre-check that stopped it),
    folded per workload."""
    rows: dict[str, dict] = {}
    for (wid, index), e in _final(evaluations):
        r = rows.setdefault(
            wid,
            {
                "workload": wid,
                "samples": 0,
                "evaluated": 0,
                "correct": 0,
                "faster": 0,
                "ties": 0,
                "held": 0,
                "best": None,
                "best_lo": None,
                "best_hi": None,
                "first_correct": None,
            },
        )
        r["samples"] += 1
        if not _is_done(e):
            continue
        r["evaluated"] += 1
        r["held"] += e.get("outcome") == HELD_OUTCOME
        if e.get("outcome") in CORRECT:
            r["correct"] += 1
            if r["first_correct"] is None:
                r["first_correct"] = index
            if e.get("speedup") is not None and (r["best"] is None or e["speedup"] > r["best"]):
                r["best"], r["best_lo"], r["best_hi"] = (e["speedup"], e.get("speedup_lo"), e.get("speedup_hi"))
        r["faster"] += e.get("outcome") == Outcome.CORRECT_FASTER
        r["ties"] += e.get("outcome") == Outcome.CORRECT_TIE
    return list(rows.values())


MAX_FAILURE_LINES = 50  # failed samples printed; --json has them all


def print_summary(args, portal: Portal, sid: int, st: dict) -> int:
    evaluations = portal.get_all(f"submissions/{sid}/evaluations/", page_size=250)  # the API's most
    rows = per_workload(evaluations)
    failed = failures(evaluations)
    held_samples = held(evaluations)
    if args.json:
        print(json.dumps({"status": st, "workloads": rows, "failures": failed, "held": held_samples}, indent=2))
        return EXIT_OK
    print(
        f"Submission #{sid}: {st['done']}/{st['total']} evaluated"
        f"{' (finished)' if st.get('finished') else ''}; outcomes: {_fmt_outcomes(st.get('outcomes', {}))}"
    )
    if st.get("waiting_for"):
        print(f"Waiting for a worker for {st['waiting_for']}.")
    queue = st.get("queue")
    if queue:
        print(f"Queue: {queue['text']}.")
        for r in queue.get("running") or []:
            print(f"  runs now: {r['text']}")
    saved = st.get("precheck_saved") or {}
    if saved.get("candidates"):
        print(
            f"The CPU pre-check stopped {saved['candidates']} candidates before they used accelerator time"
            + (
                f" (~{saved['estimated_accelerator_seconds']:.0f} s saved)."
                if saved.get("estimated_accelerator_seconds")
                else "."
            )
        )
    if rows:
        print()
        print(
            table(
                [
                    "workload",
                    "samples",
                    "evaluated",
                    "correct",
                    "faster",
                    "ties",
                    "best speedup [95%]",
                    "first correct",
                ],
                [
                    [
                        r["workload"],
                        r["samples"],
                        r["evaluated"],
                        r["correct"],
                        r["faster"],
                        r["ties"],
                        format_speedup(r["best"], r["best_lo"], r["best_hi"]),
                        r["first_correct"] if r["first_correct"] is not None else "-",
                    ]
                    for r in rows
                ],
                align="lrrrrrrr",
            )
        )
        solved = sum(1 for r in rows if r["correct"])
        faster = sum(1 for r in rows if r["faster"])
        tied = sum(1 for r in rows if r["ties"] and not r["faster"])  # correct, best only within noise
        print(
            f"\n{solved}/{len(rows)} workloads solved, {faster} faster than XLA"
            + (f", {tied} within noise of XLA (a tie: the 95% interval holds 1.0)" if tied else "")
            + "."
        )
    if held_samples:
        print(
            f"\n{len(held_samples)} held for review (not ranked, not counted in fast@N and not shown as faster "
            "until a staff member accepts it):"
        )
        for h in held_samples[:MAX_FAILURE_LINES]:
            print(f"  {h['workload']} #{h['index']} held for review: {record.message_head(h['message'], 1)}")
    if failed:
        print(f"\nWhy samples failed ({len(failed)}):")
        for f in failed[:MAX_FAILURE_LINES]:
            category = f" ({f['category']})" if f["category"] else ""
            print(f"  {f['workload']} #{f['index']} {f['outcome']}{category}: {record.message_head(f['message'], 1)}")
            if f["where"]:
                print(f"      at {f['where'][-1]}")
        if len(failed) > MAX_FAILURE_LINES:
            print(
                f"  ... and {len(failed) - MAX_FAILURE_LINES} more: `--json status {sid}` lists every message in full"
            )
    return EXIT_OK


def status(args, portal: Portal) -> int:
    if args.wait:
        return wait_and_summarise(args, portal, args.id)
    st = portal.get(f"submissions/{args.id}/status/")
    return print_summary(args, portal, args.id, st)


# -- leaderboard, workloads, whoami, publish, withdraw --------------------------------------


def _scalar(v):
    if isinstance(v, float):
        return f"{v:.3f}"
    if v is None:
        return "-"
    return str(v)


def _x(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}x"


def _pct(v):
    return "-" if v is None else f"{100 * v:.0f}%"


def _ranked_table(rows: list[dict], set_size) -> str:
    return table(
        [
            "rank",
            "#",
            "team",
            "method",
            "model",
            "solved",
            "geomean",
            "interval",
            "fast@N",
            "vs expert",
            "samples",
            "provenance",
        ],
        [
            [
                ("=" if r.get("tied") else "") + str(r.get("rank") or "-"),
                r.get("submission"),
                r.get("team"),
                r.get("method"),
                r.get("model") or "-",
                f"{r.get('solved', 0):g}/{r.get('set_size', set_size)}",
                _x(r.get("geomean")),
                f"{_x(r.get('geomean_low'))}-{_x(r.get('geomean_high'))}",
                _pct(r.get("fast")),
                _pct(r.get("expert_pct")),
                r.get("n_samples", "-"),
                r.get("provenance", "-"),
            ]
            for r in rows
        ],
        align="rrllllrrrrrl",
    )


def leaderboard(args, portal: Portal) -> int:
    params = {"hardware": args.hardware, "set": args.set, "n": args.n, "sort": args.sort}
    for kv in args.param or []:
        if "=" not in kv:
            raise ClientError(f"--param takes key=value, not {kv!r}", EXIT_USAGE)
        k, v = kv.split("=", 1)
        params[k] = v
    try:
        data = portal.get("leaderboard/", **params)
    except ClientError as exc:
        if exc.exit_code == 4 and not (isinstance(exc.body, dict) and exc.body.get("detail")):
            raise ClientError(
                "this portal has no leaderboard API (yet): /api/v1/leaderboard/ is not found", exc.exit_code
            ) from None
        raise
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    if isinstance(data, dict) and isinstance(data.get("rows"), list) and isinstance(data.get("meta"), dict):
        m = data["meta"]
        print(
            f"{m.get('hardware_name') or m.get('hardware')} · {m.get('workload_set_label') or m.get('workload_set')} "
            f"· budget N = {m.get('budget')} · fast_p with p = {m.get('p')}"
        )
        if data["rows"]:
            print(_ranked_table(data["rows"], m.get("set_size")))
        else:
            print("No evaluated, published submissions yet.")
        refs = data.get("references") or []
        if refs:
            print("\nReferences:")
            print(
                table(
                    ["kind", "method", "geomean", "solved", "fast@N", "note"],
                    [
                        [
                            r.get("kind"),
                            r.get("method"),
                            _x(r.get("geomean")),
                            "-" if r.get("solved") is None else f"{r['solved']:g}",
                            _pct(r.get("fast")),
                            r.get("note", ""),
                        ]
                        for r in refs
                    ],
                )
            )
        if data.get("self_reported"):
            print("\nSelf-reported (not evaluated here, not ranked):")
            print(_ranked_table(data["self_reported"], m.get("set_size")))
        if data.get("in_progress"):
            print(f"\n{len(data['in_progress'])} published submission(s) still being evaluated.")
        return EXIT_OK
    items = data if isinstance(data, list) else (data.get("results") if isinstance(data, dict) else None)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        print(json.dumps(data, indent=2))
        return EXIT_OK
    if not items:
        print("The leaderboard is empty.")
        return EXIT_OK
    cols = [k for k, v in items[0].items() if not isinstance(v, (dict, list))][:10]
    print(table(cols, [[_scalar(i.get(c)) for c in cols] for i in items]))
    return EXIT_OK


def workloads(args, portal: Portal) -> int:
    items = portal.get_all("workloads/", page_size=1000)
    if args.json:
        print(json.dumps(items, indent=2))
    else:
        print(
            table(
                ["id", "public name", "title", "category", "expert"],
                [[w["id"], w["public_name"], w["title"], w["category"], "yes" if w["expert"] else ""] for w in items],
            )
        )
    return EXIT_OK


def whoami(args, portal: Portal) -> int:
    portal.require_token()
    me = portal.get("me/")
    teams = ", ".join(f"{t['slug']} ({t['role']})" for t in me["teams"]) or "none: create or join one on the portal"
    emit(args, me, f"{me['username']} at {portal.url} (token {me.get('token') or '-'}); teams: {teams}")
    return EXIT_OK


def publish(args, portal: Portal) -> int:
    portal.require_token()
    sub = portal.post(f"submissions/{args.id}/{args.command}/", idempotent=True)
    emit(args, sub, f"{'Published' if args.command == 'publish' else 'Withdrew'} {describe(sub)}")
    return EXIT_OK


__all__ = [
    "submit_kernels",
    "submit_trace",
    "validate_trace",
    "status",
    "leaderboard",
    "workloads",
    "whoami",
    "publish",
]
