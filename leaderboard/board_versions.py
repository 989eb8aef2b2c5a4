"""The boards' version filter (``?versions=`` on the leaderboard page, its charts, exports and API).

* ``current`` (the default): what the aggregates hold, each workload's current version measured
  under the current harness (``evaluator.models.current_versions``): comparable rows, ranked.
* ``all``: per submission and workload, its best result whatever workload or harness version it
  was measured under (``best_group``); a row that took a workload's result from an earlier
  version names it (``versions_used``, ``version_note``). Not comparable: the page says so.
* ``harness-X`` (an earlier harness, e.g. ``harness-1.0.0``): the results measured under harness
  X, of each workload's current version. Explicit earlier *workload* versions stay on the
  workload pages (``/workloads/<slug>/?versions=N``): workloads are versioned one by one, so a
  board of "version N of every workload" would mean nothing.

Nothing here is written anywhere: the figures are computed per request (and cached with the
board) from the evaluation rows through the same folding as the aggregates
(``samples.chosen_samples`` -> ``curves.build`` -> ``refresh.summary_from_states``), and only
for the summaries the choice changes: those with results of an earlier version
(``SubmissionSummary.earlier_versions``, ``earlier_harness_versions``); every other summary's
stored figures are already the answer. Two queries at most whatever the number of submissions:
the stored current states of those summaries (``all`` only) and their other evaluations.
"""

from __future__ import annotations

import hashlib
import re
import types
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.cache import cache
from django.db.models import F

from evaluator.models import Evaluation, current_harness_version, current_versions
from jaxbench import metrics
from jaxbench.metrics.curves import WorkloadState, build
from jaxbench.workloads.sets import SET_NAMES
from leaderboard.aggregates.refresh import summary_from_states
from leaderboard.aggregates.samples import chosen_samples
from leaderboard.models import SubmissionSummary, WorkloadResult

CURRENT = "current"
ALL = "all"
HARNESS = "harness-"
CACHE_SECONDS = 3600  # a summary's figures under a choice of versions, keyed by its updated_at
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,19}$")


def parse(value: str | None) -> str:
    """``current``, ``all`` or ``harness-X`` for an earlier harness X; anything else (the current
    harness named explicitly too) is ``current``."""
    v = (value or "").strip()
    if v == ALL:
        return ALL
    if v.startswith(HARNESS):
        h = v[len(HARNESS) :]
        if _VERSION.match(h) and h != current_harness_version():
            return v
    return CURRENT


def harness_of(versions: str) -> str | None:
    """The harness an explicit ``harness-X`` choice names (else None)."""
    return versions[len(HARNESS) :] if versions.startswith(HARNESS) else None


def label(versions: str) -> str:
    if versions == ALL:
        return "All versions (not comparable)"
    harness = harness_of(versions)
    if harness is not None:
        return f"Harness {harness} (earlier, not comparable)"
    return f"Current versions (harness {current_harness_version()})"


def options(summaries: Sequence[Mapping], chosen: str) -> list[tuple[str, str]]:
    """The menu: current, all, and every earlier harness the board's summaries have results of
    (read from the summary rows: no query)."""
    harnesses = sorted({h for s in summaries for h in (s.get("earlier_harness_versions") or [])} - {""})
    values = [CURRENT, ALL, *(HARNESS + h for h in harnesses)]
    if chosen not in values:
        values.append(chosen)
    return [(v, label(v)) for v in values]


def _rank(state: WorkloadState, current: bool, workload_version: int, harness_version: str) -> tuple:
    """Which of a workload's results is its best: the floored best speedup, then solved, then
    the raw best speedup; on a tie the current versions, then the later ones."""
    best = state.agg.best_speedup
    return (max(1.0, best or 1.0), state.agg.n_correct > 0, best or 0.0, current, workload_version, harness_version)


def _set_map(members: Mapping[str, Sequence[Mapping]]) -> dict[int, tuple[str, tuple[str, ...]]]:
    """workload pk -> (wid, the sets it belongs to), from the board's set members (no query)."""
    out: dict[int, tuple[str, tuple[str, ...]]] = {}
    for name in SET_NAMES:
        for w in members.get(name, ()):
            wid, names = out.get(w["pk"], (w["wid"], ()))
            out[w["pk"]] = (wid, (*names, name))
    return out


def version_text(v: Mapping[str, Any]) -> str:
    """``v1, harness 1.0.0``: what is earlier about one ``versions_used`` entry."""
    bits = []
    if v["workload_version"] != v["current_workload_version"]:
        bits.append(f"v{v['workload_version']}")
    if v["harness_version"] != v["current_harness_version"]:
        bits.append(f"harness {v['harness_version']}")
    return ", ".join(bits)


def _note(used: Mapping[str, Mapping[str, Any]]) -> str:
    """ "2 workloads from an earlier version: 12p (v1), 8p (harness 1.0.0)", or ""."""
    if not used:
        return ""
    parts = ", ".join(f"{wid} ({version_text(v)})" for wid, v in used.items())
    return f"{len(used)} workload{'s' if len(used) != 1 else ''} from an earlier version: {parts}"


def recompute(
    hardware, versions: str, raw: list[dict], members: Mapping[str, Sequence[Mapping]], wset: str
) -> tuple[list[dict], dict[int, dict]]:
    """The board's summary rows (``leaderboard.data._compute``'s ``raw``) under ``versions``:
    each evaluated summary the choice changes recomputed from the evaluation rows (the others
    as stored; with an explicit harness, the summaries without a result under it dropped).
    Returns (rows, overrides): ``overrides`` maps a recomputed summary's pk to what the charts
    read of it (``best``, the chosen set's ``curves``, per-workload ``aggs``, outcome ``counts``).

    Each summary's recomputed figures are cached under its ``updated_at`` (every change of its
    evaluations, earlier ones included, touches it), so a board recomputes only the submissions
    that changed since it was last shown under these versions."""
    if versions == CURRENT:
        return raw, {}
    harness = harness_of(versions)
    touched = [
        s
        for s in raw
        if s["source"] == SubmissionSummary.EVALUATED
        and s.get("earlier_versions")
        and (harness is None or harness in (s.get("earlier_harness_versions") or []))
    ]
    if harness is not None:  # a summary without results under that harness has nothing to show
        ids = {s["pk"] for s in touched}
        raw = [s for s in raw if s["source"] != SubmissionSummary.EVALUATED or s["pk"] in ids]
    if not touched:
        return raw, {}
    sizes = {name: len(members.get(name, ())) for name in SET_NAMES}
    shape = (versions, current_harness_version(), tuple(sorted(sizes.items())))
    keys = {s["pk"]: _cache_key(s, shape) for s in touched}
    found = cache.get_many(list(keys.values()))
    entries = {pk: found[key] for pk, key in keys.items() if key in found}
    missing = [s for s in touched if s["pk"] not in entries]
    if missing:
        fresh = _summaries(hardware, harness, missing, members, sizes)
        cache.set_many({keys[pk]: entry for pk, entry in fresh.items()}, CACHE_SECONDS)
        entries.update(fresh)
    out_rows, overrides = [], {}
    for s in raw:
        entry = entries.get(s["pk"]) if s["source"] == SubmissionSummary.EVALUATED else None
        if entry is None:
            out_rows.append(s)
            continue
        curves = entry["curves"]
        out_rows.append(
            dict(s, **entry["fields"], **{f"curves_{wset}": curves[wset], "curves_expert": curves["expert"]})
        )
        overrides[s["pk"]] = {
            "best": entry["best"],
            "curves": curves[wset],
            "aggs": entry["aggs"],
            "counts": entry["fields"]["counts"],
        }
    return out_rows, overrides


def _cache_key(summary: Mapping, shape: tuple) -> str:
    stamp = summary["updated_at"].isoformat() if summary.get("updated_at") else ""
    return "lb:versions:" + hashlib.sha256(repr((summary["pk"], stamp, shape)).encode()).hexdigest()[:40]


def _summaries(
    hardware, harness: str | None, touched: Sequence[Mapping], members: Mapping[str, Sequence[Mapping]], sizes
) -> dict[int, dict]:
    """summary pk -> its figures under ``harness`` (None: every version), folded from the
    evaluation rows (and, for every version, the stored current states): two queries."""
    current_harness = current_harness_version()
    by_sub = {s["submission_id"]: s for s in touched}
    rows = Evaluation.objects.filter(
        hardware=hardware,
        candidate__submission_id__in=list(by_sub),
        state__in=(Evaluation.DONE, Evaluation.SKIPPED),
    )
    if harness is not None:
        rows = rows.filter(harness_version=harness, workload_version=F("candidate__workload__version"))
    else:
        rows = rows.exclude(current_versions())
    # (submission, workload) -> [(rank, state, workload version, harness version, jax, harness versions)]
    found: dict[tuple[int, int], list[tuple]] = {}
    latest: dict[int, int] = {}  # workload pk -> its current version, as the rows name it
    groups = chosen_samples(
        rows.annotate(current_version=F("candidate__workload__version")),
        "candidate__submission_id",
        "candidate__workload_id",
        "current_version",
        "workload_version",
        "harness_version",
    )
    for (sub, wl, cur, wv, hv), samples in groups.items():
        states, acc = build(samples)
        st = states[wl]
        latest[wl] = cur
        found.setdefault((sub, wl), []).append(
            (_rank(st, False, wv, hv), st, wv, hv, acc["jax_versions"], acc["harness_versions"])
        )
    if harness is None:  # every view of all versions weighs the stored current results too
        pk_to_sub = {s["pk"]: s["submission_id"] for s in touched}
        for sid, wl, agg, folded, intervals, stopped, wv in WorkloadResult.objects.filter(
            summary_id__in=list(pk_to_sub)
        ).values_list(
            "summary_id", "workload_id", "aggregate", "folded", "intervals", "precheck_stopped", "workload_version"
        ):
            st = WorkloadState.from_row(
                types.SimpleNamespace(aggregate=agg, folded=folded, intervals=intervals, precheck_stopped=stopped)
            )
            latest.setdefault(wl, wv)
            found.setdefault((pk_to_sub[sid], wl), []).append(
                (_rank(st, True, wv, current_harness), st, wv, None, None, None)
            )
    wmap = _set_map(members)
    chosen: dict[int, dict[int, tuple]] = {}
    for (sub, wl), options_ in found.items():
        if wl in wmap:
            chosen.setdefault(sub, {})[wl] = max(options_, key=lambda o: o[0])
    out = {}
    for s in touched:
        picks = chosen.get(s["submission_id"], {})
        states = {wl: p[1] for wl, p in picks.items()}
        counts = dict.fromkeys(metrics.OUTCOMES, 0)
        for st in states.values():
            for o, n in st.agg.outcome_counts.items():
                counts[o] += n
        jax, harnesses, used = set(), set(), {}
        for wl, (_, _, wv, hv, jax_v, harness_v) in picks.items():
            if hv is None:  # the stored current result
                jax.update(s.get("jax_versions") or [])
                harnesses.update(s.get("harness_versions") or [current_harness])
                continue
            jax.update(jax_v)
            harnesses.update(harness_v or [hv])
            used[wmap[wl][0]] = {
                "workload_version": wv,
                "harness_version": hv,
                "current_workload_version": latest.get(wl, wv),
                "current_harness_version": current_harness,
            }
        summary = SubmissionSummary(
            submission_id=s["submission_id"],
            hardware_id=hardware.pk,
            source=s["source"],
            mode=s["mode"],
            candidates_total=s["candidates_total"],
        )
        acc = {
            "counts": counts,
            "jax_versions": sorted(jax),
            "harness_versions": sorted(harnesses),
            "last_evaluated_at": None,
        }
        summary_from_states(summary, states, acc, wmap, sizes, {wl: p[2] for wl, p in picks.items()})
        used = dict(sorted(used.items(), key=lambda kv: _number(kv[0])))
        out[s["pk"]] = {
            "fields": {
                "n_samples": summary.n_samples,
                "per_sample_correctness": summary.per_sample_correctness,
                "complete": summary.complete,
                "counts": summary.counts,
                "solved_all": summary.solved_all,
                **{f"attempted_{name}": getattr(summary, f"attempted_{name}") for name in SET_NAMES},
                "jax_versions": summary.jax_versions,
                "harness_versions": summary.harness_versions,
                "versions_used": used,
                "version_note": _note(used),
            },
            "curves": {name: getattr(summary, f"curves_{name}") for name in SET_NAMES},
            "best": summary.best,
            "aggs": {wl: st.agg for wl, st in states.items()},
        }
    return out


def _number(wid: str) -> int:
    digits = re.match(r"\d+", wid)
    return int(digits.group()) if digits else 0
