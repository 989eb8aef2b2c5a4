"""How the pages show a workload's null-kernel audit and upstream record (the catalogue's copies
of jaxbench/workloads/null_audit.json and upstream.py; no query, no JAX)."""

from __future__ import annotations

from jaxbench.workloads import null_audit as audit_rules
from jaxbench.workloads.upstream import DEVIATION_KINDS


def kernel_label(name: str) -> str:
    if name.startswith("input:"):
        return f"{name.split(':', 1)[1]} passed through"
    return {"zeros": "zeros", "constant": "a constant", "mean": "the mean"}.get(name, name)


def _ours_cell(r: dict, degenerate: bool) -> str:
    if not r.get("applicable", True):
        return "n/a"
    verdict = "passes" if r["passes"] else "fails"
    if r["passes"] and degenerate:
        verdict = "passes (documented degeneracy)"
    return f"{verdict}, {r['excess']:.3g}× its allowance"


def _public_cell(r: dict | None) -> str:
    if r is None:
        return ""
    if not r.get("applicable", True):
        return "n/a"
    verdict = "passes" if r["passes"] else "fails"
    return f"{verdict}, max |diff| {r['max_diff']:.3g} ({r['excess']:.3g}× its bound)"


def public_line(public: dict | None) -> str:
    """'zeros, the mean pass upstream', 'none pass upstream', 'fails upstream itself', 'not run upstream'."""
    if not public:
        return "not run upstream"
    status = public.get("status")
    if status == "error":
        return "baseline fails upstream"
    if status != "run":
        return "not run upstream"
    ok = audit_rules.passing(public)
    if not ok:
        return "none pass upstream"
    return f"{', '.join(kernel_label(k) for k in ok)} pass{'es' if len(ok) == 1 else ''} upstream"


def describe(audit: dict | None, degenerate: str = "") -> dict | None:
    """What a page shows of one workload's audit, or None when there is none."""
    if not audit or "ours" not in audit:
        return None
    ours = audit["ours"]
    public = audit.get("public") or {}
    pub_kernels = public.get("kernels", {}) if public.get("status") == "run" else {}
    rows = []
    for name, r in ours["kernels"].items():
        rows.append(
            {
                "name": name,
                "label": kernel_label(name),
                "ours": _ours_cell(r, bool(degenerate)),
                "ours_passes": bool(r.get("passes")),
                "ours_reason": r.get("reason", ""),
                "public": _public_cell(pub_kernels.get(name)) if pub_kernels else "",
                "public_passes": bool(pub_kernels.get(name, {}).get("passes")),
                "public_reason": pub_kernels.get(name, {}).get("reason", "")
                or pub_kernels.get(name, {}).get("note", ""),
            }
        )
    applicable = audit_rules.applicable(ours["kernels"])
    passing = audit_rules.passing(ours)
    if passing:
        ours_line = f"{', '.join(kernel_label(k) for k in passing)} pass{'es' if len(passing) == 1 else ''}"
    else:
        ours_line = f"all {len(applicable)} fail"
    title = "; ".join(f"{row['label']}: {row['ours']}" for row in rows if row["ours"] != "n/a")
    public_title = "; ".join(f"{row['label']}: {row['public']}" for row in rows if row["public"] not in ("", "n/a"))
    if public.get("status") != "run":
        public_title = public.get("reason", "")
    return {
        "rows": rows,
        "n": len(applicable),
        "ours_line": ours_line,
        "ours_title": title,
        "all_fail": not passing,
        "undocumented_pass": bool(passing) and not degenerate,
        "public": public,
        "public_line": public_line(public),
        "public_title": public_title,
        "public_passes": bool(audit_rules.passing(public)),
        "current": audit.get("current", True),
    }


def deviation_rows(deviations: list[dict]) -> list[dict]:
    """The deviations with their kind's description, in the module's order."""
    return [{**d, "kind_text": DEVIATION_KINDS.get(d.get("kind", ""), "")} for d in deviations or []]
