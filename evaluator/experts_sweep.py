"""Sweeping the expert kernels: every configuration is an ordinary candidate run through the
same harness; every point is recorded; the best correct one becomes the expert reference."""

from __future__ import annotations

import logging

from django.db import transaction

from catalog.models import ExpertReference, ExpertSweepPoint, Workload
from jaxbench.kernels import experts  # reads the expert files as text: no JAX
from jaxbench.record import CORRECT_OUTCOMES

log = logging.getLogger(__name__)


def sweep_configs(wid: str, profile: str, limit: int | None = None) -> tuple[str, list[dict]]:
    """(implementation, configurations to try) declared by the expert file of ``wid``."""
    configs = [dict(c) for c in experts.sweep(wid, profile)] or [dict(experts.default_config(wid))]
    if limit:
        configs = configs[:limit]
    return experts.implementation(wid), configs


def interval_of(record: dict) -> tuple[float | None, float | None]:
    """(lo, hi) of a correct record's speedup interval; (None, None) without one."""
    ci = record.get("speedup_ci") if record.get("speedup") is not None else None
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return None, None
    return float(ci[0]), float(ci[1])


def sweep_expert(
    workload: Workload, hardware, baseline_record: dict, limit: int | None = None, progress=None
) -> ExpertReference:
    import jax

    from jaxbench import HARNESS_VERSION, harness

    implementation, configs = sweep_configs(workload.wid, hardware.profile, limit)
    points = []
    for i, config in enumerate(configs):
        source = experts.configured_source(workload.wid, config)
        record = harness.evaluate(
            workload.wid,
            source,
            profile=hardware.profile,
            hardware=hardware.slug,
            require_pallas=True,
            baseline=baseline_record,
        )
        points.append((config, source, record))
        if progress:
            progress(i + 1, len(configs), config, record)
    correct = [p for p in points if p[2].get("outcome") in CORRECT_OUTCOMES]
    best = max(correct, key=lambda p: p[2].get("speedup") or 0.0) if correct else points[0]
    config, source, record = best
    lo, hi = interval_of(record)
    with transaction.atomic():
        ref, _ = ExpertReference.objects.update_or_create(
            workload=workload,
            hardware=hardware,
            defaults={
                "implementation": record.get("implementation") or implementation,
                "config": config,
                "median_s": (record.get("timing") or {}).get("median_s"),
                "speedup": record.get("speedup"),
                "speedup_lo": lo,
                "speedup_hi": hi,
                "outcome": record.get("outcome", ""),
                "source": source,
                "record": record,
                "jax_version": jax.__version__,
                "harness_version": HARNESS_VERSION,
                "configs_tried": len(points),
            },
        )
        ref.sweep.all().delete()
        ExpertSweepPoint.objects.bulk_create(
            [
                ExpertSweepPoint(
                    expert=ref,
                    config=c,
                    outcome=r.get("outcome", ""),
                    speedup=r.get("speedup"),
                    speedup_lo=interval_of(r)[0],
                    speedup_hi=interval_of(r)[1],
                    median_s=(r.get("timing") or {}).get("median_s"),
                    message=(r.get("message") or "")[:2000],
                )
                for c, _, r in points
            ]
        )
    return ref
