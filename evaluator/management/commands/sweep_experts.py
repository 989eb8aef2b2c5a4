from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from catalog.models import HardwareTarget, Workload
from evaluator.experts_sweep import sweep_expert
from evaluator.runner import baseline_for
from jaxbench.hardware import detect  # detect() itself asks JAX, at call time


class Command(BaseCommand):
    help = (
        "Sweep each expert kernel's configurations through the harness on this hardware, record every "
        "point and keep the best as the expert reference."
    )

    def add_arguments(self, parser):
        parser.add_argument("--hardware", help="target slug; default: detected from jax.devices()")
        parser.add_argument("--workload", action="append", help="only these expert workload IDs")
        parser.add_argument("--limit", type=int, help="at most this many configurations per expert")

    def handle(self, *args, **opts):
        here = detect().slug
        slug = opts["hardware"] or here
        if slug != here:
            raise CommandError(f"this machine is {here}; sweep {slug} experts on {slug} hardware")
        hw = HardwareTarget.objects.filter(slug=slug).first()
        if hw is None:
            raise CommandError(f"unknown hardware {slug!r}; run manage.py sync_registry first")
        qs = Workload.objects.filter(expert=True)
        if opts["workload"]:
            qs = qs.filter(wid__in=opts["workload"])
        for wl in qs:
            baseline = baseline_for(wl, hw)
            bar = tqdm(desc=f"{wl.wid} expert sweep", unit="config")

            def progress(i, n, config, record, bar=bar):
                bar.total = n
                bar.update(1)
                bar.set_postfix_str(f"{record.get('outcome')} {record.get('speedup') or ''}")

            ref = sweep_expert(wl, hw, baseline.record, limit=opts["limit"], progress=progress)
            bar.close()
            note = (
                " (CPU numbers: TPU kernels through the Pallas interpreter, not TPU performance)"
                if hw.slug == "cpu"
                else ""
            )
            self.stdout.write(
                f"{wl.wid}: {ref.implementation} best {ref.config} -> {ref.outcome} "
                f"speedup {ref.speedup} over {ref.configs_tried} configs{note}"
            )
