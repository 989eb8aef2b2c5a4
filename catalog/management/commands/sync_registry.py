from django.core.management.base import BaseCommand

from catalog.registry_sync import sync_hardware, sync_workloads


class Command(BaseCommand):
    help = "Load the hardware targets and the workload registry into the database (idempotent)."

    def handle(self, *args, **options):
        n_hw = sync_hardware()
        created, updated = sync_workloads()
        self.stdout.write(
            self.style.SUCCESS(f"{n_hw} hardware targets; workloads: {created} created, {updated} updated")
        )
