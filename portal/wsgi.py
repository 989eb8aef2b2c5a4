import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")


# the web server's processes keep off the host's dedicated timing cores (jaxbench/sandbox/cores.py)
def _keep_off_timing_cores() -> None:
    from jaxbench.sandbox import cores  # deferred: no sandbox import at module level (pyproject)

    cores.keep_off_timing_cores()


_keep_off_timing_cores()
application = get_wsgi_application()

# before the first request: what it would otherwise pay (imports, templates; portal/warmup.py)
from portal.warmup import warm_up  # noqa: E402 - needs the application's settings, set up just above

warm_up()
