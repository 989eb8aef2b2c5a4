"""What the leaderboard pages, exports and API show, read from the aggregate rows.

``leaderboard_data(query)`` never touches evaluations or candidates for the default view (the
current versions): one query over the summary rows of a hardware target (the curves give any
budget N), plus the expert references and the workload list. Another ``?versions=`` choice
recomputes the summaries it changes from their evaluations (``leaderboard.board_versions``, two
queries more). Results are cached under a stamp that changes whenever a summary, a submission's
visibility or an expert reference of that target changes.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import django_filters
from django.core.cache import cache
from django.db.models import BinaryField, Case, Count, F, Max, Q, TextField, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from catalog.models import ExpertReference, HardwareTarget, Workload
from jaxbench import metrics
from jaxbench.metrics import fast_lows
from jaxbench.metrics.curves import point_of, set_values, unpack_curves, unpack_point, with_upstream
from jaxbench.record import faster_than
from jaxbench.traces import SELECTION_LABELS
from jaxbench.workloads.sets import SET_FILTERS, SET_LABELS, SET_LEVELS, SET_NAMES, baseline_of
from leaderboard import board_versions
from leaderboard.curve_points import curve_point
from leaderboard.models import SubmissionSummary, WorkloadResult
from submissions.models import Submission

DEFAULT_SORT = "-geomean"
# sort key -> (label, row field, default descending)
SORTS = {
    "geomean": ("Floored geomean", "geomean"),
    "ugeomean": ("Unfloored geomean", "ugeomean"),
    "solved": ("Solved", "solved"),
    "correctness": ("Per-sample correctness", "correctness"),
    "fast": ("fast@N", "fast"),
    "upstream": ("Upstream score", "upstream"),
    "expert": ("% of expert", "expert_pct"),
    "tokens": ("Tokens per solved", "tokens_per_solved"),
    "cost": ("Cost per solved", "cost_per_solved"),
    "fast_per_dollar": ("fast@N per dollar", "fast_per_dollar"),
    "date": ("Date", "date"),
    "team": ("Team", "team"),
    "method": ("Method", "method"),
    "model": ("Model", "model"),
}
BUDGET_CHOICES = (1, 2, 5, 10, 20, 50, 100, 144)
CACHE_SECONDS = 300
CHART_TOP = 30
CURVE_TOP = 10


# --------------------------------------------------------------------------------------------
# Query
# --------------------------------------------------------------------------------------------


def default_hardware():
    """The target with the most published submissions, else ``cpu`` (else the first one)."""
    top = (
        Submission.objects.public().values("hardware_id").annotate(n=Count("id")).order_by("-n", "hardware_id").first()
    )
    if top:
        return HardwareTarget.objects.get(pk=top["hardware_id"])
    return HardwareTarget.objects.filter(slug="cpu").first() or HardwareTarget.objects.first()


def _int_or_none(value) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def _float(value, default: float) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) and f >= 0 else default


@dataclasses.dataclass(frozen=True)
class Query:
    hardware: Any
    wset: str = "all"
    n: int | None = None
    p: float = metrics.DEFAULT_P
    sort: str = DEFAULT_SORT
    method: str = ""
    model: str = ""
    selection: str = ""  # how the samples were chosen (jaxbench.traces.SELECTIONS or "undeclared")
    versions: str = board_versions.CURRENT  # leaderboard.board_versions: current, all or harness-X

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Query | None:
        """From a query string (unknown values fall back to the defaults); None when there is
        no hardware target at all."""
        hw = None
        if params.get("hardware"):
            hw = HardwareTarget.objects.filter(slug=params.get("hardware")).first()
        hw = hw or default_hardware()
        if hw is None:
            return None
        wset = params.get("set") or "all"
        if wset not in SET_NAMES:
            wset = "all"
        sort = params.get("sort") or DEFAULT_SORT
        if sort.lstrip("-") not in SORTS:
            sort = DEFAULT_SORT
        n = params.get("n")
        return cls(
            hardware=hw,
            wset=wset,
            n=None if n in (None, "", "all") else _int_or_none(n),
            p=_float(params.get("p"), metrics.DEFAULT_P),
            sort=sort,
            method=(params.get("method") or "").strip(),
            model=(params.get("model") or "").strip(),
            selection=sel if (sel := (params.get("selection") or "").strip()) in SELECTION_LABELS else "",
            versions=board_versions.parse(params.get("versions")),
        )

    def params(self, **overrides) -> dict[str, str]:
        """The explicit query string of this view (a permalink restores it exactly)."""
        d = {
            "hardware": self.hardware.slug,
            "set": self.wset,
            "n": "all" if self.n is None else str(self.n),
            "sort": self.sort,
        }
        if self.p != metrics.DEFAULT_P:
            d["p"] = repr(self.p)
        if self.method:
            d["method"] = self.method
        if self.model:
            d["model"] = self.model
        if self.selection:
            d["selection"] = self.selection
        if self.versions != board_versions.CURRENT:
            d["versions"] = self.versions
        d.update({k: ("" if v is None else str(v)) for k, v in overrides.items()})
        return {k: v for k, v in d.items() if v != ""}

    def qs(self, **overrides) -> str:
        return urlencode(self.params(**overrides))

    def sort_qs(self, key: str) -> str:
        """Clicking a column: descending first, then toggles."""
        current = self.sort
        new = key if current == f"-{key}" else f"-{key}"
        return self.qs(sort=new)


class LeaderboardFilter(django_filters.FilterSet):
    """Method and model filters (exact, case-insensitive) and how the samples were chosen, over
    the summary rows."""

    method = django_filters.CharFilter(field_name="submission__method", lookup_expr="iexact", label="Method")
    model = django_filters.CharFilter(field_name="submission__model_name", lookup_expr="iexact", label="Model")
    selection = django_filters.ChoiceFilter(
        field_name="submission__selection", choices=list(SELECTION_LABELS.items()), label="Samples chosen"
    )

    class Meta:
        model = SubmissionSummary
        fields = ["method", "model", "selection"]


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------


def shown_sets(sizes: dict[str, int], chosen: str | None = None) -> dict[str, str]:
    """The set menu: every set with members (a level with no workloads yet is not offered), and
    the chosen one."""
    return {k: v for k, v in SET_LABELS.items() if sizes.get(k) or k == chosen}


def set_members() -> dict[str, list[dict]]:
    """Workloads of every set, in number order: [{pk, wid, slug, title}]."""
    out = {name: [] for name in SET_NAMES}
    for pk, wid, slug, title, source, expert, level in Workload.objects.values_list(
        "pk", "wid", "slug", "title", "source", "expert", "level"
    ).order_by("number"):
        attrs = {"source": source, "expert": expert, "level": level}
        for name, flt in SET_FILTERS.items():
            if all(attrs[k] == v for k, v in flt.items()):
                out[name].append({"pk": pk, "wid": wid, "slug": slug, "title": title})
    return out


def experts_for(hardware) -> dict[int, dict]:
    """Expert references of a target: workload pk -> {speedup, speedup_lo, speedup_hi, median_s,
    outcome, implementation}."""
    return {
        e["workload_id"]: e
        for e in ExpertReference.objects.filter(hardware=hardware).values(
            "workload_id",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "median_s",
            "outcome",
            "implementation",
            "configs_tried",
        )
    }


def _expert_speedup(e: Mapping | None) -> float | None:
    if not e or e.get("speedup") is None:
        return None
    if e.get("outcome") and e["outcome"] not in metrics.CORRECT_OUTCOMES:
        return None
    return e["speedup"]


def expert_geomean(members: list[dict], experts: Mapping[int, Mapping]) -> float | None:
    """Floored geomean of the expert kernels over a set (None when the target has no expert
    reference in it); workloads without an expert kernel count 1.0 (XLA is kept)."""
    speedups = [_expert_speedup(experts.get(w["pk"])) for w in members]
    if not members or all(s is None for s in speedups):
        return None
    return metrics.floored_geomean_of(speedups)


PARTIAL_REFRESH_SECONDS = 30


def visibility_stamp(hardware) -> str:
    """Changes whenever what the public leaderboard of ``hardware`` shows may change: any change
    of a verified or self-reported summary, of a submission's visibility, of the expert
    references or of the workload list. Summaries still being evaluated (shown unranked, in
    the "being evaluated" list) refresh it at most every PARTIAL_REFRESH_SECONDS, so a stream of
    finishing evaluations does not recompute the board on every request."""
    settled = Q(complete=True) | Q(source=SubmissionSummary.REPORTED)
    a = SubmissionSummary.objects.filter(hardware=hardware).aggregate(
        m=Max("updated_at", filter=settled),
        c=Count("id", filter=settled),
        pm=Max("updated_at", filter=~settled),
        pc=Count("id", filter=~settled),
    )
    partial = int(a["pm"].timestamp() // PARTIAL_REFRESH_SECONDS) if a["pm"] else None
    b = Submission.objects.filter(hardware=hardware).aggregate(
        p=Max("published_at"),
        w=Max("withdrawn_at"),
        c=Count("id", filter=Q(published_at__isnull=False, withdrawn_at__isnull=True)),
    )
    e = ExpertReference.objects.filter(hardware=hardware).aggregate(m=Max("updated_at"), c=Count("id"))
    w = Workload.objects.aggregate(c=Count("id"), m=Max("id"))
    parts = [a["m"], a["c"], partial, a["pc"], b["p"], b["w"], b["c"], e["m"], e["c"], w["c"], w["m"]]
    return "|".join(p.isoformat() if hasattr(p, "isoformat") else str(p) for p in parts)


def cache_key(prefix: str, *parts) -> str:
    """A short, memcached-safe cache key from any parts."""
    return f"lb:{prefix}:" + hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:40]


# --------------------------------------------------------------------------------------------
# Leaderboard
# --------------------------------------------------------------------------------------------

_SUMMARY_FIELDS = (
    "pk",
    "submission_id",
    "source",
    "complete",
    "mode",
    "candidates_total",
    "n_samples",
    "per_sample_correctness",
    "tokens_total",
    "cost_total",
    "jax_versions",
    "harness_versions",
    "earlier_versions",
    "earlier_harness_versions",
    "solved_all",
    *(f"attempted_{name}" for name in SET_NAMES),
    "submission__team__name",
    "submission__team__slug",
    "submission__method",
    "submission__model_name",
    "submission__framework",
    "submission__kind",
    "submission__sampling",
    "submission__selection",
    "submission__selector",
)
# the row's date: the day it was published (created, before that), as a date from the database
# (parsing two timestamps per row with time zones cost more than the rest of the row)
_SHOWN_ON = TruncDate(Coalesce("submission__published_at", "submission__created_at"), tzinfo=datetime.UTC)


def _row(s: Mapping, q: Query, point, expert_point, sizes: Mapping[str, int], expert_gm: float | None) -> dict:
    """A board row; ``point``/``expert_point``: the chosen set's and the expert set's curves at
    the query's budget (``unpack_point``)."""
    # the public suite's score: a full-budget figure, as the suite computes it for a finished run
    v = with_upstream(set_values(point, sizes[q.wset]), s[f"attempted_{q.wset}"], full_budget=q.n is None)
    ex = set_values(expert_point, sizes["expert"])
    if s["source"] == SubmissionSummary.REPORTED:
        provenance = "self-reported"
    else:
        provenance = "verified" if s["complete"] else "partial"
    solved_all = s["solved_all"]
    return {
        "rank": None,
        "tied": False,
        "submission": s["submission_id"],
        # the summary this row was read from: what the charts fetch their numbers by (never a
        # list of ids zipped with the rows, whose order ranking and sorting change)
        "summary_id": s["pk"],
        "url": f"/submissions/{s['submission_id']}/",
        "team": s["submission__team__name"],
        "team_slug": s["submission__team__slug"],
        "method": s["submission__method"],
        "model": s["submission__model_name"],
        "framework": s["submission__framework"],
        "kind": s["submission__kind"],
        "sampling": s["submission__sampling"],
        "selection": s["submission__selection"],
        "selector": s["submission__selector"],
        "provenance": provenance,
        "solved": v["solved"],
        "set_size": v["size"],
        "correctness": s["per_sample_correctness"],
        "geomean": v["geomean"],
        "geomean_low": v["low"],
        "geomean_high": v["high"],
        "ugeomean": v.get("ugeomean"),
        "ugeomean_low": v.get("ulow"),
        "ugeomean_high": v.get("uhigh"),
        "fast": v["fast"],
        "attempted": v["attempted"],
        "upstream": v["upstream"],
        "expert_geomean": ex["geomean"] if sizes["expert"] else None,
        "expert_pct": (ex["geomean"] / expert_gm) if expert_gm and sizes["expert"] else None,
        "tokens_per_solved": metrics.per_solved(s["tokens_total"], solved_all),
        "cost_per_solved": metrics.per_solved(s["cost_total"], solved_all),
        "fast_per_dollar": metrics.per_dollar(v["fast"], s["cost_total"]),
        "tokens_total": s["tokens_total"],
        "cost_total": s["cost_total"],
        "date": s["shown_on"].isoformat() if s["shown_on"] else "",
        "n_samples": s["n_samples"],
        "candidates_total": s["candidates_total"],
        "jax_version": ", ".join(s["jax_versions"] or []),
        "harness_version": ", ".join(s["harness_versions"] or []),
        # evaluations of an earlier workload or harness version: kept, not counted in this row
        "earlier_versions": s.get("earlier_versions") or 0,
        # with ?versions= other than current: the workloads whose result comes from an earlier
        # version (leaderboard.board_versions), and a sentence naming them
        "versions_used": s.get("versions_used") or {},
        "version_note": s.get("version_note") or "",
        "hardware": q.hardware.slug,
        "workload_set": q.wset,
        "budget": "all" if q.n is None else q.n,
        "mode": s["mode"],
    }


def rank_rows(rows: list[dict]) -> None:
    """Rank by floored geomean (descending), equal ones by unfloored geomean (descending; none
    solved last), then solved. Rows whose geomean intervals overlap (``metrics.tied``) with the
    row above share its rank and are marked tied."""

    def key(r):
        u = r.get("ugeomean")
        return (-r["geomean"], u is None, -(u or 0.0), -(r["solved"] or 0), r["submission"])

    ordered = sorted(rows, key=key)
    rows[:] = ordered  # tied rows keep this order under every sort
    prev = None
    for pos, r in enumerate(ordered, start=1):
        if prev is not None and metrics.tied(
            (r["geomean_low"], r["geomean_high"]), (prev["geomean_low"], prev["geomean_high"])
        ):
            r["rank"] = prev["rank"]
            r["tied"] = prev["tied"] = True
        else:
            r["rank"] = pos
        prev = r


def sort_rows(rows: list[dict], sort: str) -> list[dict]:
    key = sort.lstrip("-")
    field = SORTS[key][1]
    desc = sort.startswith("-")
    present = [r for r in rows if r.get(field) is not None]
    missing = [r for r in rows if r.get(field) is None]

    def k(r):
        v = r[field]
        return v.lower() if isinstance(v, str) else v

    present.sort(key=lambda r: r.get("rank") or 0)  # stable: rank_rows' order within a rank
    present.sort(key=k, reverse=desc)
    return present + missing


def _aggregates_of(
    modes: Mapping[int, str], overrides: Mapping[int, Mapping], workload_ids: list[int], *, curves: bool = False
) -> dict[int, dict[int, Any]]:
    """summary pk -> workload pk -> what ``metrics.fast_p`` (and, ``curves``, ``fast_p_curve``)
    reads of its WorkloadAggregate, of the summaries ``modes`` (pk -> its mode) and the
    workloads ``workload_ids`` (the chosen set's: the others' are not read): from each
    summary's packed lows (``fast_lows``, one query), from the stored aggregates for a summary
    packed before them (one query per mode), or recomputed under the chosen versions
    (``overrides``, board_versions: whole)."""
    by_summary: dict[int, dict[int, Any]] = {sid: dict(overrides[sid]["aggs"]) for sid in modes if sid in overrides}
    packed = _packed_lows([sid for sid in modes if sid not in overrides])
    wanted = set(workload_ids)
    for sid, pk in packed.items():
        if pk is not None:
            by_summary[sid] = fast_lows.aggregates(pk, wanted, modes[sid])
    for mode in metrics.MODES:
        stored = [sid for sid, m in modes.items() if m == mode and sid not in overrides and packed.get(sid) is None]
        if stored:
            for sid, wl, agg in _fast_p_fields(mode, stored, workload_ids, curves):
                by_summary.setdefault(sid, {})[wl] = agg
    return by_summary


def _packed_lows(summary_ids: list[int]) -> dict[int, fast_lows.Packed | None]:
    """summary pk -> its packed lows (``SubmissionSummary.fast_lows``; None: not packed yet)."""
    if not summary_ids:
        return {}
    return {
        pk: fast_lows.unpack(blob)
        for pk, blob in SubmissionSummary.objects.filter(pk__in=summary_ids).order_by().values_list("pk", "fast_lows")
    }


def _fast_p_fields(mode: str, summary_ids: list[int], workload_ids: list[int], curves: bool):
    """(summary pk, workload pk, WorkloadAggregate) holding only what fast_p@N reads in ``mode``:
    the counts (columns) and, cut out of the stored JSON by the database, the lows' progression
    (sequential) or the sorted lows (independent); with ``curves`` the largest index too (a
    sequential curve's length). Loading, parsing and validating a board's whole aggregates
    (200 submissions x 50 workloads, 144 samples each) took ~1.3 s of the load benchmark's
    ``?p=1.5`` board (SQLite, 1.34 s p95 in all); these fields, ~0.1 s."""
    independent = mode == metrics.INDEPENDENT
    # aggregates stored before intervals: every low is its point (WorkloadAggregate.from_dict)
    key, earlier = ("correct_lows", "correct_speedups") if independent else ("low_progression", "progression")
    fields = ["summary_id", "workload_id", "n_samples", "n_correct"]
    rows = (
        WorkloadResult.objects.filter(summary_id__in=summary_ids, workload_id__in=workload_ids)
        .order_by()  # not the model's workload order: no join
        .values_list(
            *fields,
            # JSON text, parsed here: only the rows with a correct sample have any
            Case(
                When(n_correct=0, then=Value(None)),
                default=Coalesce(KT(f"aggregate__{key}"), KT(f"aggregate__{earlier}")),
                output_field=TextField(),
            ),
            KT("aggregate__max_index") if curves else Value(None, output_field=TextField()),
        )
    )
    for sid, wl, n_samples, n_correct, values, max_index in rows:
        # SQLite's JSON null is the text "null" (KeyTransform), PostgreSQL's NULL
        values = (json.loads(values) if values else None) or ()
        max_index = None if max_index in (None, "null") else int(max_index)
        yield (
            sid,
            wl,
            metrics.WorkloadAggregate(
                n_samples=n_samples,
                n_correct=n_correct,
                max_index=max_index,
                correct_lows=tuple(values) if independent else (),
                low_progression=() if independent else tuple(map(tuple, values)),
            ),
        )


def _slow_fast_p(rows: list[dict], q: Query, members: list[dict], overrides: Mapping[int, Mapping]) -> None:
    """fast_p@N for p != 1: from each summary's packed lows (``fast_lows.fast_p``, one row per
    summary), else from the per-workload aggregates (metrics.fast_p). Reading the 10,000
    aggregates of a 200-submission board cost ~0.3 s of CPU on SQLite (load benchmark)."""
    ids = [w["pk"] for w in members]
    wanted = set(ids)
    packed = _packed_lows([r["summary_id"] for r in rows if r["summary_id"] not in overrides]) if ids else {}
    rest = {r["summary_id"]: r["mode"] for r in rows if packed.get(r["summary_id"]) is None}
    by_summary = _aggregates_of(rest, overrides, ids) if rest else {}
    for r in rows:
        pk = packed.get(r["summary_id"])
        if pk is not None:
            r["fast"] = fast_lows.fast_p(pk, wanted, q.n, q.p, r["mode"], size=len(ids))
        else:
            aggs = metrics.select(by_summary.get(r["summary_id"], {}), ids)
            r["fast"] = metrics.fast_p(aggs, q.n, q.p, r["mode"])


def _compute(q: Query) -> dict:
    members = set_members()
    sizes = {name: len(ws) for name, ws in members.items()}
    experts = experts_for(q.hardware)
    expert_gm = expert_geomean(members["expert"], experts)

    base = SubmissionSummary.objects.filter(hardware=q.hardware, submission__in=Submission.objects.public())
    fs = LeaderboardFilter({"method": q.method, "model": q.model, "selection": q.selection}, base)
    qs = fs.qs if fs.is_valid() else base.none()
    # each curve at the budget only, cut out by the database (leaderboard.curve_points)
    points = {"point": curve_point(f"curves_{q.wset}", q.n), "expert_point": curve_point("curves_expert", q.n)}
    ranked, reported, partial = [], [], []
    verified_subs = set()
    # updated_at keys the summaries recomputed under another version choice (board_versions)
    fields = _SUMMARY_FIELDS if q.versions == board_versions.CURRENT else (*_SUMMARY_FIELDS, "updated_at")
    raw = list(qs.values(*fields, shown_on=_SHOWN_ON, **points).order_by())
    version_options = board_versions.options(raw, q.versions)
    raw, overrides = board_versions.recompute(q.hardware, q.versions, raw, members, q.wset)
    # The filter menus list every method and model of the board: without a filter they are
    # the rows' own (two queries fewer on every cold request).
    pairs = (
        [(s["submission__method"], s["submission__model_name"]) for s in raw]
        if not (q.method or q.model or q.selection)
        else list(base.values_list("submission__method", "submission__model_name"))
    )
    choices = {"methods": sorted({m for m, _ in pairs}), "models": sorted({m for _, m in pairs if m})}
    for s in raw:
        if f"curves_{q.wset}" in s:  # recomputed under other versions (board_versions): whole curves
            s = dict(s, point=point_of(s[f"curves_{q.wset}"], q.n), expert_point=point_of(s["curves_expert"], q.n))
        if SET_LEVELS[q.wset] > 1 and not s[f"attempted_{q.wset}"]:
            continue  # a later level ranks the submissions that attempted it; level 1 every one
        r = _row(s, q, unpack_point(s["point"]), unpack_point(s["expert_point"]), sizes, expert_gm)
        if s["source"] == SubmissionSummary.REPORTED:
            reported.append(r)
        elif s["complete"]:
            ranked.append(r)
            verified_subs.add(s["submission_id"])
        else:
            partial.append(r)
    # A verified result supersedes the same submission's self-reported one.
    reported = [r for r in reported if r["submission"] not in verified_subs]
    if q.p != metrics.DEFAULT_P:
        _slow_fast_p(ranked + reported + partial, q, members[q.wset], overrides)
    rank_rows(ranked)
    ranked = sort_rows(ranked, q.sort)

    references = [
        {
            "kind": "xla",
            "team": "XLA" if SET_LEVELS[q.wset] == 1 else "Baseline",
            "method": "XLA compiler (baseline)"
            if SET_LEVELS[q.wset] == 1
            else "each workload's baseline (its Pallas kernel, or XLA)",
            "model": "",
            "geomean": 1.0,
            "geomean_low": 1.0,
            "geomean_high": 1.0,
            "ugeomean": 1.0,
            "upstream": 1.0,
            "solved": None,
            "fast": 0.0,
            "expert_pct": None,
            "set_size": sizes[q.wset],
            "set_sizes": sizes,
            "note": "the reference every speedup is measured against",
        }
    ]
    ex_gm_set = expert_geomean(members[q.wset], experts)
    if ex_gm_set is not None:
        ex_ids = [w["pk"] for w in members[q.wset]]
        solved = sum(1 for w in ex_ids if _expert_speedup(experts.get(w)) is not None)
        # faster than p: the interval's low end above p (the point for a reference swept before intervals)
        fast = sum(
            1
            for w in ex_ids
            if _expert_speedup(experts.get(w)) is not None
            and faster_than(q.p, experts[w]["speedup"], experts[w].get("speedup_lo"))
        )
        references.append(
            {
                "kind": "expert",
                "team": "Experts",
                "method": "hand-tuned expert kernels (Tokamax)",
                "model": "",
                "geomean": ex_gm_set,
                "geomean_low": ex_gm_set,
                "geomean_high": ex_gm_set,
                "ugeomean": metrics.unfloored_geomean_of(
                    _expert_speedup(experts.get(w["pk"])) for w in members[q.wset]
                ),
                # the workloads with an expert kernel are the ones the experts attempted
                "upstream": metrics.upstream_score(ex_gm_set, len(ex_ids), solved),
                "solved": solved,
                "fast": fast / len(ex_ids) if ex_ids else 0.0,
                "expert_pct": 1.0,
                "set_size": sizes[q.wset],
                "set_sizes": sizes,
                "note": f"{solved} expert kernels on {q.hardware.slug}; other workloads count 1.0",
            }
        )
    jax = sorted({v for r in ranked for v in r["jax_version"].split(", ") if v})
    harness = sorted({v for r in ranked for v in r["harness_version"].split(", ") if v})
    return {
        "meta": {
            "hardware": q.hardware.slug,
            "hardware_name": q.hardware.name,
            "workload_set": q.wset,
            "workload_set_label": SET_LABELS[q.wset],
            # what the set's speedups are over (sets.baseline_of): "XLA", or a later level's baselines
            "baseline": baseline_of(q.wset),
            "set_size": sizes[q.wset],
            "set_sizes": sizes,
            "budget": "all" if q.n is None else q.n,
            "p": q.p,
            "sort": q.sort,
            "method": q.method,
            "model": q.model,
            "selection": q.selection,
            "jax_versions": jax,
            "harness_versions": harness,
            # leaderboard.board_versions: the version filter, whether the rows are comparable,
            # the menu's choices, and how many rows took a result from an earlier version
            "versions": q.versions,
            "versions_label": board_versions.label(q.versions),
            "comparable": q.versions == board_versions.CURRENT,
            "version_options": version_options,
            "rows_from_earlier_versions": sum(1 for r in ranked if r["versions_used"]),
            "expert_geomean": expert_gm,
            "generated_at": timezone.now().isoformat(),
            "query": q.params(),
        },
        "rows": ranked,
        "references": references,
        "self_reported": reported,
        "in_progress": partial,
        "filters": choices,
        "members": members[q.wset],
        # what the charts read of the summaries recomputed under the chosen versions
        "overrides": overrides,
    }


def leaderboard_data(q: Query, *, use_cache: bool = True, stamp: str | None = None) -> dict:
    """Ranked (verified) rows, reference rows (XLA, experts), self-reported and in-progress
    rows of the public submissions of one hardware target at budget ``q.n``."""
    if not use_cache:
        return _compute(q)
    key = cache_key("data", q.hardware.pk, q.qs(), stamp or visibility_stamp(q.hardware))
    data = cache.get(key)
    if data is None:
        data = _compute(q)
        cache.set(key, data, CACHE_SECONDS)
    return data


def chart_label(r: Mapping) -> str:
    """How every leaderboard chart names a ranked row."""
    return f"#{r['submission']} {r['team']} · {r['method']}"


def chart_inputs(q: Query, data: dict) -> dict:
    """What the leaderboard charts need beyond the rows, for the top rows by rank: one entry per
    row (``row``, ``label``, its per-workload ``best`` speedups, outcome ``counts`` and earlier
    ``versions`` at the full budget), and the fast@N ``curves`` of the first CURVE_TOP of them.
    Each entry's label and numbers are read through that row's own summary id (one query: the
    rows themselves leave these numbers out), so a chart can never name one row's numbers with
    another row's label, whatever order ranking and sorting put the rows in."""
    top = sorted(data["rows"], key=lambda r: r["rank"] or 0)[:CHART_TOP]
    overrides = data.get("overrides") or {}
    sids = {r["summary_id"] for r in top}
    extra = {sid: o for sid, o in overrides.items() if sid in sids}
    stored = [sid for sid in sids if sid not in extra]
    plotted = top[:CURVE_TOP]
    if stored:
        # every top row's best speedups, the whole curves of the plotted (CURVE_TOP) rows only
        with_curves = [r["summary_id"] for r in plotted] if q.p == metrics.DEFAULT_P else []
        curves = Case(
            When(pk__in=with_curves, then=F(f"curves_{q.wset}")), default=Value(b""), output_field=BinaryField()
        )
        extra.update(
            (s["pk"], s)
            for s in SubmissionSummary.objects.filter(pk__in=stored).values("pk", "best", "counts", curves=curves)
        )
    rows = [
        {
            "row": r,
            "label": chart_label(r),
            "best": extra[r["summary_id"]]["best"],
            "counts": extra[r["summary_id"]]["counts"] or {},
            # the workloads whose best comes from an earlier version (the heatmap names them)
            "versions": r.get("versions_used") or {},
        }
        for r in top
    ]
    size = data["meta"]["set_size"] or 1
    if q.p != metrics.DEFAULT_P:
        # fast_p@N for another p is not folded into the stored curves: from the per-workload
        # aggregates of the (at most CURVE_TOP) plotted rows, one query.
        ids = [w["pk"] for w in data["members"]]
        by_summary = _aggregates_of({r["summary_id"]: r["mode"] for r in plotted}, overrides, ids, curves=True)
        for c in rows[:CURVE_TOP]:
            aggs = metrics.select(by_summary.get(c["row"]["summary_id"], {}), ids)
            c["fast"] = [v for _, v in metrics.fast_p_curve(aggs, q.p, c["row"]["mode"])]
    else:
        for c in rows[:CURVE_TOP]:
            c["fast"] = [x / size for x in unpack_curves(extra[c["row"]["summary_id"]]["curves"])["fast"]]
    return {
        "top": top,
        "rows": rows,
        "curves": fast_curve_series([(c["label"], c["fast"]) for c in rows[:CURVE_TOP]]),
    }


def fast_curve_series(items: list[tuple[str, list[float]]]) -> list[dict]:
    """Chart series ``{label, n, fast}`` for N = 1..the longest curve: a curve is constant
    beyond its last sample, so shorter ones are extended (a kernel submission's single sample
    becomes a flat line)."""
    length = max((len(v) for _, v in items), default=0)
    out = []
    for label, values in items:
        if not values:
            continue
        vals = list(values) + [values[-1]] * (length - len(values))
        out.append({"label": label, "n": list(range(1, length + 1)), "fast": vals})
    return out
