"""Mirror the workload registry and the hardware targets into the database."""

import inspect

from django.db import transaction

from catalog.models import HardwareTarget, Workload
from catalog.starter import starter_source
from jaxbench import hardware, workloads
from jaxbench.workloads import null_audit


def _spec(s):
    return {"shape": list(s.shape), "dtype": str(s.dtype)}


def workload_fields(wl) -> dict:
    import jax

    shapes, costs = {}, {}
    # per case: the profile itself, or each "profile/configuration" of a multi-configuration one
    for case in (c for profile in ("small", "full") for c in wl.cases(profile)):
        ins = wl.input_specs(case)
        out = wl.output_spec(case)
        shapes[case] = {
            "inputs": [dict(name=n, **_spec(s)) for n, s in zip(wl.input_names, ins)],
            "output": jax.tree_util.tree_map(_spec, out),
        }
        flops, nbytes = wl.cost(case)
        costs[case] = {"flops": flops, "bytes": nbytes}
    meta = wl.summary()
    return {
        "number": wl.number,
        "slug": wl.slug,
        "public_name": wl.public_name,
        "title": wl.title,
        "source": wl.source,
        "model": wl.model,
        "category": wl.category,
        "description": wl.description,
        "notes": meta.get("notes") or "",
        "expert": wl.expert,
        "kernelbench_id": wl.kernelbench_id,
        "degenerate": wl.degenerate or "",
        "atol": wl.atol,
        "rtol": wl.rtol,
        "tolerance_reason": wl.tolerance_reason or "",
        "public_file_note": wl.public_file_note or "",
        "input_names": list(wl.input_names),
        "profiles": meta["profiles"],
        "shapes": shapes,
        "costs": costs,
        # a level's twin shows its own module: the Pallas baseline it adds to level 1's reference
        "reference_source": inspect.getsource(inspect.getmodule(wl.pallas_baseline or wl.reference)),
        "starter_source": starter_source(wl),
        "version": wl.version,
        "content_hash": wl.content_hash,
        "level": wl.level,
        "configurations": meta["configurations"],
        "upstream": meta["upstream"] or {},
        "deviations": meta["deviations"],
        "null_audit": null_audit.entry(wl) or {},
        "baseline_program": "xla" if wl.pallas_baseline is None else "pallas",
        "platforms": list(wl.platforms),
        "platform_note": wl.platform_note,
    }


@transaction.atomic
def sync_hardware() -> int:
    for t in hardware.TARGETS.values():
        HardwareTarget.objects.update_or_create(
            slug=t.slug,
            defaults={
                "name": t.name,
                "platform": t.platform,
                "profile": t.profile,
                "peak_flops": t.peak_flops,
                "peak_bandwidth": t.peak_bandwidth,
            },
        )
    return len(hardware.TARGETS)


@transaction.atomic
def sync_workloads() -> tuple[int, int]:
    created = updated = 0
    for wl in workloads.all_workloads():
        _, was_created = Workload.objects.update_or_create(wid=wl.id, defaults=workload_fields(wl))
        created += was_created
        updated += not was_created
    return created, updated
