from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from catalog.models import Baseline, HardwareTarget, Workload
from evaluator.runner import baseline_for
from jaxbench import HARNESS_VERSION
from jaxbench.hardware import detect  # detect() itself asks JAX, at call time


class Command(BaseCommand):
    help = "Measure the XLA baselines of every workload on this machine's hardware (cached per versions)."

    def add_arguments(self, parser):
        parser.add_argument("--hardware", help="target slug; default: detected from jax.devices()")
        parser.add_argument("--workload", action="append", help="only these workload IDs (repeatable)")
        parser.add_argument(
            "--force",
            action="store_true",
            help="measure again, even where the database or this host's disk cache has it",
        )

    def handle(self, *args, **opts):
        import jax

        here = detect().slug
        slug = opts["hardware"] or here
        if slug != here:
            raise CommandError(f"this machine is {here}; baselines for {slug} must be measured on {slug} hardware")
        hw = HardwareTarget.objects.filter(slug=slug).first()
        if hw is None:
            raise CommandError(f"unknown hardware {slug!r}; run manage.py sync_registry first")
        qs = Workload.objects.all()
        if opts["workload"]:
            qs = qs.filter(wid__in=opts["workload"])
        for wl in tqdm(list(qs), desc=f"baselines on {slug}", unit="workload"):
            if opts["force"]:
                Baseline.objects.filter(
                    workload=wl,
                    hardware=hw,
                    profile=hw.profile,
                    jax_version=jax.__version__,
                    harness_version=HARNESS_VERSION,
                ).delete()
            b = baseline_for(wl, hw, fresh=opts["force"])
            tqdm.write(f"{wl.wid:>4} {wl.slug:<50} {b.median_s * 1e3:9.3f} ms")
