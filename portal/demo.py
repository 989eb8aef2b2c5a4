"""The demo: real submissions of the example kernels, an agent-like trace built from them and
deliberately broken variants, and the expert sweeps, all evaluated for real on this machine by
the normal pipeline. Nothing is fabricated: every number on the pages comes from the worker."""

from __future__ import annotations

import io

from django.contrib.auth import get_user_model
from django.db import transaction

from catalog.models import HardwareTarget, Workload
from catalog.starter import starter_source
from jaxbench import traces as trace_format
from jaxbench.kernels import examples  # the files are read as text: no JAX
from submissions import intake
from submissions.models import Membership, Submission, Team

TEAM_NAME = "JAXBench examples"


def example_files(hardware: str = "cpu") -> dict[str, str]:
    """The example kernels written for ``hardware``'s platform (Triton ones on a GPU target)."""
    platform = HardwareTarget.objects.get(slug=hardware).platform
    return {wid: examples.source(wid, platform=platform) for wid in examples.for_platform(platform)}


def level2_files(hardware: str = "cpu") -> dict[str, str]:
    """Level 1's example kernels of the tasks level 2 repeats, for each level-2 twin in the
    catalogue whose Pallas baseline runs on ``hardware``: real results on the level's board."""
    platform = HardwareTarget.objects.get(slug=hardware).platform
    files = example_files(hardware)
    out = {}
    for wid, platforms in Workload.objects.filter(level=2).values_list("wid", "platforms"):
        bare = wid.rpartition("-")[2]
        if bare in files and (not platforms or platform in platforms):
            out[wid] = files[bare]
    return out


def broken_variants(wid: str, code: str) -> list[tuple[str, str]]:
    """What an agent's search typically produces before it gets a kernel right."""
    from jaxbench import workloads  # deferred: JAX loads only where the harness runs, never in the web process

    wl = workloads.get(wid)
    args = ", ".join(wl.input_names)
    return [
        ("plain XLA, no Pallas (rejected by the rule)", starter_source(wl)),
        (
            "a Pallas API that does not exist (compile error)",
            code + f"\n\ndef workload({args}):\n    return pl.pallas_call_v2({args})\n",
        ),
        (
            "right shapes, wrong numbers (incorrect)",
            code
            + f"\n\n_fixed = workload\n\ndef workload({args}):\n    return (_fixed({args}) * 1.0625).astype(_fixed({args}).dtype)\n",
        ),
        ("the final kernel", code),
    ]


def demo_trace(hardware: str = "cpu") -> str:
    lines = [
        {
            "format": trace_format.FORMAT,
            "method": "demo: example kernels and broken variants",
            "model": "none (built from the example kernels)",
            "framework": "portal demo",
            "hardware": hardware,
            "sampling": "sequential",
            "selection": "pass_at_k",
            "budget": 4,
            "description": "Four samples per workload in search order: a plain-XLA start, an API "
            "error, a wrong-numbers kernel, then the working kernel.",
            "settings": {"generated_by": "manage.py demo"},
        }
    ]
    for wid, code in example_files(hardware).items():
        for index, (_note, variant) in enumerate(broken_variants(wid, code)):
            sample = {"workload": wid, "index": index, "round": index, "code": variant}
            if index:
                sample["parent"] = index - 1
            lines.append(sample)
    return trace_format.dumps_lines(lines)


def demo_team():
    User = get_user_model()
    user, created = User.objects.get_or_create(username="demo", defaults={"email": "demo@localhost"})
    if created:
        user.set_unusable_password()
        user.save()
    team, _ = Team.objects.get_or_create(name=TEAM_NAME, defaults={"description": "Submissions made by manage.py demo"})
    Membership.objects.get_or_create(team=team, user=user, defaults={"role": Membership.OWNER})
    return user, team


def create_demo(hardware: str = "cpu") -> list[Submission]:
    """Create (once) and publish the demo submissions; the worker evaluates them in the background
    lane, behind every user's submission (evaluator/queues.py)."""
    user, team = demo_team()
    existing = list(team.submissions.all())
    if existing:
        return existing
    with transaction.atomic():
        kernels = intake.create_kernel_submission(
            team,
            user,
            hardware,
            {
                "method": "Hand-written Pallas examples",
                "model_name": "human",
                "description": "The example kernels of jaxbench/kernels/examples, evaluated on this machine.",
                "upload_key": "demo-kernels",
                "selection": "single_attempt",
            },
            [(f"{wid}.py", code) for wid, code in example_files(hardware).items()],
            background=True,
        )
        trace = intake.create_trace_submission(
            team, user, io.BytesIO(demo_trace(hardware).encode()), upload_key="demo-trace", background=True
        )
        subs = [kernels, trace]
        twins = level2_files(hardware)
        if twins:
            subs.append(
                intake.create_kernel_submission(
                    team,
                    user,
                    hardware,
                    {
                        "method": "Hand-written Pallas examples, level 2",
                        "model_name": "human",
                        "description": "Level 1's example kernels of the tasks level 2 repeats, timed against "
                        "the level's hand-tuned Pallas baselines on this machine.",
                        "upload_key": "demo-level2",
                        "selection": "single_attempt",
                    },
                    [(f"{wid}.py", code) for wid, code in twins.items()],
                    background=True,
                )
            )
        for sub in subs:
            sub.publish()
    return subs
