import time

from django.core.management.base import BaseCommand
from tqdm import tqdm

from catalog.models import ExpertReference, Workload
from evaluator.actors import send_expert_sweeps
from evaluator.models import Evaluation
from portal.demo import create_demo


class Command(BaseCommand):
    help = (
        "Populate the portal with real results measured on this machine: the example kernels, an "
        "agent-like trace with broken variants, and the expert kernel sweeps (needs a running worker)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--hardware", default="cpu")
        parser.add_argument("--no-experts", action="store_true")
        parser.add_argument(
            "--expert-configs",
            type=int,
            default=None,
            help="at most this many configurations per expert (default: the whole CPU sweep)",
        )
        parser.add_argument("--wait", action="store_true", help="show progress until everything is evaluated")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        hw = opts["hardware"]
        swept = set(ExpertReference.objects.filter(hardware__slug=hw).values_list("workload__wid", flat=True))
        subs = create_demo(hw)
        self.stdout.write(f"demo submissions: {', '.join('#%d %s' % (s.pk, s.method) for s in subs)}")
        experts = list(Workload.objects.filter(expert=True).values_list("wid", flat=True))
        missing = [w for w in experts if w not in swept]
        if not opts["no_experts"] and missing:
            send_expert_sweeps(hw, missing, opts["expert_configs"])
            self.stdout.write(f"expert sweeps queued for {', '.join(missing)} on {hw}")
        if not opts["wait"]:
            return
        evs = Evaluation.objects.filter(candidate__submission__in=subs)
        total = evs.count() + (0 if opts["no_experts"] else len(experts))
        bar = tqdm(total=total, desc="demo evaluations", unit="eval")
        deadline = time.monotonic() + opts["timeout"]
        while time.monotonic() < deadline:
            done = evs.filter(state__in=Evaluation.FINAL_STATES).count()
            if not opts["no_experts"]:
                done += ExpertReference.objects.filter(hardware__slug=hw).count()
            bar.n = done
            bar.refresh()
            if done >= total:
                break
            time.sleep(2)
        bar.close()
        self.stdout.write(self.style.SUCCESS("demo complete: open /leaderboard/?hardware=" + hw))
