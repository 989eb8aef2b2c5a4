import time

from django.core.management.base import BaseCommand
from tqdm import tqdm

from catalog.models import ExpertReference, HardwareTarget, Workload
from evaluator.actors import send_expert_sweeps
from evaluator.experts_sweep import sweep_configs
from evaluator.models import Evaluation
from portal.demo import create_demo


class Command(BaseCommand):
    help = (
        "Populate the portal with real results measured on this machine: the example kernels, an "
        "agent-like trace with broken variants, and the expert kernel sweeps (needs a running worker). "
        "--quick leaves the expert sweeps out."
    )

    def add_arguments(self, parser):
        parser.add_argument("--hardware", default="cpu")
        parser.add_argument("--no-experts", action="store_true")
        parser.add_argument(
            "--quick",
            action="store_true",
            help="the example kernels and the trace only, no expert sweeps (about 2 minutes on a 2-core CPU host)",
        )
        parser.add_argument(
            "--expert-configs",
            type=int,
            default=None,
            help="at most this many configurations per expert (default: the hardware's whole sweep)",
        )
        parser.add_argument("--wait", action="store_true", help="show progress until everything is evaluated")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        hw = opts["hardware"]
        no_experts = opts["no_experts"] or opts["quick"]
        swept = set(ExpertReference.objects.filter(hardware__slug=hw).values_list("workload__wid", flat=True))
        subs = create_demo(hw)
        self.stdout.write(f"demo submissions: {', '.join('#%d %s' % (s.pk, s.method) for s in subs)}")
        experts = list(Workload.objects.filter(expert=True).values_list("wid", flat=True))
        missing = [w for w in experts if w not in swept]
        if not no_experts and missing:
            send_expert_sweeps(hw, missing, opts["expert_configs"])
            self.stdout.write(f"expert sweeps queued for {', '.join(missing)} on {hw}")
        if not opts["wait"]:
            return
        self.wait(hw, subs, [] if no_experts else experts, opts["expert_configs"], opts["timeout"])

    def wait(self, hw: str, subs, experts: list[str], limit: int | None, timeout: float) -> None:
        """One progress bar in harness runs (an evaluation, or one configuration of an expert's
        sweep), with tqdm's rate and time left."""
        profile = HardwareTarget.objects.get(slug=hw).profile
        per_expert = {wid: len(sweep_configs(wid, profile, limit)[1]) for wid in experts}
        evs = Evaluation.objects.filter(candidate__submission__in=subs)
        total = evs.count() + sum(per_expert.values())
        started = time.monotonic()
        bar = tqdm(total=total, desc="demo: harness runs", unit="run", mininterval=2)
        deadline = started + timeout
        done = 0
        while time.monotonic() < deadline:
            done = evs.filter(state__in=Evaluation.FINAL_STATES).count()
            if experts:
                swept = ExpertReference.objects.filter(hardware__slug=hw, workload__wid__in=experts)
                done += sum(per_expert.get(wid, 0) for wid in swept.values_list("workload__wid", flat=True))
            bar.update(done - bar.n)
            if done >= total:
                break
            time.sleep(2)
        bar.close()
        took = time.monotonic() - started
        if done >= total:
            self.stdout.write(
                self.style.SUCCESS(f"demo complete in {took / 60:.1f} min: open /leaderboard/?hardware={hw}")
            )
        else:
            self.stdout.write(
                self.style.WARNING(f"demo: {done} of {total} runs after {took / 60:.1f} min; stopped waiting")
            )
