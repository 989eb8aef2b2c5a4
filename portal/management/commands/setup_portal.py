from django.core.management.base import BaseCommand

from portal import startup


class Command(BaseCommand):
    help = (
        "Set the portal up in one process, one line per step with its time: migrate, sync_registry, "
        "collectstatic, ensure_admin (runportal does the same before it starts)."
    )

    def handle(self, *args, **opts):
        log = startup.StartupLog(self.stdout.write)
        startup.setup(log)
        log.done("setup", log.elapsed())
