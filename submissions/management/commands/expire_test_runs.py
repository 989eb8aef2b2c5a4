from django.core.management.base import BaseCommand

from jaxbench.limits import TEST_RUN_DAYS
from submissions.intake import expire_test_runs


class Command(BaseCommand):
    help = (
        f"Delete the test runs whose time is up ({TEST_RUN_DAYS} days after they were made, unless promoted). "
        "Every worker's reconciler does it too; this is for a portal running without workers, or a cron job."
    )

    def handle(self, *args, **opts):
        n = expire_test_runs()
        self.stdout.write(f"{n} expired test run{'s' if n != 1 else ''} deleted")
