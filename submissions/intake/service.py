"""The one intake path of submissions: web form, REST API and CLI all come through here.

Everything is validated first (``submissions.uploads``, ``archives``, ``kernels``); only then, in ONE transaction, the
Submission, its Candidates (bulk) and their first Evaluation rows
(the ``submission_stored`` signal: the evaluator answers it) are created. Bad input raises :class:`IntakeError`
with a list of ``{"file" | "line", "field", "message"}`` and stores nothing.

Submitted code is never imported or executed here: ``ast.parse`` only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from django.db import IntegrityError, transaction

from catalog.models import HardwareTarget, Workload
from jaxbench import traces as trace_format
from submissions.bulk import insert_rows
from submissions.intake.kernels import validate_kernel_uploads
from submissions.intake.uploads import IntakeError, Upload
from submissions.models import META_FIELDS, Candidate, Submission, Team, meta_limit
from submissions.signals import submission_stored

KNOWN_METHODS = [
    "Best-of-N",
    "Iterative refinement",
    "Iterative refinement + TPU context",
    "Autocomp",
    "Hand-written",
    "Expert (Tokamax)",
]
KNOWN_MODELS = [
    "Gemini 3 Flash",
    "Gemini 3.1 Pro",
    "Gemini 2.5 Pro",
    "Claude Opus 4",
    "Claude Sonnet 4",
    "GPT-5",
    "o3",
    "DeepSeek-V3",
    "Qwen3-Coder",
    "Human",
]


def workload_catalog() -> tuple[trace_format.WorkloadCatalog, dict[str, int]]:
    """The workload names the portal knows (synced from the registry) and their row ids."""
    rows = list(Workload.objects.values_list("wid", "slug", "public_name", "pk"))
    return trace_format.WorkloadCatalog((w, s, p) for w, s, p, _ in rows), {w: pk for w, _, _, pk in rows}


def resolve_hardware(hardware):
    if isinstance(hardware, HardwareTarget):
        return hardware
    slug = (hardware or "").strip() if isinstance(hardware, str) else ""
    target = HardwareTarget.objects.filter(slug=slug).first() if slug else None
    if target is None:
        known = ", ".join(HardwareTarget.objects.values_list("slug", flat=True)) or "none synced"
        raise IntakeError(
            f"unknown hardware target {slug!r}; known: {known}"
            if slug
            else f"choose a hardware target; known: {known}",
            field="hardware",
        )
    return target


def refuse_off_platform(hw, workload_pks: Iterable[int]) -> None:
    """Raise :class:`IntakeError` naming each workload whose baseline does not run on the target's
    platform (a level-2 Pallas TPU baseline on a GPU), with the workload's reason: such a sample
    could never be measured, so nothing is stored."""
    rows = Workload.objects.filter(pk__in=set(workload_pks)).values_list("wid", "platforms", "platform_note")
    bad = [(wid, note) for wid, platforms, note in rows if platforms and hw.platform not in platforms]
    if bad:
        raise IntakeError(
            [
                {
                    "field": "hardware",
                    "message": f"workload {wid} cannot be measured on {hw.slug} ({hw.platform}): {note}",
                }
                for wid, note in sorted(bad)
            ]
        )


_LINK_RE = re.compile(trace_format.LINK_PATTERN)
_UPLOAD_KEY_RE = re.compile(trace_format.UPLOAD_KEY_PATTERN)
_UPLOAD_KEY_RULE = "1-128 characters: letters, digits and ._:/+=-, starting with a letter or digit"


def _valid_upload_key(key) -> bool:
    """An absent key is valid (no idempotency); a given one must match the pattern."""
    return key in (None, "") or (isinstance(key, str) and bool(_UPLOAD_KEY_RE.match(key)))


# A kernel upload is one file per workload: it declares a single attempt, or a best@k pick.
KERNEL_SELECTIONS = trace_format.ONE_SAMPLE_SELECTIONS


def clean_selection(meta: dict, allowed=KERNEL_SELECTIONS) -> tuple[str, list[dict]]:
    """The declared selection (jaxbench.traces.SELECTIONS), "undeclared" when absent."""
    value = meta.get("selection")
    if value in (None, "", trace_format.UNDECLARED):
        return trace_format.UNDECLARED, []
    if value not in allowed:
        choices = ", ".join(repr(c) for c in allowed)
        extra = " (a kernel upload has one file per workload)" if value in trace_format.SELECTIONS else ""
        return trace_format.UNDECLARED, [{"field": "selection", "message": f"must be one of {choices}{extra}"}]
    return value, []


def clean_meta(meta: dict) -> tuple[dict, list[dict]]:
    """method (required), model_name, framework, description, link, selection, selector,
    upload_key."""
    out, errors = {}, []
    if "model" in meta and "model_name" not in meta:
        meta = {**meta, "model_name": meta["model"]}
    for key in META_FIELDS[:-1]:  # upload_key is checked against its pattern below
        limit = meta_limit(key)
        value = meta.get(key)
        if value is None:
            value = ""
        if not isinstance(value, str):
            errors.append({"field": key, "message": "must be a string"})
            continue
        value = value.strip()
        if len(value) > limit:
            errors.append({"field": key, "message": f"at most {limit} characters"})
            continue
        out[key] = value
    if "method" in out and not out["method"]:
        errors.append({"field": "method", "message": "name the method (e.g. Best-of-N, Autocomp, Hand-written)"})
    if out.get("link") and not _LINK_RE.match(out["link"]):
        errors.append({"field": "link", "message": "must be an http(s) URL"})
    out["selection"], sel_errors = clean_selection(meta)
    errors.extend(sel_errors)
    if not sel_errors and "selector" in out:
        errors.extend(
            {"field": f, "message": m} for f, m in trace_format.selection_errors(out["selection"], out["selector"])
        )
    key = meta.get("upload_key")
    if _valid_upload_key(key):
        out["upload_key"] = key or None
    else:
        out["upload_key"] = None
        errors.append({"field": "upload_key", "message": _UPLOAD_KEY_RULE})
    return out, errors


def check_team(team, user) -> None:
    if team is None:
        raise IntakeError("choose a team", field="team")
    if not (user is not None and user.is_authenticated and team.is_member(user)):
        raise IntakeError(f"you are not a member of team {team.slug!r}", field="team")


def existing_upload(team, upload_key: str | None) -> Submission | None:
    """The team's earlier submission with this upload key, marked ``was_duplicate``: a retried
    upload answers with it and stores nothing."""
    if not upload_key:
        return None
    first = Submission.objects.filter(team=team, upload_key=upload_key).first()
    if first is not None:
        first.was_duplicate = True
    return first


# The columns of a trace sample's Candidate row, in the order create_trace_submission builds them.
_TRACE_COLUMNS = (
    "submission_id",
    "workload_id",
    "index",
    "round",
    "parent_index",
    "code",
    "code_sha256",
    "reported_outcome",
    "reported_speedup",
    "reported_speedup_lo",
    "reported_speedup_hi",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "step_ref",
    "step_at",
    "cum_tokens_in",
    "cum_tokens_out",
    "cum_cost_usd",
)


def store(
    submission: Submission, candidates: list[Candidate] = (), rows: list[tuple] | None = None, background: bool = False
) -> Submission:
    """One transaction: the submission, its candidates, their evaluations (enqueued on commit).
    ``candidates`` are Candidate instances; or ``rows`` are tuples of ``_TRACE_COLUMNS`` less the
    submission (a trace's thousands of samples: inserted by ``submissions.bulk.insert_rows``, no
    model instance per sample). A concurrent upload with the same key loses the race and
    returns the winner's submission. ``background``: demo or maintenance work (evaluated only
    when no user's work waits)."""
    try:
        with transaction.atomic():
            submission.save()
            if rows is not None:
                sid = submission.pk
                insert_rows(Candidate, _TRACE_COLUMNS, ((sid, *row) for row in rows))
            else:
                for c in candidates:
                    c.submission = submission
                Candidate.objects.bulk_create(candidates, batch_size=1000)
            submission_stored.send(sender=Submission, submission=submission, background=background)
    except IntegrityError:
        first = existing_upload(submission.team, submission.upload_key)
        if first is None:
            raise
        return first
    submission.was_duplicate = False
    return submission


def create_kernel_submission(
    team, user, hardware, meta: dict, files: Iterable[Upload | tuple], background: bool = False
) -> Submission:
    """A kernel submission: one source per workload. ``hardware`` is a HardwareTarget or slug;
    ``meta`` has method (required), model_name (or model), framework, description, link,
    upload_key; ``files`` are :class:`Upload` objects or ``(name, bytes|str)`` pairs, where a
    ``.zip`` is expanded. Returns the submission (``was_duplicate`` tells a retried upload_key)."""
    check_team(team, user)
    meta, errors = clean_meta(meta)
    if errors:
        raise IntakeError(errors)
    first = existing_upload(team, meta["upload_key"])
    if first is not None:
        return first
    hw = resolve_hardware(hardware)
    candidates = kernel_candidates(files)
    refuse_off_platform(hw, (c.workload_id for c in candidates))
    submission = Submission(
        team=team,
        created_by=user,
        hardware=hw,
        kind=Submission.KERNELS,
        method=meta["method"],
        model_name=meta["model_name"],
        framework=meta["framework"],
        description=meta["description"],
        link=meta["link"],
        upload_key=meta["upload_key"],
        selection=meta["selection"],
        selector=meta["selector"],
        budget=1,
        sampling=Submission.INDEPENDENT,
    )
    return store(submission, candidates, background=background)


def kernel_candidates(files: Iterable[Upload | tuple], most: int | None = None) -> list[Candidate]:
    """The unsaved Candidate of each checked kernel file (a ``.zip`` expanded), in workload order;
    ``most``: at most that many kernels. Raises :class:`IntakeError` listing every problem."""
    catalog, pk_of = workload_catalog()
    uploads = [f if isinstance(f, Upload) else Upload(f[0], f[1]) for f in files]
    kernels, errors = validate_kernel_uploads(uploads, catalog)
    if errors:
        raise IntakeError(errors)
    if most is not None and len(kernels) > most:
        raise IntakeError(f"{len(kernels)} kernel files; this upload takes at most {most}", field="files")
    return [
        Candidate(
            workload_id=pk_of[k.wid],
            index=0,
            filename=k.name[:200],
            code=k.code,
            code_sha256=hashlib.sha256(k.code.encode()).hexdigest(),
        )
        for k in sorted(kernels, key=lambda k: pk_of[k.wid])
    ]


def _clean_options(options: dict | None) -> dict[str, str]:
    """The upload's own metadata for a trajectory (``trace_format.UPLOAD_OPTIONS``), non-empty."""
    out, errors = {}, []
    for key, value in (options or {}).items():
        if value in (None, ""):
            continue
        if key not in trace_format.UPLOAD_OPTIONS:
            errors.append({"field": key, "message": "unknown upload parameter"})
        elif not isinstance(value, str) or len(value) > 200:
            errors.append({"field": key, "message": "must be a string of at most 200 characters"})
        else:
            out[key] = value.strip()
    if errors:
        raise IntakeError(errors)
    return {k: v for k, v in out.items() if v}


def read_trace(stream, catalog, options: dict | None = None, document: bool = False):
    """Parse an uploaded trace, whatever its format: ``jaxbench-trace/1`` JSON Lines (streamed
    line by line), an ATIF trajectory or an ADK session (one JSON document; ``options`` fill
    what it does not say: hardware, workload, method, model). ``document``: the upload was sent
    as one JSON document (``application/json``). Raises :class:`IntakeError`."""
    options = _clean_options(options)
    hardware = HardwareTarget.objects.values_list("slug", flat=True)
    try:
        kind, source = trace_format.open_upload(stream, document=document)
        if kind == "too_large":
            raise IntakeError(
                f"the trace is larger than {trace_format.MAX_TRACE_BYTES // (1024 * 1024)} MB", field="trace"
            )
        if kind != "json":
            if options:
                raise IntakeError(
                    [
                        {
                            "field": key,
                            "message": f"'{key}' is for ATIF and ADK trajectories; a {trace_format.FORMAT} "
                            "trace says it in its header (and each sample names its workload)",
                        }
                        for key in options
                    ]
                )
            return trace_format.parse_trace(source, catalog, hardware)
        return trace_format.parse_trajectory(source, catalog, list(hardware), options)
    except trace_format.TraceError as exc:
        raise IntakeError(exc.errors) from None


def create_trace_submission(
    team,
    user,
    stream,
    upload_key: str | None = None,
    background: bool = False,
    options: dict | None = None,
    document: bool = False,
) -> Submission:
    """An agent trace from a binary stream: ``jaxbench-trace/1`` JSON Lines (parsed line by
    line), or an ATIF trajectory or ADK session (``jaxbench.traces.trajectory``: each kernel it
    wrote becomes a sample; ``options`` are the upload's hardware, workload, method, model).
    ``upload_key`` (or the header's) makes a retried upload return the first submission."""
    check_team(team, user)
    if not _valid_upload_key(upload_key):
        raise IntakeError(_UPLOAD_KEY_RULE, field="upload_key")
    first = existing_upload(team, upload_key)
    if first is not None:
        return first
    catalog, pk_of = workload_catalog()
    trace = read_trace(stream, catalog, options, document)
    h = trace.header
    key = upload_key or h.get("upload_key")
    if upload_key and h.get("upload_key") and h["upload_key"] != upload_key:
        raise IntakeError(
            [
                {
                    "line": 1,
                    "field": "upload_key",
                    "message": f"the header's upload_key {h['upload_key']!r} differs from the one "
                    f"given with the upload {upload_key!r}",
                }
            ]
        )
    if key and not upload_key:
        first = existing_upload(team, key)
        if first is not None:
            return first
    hw = HardwareTarget.objects.get(slug=h["hardware"])
    refuse_off_platform(hw, {pk_of[s["workload_id"]] for s in trace.samples})
    submission = Submission(
        team=team,
        created_by=user,
        hardware=hw,
        kind=Submission.TRACE,
        method=h["method"],
        model_name=h["model"],
        framework=h.get("framework") or "",
        description=h.get("description") or "",
        link=h.get("link") or "",
        sampling=h["sampling"],
        selection=h.get("selection") or trace_format.UNDECLARED,
        selector=h.get("selector") or "",
        budget=h.get("budget"),
        trace_settings=h.get("settings") or {},
        upload_key=key or None,
    )
    sha = hashlib.sha256
    rows = [
        (
            pk_of[s["workload_id"]],
            s["index"],
            s.get("round"),
            s.get("parent"),
            s["code"],
            sha(s["code"].encode()).hexdigest(),
            s.get("outcome") or "",
            s.get("speedup"),
            s.get("speedup_lo"),
            s.get("speedup_hi"),
            s.get("tokens_in"),
            s.get("tokens_out"),
            s.get("cost_usd"),
            s.get("step_ref") or "",
            s.get("step_at"),
            s.get("cum_tokens_in"),
            s.get("cum_tokens_out"),
            s.get("cum_cost_usd"),
        )
        for s in trace.samples
    ]
    return store(submission, rows=rows, background=background)


def teams_for(user):
    """The teams ``user`` can submit for."""
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user).distinct().order_by("name")


def resolve_team(user, slug: str | None = None):
    """The team to submit for: the one named, or the user's only team."""
    teams = list(teams_for(user))
    if slug:
        for t in teams:
            if t.slug == slug:
                return t
        mine = ", ".join(t.slug for t in teams) or "none"
        raise IntakeError(f"you are not a member of a team {slug!r} (your teams: {mine})", field="team")
    if len(teams) == 1:
        return teams[0]
    if not teams:
        raise IntakeError(
            "you are in no team: every submission belongs to a team; create one at "
            "/teams/new/ or join one at /teams/join/",
            field="team",
        )
    raise IntakeError(
        f"you are in several teams ({', '.join(t.slug for t in teams)}): say which with 'team'", field="team"
    )
