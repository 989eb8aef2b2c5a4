"""The long tables and the chart figures are built in Python (leaderboard.views.table_rows,
the ``figure_script`` filter) for speed: they must write exactly what the template engine and
``json_script`` would have, escaping included."""

from __future__ import annotations

from django.template import Context, Template
from django.utils.html import json_script

from leaderboard.templatetags.leaderboard_extras import figure_script
from leaderboard.views.table_rows import esc, failure_rows, workload_table_rows

NASTY = "<b>&'\"x</b>"


def test_esc_is_conditional_escape():
    from django.utils.html import conditional_escape
    from django.utils.safestring import mark_safe

    for v in (NASTY, 12, None, 1.5, "", mark_safe("<i>ok</i>")):
        assert esc(v) == str(conditional_escape(v))


def test_figure_script_writes_what_json_script_does():
    fig = {"data": [{"y": [NASTY, "a</script><script>alert(1)</script>"], "x": [1.5, None, True]}], "layout": {}}
    assert str(figure_script(fig, "fig-x")) == str(json_script(fig, "fig-x"))


FAILURE_TEMPLATE = (
    "{% load leaderboard_extras %}{% for f in failures %}<tr id=\"failure-{{ f.wid }}-{{ f.index }}\" "
    'data-workload="{{ f.wid }}" data-index="{{ f.index }}">\n  <td><a href="?workload={{ f.wid }}&amp;sample={{ f.index }}'
    '#sample-{{ f.index }}">{{ f.wid }} #{{ f.index }}</a>{% if f.filename %} <span class="mono muted">{{ f.filename }}'
    '</span>{% endif %}</td>\n  <td><span class="badge {{ f.outcome }}" title="{{ f.outcome|outcome_label }}">'
    '{{ f.outcome }}</span>{% if f.category %} <span class="muted">{{ f.category }}</span>{% endif %}{% if f.precheck %}'
    ' <span class="muted">(pre-check)</span>{% endif %}</td>\n  <td class="small"><pre class="mono failure-head">'
    '{{ f.head }}</pre>{% for w in f.where %}<div class="mono muted failure-where">at {{ w }}</div>{% endfor %}'
    '{% if f.message != f.head %}<details><summary>full message</summary><pre class="mono">{{ f.message }}</pre>'
    "</details>{% endif %}</td>\n</tr>{% endfor %}"
)


def test_failure_rows_are_the_template_rows():
    failures = [
        {
            "wid": NASTY,
            "index": 12345,
            "filename": NASTY,
            "outcome": "runtime_error",
            "category": NASTY,
            "precheck": True,
            "head": NASTY,
            "message": NASTY + "\nmore",
            "where": [NASTY, "b.py:2"],
        },
        {
            "wid": "3p",
            "index": 0,
            "filename": "",
            "outcome": "",
            "category": "",
            "precheck": False,
            "head": "",
            "message": "",
            "where": [],
        },  # fmt: skip
        {
            "wid": "3p",
            "index": 7,
            "filename": None,
            "outcome": "held_for_review",
            "category": None,
            "precheck": False,
            "head": "h",
            "message": "h",
            "where": [],
        },  # fmt: skip
    ]
    assert str(failure_rows(failures)) == Template(FAILURE_TEMPLATE).render(Context({"failures": failures}))


WORKLOAD_TEMPLATE = (
    '{% load leaderboard_extras %}{% for r in rows %}<tr data-workload="{{ r.wid }}">\n  <td><a href="/workloads/'
    '{{ r.slug }}/">{{ r.wid }}</a> {{ r.title }}{% if r.expert_workload %} <span class="badge ok">expert</span>'
    '{% endif %}</td>\n  <td><span class="badge {{ r.outcome }}" title="{{ r.outcome|outcome_label }}">{{ r.outcome }}'
    '</span></td>\n  <td class="num">{{ r.n_correct }}/{{ r.n_samples }}{% if r.n_tie %} <span class="muted" '
    'title="correct samples within noise of XLA (never counted faster)">· {{ r.n_tie }} tie{{ r.n_tie|pluralize }}'
    '</span>{% endif %}</td>\n  <td class="num"><strong>{{ r.best_speedup|x }}</strong></td>\n  <td class="num muted">'
    '{{ r|speedup_interval }}</td>\n  <td class="num">{{ r.median_s|time_spread:r.spread }}</td>\n  '
    '<td class="num">{{ r.first_correct_index|default_if_none:"" }}</td>\n  '
    '<td class="num">{{ r.first_faster_index|default_if_none:"" }}</td>\n  <td class="num">{{ r.expert_speedup|x }}'
    '</td>\n  <td class="num">{{ r.gap|pct:0 }}</td>\n  <td class="num"{% if r.outside_pallas %} title="share of '
    "FLOPs outside Pallas: {{ r.outside_pallas }}{% if r.outside_pallas_where %}; largest outside: "
    '{{ r.outside_pallas_where }}{% endif %}"{% endif %}>{{ r.outside_pallas }}</td>\n  {% if trace %}<td><a '
    'href="?workload={{ r.wid }}">samples</a></td>{% endif %}\n</tr>{% empty %}<tr><td colspan="12" class="muted">'
    "No candidate yet.</td></tr>{% endfor %}"
)


def test_workload_rows_are_the_template_rows():
    base = {
        "wid": "1p", "slug": "1p-x", "title": "T", "expert_workload": False, "outcome": "correct_faster",
        "n_correct": 3, "n_samples": 7, "n_tie": 0, "best_speedup": 1.234, "best_low": 1.1, "best_high": 1.3,
        "best_before_intervals": False, "first_correct_index": 0, "first_faster_index": None, "expert_speedup": 2.0,
        "gap": 0.617, "outside_pallas": "", "outside_pallas_where": "", "median_s": None, "spread": None,
    }  # fmt: skip
    rows = [
        base,
        dict(
            base,
            wid=NASTY,
            slug=NASTY,
            title=NASTY,
            expert_workload=True,
            n_tie=1,
            outside_pallas="3.0%",
            outside_pallas_where=NASTY,
            best_before_intervals=True,
            best_speedup=None,
            gap=None,
        ),  # fmt: skip
        dict(base, n_tie=2, outside_pallas="1%", best_low=None, outcome="pending", first_faster_index=4),
        dict(base, median_s=1.23e-3, spread=0.08),
        dict(base, median_s=1.23e-3, spread=None),
    ]
    for trace in (True, False):
        for rs in (rows, []):
            want = Template(WORKLOAD_TEMPLATE).render(Context({"rows": rs, "trace": trace}))
            assert str(workload_table_rows(rs, trace)) == want
