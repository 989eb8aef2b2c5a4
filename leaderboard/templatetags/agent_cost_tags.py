"""``{% agent_cost_card submission workload %}``: the cost and tokens per solved workload of a
trajectory upload (``leaderboard.agent_cost``), rendered by ``leaderboard/_agent_cost.html``;
nothing for a submission whose candidates carry no cumulative usage."""

from __future__ import annotations

from django import template

from leaderboard.agent_cost import submission_agent_cost

register = template.Library()


@register.inclusion_tag("leaderboard/_agent_cost.html")
def agent_cost_card(submission, workload=None) -> dict:
    # only a trajectory upload (its settings say so): no query for any other submission
    settings = getattr(submission, "trace_settings", None)
    is_trajectory = isinstance(settings, dict) and isinstance(settings.get("trajectory"), dict)
    cost = submission_agent_cost(submission) if is_trajectory else None
    wid = getattr(workload, "wid", workload)
    return {
        "cost": cost,
        "submission": submission,
        "current": wid,
        "rows": [r for r in cost.workloads if wid is None or r.workload == wid] if cost else [],
        "others": len(cost.workloads) - 1 if cost and wid is not None else 0,
    }


@register.filter
def usd(value) -> str:
    """A dollar amount: $0.0123, $1.23, $1,234; "—" when not reported."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—"
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 1:
        return f"${value:.2f}"
    return f"${value:.4f}"
