"""CSV and JSON downloads of every leaderboard table (``?format=csv|json``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse, JsonResponse

FORMATS = ("csv", "json")


def wants_export(request) -> str | None:
    fmt = request.GET.get("format")
    return fmt if fmt in FORMATS else None


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(round(v, 6))
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True)
    return v


def export_response(
    fmt: str, name: str, meta: Mapping, rows: Sequence[Mapping], columns: Sequence[str], extra: Mapping | None = None
):
    """CSV: one header line and one line per row; every row carries the meta columns (hardware,
    versions, ...) so a CSV file alone says where its numbers come from. JSON: ``{meta, rows,
    ...extra}``."""
    if fmt == "json":
        body = {"meta": dict(meta), "rows": [{c: r.get(c) for c in columns} for r in rows]}
        body.update(extra or {})
        # not indented: an indent takes json's pure-Python encoder, 0.15 s for the 0.9 MB export
        # of a 7,200-sample submission (the C encoder: a tenth of that)
        resp = JsonResponse(body, encoder=DjangoJSONEncoder)
        resp["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return resp
    meta_cols = [k for k, v in meta.items() if not isinstance(v, (dict,)) and k not in columns]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(list(columns) + meta_cols)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in columns] + [_cell(meta[k]) for k in meta_cols])
    resp = HttpResponse(buf.getvalue(), content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return resp
