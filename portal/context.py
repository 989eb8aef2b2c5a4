from django.conf import settings


def site(request):
    """Values every page's layout needs."""
    from evaluator.bench import HARNESS_VERSION
    return {"HARNESS_VERSION": HARNESS_VERSION, "DEBUG": settings.DEBUG}
