from django.conf import settings

from jaxbench import HARNESS_VERSION


def site(request):
    """Values every page's layout needs."""
    return {"HARNESS_VERSION": HARNESS_VERSION, "DEBUG": settings.DEBUG}
